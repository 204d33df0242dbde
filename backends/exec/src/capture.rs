//! Capturing a child's output pipe: up to a limit on its size in the answer, optionally
//! streamed as it arrives.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{mpsc, watch};
use wsp_protocol::results::OutputStream;

use super::utf8::BoundedText;
use super::OutputChunk;

/// The most read from a pipe at once (a Linux pipe holds 64 KiB).
const READ_CHUNK: usize = 64 * 1024;

/// What was kept of one stream.
#[derive(Debug, Default)]
pub(super) struct Captured {
    /// The output decoded as UTF-8 with replacement characters, whole characters only, at
    /// most the limit's worth of bytes once encoded as a JSON string.
    pub(super) text: String,
    /// Whether output past the limit was read and discarded.
    pub(super) truncated: bool,
}

/// One stream to capture.
pub(super) struct Capture<R> {
    pub(super) pipe: Option<R>,
    pub(super) stream: OutputStream,
    /// The most bytes the kept text takes encoded as a JSON string (escapes included, the
    /// quotes not); everything past it is read and discarded.
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
        let Some(mut pipe) = pipe else {
            return Ok(Captured::default());
        };
        let deadline = async move {
            // A dropped sender means the run is over as well.
            let _ = exited.wait_for(|exited| *exited).await;
            tokio::time::sleep(grace).await;
        };
        tokio::pin!(deadline);
        let mut text = BoundedText::new(limit);
        // Each read lands here; what is kept of it is decoded into `text`.
        let mut chunk: Vec<u8> = Vec::with_capacity(READ_CHUNK);
        loop {
            chunk.clear();
            let read = tokio::select! {
                biased;
                read = pipe.read_buf(&mut chunk) => read?,
                () = &mut deadline => 0,
            };
            if read == 0 {
                break;
            }
            let start = text.push(&chunk);
            if let Some(sender) = &sink {
                if !send(sender, stream, &text.as_str()[start..]).await {
                    // Nobody listens any more; the output is still captured.
                    sink = None;
                }
            }
        }
        let start = text.finish();
        if let Some(sender) = &sink {
            send(sender, stream, &text.as_str()[start..]).await;
        }
        Ok(Captured {
            truncated: text.truncated(),
            text: text.into_string(),
        })
    }
}

/// Streams `data` unless it is empty; whether the receiver still listens.
async fn send(sender: &mpsc::Sender<OutputChunk>, stream: OutputStream, data: &str) -> bool {
    if data.is_empty() {
        return true;
    }
    let chunk = OutputChunk {
        stream,
        data: data.to_owned(),
    };
    sender.send(chunk).await.is_ok()
}
