//! Content-Length frames in and out, and a scan of a message's top-level members that finds
//! its `id`, whether it is a result or an error (and the error's code), or a server message,
//! without building a JSON tree.

use std::io::{self, Read};

use memchr::memmem;

/// Frames larger than this are treated as a protocol error rather than buffered.
const MAX_FRAME: usize = 64 * 1024 * 1024;
const READ_CHUNK: usize = 256 * 1024;

/// Reads Content-Length frames from a byte stream through one reusable buffer.
pub struct FrameReader<R> {
    source: R,
    data: Vec<u8>,
    start: usize,
    end: usize,
}

impl<R: Read> FrameReader<R> {
    pub fn new(source: R) -> Self {
        Self {
            source,
            data: vec![0; READ_CHUNK * 4],
            start: 0,
            end: 0,
        }
    }

    pub fn source(&self) -> &R {
        &self.source
    }

    /// One `read(2)` into the buffer; `Ok(0)` is EOF.
    pub fn fill(&mut self) -> io::Result<usize> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.data.len() - self.end < READ_CHUNK {
            self.data.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.data.len() - self.end < READ_CHUNK {
                self.data.resize(self.data.len() * 2, 0);
            }
        }
        loop {
            match self.source.read(&mut self.data[self.end..]) {
                Ok(read) => {
                    self.end += read;
                    return Ok(read);
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            }
        }
    }

    /// The next complete frame's body among the bytes already read, if there is one.
    pub fn next_frame(&mut self) -> io::Result<Option<&[u8]>> {
        let buffered = &self.data[self.start..self.end];
        let Some(header_end) = memmem::find(buffered, b"\r\n\r\n") else {
            if buffered.len() > 64 * 1024 {
                return Err(invalid("no end of header within 64 KiB"));
            }
            return Ok(None);
        };
        let length = content_length(&buffered[..header_end])
            .ok_or_else(|| invalid("frame without a valid Content-Length"))?;
        if length > MAX_FRAME {
            return Err(invalid("frame larger than 64 MiB"));
        }
        let body_start = header_end + 4;
        if buffered.len() < body_start + length {
            return Ok(None);
        }
        let body = self.start + body_start..self.start + body_start + length;
        self.start = body.end;
        Ok(Some(&self.data[body]))
    }

    /// Blocks until a frame arrives; `Ok(None)` at EOF.
    pub fn read_frame(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(body) = self.next_frame()? {
                return Ok(Some(body.to_vec()));
            }
            if self.fill()? == 0 {
                return Ok(None);
            }
        }
    }
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

fn content_length(headers: &[u8]) -> Option<usize> {
    headers.split(|&b| b == b'\n').find_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let colon = memchr::memchr(b':', line)?;
        let (name, value) = line.split_at(colon);
        if !name.trim_ascii().eq_ignore_ascii_case(b"content-length") {
            return None;
        }
        std::str::from_utf8(&value[1..]).ok()?.trim().parse().ok()
    })
}

/// Appends one frame holding `body` to `out`.
pub fn push_frame(out: &mut Vec<u8>, body: &[u8]) {
    out.extend_from_slice(b"Content-Length: ");
    push_decimal(out, body.len() as u64);
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(body);
}

pub fn push_decimal(out: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// The members of a message that loadgen checks.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// `Some` when the id is a non-negative integer.
    pub id: Option<u64>,
    pub has_id: bool,
    pub has_method: bool,
    pub has_result: bool,
    /// `Some(code)` for an error object; `Some(None)` for an error without an integer code.
    pub error: Option<Option<i64>>,
}

