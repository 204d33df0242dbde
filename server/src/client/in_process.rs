//! A [`Server`] on this runtime, at the other end of an in-memory pipe.

use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;

use super::{Client, ClientError, Peer};
use crate::Server;

/// How many bytes the in-memory pipe holds each way before a writer waits.
const PIPE_CAPACITY: usize = 1 << 20;

/// The task running an in-process server; it ends with the server's exit status.
pub struct ServerTask {
    state: TaskState,
}

enum TaskState {
    Running(JoinHandle<i32>),
    Exited(i32),
    Failed,
}

impl Peer for ServerTask {
    type Exit = i32;

    async fn wait(&mut self) -> Result<i32, ClientError> {
        let TaskState::Running(handle) = &mut self.state else {
            return match self.state {
                TaskState::Exited(status) => Ok(status),
                _ => Err(ClientError::ServerTask(None)),
            };
        };
        let joined = handle.await;
        self.state = match &joined {
            Ok(status) => TaskState::Exited(*status),
            Err(_) => TaskState::Failed,
        };
        joined.map_err(|error| ClientError::ServerTask(Some(error)))
    }

    fn kill(&mut self) -> Result<(), ClientError> {
        if let TaskState::Running(handle) = &self.state {
            handle.abort();
        }
        Ok(())
    }

    fn describe(status: &i32) -> String {
        format!("exit status {status}")
    }
}

impl Client<ReadHalf<DuplexStream>, WriteHalf<DuplexStream>, ServerTask> {
    /// Starts `server` on this runtime and connects to it; does not initialize.
    pub fn connect(server: Server) -> Self {
        let (client_side, server_side) = tokio::io::duplex(PIPE_CAPACITY);
        let (server_read, server_write) = tokio::io::split(server_side);
        let task = tokio::spawn(server.serve(server_read, server_write));
        let (read, write) = tokio::io::split(client_side);
        let peer = ServerTask {
            state: TaskState::Running(task),
        };
        Client::new(read, write, peer)
    }

    /// Starts `server`, connects and initializes as `wsp-conformance`.
    ///
    /// # Panics
    /// If `initialize` fails.
    pub async fn initialized(server: Server) -> Self {
        let mut client = Client::connect(server);
        match client.initialize("wsp-conformance").await {
            Ok(response) if response.outcome.is_ok() => client,
            other => panic!("initialize failed: {other:?}"),
        }
    }
}
