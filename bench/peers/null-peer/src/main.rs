//! The physical-limit reference for the peer benchmark: no framework, no JSON parser.
//!
//! It reads stdin in large chunks, splits Content-Length frames, byte-scans each body for its
//! first `"id":` and `"method":"`, and answers every request with a fixed `-32601` (except
//! `initialize` and `shutdown`). Replies to a whole chunk go out in one write. Whatever loadgen
//! measures against this server is loadgen's own ceiling, not a framework's.

use std::io::{self, Read, Write};

use memchr::memmem;

const READ_CHUNK: usize = 256 * 1024;

fn main() {
    let code = match serve(io::stdin().lock(), io::stdout().lock()) {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("null-peer: {err}");
            1
        }
    };
    std::process::exit(code);
}

/// What one frame asks for.
enum Action {
    Reply,
    Ignore,
    Exit,
}

fn serve(mut input: impl Read, mut output: impl Write) -> io::Result<()> {
    let mut pending: Vec<u8> = Vec::with_capacity(READ_CHUNK * 2);
    let mut out: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        let read = input.read(&mut chunk)?;
        if read == 0 {
            output.write_all(&out)?;
            return output.flush();
        }
        pending.extend_from_slice(&chunk[..read]);
        let mut start = 0;
        while let Some((body, next)) = split_frame(&pending[start..]) {
            let action = answer(body, &mut out);
            start += next;
            if matches!(action, Action::Exit) {
                output.write_all(&out)?;
                return output.flush();
            }
        }
        pending.drain(..start);
        if !out.is_empty() {
            output.write_all(&out)?;
            output.flush()?;
            out.clear();
        }
    }
}

/// The body of the first complete frame in `buf` and the offset just past it.
fn split_frame(buf: &[u8]) -> Option<(&[u8], usize)> {
    let header_end = memmem::find(buf, b"\r\n\r\n")?;
    let length = content_length(&buf[..header_end])?;
    let body_start = header_end + 4;
    let body_end = body_start.checked_add(length)?;
    (buf.len() >= body_end).then(|| (&buf[body_start..body_end], body_end))
}

fn content_length(headers: &[u8]) -> Option<usize> {
    headers.split(|&b| b == b'\n').find_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let colon = memchr::memchr(b':', line)?;
        let (name, value) = line.split_at(colon);
        if !name.eq_ignore_ascii_case(b"content-length") {
            return None;
        }
        std::str::from_utf8(&value[1..]).ok()?.trim().parse().ok()
    })
}

fn answer(body: &[u8], out: &mut Vec<u8>) -> Action {
    let method = scan_after(body, b"\"method\":\"").and_then(|rest| {
        let end = memchr::memchr(b'"', rest)?;
        Some(&rest[..end])
    });
    if method == Some(b"exit") {
        return Action::Exit;
    }
    let Some(id) = scan_after(body, b"\"id\":").map(id_token) else {
        return Action::Ignore;
    };
    let tail: &[u8] = match method {
        Some(b"initialize") => br#","result":{"capabilities":{}}}"#,
        Some(b"shutdown") => br#","result":null}"#,
        _ => br#","error":{"code":-32601,"message":"Method not found"}}"#,
    };
    let head: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    let length = head.len() + id.len() + tail.len();
    out.extend_from_slice(b"Content-Length: ");
    out.extend_from_slice(length.to_string().as_bytes());
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(head);
    out.extend_from_slice(id);
    out.extend_from_slice(tail);
    Action::Reply
}

fn scan_after<'a>(body: &'a [u8], needle: &[u8]) -> Option<&'a [u8]> {
    memmem::find(body, needle).map(|at| &body[at + needle.len()..])
}

/// The id's JSON token: a number, or a string without escapes.
fn id_token(rest: &[u8]) -> &[u8] {
    let end = if rest.first() == Some(&b'"') {
        memchr::memchr(b'"', &rest[1..]).map_or(rest.len(), |at| at + 2)
    } else {
        rest.iter()
            .position(|b| matches!(b, b',' | b'}' | b' '))
            .unwrap_or(rest.len())
    };
    &rest[..end]
}
