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
mod spares;
mod spawn_into_cgroup;
mod streaming;
mod views;

/// The ids of an `environment/list` answer.
fn listed_ids(listed: &serde_json::Value) -> Vec<&serde_json::Value> {
    let listed = listed["result"].as_array();
    let listed = listed.unwrap_or_else(|| panic!("a list answer: {listed:?}"));
    listed
        .iter()
        .map(|environment| &environment["id"])
        .collect()
}
