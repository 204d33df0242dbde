//! wsp-server: a framework for building WSP servers.
//!
//! WSP is JSON-RPC 2.0 over a byte stream with LSP-style `Content-Length` framing. This crate
//! moves its messages; what a session does with them is the stack of `wsp-middleware` (the
//! layers and the router at its bottom), and the wire types are `wsp-protocol`'s.
//!
//! The pieces, from the bytes up:
//! - [`codec`]: the framing codec (recoverable problems are items, not errors);
//! - [`non_blocking`]: a pipe or socket on the reactor, read early while its session is
//!   alone on the thread;
//! - [`stdio`]: stdin and stdout on the reactor when they are pipes or sockets;
//! - [`runtime`]: moves messages between a transport and the session stack;
//! - [`transport`]: where connections come from (stdio, a Unix socket, an in-memory pair);
//! - [`ServerBuilder`]: binds methods, method groups and layers; [`Server`] serves any
//!   number of connections, of any transport;
//! - [`client`]: the other end of the wire, over any transport or a spawned server process.
#![warn(missing_docs)]

mod broadcast;
mod builder;
mod capabilities;
pub mod client;
pub mod codec;
pub mod non_blocking;
pub mod runtime;
mod serving;
pub mod stdio;
pub mod transport;

pub use broadcast::{Broadcast, BROADCAST_BACKLOG};
pub use builder::{Server, ServerBuilder};
pub use capabilities::{Facts, MethodGroup};
pub use wsp_middleware::notifier::{Notifier, NOTIFICATION_QUEUE};
pub use wsp_middleware::router::{self, Router};

// What a tool author's crate needs besides this one and tokio: declaring methods and their
// params (`method!`, `params!` and their field rules), handlers and their context, errors,
// layers. The protocol and the stack are here whole too, as `protocol` and `middleware`.
pub use wsp_middleware as middleware;
pub use wsp_middleware::{
    handler_fn, read_ordered, Context, Extensions, Handler, ReadTime, SessionLayer, TowerLayer,
};
pub use wsp_protocol as protocol;
pub use wsp_protocol::method::Method;
pub use wsp_protocol::{error, fields, method, params, ErrorObjectOwned};
