//! [`FrameWriter`]: the server's side of the output, a sink of payloads over a byte stream.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use futures::Sink;
use tokio::io::AsyncWrite;

use super::encode::write_frame;

/// The unit [`FrameWriter`] writes in while more frames are coming: a memory page.
pub const PAGE_BYTES: usize = 4096;

/// A buffer that grew past this (for a huge answer) is not kept once it is written.
const MAX_KEPT_CAPACITY: usize = 1024 * 1024;

/// Frames payloads into one buffer and writes it, in whole pages while more frames are coming.
///
/// Once the buffer holds [`FrameWriter::eager_bytes`] or more, [`Sink::poll_ready`] writes its
/// whole pages and keeps the rest for later; [`Sink::poll_flush`] writes everything. A pipe
/// holds 16 pages, and a write that is not a whole number of pages ends on a part-filled one
/// that the next write cannot always share, so early writes of any other size would leave a
/// pipe full with far fewer bytes in it (about 40 KiB of 64 with writes of a page and a bit).
///
/// A writer made [`with_early_writes`](FrameWriter::with_early_writes) also writes less than a
/// page early, once that many bytes wait, when the stream says the peer has taken everything
/// written before: a part-filled page then costs nothing, since the stream is empty. Small
/// answers (a few dozen bytes each) then reach a peer that reads them while the rest of its
/// requests are worked on, where in whole pages they would wait for the input to run dry.
#[derive(Debug)]
pub struct FrameWriter<W> {
    inner: W,
    buffer: BytesMut,
    eager_bytes: usize,
    early: Option<EarlyWrites<W>>,
}

/// When a [`FrameWriter`] writes less than a page early.
#[derive(Debug)]
struct EarlyWrites<W> {
    bytes: usize,
    /// Asked for `bytes` each time instead, when set.
    bytes_from: Option<fn(&W) -> usize>,
    drained: fn(&W) -> bool,
    /// The buffered length at which `drained` is asked next: `bytes` more than after the last
    /// write or the last answer of `false`, so it is asked at most once per `bytes` buffered.
    ask_at: usize,
}

impl<W> EarlyWrites<W> {
    fn bytes(&self, inner: &W) -> usize {
        self.bytes_from
            .map_or(self.bytes, |bytes_from| bytes_from(inner))
    }
}

impl<W> FrameWriter<W> {
    /// A writer that starts writing once a page is buffered.
    pub fn new(inner: W) -> Self {
        Self::with_eager_bytes(inner, PAGE_BYTES)
    }

    /// A writer that starts writing once `eager_bytes` are buffered (at least one page).
    pub fn with_eager_bytes(inner: W, eager_bytes: usize) -> Self {
        FrameWriter {
            inner,
            buffer: BytesMut::new(),
            eager_bytes: eager_bytes.max(PAGE_BYTES),
            early: None,
        }
    }

    /// Also writes what is buffered early, once `bytes` (less than a page) wait, when
    /// `drained` says everything written before has been taken by the peer (see the type's
    /// docs). `drained` is asked at most once per `bytes` buffered.
    pub fn with_early_writes(mut self, bytes: usize, drained: fn(&W) -> bool) -> Self {
        self.early = Some(EarlyWrites {
            bytes,
            bytes_from: None,
            drained,
            ask_at: self.buffer.len() + bytes,
        });
        self
    }

    /// Takes the bytes [`with_early_writes`](Self::with_early_writes) lets wait from
    /// `bytes_from`, asked each time they are counted anew (after a write or an answer of
    /// `false`), instead of the fixed number. Nothing without early writes.
    pub fn with_early_bytes_from(mut self, bytes_from: fn(&W) -> usize) -> Self {
        if let Some(early) = &mut self.early {
            early.bytes_from = Some(bytes_from);
            early.ask_at = self.buffer.len() + bytes_from(&self.inner);
        }
        self
    }

    /// Buffered bytes past which [`Sink::poll_ready`] writes.
    pub fn eager_bytes(&self) -> usize {
        self.eager_bytes
    }

    /// The byte stream.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }
}

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    /// Writes the first `len` buffered bytes, or fewer if the stream takes fewer.
    fn poll_write_some(&mut self, cx: &mut Context<'_>, len: usize) -> Poll<io::Result<()>> {
        let written = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.buffer[..len]))?;
        if written == 0 {
            return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
        }
        self.buffer.advance(written);
        if let Some(early) = &mut self.early {
            early.ask_at = self.buffer.len() + early.bytes(&self.inner);
        }
        Poll::Ready(Ok(()))
    }
}

