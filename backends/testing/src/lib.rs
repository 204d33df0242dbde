//! Test fixtures for WSP's own tests, built on the fly with no network: Python distributions
//! (wheels, sdists, a simple index over them, and a backend's request to install from local
//! wheels only, [`offline_install`]) and, with the `conda` feature, local conda
//! channels (the `conda` module), a directory served over HTTP ([`StaticHttpServer`]), the
//! panicking forms of the framework's client ([`ClientExt`]), executable files written safely
//! ([`write_executable`]), a directory's sorted entry names ([`entry_names`]), a counter of a
//! venv interpreter's starts ([`InterpreterStarts`]), and small file systems to fill up
//! ([`small_fs`]). A dev-dependency only: nothing here ships in a
//! production crate.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
#[cfg(feature = "conda")]
pub mod conda;
mod distributions;
mod http_server;
mod interpreter_starts;
mod programs;
pub mod small_fs;

pub use client::{code, ClientExt};
pub use distributions::*;
pub use http_server::StaticHttpServer;
pub use interpreter_starts::InterpreterStarts;
pub use programs::{write_executable, FORK_60};

/// The sorted names of the entries of `dir`; panics if it cannot be read.
pub fn entry_names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("{} cannot be read: {error}", dir.display()))
        .map(|entry| {
            let entry = entry.unwrap_or_else(|error| panic!("{}: {error}", dir.display()));
            entry.file_name().to_string_lossy().into_owned()
        })
        .collect();
    names.sort();
    names
}
