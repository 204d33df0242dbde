//! The WebSocket token: from `--token-file` (readable by its owner only), else `WSP_TOKEN`,
//! else made now (32 random bytes, hex) and written to `<state-dir>/server.token`, mode 0600.
//! It is never taken from the command line, and never logged.

use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use wsp_server::transport::websocket::Token;

/// The file a made token is written to, in the state directory.
pub const TOKEN_FILE: &str = "server.token";

pub(super) fn load(token_file: Option<&Path>, state_dir: &Path) -> io::Result<Token> {
    if let Some(path) = token_file {
        let mode = std::fs::metadata(path)?.mode();
        if mode & 0o077 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} may be read by group or others (mode {:o}); chmod 600 it",
                    path.display(),
                    mode & 0o7777
                ),
            ));
        }
        let text = std::fs::read_to_string(path)?;
        return Token::new(&text).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} holds no token", path.display()),
            )
        });
    }
    if let Some(token) = std::env::var("WSP_TOKEN").ok().and_then(|t| Token::new(&t)) {
        return Ok(token);
    }
    let bytes: [u8; 32] = rand::random();
    let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let path = state_dir.join(TOKEN_FILE);
    let _ = std::fs::remove_file(&path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    tracing::warn!(path = %path.display(), "the WebSocket token was written here");
    eprintln!("the WebSocket token is in {}", path.display());
    Token::new(&text).ok_or_else(|| io::Error::other("an empty token"))
}