impl<W: AsyncWrite + Unpin> Sink<Bytes> for FrameWriter<W> {
    type Error = io::Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while this.buffer.len() >= this.eager_bytes {
            let whole_pages = this.buffer.len() / PAGE_BYTES * PAGE_BYTES;
            ready!(this.poll_write_some(cx, whole_pages))?;
        }
        let write_early = match &mut this.early {
            Some(early) if this.buffer.len() >= early.ask_at => {
                let drained = (early.drained)(&this.inner);
                if !drained {
                    early.ask_at = this.buffer.len() + early.bytes(&this.inner);
                }
                drained
            }
            _ => false,
        };
        if write_early {
            while !this.buffer.is_empty() {
                ready!(this.poll_write_some(cx, this.buffer.len()))?;
            }
        }
        Poll::Ready(Ok(()))
    }

    fn start_send(self: Pin<&mut Self>, payload: Bytes) -> io::Result<()> {
        write_frame(&payload, &mut self.get_mut().buffer);
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while !this.buffer.is_empty() {
            ready!(this.poll_write_some(cx, this.buffer.len()))?;
        }
        if this.buffer.capacity() > MAX_KEPT_CAPACITY {
            this.buffer = BytesMut::new();
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.as_mut().poll_flush(cx))?;
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::SinkExt;

    /// A stream that records the length of every write.
    #[derive(Default)]
    struct Recorder {
        writes: Vec<usize>,
        bytes: Vec<u8>,
    }

    impl AsyncWrite for Recorder {
        fn poll_write(
            self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            let this = self.get_mut();
            this.writes.push(buf.len());
            this.bytes.extend_from_slice(buf);
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn writes_whole_pages_early_and_the_rest_on_flush() {
        let mut writer = FrameWriter::new(Recorder::default());
        let payload = Bytes::from(vec![b'x'; 1000]);
        for _ in 0..10 {
            writer.feed(payload.clone()).await.expect("feed");
        }
        writer.flush().await.expect("flush");
        let recorder = writer.get_ref();
        let (last, early) = recorder.writes.split_last().expect("writes");
        assert!(early.iter().all(|len| len % PAGE_BYTES == 0), "{early:?}");
        assert_eq!(early.iter().sum::<usize>() + last, 10 * 1024);
        let frame = [&b"Content-Length: 1000\r\n\r\n"[..], &[b'x'; 1000]].concat();
        assert_eq!(recorder.bytes, frame.repeat(10));
    }

    /// Ten 45-byte answers fed one by one, as a session hands them over: how many bytes each
    /// write took, before the flush.
    async fn small_answers_written_before_the_flush(
        drained: Option<fn(&Recorder) -> bool>,
    ) -> Vec<usize> {
        let mut writer = FrameWriter::new(Recorder::default());
        if let Some(drained) = drained {
            writer = writer.with_early_writes(200, drained);
        }
        for _ in 0..10 {
            writer
                .feed(Bytes::from(vec![b'y'; 45]))
                .await
                .expect("feed");
        }
        writer.get_ref().writes.clone()
    }

    #[tokio::test]
    async fn small_answers_go_out_early_only_to_a_drained_peer() {
        let early = small_answers_written_before_the_flush(Some(|_| true)).await;
        assert!(!early.is_empty(), "no early write");
        assert!(
            early.iter().all(|len| *len >= 200 && *len < PAGE_BYTES),
            "{early:?}"
        );
        let held = small_answers_written_before_the_flush(Some(|_| false)).await;
        assert!(held.is_empty(), "{held:?}");
        let pages_only = small_answers_written_before_the_flush(None).await;
        assert!(pages_only.is_empty(), "{pages_only:?}");
    }

    #[tokio::test]
    async fn the_bytes_let_wait_can_come_from_the_stream() {
        let mut writer = FrameWriter::new(Recorder::default())
            .with_early_writes(200, |_| true)
            .with_early_bytes_from(|recorder| recorder.writes.len() * 100 + 100);
        for _ in 0..11 {
            writer
                .feed(Bytes::from(vec![b'y'; 45]))
                .await
                .expect("feed");
        }
        let frame = "Content-Length: 45\r\n\r\n".len() + 45;
        // 100 bytes let wait before the first write, 200 before the second, 300 before the
        // third (each is written at the next frame's `poll_ready`).
        assert_eq!(writer.get_ref().writes, [2 * frame, 3 * frame, 5 * frame]);
    }

    #[tokio::test]
    async fn a_peer_not_drained_is_asked_again_only_once_more_is_buffered() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static ASKED: AtomicUsize = AtomicUsize::new(0);
        let never = |_: &Recorder| {
            ASKED.fetch_add(1, Ordering::Relaxed);
            false
        };
        let mut writer = FrameWriter::new(Recorder::default()).with_early_writes(200, never);
        for _ in 0..40 {
            writer
                .feed(Bytes::from(vec![b'y'; 45]))
                .await
                .expect("feed");
        }
        let buffered = writer.buffer.len();
        assert!(buffered < PAGE_BYTES, "{buffered}");
        let asked = ASKED.load(Ordering::Relaxed);
        assert!(
            asked >= 1 && asked <= buffered / 200,
            "asked {asked} times for {buffered} bytes"
        );
    }
}
