//! Streams of good frames with one corruption in them, for the recovery property: a corrupted
//! frame costs at most itself and the frame right after it.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use wsp_server::codec::MAX_HEADER_BYTES;

/// How a good frame writes its header block.
#[derive(Debug, Clone, Copy)]
pub enum HeaderStyle {
    Plain,
    LowerCase,
    ContentTypeFirst,
    ContentTypeAfter,
}

/// One good frame: a small JSON request whose id no other frame has.
#[derive(Debug, Clone)]
pub struct GoodFrame {
    pub text: String,
    style: HeaderStyle,
}

impl GoodFrame {
    fn new(id: usize, note: &str, style: HeaderStyle) -> Self {
        let note = serde_json::to_string(note).expect("a string serialises");
        let text =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m","params":{{"note":{note}}}}}"#);
        Self { text, style }
    }

    fn header(&self, length: &str) -> Vec<u8> {
        let content_type = "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n";
        match self.style {
            HeaderStyle::Plain => format!("Content-Length: {length}\r\n\r\n"),
            HeaderStyle::LowerCase => format!("content-length: {length}\r\n\r\n"),
            HeaderStyle::ContentTypeFirst => {
                format!("{content_type}Content-Length: {length}\r\n\r\n")
            }
            HeaderStyle::ContentTypeAfter => {
                format!("Content-Length: {length}\r\n{content_type}\r\n")
            }
        }
        .into_bytes()
    }

    /// The frame with its payload's byte length, as a correct client writes it.
    pub fn bytes(&self) -> Vec<u8> {
        self.with_length(&self.text.len().to_string())
    }

    fn with_length(&self, length: &str) -> Vec<u8> {
        let mut bytes = self.header(length);
        bytes.extend_from_slice(self.text.as_bytes());
        bytes
    }
}

/// One way a frame can be damaged.
#[derive(Debug, Clone)]
pub enum Corruption {
    /// `Content-Length` this many bytes too short (down to 0).
    ShortLength(usize),
    /// `Content-Length` counted in characters, for a payload with multi-byte characters.
    CharCount,
    /// The header block padded to this many bytes, past the limit.
    OversizedHeader(usize),
    /// The header block ended by one of a few wrong line ends.
    BadLineEnd(&'static str),
    /// A NUL at some position in the `Content-Length` value.
    NulInValue(Index),
    /// One byte of the header block replaced.
    ByteFlip(Index, u8),
    /// The frame cut short after this many of its bytes, the rest of the stream following.
    Truncated(Index),
    /// Bytes inserted at some position of the frame (at 0: just before it).
    Garbage(Index, Vec<u8>),
    /// The header block sent twice.
    DuplicatedHeader,
    /// The `Content-Length` line sent twice in the block.
    DuplicatedLine,
    /// `Content-Length` off by this much (a negative total becomes 0).
    WrongLength(i64),
}

impl Corruption {
    /// The damaged bytes that replace `frame` in the stream.
    pub fn apply(&self, frame: &GoodFrame) -> Vec<u8> {
        let good = frame.bytes();
        let header_len = good.len() - frame.text.len();
        let length = frame.text.len();
        match self {
            Corruption::ShortLength(k) => frame.with_length(&length.saturating_sub(*k).to_string()),
            Corruption::CharCount => {
                let wide = GoodFrame::new(0, "é-ü-環境-🦀", frame.style);
                wide.with_length(&wide.text.chars().count().to_string())
            }
            Corruption::OversizedHeader(size) => {
                let mut bytes = format!("Content-Length: {length}\r\nX-Padding: ").into_bytes();
                bytes.resize(size - 4, b'p');
                bytes.extend_from_slice(b"\r\n\r\n");
                bytes.extend_from_slice(frame.text.as_bytes());
                bytes
            }
            Corruption::BadLineEnd(ending) => {
                let mut bytes = format!("Content-Length: {length}{ending}").into_bytes();
                bytes.extend_from_slice(frame.text.as_bytes());
                bytes
            }
            Corruption::NulInValue(at) => {
                let mut value = length.to_string();
                value.insert(at.index(value.len() + 1), '\0');
                frame.with_length(&value)
            }
            Corruption::ByteFlip(at, byte) => {
                let mut bytes = good;
                bytes[at.index(header_len)] = *byte;
                bytes
            }
            Corruption::Truncated(keep) => good[..keep.index(good.len())].to_vec(),
            Corruption::Garbage(at, garbage) => {
                let mut bytes = good;
                let at = at.index(bytes.len());
                bytes.splice(at..at, garbage.iter().copied());
                bytes
            }
            Corruption::DuplicatedHeader => {
                let mut bytes = good[..header_len].to_vec();
                bytes.extend_from_slice(&good);
                bytes
            }
            Corruption::DuplicatedLine => {
                let mut bytes = format!("Content-Length: {length}\r\n").into_bytes();
                bytes.extend(good);
                bytes
            }
            Corruption::WrongLength(delta) => {
                let wrong = (length as i64).saturating_add(*delta).max(0);
                frame.with_length(&wrong.to_string())
            }
        }
    }
}

/// Text for a payload's `note`, rich in what the decoder looks for (escaped by JSON).
fn note() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => any::<char>().prop_map(String::from),
        1 => Just("Content-Length: 12".to_owned()),
        1 => Just("\r\n".to_owned()),
        1 => Just(":".to_owned()),
    ];
    vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

