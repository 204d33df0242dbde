//! How a command runs beyond what it is: stdin, a timeout, output limits and streaming,
//! resource limits, containment, a sandbox.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use rustix::process::{getrlimit, Resource};
use tokio::sync::mpsc;
use wsp_protocol::params::ExecuteLimits;
use wsp_protocol::results::OutputStream;

use super::{ContainmentMode, SandboxPolicy};

/// The default most bytes each output stream takes in the result, encoded as a JSON string
/// (see [`super`]): 16 MiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 16 * 1024 * 1024;

static MAX_OUTPUT_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_OUTPUT_BYTES);

/// Sets the most bytes each stream takes in the result (JSON-encoded) for commands that do not say (`wsp serve
/// --max-output-bytes`); at least 1.
pub fn set_default_max_output_bytes(bytes: u64) {
    MAX_OUTPUT_BYTES.store(bytes.max(1), Ordering::Relaxed);
}

/// The most bytes each stream takes in the result (JSON-encoded) for commands that do not
/// say.
pub fn default_max_output_bytes() -> u64 {
    MAX_OUTPUT_BYTES.load(Ordering::Relaxed)
}

/// A piece of a command's output, sent as it arrives when the run has an output sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputChunk {
    /// The stream it came from.
    pub stream: OutputStream,
    /// The text, decoded as UTF-8 with replacement; it never ends inside a UTF-8 sequence.
    pub data: String,
}

/// Where a run sends its [`OutputChunk`]s. Chunks of one stream arrive in order; the run
/// returns only after its last chunk was sent. Reading waits while the channel is full, so a
/// slow receiver slows the command down instead of filling memory.
pub type OutputSink = mpsc::Sender<OutputChunk>;

/// How a command runs, beyond what it is: everything has a default.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Written to the child's stdin, which is then closed; `None`: stdin is the null device.
    /// Shared, not copied, when the options are cloned (a `String` converts without a copy).
    pub stdin: Option<Bytes>,
    /// When it passes, everything the command started is killed and the result says
    /// `timed_out` with exit code `-9`.
    pub timeout: Option<Duration>,
    /// The most bytes each stream's text takes in the result, encoded as a JSON string
    /// (escapes included, quotes not); `None` is [`default_max_output_bytes`].
    pub max_output_bytes: Option<u64>,
    /// Where output goes as it arrives, besides the result.
    pub output: Option<OutputSink>,
    /// Resource limits for the child.
    pub limits: ExecuteLimits,
    /// The containment to use; `None` is [`super::containment_mode`], the best this process
    /// has.
    pub containment: Option<ContainmentMode>,
    /// Runs the command in a sandbox (see [`super::sandbox`]); `None`: unconfined.
    pub sandbox: Option<SandboxPolicy>,
}

impl RunOptions {
    /// The per-stream limit in effect, in JSON-encoded bytes.
    pub(super) fn output_limit(&self) -> usize {
        let bytes = self
            .max_output_bytes
            .unwrap_or_else(default_max_output_bytes);
        usize::try_from(bytes).unwrap_or(usize::MAX)
    }

    /// The rlimits to set in the child. A limit looser than this process's own hard limit
    /// cannot be granted, so that hard limit is used instead.
    pub(super) fn rlimits(&self) -> Vec<(Resource, u64)> {
        let limits = &self.limits;
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
}
