//! The codec's limits: header blocks past 8 KiB and payloads past the maximum frame size are
//! dropped as they arrive, never buffered, and memory follows the bytes that really arrive.

use super::common::{assert_recovers, decode, decode_chunked, frame, invalid, payload, GOOD};
use bytes::BytesMut;
use tokio_util::codec::Decoder;
use wsp_server::codec::{DecodeErrorReason, Frame, FrameCodec, MAX_HEADER_BYTES};

#[test]
fn oversized_header_block_is_skipped_whole() {
    let mut bad = b"Content-Length: 2\r\nX-Padding: ".to_vec();
    bad.resize(3 * MAX_HEADER_BYTES, b'a');
    bad.extend_from_slice(b"\r\n\r\n");
    assert_recovers(&bad, invalid(bad.len(), DecodeErrorReason::HeaderTooLarge));
    for chunk in [7, 4096, 10_000] {
        let mut input = bad.clone();
        input.extend(frame(GOOD));
        let frames = decode_chunked(FrameCodec::new(), &input, chunk);
        assert_eq!(
            frames[0],
            invalid(bad.len(), DecodeErrorReason::HeaderTooLarge)
        );
    }
}

/// `Content-Length: 2`, then padding, then `\r\n\r\n{}`, with a header block of exactly `block_len` bytes.
fn padded_frame(block_len: usize) -> Vec<u8> {
    let mut bytes = b"Content-Length: 2\r\nX-Padding: ".to_vec();
    bytes.resize(block_len - 4, b'a');
    bytes.extend_from_slice(b"\r\n\r\n{}");
    bytes
}

#[test]
fn header_block_of_exactly_the_limit_is_accepted() {
    assert_eq!(decode(&padded_frame(MAX_HEADER_BYTES)), vec![payload("{}")]);
}

#[test]
fn header_block_one_byte_over_the_limit_is_too_large() {
    let expected = vec![
        invalid(MAX_HEADER_BYTES + 1, DecodeErrorReason::HeaderTooLarge),
        invalid(2, DecodeErrorReason::EofInsideFrame),
    ];
    assert_eq!(decode(&padded_frame(MAX_HEADER_BYTES + 1)), expected);
}

#[test]
fn oversized_header_block_is_not_buffered() {
    let mut codec = FrameCodec::new();
    let mut buf = BytesMut::new();
    let chunk = vec![b'h'; 64 * 1024];
    for _ in 0..64 {
        buf.extend_from_slice(&chunk);
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        assert!(buf.len() < 4, "kept {} bytes of a header block", buf.len());
        assert!(
            buf.capacity() <= 2 * chunk.len(),
            "capacity {}",
            buf.capacity()
        );
    }
    buf.extend_from_slice(b"\r\n\r\n");
    let expected = invalid(64 * chunk.len() + 4, DecodeErrorReason::HeaderTooLarge);
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(expected));
}

#[test]
fn oversized_header_block_at_eof_reports_what_was_dropped() {
    let bad = vec![b'h'; 2 * MAX_HEADER_BYTES];
    let mut input = frame(GOOD);
    input.extend_from_slice(&bad);
    let expected = vec![
        payload(GOOD),
        invalid(bad.len(), DecodeErrorReason::HeaderTooLarge),
    ];
    assert_eq!(decode(&input), expected);
}

#[test]
fn frame_of_exactly_the_maximum_size_is_accepted() {
    let codec = FrameCodec::with_max_frame_bytes(GOOD.len());
    assert_eq!(codec.max_frame_bytes(), GOOD.len());
    assert_eq!(decode_chunked(codec, &frame(GOOD), 1), vec![payload(GOOD)]);
}

#[test]
fn oversized_frame_is_reported_as_soon_as_its_header_is_read() {
    let mut codec = FrameCodec::with_max_frame_bytes(16);
    let mut buf = BytesMut::from(&b"Content-Length: 17\r\n\r\n"[..]);
    let reason = DecodeErrorReason::FrameTooLarge {
        length: 17,
        max: 16,
    };
    assert_eq!(
        codec.decode(&mut buf).unwrap(),
        Some(invalid(22 + 17, reason))
    );
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    buf.extend_from_slice(&[b'x'; 17]);
    buf.extend_from_slice(&frame("{}"));
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(payload("{}")));
}

