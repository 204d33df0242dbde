//! Listening for many clients over the real binary: Unix sockets (permissions, peer uids,
//! limits, SIGTERM) and WebSocket (tokens, origins, hosts), one session per connection and
//! environment/changed to all of them; connections kept apart (a flooder, a shutdown, a full
//! limit, a closed connection's executes) and a server killed with SIGKILL.

#[path = "../install_support/mod.rs"]
mod install_support;
#[path = "../support/mod.rs"]
mod support;

mod connect_commands;
mod isolation;
mod isolation_sessions;
mod large_answers;
mod listen;
mod listen_crash;
mod listen_websocket;
mod serve_listening;
mod unix_peer;
mod ws_refusals;
