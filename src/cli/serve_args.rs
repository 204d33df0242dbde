//! `wsp serve`'s own options and how they, with the options given before `serve`, become a
//! [`ServeConfig`].

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::args::ServerOptions;
use crate::config::{BackendKind, LogFormat, ServeConfig};
use crate::config_file::{ConfigFile, ConfigFileError};

/// `wsp serve`'s own options.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The state directory (default: $WSP_HOME, else ~/.local/share/wsp).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// The environment backend.
    #[arg(long, value_enum, value_name = "BACKEND")]
    pub backend: Option<BackendArg>,
    /// The largest frame payload accepted, in bytes.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_frame_bytes: Option<u64>,
    /// How long the EOF/exit drain waits for in-flight requests: `5s`, `500ms`, or seconds.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub drain_timeout: Option<Duration>,
    /// How long a session with nothing to do keeps reading after it answered, before it
    /// sleeps: `150us` (the default), `50us`, or `0` for never. Cuts the round trip of a
    /// client that sends its next request as soon as it read an answer; costs CPU only for
    /// such clients.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub busy_poll: Option<Duration>,
    /// Log line format on stderr.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub log_format: Option<LogFormatArg>,
    /// An extra Python interpreter to offer; repeatable.
    #[arg(long = "python", value_name = "PATH")]
    pub interpreters: Vec<PathBuf>,
    /// A conda channel; repeatable (default: conda-forge).
    #[arg(long, value_name = "URL")]
    pub channel: Vec<String>,
    /// The `uv` executable (default: looked up on PATH).
    #[arg(long, value_name = "PATH")]
    pub uv: Option<PathBuf>,
    /// How many handlers run at once; requests past it wait for a slot (reading goes on).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub concurrency_limit: Option<u64>,
    /// The bytes requests waiting for a handler slot may hold (default 64 MiB); once they
    /// hold that many, reading pauses until one of them starts.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_queued_bytes: Option<u64>,
    /// The default `max_output_bytes` of `environment/execute`: the most bytes each stream
    /// takes in the answer, JSON-encoded (default 16 MiB).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_output_bytes: Option<u64>,
    /// Create venvs with `python -m venv` instead of writing them directly.
    #[arg(long)]
    pub stdlib_venv: bool,
    /// Seed pip into new venvs.
    #[arg(long)]
    pub seed_pip: bool,
    /// After a create, provision an empty environment like it ahead, in the background, for
    /// the next such create to rename and install into (1, the default), or never (0).
    #[arg(long, value_name = "0|1", value_parser = clap::builder::BoolishValueParser::new())]
    pub spare_environments: Option<bool>,
    /// Sandbox every `environment/execute` that does not say `"sandbox": false` (the command
    /// writes only in its environment and a private TMPDIR, and has no network).
    #[arg(long)]
    pub sandbox: bool,
    /// Admit an unsandboxed execute's `cwd` inside DIR too, besides the environment's root, as
    /// `uv run` runs where it is started; repeatable (a relative DIR is taken from the current
    /// directory). `initialize` lists them as `allowed_cwd_roots`.
    #[arg(long, value_name = "DIR", value_parser = parse_allowed_dir)]
    pub allow_cwd: Vec<PathBuf>,
    /// A directory or URL every install looks in for packages, before the request's own;
    /// repeatable (a relative path is taken from the current directory).
    #[arg(long, value_name = "DIR|URL", value_parser = parse_location)]
    pub find_links: Vec<String>,
    /// The package index every install uses unless its request names one.
    #[arg(long, value_name = "URL")]
    pub index_url: Option<String>,
    /// Installs use no package index (only find-links) unless their request says otherwise.
    #[arg(long)]
    pub no_index: bool,
    /// Install a Python version that no locator finds with `uv python install`, then use it
    /// (venv and uv backends; off by default).
    #[arg(long)]
    pub python_downloads: bool,
    /// Serve many clients at once instead of stdio: `unix:PATH`, `ws://HOST:PORT` or
    /// `wss://HOST:PORT`; repeatable.
    #[arg(long, value_name = "ADDR")]
    pub listen: Vec<crate::listen::ListenAddress>,
    /// A user besides the server's own whose Unix connections are served; repeatable.
    #[arg(long, value_name = "UID")]
    pub allow_uid: Vec<u32>,
    /// The most connections served at once over all listeners (default 256).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: Option<u64>,
    /// The WebSocket token's file, readable by its owner only (default: $WSP_TOKEN, else one
    /// is made in `STATE_DIR/server.token`).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// An `Origin` WebSocket upgrades may come from; repeatable.
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// A host WebSocket upgrades may name besides loopback and the listen host; repeatable.
    #[arg(long, value_name = "HOST")]
    pub allow_host: Vec<String>,
    /// The wss:// certificate chain, PEM.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The wss:// private key, PEM.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

