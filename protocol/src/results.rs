//! Results of the WSP methods.

use serde::{Deserialize, Serialize};

/// An installed distribution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Package {
    /// The name as the distribution's metadata spells it.
    pub name: String,
    /// The version as the distribution's metadata spells it.
    pub version: String,
}

/// The result of `environment/execute`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecuteResult {
    /// The exit status; `-N` for a child killed by signal `N`.
    pub exit_code: i64,
    /// Captured stdout, decoded as UTF-8 with replacement characters.
    pub stdout: String,
    /// Captured stderr, decoded as UTF-8 with replacement characters.
    pub stderr: String,
}
