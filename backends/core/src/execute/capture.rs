//! Capturing a child's output pipe.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

/// The smallest free space offered to each read.
const READ_CHUNK: usize = 16 * 1024;

/// Reads `pipe` to its end, or until `grace` after `exited` turned true, whichever comes
/// first; returns the bytes read.
///
/// The grace period bounds the wait for a writer that is not part of the killed process group
/// and still holds the pipe open.
pub(super) async fn read_all<R: AsyncRead + Unpin>(
    pipe: Option<R>,
    mut exited: watch::Receiver<bool>,
    grace: Duration,
) -> io::Result<Vec<u8>> {
    let mut buffer = Vec::new();
    let Some(mut pipe) = pipe else {
        return Ok(buffer);
    };
    let deadline = async move {
        // A dropped sender means the run is over as well.
        let _ = exited.wait_for(|exited| *exited).await;
        tokio::time::sleep(grace).await;
    };
    tokio::pin!(deadline);
    loop {
        buffer.reserve(READ_CHUNK);
        tokio::select! {
            biased;
            read = pipe.read_buf(&mut buffer) => {
                if read? == 0 {
                    return Ok(buffer);
                }
            }
            () = &mut deadline => return Ok(buffer),
        }
    }
}
