//! Why talking to a server failed.

use std::io;

use crate::codec::DecodeError;

/// Why a [`Client`](super::Client) could not start, talk to or wait for its server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server process could not be started.
    #[error("cannot start the server `{program}`")]
    Spawn {
        /// The program that was run.
        program: String,
        /// Why it failed.
        #[source]
        source: io::Error,
    },
    /// Writing to the server's input failed.
    #[error("cannot write to the server")]
    Write(#[source] io::Error),
    /// Reading the server's output failed.
    #[error("cannot read from the server")]
    Read(#[source] io::Error),
    /// The server wrote bytes that are not a well-formed frame.
    #[error("the server sent an undecodable frame")]
    Undecodable(#[source] DecodeError),
    /// The server wrote a frame whose payload is not JSON.
    #[error("the server sent a message that is not JSON")]
    NotJson(#[source] serde_json::Error),
    /// The server wrote a JSON message that is neither a response nor a notification.
    #[error("the server sent an unexpected message: {0}")]
    NotAResponse(String),
    /// The server closed its output before answering.
    #[error("the server closed its output before answering ({ended})")]
    Closed {
        /// How the server ended, in words.
        ended: String,
    },
    /// The server answered a message of ours with an error it could not attach to an id.
    #[error("the server could not read a request: error {code}: {message}")]
    Rejected {
        /// The JSON-RPC error code.
        code: i32,
        /// The error message.
        message: String,
    },
    /// The server answered the request with a JSON-RPC error.
    #[error("the server answered error {}: {}", .0.code(), .0.message())]
    Rpc(wsp_protocol::ErrorObjectOwned),
    /// The params could not be serialized, or the result is not what the method returns.
    #[error("the `{method}` {part} has the wrong shape")]
    WrongShape {
        /// The method.
        method: &'static str,
        /// `params` or `result`.
        part: &'static str,
        /// How it differs.
        #[source]
        source: serde_json::Error,
    },
    /// A response was asked for a request this client has no answer pending for.
    #[error("no request with id {0} is waiting for its response")]
    NotPending(i64),
    /// Waiting for the server process, or stopping it, failed.
    #[error("cannot wait for the server process")]
    Wait(#[source] io::Error),
    /// The in-process server's task panicked or was stopped (`None` when that was reported
    /// already).
    #[error("the server task panicked or was stopped")]
    ServerTask(#[source] Option<tokio::task::JoinError>),
}
