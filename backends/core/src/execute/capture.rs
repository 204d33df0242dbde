//! Capturing a child's output pipe: up to a byte limit, optionally streamed as it arrives.

use std::io;
use std::time::Duration;

use bytes::BufMut;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{mpsc, watch};
use wsp_protocol::results::OutputStream;

use super::utf8::{incomplete_tail, Utf8Chunks};
use super::OutputChunk;

/// The most read from a pipe at once (a Linux pipe holds 64 KiB).
const READ_CHUNK: usize = 64 * 1024;

/// What was kept of one stream.
#[derive(Debug, Default)]
pub(super) struct Captured {
    /// At most the limit's worth of bytes, never ending inside a character that was cut.
    pub(super) bytes: Vec<u8>,
    /// Whether bytes past the limit were read and discarded.
    pub(super) truncated: bool,
}

/// One stream to capture.
pub(super) struct Capture<R> {
    pub(super) pipe: Option<R>,
    pub(super) stream: OutputStream,
    /// The most bytes kept (and streamed); everything past it is read and discarded.
    pub(super) limit: usize,
    /// Where chunks go as they arrive; a full channel holds the reading back (and with it the
    /// child), so memory stays bounded however much is written.
    pub(super) sink: Option<mpsc::Sender<OutputChunk>>,
}

impl<R: AsyncRead + Unpin> Capture<R> {
    /// Reads the pipe to its end, or until `grace` after `exited` turned true, whichever comes
    /// first.
    ///
    /// The grace period bounds the wait for a writer outside the killed containment that
    /// still holds the pipe open.
    pub(super) async fn read(
        self,
        mut exited: watch::Receiver<bool>,
        grace: Duration,
    ) -> io::Result<Captured> {
        let Capture {
            pipe,
            stream,
            limit,
            mut sink,
        } = self;
        let mut captured = Captured::default();
        let Some(mut pipe) = pipe else {
            return Ok(captured);
        };
        let deadline = async move {
            // A dropped sender means the run is over as well.
            let _ = exited.wait_for(|exited| *exited).await;
            tokio::time::sleep(grace).await;
        };
        tokio::pin!(deadline);
        let mut decoder = Utf8Chunks::default();
        // Bytes past the limit are read into this, and dropped.
        let mut discard: Vec<u8> = Vec::new();
        loop {
            let start = captured.bytes.len();
            let room = limit - start;
            let reading = async {
                if room == 0 {
                    discard.resize(READ_CHUNK, 0);
                    pipe.read(&mut discard).await
                } else {
                    reserve(&mut captured.bytes, room.min(READ_CHUNK), limit);
                    pipe.read_buf(&mut (&mut captured.bytes).limit(room)).await
                }
            };
            let read = tokio::select! {
                biased;
                read = reading => read?,
                () = &mut deadline => 0,
            };
            if read == 0 {
                break;
            }
            if room == 0 {
                captured.truncated = true;
            }
            if let Some(sender) = &sink {
                let mut text = decoder.push(&captured.bytes[start..]);
                if captured.truncated {
                    // The character the limit cut is not kept, so it is not streamed either.
                    decoder.drop_pending();
                    text.clear();
                }
                if !text.is_empty()
                    && sender
                        .send(OutputChunk { stream, data: text })
                        .await
                        .is_err()
                {
                    // Nobody listens any more; the output is still captured.
                    sink = None;
                }
            }
        }
        if let Some(sender) = &sink {
            let rest = decoder.finish();
            if !rest.is_empty() {
                let _ = sender.send(OutputChunk { stream, data: rest }).await;
            }
        }
        if captured.truncated {
            let cut = incomplete_tail(&captured.bytes);
            captured.bytes.truncate(captured.bytes.len() - cut);
        }
        Ok(captured)
    }
}

/// Makes room for at least `wanted` more bytes, growing by doubling but never past `limit`.
fn reserve(buffer: &mut Vec<u8>, wanted: usize, limit: usize) {
    if buffer.capacity() - buffer.len() < wanted {
        let target = (buffer.capacity() * 2).max(buffer.len() + wanted);
        buffer.reserve_exact(target.min(limit) - buffer.len());
    }
}
