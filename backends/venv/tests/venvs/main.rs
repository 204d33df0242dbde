//! venvs made in Rust: activate scripts in every shell, the backend, the native layout, pip
//! in an environment, the seed cache and the stdlib mode.

#[path = "../common/mod.rs"]
mod common;

mod activate;
mod backend;
mod native;
mod pip;
mod seed;
mod stdlib_mode;
