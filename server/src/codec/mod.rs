//! Content-Length framing: the first layer above the raw byte stream.
//!
//! The runtime wraps stdin in a [`tokio_util::codec::FramedRead`] with a [`FrameCodec`] and stdout in a
//! [`FrameWriter`] (a [`tokio_util::codec::FramedWrite`] with a `FrameCodec` writes the same frames, in
//! writes of any size). Everything the codec yields is still text: JSON parsing, JSON-RPC validation and
//! the lifecycle all happen above it, in the runtime.
//!
//! # Wire format
//!
//! A frame is a header block, `\r\n\r\n`, then exactly `Content-Length` bytes of payload (the LSP base
//! protocol). Header names are matched ASCII-case-insensitively and every header other than
//! `Content-Length` is ignored. The value is plain ASCII decimal digits, optionally surrounded by spaces or
//! tabs. The encoder writes `Content-Length: N\r\n\r\n` and the payload, nothing else.
//!
//! # Recovery
//!
//! Every problem in the input is an *item*, [`Frame::Invalid`], never an `Err`: a `FramedRead` stops at
//! the first `Err`, and a server must keep reading after bad input. Each [`DecodeError`] says how many
//! bytes it made the decoder drop and why; the runtime logs it to stderr (the codec itself logs nothing).
//!
//! After a complete malformed header block, decoding resumes after its `\r\n\r\n`. Where no terminator
//! delimits the bad bytes (it is missing, or the bytes are inside a payload), decoding resumes at the next
//! *plausible frame boundary*: a `Content-Length:` (name matched ASCII-case-insensitively). A corrupted
//! frame so costs at most itself and the frame right after it. Where such a `Content-Length:` counts as a
//! boundary:
//!
//! - **Glued to other bytes.** A `Content-Length:` preceded on its line by anything (anything but the
//!   `\r\n` that ends a previous header line) always starts a new frame, wherever it appears while a
//!   header block is read or dropped: the bytes before it are reported as
//!   [`Interrupted`](DecodeErrorReason::Interrupted) (or [`HeaderTooLarge`](DecodeErrorReason::HeaderTooLarge)
//!   if there are more than [`MAX_HEADER_BYTES`] of them). This is what a `Content-Length` that was too
//!   short leaves behind: the tail of its payload, then the next frame's header with no line break between.
//! - **At the start of a line after a bad line, in a block recovery began.** A complete malformed header
//!   block that starts at a frame boundary (the start of the input, or where a frame or a dropped block
//!   ended) is dropped whole, `\r\n\r\n` included, whatever its lines are: `bogus\r\nContent-Length:
//!   5\r\n\r\n` is one malformed block, and decoding resumes after it. A block that begins at a
//!   `Content-Length:` found by recovery (one of the two other kinds of boundary) may be the tail of a
//!   payload followed by the next frame's own header lines: when one of its lines is malformed (no `:`,
//!   nothing before it, or a `Content-Length` value that is not a number), it is dropped up to the next
//!   of its lines that starts with `Content-Length:`, and decoding resumes there (a block of the same
//!   kind). Such a block without that line, or whose `Content-Length` headers conflict, is dropped
//!   whole. A `Content-Length:` at a line start before any bad line is one of the block's own headers.
//! - **Inside a payload**, only a whole frame header counts: `Content-Length:`, optional blanks, digits,
//!   optional blanks, then `\r`, all within the announced length. No JSON text contains one (outside a
//!   string those letters are not a token; inside one the `\r` would be a raw control character), so a
//!   payload holding one was never a valid message: its `Content-Length` was too long. The payload is
//!   cut there ([`Interrupted`](DecodeErrorReason::Interrupted), header block + the bytes before the cut)
//!   and decoding resumes at that header, as soon as it arrives, without waiting for the announced length.
//!   A payload being skipped because it is too large is cut the same way, silently (it was reported).
//!
//! | input | item | `discarded` | decoding resumes |
//! | --- | --- | --- | --- |
//! | malformed header block | [`DecodeErrorReason::MissingContentLength`], [`InvalidContentLength`](DecodeErrorReason::InvalidContentLength), [`MalformedHeaderLine`](DecodeErrorReason::MalformedHeaderLine), [`ConflictingContentLength`](DecodeErrorReason::ConflictingContentLength) | up to where decoding resumes | after the block; in a block recovery began, at the next `Content-Length:` line after the bad line if there is one |
//! | bytes before a glued `Content-Length:` | [`Interrupted`](DecodeErrorReason::Interrupted) | those bytes | at the `Content-Length:` |
//! | header block longer than [`MAX_HEADER_BYTES`] (terminator included) | [`HeaderTooLarge`](DecodeErrorReason::HeaderTooLarge), yielded once its end arrives (or at EOF) | the whole block | after the block, or at a glued `Content-Length:` |
//! | payload containing a frame header | [`Interrupted`](DecodeErrorReason::Interrupted) | header block + payload bytes before that header | at that header |
//! | `Content-Length` above the maximum frame size | [`FrameTooLarge`](DecodeErrorReason::FrameTooLarge), yielded as soon as the header is parsed | header block + `Content-Length` (as announced) | after the payload, which is skipped as it streams in, or at a frame header inside it |
//! | payload that is not UTF-8 | [`NotUtf8`](DecodeErrorReason::NotUtf8) | header block + payload | after the payload |
//! | EOF inside a header block or payload | [`EofInsideFrame`](DecodeErrorReason::EofInsideFrame) | the partial frame | (end of stream) |
//!
//! A `Content-Length` that is too short is not visible to the codec: it yields the truncated payload as
//! text (the JSON layer answers it `-32700`) and the tail is then dropped as glued bytes.
//!
//! Memory stays bounded: an oversized header block is dropped as it arrives (at most
//! [`MAX_HEADER_BYTES`] + 15 bytes are buffered before that, and a few bytes after, to spot a terminator
//! or a `Content-Length:` split across reads), and an oversized payload is never buffered (47 bytes of it
//! are kept, to spot a frame header split across reads). Buffer space for a payload is reserved once its
//! length is known to be within the limit, and then at most 1 MiB ahead of the bytes that have arrived.
//!
//! Bytes that are spaces, tabs, CRs or LFs *between* frames (before a header block starts) are skipped
//! silently, wherever they appear, so a client that ends each frame with a newline is served normally and
//! trailing whitespace at EOF is not an error. A block that consists only of such bytes is therefore not
//! a header block at all.
//!
//! The sequence of items, `discarded` included, depends only on the bytes, never on how they were split
//! into reads. EOF while an oversized payload is being skipped yields nothing more: that frame was already
//! reported.

