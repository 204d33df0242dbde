//! The conda backend over the real binary, offline on a local channel: the CLI, hostile records
//! and packages, and one server serving venv, uv and conda environments side by side.

#[path = "../install_support/mod.rs"]
mod install_support;
#[path = "../support/mod.rs"]
mod support;

mod backends;
mod conda_cli;
mod conda_hostile;
mod conda_lock;
mod conda_pip;
mod conda_reuse;
