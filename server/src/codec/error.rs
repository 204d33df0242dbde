//! Why the decoder dropped input, and how much of it.

use super::MAX_HEADER_BYTES;

/// Input the decoder dropped: how many bytes, and why. Carried by [`Frame::Invalid`](super::Frame::Invalid).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("discarded {discarded} bytes: {reason}")]
pub struct DecodeError {
    /// Bytes of input this error accounts for. For a frame-level error (oversized or non-UTF-8 payload)
    /// this is the whole frame, header block included.
    pub discarded: usize,
    /// What was wrong with them.
    pub reason: DecodeErrorReason,
}

/// What was wrong with input the decoder dropped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeErrorReason {
    /// The header block has no `Content-Length` header.
    #[error("header block has no Content-Length header")]
    MissingContentLength,
    /// A `Content-Length` value is not a plain decimal number, or does not fit in 64 bits.
    /// Holds the value, escaped and cut to a short excerpt.
    #[error("Content-Length value `{0}` is not a plain decimal number")]
    InvalidContentLength(String),
    /// A header line has no `:`, or nothing before it. Holds the line, escaped and cut to a short excerpt.
    #[error("malformed header line `{0}`")]
    MalformedHeaderLine(String),
    /// Several `Content-Length` headers with different values.
    #[error("Content-Length headers with different values")]
    ConflictingContentLength,
    /// The header block, terminator included, is longer than [`MAX_HEADER_BYTES`].
    #[error("header block longer than {} bytes", MAX_HEADER_BYTES)]
    HeaderTooLarge,
    /// The `Content-Length` is above the codec's maximum frame size; the payload is skipped.
    #[error("Content-Length {length} is above the maximum frame size of {max} bytes")]
    FrameTooLarge {
        /// The announced payload length.
        length: u64,
        /// The codec's maximum frame size.
        max: usize,
    },
    /// The payload is not valid UTF-8.
    #[error("payload is not valid UTF-8")]
    NotUtf8,
    /// A new frame's `Content-Length:` began before this frame was complete: after other bytes on a
    /// line of a header block that had no `\r\n\r\n` yet, or as a whole frame header
    /// (`Content-Length: N\r`) inside the payload, whose `Content-Length` was then too long. Decoding
    /// resumes at that `Content-Length:`.
    #[error("a new frame's Content-Length began inside this frame")]
    Interrupted,
    /// The input ended inside a header block or a payload.
    #[error("input ended inside a frame")]
    EofInsideFrame,
}

impl DecodeError {
    pub(super) fn new(discarded: usize, reason: DecodeErrorReason) -> Self {
        Self { discarded, reason }
    }
}
