//! Where frames begin and end: header block terminators, and the `Content-Length:` that marks the
//! start of a new frame after bytes were lost or miscounted.

use super::header::trim_blanks;

/// The bytes that end a header block.
pub(super) const TERMINATOR: &[u8] = b"\r\n\r\n";

/// The header name, colon included, that marks where a frame can begin (matched ASCII-case-insensitively).
pub(super) const MARKER: &[u8] = b"content-length:";

/// Longest run of blanks and digits between `Content-Length:` and `\r` in a frame header found inside a payload.
const MAX_VALUE_RUN: usize = 32;

/// Payload bytes that must stay visible to recognise a frame header whose `\r` arrives in a later read.
pub(super) const PAYLOAD_LOOKBACK: usize = MARKER.len() + MAX_VALUE_RUN;

/// Bytes checked at once for a `\r` before looking for its exact position.
const SCAN_BLOCK: usize = 256;

/// What ends a header block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BlockEnd {
    /// A `\r\n\r\n` starts at this index: the block is everything before it, plus the terminator.
    Terminator(usize),
    /// A `Content-Length:` starts at this index after other bytes on its line: a new frame starts
    /// there, and the block is everything before it.
    NextFrame(usize),
}

/// The first end of a header block in `buf`, looking at `\r` and `:` bytes from index `from` on.
///
/// `starts_block` says that `buf[0]` is the block's first byte, so a `Content-Length:` there is the
/// block's own. `Err(resume)` means no end is in `buf` yet, and scanning can resume at `resume`.
pub(super) fn find_block_end(
    buf: &[u8],
    from: usize,
    starts_block: bool,
) -> Result<BlockEnd, usize> {
    let mut at = from;
    while let Some(found) = buf
        .get(at..)
        .and_then(|rest| rest.iter().position(|&byte| byte == b'\r' || byte == b':'))
    {
        let index = at + found;
        if buf[index] == b'\r' {
            let rest = &buf[index..];
            if rest.starts_with(TERMINATOR) {
                return Ok(BlockEnd::Terminator(index));
            }
            if TERMINATOR.starts_with(rest) {
                return Err(index);
            }
        } else if let Some(start) = (index + 1).checked_sub(MARKER.len()) {
            // Cheapest test first: at a line start, a `Content-Length:` is the block's own.
            let own_line = (start == 0 && starts_block) || buf[..start].ends_with(b"\r\n");
            if !own_line && buf[start..=index].eq_ignore_ascii_case(MARKER) {
                return Ok(BlockEnd::NextFrame(start));
            }
        }
        at = index + 1;
    }
    Err(buf.len())
}

/// How many bytes at the end of `buf` must be kept while dropping an oversized header block, given
/// that scanning resumes at `resume`: enough to see a terminator or a `Content-Length:` split across
/// reads, and the two bytes before such a name (a `\r\n` there makes it one of the block's own lines).
pub(super) fn kept_while_discarding(buf: &[u8], resume: usize) -> usize {
    let partial_name = (1..MARKER.len())
        .rev()
        .find(|&n| n <= buf.len() && buf[buf.len() - n..].eq_ignore_ascii_case(&MARKER[..n]))
        .unwrap_or(0);
    (buf.len() - resume.min(buf.len()))
        .max(partial_name + 2)
        .min(buf.len())
}

/// Start of the first frame header inside payload bytes whose `\r` is in `buf[from..to]`.
///
/// A frame header here is `Content-Length:`, optional blanks, digits, optional blanks, then `\r`.
/// No JSON text contains one: outside a string the letters are not a JSON token, and inside a
/// string the `\r` would be a raw control character. So a payload holding one cannot be a valid
/// message, and the header in it is where the sender's next frame starts.
pub(super) fn find_frame_header(buf: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut at = from;
    while at < to {
        let cr = at + find_byte(&buf[at..to], b'\r')?;
        if let Some(start) = frame_header_ending_at(buf, cr) {
            return Some(start);
        }
        at = cr + 1;
    }
    None
}

