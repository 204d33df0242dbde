//! The name of an environment's install lock. The rule it serves (one install at a time per
//! environment, across processes) is `wsp-environments`'s install turns; backends only need to
//! know the file, which an environment's own packages may not name (conda checks this).

/// The lock file's name in an environment's root.
pub const INSTALL_LOCK_FILE: &str = ".wsp-install.lock";
