//! One test per recovery rule of the Content-Length codec: each bad input yields the right
//! `Frame::Invalid` items, and decoding resumes at the next plausible frame boundary.

use super::common::{
    assert_costs_at_most_the_next_frame, assert_recovers, decode, frame, invalid, payload, request,
    GOOD,
};
use futures::StreamExt;
use tokio_util::codec::FramedRead;
use wsp_server::codec::{DecodeError, DecodeErrorReason, Frame, FrameCodec, MAX_HEADER_BYTES};

/// Good frames sent after each corrupted one in the regression tests of issue 10.
const FOLLOWERS: usize = 20;

/// Asserts the recovery rule for `corrupted`, and that this decoder in fact loses none of the
/// frames after it.
fn assert_no_follower_lost(corrupted: &[u8]) {
    let lost = assert_costs_at_most_the_next_frame(corrupted, FOLLOWERS);
    assert_eq!(
        lost,
        Vec::<usize>::new(),
        "{:?}",
        String::from_utf8_lossy(corrupted)
    );
}

#[test]
fn content_length_a_few_bytes_short_costs_only_its_frame() {
    let text = request(100);
    for short_by in [1, 3, 7] {
        let bad = format!("Content-Length: {}\r\n\r\n{text}", text.len() - short_by);
        assert_no_follower_lost(bad.as_bytes());
    }
}

#[test]
fn content_length_counted_in_characters_costs_only_its_frame() {
    let text = r#"{"jsonrpc":"2.0","id":100,"method":"environment/create","params":{"name":"café-ü-環境"}}"#;
    assert!(text.chars().count() < text.len());
    let bad = format!("Content-Length: {}\r\n\r\n{text}", text.chars().count());
    assert_no_follower_lost(bad.as_bytes());
}

#[test]
fn header_block_of_8193_bytes_costs_only_its_frame() {
    let text = request(100);
    let mut bad = format!("Content-Length: {}\r\nX-Padding: ", text.len()).into_bytes();
    bad.resize(MAX_HEADER_BYTES + 1 - 4, b'p');
    bad.extend_from_slice(b"\r\n\r\n");
    assert_eq!(bad.len(), 8193);
    bad.extend_from_slice(text.as_bytes());
    assert_no_follower_lost(&bad);
}

#[test]
fn header_block_ended_by_a_bare_cr_costs_only_its_frame() {
    let text = request(100);
    for ending in ["\r\n\r", "\r\r", "\r"] {
        let bad = format!("Content-Length: {}{ending}{text}", text.len());
        assert_no_follower_lost(bad.as_bytes());
    }
}

#[test]
fn nul_inside_the_content_length_value_costs_only_its_frame() {
    let text = request(100);
    let length = text.len().to_string();
    for value in [
        format!("{}\0{}", &length[..1], &length[1..]),
        format!("\0{length}"),
        format!("{length}\0"),
    ] {
        let bad = format!("Content-Length: {value}\r\n\r\n{text}");
        assert_no_follower_lost(bad.as_bytes());
    }
}

#[test]
fn a_short_length_leaves_a_tail_that_ends_where_the_next_frame_starts() {
    let mut input = b"Content-Length: 2\r\n\r\n{}xyz".to_vec();
    input.extend(frame(GOOD));
    let expected = vec![
        payload("{}"),
        invalid(3, DecodeErrorReason::Interrupted),
        payload(GOOD),
    ];
    assert_eq!(decode(&input), expected);
}

#[test]
fn a_long_length_is_cut_at_the_next_frame_header_inside_the_payload() {
    let bad = b"Content-Length: 500\r\n\r\n{}";
    assert_recovers(bad, invalid(bad.len(), DecodeErrorReason::Interrupted));
    assert_no_follower_lost(b"Content-Length: 100000\r\n\r\n{}");
}

#[test]
fn a_duplicated_header_block_costs_nothing() {
    let header = format!("Content-Length: {}\r\n\r\n", GOOD.len());
    let mut input = header.clone().into_bytes();
    input.extend(frame(GOOD));
    let expected = vec![
        invalid(header.len(), DecodeErrorReason::Interrupted),
        payload(GOOD),
    ];
    assert_eq!(decode(&input), expected);
}

#[test]
fn garbage_glued_to_a_header_ends_before_it() {
    assert_recovers(b"xyz", invalid(3, DecodeErrorReason::Interrupted));
    assert_recovers(b"noise\n", invalid(6, DecodeErrorReason::Interrupted));
}

#[test]
fn a_complete_malformed_block_is_skipped_whole_content_length_line_and_all() {
    let bad = b"bogus\r\nContent-Length: 5\r\n\r\n";
    let malformed = DecodeErrorReason::MalformedHeaderLine("bogus".into());
    assert_recovers(bad, invalid(bad.len(), malformed));
    let bad = b"Content-Length: x\r\nContent-Length: 5\r\n\r\n";
    let invalid_value = DecodeErrorReason::InvalidContentLength("x".into());
    assert_recovers(bad, invalid(bad.len(), invalid_value));
}

#[test]
fn a_bad_line_of_a_block_found_by_recovery_is_dropped_up_to_the_next_content_length_line() {
    // A glued `Content-Length:` is only a guess at a frame start: the block it begins may be a
    // payload's tail followed by the next frame's own header lines.
    let tail = b"Content-Length: 12\"}}\r\n";
    let mut input = b"xyz".to_vec();
    input.extend_from_slice(tail);
    input.extend(frame(GOOD));
    let expected = vec![
        invalid(3, DecodeErrorReason::Interrupted),
        invalid(
            tail.len(),
            DecodeErrorReason::InvalidContentLength("12\\\"}}".into()),
        ),
        payload(GOOD),
    ];
    assert_eq!(decode(&input), expected);
}

#[test]
fn content_length_text_inside_a_json_payload_is_delivered_intact() {
    let texts = [
        r#"{"jsonrpc":"2.0","method":"log","params":{"line":"Content-Length: 12\r\n\r\n"}}"#,
        "{\r\n\"Content-Length\": 12\r\n}",
        r#"["Content-Length:12","content-length: 9 "]"#,
    ];
    let input: Vec<u8> = texts.iter().flat_map(|text| frame(text)).collect();
    let expected: Vec<Frame> = texts.iter().map(|text| payload(text)).collect();
    assert_eq!(decode(&input), expected);
}

#[test]
fn a_raw_frame_header_inside_a_payload_cuts_it() {
    let inner = frame("{}");
    let mut outer = format!("Content-Length: {}\r\n\r\nab", inner.len() + 2).into_bytes();
    let header_len = outer.len() - 2;
    outer.extend_from_slice(&inner);
    let expected = vec![
        invalid(header_len + 2, DecodeErrorReason::Interrupted),
        payload("{}"),
    ];
    assert_eq!(decode(&outer), expected);
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
