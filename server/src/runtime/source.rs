//! What the runtime reads from: a transport's input as a stream of frames.

use std::future::Future;
use std::io;
use std::task::{Context, Poll};
use std::time::Instant;

use futures::Stream;

use super::FairRead;
use crate::codec::Frame;

/// A stream of frames the runtime reads: a transport's input.
pub trait FrameSource: Stream<Item = io::Result<Frame>> + Unpin {
    /// Whether a next frame may already be here, without waiting on the transport. While
    /// answers are ready and this is `false`, the runtime writes them before it reads on, so a
    /// lone request is answered without an extra read first.
    fn has_buffered(&self) -> bool {
        false
    }

    /// Ready once the input was ended by something other than its data (a termination
    /// signal), looked at while the session reads nothing (see module `held`).
    fn poll_terminated(&mut self, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }

    /// An instant no earlier than the read that brought the last byte of the frame returned
    /// last, when the source knows one: what the runtime gives each request as
    /// [`Request::received`](wsp_protocol::Request::received).
    fn received(&self) -> Option<Instant> {
        None
    }
}

impl<R: tokio::io::AsyncRead + Unpin> FrameSource
    for tokio_util::codec::FramedRead<FairRead<R>, crate::codec::FrameCodec>
{
    fn has_buffered(&self) -> bool {
        !self.read_buffer().is_empty()
    }

    fn received(&self) -> Option<Instant> {
        self.get_ref().last_read()
    }
}

impl<S: FrameSource, F: Future + Unpin> FrameSource for futures::stream::TakeUntil<S, F> {
    fn has_buffered(&self) -> bool {
        self.get_ref().has_buffered()
    }

    fn received(&self) -> Option<Instant> {
        self.get_ref().received()
    }
}
