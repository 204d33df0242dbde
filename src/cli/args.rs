//! The `wsp` command line: `wsp serve` and the client commands, as clap derive types.
//!
//! The client options ([`ClientArgs`]: `--json`, `--server-cmd` and the [`ServerOptions`] to pass to
//! the spawned server) go before the subcommand or after its name, so
//! `wsp --backend conda create demo --python 3.12 --channel URL` works; values given in both places
//! are merged ([`ClientArgs::merge`]). Before `serve`, the server options configure that server and
//! `--json`/`--server-cmd` are refused.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use wsp_protocol::packages::PackageSource;

pub use super::serve_args::{BackendArg, ServeArgs};
use crate::config::BackendKind;

/// `wsp`: the WSP reference server and a command-line client for it.
#[derive(Debug, Parser)]
#[command(
    name = "wsp",
    version,
    about = "The WSP reference server (`wsp serve`) and a client for it",
    after_help = "A client command spawns `wsp serve` for its session, or with --connect ADDR \
                  (or WSP_CONNECT) talks to a running `wsp serve --listen ADDR`: unix:PATH, \
                  ws://HOST:PORT or wss://HOST:PORT. ws:// and wss:// send the token from \
                  --token-file PATH or WSP_TOKEN; wss:// trusts --ca-cert PEM or the system's \
                  roots.\n\n\
                  Exit status: 0 ok; 1 the server answered with a JSON-RPC error; \
                  2 usage or transport error. `wsp exec` exits with the command's own status \
                  (a command killed by signal N gives 128+N)."
)]
pub struct Cli {
    /// Client and server options; each command takes them after its name too.
    #[command(flatten)]
    pub client: ClientArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the server on stdin/stdout (Content-Length framed JSON-RPC).
    Serve(ServeArgs),
    /// List environments: ID, NAME, PYTHON.
    List(ClientArgs),
    /// Create an environment.
    Create {
        /// The environment's name (1-64 characters, unique).
        name: String,
        /// The Python version: MAJOR.MINOR (newest patch) or MAJOR.MINOR.PATCH. Default: the
        /// newest that `wsp python list` shows (said on stderr).
        #[arg(long, value_name = "X.Y")]
        python: Option<String>,
        /// A package to install before the environment is committed (a PEP 508 requirement,
        /// a distribution's or a project's path, or a conda match spec); repeatable. A relative
        /// path is taken from the current directory.
        #[arg(short = 'p', long = "package", value_name = "PKG",
              value_parser = super::local_paths::parse_package)]
        packages: Vec<String>,
        /// Install the requirements FILE lists too; repeatable (see `wsp install --help`).
        #[arg(short = 'r', long = "requirement", value_name = "FILE")]
        requirements: Vec<PathBuf>,
        /// Install exactly what the lock FILE names (from `wsp lock`): a PEP 751
        /// `pylock.toml` for venv and uv, a conda explicit spec (`@EXPLICIT`) for conda.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["packages", "requirements"])]
        lock: Option<PathBuf>,
        /// Where to look for the packages.
        #[command(flatten)]
        source: SourceArgs,
        /// Answer with a live environment made with --reuse from the same backend,
        /// interpreter, packages and sources, if there is one, instead of making another
        /// (NAME then only matters when it is another environment's).
        #[arg(long)]
        reuse: bool,
        /// Client options.
        #[command(flatten)]
        client: ClientArgs,
    },
    /// Print a lock of an environment: every installed distribution, its exact version and
    /// where it came from (`wsp lock ENV > pylock.toml`; `wsp create NAME --lock FILE` makes it
    /// again).
    Lock {
        /// An environment id, or a name.
        target: String,
        /// Client options.
        #[command(flatten)]
        client: ClientArgs,
    },
    /// Install packages into an environment.
    Install(InstallArgs),
    /// Uninstall packages from an environment (names that are not installed are ignored).
    Uninstall {
        /// An environment id, or a name.
        target: String,
        /// The names of the packages to remove.
        #[arg(required = true, value_name = "PKG")]
        packages: Vec<String>,
        /// Client options.
        #[command(flatten)]
        client: ClientArgs,
    },
    /// Show an environment in full, packages included.
    Get {
        /// An environment id, or a name.
        target: String,
        /// Client options.
        #[command(flatten)]
        client: ClientArgs,
    },
    /// Delete an environment. On a terminal it asks first; elsewhere (a script, a pipe) it
    /// doesn't.
    Delete {
        /// An environment id, or a name.
        target: String,
        /// Delete without asking.
        #[arg(long, short = 'y')]
        yes: bool,
        /// Client options.
        #[command(flatten)]
        client: ClientArgs,
    },
    /// Delete environments, least recently used first, until the rest hold at most
    /// --keep-bytes; never one in use. Prints each deleted id, then what is left.
    Gc {
        /// The most bytes the environments may hold afterwards: an integer, or one with a
        /// K, M, G or T suffix (powers of 1024; `KiB` and the like too).
        #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
        keep_bytes: u64,
        /// Client options.
        #[command(flatten)]
        client: ClientArgs,
    },
    /// Run a command inside an environment; its output and exit status pass through (with
    /// `--json` too: the result is printed as JSON and the status still passes through).
    Exec(ExecArgs),
    /// Python interpreters.
    #[command(subcommand)]
    Python(PythonCommand),
    /// Print a completion script for a shell, e.g.
    /// `wsp completions bash > ~/.local/share/bash-completion/completions/wsp`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Send one raw request and print its result.
    Call {
        /// The method, e.g. `environment/list`.
        method: String,
        /// The params as JSON (an object, usually); omitted means no params.
        params: Option<String>,
        /// Client options.
        #[command(flatten)]
        client: ClientArgs,
    },
}

