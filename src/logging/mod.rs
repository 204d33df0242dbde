//! Logging to stderr through `tracing-subscriber`.
//!
//! The filter comes from `WSP_LOG`, falling back to `RUST_LOG`, then to `warn`. Nothing is ever
//! logged to stdout: stdout carries frames only.
//!
//! Lines are written by a thread of their own ([`lossy`]). A client that pipes the server's
//! stderr and never reads it fills the pipe; the server then drops log lines instead of
//! stopping to serve until someone reads. Panics go through the log too ([`panics`]).

mod lossy;
mod panics;

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;
pub use lossy::LogThread;

/// Installs the global subscriber. Keep the returned thread until the end: dropping it writes
/// what still waits.
pub fn init(format: LogFormat) -> LogThread {
    let directives = std::env::var("WSP_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "warn".to_owned());
    let filter = EnvFilter::try_new(&directives).unwrap_or_else(|e| {
        eprintln!("wsp: ignoring the log filter {directives:?}: {e}");
        EnvFilter::new("warn")
    });
    let thread = LogThread::start();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(thread.writer())
        .with_ansi(false);
    let _already_installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
    panics::log_panics();
    thread
}
