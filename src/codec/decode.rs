//! The streaming decoder: a small state machine over the read buffer.

use std::io;

use bytes::{Buf, BytesMut};
use tokio_util::codec::Decoder;

use super::header::{find_terminator, parse_content_length, TERMINATOR};
use super::{DecodeError, DecodeErrorReason, Frame, FrameCodec, MAX_HEADER_BYTES};

/// Bytes kept while dropping an oversized header block: enough to spot a terminator split across reads.
const KEPT_WHILE_DISCARDING: usize = TERMINATOR.len() - 1;

/// Where the decoder is in the stream. The buffer always starts at the state's current position.
#[derive(Debug, Clone)]
pub(super) enum State {
    /// Between frames or inside a header block; no terminator starts before `search_from`.
    Header { search_from: usize },
    /// Dropping a header block that grew past [`MAX_HEADER_BYTES`]; `discarded` bytes of it are gone.
    DiscardingHeader { discarded: usize },
    /// Waiting for `length` payload bytes after a header block of `header_len` bytes.
    Payload { header_len: usize, length: usize },
    /// Dropping the rest of an oversized payload, already reported.
    SkippingPayload { remaining: u64 },
}

impl Default for State {
    fn default() -> Self {
        State::Header { search_from: 0 }
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
            State::Header { .. } => Some((leftover, DecodeErrorReason::EofInsideFrame)),
            State::DiscardingHeader { discarded } => Some((
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
                State::Header { search_from } => self.read_header(src, search_from),
                State::DiscardingHeader { discarded } => self.discard_header(src, discarded),
                State::Payload { header_len, length } => self.read_payload(src, header_len, length),
                State::SkippingPayload { remaining } => self.skip_payload(src, remaining),
            };
            match step {
                Step::Yield(frame) => return Some(frame),
                Step::NeedInput => return None,
                Step::Continue => {}
            }
        }
    }

    fn read_header(&mut self, src: &mut BytesMut, search_from: usize) -> Step {
        let blanks = src
            .iter()
            .take_while(|byte| is_between_frames(**byte))
            .count();
        src.advance(blanks);
        if src.is_empty() {
            self.state = State::default();
            return Step::NeedInput;
        }
        let Some(header_len) = find_terminator(src, search_from) else {
            if src.len() >= MAX_HEADER_BYTES {
                // No terminator in MAX_HEADER_BYTES bytes: whatever ends this block, it is too long.
                let dropped = src.len() - KEPT_WHILE_DISCARDING;
                src.advance(dropped);
                self.state = State::DiscardingHeader { discarded: dropped };
                return Step::Continue;
            }
            self.state = State::Header {
                search_from: src.len().saturating_sub(KEPT_WHILE_DISCARDING),
            };
            return Step::NeedInput;
        };
        self.state = State::default();
        if header_len > MAX_HEADER_BYTES {
            src.advance(header_len);
            return Step::Yield(invalid(header_len, DecodeErrorReason::HeaderTooLarge));
        }
        let parsed = parse_content_length(&src[..header_len - TERMINATOR.len()]);
        src.advance(header_len);
        let length = match parsed {
            Ok(length) => length,
            Err(reason) => return Step::Yield(invalid(header_len, reason)),
        };
        match usize::try_from(length) {
            Ok(length) if length <= self.max_frame_bytes => {
                src.reserve(length.saturating_sub(src.len()));
                self.state = State::Payload { header_len, length };
                Step::Continue
            }
            _ => {
                self.state = State::SkippingPayload { remaining: length };
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

    fn discard_header(&mut self, src: &mut BytesMut, discarded: usize) -> Step {
        if let Some(end) = find_terminator(src, 0) {
            src.advance(end);
            self.state = State::default();
            let total = discarded.saturating_add(end);
            return Step::Yield(invalid(total, DecodeErrorReason::HeaderTooLarge));
        }
        let dropped = src.len().saturating_sub(KEPT_WHILE_DISCARDING);
        src.advance(dropped);
        self.state = State::DiscardingHeader {
            discarded: discarded.saturating_add(dropped),
        };
        Step::NeedInput
    }

    fn read_payload(&mut self, src: &mut BytesMut, header_len: usize, length: usize) -> Step {
        if src.len() < length {
            return Step::NeedInput;
        }
        let payload = src.split_to(length);
        self.state = State::default();
        match std::str::from_utf8(&payload) {
            Ok(text) => Step::Yield(Frame::Payload(text.to_owned())),
            Err(_) => Step::Yield(invalid(
                header_len.saturating_add(length),
                DecodeErrorReason::NotUtf8,
            )),
        }
    }

    fn skip_payload(&mut self, src: &mut BytesMut, remaining: u64) -> Step {
        let available = u64::try_from(src.len()).unwrap_or(u64::MAX);
        let skipped = remaining.min(available);
        // `skipped` is at most `src.len()`, so it fits in usize.
        src.advance(usize::try_from(skipped).unwrap_or(src.len()));
        let remaining = remaining - skipped;
        if remaining == 0 {
            self.state = State::default();
            Step::Continue
        } else {
            self.state = State::SkippingPayload { remaining };
            Step::NeedInput
        }
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
