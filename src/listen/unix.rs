//! `--listen unix:PATH`: the framework's [`UnixListener`], with the server's `--allow-uid`
//! users and its shared `--max-connections` slots.

use std::io;
use std::path::Path;

use wsp_server::transport::unix::UnixListener;
use wsp_server::transport::{BoxListener, ConnectionSlots};

use super::ListenConfig;

/// Binds the socket at `path` (see [`UnixListener::bind`] for what is refused).
pub(super) fn bind(
    path: &Path,
    config: &ListenConfig,
    slots: ConnectionSlots,
) -> io::Result<BoxListener> {
    let listener = UnixListener::bind(path)?
        .allow_uids(config.allowed_uids.iter().copied())
        .with_slots(slots);
    Ok(BoxListener::new(
        format!("unix:{}", path.display()),
        listener,
    ))
}
