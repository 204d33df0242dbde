//! Test fixtures for WSP's own tests, built on the fly with no network: Python distributions
//! (wheels, sdists and a simple index over them) and, with the `conda` feature, local conda
//! channels (the `conda` module), the panicking forms of the framework's client
//! ([`ClientExt`]), and executable files written safely ([`write_executable`]). A
//! dev-dependency only: nothing here ships in a production crate.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
#[cfg(feature = "conda")]
pub mod conda;
mod distributions;
mod programs;

pub use client::{code, ClientExt};
pub use distributions::*;
pub use programs::{write_executable, FORK_60};