/// `wsp python ...`.
#[derive(Debug, Subcommand)]
pub enum PythonCommand {
    /// List the interpreters a spawned server can create environments with (venv and uv
    /// backends), newest first: VERSION, SOURCE, PATH. Found here, the way the server finds
    /// them (`--interpreter` adds one).
    List(ClientArgs),
}

/// `wsp install ID|NAME PKG... [-r FILE]... [--upgrade]`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// An environment id, or a name.
    pub target: String,
    /// PEP 508 requirements or paths of distributions or projects (conda: match specs). A
    /// relative path is taken from the current directory.
    #[arg(required_unless_present = "requirements", value_name = "PKG",
          value_parser = super::local_paths::parse_package)]
    pub packages: Vec<String>,
    /// Install the requirements FILE lists; repeatable. One requirement or path per line, `#`
    /// comments, `\` continuations, `-r OTHER` (taken from FILE's directory); other options
    /// are refused (give --find-links, --index-url, --no-index here). A relative path in it is
    /// taken from the current directory, as pip does.
    #[arg(short = 'r', long = "requirement", value_name = "FILE")]
    pub requirements: Vec<PathBuf>,
    /// Install the newest versions that satisfy the requirements, even over installed ones.
    #[arg(long, short = 'U')]
    pub upgrade: bool,
    /// Where to look for the packages.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Client options.
    #[command(flatten)]
    pub client: ClientArgs,
}

/// Where an install looks for packages, on top of the server's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct SourceArgs {
    /// A directory or URL of distributions to look in; repeatable (a relative path is taken
    /// from the current directory).
    #[arg(long, value_name = "DIR|URL", value_parser = super::serve_args::parse_location)]
    pub find_links: Vec<String>,
    /// The package index to use instead of the default.
    #[arg(long, value_name = "URL")]
    pub index_url: Option<String>,
    /// Use no package index, only --find-links.
    #[arg(long)]
    pub no_index: bool,
}

impl From<SourceArgs> for PackageSource {
    /// Only what was given: an empty list or an absent flag leaves the server's default.
    fn from(source: SourceArgs) -> Self {
        PackageSource {
            find_links: source.find_links,
            index_url: source.index_url,
            no_index: source.no_index.then_some(true),
        }
    }
}

/// `wsp exec ID|NAME [--cwd DIR] [--env K=V]... -- ARGV...`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// An environment id, or a name.
    pub target: String,
    /// The working directory (a relative DIR is taken from here). Default: where `wsp` runs,
    /// when it spawns its own server (which then admits that directory, as `uv run` runs
    /// where it is started); the environment's root with `--connect` or `--server-cmd`, whose
    /// server admits its `--allow-cwd` directories besides the root.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    /// An environment variable for the command; repeatable.
    #[arg(long = "env", value_name = "K=V", value_parser = parse_env_pair)]
    pub env: Vec<(String, String)>,
    /// Kill the command (and everything it started) after this long: `30s`, `500ms`, or
    /// seconds. A command that timed out makes `wsp exec` exit 124.
    #[arg(long, value_name = "DURATION", value_parser = super::serve_args::parse_duration)]
    pub timeout: Option<std::time::Duration>,
    /// Give the command no stdin (the null device), as `ssh -n` does: for a loop that reads
    /// its own stdin (`while read e; do wsp exec -n "$e" -- …; done < list`). Otherwise this
    /// program's stdin is passed on as it arrives, and the command starts at once.
    #[arg(short = 'n', long)]
    pub no_stdin: bool,
    /// Run the command on a pseudo-terminal, with this terminal in raw mode (keys, Ctrl-C
    /// included, go to the command): `wsp exec -i ENV -- python` is a REPL. The default when
    /// stdin, stdout and stderr are all terminals.
    #[arg(short = 'i', long, conflicts_with = "no_stdin")]
    pub interactive: bool,
    /// Keep at most this many bytes of each of the command's streams (the server's default
    /// is 16 MiB); what is cut is said on stderr.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_output_bytes: Option<u64>,
    /// Exit 1 when output was cut and the command itself succeeded (otherwise a cut is only
    /// said on stderr).
    #[arg(long)]
    pub strict_output: bool,
    /// Client options.
    #[command(flatten)]
    pub client: ClientArgs,
    /// The command and its arguments (after `--`).
    #[arg(last = true, required = true, value_name = "ARGV")]
    pub argv: Vec<String>,
}

