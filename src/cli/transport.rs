//! The server a client command spawns, and why talking to it failed.
//!
//! [`ServerCommand::spawn`] starts it (stdin and stdout piped; its log, warnings and errors
//! only, see [`QUIET_LOG_FILTER`], kept in a [`ServerLog`] to show if the command fails, or
//! shown live with `-v`) as a [`ProcessClient`], the framework's client of a server process.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

use tokio::process::Command;
use wsp_server::client::{ClientError, ProcessClient};

use super::args::ClientArgs;

/// The log filter a spawned server gets unless `WSP_LOG` or `RUST_LOG` is set: its warnings and
/// errors show on the client's stderr, its per-request chatter does not, and neither does its
/// warning about a failure it answers (`wsp_environments::failure`): the CLI tells that failure
/// once, from the answer.
pub const QUIET_LOG_FILTER: &str = "warn,wsp_environments::failure=error";

/// Why talking to the server failed (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// `--server-cmd` can't be split into words.
    #[error("--server-cmd `{0}` is not a valid command line (unbalanced quotes?)")]
    BadServerCmd(String),
    /// `--server-cmd` holds no words.
    #[error("--server-cmd is empty")]
    EmptyServerCmd,
    /// This program's own path is unknown, so `<this program> serve` can't be spawned.
    #[error("cannot find this program's path to run `wsp serve`")]
    CurrentExe(#[source] io::Error),
    /// `--connect`'s server could not be reached.
    #[error("cannot connect to {address}")]
    Connect {
        /// Where.
        address: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// `--connect ws://` or `wss://` without a token.
    #[error("{address} needs a token: give --token-file PATH or set WSP_TOKEN")]
    NoToken {
        /// Where.
        address: String,
    },
    /// `--token-file` can't be read, or holds no token.
    #[error("cannot take a token from {}: {reason}", path.display())]
    TokenFile {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        reason: String,
    },
    /// The token can't be sent in an HTTP header.
    #[error("the token holds characters an HTTP header can't carry")]
    BadToken,
    /// The server answered the upgrade with 401.
    #[error("{address}: the server refused the token (HTTP 401)")]
    TokenRefused {
        /// Where.
        address: String,
    },
    /// The server answered the upgrade with another refusal.
    #[error("{address} refused the WebSocket upgrade: HTTP {status}")]
    UpgradeRefused {
        /// Where.
        address: String,
        /// The status and its reason phrase.
        status: String,
    },
    /// The WebSocket upgrade failed otherwise.
    #[error("the WebSocket upgrade with {address} failed")]
    Handshake {
        /// Where.
        address: String,
        /// Why.
        #[source]
        source: Box<tokio_tungstenite::tungstenite::Error>,
    },
    /// The TLS handshake failed (an untrusted certificate, a wrong name, ...).
    #[error("the TLS handshake with {address} failed")]
    Tls {
        /// Where.
        address: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// `--ca-cert` can't be used.
    #[error("cannot use the CA certificate {}: {reason}", path.display())]
    CaCert {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        reason: String,
    },
    /// No `--ca-cert`, and the system has no root certificates.
    #[error("no system root certificates were found; give --ca-cert PEM")]
    NoSystemRoots,
    /// A TLS client could not be configured.
    #[error("cannot set up TLS: {0}")]
    TlsSetup(String),
    /// The host is not a name a certificate can be checked against.
    #[error("`{0}` is not a valid server name for TLS")]
    BadServerName(String),
    /// The async runtime could not be started.
    #[error("cannot start the async runtime")]
    Runtime(#[source] io::Error),
    /// No place for the spawned server's log could be made.
    #[error("cannot keep the server's log")]
    Log(#[source] io::Error),
    /// Starting, talking to or waiting for the server failed.
    #[error(transparent)]
    Client(#[from] ClientError),
}

/// The server process to spawn: a program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCommand {
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
}

impl ServerCommand {
    /// `--server-cmd` split like a POSIX shell would, else `<this program> serve
    /// --spare-environments 0 --allow-cwd <here>`; either way followed by the server options
    /// the client was given.
    pub fn from_args(client: &ClientArgs) -> Result<Self, TransportError> {
        let (program, mut args): (OsString, Vec<OsString>) = match &client.server_cmd {
            Some(line) => {
                let words =
                    shlex::split(line).ok_or_else(|| TransportError::BadServerCmd(line.clone()))?;
                let mut words = words.into_iter().map(OsString::from);
                let program = words.next().ok_or(TransportError::EmptyServerCmd)?;
                (program, words.collect())
            }
            None => {
                let exe = std::env::current_exe().map_err(TransportError::CurrentExe)?;
                // A server for one command makes no spare environment: none would be taken,
                // and its exit would wait for the one being made (`uv venv`, ~20 ms).
                let mut args = vec!["serve".into(), "--spare-environments".into(), "0".into()];
                // Commands may run where the user is, as `uv run` does (see `wsp exec`).
                if let Ok(here) = std::env::current_dir() {
                    args.extend(["--allow-cwd".into(), here.into_os_string()]);
                }
                (exe.into_os_string(), args)
            }
        };
        args.extend(client.server.to_serve_flags());
        Ok(ServerCommand { program, args })
    }

    /// Starts the server, its log quiet unless `WSP_LOG` or `RUST_LOG` says otherwise, and
    /// kept aside unless `live` (then it goes to this program's stderr as it comes).
    pub fn spawn(&self, live: bool) -> Result<(ProcessClient, ServerLog), TransportError> {
        let mut command = Command::new(&self.program);
        // A process group of its own: Ctrl-C reaches the client alone, which cancels what it
        // asked for; the server then drains at the client's EOF.
        command.args(&self.args).process_group(0);
        if std::env::var_os("WSP_LOG").is_none() && std::env::var_os("RUST_LOG").is_none() {
            command.env("WSP_LOG", QUIET_LOG_FILTER);
        }
        let log = if live {
            ServerLog(None)
        } else {
            let file = ServerLog::file().map_err(TransportError::Log)?;
            command.stderr(file.try_clone().map_err(TransportError::Log)?);
            ServerLog(Some(file))
        };
        Ok((ProcessClient::spawn(command)?, log))
    }
}

/// What the spawned server wrote to its stderr, kept in memory (a memfd) so that the user's
/// terminal shows it only when the command failed.
pub struct ServerLog(Option<File>);

/// The most of the log [`ServerLog::show`] prints: its end, where the failure is.
const SHOWN_LOG_BYTES: u64 = 64 * 1024;

impl ServerLog {
    fn file() -> io::Result<File> {
        let fd = rustix::fs::memfd_create("wsp-server-log", rustix::fs::MemfdFlags::CLOEXEC)?;
        Ok(File::from(fd))
    }

    /// Prints the end of the log to stderr (nothing when it was shown live or is empty).
    pub fn show(self) {
        let Some(mut file) = self.0 else { return };
        let mut text = Vec::new();
        let read = file.seek(SeekFrom::End(0)).and_then(|size| {
            file.seek(SeekFrom::Start(size.saturating_sub(SHOWN_LOG_BYTES)))?;
            file.read_to_end(&mut text)
        });
        if read.is_ok() && !text.is_empty() {
            let mut stderr = io::stderr().lock();
            let _ = stderr.write_all(b"wsp: the server's log:\n");
            let _ = stderr.write_all(&text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client_args(server_cmd: Option<&str>) -> ClientArgs {
        ClientArgs {
            server_cmd: server_cmd.map(str::to_owned),
            ..ClientArgs::default()
        }
    }

    #[test]
    fn server_cmd_is_split_like_a_shell() {
        let mut args = client_args(Some("'/opt/my wsp' serve --backend \"uv\""));
        args.server.state_dir = Some("/state".into());
        let command = ServerCommand::from_args(&args).unwrap();
        assert_eq!(command.program, "/opt/my wsp");
        assert_eq!(
            command.args,
            ["serve", "--backend", "uv", "--state-dir", "/state"]
        );
    }

    #[test]
    fn bad_server_cmds_are_refused() {
        assert!(matches!(
            ServerCommand::from_args(&client_args(Some("wsp 'serve"))),
            Err(TransportError::BadServerCmd(_))
        ));
        assert!(matches!(
            ServerCommand::from_args(&client_args(Some("   "))),
            Err(TransportError::EmptyServerCmd)
        ));
    }

    #[test]
    fn default_server_is_this_program_serving_here() {
        let command = ServerCommand::from_args(&client_args(None)).unwrap();
        let here = std::env::current_dir().unwrap().into_os_string();
        let expected = ["serve", "--spare-environments", "0", "--allow-cwd"];
        let mut expected: Vec<OsString> = expected.into_iter().map(OsString::from).collect();
        expected.push(here);
        assert_eq!(command.args, expected);
    }
}
