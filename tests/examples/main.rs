//! The examples and a tool author's crate: each example runs and does what its docs say, a
//! backend written from scratch passes the conformance kit, and a crate depending on the framework
//! alone builds and serves.

mod downstream_crate;
mod example_backend;
mod examples;
mod two_connections;