#[test]
fn oversized_frame_payload_is_never_held_in_memory() {
    const CHUNK: usize = 64 * 1024;
    const LENGTH: usize = 100 * 1024 * 1024;
    let mut codec = FrameCodec::with_max_frame_bytes(1024 * 1024);
    let header = format!("Content-Length: {LENGTH}\r\n\r\n");
    let mut buf = BytesMut::from(header.as_bytes());
    let first = codec.decode(&mut buf).unwrap();
    let reason = DecodeErrorReason::FrameTooLarge {
        length: LENGTH as u64,
        max: 1024 * 1024,
    };
    assert_eq!(first, Some(invalid(header.len() + LENGTH, reason)));
    let chunk = vec![0xffu8; CHUNK];
    let mut max_capacity = buf.capacity();
    for _ in 0..LENGTH / CHUNK {
        buf.extend_from_slice(&chunk);
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        max_capacity = max_capacity.max(buf.capacity());
    }
    assert!(
        max_capacity <= 2 * CHUNK,
        "buffer grew to {max_capacity} bytes"
    );
    buf.extend_from_slice(&frame(GOOD));
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(payload(GOOD)));
}

#[test]
fn eof_while_skipping_an_oversized_payload_adds_nothing() {
    let mut input = frame(GOOD);
    input.extend_from_slice(b"Content-Length: 100\r\n\r\n");
    input.extend_from_slice(&[b'x'; 50]);
    let mut codec = FrameCodec::with_max_frame_bytes(99);
    let frames: Vec<Frame> = {
        let mut buf = BytesMut::from(&input[..]);
        std::iter::from_fn(|| codec.decode_eof(&mut buf).unwrap()).collect()
    };
    let reason = DecodeErrorReason::FrameTooLarge {
        length: 100,
        max: 99,
    };
    assert_eq!(frames, vec![payload(GOOD), invalid(23 + 100, reason)]);
}

#[test]
fn frame_too_large_then_good_frame() {
    let mut bad = b"Content-Length: 70000000\r\n\r\n".to_vec();
    let header_len = bad.len();
    bad.resize(header_len + 70_000_000, b'z');
    let mut input = bad.clone();
    input.extend(frame(GOOD));
    let reason = DecodeErrorReason::FrameTooLarge {
        length: 70_000_000,
        max: 64 * 1024 * 1024,
    };
    let frames = decode_chunked(FrameCodec::new(), &input, 1 << 20);
    assert_eq!(frames, vec![invalid(bad.len(), reason), payload(GOOD)]);
}

#[test]
fn an_announced_length_is_not_allocated_before_its_bytes_arrive() {
    const ANNOUNCED: u64 = 1_000_000_000_000;
    let mut codec = FrameCodec::with_max_frame_bytes(usize::MAX);
    let mut buf = BytesMut::from(format!("Content-Length: {ANNOUNCED}\r\n\r\n").as_bytes());
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    assert!(
        buf.capacity() <= 2 << 20,
        "reserved {} bytes",
        buf.capacity()
    );
    let chunk = vec![b'x'; 64 * 1024];
    for _ in 0..64 {
        buf.extend_from_slice(&chunk);
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
    }
    assert!(
        buf.capacity() <= 2 * buf.len().max(2 << 20),
        "capacity {}",
        buf.capacity()
    );
    let reason = DecodeErrorReason::EofInsideFrame;
    let header_len = format!("Content-Length: {ANNOUNCED}\r\n\r\n").len();
    let expected = invalid(header_len + 64 * chunk.len(), reason);
    assert_eq!(codec.decode_eof(&mut buf).unwrap(), Some(expected));
}

#[test]
fn skipping_an_oversized_payload_stops_at_a_frame_header_inside_it() {
    let mut input = b"Content-Length: 9999999\r\n\r\n{\"cut\":1}".to_vec();
    input.extend(frame(GOOD));
    let reason = DecodeErrorReason::FrameTooLarge {
        length: 9_999_999,
        max: 64,
    };
    let expected = vec![invalid(27 + 9_999_999, reason), payload(GOOD)];
    for chunk in [1, 5, 40, input.len()] {
        let frames = decode_chunked(FrameCodec::with_max_frame_bytes(64), &input, chunk);
        assert_eq!(frames, expected, "reads of {chunk} bytes");
    }
}
