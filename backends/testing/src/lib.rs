//! Test fixtures for WSP's own tests, built on the fly with no network: Python distributions
//! (wheels, sdists and a simple index over them) and, with the `conda` feature, local conda
//! channels (the `conda` module), a directory served over HTTP ([`StaticHttpServer`]), the
//! panicking forms of the framework's client ([`ClientExt`]), executable files written safely
//! ([`write_executable`]), and small file systems to fill up ([`small_fs`]). A dev-dependency only: nothing here ships in a
//! production crate.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
#[cfg(feature = "conda")]
pub mod conda;
mod distributions;
mod http_server;
mod programs;
pub mod small_fs;

pub use client::{code, ClientExt};
pub use distributions::*;
pub use http_server::StaticHttpServer;
pub use programs::{write_executable, FORK_60};
