//! wsp: a framework for building WSP servers, and the reference server.
//!
//! WSP is JSON-RPC 2.0 over a byte stream with LSP-style `Content-Length` framing; clients use
//! it to create Python environments, inspect them, run commands in them and delete them.
//!
//! The pieces, from the bytes up:
//! - [`codec`]: the framing codec (recoverable problems are items, not errors);
//! - [`runtime`]: moves messages between a transport and the session stack;
//! - [`stdio`]: stdin and stdout on the reactor when they are pipes;
//! - [`router`]: method names bound to tower services, the source of `initialize`'s method list;
//! - [`server`]: the builder that binds methods and layers and serves any `AsyncRead`/`AsyncWrite`;
//! - [`environments`]: the five environment methods over any backend;
//! - [`serve`]: the reference server `wsp serve`.
//!
//! The layers themselves live in `wsp-middleware`, the wire types in `wsp-protocol`, the
//! backend interface and the shared store in `wsp-backend`.
#![warn(missing_docs)]

pub mod backends;
pub mod cli;
pub mod codec;
pub mod config;
pub mod conformance;
pub mod environments;
pub mod logging;
pub mod router;
pub mod runtime;
pub mod serve;
pub mod server;
pub mod stdio;

pub use config::{BackendKind, LogFormat, ServeConfig};
pub use serve::serve_stdio;
pub use server::{Server, ServerBuilder};
