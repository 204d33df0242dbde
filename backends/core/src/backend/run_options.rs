//! How a command runs beyond what it is: stdin, a timeout, output limits and streaming,
//! resource limits, containment, a sandbox. The `wsp-exec` crate runs commands by these.

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, watch};
use wsp_protocol::interactive::PtySize;
use wsp_protocol::params::ExecuteLimits;
use wsp_protocol::results::OutputStream;

/// The default most bytes each output stream takes in the result, encoded as a JSON string
/// (escapes included, quotes not): 16 MiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 16 * 1024 * 1024;

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
    /// (escapes included, quotes not); `None` is the server's default (at first
    /// [`DEFAULT_MAX_OUTPUT_BYTES`]).
    pub max_output_bytes: Option<u64>,
    /// Where output goes as it arrives, besides the result.
    pub output: Option<OutputSink>,
    /// Resource limits for the child.
    pub limits: ExecuteLimits,
    /// The containment to use; `None` is the best this process has.
    pub containment: Option<ContainmentMode>,
    /// Runs the command in a sandbox; `None`: unconfined.
    pub sandbox: Option<SandboxPolicy>,
    /// stdin is a pipe fed from this stream as its chunks arrive (instead of `stdin`); the
    /// stream's end closes it.
    pub stdin_stream: Option<StdinStream>,
    /// The command runs on a pseudo-terminal (stdin, stdout and stderr), whose size follows
    /// this value; its output is stdout's.
    pub pty: Option<watch::Receiver<PtySize>>,
}

/// The chunks of a streamed stdin, in order, for one run to take. A bounded channel: the
/// sender waits while the command does not read.
#[derive(Clone, Default)]
pub struct StdinStream {
    chunks: Arc<Mutex<Option<mpsc::Receiver<Bytes>>>>,
}

impl StdinStream {
    /// A stream of what `chunks` receives.
    pub fn new(chunks: mpsc::Receiver<Bytes>) -> Self {
        StdinStream {
            chunks: Arc::new(Mutex::new(Some(chunks))),
        }
    }

    /// The chunks, for the one run that takes them; `None` once taken.
    pub fn take(&self) -> Option<mpsc::Receiver<Bytes>> {
        self.chunks.lock().ok().and_then(|mut chunks| chunks.take())
    }
}

impl std::fmt::Debug for StdinStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StdinStream")
    }
}

/// How the processes of one command are held together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainmentMode {
    /// A cgroup v2 per command, killed with `cgroup.kill`.
    Cgroup,
    /// A PID namespace per command.
    PidNamespace {
        /// Whether the namespace is made inside a new user namespace (this process lacks the
        /// privilege to make a PID namespace otherwise).
        user_namespace: bool,
    },
    /// The command's process group only.
    ProcessGroup,
}

impl ContainmentMode {
    /// The mode's name as the server reports it: `cgroup`, `pid-namespace` or
    /// `process-group`.
    pub fn as_str(self) -> &'static str {
        match self {
            ContainmentMode::Cgroup => "cgroup",
            ContainmentMode::PidNamespace { .. } => "pid-namespace",
            ContainmentMode::ProcessGroup => "process-group",
        }
    }

    /// Whether a process that leaves the process group (`setsid`) is still contained.
    pub fn contains_new_sessions(self) -> bool {
        !matches!(self, ContainmentMode::ProcessGroup)
    }
}

/// What a sandboxed command may touch besides reading the system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// The tree it may write (and read): the environment's root.
    pub root: PathBuf,
    /// Trees it may not even read, except `root` where it lies inside one: the state
    /// directory.
    pub hidden: Vec<PathBuf>,
    /// What it may reach over the network.
    pub network: SandboxNetwork,
    /// Where its private `TMPDIR` is made: a directory inside one of `hidden` (the state
    /// directory's `tmp`), so that the other runs' directories are hidden with it. `None`:
    /// in the system's temporary directory, whose every other entry the sandbox then grants
    /// one by one (about 13 µs an entry; a /tmp of 850 entries made each run 11 ms slower).
    pub private_tmp_in: Option<PathBuf>,
}

impl SandboxPolicy {
    /// A command in the environment at `root` that may not read `hidden` and has no network.
    pub fn offline(root: PathBuf, hidden: Vec<PathBuf>) -> Self {
        SandboxPolicy {
            root,
            hidden,
            network: SandboxNetwork::None,
            private_tmp_in: None,
        }
    }

    /// Makes the private `TMPDIR` in `dir` (see [`SandboxPolicy::private_tmp_in`]).
    pub fn with_private_tmp_in(mut self, dir: PathBuf) -> Self {
        self.private_tmp_in = Some(dir);
        self
    }
}

/// The network a sandboxed command may use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SandboxNetwork {
    /// None at all: a network namespace of its own, with only a loopback that is down.
    #[default]
    None,
    /// The host's network, to connect over TCP to these ports only (an installer reaching its
    /// index); no TCP port may be bound. Name lookups (UDP) are not confined. On a kernel
    /// whose Landlock ABI is older than 4, TCP is not confined either.
    TcpConnect(Vec<u16>),
}
