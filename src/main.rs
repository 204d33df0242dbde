//! The `wsp` binary: `wsp serve` runs the reference server on stdin/stdout; the other commands
//! are a client that spawns one (see `wsp --help` and the `cli` module).
//!
//! This crate is the application only: the framework is `wsp-server` (on `wsp-middleware` and
//! `wsp-protocol`), the environment methods `wsp-environments`, the backends `wsp-backend-*`.

mod backends;
mod cli;
mod config;
mod config_file;
mod listen;
mod logging;
mod serve;

use clap::Parser;

fn main() {
    std::process::exit(cli::main(cli::args::Cli::parse()));
}
