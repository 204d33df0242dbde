//! `wsp serve --listen`: many clients at once, on Unix sockets (and WebSocket, see the
//! framework's transports), instead of one client on stdio.

mod address;
mod unix;

pub use address::{ListenAddress, ListenConfig};

use std::io;

use wsp_server::transport::{BoxListener, ConnectionSlots};

/// Binds every listener `config` names, each logging one `listening on …` line on stderr.
/// Must run inside the server's runtime.
pub fn bind(config: &ListenConfig) -> io::Result<Vec<BoxListener>> {
    let slots = ConnectionSlots::new(config.max_connections);
    let mut listeners = Vec::with_capacity(config.addresses.len());
    for address in &config.addresses {
        let listener = match address {
            ListenAddress::Unix(path) => unix::bind(path, config, slots.clone())?,
            ListenAddress::WebSocket { .. } => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("{address}: WebSocket listeners are not built into this wsp"),
                ))
            }
        };
        eprintln!("listening on {address}");
        listeners.push(listener);
    }
    Ok(listeners)
}
