//! What the codec tests share: frame builders and decoding helpers that check split invariance.

use bytes::BytesMut;
use tokio_util::codec::Decoder;
use wsp_server::codec::{DecodeError, DecodeErrorReason, Frame, FrameCodec};

pub const GOOD: &str = r#"{"jsonrpc":"2.0","method":"environment/list","id":1}"#;

pub fn frame(payload: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{payload}", payload.len()).into_bytes()
}

pub fn payload(text: &str) -> Frame {
    Frame::Payload(text.to_owned())
}

pub fn invalid(discarded: usize, reason: DecodeErrorReason) -> Frame {
    Frame::Invalid(DecodeError { discarded, reason })
}

/// Everything a `FramedRead` would yield for `input` fed in `chunk`-byte reads, EOF included.
pub fn decode_chunked(mut codec: FrameCodec, input: &[u8], chunk: usize) -> Vec<Frame> {
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
pub fn decode(input: &[u8]) -> Vec<Frame> {
    let whole = decode_chunked(FrameCodec::new(), input, input.len());
    let bytewise = decode_chunked(FrameCodec::new(), input, 1);
    assert_eq!(
        whole, bytewise,
        "decoding depends on how the input is split"
    );
    whole
}

/// `bad` followed by a good frame yields exactly `expected` then the good payload.
pub fn assert_recovers(bad: &[u8], expected: Frame) {
    let mut input = bad.to_vec();
    input.extend(frame(GOOD));
    assert_eq!(decode(&input), vec![expected, payload(GOOD)]);
}

/// A small JSON-RPC request that only the frame with this `id` carries.
pub fn request(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"environment/get","params":{{"id":"env-{id:012}"}}}}"#
    )
}

/// Ids of the good frames sent before the corrupted one, and of the first one sent after it.
const BEFORE: usize = 3;
const FIRST_AFTER: usize = 1000;

/// Sends three good frames, `corrupted`, then `followers` good frames, decoding every way
/// [`decode`] does. Checks that no frame before the corruption is lost and that every payload of a
/// good frame comes out once, in order; returns the positions (0 = the frame right after the
/// corruption) of the followers that were lost.
pub fn lost_followers(corrupted: &[u8], followers: usize) -> Vec<usize> {
    let mut input: Vec<u8> = (0..BEFORE).flat_map(|id| frame(&request(id))).collect();
    input.extend_from_slice(corrupted);
    let after = FIRST_AFTER..FIRST_AFTER + followers;
    input.extend(after.clone().flat_map(|id| frame(&request(id))));
    let good: Vec<usize> = (0..BEFORE).chain(after.clone()).collect();
    let decoded: Vec<usize> = decode(&input)
        .iter()
        .filter_map(|item| match item {
            Frame::Payload(text) => good.iter().copied().find(|&id| *text == request(id)),
            Frame::Invalid(_) => None,
        })
        .collect();
    assert!(
        decoded.windows(2).all(|pair| pair[0] < pair[1]),
        "good frames out of order or repeated: {decoded:?}"
    );
    assert!(
        (0..BEFORE).all(|id| decoded.contains(&id)),
        "a frame before the corruption was lost: {decoded:?}"
    );
    after
        .filter(|id| !decoded.contains(id))
        .map(|id| id - FIRST_AFTER)
        .collect()
}

/// The recovery rule: a corrupted frame costs at most itself and the frame right after it.
pub fn assert_costs_at_most_the_next_frame(corrupted: &[u8], followers: usize) -> Vec<usize> {
    let lost = lost_followers(corrupted, followers);
    assert!(
        lost.is_empty() || lost == [0],
        "lost followers {lost:?} after {:?}",
        String::from_utf8_lossy(corrupted)
    );
    lost
}
