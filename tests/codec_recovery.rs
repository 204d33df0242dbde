//! One test per recovery rule of the Content-Length codec: each bad input yields exactly one
//! `Frame::Invalid` with the right byte count and reason, and a good frame after it decodes normally.

use bytes::BytesMut;
use futures::StreamExt;
use tokio_util::codec::{Decoder, FramedRead};
use wsp::codec::{DecodeError, DecodeErrorReason, Frame, FrameCodec, MAX_HEADER_BYTES};

const GOOD: &str = r#"{"jsonrpc":"2.0","method":"environment/list","id":1}"#;

fn frame(payload: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{payload}", payload.len()).into_bytes()
}

fn payload(text: &str) -> Frame {
    Frame::Payload(text.to_owned())
}

fn invalid(discarded: usize, reason: DecodeErrorReason) -> Frame {
    Frame::Invalid(DecodeError { discarded, reason })
}

/// Everything a `FramedRead` would yield for `input` fed in `chunk`-byte reads, EOF included.
fn decode_chunked(mut codec: FrameCodec, input: &[u8], chunk: usize) -> Vec<Frame> {
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for piece in input.chunks(chunk.max(1)) {
        buf.extend_from_slice(piece);
        while let Some(frame) = codec.decode(&mut buf).unwrap() {
            frames.push(frame);
        }
    }
    while let Some(frame) = codec.decode_eof(&mut buf).unwrap() {
        frames.push(frame);
    }
    frames
}

/// Decodes `input` all at once and one byte at a time; both must agree.
fn decode(input: &[u8]) -> Vec<Frame> {
    let whole = decode_chunked(FrameCodec::new(), input, input.len());
    let bytewise = decode_chunked(FrameCodec::new(), input, 1);
    assert_eq!(
        whole, bytewise,
        "decoding depends on how the input is split"
    );
    whole
}

/// `bad` followed by a good frame yields exactly `expected` then the good payload.
fn assert_recovers(bad: &[u8], expected: Frame) {
    let mut input = bad.to_vec();
    input.extend(frame(GOOD));
    assert_eq!(decode(&input), vec![expected, payload(GOOD)]);
}

#[test]
fn decodes_a_single_frame() {
    assert_eq!(decode(&frame(GOOD)), vec![payload(GOOD)]);
}