impl ServeArgs {
    /// The server configuration: defaults, then the state directory's `wsp.toml`, then
    /// `before` (options given before `serve`), then `serve`'s own options.
    pub fn into_config_with_file(
        self,
        before: ServerOptions,
    ) -> Result<ServeConfig, ConfigFileError> {
        let state_dir = self.state_dir.clone().or(before.state_dir.clone());
        let base = ConfigFile::config_in(crate::serve::state_dir(state_dir).as_deref())?;
        Ok(self.into_config_over(before, base))
    }

    /// The server configuration: defaults, then `before` (options given before `serve`), then
    /// `serve`'s own options.
    #[cfg(test)]
    pub fn into_config(self, before: ServerOptions) -> ServeConfig {
        self.into_config_over(before, ServeConfig::default())
    }

    /// `config` with `before`, then `serve`'s own options, over it: a value given replaces
    /// the config's, a list given replaces the config's list, a switch given turns it on.
    fn into_config_over(self, before: ServerOptions, mut config: ServeConfig) -> ServeConfig {
        let server = before.merge(ServerOptions {
            state_dir: self.state_dir,
            backend: self.backend,
            interpreter: self.interpreters,
            channel: self.channel,
            uv: self.uv,
        });
        config.state_dir = server.state_dir;
        if let Some(backend) = server.backend {
            config.backend = backend.into();
        }
        if !server.interpreter.is_empty() {
            config.interpreters = server.interpreter;
        }
        if !server.channel.is_empty() {
            config.channels = server.channel;
        }
        if server.uv.is_some() {
            config.uv = server.uv;
        }
        if let Some(n) = self.max_frame_bytes {
            config.max_frame_bytes = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(timeout) = self.drain_timeout {
            config.drain_timeout = timeout;
        }
        if let Some(window) = self.busy_poll {
            config.busy_poll = window;
        }
        if let Some(format) = self.log_format {
            config.log_format = format.into();
        }
        if let Some(n) = self.concurrency_limit {
            config.concurrency_limit = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = self.max_queued_bytes {
            config.max_queued_bytes = usize::try_from(n).unwrap_or(usize::MAX);
        }
        config.max_output_bytes = self.max_output_bytes;
        config.stdlib_venv |= self.stdlib_venv;
        config.seed_pip |= self.seed_pip;
        if let Some(on) = self.spare_environments {
            config.spare_environments = on;
        }
        config.sandbox = self.sandbox;
        config.allowed_cwds = self.allow_cwd;
        config.python_downloads |= self.python_downloads;
        config.listen.addresses = self.listen;
        config.listen.allowed_uids = self.allow_uid;
        if let Some(n) = self.max_connections {
            config.listen.max_connections = usize::try_from(n).unwrap_or(usize::MAX);
        }
        config.listen.token_file = self.token_file;
        config.listen.allowed_origins = self.allow_origin;
        config.listen.allowed_hosts = self.allow_host;
        config.listen.tls = self.tls_cert.zip(self.tls_key);
        let source = &mut config.install_source;
        if !self.find_links.is_empty() {
            source.find_links = self.find_links;
        }
        if self.index_url.is_some() {
            source.index_url = self.index_url;
        }
        source.no_index |= self.no_index;
        config
    }
}

/// `--backend` values (and `backend` in `wsp.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendArg {
    /// The built-in venv backend (default).
    Venv,
    /// Environments made by `uv`.
    Uv,
    /// Conda prefixes.
    Conda,
}

impl From<BackendArg> for BackendKind {
    fn from(arg: BackendArg) -> Self {
        match arg {
            BackendArg::Venv => BackendKind::Venv,
            BackendArg::Uv => BackendKind::Uv,
            BackendArg::Conda => BackendKind::Conda,
        }
    }
}

/// `--log-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormatArg {
    /// Human-readable lines (default).
    Text,
    /// One JSON object per line.
    Json,
}

