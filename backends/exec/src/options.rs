//! What [`RunOptions`] mean here: the server's default output limit, and the rlimits a child
//! gets.

use std::sync::atomic::{AtomicU64, Ordering};

use rustix::process::{getrlimit, Resource};
use wsp_backend::{RunOptions, DEFAULT_MAX_OUTPUT_BYTES};

static MAX_OUTPUT_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_OUTPUT_BYTES);

/// Sets the most bytes each stream takes in the result (JSON-encoded) for commands that do
/// not say (`wsp serve --max-output-bytes`); at least 1.
pub fn set_default_max_output_bytes(bytes: u64) {
    MAX_OUTPUT_BYTES.store(bytes.max(1), Ordering::Relaxed);
}

/// The most bytes each stream takes in the result (JSON-encoded) for commands that do not
/// say.
pub fn default_max_output_bytes() -> u64 {
    MAX_OUTPUT_BYTES.load(Ordering::Relaxed)
}

/// The per-stream limit in effect for `options`, in JSON-encoded bytes.
pub(crate) fn output_limit(options: &RunOptions) -> usize {
    let bytes = options
        .max_output_bytes
        .unwrap_or_else(default_max_output_bytes);
    usize::try_from(bytes).unwrap_or(usize::MAX)
}

/// The rlimits to set in the child. A limit looser than this process's own hard limit cannot
/// be granted, so that hard limit is used instead.
pub(crate) fn rlimits(options: &RunOptions) -> Vec<(Resource, u64)> {
    let limits = &options.limits;
    [
        (Resource::As, limits.memory_bytes),
        (Resource::Cpu, limits.cpu_seconds),
        (Resource::Nproc, limits.processes),
        (Resource::Nofile, limits.open_files),
    ]
    .into_iter()
    .filter_map(|(resource, value)| {
        let value = value?;
        let hard = getrlimit(resource).maximum.unwrap_or(u64::MAX);
        Some((resource, value.min(hard)))
    })
    .collect()
}
