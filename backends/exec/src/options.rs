//! What [`RunOptions`] mean here: the output limit in effect, and the rlimits a child gets.

use rustix::process::{getrlimit, Resource};
use wsp_backend::{RunOptions, DEFAULT_MAX_OUTPUT_BYTES};

/// The per-stream limit in effect for `options`, in JSON-encoded bytes.
pub(crate) fn output_limit(options: &RunOptions) -> usize {
    let bytes = options.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES);
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
