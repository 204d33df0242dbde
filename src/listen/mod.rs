//! `wsp serve --listen`: many clients at once, on Unix sockets and WebSockets, instead of one
//! client on stdio.

mod address;
mod token;

pub use address::{ListenAddress, ListenConfig};

use std::io;
use std::path::Path;

use wsp_server::transport::unix::UnixListener;
use wsp_server::transport::websocket::{tls_from_pem, WebSocketConfig, WebSocketListener};
use wsp_server::transport::{BoxListener, ConnectionSlots};

/// Binds every listener `config` names, each logging one `listening on …` line on stderr.
/// Must be polled inside the server's runtime.
pub async fn bind(
    config: &ListenConfig,
    state_dir: &Path,
    max_frame_bytes: usize,
) -> io::Result<Vec<BoxListener>> {
    let slots = ConnectionSlots::new(config.max_connections);
    let mut listeners = Vec::with_capacity(config.addresses.len());
    let mut token = None;
    for address in &config.addresses {
        let listener = match address {
            ListenAddress::Unix(path) => {
                let listener = UnixListener::bind(path)?
                    .allow_uids(config.allowed_uids.iter().copied())
                    .with_slots(slots.clone());
                eprintln!("listening on {address}");
                BoxListener::new(address.to_string(), listener)
            }
            ListenAddress::WebSocket { tls, host, port } => {
                if token.is_none() {
                    token = Some(token::load(config.token_file.as_deref(), state_dir)?);
                }
                let token = token.clone().ok_or_else(|| io::Error::other("no token"))?;
                let mut websocket = WebSocketConfig::new(host.clone(), *port, token);
                websocket.allowed_origins = config.allowed_origins.clone();
                websocket.allowed_hosts = config.allowed_hosts.clone();
                websocket.max_frame_bytes = max_frame_bytes;
                websocket.slots = slots.clone();
                if *tls {
                    let Some((cert, key)) = &config.tls else {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!("{address} needs --tls-cert and --tls-key"),
                        ));
                    };
                    websocket.tls = Some(tls_from_pem(cert, key)?);
                }
                let listener = WebSocketListener::bind(websocket)
                    .await
                    .map_err(|e| io::Error::new(e.kind(), format!("{address}: {e}")))?;
                let bound = ListenAddress::WebSocket {
                    tls: *tls,
                    host: host.clone(),
                    port: listener.local_addr().port(),
                };
                eprintln!("listening on {bound}");
                BoxListener::new(bound.to_string(), listener)
            }
        };
        listeners.push(listener);
    }
    Ok(listeners)
}