fn style() -> impl Strategy<Value = HeaderStyle> {
    prop_oneof![
        3 => Just(HeaderStyle::Plain),
        1 => Just(HeaderStyle::LowerCase),
        1 => Just(HeaderStyle::ContentTypeFirst),
        1 => Just(HeaderStyle::ContentTypeAfter),
    ]
}

/// Between `min` and `max` good frames, with ids 0, 1, 2, ...
pub fn good_frames(min: usize, max: usize) -> impl Strategy<Value = Vec<GoodFrame>> {
    vec((note(), style()), min..max).prop_map(|frames| {
        let frames = frames.into_iter().enumerate();
        frames
            .map(|(id, (note, style))| GoodFrame::new(id, &note, style))
            .collect()
    })
}

/// Bytes rich in the tokens the decoder reacts to, sometimes longer than a header block may be.
fn garbage() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        4 => vec(any::<u8>(), 1..8),
        2 => Just(b"\r\n".to_vec()),
        1 => Just(b"\r\n\r\n".to_vec()),
        2 => Just(b"Content-Length: ".to_vec()),
        1 => Just(b"content-length:".to_vec()),
        2 => "[0-9]{1,4}".prop_map(String::into_bytes),
        1 => Just(b"{\"id\":7}".to_vec()),
        1 => Just(vec![b'g'; MAX_HEADER_BYTES + 100]),
    ];
    vec(token, 1..24).prop_map(|tokens| tokens.concat())
}

pub fn corruption() -> impl Strategy<Value = Corruption> {
    let line_ends = prop::sample::select(vec!["\r\n\r", "\r\r", "\r", "\n\n", "\r\n", ""]);
    let wrong_by = prop_oneof![-64i64..0, 1i64..64, 64i64..100_000, Just(1_000_000_000_000)];
    prop_oneof![
        (1usize..40).prop_map(Corruption::ShortLength),
        Just(Corruption::CharCount),
        (MAX_HEADER_BYTES + 1..MAX_HEADER_BYTES + 3000).prop_map(Corruption::OversizedHeader),
        line_ends.prop_map(Corruption::BadLineEnd),
        any::<Index>().prop_map(Corruption::NulInValue),
        (any::<Index>(), any::<u8>()).prop_map(|(at, byte)| Corruption::ByteFlip(at, byte)),
        any::<Index>().prop_map(Corruption::Truncated),
        (any::<Index>(), garbage()).prop_map(|(at, bytes)| Corruption::Garbage(at, bytes)),
        Just(Corruption::DuplicatedHeader),
        Just(Corruption::DuplicatedLine),
        wrong_by.prop_map(Corruption::WrongLength),
    ]
}
