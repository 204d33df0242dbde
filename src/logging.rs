//! Logging to stderr through `tracing-subscriber`.
//!
//! The filter comes from `WSP_LOG`, falling back to `RUST_LOG`, then to `warn`. Nothing is ever
//! logged to stdout: stdout carries frames only.

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Installs the global subscriber; a second call is a no-op.
pub fn init(format: LogFormat) {
    let directives = std::env::var("WSP_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "warn".to_owned());
    let filter = EnvFilter::try_new(&directives).unwrap_or_else(|e| {
        eprintln!("wsp: ignoring the log filter {directives:?}: {e}");
        EnvFilter::new("warn")
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false);
    let _already_installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
