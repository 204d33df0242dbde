//! The streaming decoder: a small state machine over the read buffer.

use std::io;

use bytes::{Buf, BytesMut};
use tokio_util::codec::Decoder;

use super::boundary::{
    find_block_end, find_frame_header, kept_while_discarding, BlockEnd, MARKER, PAYLOAD_LOOKBACK,
    TERMINATOR,
};
use super::header::parse_content_length;
use super::{DecodeError, DecodeErrorReason, Frame, FrameCodec, MAX_HEADER_BYTES};

/// Buffered bytes past which a header block with no end in sight is too large: a `Content-Length:`
/// that starts within [`MAX_HEADER_BYTES`] (and so would end the block in time) is complete by then.
const TOO_LARGE_AFTER: usize = MAX_HEADER_BYTES + MARKER.len();

/// Most buffer space reserved for a payload before its bytes arrive; beyond it the buffer grows
/// with the input, so a large announced length costs nothing until the bytes are really sent.
const RESERVED_AHEAD: usize = 1024 * 1024;

/// Where the decoder is in the stream. The buffer always starts at the state's current position.
#[derive(Debug, Clone)]
pub(super) enum State {
    /// Between frames or inside a header block that begins at `start`; no end of the block starts
    /// before `search_from`.
    Header {
        search_from: usize,
        start: BlockStart,
    },
    /// Dropping a header block that grew past [`MAX_HEADER_BYTES`]; `discarded` bytes of it are gone,
    /// and no end of it starts before `search_from`.
    DiscardingHeader {
        discarded: usize,
        search_from: usize,
    },
    /// Waiting for `length` payload bytes after a header block of `header_len` bytes; no frame
    /// header ends in the first `scanned` of them.
    Payload {
        header_len: usize,
        length: usize,
        scanned: usize,
    },
    /// Dropping the rest of an oversized payload, already reported. The buffer starts with `kept`
    /// bytes of it that are already counted, kept to recognise a frame header split across reads.
    SkippingPayload { remaining: u64, kept: usize },
}

/// Where the header block being read begins, which decides how much of it a bad line costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BlockStart {
    /// At a frame boundary: the start of the input, or where a frame or a dropped block ended. A
    /// complete malformed block starting here is dropped whole, its `\r\n\r\n` included.
    Boundary,
    /// At a `Content-Length:` that recovery found among other bytes (glued to them, or a frame
    /// header inside a payload), or at a line of such a block. The block may hold the next frame's
    /// header lines after a bad line, so it is dropped only up to its next `Content-Length:` line.
    Resync,
}

impl State {
    /// A header block that begins at `start`, not yet scanned.
    fn header_at(start: BlockStart) -> Self {
        State::Header {
            search_from: 0,
            start,
        }
    }
}

impl Default for State {
    fn default() -> Self {
        State::header_at(BlockStart::Boundary)
    }
}

impl Decoder for FrameCodec {
    type Item = Frame;
    type Error = io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> io::Result<Option<Frame>> {
        Ok(self.next_frame(src))
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> io::Result<Option<Frame>> {
        if let Some(frame) = self.next_frame(src) {
            return Ok(Some(frame));
        }
        let leftover = src.len();
        let reason = match self.state {
            State::Header { .. } if leftover == 0 => None,
            State::Header { .. } if leftover >= MAX_HEADER_BYTES => {
                Some((leftover, DecodeErrorReason::HeaderTooLarge))
            }
            State::Header { .. } => Some((leftover, DecodeErrorReason::EofInsideFrame)),
            State::DiscardingHeader { discarded, .. } => Some((
                discarded.saturating_add(leftover),
                DecodeErrorReason::HeaderTooLarge,
            )),
            State::Payload { header_len, .. } => Some((
                header_len.saturating_add(leftover),
                DecodeErrorReason::EofInsideFrame,
            )),
            State::SkippingPayload { .. } => None,
        };
        src.clear();
        self.state = State::default();
        Ok(reason.map(|(discarded, reason)| invalid(discarded, reason)))
    }
}

impl FrameCodec {
    /// Advances through `src` until one item is complete, or returns `None` when more input is needed.
    fn next_frame(&mut self, src: &mut BytesMut) -> Option<Frame> {
        loop {
            let step = match self.state {
                State::Header { search_from, start } => self.read_header(src, search_from, start),
                State::DiscardingHeader {
                    discarded,
                    search_from,
                } => self.discard_header(src, discarded, search_from),
                State::Payload {
                    header_len,
                    length,
                    scanned,
                } => self.read_payload(src, header_len, length, scanned),
                State::SkippingPayload { remaining, kept } => {
                    self.skip_payload(src, remaining, kept)
                }
            };
            match step {
                Step::Yield(frame) => return Some(frame),
                Step::NeedInput => return None,
                Step::Continue => {}
            }
        }
    }