mod boundary;
mod decode;
mod encode;
mod error;
mod header;
mod writer;

pub use error::{DecodeError, DecodeErrorReason};
pub use writer::{FrameWriter, PAGE_BYTES};

use decode::State;

/// The largest payload [`FrameCodec::new`] accepts: 64 MiB.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// The largest header block, its `\r\n\r\n` terminator included: 8 KiB.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

/// One decoded unit of input: a payload, or a report of input that was dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A well-formed frame's payload, UTF-8 validated (it may still be invalid JSON, or empty).
    Payload(String),
    /// Input that could not be decoded and was dropped; decoding continues after it.
    Invalid(DecodeError),
}

/// Decoder and encoder for Content-Length framed messages. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct FrameCodec {
    max_frame_bytes: usize,
    state: State,
}

impl FrameCodec {
    /// A codec that accepts payloads up to [`DEFAULT_MAX_FRAME_BYTES`].
    pub fn new() -> Self {
        Self::with_max_frame_bytes(DEFAULT_MAX_FRAME_BYTES)
    }

    /// A codec that accepts payloads up to `max` bytes; longer ones are skipped and reported.
    pub fn with_max_frame_bytes(max: usize) -> Self {
        Self {
            max_frame_bytes: max,
            state: State::default(),
        }
    }

    /// The largest payload this codec accepts, in bytes.
    pub fn max_frame_bytes(&self) -> usize {
        self.max_frame_bytes
    }
}

impl Default for FrameCodec {
    fn default() -> Self {
        Self::new()
    }
}
