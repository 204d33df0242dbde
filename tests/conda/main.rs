//! The conda backend over the real binary, offline on a local channel: the CLI, and hostile records
//! and packages.

#[path = "../support/mod.rs"]
mod support;

mod conda_cli;
mod conda_hostile;