/// Options every client command takes: output format, how to start the server, and the
/// server options to pass to it.
#[derive(Debug, Clone, Default, Args)]
pub struct ClientArgs {
    /// Print the result JSON instead of a human-readable form.
    #[arg(long)]
    pub json: bool,
    /// Show the spawned server's log as it is written (otherwise it is kept, and shown only
    /// when the command fails).
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Spawn this command line (split like a POSIX shell) instead of `<this program> serve`.
    /// Server options given to the client are appended to it.
    #[arg(long, value_name = "CMD")]
    pub server_cmd: Option<String>,
    /// Talk to a running `wsp serve --listen` at `unix:PATH`, `ws://HOST:PORT` or
    /// `wss://HOST:PORT` instead of spawning a server.
    #[arg(long, value_name = "ADDR", env = "WSP_CONNECT")]
    pub connect: Option<crate::listen::ListenAddress>,
    /// For `--connect ws://` and `wss://`: the file holding the server's token (default:
    /// $WSP_TOKEN), sent as `Authorization: Bearer`.
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// For `--connect wss://`: trust the certificates in this PEM file instead of the
    /// system's root certificates.
    #[arg(long, value_name = "PEM")]
    pub ca_cert: Option<PathBuf>,
    /// Server options for the spawned server.
    #[command(flatten)]
    pub server: ServerOptions,
}

/// Server options that both `wsp serve` and a spawned server take.
#[derive(Debug, Clone, Default, Args)]
pub struct ServerOptions {
    /// The state directory (default: $WSP_HOME, else ~/.local/share/wsp).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// The environment backend.
    #[arg(long, value_enum, value_name = "BACKEND")]
    pub backend: Option<BackendArg>,
    /// An extra Python interpreter to offer; repeatable (`wsp serve --python PATH`).
    #[arg(long, value_name = "PATH")]
    pub interpreter: Vec<PathBuf>,
    /// A conda channel; repeatable (default: conda-forge).
    #[arg(long, value_name = "URL")]
    pub channel: Vec<String>,
    /// The `uv` executable (default: looked up on PATH).
    #[arg(long, value_name = "PATH")]
    pub uv: Option<PathBuf>,
}

impl ClientArgs {
    /// Combines options given before the subcommand (`self`) with those given after its name
    /// (`later`): single values from `later` win, lists are concatenated, flags are or-ed.
    pub fn merge(self, later: ClientArgs) -> ClientArgs {
        ClientArgs {
            json: self.json || later.json,
            verbose: self.verbose || later.verbose,
            server_cmd: later.server_cmd.or(self.server_cmd),
            connect: later.connect.or(self.connect),
            token_file: later.token_file.or(self.token_file),
            ca_cert: later.ca_cert.or(self.ca_cert),
            server: self.server.merge(later.server),
        }
    }
}

impl ServerOptions {
    /// Combines options given before the subcommand (`self`) with those given after it
    /// (`later`): single values from `later` win, lists are concatenated.
    pub fn merge(self, later: ServerOptions) -> ServerOptions {
        ServerOptions {
            state_dir: later.state_dir.or(self.state_dir),
            backend: later.backend.or(self.backend),
            interpreter: [self.interpreter, later.interpreter].concat(),
            channel: [self.channel, later.channel].concat(),
            uv: later.uv.or(self.uv),
        }
    }

    /// These options as `wsp serve` flags, for a spawned server; only what was given.
    pub fn to_serve_flags(&self) -> Vec<std::ffi::OsString> {
        let mut flags: Vec<std::ffi::OsString> = Vec::new();
        if let Some(dir) = &self.state_dir {
            flags.push("--state-dir".into());
            flags.push(dir.into());
        }
        if let Some(backend) = self.backend {
            flags.push("--backend".into());
            flags.push(BackendKind::from(backend).name().into());
        }
        for path in &self.interpreter {
            flags.push("--python".into());
            flags.push(path.into());
        }
        for channel in &self.channel {
            flags.push("--channel".into());
            flags.push(channel.into());
        }
        if let Some(uv) = &self.uv {
            flags.push("--uv".into());
            flags.push(uv.into());
        }
        flags
    }
}

/// Parses `K=V` for `--env`: the key is non-empty; the value may be empty or contain `=`.
pub fn parse_env_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(format!("`{text}` is not KEY=VALUE with a non-empty KEY")),
    }
}

/// `--keep-bytes`: an integer of bytes, or one with a K, M, G or T suffix (powers of 1024).
fn parse_bytes(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(digits_end);
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a number of bytes (e.g. 500M, 10G)"))?;
    let shift = match unit.trim().trim_end_matches("iB").trim_end_matches('B') {
        "" => 0,
        "K" | "k" => 10,
        "M" | "m" => 20,
        "G" | "g" => 30,
        "T" | "t" => 40,
        _ => return Err(format!("`{text}`: unknown unit `{unit}` (K, M, G or T)")),
    };
    number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{text}` is more bytes than fit in 64 bits"))
}

#[cfg(test)]
mod tests;
