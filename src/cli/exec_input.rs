//! `wsp exec`'s input: this program's stdin read as it arrives (the command starts before it
//! ends), and the terminal of `-i`.

use std::io::{IsTerminal, Read};
use std::os::fd::AsFd;

use rustix::termios::{OptionalActions, Termios};
use tokio::sync::mpsc;
use wsp_protocol::interactive::PtySize;

/// The most bytes read from stdin at once, well under what one `environment/input` may carry.
const READ_CHUNK: usize = 64 * 1024;

/// The size a terminal is given when this program has none to copy.
const DEFAULT_SIZE: PtySize = PtySize { rows: 24, cols: 80 };

/// This program's stdin, read on a thread of its own as it arrives, as text (UTF-8, invalid
/// bytes replaced; a chunk never ends inside a character). The channel's end is stdin's.
pub(super) fn stdin_chunks() -> mpsc::Receiver<String> {
    let (chunks, received) = mpsc::channel(1);
    // A plain thread: a read that never returns must not keep the runtime from ending.
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buffer = vec![0; READ_CHUNK];
        let mut text = Utf8Chunks::default();
        loop {
            let read = match stdin.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    eprintln!("wsp: reading stdin failed ({error}); the command's input ends here");
                    break;
                }
            };
            let chunk = text.push(&buffer[..read]);
            if !chunk.is_empty() && chunks.blocking_send(chunk).is_err() {
                return;
            }
        }
        let rest = text.finish();
        if !rest.is_empty() {
            let _ = chunks.blocking_send(rest);
        }
    });
    received
}

/// Bytes decoded as UTF-8 with replacement, holding back an incomplete last character.
#[derive(Default)]
pub(super) struct Utf8Chunks {
    pending: Vec<u8>,
}

impl Utf8Chunks {
    /// The text of `bytes` and what was held back, but for an incomplete last character.
    pub(super) fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let complete = self.pending.len() - incomplete_tail(&self.pending);
        let text = String::from_utf8_lossy(&self.pending[..complete]).into_owned();
        self.pending.drain(..complete);
        text
    }

    /// What is still held back, replaced.
    pub(super) fn finish(self) -> String {
        String::from_utf8_lossy(&self.pending).into_owned()
    }
}

/// How many bytes at the end of `bytes` start a UTF-8 character that is not complete yet.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xC0 == 0x80 {
            continue;
        }
        let length = match byte {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        return if length > back { back } else { 0 };
    }
    0
}

/// Whether `wsp exec` without `-i` still runs the command on a terminal: stdin, stdout and
/// stderr are all terminals (as `uv run python` is a REPL there).
pub(super) fn all_terminals() -> bool {
    std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
        && std::io::stderr().is_terminal()
}

/// The size of this program's terminal (stdout's, else stdin's), or 24×80.
pub(super) fn terminal_size() -> PtySize {
    let of = |fd: std::os::fd::BorrowedFd<'_>| {
        rustix::termios::tcgetwinsize(fd)
            .ok()
            .filter(|size| size.ws_row > 0 && size.ws_col > 0)
            .map(|size| PtySize {
                rows: size.ws_row,
                cols: size.ws_col,
            })
    };
    of(std::io::stdout().as_fd())
        .or_else(|| of(std::io::stdin().as_fd()))
        .unwrap_or(DEFAULT_SIZE)
}

/// This program's terminal in raw mode (every key goes to the command's terminal as typed,
/// Ctrl-C included) until dropped, when it is restored.
pub(super) struct RawTerminal {
    saved: Termios,
}

impl RawTerminal {
    /// Puts stdin's terminal in raw mode; `None` when stdin is not a terminal.
    pub(super) fn enter() -> Option<RawTerminal> {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return None;
        }
        let saved = rustix::termios::tcgetattr(stdin.as_fd()).ok()?;
        let mut raw = saved.clone();
        raw.make_raw();
        rustix::termios::tcsetattr(stdin.as_fd(), OptionalActions::Now, &raw).ok()?;
        Some(RawTerminal { saved })
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        let stdin = std::io::stdin();
        let _ = rustix::termios::tcsetattr(stdin.as_fd(), OptionalActions::Now, &self.saved);
    }
}

#[cfg(test)]
mod tests {
    use super::Utf8Chunks;

    #[test]
    fn a_character_split_across_reads_is_sent_whole() {
        let mut text = Utf8Chunks::default();
        let snowman = "☃".as_bytes();
        assert_eq!(text.push(&[b'a', snowman[0]]), "a");
        assert_eq!(text.push(&snowman[1..2]), "");
        assert_eq!(text.push(&[snowman[2], b'b']), "☃b");
        assert_eq!(text.push(&[0xFF, b'c']), "\u{FFFD}c");
        assert_eq!(text.push(&[0xE2]), "");
        assert_eq!(text.finish(), "\u{FFFD}");
    }
}
