//! Decoding output that arrives in pieces into text bounded by its size in a JSON answer,
//! without splitting a character across two pieces.

/// The length of the incomplete UTF-8 sequence `bytes` ends with: the start of a character
/// whose remaining bytes have not arrived yet (0 when it ends on a boundary, or with bytes
/// that can never become valid).
pub(super) fn incomplete_tail(bytes: &[u8]) -> usize {
    // A sequence is at most 4 bytes, so an incomplete one at most 3.
    for length in 1..=bytes.len().min(3) {
        let start = bytes.len() - length;
        if bytes[start] & 0b1100_0000 == 0b1000_0000 {
            continue; // a continuation byte: the sequence starts further back
        }
        return match std::str::from_utf8(&bytes[start..]) {
            Err(error) if error.valid_up_to() == 0 && error.error_len().is_none() => length,
            _ => 0,
        };
    }
    0
}

/// How many bytes each byte of UTF-8 text takes inside a JSON string, as serde_json writes it:
/// `"`, `\` and the control characters with a short escape take 2, the other control
/// characters 6 (`\u00XX`), everything else (each byte of a multi-byte character too) 1.
const ENCODED_BYTES: [u8; 256] = {
    let mut table = [1u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = 6;
        byte += 1;
    }
    table[b'\x08' as usize] = 2;
    table[b'\t' as usize] = 2;
    table[b'\n' as usize] = 2;
    table[b'\x0c' as usize] = 2;
    table[b'\r' as usize] = 2;
    table[b'"' as usize] = 2;
    table[b'\\' as usize] = 2;
    table
};

/// The size of `text` as the contents of a JSON string (its quotes not counted).
pub(super) fn json_string_len(text: &str) -> usize {
    text.bytes()
        .map(|byte| usize::from(ENCODED_BYTES[usize::from(byte)]))
        .sum()
}

/// Text decoded from a stream of bytes, chunk by chunk, as UTF-8 with replacement characters,
/// keeping whole characters while the JSON encoding of what is kept fits in a limit.
///
/// Bytes of a character cut by a chunk boundary are carried over to the next chunk, so the
/// kept text is a prefix (whole characters) of the lossy decoding of all the bytes at once.
/// Once a character does not fit, nothing more is kept: the text is truncated.
#[derive(Debug)]
pub(super) struct BoundedText {
    text: String,
    /// The most [`json_string_len`] of `text`.
    limit: usize,
    /// [`json_string_len`] of `text`.
    encoded: usize,
    /// The start of a character whose remaining bytes have not arrived yet.
    pending: Vec<u8>,
    truncated: bool,
}

impl BoundedText {
    /// Empty text whose JSON encoding may take up to `limit` bytes.
    pub(super) fn new(limit: usize) -> Self {
        BoundedText {
            text: String::new(),
            limit,
            encoded: 0,
            pending: Vec::new(),
            truncated: false,
        }
    }

    /// Whether a character did not fit (it and everything after it were dropped).
    pub(super) fn truncated(&self) -> bool {
        self.truncated
    }

    /// The text kept so far.
    pub(super) fn as_str(&self) -> &str {
        &self.text
    }

    /// The text kept.
    pub(super) fn into_string(self) -> String {
        self.text
    }

    /// Decodes `bytes` after what was carried over, up to the last complete character, and
    /// keeps what fits; returns where the newly kept text starts in [`Self::as_str`].
    pub(super) fn push(&mut self, mut bytes: &[u8]) -> usize {
        let start = self.text.len();
        if self.truncated {
            return start;
        }
        if !self.pending.is_empty() {
            bytes = self.complete_pending(bytes);
            if self.truncated {
                return start;
            }
        }
        let complete = bytes.len() - incomplete_tail(bytes);
        for chunk in bytes[..complete].utf8_chunks() {
            if !self.keep(chunk.valid()) {
                return start;
            }
            if !chunk.invalid().is_empty() && !self.keep("\u{FFFD}") {
                return start;
            }
        }
        self.pending.extend_from_slice(&bytes[complete..]);
        start
    }

