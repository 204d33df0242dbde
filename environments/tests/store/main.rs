//! The state store: records, the index and its cache, cancellation, a full disk, hostile
//! files, modes, processes sharing one store, and the sweep of what a crash left.

#[path = "../store_support/mod.rs"]
mod store_support;

mod store;
mod store_cache;
mod store_cancel;
mod store_full_disk;
mod store_hostile;
mod store_mode;
mod store_processes;
mod store_staged;
mod store_sweep;
