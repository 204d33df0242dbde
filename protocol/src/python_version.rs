//! Python versions, and the `MAJOR.MINOR[.PATCH]` requests clients send in `python_version`.

use std::fmt;
use std::str::FromStr;

/// A full `X.Y.Z` Python version.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct PythonVersion {
    /// Major component.
    pub major: u64,
    /// Minor component.
    pub minor: u64,
    /// Patch component.
    pub patch: u64,
}

impl fmt::Display for PythonVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl FromStr for PythonVersion {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match VersionRequest::from_str(s)? {
            VersionRequest::Exact(v) => Ok(v),
            VersionRequest::MajorMinor { .. } => Err(format!("`{s}` has no patch component")),
        }
    }
}

/// What a client asked for: `X.Y` (newest patch of that minor) or `X.Y.Z` (exactly that).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VersionRequest {
    /// `X.Y`: the newest available `X.Y.*`.
    MajorMinor {
        /// Major component.
        major: u64,
        /// Minor component.
        minor: u64,
    },
    /// `X.Y.Z`: exactly this version.
    Exact(PythonVersion),
}

impl VersionRequest {
    /// Whether `version` satisfies this request.
    pub fn matches(&self, version: &PythonVersion) -> bool {
        match *self {
            VersionRequest::MajorMinor { major, minor } => {
                version.major == major && version.minor == minor
            }
            VersionRequest::Exact(exact) => *version == exact,
        }
    }

    /// The major and minor components requested.
    pub fn major_minor(&self) -> (u64, u64) {
        match *self {
            VersionRequest::MajorMinor { major, minor } => (major, minor),
            VersionRequest::Exact(v) => (v.major, v.minor),
        }
    }
}

impl fmt::Display for VersionRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionRequest::MajorMinor { major, minor } => write!(f, "{major}.{minor}"),
            VersionRequest::Exact(v) => v.fmt(f),
        }
    }
}

impl FromStr for VersionRequest {
    type Err = String;

    /// Parses `MAJOR.MINOR` or `MAJOR.MINOR.PATCH`, ASCII digits only.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = s.split('.').collect();
        let numbers = parts
            .iter()
            .map(|p| {
                if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!("`{s}` is not MAJOR.MINOR or MAJOR.MINOR.PATCH"));
                }
                p.parse::<u64>()
                    .map_err(|_| format!("a component of `{s}` is too large"))
            })
            .collect::<Result<Vec<u64>, String>>()?;
        match numbers.as_slice() {
            [major, minor] => Ok(VersionRequest::MajorMinor {
                major: *major,
                minor: *minor,
            }),
            [major, minor, patch] => Ok(VersionRequest::Exact(PythonVersion {
                major: *major,
                minor: *minor,
                patch: *patch,
            })),
            _ => Err(format!("`{s}` is not MAJOR.MINOR or MAJOR.MINOR.PATCH")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_forms_and_rejects_others() {
        assert_eq!(
            "3.12".parse::<VersionRequest>(),
            Ok(VersionRequest::MajorMinor {
                major: 3,
                minor: 12
            })
        );
        assert!(matches!(
            "3.12.1".parse::<VersionRequest>(),
            Ok(VersionRequest::Exact(_))
        ));
        for bad in [
            "3", "3.12.1.4", "3.x", "", "3..1", " 3.12", "+3.12", "３.12",
        ] {
            assert!(bad.parse::<VersionRequest>().is_err(), "{bad}");
        }
    }
}
