//! The `wsp` binary: `wsp serve` runs the reference server on stdin/stdout; the other commands
//! are a client that spawns one (see `wsp --help` and [`wsp::cli`]).

use clap::Parser;

fn main() {
    std::process::exit(wsp::cli::main(wsp::cli::args::Cli::parse()));
}
