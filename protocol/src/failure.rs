//! Why an operation failed for a non-protocol reason: the `reason` of a `-31004` error.
//!
//! On the wire a reason is a kebab-case word in `data.reason`. The reasons WSP servers share are
//! variants; a custom backend names its own with [`FailureReason::Custom`]. Reading a reason
//! back ([`FailureReason::parse`]) gives the variant for every known word, so the two spellings
//! can never drift apart.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The cause of a `-31004` (`data.reason`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureReason {
    /// Creating the environment failed (the backend's own tool failed or left no interpreter).
    ProvisionFailed,
    /// Reading an environment's interpreter or packages failed.
    DescribeFailed,
    /// The command (or a tool the backend runs) could not be started.
    SpawnFailed,
    /// Waiting for a started command failed.
    WaitFailed,
    /// Installing or uninstalling packages failed.
    InstallFailed,
    /// The environment is one this server itself runs in, so it cannot be deleted.
    EnvInUse,
    /// The backend cannot work on this machine (its tool is missing, say).
    BackendUnavailable,
    /// A conda channel could not be read.
    ChannelUnavailable,
    /// `sandbox: true` was asked for where the sandbox cannot be enforced.
    SandboxUnavailable,
    /// A resource limit was asked for that this server cannot enforce (`limits.processes`
    /// where no `pids` cgroup and no binding `RLIMIT_NPROC` is at hand).
    LimitUnavailable,
    /// The state directory is unreadable, corrupt or full.
    StateStore,
    /// The backend did not answer in time (a tower timeout around it).
    Timeout,
    /// The backend failed with an error that names no reason.
    BackendError,
    /// The environment cannot be locked (a conda prefix holding packages pip installed).
    LockUnsupported,
    /// A reason of a custom backend's own (kebab-case by convention).
    Custom(Cow<'static, str>),
}

/// Every reason that is a variant, with its wire spelling.
const KNOWN: [(FailureReason, &str); 14] = [
    (FailureReason::ProvisionFailed, "provision-failed"),
    (FailureReason::DescribeFailed, "describe-failed"),
    (FailureReason::SpawnFailed, "spawn-failed"),
    (FailureReason::WaitFailed, "wait-failed"),
    (FailureReason::InstallFailed, "install-failed"),
    (FailureReason::EnvInUse, "env-in-use"),
    (FailureReason::BackendUnavailable, "backend-unavailable"),
    (FailureReason::ChannelUnavailable, "channel-unavailable"),
    (FailureReason::SandboxUnavailable, "sandbox-unavailable"),
    (FailureReason::LimitUnavailable, "limit-unavailable"),
    (FailureReason::StateStore, "state-store"),
    (FailureReason::Timeout, "timeout"),
    (FailureReason::BackendError, "backend-error"),
    (FailureReason::LockUnsupported, "lock-unsupported"),
];

impl FailureReason {
    /// A custom backend's own reason.
    pub fn custom(reason: impl Into<Cow<'static, str>>) -> Self {
        FailureReason::parse(reason)
    }

    /// The reason a wire word names: a variant when the word is a known one.
    pub fn parse(word: impl Into<Cow<'static, str>>) -> Self {
        let word = word.into();
        KNOWN
            .iter()
            .find(|(_, spelling)| *spelling == word)
            .map(|(reason, _)| reason.clone())
            .unwrap_or(FailureReason::Custom(word))
    }

    /// The wire spelling.
    pub fn as_str(&self) -> &str {
        if let FailureReason::Custom(word) = self {
            return word;
        }
        KNOWN
            .iter()
            .find(|(reason, _)| reason == self)
            .map_or("backend-error", |(_, spelling)| spelling)
    }
}

impl PartialEq<str> for FailureReason {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for FailureReason {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FailureReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FailureReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(FailureReason::parse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_reason_reads_back_as_its_variant() {
        for (reason, spelling) in KNOWN {
            assert_eq!(reason.as_str(), spelling);
            assert_eq!(FailureReason::parse(spelling), reason);
            let json = serde_json::to_string(&reason).expect("serializes");
            assert_eq!(json, format!("\"{spelling}\""));
            let back: FailureReason = serde_json::from_str(&json).expect("reads back");
            assert_eq!(back, reason);
        }
    }

    #[test]
    fn a_custom_reason_keeps_its_word_and_a_known_word_is_never_custom() {
        assert_eq!(
            FailureReason::custom("quota-exceeded").as_str(),
            "quota-exceeded"
        );
        assert_eq!(
            FailureReason::custom("spawn-failed"),
            FailureReason::SpawnFailed
        );
    }
}