#[test]
fn decodes_many_frames_at_once() {
    let texts: Vec<String> = (0..200)
        .map(|i| format!(r#"{{"id":{i},"é":"ü"}}"#))
        .collect();
    let input: Vec<u8> = texts.iter().flat_map(|text| frame(text)).collect();
    let expected: Vec<Frame> = texts.iter().map(|text| payload(text)).collect();
    assert_eq!(decode(&input), expected);
}

#[test]
fn empty_payload_is_a_valid_empty_frame() {
    assert_eq!(decode(b"Content-Length: 0\r\n\r\n"), vec![payload("")]);
}

#[test]
fn content_type_header_is_ignored() {
    let input = format!(
        "Content-Length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{GOOD}",
        GOOD.len()
    );
    assert_eq!(decode(input.as_bytes()), vec![payload(GOOD)]);
}

#[test]
fn header_name_is_case_insensitive() {
    for name in ["content-length", "CONTENT-LENGTH", "cOnTeNt-LeNgTh"] {
        let input = format!("{name}: {}\r\n\r\n{GOOD}", GOOD.len());
        assert_eq!(decode(input.as_bytes()), vec![payload(GOOD)], "name {name}");
    }
}

#[test]
fn value_may_be_padded_with_spaces_and_tabs() {
    let input = format!("Content-Length:\t {} \t\r\n\r\n{GOOD}", GOOD.len());
    assert_eq!(decode(input.as_bytes()), vec![payload(GOOD)]);
}

#[test]
fn missing_content_length_is_skipped() {
    let bad = b"Content-Type: application/json\r\n\r\n";
    assert_recovers(
        bad,
        invalid(bad.len(), DecodeErrorReason::MissingContentLength),
    );
}

#[test]
fn non_decimal_content_length_is_skipped() {
    for value in [
        "-5",
        "+5",
        "0x1F",
        "",
        "1.0",
        "12a",
        "1 2",
        "99999999999999999999999",
    ] {
        let bad = format!("Content-Length: {value}\r\n\r\n");
        let frames = {
            let mut input = bad.clone().into_bytes();
            input.extend(frame(GOOD));
            decode(&input)
        };
        assert!(
            matches!(
                &frames[..],
                [Frame::Invalid(DecodeError { discarded, reason: DecodeErrorReason::InvalidContentLength(_) }), Frame::Payload(text)]
                    if *discarded == bad.len() && text == GOOD
            ),
            "value {value:?} gave {frames:?}"
        );
    }
}

#[test]
fn header_line_without_colon_is_skipped() {
    let bad = b"Content-Length: 2\r\nthis line has no colon\r\n\r\n";
    let reason = DecodeErrorReason::MalformedHeaderLine("this line has no colon".into());
    assert_recovers(bad, invalid(bad.len(), reason));
}

#[test]
fn conflicting_content_lengths_are_skipped() {
    let bad = b"Content-Length: 2\r\ncontent-length: 3\r\n\r\n";
    assert_recovers(
        bad,
        invalid(bad.len(), DecodeErrorReason::ConflictingContentLength),
    );
}

#[test]
fn repeated_equal_content_lengths_are_accepted() {
    let input = format!(
        "Content-Length: {0}\r\nContent-Length: {0}\r\n\r\n{GOOD}",
        GOOD.len()
    );
    assert_eq!(decode(input.as_bytes()), vec![payload(GOOD)]);
}

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
fn non_utf8_payload_is_skipped() {
    let mut bad = b"Content-Length: 4\r\n\r\n".to_vec();
    bad.extend_from_slice(b"{\xff\xfe}");
    assert_recovers(&bad, invalid(bad.len(), DecodeErrorReason::NotUtf8));
}

#[test]
fn eof_inside_header_discards_the_partial_header() {
    let mut input = frame(GOOD);
    input.extend_from_slice(b"Content-Length: 5\r\n\r");
    let expected = vec![
        payload(GOOD),
        invalid(20, DecodeErrorReason::EofInsideFrame),
    ];
    assert_eq!(decode(&input), expected);
}

#[test]
fn eof_inside_payload_discards_the_partial_frame() {
    let mut input = frame(GOOD);
    let partial = &frame(GOOD)[..30];
    input.extend_from_slice(partial);
    let expected = vec![
        payload(GOOD),
        invalid(30, DecodeErrorReason::EofInsideFrame),
    ];
    assert_eq!(decode(&input), expected);
}

#[test]
fn whitespace_between_frames_and_at_eof_is_ignored() {
    let mut input = b"\r\n".to_vec();
    input.extend(frame(GOOD));
    input.extend_from_slice(b"\n\r\n \t");
    input.extend(frame("{}"));
    input.extend_from_slice(b"\r\n\r\n\n");
    assert_eq!(decode(&input), vec![payload(GOOD), payload("{}")]);
}

#[test]
fn a_good_frame_follows_every_kind_of_bad_one() {
    let mut codec_input = Vec::new();
    let bad_blocks: [&[u8]; 5] = [
        b"Content-Type: a\r\n\r\n",
        b"Content-Length: x\r\n\r\n",
        b"no colon\r\n\r\n",
        b"Content-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"Content-Length: 2\r\n\r\n\xc3\x28",
    ];
    for bad in bad_blocks {
        codec_input.extend_from_slice(bad);
        codec_input.extend(frame(GOOD));
    }
    let frames = decode(&codec_input);
    assert_eq!(frames.len(), 10);
    for pair in frames.chunks(2) {
        assert!(matches!(pair[0], Frame::Invalid(_)), "{pair:?}");
        assert_eq!(pair[1], payload(GOOD));
    }
}

#[tokio::test]
async fn framed_read_keeps_going_after_invalid_frames() {
    let mut input = b"garbage\r\n\r\n".to_vec();
    input.extend(frame(GOOD));
    input.extend_from_slice(b"Content-Length: 1\r\n\r\n\xff");
    input.extend(frame("{}"));
    input.extend_from_slice(b"Content-Len");
    let reader = tokio_test::io::Builder::new()
        .read(&input[..5])
        .read(&input[5..40])
        .read(&input[40..])
        .build();
    let frames: Vec<Frame> = FramedRead::new(reader, FrameCodec::new())
        .map(|item| item.expect("the decoder reports problems as items"))
        .collect()
        .await;
    let malformed = DecodeErrorReason::MalformedHeaderLine("garbage".into());
    let expected = vec![
        invalid(11, malformed),
        payload(GOOD),
        invalid(22, DecodeErrorReason::NotUtf8),
        payload("{}"),
        invalid(11, DecodeErrorReason::EofInsideFrame),
    ];
    assert_eq!(frames, expected);
}
