//! An in-memory connection: a server end and the client's byte stream, in one process.

use tokio::io::{DuplexStream, ReadHalf, WriteHalf};

use super::ByteStream;

/// The server's end of an in-memory pair, `Content-Length` framed.
pub type DuplexConnection = ByteStream<ReadHalf<DuplexStream>, WriteHalf<DuplexStream>>;

/// A connected pair: the server's end, and the client's byte stream. Each direction buffers
/// at most `capacity` bytes.
pub fn duplex(capacity: usize) -> (DuplexConnection, DuplexStream) {
    let (client, server) = tokio::io::duplex(capacity);
    let (reader, writer) = tokio::io::split(server);
    (ByteStream::new(reader, writer), client)
}
