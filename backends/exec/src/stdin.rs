//! What the child reads: the null device, a text written and then closed, or a stream of
//! chunks written as they come (through a pipe, or a pseudo-terminal's input).

use bytes::Bytes;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch};

use super::pty::PtyResizer;
use super::PIPE_GRACE;
use wsp_protocol::interactive::PtySize;

/// Where the child's input goes.
pub(crate) type InputWriter = Box<dyn AsyncWrite + Unpin + Send>;

/// What is written to the child's input.
pub(crate) enum Input {
    /// All of it at once, then the end.
    Text(Bytes),
    /// Each chunk as it arrives; the channel's end is the input's.
    Stream(mpsc::Receiver<Bytes>),
}

/// Writes `input` to `writer`, then ends the input: closes a pipe, or writes `end` (a
/// terminal's end-of-file character). A child that exits without reading it all ends the
/// writing (a broken pipe is not an error); so does the grace after the exit, for a reader
/// outside the containment that never reads. A stream stops at the exit: nobody reads it. On a
/// terminal, each chunk is written after the sizes sent before it are applied.
pub(crate) async fn feed(
    writer: Option<InputWriter>,
    input: Option<Input>,
    end: &[u8],
    mut terminal: Option<(PtyResizer, watch::Receiver<PtySize>)>,
    mut exited: watch::Receiver<bool>,
) {
    let (Some(mut writer), Some(input)) = (writer, input) else {
        return;
    };
    let grace = match input {
        Input::Text(_) => PIPE_GRACE,
        Input::Stream(_) => std::time::Duration::ZERO,
    };
    let deadline = async move {
        let _ = exited.wait_for(|exited| *exited).await;
        tokio::time::sleep(grace).await;
    };
    let write = async {
        match input {
            Input::Text(text) => writer.write_all(&text).await?,
            Input::Stream(mut chunks) => {
                while let Some(chunk) = chunks.recv().await {
                    if let Some((resizer, sizes)) = terminal.as_mut() {
                        resizer.catch_up(sizes);
                    }
                    writer.write_all(&chunk).await?;
                }
            }
        }
        if !end.is_empty() {
            writer.write_all(end).await?;
        }
        writer.shutdown().await
    };
    tokio::select! {
        written = write => {
            if let Err(error) = written {
                tracing::debug!(%error, "the command's stdin closed before its input ended");
            }
        }
        () = deadline => {}
    }
}