/// Scans a message's top-level members; `None` when the body is not a JSON object.
pub fn scan(body: &[u8]) -> Option<Scan> {
    let mut cursor = Cursor { bytes: body, at: 0 };
    let mut found = Scan::default();
    cursor.members(|key, cursor| match key {
        b"id" => {
            found.has_id = true;
            found.id = cursor.unsigned();
            if found.id.is_none() {
                cursor.skip_value()?;
            }
            Some(())
        }
        b"method" => {
            found.has_method = true;
            cursor.skip_value()
        }
        b"result" => {
            found.has_result = true;
            cursor.skip_value()
        }
        b"error" => {
            let mut code = None;
            cursor.members(|key, cursor| {
                if key == b"code" {
                    code = cursor.signed();
                    if code.is_some() {
                        return Some(());
                    }
                }
                cursor.skip_value()
            })?;
            found.error = Some(code);
            Some(())
        }
        _ => cursor.skip_value(),
    })?;
    cursor.whitespace();
    (cursor.at == body.len()).then_some(found)
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.whitespace();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// An object's members, each handed to `member` with the cursor at its value.
    fn members(&mut self, mut member: impl FnMut(&'a [u8], &mut Self) -> Option<()>) -> Option<()> {
        self.expect(b'{')?;
        self.whitespace();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.whitespace();
            let key = self.string()?;
            self.expect(b':')?;
            self.whitespace();
            member(key, self)?;
            self.whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string's raw contents (escapes left in place).
    fn string(&mut self) -> Option<&'a [u8]> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.at + 1;
        let mut at = start;
        loop {
            at += memchr::memchr2(b'"', b'\\', &self.bytes[at..])?;
            if self.bytes[at] == b'\\' {
                at += 2;
                continue;
            }
            self.at = at + 1;
            return Some(&self.bytes[start..at]);
        }
    }

    fn scalar(&mut self) -> &'a [u8] {
        let start = self.at;
        while let Some(byte) = self.peek() {
            if matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                break;
            }
            self.at += 1;
        }
        &self.bytes[start..self.at]
    }

    /// A non-negative integer; leaves the cursor untouched when the value is anything else.
    fn unsigned(&mut self) -> Option<u64> {
        let start = self.at;
        let token = self.scalar();
        let value = std::str::from_utf8(token).ok()?.parse().ok();
        if value.is_none() {
            self.at = start;
        }
        value
    }

    fn signed(&mut self) -> Option<i64> {
        let start = self.at;
        let token = self.scalar();
        let value = std::str::from_utf8(token).ok()?.parse().ok();
        if value.is_none() {
            self.at = start;
        }
        value
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' | b'[' => self.skip_nested(),
            _ => (!self.scalar().is_empty()).then_some(()),
        }
    }

    fn skip_nested(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        self.at += 1;
                        return Some(());
                    }
                }
                _ => {}
            }
            self.at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_top_level_members_only() {
        let body = br#"{"jsonrpc":"2.0","result":{"id":7,"x":["}",{"error":1}]},"id":42}"#;
        let found = scan(body).unwrap();
        assert_eq!(found.id, Some(42));
        assert!(found.has_result && found.error.is_none() && !found.has_method);
    }

    #[test]
    fn reads_error_codes() {
        let body = br#"{ "id" : 3 , "error" : { "message" : "a \"q\" }", "code" : -32601 } }"#;
        let found = scan(body).unwrap();
        assert_eq!((found.id, found.error), (Some(3), Some(Some(-32601))));
    }

    #[test]
    fn string_ids_and_notifications() {
        let found = scan(br#"{"id":"abc","result":null}"#).unwrap();
        assert!(found.has_id && found.id.is_none());
        let found = scan(br#"{"jsonrpc":"2.0","method":"window/logMessage","params":{}}"#);
        assert!(found.unwrap().has_method);
    }

    #[test]
    fn rejects_malformed_bodies() {
        for body in [
            &br#"{"id":1"#[..],
            b"[1]",
            br#"{"id":1}x"#,
            b"",
            br#"{"id":}"#,
        ] {
            assert_eq!(scan(body), None, "{:?}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn splits_frames_across_reads() {
        let mut wire = Vec::new();
        push_frame(&mut wire, br#"{"id":1,"result":1}"#);
        push_frame(&mut wire, br#"{"id":2,"result":2}"#);
        let (head, tail) = wire.split_at(30);
        let mut reader = FrameReader::new(io::Cursor::new(head.to_vec()).chain(tail));
        assert_eq!(
            reader.read_frame().unwrap().unwrap(),
            br#"{"id":1,"result":1}"#
        );
        assert_eq!(
            reader.read_frame().unwrap().unwrap(),
            br#"{"id":2,"result":2}"#
        );
        assert_eq!(reader.read_frame().unwrap(), None);
    }
}