fn frame_header_ending_at(buf: &[u8], cr: usize) -> Option<usize> {
    let window_start = cr.saturating_sub(PAYLOAD_LOOKBACK);
    let window = &buf[window_start..cr];
    let value_start = 1 + window
        .iter()
        .rposition(|byte| !matches!(byte, b' ' | b'\t' | b'0'..=b'9'))?;
    let value = trim_blanks(&window[value_start..]);
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let start = value_start.checked_sub(MARKER.len())?;
    window[start..value_start]
        .eq_ignore_ascii_case(MARKER)
        .then_some(window_start + start)
}

/// Index of the first `byte` in `haystack`. Each block is first checked by a loop with no early
/// exit, which the compiler turns into vector compares; the work per call stays bounded by the
/// block size around the byte found, so many `\r`s cost linear time.
fn find_byte(haystack: &[u8], byte: u8) -> Option<usize> {
    let mut offset = 0;
    for block in haystack.chunks(SCAN_BLOCK) {
        if block
            .iter()
            .fold(0u8, |seen, &candidate| seen | u8::from(candidate == byte))
            != 0
        {
            return block
                .iter()
                .position(|&candidate| candidate == byte)
                .map(|index| offset + index);
        }
        offset += block.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminator_ends_the_block() {
        let block = b"Content-Length: 2\r\n\r\n{}";
        assert_eq!(find_block_end(block, 0, true), Ok(BlockEnd::Terminator(17)));
        assert_eq!(find_block_end(block, 18, true), Err(block.len()));
        assert_eq!(find_block_end(b"ab\r\n\r", 0, true), Err(2));
        assert_eq!(find_block_end(b"ab\rx", 0, true), Err(4));
    }

    #[test]
    fn a_glued_content_length_starts_a_new_frame() {
        assert_eq!(
            find_block_end(b"1}content-LENGTH: 2\r\n\r\n", 0, true),
            Ok(BlockEnd::NextFrame(2))
        );
        assert_eq!(
            find_block_end(b"x\nContent-Length:", 0, true),
            Ok(BlockEnd::NextFrame(2))
        );
        assert_eq!(
            find_block_end(b"Content-Length:", 0, false),
            Ok(BlockEnd::NextFrame(0))
        );
    }

    #[test]
    fn a_content_length_line_of_the_block_is_its_own() {
        let block = b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n";
        assert_eq!(find_block_end(block, 0, true), Ok(BlockEnd::Terminator(36)));
    }

    #[test]
    fn discarding_keeps_only_what_a_split_marker_needs() {
        assert_eq!(kept_while_discarding(b"hhhhhh", 6), 2);
        assert_eq!(kept_while_discarding(b"hhhhhhConTent-", 14), 10);
        assert_eq!(kept_while_discarding(b"hhhhh\r\n", 5), 2);
        assert_eq!(kept_while_discarding(b"hhh\r\n\r", 3), 3);
        assert_eq!(kept_while_discarding(b"h", 1), 1);
    }

    #[test]
    fn frame_headers_inside_payloads_need_digits_and_a_cr() {
        let payload = b"{\"a\":1}Content-Length: 12\r\n\r\n{";
        assert_eq!(find_frame_header(payload, 0, payload.len()), Some(7));
        assert_eq!(
            find_frame_header(payload, 0, 25),
            None,
            "the \\r is beyond `to`"
        );
        let padded = b"xCONTENT-LENGTH:\t 7 \r";
        assert_eq!(find_frame_header(padded, 0, padded.len()), Some(1));
        for no in [
            &b"\"Content-Length: 12\"\n"[..],
            b"Content-Length: \r",
            b"Content-Length: 1 2\r",
            b"Content-Length: x\r",
            b"ontent-Length: 1\r",
        ] {
            assert_eq!(find_frame_header(no, 0, no.len()), None, "{no:?}");
        }
        let mut long_value = b"Content-Length:".to_vec();
        long_value.extend([b'0'; MAX_VALUE_RUN + 1]);
        long_value.push(b'\r');
        assert_eq!(find_frame_header(&long_value, 0, long_value.len()), None);
    }

    #[test]
    fn finds_bytes_across_chunks() {
        let mut haystack = vec![b'x'; 3 * SCAN_BLOCK];
        assert_eq!(find_byte(&haystack, b'\r'), None);
        haystack[2 * SCAN_BLOCK + 5] = b'\r';
        assert_eq!(find_byte(&haystack, b'\r'), Some(2 * SCAN_BLOCK + 5));
    }
}
