//! A WSP client over the pipes of a server process it spawned.
//!
//! [`Client::spawn`] starts the server (stdin and stdout piped, stderr inherited so its warnings
//! show; see [`QUIET_LOG_FILTER`]), [`Client::request`] writes one framed request and reads frames
//! until the response with the same id arrives, and [`Client::finish`] ends the session the
//! documented way: it closes the server's stdin (the EOF drain) and waits for the process to exit.
//! No `shutdown`/`exit` is sent.

use std::ffi::OsString;
use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio_util::codec::{FramedRead, FramedWrite};
use wsp_protocol::{Id, Response};

use super::args::ClientArgs;
use wsp_server::codec::{DecodeError, Frame, FrameCodec};

/// How long [`Client::finish`] waits for the server to exit after its stdin is closed.
pub const EXIT_GRACE: Duration = Duration::from_secs(10);

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
    #[error("cannot find this program's path to run `wsp serve`: {0}")]
    CurrentExe(#[source] io::Error),
    /// The server process could not be started.
    #[error("cannot start the server `{program}`: {source}")]
    Spawn {
        /// The program that was run.
        program: String,
        /// Why it failed.
        #[source]
        source: io::Error,
    },
    /// Writing to the server's stdin failed.
    #[error("cannot write to the server: {0}")]
    Write(#[source] io::Error),
    /// Reading the server's stdout failed.
    #[error("cannot read from the server: {0}")]
    Read(#[source] io::Error),
    /// The server wrote bytes that are not a well-formed frame.
    #[error("the server sent an undecodable frame: {0}")]
    Undecodable(DecodeError),
    /// The server wrote a frame that is not a JSON-RPC response, or a result of the wrong shape.
    #[error("the server sent an unexpected message: {0}")]
    BadResponse(String),
    /// The server closed its stdout before answering.
    #[error("the server closed its output before answering ({0})")]
    Closed(String),
    /// The server answered a message of ours with an error it could not attach to an id.
    #[error("the server could not read a request: error {code}: {message}")]
    Rejected {
        /// The JSON-RPC error code.
        code: i32,
        /// The error message.
        message: String,
    },
    /// The async runtime could not be started.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] io::Error),
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
}

/// A session with a spawned server.
#[derive(Debug)]
pub struct Client {
    child: Child,
    writer: Option<FramedWrite<ChildStdin, FrameCodec>>,
    reader: FramedRead<ChildStdout, FrameCodec>,
    next_id: i64,
}

impl Client {
    /// Starts the server with piped stdin/stdout and inherited stderr.
    pub fn spawn(command: &ServerCommand) -> Result<Client, TransportError> {
        let spawn_error = |source| TransportError::Spawn {
            program: command.program.to_string_lossy().into_owned(),
            source,
        };
        let mut process = Command::new(&command.program);
        if std::env::var_os("WSP_LOG").is_none() && std::env::var_os("RUST_LOG").is_none() {
            process.env("WSP_LOG", QUIET_LOG_FILTER);
        }
        let mut child = process
            .args(&command.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(spawn_error)?;
        let missing = || spawn_error(io::Error::other("its stdio pipes are missing"));
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        Ok(Client {
            child,
            writer: Some(FramedWrite::new(stdin, FrameCodec::new())),
            reader: FramedRead::new(stdout, FrameCodec::new()),
            next_id: 1,
        })
    }

    /// Sends `initialize` as `wsp-cli` speaking protocol 0.1.0 and returns the server's answer.
    pub async fn initialize(&mut self) -> Result<Response, TransportError> {
        let params = json!({
            "client_name": "wsp-cli",
            "client_protocol_version": wsp_protocol::PROTOCOL_VERSION,
        });
        self.request(wsp_protocol::methods::INITIALIZE, Some(params))
            .await
    }

    /// Sends one request and waits for its response; responses to other ids and notifications
    /// are skipped.
    pub async fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Response, TransportError> {
        self.request_with(method, params, |_| {}).await
    }

    /// Sends one request and waits for its response, handing each notification the server
    /// sends meanwhile (`environment/output`, `$/progress`, …) to `on_notification`, in order.
    pub async fn request_with(
        &mut self,
        method: &str,
        params: Option<Value>,
        mut on_notification: impl FnMut(ServerNotification),
    ) -> Result<Response, TransportError> {
        let id = Id::from(self.next_id);
        self.next_id += 1;
        let mut message = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if let (Some(params), Value::Object(map)) = (params, &mut message) {
            map.insert("params".into(), params);
        }
        let writer = match self.writer.as_mut() {
            Some(writer) => writer,
            None => return Err(TransportError::Write(io::ErrorKind::BrokenPipe.into())),
        };
        if let Err(error) = writer.send(message.to_string()).await {
            return Err(match error.kind() {
                io::ErrorKind::BrokenPipe => self.closed().await,
                _ => TransportError::Write(error),
            });
        }
        loop {
            let payload = match self.reader.next().await {
                Some(Ok(Frame::Payload(payload))) => payload,
                Some(Ok(Frame::Invalid(error))) => return Err(TransportError::Undecodable(error)),
                Some(Err(error)) => return Err(TransportError::Read(error)),
                None => return Err(self.closed().await),
            };
            let value: Value = serde_json::from_str(&payload)
                .map_err(|e| TransportError::BadResponse(format!("not JSON ({e})")))?;
            if let Some(notification) = ServerNotification::from_value(&value) {
                on_notification(notification);
                continue;
            }
            let response = Response::from_value(value).map_err(TransportError::BadResponse)?;
            if response.id == id {
                return Ok(response);
            }
            if let (Id::Null, Err(error)) = (&response.id, &response.outcome) {
                return Err(TransportError::Rejected {
                    code: error.code(),
                    message: error.message().to_owned(),
                });
            }
            eprintln!(
                "wsp: ignoring a response to id {} (waiting for {id})",
                response.id
            );
        }
    }

    /// Closes the server's stdin, skips anything it still writes, and waits for it to exit
    /// (killing it if it has not exited [`EXIT_GRACE`] after that).
    pub async fn finish(mut self) -> io::Result<ExitStatus> {
        self.writer = None;
        let drain_and_wait = async {
            while self.reader.next().await.is_some() {}
            self.child.wait().await
        };
        match tokio::time::timeout(EXIT_GRACE, drain_and_wait).await {
            Ok(status) => status,
            Err(_) => {
                self.child.start_kill()?;
                self.child.wait().await
            }
        }
    }

    /// The error for a server that stopped listening or talking: closes our end of its stdin and
    /// reports how it exited, if it did within [`EXIT_GRACE`].
    async fn closed(&mut self) -> TransportError {
        self.writer = None;
        match tokio::time::timeout(EXIT_GRACE, self.child.wait()).await {
            Ok(Ok(status)) => TransportError::Closed(describe_status(status)),
            Ok(Err(error)) => TransportError::Closed(format!("its status is unknown: {error}")),
            Err(_) => TransportError::Closed("it is still running".into()),
        }
    }
}

/// A notification from the server: a message with a `method` and no `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerNotification {
    /// Its method.
    pub method: String,
    /// Its params (`null` when absent).
    pub params: Value,
}

impl ServerNotification {
    fn from_value(value: &Value) -> Option<ServerNotification> {
        let object = value.as_object()?;
        if object.contains_key("id") {
            return None;
        }
        Some(ServerNotification {
            method: object.get("method")?.as_str()?.to_owned(),
            params: object.get("params").cloned().unwrap_or(Value::Null),
        })
    }
}

/// `exit status N` or `killed by signal N`.
pub fn describe_status(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => "no exit status".into(),
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
