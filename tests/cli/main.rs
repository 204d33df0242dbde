//! The CLI over the real binary: every command, installs through it (with and without uv), and
//! paths resolved against the CLI's own working directory.

#[path = "../install_support/mod.rs"]
mod install_support;
#[path = "../support/mod.rs"]
mod support;

mod binary;
mod cli;
mod cli_delete;
mod cli_gc;
mod cli_install;
mod cli_lock;
mod cli_paths;
mod cli_python;
mod cli_requirements;
mod exec_cwd;
mod exec_output;
mod exec_stdin;
mod pip_inside;
mod run;
mod serve_config;
