//! Installing over the real binary: install and uninstall, create with packages, one install at a
//! time, progress notifications and the sandboxed installer.

#[path = "../install_support/mod.rs"]
mod install_support;
#[path = "../support/mod.rs"]
mod support;

mod install;
mod install_create;
mod install_serial;
mod lock;
mod pip_path;
mod progress;
mod sandbox_installer;
