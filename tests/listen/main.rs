//! Listening for many clients over the real binary: Unix sockets (permissions, peer uids,
//! limits, SIGTERM) and WebSocket (tokens, origins, hosts), one session per connection and
//! environment/changed to all of them.

#[path = "../support/mod.rs"]
mod support;

mod listen;
mod listen_websocket;
