//! Decoding output that arrives in pieces, without splitting a character across two pieces.

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

/// Decodes a stream of bytes chunk by chunk as UTF-8 with replacement characters. Bytes of a
/// character cut by a chunk boundary are carried over to the next chunk, so the decoded
/// chunks concatenated equal the lossy decoding of all the bytes at once.
#[derive(Debug, Default)]
pub(super) struct Utf8Chunks {
    pending: Vec<u8>,
}

impl Utf8Chunks {
    /// The text of `bytes` (after what was carried over) up to the last complete character.
    pub(super) fn push(&mut self, bytes: &[u8]) -> String {
        let joined;
        let data = if self.pending.is_empty() {
            bytes
        } else {
            self.pending.extend_from_slice(bytes);
            joined = std::mem::take(&mut self.pending);
            &joined[..]
        };
        let complete = data.len() - incomplete_tail(data);
        let text = String::from_utf8_lossy(&data[..complete]).into_owned();
        self.pending = data[complete..].to_vec();
        text
    }

    /// Forgets a carried-over partial character (output was cut there on purpose).
    pub(super) fn drop_pending(&mut self) {
        self.pending.clear();
    }

    /// What is left at the end of the stream: a replacement character for a partial one.
    pub(super) fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        text
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
        let mut chunks = Utf8Chunks::default();
        let bytes = "a😀b".as_bytes();
        assert_eq!(chunks.push(&bytes[..2]), "a");
        assert_eq!(chunks.push(&bytes[2..3]), "");
        assert_eq!(chunks.push(&bytes[3..]), "😀b");
        assert_eq!(chunks.finish(), "");
        assert_eq!(chunks.push(&bytes[..3]), "a");
        assert_eq!(chunks.finish(), "\u{FFFD}");
    }

    proptest! {
        #[test]
        fn chunked_decoding_equals_decoding_at_once(
            bytes in prop::collection::vec(
                prop_oneof![any::<u8>(), Just(0xE2), Just(0x82), Just(0xF0), Just(0x9F)],
                0..64,
            ),
            cuts in prop::collection::vec(0usize..64, 0..8),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort();
            let mut chunks = Utf8Chunks::default();
            let mut text = String::new();
            let mut start = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                text += &chunks.push(&bytes[start..cut]);
                start = cut;
            }
            text += &chunks.finish();
            prop_assert_eq!(text, String::from_utf8_lossy(&bytes).into_owned());
        }
    }
}
