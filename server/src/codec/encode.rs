//! The encoder: `Content-Length: N\r\n\r\n` followed by the payload, nothing else.

use std::io;

use bytes::{BufMut, Bytes, BytesMut};
use tokio_util::codec::Encoder;

use super::FrameCodec;

/// Appends one frame, header and payload, to `dst`.
pub(super) fn write_frame(payload: &[u8], dst: &mut BytesMut) {
    let mut digits = [0u8; 20];
    let length = decimal(payload.len(), &mut digits);
    let header_len = "Content-Length: ".len() + length.len() + "\r\n\r\n".len();
    dst.reserve(header_len + payload.len());
    dst.put_slice(b"Content-Length: ");
    dst.put_slice(length);
    dst.put_slice(b"\r\n\r\n");
    dst.put_slice(payload);
}

/// `n` in decimal ASCII, written at the end of `digits` (20 digits hold any `u64`).
fn decimal(mut n: usize, digits: &mut [u8; 20]) -> &[u8] {
    let mut start = digits.len();
    loop {
        start -= 1;
        // `n % 10` is below 10: the cast keeps it whole.
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &digits[start..];
        }
    }
}

impl Encoder<&str> for FrameCodec {
    type Error = io::Error;

    fn encode(&mut self, payload: &str, dst: &mut BytesMut) -> io::Result<()> {
        write_frame(payload.as_bytes(), dst);
        Ok(())
    }
}

impl Encoder<String> for FrameCodec {
    type Error = io::Error;

    fn encode(&mut self, payload: String, dst: &mut BytesMut) -> io::Result<()> {
        write_frame(payload.as_bytes(), dst);
        Ok(())
    }
}

impl Encoder<Bytes> for FrameCodec {
    type Error = io::Error;

    fn encode(&mut self, payload: Bytes, dst: &mut BytesMut) -> io::Result<()> {
        write_frame(&payload, dst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_only_the_content_length_header() {
        let mut codec = FrameCodec::new();
        let mut dst = BytesMut::new();
        codec.encode("{}", &mut dst).unwrap();
        codec.encode(String::from("é"), &mut dst).unwrap();
        codec.encode(Bytes::new(), &mut dst).unwrap();
        assert_eq!(
            &dst[..],
            b"Content-Length: 2\r\n\r\n{}Content-Length: 2\r\n\r\n\xc3\xa9Content-Length: 0\r\n\r\n"
        );
    }

    #[test]
    fn lengths_are_plain_decimal() {
        let mut digits = [0u8; 20];
        for n in [0, 7, 10, 99, 100, 12_345, usize::MAX] {
            assert_eq!(decimal(n, &mut digits), n.to_string().as_bytes());
        }
    }
}
