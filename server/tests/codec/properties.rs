//! Property tests of the Content-Length codec: decoding does not depend on how the input is split,
//! arbitrary input never panics or hangs the decoder, encode → decode is the identity, and one
//! corrupted frame costs at most itself and the frame after it.

use super::corruption::{corruption, good_frames};
use bytes::{Bytes, BytesMut};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use tokio_util::codec::{Decoder, Encoder};
use wsp_server::codec::{
    DecodeError, DecodeErrorReason, Frame, FrameCodec, DEFAULT_MAX_FRAME_BYTES, MAX_HEADER_BYTES,
};

/// The maximum frame size used by the mixed-stream property, small enough to exceed cheaply.
const SMALL_MAX: usize = 64;

/// Feeds `input` split at `cuts` (sorted or not, duplicates allowed), then EOF; returns every item.
/// Panics instead of hanging if the decoder yields more items than there are input bytes.
fn decode_split(max: usize, input: &[u8], cuts: &[usize]) -> Vec<Frame> {
    let mut cuts: Vec<usize> = cuts.iter().map(|&cut| cut.min(input.len())).collect();
    cuts.push(input.len());
    cuts.sort_unstable();
    let mut codec = FrameCodec::with_max_frame_bytes(max);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    let mut start = 0;
    let push = |frames: &mut Vec<Frame>, frame| {
        frames.push(frame);
        assert!(
            frames.len() <= input.len() + 1,
            "decoder does not terminate"
        );
    };
    for cut in cuts {
        buf.extend_from_slice(&input[start..cut]);
        start = cut;
        while let Some(frame) = codec.decode(&mut buf).expect("decode never fails") {
            push(&mut frames, frame);
        }
    }
    while let Some(frame) = codec.decode_eof(&mut buf).expect("decode_eof never fails") {
        push(&mut frames, frame);
    }
    assert_eq!(
        codec.decode_eof(&mut buf).expect("decode_eof never fails"),
        None
    );
    frames
}

/// Decodes all at once, one byte at a time and at the given cut points; all three must agree.
fn decode_every_way(max: usize, input: &[u8], cut_points: &[Index]) -> Vec<Frame> {
    let whole = decode_split(max, input, &[]);
    let every_byte: Vec<usize> = (1..input.len()).collect();
    prop_assert_eq_or_panic(
        &whole,
        &decode_split(max, input, &every_byte),
        "byte at a time",
    );
    let cuts: Vec<usize> = cut_points
        .iter()
        .map(|index| index.index(input.len() + 1))
        .collect();
    prop_assert_eq_or_panic(&whole, &decode_split(max, input, &cuts), "random cuts");
    whole
}

fn prop_assert_eq_or_panic(whole: &[Frame], split: &[Frame], how: &str) {
    assert_eq!(whole, split, "decoding all at once and {how} differ");
}

fn invalid(discarded: usize, reason: DecodeErrorReason) -> Frame {
    Frame::Invalid(DecodeError { discarded, reason })
}

fn framed(payload: &[u8]) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", payload.len()).into_bytes();
    bytes.extend_from_slice(payload);
    bytes
}

/// One piece of a test stream, good or bad, that knows the items it must decode to.
#[derive(Debug, Clone)]
enum Piece {
    Good(String),
    Blank(String),
    MissingLength(String),
    BadValue(String),
    NoColon(String),
    Conflicting(u8, u8),
    PaddedHeader(usize),
    HugeFrame(Vec<u8>),
    NotUtf8(Vec<u8>),
}

impl Piece {
    fn render(&self, out: &mut Vec<u8>, expected: &mut Vec<Frame>) {
        let start = out.len();
        let reason = match self {
            Piece::Good(text) => {
                out.extend(framed(text.as_bytes()));
                expected.push(Frame::Payload(text.clone()));
                return;
            }
            Piece::Blank(blank) => {
                out.extend_from_slice(blank.as_bytes());
                return;
            }
            Piece::MissingLength(value) => {
                out.extend_from_slice(format!("Content-Type: {value}\r\n\r\n").as_bytes());
                DecodeErrorReason::MissingContentLength
            }
            Piece::BadValue(value) => {
                out.extend_from_slice(format!("Content-Length: {value}\r\n\r\n").as_bytes());
                DecodeErrorReason::InvalidContentLength(value.trim_matches([' ', '\t']).into())
            }
            Piece::NoColon(line) => {
                out.extend_from_slice(format!("{line}\r\n\r\n").as_bytes());
                DecodeErrorReason::MalformedHeaderLine(line.clone())
            }
            Piece::Conflicting(first, second) => {
                let block = format!("Content-Length: {first}\r\ncontent-length: {second}\r\n\r\n");
                out.extend_from_slice(block.as_bytes());
                DecodeErrorReason::ConflictingContentLength
            }
            Piece::PaddedHeader(padding) => {
                out.extend_from_slice(b"X-Padding: ");
                out.resize(out.len() + padding, b'p');
                out.extend_from_slice(b"\r\n\r\n");
                if out.len() - start > MAX_HEADER_BYTES {
                    DecodeErrorReason::HeaderTooLarge
                } else {
                    DecodeErrorReason::MissingContentLength
                }
            }
            Piece::HugeFrame(payload) => {
                out.extend(framed(payload));
                let length = payload.len() as u64;
                DecodeErrorReason::FrameTooLarge {
                    length,
                    max: SMALL_MAX,
                }
            }
            Piece::NotUtf8(payload) => {
                out.extend(framed(payload));
                DecodeErrorReason::NotUtf8
            }
        };
        expected.push(invalid(out.len() - start, reason));
    }
}

