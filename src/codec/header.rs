//! Parsing one header block into its payload length.

use super::DecodeErrorReason;

/// The bytes that end a header block.
pub(super) const TERMINATOR: &[u8] = b"\r\n\r\n";

/// Longest excerpt of offending input kept in an error, in bytes (before escaping).
const EXCERPT_BYTES: usize = 64;

/// Index just past the first `\r\n\r\n` in `buf` that starts at or after `from`.
pub(super) fn find_terminator(buf: &[u8], from: usize) -> Option<usize> {
    let tail = buf.get(from..)?;
    tail.windows(TERMINATOR.len())
        .position(|window| window == TERMINATOR)
        .map(|start| from + start + TERMINATOR.len())
}

/// The `Content-Length` of a header block given without its terminator.
pub(super) fn parse_content_length(block: &[u8]) -> Result<u64, DecodeErrorReason> {
    let mut content_length = None;
    for line in split_lines(block) {
        let Some(colon) = line.iter().position(|&byte| byte == b':') else {
            return Err(DecodeErrorReason::MalformedHeaderLine(excerpt(line)));
        };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if name.is_empty() {
            return Err(DecodeErrorReason::MalformedHeaderLine(excerpt(line)));
        }
        if !name.eq_ignore_ascii_case(b"content-length") {
            continue;
        }
        let value = trim_blanks(value);
        let length = parse_decimal(value)
            .ok_or_else(|| DecodeErrorReason::InvalidContentLength(excerpt(value)))?;
        match content_length {
            Some(previous) if previous != length => {
                return Err(DecodeErrorReason::ConflictingContentLength)
            }
            _ => content_length = Some(length),
        }
    }
    content_length.ok_or(DecodeErrorReason::MissingContentLength)
}

fn split_lines(block: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(block);
    std::iter::from_fn(move || {
        let current = rest?;
        match current.windows(2).position(|pair| pair == b"\r\n") {
            Some(end) => {
                rest = Some(&current[end + 2..]);
                Some(&current[..end])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

fn trim_blanks(value: &[u8]) -> &[u8] {
    let is_blank = |byte: &u8| *byte == b' ' || *byte == b'\t';
    let start = value
        .iter()
        .position(|b| !is_blank(b))
        .unwrap_or(value.len());
    let end = value
        .iter()
        .rposition(|b| !is_blank(b))
        .map_or(start, |last| last + 1);
    &value[start..end]
}

/// Plain ASCII decimal digits, at least one, no sign; `None` if anything else or above `u64::MAX`.
fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &byte| {
        let digit = char::from(byte).to_digit(10)?;
        acc.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

/// A printable, bounded rendering of offending input for error messages.
fn excerpt(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(EXCERPT_BYTES)];
    let mut text = shown.escape_ascii().to_string();
    if shown.len() < bytes.len() {
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_terminator_from_offset() {
        assert_eq!(find_terminator(b"ab\r\n\r\ncd", 0), Some(6));
        assert_eq!(find_terminator(b"ab\r\n\r\ncd", 2), Some(6));
        assert_eq!(find_terminator(b"ab\r\n\r\ncd", 3), None);
        assert_eq!(find_terminator(b"ab", 5), None);
    }

    #[test]
    fn parses_plain_and_padded_values() {
        assert_eq!(parse_content_length(b"Content-Length: 12"), Ok(12));
        assert_eq!(parse_content_length(b"content-LENGTH:\t 7 \t"), Ok(7));
        assert_eq!(parse_content_length(b"Content-Length:0"), Ok(0));
        assert_eq!(parse_content_length(b"Content-Length: 007"), Ok(7));
        assert_eq!(
            parse_content_length(b"Content-Length: 18446744073709551615"),
            Ok(u64::MAX)
        );
    }

    #[test]
    fn ignores_other_headers() {
        let block = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 3";
        assert_eq!(parse_content_length(block), Ok(3));
    }

    #[test]
    fn rejects_values_that_are_not_plain_decimal() {
        for value in [
            "",
            " ",
            "-1",
            "+1",
            "0x10",
            "1.5",
            "1 2",
            "١",
            "18446744073709551616",
        ] {
            let block = format!("Content-Length: {value}");
            assert!(
                matches!(
                    parse_content_length(block.as_bytes()),
                    Err(DecodeErrorReason::InvalidContentLength(_))
                ),
                "value {value:?} was accepted"
            );
        }
    }

    #[test]
    fn rejects_lines_without_a_name() {
        assert_eq!(
            parse_content_length(b"Content-Length: 1\r\nno colon here"),
            Err(DecodeErrorReason::MalformedHeaderLine(
                "no colon here".into()
            ))
        );
        assert_eq!(
            parse_content_length(b": 1"),
            Err(DecodeErrorReason::MalformedHeaderLine(": 1".into()))
        );
    }

    #[test]
    fn duplicates_must_agree() {
        assert_eq!(
            parse_content_length(b"Content-Length: 5\r\ncontent-length: 05"),
            Ok(5)
        );
        assert_eq!(
            parse_content_length(b"Content-Length: 5\r\nContent-Length: 6"),
            Err(DecodeErrorReason::ConflictingContentLength)
        );
    }

    #[test]
    fn missing_length_is_reported() {
        assert_eq!(
            parse_content_length(b"Content-Type: text/plain"),
            Err(DecodeErrorReason::MissingContentLength)
        );
    }

    #[test]
    fn excerpts_are_escaped_and_bounded() {
        assert_eq!(excerpt(b"a\x00\xff"), "a\\x00\\xff");
        let long = vec![b'x'; 200];
        assert_eq!(excerpt(&long).chars().count(), EXCERPT_BYTES + 1);
    }
}
