//! The protocol over the real binary and real pipes: framing, JSON-RPC, ids, the lifecycle,
//! hostile clients, cancellation, drain on EOF and signals, read order, queued bytes, progress
//! tokens, server options, error chains, the schema file, the README's transcript and the
//! fuzz corpora replayed.

#[path = "../support/mod.rs"]
mod support;

mod cancel;
mod drain;
mod error_chains;
mod framing;
mod fuzz_corpus;
mod hostile_client;
mod ids;
mod interpreter_list;
mod jsonrpc;
mod lifecycle;
mod progress_tokens;
mod queued_bytes;
mod read_order;
mod readme;
mod schema_file;
mod server_options;
mod signals;