/// What the stream ends with.
#[derive(Debug, Clone)]
enum Tail {
    Nothing,
    /// The first `Index` bytes (at least one, not all) of a good frame.
    PartialFrame(String, Index),
    /// A header block that never ends, this many bytes long.
    EndlessHeader(usize),
    /// An oversized frame cut off after its header and `Index` bytes of its payload.
    PartialHugeFrame(Vec<u8>, Index),
}

impl Tail {
    fn render(&self, out: &mut Vec<u8>, expected: &mut Vec<Frame>) {
        match self {
            Tail::Nothing => {}
            Tail::PartialFrame(text, cut) => {
                let frame = framed(text.as_bytes());
                let kept = 1 + cut.index(frame.len() - 1);
                out.extend_from_slice(&frame[..kept]);
                expected.push(invalid(kept, DecodeErrorReason::EofInsideFrame));
            }
            Tail::EndlessHeader(length) => {
                out.resize(out.len() + length, b'h');
                let reason = if *length >= MAX_HEADER_BYTES {
                    DecodeErrorReason::HeaderTooLarge
                } else {
                    DecodeErrorReason::EofInsideFrame
                };
                expected.push(invalid(*length, reason));
            }
            Tail::PartialHugeFrame(payload, cut) => {
                let frame = framed(payload);
                let header_len = frame.len() - payload.len();
                out.extend_from_slice(&frame[..header_len + cut.index(payload.len())]);
                let length = payload.len() as u64;
                let reason = DecodeErrorReason::FrameTooLarge {
                    length,
                    max: SMALL_MAX,
                };
                expected.push(invalid(frame.len(), reason));
            }
        }
    }
}

fn good_text() -> impl Strategy<Value = String> {
    // At most 16 chars of at most 4 bytes each: always within SMALL_MAX.
    vec(any::<char>(), 0..=16).prop_map(String::from_iter)
}

fn piece() -> impl Strategy<Value = Piece> {
    let bad_values = prop::sample::select(vec![
        "",
        " ",
        "-1",
        "+1",
        "0x10",
        "1.5",
        "12a",
        "1 2",
        "\t",
        "99999999999999999999999",
    ]);
    prop_oneof![
        4 => good_text().prop_map(Piece::Good),
        1 => "[ \t\r\n]{1,6}".prop_map(Piece::Blank),
        1 => "[a-z/;= ]{0,20}".prop_map(Piece::MissingLength),
        1 => bad_values.prop_map(|value| Piece::BadValue(value.to_owned())),
        1 => "[A-Za-z0-9][A-Za-z0-9 ]{0,20}".prop_map(Piece::NoColon),
        1 => (0u8..10, 10u8..20).prop_map(|(a, b)| Piece::Conflicting(a, b)),
        1 => (MAX_HEADER_BYTES - 24..MAX_HEADER_BYTES + 2048).prop_map(Piece::PaddedHeader),
        // Header blocks of exactly the limit and one byte over it.
        1 => prop::sample::select(vec![MAX_HEADER_BYTES - 15, MAX_HEADER_BYTES - 14])
            .prop_map(Piece::PaddedHeader),
        1 => vec(any::<u8>(), SMALL_MAX + 1..400).prop_map(Piece::HugeFrame),
        1 => (vec(any::<u8>(), 0..30), any::<Index>()).prop_map(|(mut bytes, at)| {
            let at = at.index(bytes.len() + 1);
            bytes.insert(at, 0xff);
            Piece::NotUtf8(bytes)
        }),
    ]
}

fn tail() -> impl Strategy<Value = Tail> {
    prop_oneof![
        2 => Just(Tail::Nothing),
        2 => (good_text(), any::<Index>()).prop_map(|(text, cut)| Tail::PartialFrame(text, cut)),
        1 => (1..MAX_HEADER_BYTES + 100).prop_map(Tail::EndlessHeader),
        1 => (vec(any::<u8>(), SMALL_MAX + 1..200), any::<Index>())
            .prop_map(|(payload, cut)| Tail::PartialHugeFrame(payload, cut)),
    ]
}

