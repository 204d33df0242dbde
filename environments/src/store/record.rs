//! Environment ids and the record the store keeps for each committed environment.

use std::path::PathBuf;

use rand::Rng;
use serde::{Deserialize, Serialize};

/// Every environment id starts with this prefix.
pub const ID_PREFIX: &str = "env-";

/// How many hex digits follow [`ID_PREFIX`].
const ID_HEX_DIGITS: usize = 12;

/// A fresh random environment id: [`ID_PREFIX`] followed by 12 lowercase hex digits.
///
/// Uniqueness within a store is ensured by [`Store::reserve`](super::Store::reserve), which
/// draws again if the id is already taken.
pub fn new_environment_id() -> String {
    let bits: u64 = rand::rng().random::<u64>() & ((1 << (4 * ID_HEX_DIGITS)) - 1);
    format!("{ID_PREFIX}{bits:0width$x}", width = ID_HEX_DIGITS)
}

/// Whether `id` has the shape of an environment id (`env-` and 12 lowercase hex digits).
///
/// The store only ever builds paths from ids of this shape, so no id can reach outside it.
pub fn is_environment_id(id: &str) -> bool {
    id.strip_prefix(ID_PREFIX).is_some_and(|digits| {
        digits.len() == ID_HEX_DIGITS
            && digits
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// What the store remembers about a committed environment.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EnvironmentRecord {
    /// The environment's id (see [`new_environment_id`]).
    pub id: String,
    /// The environment's name, unique among live environments.
    pub name: String,
    /// The Python version as the client asked for it (`3.12` or `3.12.4`).
    pub python_version: String,
    /// The resolved `X.Y.Z`.
    pub python_full_version: String,
    /// The name of the backend that provisioned it.
    pub backend: String,
    /// The environment's root directory: `<store>/environments/<id>`.
    pub root: PathBuf,
    /// The environment's own interpreter, inside `root`.
    pub interpreter_path: PathBuf,
    /// Backend-specific facts.
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// When the environment was committed, in milliseconds since the Unix epoch.
    pub created_at_unix_ms: u64,
    /// The content key of an environment made with `reuse` that nothing has changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reuse_key: Option<String>,
}

/// What provisioning found out about a new environment, handed to [`Reservation::commit`](super::Reservation::commit)
/// to complete a reservation into an [`EnvironmentRecord`].
#[derive(Debug, Clone, PartialEq)]
pub struct CommitFacts {
    /// The Python version as the client asked for it.
    pub python_version: String,
    /// The resolved `X.Y.Z`.
    pub python_full_version: String,
    /// The environment's own interpreter, inside the reservation's root.
    pub interpreter_path: PathBuf,
    /// Backend-specific facts.
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// The content key of a create with `reuse`, under whose [`ReuseTurn`](super::ReuseTurn)
    /// the environment is committed.
    pub reuse_key: Option<String>,
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_ids_have_the_documented_shape() {
        for _ in 0..1000 {
            let id = new_environment_id();
            assert!(is_environment_id(&id), "{id}");
        }
    }

    #[test]
    fn malformed_ids_are_rejected() {
        for id in [
            "",
            "env-",
            "env-12345678901",
            "env-1234567890123",
            "env-12345678901G",
            "env-12345678901A",
            "ENV-123456789012",
            "env-../../etc/x",
            "env-12345678901é",
        ] {
            assert!(!is_environment_id(id), "{id}");
        }
        assert!(is_environment_id("env-0123456789af"));
    }
}
