//! Arbitrary bytes, split into reads in arbitrary ways, through `FrameCodec`: decoding never fails
//! or panics, never buffers more than a header block or a frame needs, accounts for no more bytes
//! than arrived, and yields the same items however the input is split.

use bytes::BytesMut;
use tokio_util::codec::Decoder;

use super::codec::{
    DecodeError, DecodeErrorReason, Frame, FrameCodec, DEFAULT_MAX_FRAME_BYTES, MAX_HEADER_BYTES,
};

/// Bytes a header block may hold in the buffer before it is judged too large.
const HEADER_BUFFER: usize = MAX_HEADER_BYTES + "content-length:".len();

/// One input: a byte choosing the maximum frame size, two seeding the read sizes, then the stream.
pub fn check(data: &[u8]) {
    let [selector, seed_low, seed_high, stream @ ..] = data else {
        return;
    };
    let max = match selector % 4 {
        0 => 16,
        1 => 256,
        2 => 4096,
        _ => DEFAULT_MAX_FRAME_BYTES,
    };
    let whole = decode(max, stream, std::iter::empty());
    let seed = u32::from(u16::from_le_bytes([*seed_low, *seed_high]));
    let split = decode(max, stream, ReadSizes(seed.wrapping_mul(0x9e37_79b9) | 1));
    assert_eq!(whole, split, "split reads decode differently");
    check_items(&whole, stream.len(), max);
}

/// Every item from `stream`, read in pieces of the sizes `reads` gives (the rest in one read).
fn decode(max: usize, stream: &[u8], mut reads: impl Iterator<Item = usize>) -> Vec<Frame> {
    let mut codec = FrameCodec::with_max_frame_bytes(max);
    let mut buf = BytesMut::new();
    let mut items = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        let size = reads.next().unwrap_or(rest.len()).clamp(1, rest.len());
        buf.extend_from_slice(&rest[..size]);
        rest = &rest[size..];
        while let Some(item) = codec.decode(&mut buf).expect("decode never fails") {
            items.push(item);
            assert!(items.len() <= stream.len(), "more items than bytes");
        }
        assert!(
            buf.len() < HEADER_BUFFER.max(max),
            "{} bytes buffered while waiting for input",
            buf.len()
        );
    }
    while let Some(item) = codec.decode_eof(&mut buf).expect("decode_eof never fails") {
        items.push(item);
        assert!(items.len() <= stream.len() + 1, "more items than bytes");
    }
    assert!(buf.is_empty(), "decode_eof left {} bytes", buf.len());
    let again = codec.decode_eof(&mut buf).expect("decode_eof never fails");
    assert_eq!(again, None, "an item after the end");
    items
}

/// Each item accounts for some bytes; together they account for no more than arrived (an oversized
/// frame, whose count is what its header announced, aside); reasons agree with the limits.
fn check_items(items: &[Frame], stream_len: usize, max: usize) {
    let mut accounted = 0usize;
    for item in items {
        match item {
            Frame::Payload(text) => accounted += text.len(),
            Frame::Invalid(DecodeError { discarded, reason }) => {
                assert!(*discarded > 0, "{item:?} accounts for no bytes");
                match reason {
                    DecodeErrorReason::FrameTooLarge { length, max: limit } => {
                        assert_eq!(*limit, max);
                        assert!(*length > max as u64, "{item:?} is within the limit");
                        continue;
                    }
                    DecodeErrorReason::HeaderTooLarge => {
                        assert!(
                            *discarded >= MAX_HEADER_BYTES,
                            "{item:?} is within the limit"
                        );
                    }
                    _ => {}
                }
                accounted += discarded;
            }
        }
    }
    assert!(
        accounted <= stream_len,
        "items account for {accounted} of {stream_len} bytes"
    );
}

/// Read sizes from a small deterministic generator: mostly short reads, sometimes long ones.
struct ReadSizes(u32);

impl Iterator for ReadSizes {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        let size = if self.0 % 8 == 0 {
            self.0 % 20_000
        } else {
            self.0 % 40
        };
        Some(size as usize + 1)
    }
}