/// Bytes rich in the tokens the decoder reacts to, so random input reaches every state.
fn noisy_bytes() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        4 => vec(any::<u8>(), 1..8),
        2 => Just(b"\r\n".to_vec()),
        2 => Just(b"\r\n\r\n".to_vec()),
        2 => Just(b"Content-Length: ".to_vec()),
        1 => Just(b"content-length:".to_vec()),
        2 => "[0-9]{1,4}".prop_map(String::into_bytes),
        1 => Just(b":".to_vec()),
        1 => Just(b" \t".to_vec()),
    ];
    vec(token, 0..64).prop_map(|tokens| tokens.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn mixed_streams_decode_the_same_however_split(
        pieces in vec(piece(), 0..10),
        tail in tail(),
        cuts in vec(any::<Index>(), 0..24),
    ) {
        let (mut input, mut expected) = (Vec::new(), Vec::new());
        for piece in &pieces {
            piece.render(&mut input, &mut expected);
        }
        tail.render(&mut input, &mut expected);
        let frames = decode_every_way(SMALL_MAX, &input, &cuts);
        prop_assert_eq!(frames, expected);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic_and_split_does_not_matter(
        input in noisy_bytes(),
        cuts in vec(any::<Index>(), 0..16),
        max in prop_oneof![Just(16usize), Just(1024)],
    ) {
        decode_every_way(max, &input, &cuts);
    }

    #[test]
    fn a_valid_frame_after_garbage_still_decodes(
        garbage in vec(any::<u8>(), 0..512),
        text in good_text(),
        cuts in vec(any::<Index>(), 0..16),
    ) {
        // Without a `:` no line of the garbage can parse as a header, so it can't swallow the frame.
        let mut input: Vec<u8> =
            garbage.iter().map(|&byte| if byte == b':' { b';' } else { byte }).collect();
        input.extend_from_slice(b"\r\n\r\n");
        input.extend(framed(text.as_bytes()));
        let frames = decode_every_way(SMALL_MAX, &input, &cuts);
        let (last, before) = frames.split_last().expect("the good frame is decoded");
        prop_assert_eq!(last, &Frame::Payload(text));
        prop_assert!(before.iter().all(|frame| matches!(frame, Frame::Invalid(_))));
    }

    #[test]
    fn encode_then_decode_is_the_identity(
        texts in vec(any::<String>(), 0..8),
        cuts in vec(any::<Index>(), 0..16),
    ) {
        let mut codec = FrameCodec::new();
        let mut wire = BytesMut::new();
        for (i, text) in texts.iter().enumerate() {
            match i % 3 {
                0 => codec.encode(text.as_str(), &mut wire),
                1 => codec.encode(text.clone(), &mut wire),
                _ => codec.encode(Bytes::from(text.clone()), &mut wire),
            }
            .expect("encoding never fails");
        }
        let cuts: Vec<usize> = cuts.iter().map(|index| index.index(wire.len() + 1)).collect();
        let frames = decode_split(usize::MAX, &wire, &cuts);
        let expected: Vec<Frame> = texts.into_iter().map(Frame::Payload).collect();
        prop_assert_eq!(frames, expected);
    }
}

/// Every item accounts for at least one byte, and, except an oversized frame (which counts what its
/// header announced), for no more bytes than the input has.
fn assert_discarded_counts_are_sane(frames: &[Frame], input_len: usize) {
    for frame in frames {
        if let Frame::Invalid(DecodeError { discarded, reason }) = frame {
            assert!(*discarded > 0, "{frame:?}");
            if !matches!(reason, DecodeErrorReason::FrameTooLarge { .. }) {
                assert!(*discarded <= input_len, "{frame:?} from {input_len} bytes");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn one_corrupted_frame_costs_at_most_itself_and_the_next(
        frames in good_frames(8, 40),
        corrupted in any::<Index>(),
        corruption in corruption(),
        cuts in vec(any::<Index>(), 0..32),
        max in prop_oneof![Just(DEFAULT_MAX_FRAME_BYTES), Just(512)],
    ) {
        let corrupted = corrupted.index(frames.len());
        let mut input = Vec::new();
        for (id, frame) in frames.iter().enumerate() {
            if id == corrupted {
                input.extend(corruption.apply(frame));
            } else {
                input.extend(frame.bytes());
            }
        }
        let items = decode_every_way(max, &input, &cuts);
        assert_discarded_counts_are_sane(&items, input.len());
        let decoded: Vec<usize> = items
            .iter()
            .filter_map(|item| match item {
                Frame::Payload(text) => frames.iter().position(|frame| frame.text == *text),
                Frame::Invalid(_) => None,
            })
            .collect();
        prop_assert!(
            decoded.windows(2).all(|pair| pair[0] < pair[1]),
            "good frames out of order or repeated: {:?}", decoded
        );
        let lost: Vec<usize> = (0..frames.len()).filter(|id| !decoded.contains(id)).collect();
        prop_assert!(
            lost.iter().all(|&id| id == corrupted || id == corrupted + 1),
            "corrupting frame {} lost {:?}; items {:?}", corrupted, lost, items
        );
    }
}
