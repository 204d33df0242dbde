//! The server a client command spawns, and why talking to it failed.
//!
//! [`ServerCommand::spawn`] starts it (stdin and stdout piped, stderr inherited so its warnings
//! show; see [`QUIET_LOG_FILTER`]) as a [`ProcessClient`], the framework's client of a server
//! process.

use std::ffi::OsString;
use std::io;

use tokio::process::Command;
use wsp_server::client::{ClientError, ProcessClient};

use super::args::ClientArgs;

/// The log filter a spawned server gets unless `WSP_LOG` or `RUST_LOG` is set: its warnings and
/// errors show on the client's stderr, its per-request chatter does not.
pub const QUIET_LOG_FILTER: &str = "warn";

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
    /// `--server-cmd` split like a POSIX shell would, else `<this program> serve`; either way
    /// followed by the server options the client was given.
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
                (exe.into_os_string(), vec!["serve".into()])
            }
        };
        args.extend(client.server.to_serve_flags());
        Ok(ServerCommand { program, args })
    }

    /// Starts the server, its log quiet unless `WSP_LOG` or `RUST_LOG` says otherwise.
    pub fn spawn(&self) -> Result<ProcessClient, TransportError> {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if std::env::var_os("WSP_LOG").is_none() && std::env::var_os("RUST_LOG").is_none() {
            command.env("WSP_LOG", QUIET_LOG_FILTER);
        }
        Ok(ProcessClient::spawn(command)?)
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
    fn default_server_is_this_program_serving() {
        let command = ServerCommand::from_args(&client_args(None)).unwrap();
        assert_eq!(command.args, ["serve"]);
    }
}
