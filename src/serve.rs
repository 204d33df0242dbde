//! `wsp serve`: the reference server on stdin/stdout.

use std::path::PathBuf;

use wsp_environments::store::Store;

use crate::config::ServeConfig;
use wsp_server::{Broadcast, ServerBuilder};

/// Why the reference server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// No state directory could be determined.
    #[error("no state directory: pass --state-dir or set WSP_HOME or HOME")]
    NoStateDir,
    /// The state directory could not be opened.
    #[error("cannot open the state directory {}: {source}", path.display())]
    Store {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: wsp_environments::store::StoreError,
    },
    /// The backend could not be set up.
    #[error("the {backend} backend is unavailable: {detail}")]
    Backend {
        /// The backend's name.
        backend: &'static str,
        /// Why.
        detail: String,
    },
}

/// The state directory: `--state-dir`, else `$WSP_HOME`, else `$XDG_DATA_HOME/wsp`, else
/// `~/.local/share/wsp`.
pub fn state_dir(configured: Option<PathBuf>) -> Option<PathBuf> {
    let non_empty = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    configured
        .or_else(|| non_empty("WSP_HOME"))
        .or_else(|| non_empty("XDG_DATA_HOME").map(|d| d.join("wsp")))
        .or_else(|| non_empty("HOME").map(|h| h.join(".local/share/wsp")))
}

/// Builds the reference server: the environment methods on the configured backend.
pub fn reference_server(config: &ServeConfig) -> Result<wsp_server::Server, StartError> {
    let dir = state_dir(config.state_dir.clone()).ok_or(StartError::NoStateDir)?;
    let store = Store::open(&dir).map_err(|source| StartError::Store {
        path: dir.clone(),
        source,
    })?;
    // Found once per process, at start: in cgroup mode this makes the server's cgroup subtree,
    // killing and removing what dead servers left.
    let containment = wsp_exec::containment_mode();
    tracing::debug!(mode = containment.as_str(), "containment");
    let mut environments = crate::backends::environments(config, store)?;
    let mut builder = ServerBuilder::new();
    if !config.listen.addresses.is_empty() {
        let changes = Broadcast::new();
        environments = environments.with_change_notifications(changes.clone());
        builder = builder.broadcast(changes);
    }
    Ok(builder
        .max_frame_bytes(config.max_frame_bytes)
        .drain_timeout(config.drain_timeout)
        .busy_poll(config.busy_poll)
        .concurrency_limit(config.concurrency_limit)
        .max_queued_bytes(config.max_queued_bytes)
        .group(environments)
        .build())
}

/// Runs the reference server on stdin/stdout, or on its `--listen` addresses; returns the
/// process exit status.
pub fn run_reference_server(config: ServeConfig) -> i32 {
    let _log = crate::logging::init(config.log_format);
    match reference_server(&config) {
        Ok(server) if config.listen.addresses.is_empty() => server.run_stdio(),
        Ok(server) => {
            let state_dir = state_dir(config.state_dir.clone()).unwrap_or_default();
            let bind = crate::listen::bind(&config.listen, &state_dir, config.max_frame_bytes);
            server.run_listeners(bind)
        }
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("wsp: {e}");
            2
        }
    }
}