    /// Ends the stream: a character left incomplete becomes a replacement character, if it
    /// fits; returns where the newly kept text starts.
    pub(super) fn finish(&mut self) -> usize {
        let start = self.text.len();
        if !self.pending.is_empty() && !self.truncated {
            self.pending.clear();
            self.keep("\u{FFFD}");
        }
        start
    }

    /// Completes the carried-over character with the first bytes of `bytes` (or finds it
    /// invalid), keeps it, and returns the bytes after the ones it used.
    fn complete_pending<'a>(&mut self, bytes: &'a [u8]) -> &'a [u8] {
        let carried = self.pending.len();
        let taken = bytes.len().min(4 - carried);
        self.pending.extend_from_slice(&bytes[..taken]);
        if incomplete_tail(&self.pending) == self.pending.len() {
            // Still incomplete: everything given is carried over.
            return &[];
        }
        let joined = std::mem::take(&mut self.pending);
        // The carried bytes are the valid start of a sequence, so the first unit decoded from
        // them is that character, or a maximal invalid part that covers all of them.
        let mut buffer = [0; 4];
        let (unit, used) = match joined.utf8_chunks().next() {
            Some(chunk) => match chunk.valid().chars().next() {
                Some(character) => (&*character.encode_utf8(&mut buffer), character.len_utf8()),
                None => ("\u{FFFD}", chunk.invalid().len()),
            },
            None => ("", carried),
        };
        if !self.keep(unit) {
            return &[];
        }
        &bytes[used.saturating_sub(carried).min(bytes.len())..]
    }

    /// Appends the longest prefix of `text` (whole characters) that fits; `false` if not all
    /// of it did (the text is then truncated).
    fn keep(&mut self, text: &str) -> bool {
        let room = self.limit - self.encoded;
        let mut encoded = 0;
        let mut fits = text.len();
        for (index, byte) in text.bytes().enumerate() {
            let cost = usize::from(ENCODED_BYTES[usize::from(byte)]);
            if encoded + cost > room {
                fits = index;
                break;
            }
            encoded += cost;
        }
        let mut whole = fits;
        while !text.is_char_boundary(whole) {
            whole -= 1;
        }
        self.reserve(whole);
        self.text.push_str(&text[..whole]);
        if whole < text.len() {
            self.encoded += json_string_len(&text[..whole]);
            self.truncated = true;
            self.pending.clear();
            return false;
        }
        self.encoded += encoded;
        true
    }

    /// Makes room for `wanted` more bytes, growing by doubling but never past the limit (the
    /// text is never longer than its encoding).
    fn reserve(&mut self, wanted: usize) {
        let text = &mut self.text;
        if text.capacity() - text.len() < wanted {
            let target = (text.capacity() * 2).max(text.len() + wanted);
            text.reserve_exact(target.min(self.limit.max(text.len() + wanted)) - text.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tails() {
        let euro = "€".as_bytes(); // E2 82 AC
        assert_eq!(incomplete_tail(b"abc"), 0);
        assert_eq!(incomplete_tail(&euro[..1]), 1);
        assert_eq!(incomplete_tail(&euro[..2]), 2);
        assert_eq!(incomplete_tail(euro), 0);
        assert_eq!(incomplete_tail(&"😀".as_bytes()[..3]), 3);
        assert_eq!(incomplete_tail(b"\xe2\x41"), 0, "invalid, not incomplete");
        assert_eq!(incomplete_tail(b"\x80\x80"), 0);
        assert_eq!(incomplete_tail(b"\xe0\x80"), 0, "overlong: never valid");
        assert_eq!(incomplete_tail(b"\xff"), 0);
    }

    #[test]
    fn a_character_cut_in_three_comes_out_whole() {
        let mut text = BoundedText::new(usize::MAX);
        let bytes = "a😀b".as_bytes();
        text.push(&bytes[..2]);
        assert_eq!(text.as_str(), "a");
        text.push(&bytes[2..3]);
        assert_eq!(text.as_str(), "a");
        let start = text.push(&bytes[3..]);
        assert_eq!(&text.as_str()[start..], "😀b");
        text.push(&bytes[..3]);
        text.finish();
        assert_eq!(text.as_str(), "a😀ba\u{FFFD}");
        assert!(!text.truncated());
    }

    #[test]
    fn the_limit_counts_json_escapes_and_keeps_whole_characters() {
        // Two NULs are 12 encoded bytes; a third would make 18.
        let mut text = BoundedText::new(13);
        text.push(b"\0\0\0ab");
        assert_eq!(text.as_str(), "\0\0");
        assert!(text.truncated());
        text.push(b"more");
        assert_eq!(text.as_str(), "\0\0", "nothing is kept after the cut");

        let mut exact = BoundedText::new(8);
        exact.push(b"a\"\n\xe2\x82");
        exact.push(b"\xac");
        exact.finish();
        assert_eq!(exact.as_str(), "a\"\n€");
        assert!(!exact.truncated(), "exactly at the limit");

        let mut cut = BoundedText::new(7);
        cut.push("a\"\n€".as_bytes());
        assert_eq!(
            cut.as_str(),
            "a\"\n",
            "a character that does not fit is dropped whole"
        );
        assert!(cut.truncated());

        let mut replacement = BoundedText::new(2);
        replacement.push(b"\xff");
        assert_eq!(replacement.as_str(), "", "U+FFFD takes 3 bytes");
        assert!(replacement.truncated());
    }

    fn chunked(bytes: &[u8], cuts: Vec<usize>, limit: usize) -> BoundedText {
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
        cuts.sort();
        let mut text = BoundedText::new(limit);
        let mut start = 0;
        let mut streamed = String::new();
        for cut in cuts.into_iter().chain([bytes.len()]) {
            let from = text.push(&bytes[start..cut]);
            streamed += &text.as_str()[from..];
            start = cut;
        }
        let from = text.finish();
        streamed += &text.as_str()[from..];
        assert_eq!(streamed, text.as_str(), "the pieces add up to the text");
        text
    }

    fn any_output() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop_oneof![
                any::<u8>(),
                Just(0xE2),
                Just(0x82),
                Just(0xF0),
                Just(0x9F),
                Just(0),
                Just(b'\n'),
                Just(b'"'),
            ],
            0..64,
        )
    }

    proptest! {
        #[test]
        fn chunked_decoding_equals_decoding_at_once(
            bytes in any_output(),
            cuts in prop::collection::vec(0usize..64, 0..8),
        ) {
            let text = chunked(&bytes, cuts, usize::MAX);
            prop_assert_eq!(text.as_str(), String::from_utf8_lossy(&bytes));
            prop_assert!(!text.truncated());
        }

        #[test]
        fn what_is_kept_is_the_longest_prefix_whose_json_fits(
            bytes in any_output(),
            cuts in prop::collection::vec(0usize..64, 0..8),
            limit in 0usize..200,
        ) {
            let text = chunked(&bytes, cuts, limit);
            let whole = String::from_utf8_lossy(&bytes);
            let json = serde_json::to_string(text.as_str()).unwrap();
            prop_assert_eq!(json.len() - 2, json_string_len(text.as_str()));
            prop_assert!(json.len() - 2 <= limit);
            prop_assert!(whole.starts_with(text.as_str()));
            prop_assert_eq!(text.truncated(), text.as_str().len() < whole.len());
            if let Some(next) = whole[text.as_str().len()..].chars().next() {
                let longer = format!("{}{next}", text.as_str());
                prop_assert!(json_string_len(&longer) > limit, "{next:?} would have fit");
            }
        }
    }
}
