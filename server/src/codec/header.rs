//! Parsing one header block into its payload length.

use super::boundary::MARKER;
use super::DecodeErrorReason;

/// Longest excerpt of offending input kept in an error, in bytes (before escaping).
const EXCERPT_BYTES: usize = 64;

/// Why a header block was refused, and where in it decoding can resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BadBlock {
    pub(super) reason: DecodeErrorReason,
    /// Start of the first line after the offending one that begins with `Content-Length:`, if any.
    /// In a block that recovery began, the lines before it are garbage, not a frame's headers; a
    /// block that starts at a frame boundary is dropped whole instead.
    pub(super) resume_at: Option<usize>,
}

impl BadBlock {
    fn whole(reason: DecodeErrorReason) -> Self {
        Self {
            reason,
            resume_at: None,
        }
    }
}

/// The `Content-Length` of a header block given without its terminator.
pub(super) fn parse_content_length(block: &[u8]) -> Result<u64, BadBlock> {
    let mut content_length = None;
    let mut lines = split_lines(block);
    while let Some((_, line)) = lines.next() {
        let bad_line = |reason| BadBlock {
            reason,
            resume_at: lines.clone().find_map(|(start, line)| {
                let named = line.get(..MARKER.len())?.eq_ignore_ascii_case(MARKER);
                named.then_some(start)
            }),
        };
        let Some(colon) = line.iter().position(|&byte| byte == b':') else {
            return Err(bad_line(DecodeErrorReason::MalformedHeaderLine(excerpt(
                line,
            ))));
        };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if name.is_empty() {
            return Err(bad_line(DecodeErrorReason::MalformedHeaderLine(excerpt(
                line,
            ))));
        }
        if !name.eq_ignore_ascii_case(b"content-length") {
            continue;
        }
        let value = trim_blanks(value);
        let Some(length) = parse_decimal(value) else {
            return Err(bad_line(DecodeErrorReason::InvalidContentLength(excerpt(
                value,
            ))));
        };
        match content_length {
            Some(previous) if previous != length => {
                return Err(BadBlock::whole(DecodeErrorReason::ConflictingContentLength))
            }
            _ => content_length = Some(length),
        }
    }
    content_length.ok_or(BadBlock::whole(DecodeErrorReason::MissingContentLength))
}

/// Each line of `block` with the index it starts at; lines end with `\r\n`.
fn split_lines(block: &[u8]) -> Lines<'_> {
    Lines {
        block,
        next_start: Some(0),
    }
}

#[derive(Clone)]
struct Lines<'a> {
    block: &'a [u8],
    next_start: Option<usize>,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.next_start?;
        let current = &self.block[start..];
        match current.windows(2).position(|pair| pair == b"\r\n") {
            Some(end) => {
                self.next_start = Some(start + end + 2);
                Some((start, &current[..end]))
            }
            None => {
                self.next_start = None;
                Some((start, current))
            }
        }
    }
}

/// `value` without the spaces and tabs around it.
pub(super) fn trim_blanks(value: &[u8]) -> &[u8] {
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

    /// The length, or just the reason it was refused.
    fn length(block: &[u8]) -> Result<u64, DecodeErrorReason> {
        parse_content_length(block).map_err(|bad| bad.reason)
    }

    #[test]
    fn parses_plain_and_padded_values() {
        assert_eq!(length(b"Content-Length: 12"), Ok(12));
        assert_eq!(length(b"content-LENGTH:\t 7 \t"), Ok(7));
        assert_eq!(length(b"Content-Length:0"), Ok(0));
        assert_eq!(length(b"Content-Length: 007"), Ok(7));
        assert_eq!(
            length(b"Content-Length: 18446744073709551615"),
            Ok(u64::MAX)
        );
    }

    #[test]
    fn ignores_other_headers() {
        let block = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 3";
        assert_eq!(length(block), Ok(3));
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
                    length(block.as_bytes()),
                    Err(DecodeErrorReason::InvalidContentLength(_))
                ),
                "value {value:?} was accepted"
            );
        }
    }

    #[test]
    fn rejects_lines_without_a_name() {
        assert_eq!(
            length(b"Content-Length: 1\r\nno colon here"),
            Err(DecodeErrorReason::MalformedHeaderLine(
                "no colon here".into()
            ))
        );
        assert_eq!(
            length(b": 1"),
            Err(DecodeErrorReason::MalformedHeaderLine(": 1".into()))
        );
    }

    #[test]
    fn duplicates_must_agree() {
        assert_eq!(length(b"Content-Length: 5\r\ncontent-length: 05"), Ok(5));
        assert_eq!(
            length(b"Content-Length: 5\r\nContent-Length: 6"),
            Err(DecodeErrorReason::ConflictingContentLength)
        );
    }

    #[test]
    fn a_bad_line_resumes_at_the_next_content_length_line() {
        let bad =
            parse_content_length(b"garbage\r\nX: 1\r\ncontent-length: 5\r\nContent-Length: 5");
        assert_eq!(bad.map_err(|bad| bad.resume_at), Err(Some(15)));
        let bad = parse_content_length(b"Content-Length: x\r\nContent-Length: 5");
        assert_eq!(bad.map_err(|bad| bad.resume_at), Err(Some(19)));
        let bad = parse_content_length(b"Content-Length: 5\r\nno colon");
        assert_eq!(bad.map_err(|bad| bad.resume_at), Err(None));
        let conflict =
            parse_content_length(b"Content-Length: 5\r\nContent-Length: 6\r\nContent-Length: 6");
        assert_eq!(conflict.map_err(|bad| bad.resume_at), Err(None));
    }

    #[test]
    fn missing_length_is_reported() {
        assert_eq!(
            length(b"Content-Type: text/plain"),
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