impl From<LogFormatArg> for LogFormat {
    fn from(arg: LogFormatArg) -> Self {
        match arg {
            LogFormatArg::Text => LogFormat::Text,
            LogFormatArg::Json => LogFormat::Json,
        }
    }
}

/// A `--find-links` value: a URL (`scheme://...`) as it is, a path made absolute.
pub fn parse_location(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("an empty location".to_owned());
    }
    if text.contains("://") {
        return Ok(text.to_owned());
    }
    std::path::absolute(text)
        .map(|path| path.display().to_string())
        .map_err(|e| format!("`{text}`: {e}"))
}

/// Parses `5s`, `500ms`, `50us`, `1.5s` or a plain number of seconds (`5`, `0.25`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, scale) = if let Some(us) = text.strip_suffix("us") {
        (us, 0.000_001)
    } else if let Some(ms) = text.strip_suffix("ms") {
        (ms, 0.001)
    } else if let Some(s) = text.strip_suffix('s') {
        (s, 1.0)
    } else {
        (text, 1.0)
    };
    let valid = !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        && number.chars().filter(|&c| c == '.').count() <= 1
        && number != ".";
    let value: f64 = match number.parse() {
        Ok(value) if valid => value,
        _ => return Err(format!("`{text}` is not a duration (try 5s, 500ms or 5)")),
    };
    Duration::try_from_secs_f64(value * scale).map_err(|e| format!("`{text}`: {e}"))
}

/// An existing directory, made absolute with every symlink resolved.
fn parse_allowed_dir(text: &str) -> Result<PathBuf, String> {
    let dir = std::fs::canonicalize(text).map_err(|e| format!("`{text}`: {e}"))?;
    if !dir.is_dir() {
        return Err(format!("`{text}` is not a directory"));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args::{Cli, Command};
    use clap::Parser;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert_eq!(parse_duration("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("50us"), Ok(Duration::from_micros(50)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        for bad in [
            "", "s", "ms", "us", "-1", "5m", "1e3", ".", "1..2", "NaN", "inf",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn serve_builds_the_config() {
        let cli = Cli::try_parse_from([
            "wsp",
            "--state-dir",
            "/outer",
            "serve",
            "--backend",
            "uv",
            "--drain-timeout",
            "500ms",
            "--max-frame-bytes",
            "1024",
            "--python",
            "/usr/bin/python3",
            "--log-format",
            "json",
            "--seed-pip",
            "--spare-environments",
            "0",
            "--max-queued-bytes",
            "1048576",
            "--busy-poll",
            "200us",
        ])
        .unwrap();
        let Command::Serve(serve) = cli.command else {
            panic!("not serve");
        };
        let config = serve.into_config(cli.client.server);
        assert_eq!(config.state_dir, Some(PathBuf::from("/outer")));
        assert_eq!(config.backend, BackendKind::Uv);
        assert_eq!(config.drain_timeout, Duration::from_millis(500));
        assert_eq!(config.busy_poll, Duration::from_micros(200));
        assert_eq!(config.max_frame_bytes, 1024);
        assert_eq!(config.interpreters, [PathBuf::from("/usr/bin/python3")]);
        assert_eq!(config.log_format, LogFormat::Json);
        assert!(config.seed_pip && !config.stdlib_venv);
        assert!(!config.spare_environments && ServeConfig::default().spare_environments);
        assert_eq!(config.max_queued_bytes, 1 << 20);
        assert_eq!(
            config.concurrency_limit,
            ServeConfig::default().concurrency_limit
        );
    }
}
