//! What `wsp serve` is configured with: the options of the reference server.

use std::path::PathBuf;
use std::time::Duration;

/// How log lines on stderr are formatted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Which environment backend serves the environment methods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BackendKind {
    /// The built-in fallback: venvs written in Rust.
    #[default]
    Venv,
    /// Environments made by the `uv` tool.
    Uv,
    /// Conda prefixes solved and installed with rattler.
    Conda,
}

impl BackendKind {
    /// Every backend, in the order `initialize` lists them.
    pub const ALL: [BackendKind; 3] = [BackendKind::Conda, BackendKind::Uv, BackendKind::Venv];

    /// The backend's name, as `initialize` and `extra.backend` show it.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Venv => "venv",
            BackendKind::Uv => "uv",
            BackendKind::Conda => "conda",
        }
    }
}

/// The reference server's configuration.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The state directory; `None` means `$WSP_HOME`, else the platform data dir.
    pub state_dir: Option<PathBuf>,
    /// The environment backend.
    pub backend: BackendKind,
    /// The largest frame payload accepted.
    pub max_frame_bytes: usize,
    /// How long the EOF/exit drain waits for in-flight requests.
    pub drain_timeout: Duration,
    /// How many handlers run at once.
    pub concurrency_limit: usize,
    /// How long an idle session keeps reading after it answered (`--busy-poll`).
    pub busy_poll: Duration,
    /// The bytes requests waiting for a handler slot may hold before reading pauses.
    pub max_queued_bytes: usize,
    /// The default `max_output_bytes` of `environment/execute`; `None` keeps 16 MiB.
    pub max_output_bytes: Option<u64>,
    /// Log line format on stderr.
    pub log_format: LogFormat,
    /// Extra interpreters to offer (`--python PATH`).
    pub interpreters: Vec<PathBuf>,
    /// Conda channels (`--channel`); empty means conda-forge.
    pub channels: Vec<String>,
    /// The `uv` executable (`--uv`); `None` means look it up on `PATH`.
    pub uv: Option<PathBuf>,
    /// Create venvs with `python -m venv` instead of writing them in Rust.
    pub stdlib_venv: bool,
    /// Seed pip into new venvs (from a cache, not ensurepip each time).
    pub seed_pip: bool,
    /// Provision spare environments ahead for creates (`--spare-environments`, default on).
    pub spare_environments: bool,
    /// Sandbox `environment/execute` unless a request says `"sandbox": false`.
    pub sandbox: bool,
    /// Directories besides an environment's root an unsandboxed execute may run in.
    pub allowed_cwds: Vec<PathBuf>,
    /// Where every install looks for packages unless its request says otherwise
    /// (`--find-links`, `--index-url`, `--no-index`).
    pub install_source: wsp_install::InstallSource,
    /// Install a Python that no locator finds with `uv python install` (`--python-downloads`;
    /// venv and uv backends).
    pub python_downloads: bool,
    /// Where to listen for many clients (`--listen`); none: one client on stdio.
    pub listen: crate::listen::ListenConfig,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            state_dir: None,
            backend: BackendKind::Venv,
            max_frame_bytes: wsp_server::codec::DEFAULT_MAX_FRAME_BYTES,
            drain_timeout: Duration::from_secs(5),
            concurrency_limit: 64,
            busy_poll: wsp_server::runtime::DEFAULT_BUSY_POLL,
            max_queued_bytes: wsp_middleware::DEFAULT_MAX_QUEUED_BYTES,
            max_output_bytes: None,
            log_format: LogFormat::Text,
            interpreters: Vec::new(),
            channels: Vec::new(),
            uv: None,
            stdlib_venv: false,
            seed_pip: false,
            spare_environments: true,
            sandbox: false,
            allowed_cwds: Vec::new(),
            install_source: wsp_install::InstallSource::default(),
            python_downloads: false,
            listen: crate::listen::ListenConfig::default(),
        }
    }
}
