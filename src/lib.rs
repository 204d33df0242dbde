//! wsp: a framework for building WSP servers, and the reference server.
#![warn(missing_docs)]

pub mod codec;
