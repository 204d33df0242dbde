//! A server process the client spawned, over its stdin and stdout.

use std::io;
use std::process::{ExitStatus, Stdio};

use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::{Client, ClientError, Peer};

/// A client of a server process it spawned ([`Client::spawn`]).
pub type ProcessClient = Client<ChildStdout, ChildStdin, ServerProcess>;

/// A spawned server process; it is killed if the client is dropped before it exits.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
}

impl Peer for ServerProcess {
    type Exit = ExitStatus;

    async fn wait(&mut self) -> Result<ExitStatus, ClientError> {
        self.child.wait().await.map_err(ClientError::Wait)
    }

    fn kill(&mut self) -> Result<(), ClientError> {
        self.child.start_kill().map_err(ClientError::Wait)
    }

    fn terminate(&mut self) -> Result<(), ClientError> {
        let Some(pid) = self
            .child
            .id()
            .and_then(|id| rustix::process::Pid::from_raw(id as i32))
        else {
            return Ok(());
        };
        rustix::process::kill_process(pid, rustix::process::Signal::TERM)
            .map_err(|errno| ClientError::Wait(errno.into()))
    }

    fn describe(status: &ExitStatus) -> String {
        describe_status(*status)
    }
}

impl Client<ChildStdout, ChildStdin, ServerProcess> {
    /// Starts `command` with its stdin and stdout piped to the client. Its stderr is left as the
    /// command has it (inherited unless set), so the server's log shows where the client's does.
    pub fn spawn(command: impl Into<Command>) -> Result<Self, ClientError> {
        let mut command = command.into();
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        let spawned = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(source) => return Err(ClientError::Spawn { program, source }),
        };
        match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => Ok(Client::new(stdout, stdin, ServerProcess { child })),
            _ => Err(ClientError::Spawn {
                program,
                source: io::Error::other("its stdio pipes are missing"),
            }),
        }
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
