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
