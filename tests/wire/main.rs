//! The protocol over the real binary and real pipes: framing, JSON-RPC, ids, the lifecycle,
//! hostile clients, cancellation, drain on EOF and signals, read order, queued bytes, progress
//! tokens, server options, error chains and the schema file.

#[path = "../support/mod.rs"]
mod support;

mod cancel;
mod drain;
mod error_chains;
mod framing;
mod hostile_client;
mod ids;
mod jsonrpc;
mod lifecycle;
mod progress_tokens;
mod queued_bytes;
mod read_order;
mod schema_file;
mod server_options;
mod signals;