    fn read_header(&mut self, src: &mut BytesMut, search_from: usize, start: BlockStart) -> Step {
        if search_from == 0 {
            let blanks = src
                .iter()
                .take_while(|byte| is_between_frames(**byte))
                .count();
            src.advance(blanks);
        }
        self.state = State::default();
        let end = match find_block_end(src, search_from, true) {
            Ok(end) => end,
            Err(resume) if src.len() < TOO_LARGE_AFTER => {
                self.state = State::Header {
                    search_from: if src.is_empty() { 0 } else { resume },
                    start,
                };
                return Step::NeedInput;
            }
            Err(resume) => {
                // No end within reach of the limit: whatever ends this block, it is too long.
                let dropped = src.len() - kept_while_discarding(src, resume);
                src.advance(dropped);
                self.state = State::DiscardingHeader {
                    discarded: dropped,
                    search_from: resume - dropped,
                };
                return Step::Continue;
            }
        };
        let terminator_at = match end {
            BlockEnd::NextFrame(next) => {
                src.advance(next);
                self.state = State::header_at(BlockStart::Resync);
                let reason = if next > MAX_HEADER_BYTES {
                    DecodeErrorReason::HeaderTooLarge
                } else {
                    DecodeErrorReason::Interrupted
                };
                return Step::Yield(invalid(next, reason));
            }
            BlockEnd::Terminator(at) => at,
        };
        let header_len = terminator_at + TERMINATOR.len();
        if header_len > MAX_HEADER_BYTES {
            src.advance(header_len);
            return Step::Yield(invalid(header_len, DecodeErrorReason::HeaderTooLarge));
        }
        match parse_content_length(&src[..terminator_at]) {
            Ok(length) => {
                src.advance(header_len);
                self.start_payload(src, header_len, length)
            }
            Err(bad) => {
                let resume_at = bad.resume_at.filter(|_| start == BlockStart::Resync);
                let discarded = resume_at.unwrap_or(header_len);
                src.advance(discarded);
                self.state = State::Header {
                    search_from: terminator_at.saturating_sub(discarded),
                    start: if resume_at.is_some() {
                        BlockStart::Resync
                    } else {
                        BlockStart::Boundary
                    },
                };
                Step::Yield(invalid(discarded, bad.reason))
            }
        }
    }

    fn start_payload(&mut self, src: &mut BytesMut, header_len: usize, length: u64) -> Step {
        match usize::try_from(length) {
            Ok(length) if length <= self.max_frame_bytes => {
                src.reserve(length.min(RESERVED_AHEAD).saturating_sub(src.len()));
                self.state = State::Payload {
                    header_len,
                    length,
                    scanned: 0,
                };
                Step::Continue
            }
            _ => {
                self.state = State::SkippingPayload {
                    remaining: length,
                    kept: 0,
                };
                let frame_len = usize::try_from(length)
                    .unwrap_or(usize::MAX)
                    .saturating_add(header_len);
                let reason = DecodeErrorReason::FrameTooLarge {
                    length,
                    max: self.max_frame_bytes,
                };
                Step::Yield(invalid(frame_len, reason))
            }
        }
    }

    fn discard_header(&mut self, src: &mut BytesMut, discarded: usize, search_from: usize) -> Step {
        let end = match find_block_end(src, search_from, false) {
            Ok(BlockEnd::Terminator(at)) => at + TERMINATOR.len(),
            Ok(BlockEnd::NextFrame(next)) => {
                src.advance(next);
                self.state = State::header_at(BlockStart::Resync);
                let total = discarded.saturating_add(next);
                return Step::Yield(invalid(total, DecodeErrorReason::HeaderTooLarge));
            }
            Err(resume) => {
                let dropped = src.len() - kept_while_discarding(src, resume);
                src.advance(dropped);
                self.state = State::DiscardingHeader {
                    discarded: discarded.saturating_add(dropped),
                    search_from: resume - dropped,
                };
                return Step::NeedInput;
            }
        };
        src.advance(end);
        self.state = State::default();
        let total = discarded.saturating_add(end);
        Step::Yield(invalid(total, DecodeErrorReason::HeaderTooLarge))
    }

    fn read_payload(
        &mut self,
        src: &mut BytesMut,
        header_len: usize,
        length: usize,
        scanned: usize,
    ) -> Step {
        let available = src.len().min(length);
        if let Some(next) = find_frame_header(src, scanned, available) {
            src.advance(next);
            self.state = State::header_at(BlockStart::Resync);
            let discarded = header_len.saturating_add(next);
            return Step::Yield(invalid(discarded, DecodeErrorReason::Interrupted));
        }
        if src.len() < length {
            self.state = State::Payload {
                header_len,
                length,
                scanned: available,
            };
            return Step::NeedInput;
        }
        self.state = State::default();
        let frame = match std::str::from_utf8(&src[..length]) {
            Ok(text) => Frame::Payload(text.to_owned()),
            Err(_) => invalid(
                header_len.saturating_add(length),
                DecodeErrorReason::NotUtf8,
            ),
        };
        src.advance(length);
        Step::Yield(frame)
    }

    fn skip_payload(&mut self, src: &mut BytesMut, remaining: u64, kept: usize) -> Step {
        let fresh = src.len() - kept;
        let taken = usize::try_from(remaining).map_or(fresh, |remaining| remaining.min(fresh));
        let end = kept + taken;
        self.state = State::default();
        if let Some(next) = find_frame_header(src, kept, end) {
            // The announced length was wrong: the sender's next frame starts here.
            src.advance(next);
            self.state = State::header_at(BlockStart::Resync);
            return Step::Continue;
        }
        // `taken` is at most `remaining`, so this cannot underflow.
        let remaining = remaining - taken as u64;
        if remaining == 0 {
            src.advance(end);
            return Step::Continue;
        }
        let keep = end.min(PAYLOAD_LOOKBACK);
        src.advance(end - keep);
        self.state = State::SkippingPayload {
            remaining,
            kept: keep,
        };
        Step::NeedInput
    }
}

/// What one state-machine step produced.
enum Step {
    Yield(Frame),
    NeedInput,
    Continue,
}

/// Bytes skipped silently before a header block starts.
fn is_between_frames(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

fn invalid(discarded: usize, reason: DecodeErrorReason) -> Frame {
    Frame::Invalid(DecodeError::new(discarded, reason))
}
