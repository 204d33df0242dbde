//! [`FairRead`]: input that lets the session's running requests take their turn while a large
//! frame streams in.
//!
//! The runtime polls the requests it runs between frames, and a frame's reader loops until the
//! frame is whole. A client that keeps the pipe full of 60 MiB frames would so be read for as
//! long as it writes, while every request already started waits for its next poll: an
//! `environment/execute` feeding its own 60 MiB of `stdin` to a command writes one pipe's worth
//! per poll, so requests would pile up, each holding its input, faster than they finish.
//! [`FairRead`] ends the read after [`FAIR_READ_BYTES`] in a row (it wakes its task at once), so
//! the session polls what runs between any two such stretches.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::io::{AsyncRead, ReadBuf};

/// The bytes [`FairRead`] reads in a row before it lets the rest of the session run: a pipe's
/// capacity, so reading keeps pace with a command fed through one.
pub const FAIR_READ_BYTES: usize = 64 * 1024;

/// A reader that returns `Pending` (and wakes its task) once it read [`FAIR_READ_BYTES`] without
/// a `Pending` of its own.
#[derive(Debug)]
pub struct FairRead<R> {
    inner: R,
    in_a_row: usize,
    last_read: Option<Instant>,
}

impl<R> FairRead<R> {
    /// Wraps `inner`.
    pub fn new(inner: R) -> Self {
        FairRead {
            inner,
            in_a_row: 0,
            last_read: None,
        }
    }

    /// The wrapped reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// An instant taken after the last read that brought bytes had returned.
    pub fn last_read(&self) -> Option<Instant> {
        self.last_read
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for FairRead<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.in_a_row >= FAIR_READ_BYTES {
            this.in_a_row = 0;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Pending => {
                this.in_a_row = 0;
                Poll::Pending
            }
            Poll::Ready(result) => {
                let read = buf.filled().len() - before;
                if read > 0 {
                    this.in_a_row += read;
                    this.last_read = Some(Instant::now());
                }
                Poll::Ready(result)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn it_yields_between_stretches_and_loses_nothing() {
        let data: Vec<u8> = (0..5 * FAIR_READ_BYTES).map(|i| i as u8).collect();
        let mut reader = FairRead::new(&data[..]);
        let mut yields = 0;
        let mut read = Vec::new();
        let mut chunk = vec![0; FAIR_READ_BYTES / 2];
        loop {
            let mut buf = ReadBuf::new(&mut chunk);
            let poll = futures::poll!(std::future::poll_fn(|cx| {
                Pin::new(&mut reader).poll_read(cx, &mut buf)
            }));
            match poll {
                Poll::Pending => yields += 1,
                Poll::Ready(result) => {
                    result.expect("read");
                    if buf.filled().is_empty() {
                        break;
                    }
                    read.extend_from_slice(buf.filled());
                }
            }
        }
        assert_eq!(read, data);
        assert_eq!(yields, 5);
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).await.expect("read");
        assert!(rest.is_empty());
    }
}
