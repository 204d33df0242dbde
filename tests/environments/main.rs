//! The environment methods over the real binary: create, get, list, delete (and its waits),
//! execute (streaming, output caps, process limits, no survivors, the sandbox), deep trees, a full
//! disk, Python downloads and backend layers.

#[path = "../support/mod.rs"]
mod support;

mod backend_layers;
mod deep_trees;
mod delete_cancel;
mod environments;
mod full_disk;
mod gc;
mod interactive;
mod max_output;
mod no_survivors;
mod output_json_cap;
mod process_limit;
mod python_downloads;
mod reuse;
mod sandbox;
mod streaming;
