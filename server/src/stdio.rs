//! stdin and stdout on the reactor, not on the blocking pool.
//!
//! `tokio::io::stdin()` and `stdout()` run every read and write on tokio's blocking thread
//! pool: each one is a hand-off to another thread and back. When stdin and stdout are pipes
//! or sockets, which is how clients spawn a server, [`stdin`] and [`stdout`] instead switch
//! them to non-blocking mode and register them with the reactor (`AsyncFd`), so reads and
//! writes are plain system calls on the serving thread. The original file status flags are put
//! back when the handle is dropped.
//!
//! Anything else falls back to tokio's own handles: a regular file or a terminal (which can't
//! be registered with epoll, or is shared with the shell), and a stdout that is the same pipe
//! as stderr (non-blocking mode would then reach the log writer too).

use std::future::Future;
use std::io;
use std::os::fd::AsFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use rustix::fs::fstat;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub use crate::non_blocking::{EarlyReads, NonBlocking};
use crate::runtime::FrameSource;

/// The server's stdin.
pub enum Stdin {
    /// A pipe or socket on the reactor.
    Reactor(NonBlocking),
    /// tokio's stdin, on the blocking pool.
    Pool(tokio::io::Stdin),
}

/// The server's stdout.
pub enum Stdout {
    /// A pipe or socket on the reactor.
    Reactor(NonBlocking),
    /// tokio's stdout, on the blocking pool.
    Pool(tokio::io::Stdout),
}

/// This process's stdin, on the reactor when it can be. Must be called inside a tokio runtime.
pub fn stdin() -> Stdin {
    match NonBlocking::duplicate(io::stdin(), EarlyReads::Always) {
        Some(handle) => Stdin::Reactor(handle),
        None => Stdin::Pool(tokio::io::stdin()),
    }
}

/// This process's stdout, on the reactor when it can be. Must be called inside a tokio
/// runtime.
pub fn stdout() -> Stdout {
    let shared_with_stderr = same_file(&io::stdout(), &io::stderr());
    match (!shared_with_stderr).then(|| NonBlocking::duplicate(io::stdout(), EarlyReads::Never)) {
        Some(Some(handle)) => Stdout::Reactor(handle),
        _ => Stdout::Pool(tokio::io::stdout()),
    }
}

impl Stdin {
    /// Whether reads go through the reactor.
    pub fn is_reactor(&self) -> bool {
        matches!(self, Stdin::Reactor(_))
    }
}

impl Stdout {
    /// Whether writes go through the reactor.
    pub fn is_reactor(&self) -> bool {
        matches!(self, Stdout::Reactor(_))
    }

    /// Whether the client has read everything written (see [`NonBlocking::is_drained`]).
    /// Never for a stdout off the reactor (not asked).
    pub fn is_drained(&self) -> bool {
        match self {
            Stdout::Reactor(handle) => handle.is_drained(),
            Stdout::Pool(_) => false,
        }
    }
}

/// Resolves at the first `SIGTERM` or `SIGINT`; never, if the handlers can't be installed.
pub async fn termination() {
    use tokio::signal::unix::{signal, SignalKind};
    let (terminate, interrupt) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    );
    let (Ok(mut terminate), Ok(mut interrupt)) = (terminate, interrupt) else {
        tracing::warn!("termination signals can't be watched; only EOF and exit end the session");
        return std::future::pending().await;
    };
    let name = tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = interrupt.recv() => "SIGINT",
    };
    tracing::info!(
        signal = name,
        "termination signal: ending the input, draining"
    );
}

/// How many frames [`UntilTerminated`] reads between two looks at the signals.
const FRAMES_PER_SIGNAL_CHECK: u32 = 64;

/// A frame source that ends at the first `SIGTERM` or `SIGINT` (see [`termination`]).
///
/// The signals are looked at on the first read, whenever the input has nothing more to give,
/// and every 64 frames in between, rather than before every frame as
/// `StreamExt::take_until` does: looking at two signals costs more than decoding a frame.
pub struct UntilTerminated<S> {
    input: S,
    /// `None` once a signal came.
    signal: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    frames_unchecked: u32,
}

impl<S> UntilTerminated<S> {
    /// `input` until the first termination signal.
    pub fn new(input: S) -> Self {
        UntilTerminated::until(input, termination())
    }

    /// `input` until `stop` completes (a listener's shutdown, say), looked at as often as the
    /// signals are.
    pub fn until(input: S, stop: impl Future<Output = ()> + Send + 'static) -> Self {
        UntilTerminated {
            input,
            signal: Some(Box::pin(stop)),
            frames_unchecked: FRAMES_PER_SIGNAL_CHECK,
        }
    }

    fn terminated(&mut self, cx: &mut Context<'_>) -> bool {
        self.frames_unchecked = 0;
        let Some(signal) = self.signal.as_mut() else {
            return true;
        };
        if signal.as_mut().poll(cx).is_pending() {
            return false;
        }
        self.signal = None;
        true
    }
}

impl<S: Stream + Unpin> Stream for UntilTerminated<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let this = self.get_mut();
        if this.frames_unchecked >= FRAMES_PER_SIGNAL_CHECK && this.terminated(cx) {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.input).poll_next(cx) {
            Poll::Ready(item) => {
                this.frames_unchecked += 1;
                Poll::Ready(item)
            }
            Poll::Pending if this.terminated(cx) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: FrameSource> FrameSource for UntilTerminated<S> {
    fn has_buffered(&self) -> bool {
        self.signal.is_some() && self.input.has_buffered()
    }

    fn received(&self) -> Option<std::time::Instant> {
        self.input.received()
    }

    fn poll_terminated(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.terminated(cx) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

fn same_file(a: &impl AsFd, b: &impl AsFd) -> bool {
    match (fstat(a), fstat(b)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

impl AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stdin::Reactor(pipe) => Pin::new(pipe).poll_read(cx, buf),
            Stdin::Pool(std) => Pin::new(std).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stdout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stdout::Reactor(pipe) => Pin::new(pipe).poll_write(cx, buf),
            Stdout::Pool(std) => Pin::new(std).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stdout::Reactor(pipe) => Pin::new(pipe).poll_write_vectored(cx, bufs),
            Stdout::Pool(std) => Pin::new(std).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stdout::Reactor(pipe) => pipe.is_write_vectored(),
            Stdout::Pool(std) => std.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stdout::Reactor(pipe) => Pin::new(pipe).poll_flush(cx),
            Stdout::Pool(std) => Pin::new(std).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stdout::Reactor(pipe) => Pin::new(pipe).poll_shutdown(cx),
            Stdout::Pool(std) => Pin::new(std).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::OwnedFd;

    #[tokio::test]
    async fn a_pipe_is_drained_once_its_reader_took_every_byte() {
        let (mut reader, mut writer) = io::pipe().expect("a pipe");
        let handle = std::fs::File::from(OwnedFd::from(writer.try_clone().expect("dup")));
        let stdout = Stdout::Reactor(
            NonBlocking::duplicate(handle, EarlyReads::Always).expect("on the reactor"),
        );
        assert!(stdout.is_drained());
        writer.write_all(b"an answer").expect("write");
        assert!(!stdout.is_drained());
        let mut taken = [0; 9];
        reader.read_exact(&mut taken).expect("read");
        assert!(stdout.is_drained());
    }
}
