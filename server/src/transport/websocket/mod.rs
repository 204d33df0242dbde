//! WebSocket (RFC 6455) as a transport: one JSON-RPC message or batch per text frame, with no
//! `Content-Length` header (the convention of vscode-ws-jsonrpc). Feature `websocket`; `wss://`
//! with `websocket-tls`.
//!
//! A network listener runs commands for whoever gets through, so it is locked down by default
//! and the types make it hard to do otherwise:
//! - there is no listener without a [`Token`]; a client presents it in `Authorization: Bearer`
//!   or, for browsers that can't set headers, as the subprotocol `bearer.<token>` beside `wsp`
//!   (the server then selects `wsp`). Tokens are compared in constant time; a token in the
//!   query string is never looked at;
//! - an upgrade is checked in this order, each answered before the next is looked at: path `/`
//!   (else 404), every `Origin` allowed exactly (else 403; none is fine), exactly one `Host`
//!   (else 400) naming a loopback name, the listen address or an allowed host (else 403: DNS
//!   rebinding), the token (else 401), a free connection slot (else 503). [`judge_upgrade`]
//!   is all of it but the slot, as a pure function;
//! - plain `ws://` binds loopback addresses only; anything else needs TLS;
//! - a message over the frame limit closes the connection with 1009 before it is buffered
//!   whole, a binary frame with 1003, text that is not UTF-8 with 1007;
//! - the server pings every [`WebSocketConfig::ping_interval`] and closes a peer that has not
//!   answered within [`WebSocketConfig::pong_timeout`];
//! - a handshake that takes longer than [`WebSocketConfig::handshake_timeout`] is dropped, and
//!   handshakes run beside each other, so a slow client holds up nobody.

mod connection;
mod handshake;
mod listener;
#[cfg(feature = "websocket-tls")]
mod tls;

pub use connection::{PeerAddress, WebSocketConnection};
pub use handshake::{judge_upgrade, Token, Verdict};
pub use listener::WebSocketListener;
#[cfg(feature = "websocket-tls")]
pub use tls::tls_from_pem;
/// An HTTP upgrade request, as the server parsed it.
pub use tokio_tungstenite::tungstenite::handshake::server::Request as UpgradeRequest;

use std::time::Duration;

use super::ConnectionSlots;

/// How a [`WebSocketListener`] listens.
#[derive(Debug, Clone)]
pub struct WebSocketConfig {
    /// The host to bind: an address or a name (`127.0.0.1`, `::1`, `localhost`, ...).
    pub host: String,
    /// The port; 0 picks a free one ([`WebSocketListener::local_addr`] says which).
    pub port: u16,
    /// What clients must present.
    pub token: Token,
    /// `Origin`s allowed, exactly as browsers send them (`https://app.example`); a request
    /// with any other `Origin` is refused, one without `Origin` is not a browser's.
    pub allowed_origins: Vec<String>,
    /// Host names accepted in `Host` besides loopback names and the listen host.
    pub allowed_hosts: Vec<String>,
    /// The largest message accepted, in bytes.
    pub max_frame_bytes: usize,
    /// The connection slots this listener shares with the server's other listeners.
    pub slots: ConnectionSlots,
    /// How often the server pings (default 30 s).
    pub ping_interval: Duration,
    /// How long a ping may go unanswered before the peer is closed (default 30 s).
    pub pong_timeout: Duration,
    /// How long an upgrade may take (default 10 s).
    pub handshake_timeout: Duration,
    /// TLS (`wss://`); `None`: plain `ws://`, loopback only.
    #[cfg(feature = "websocket-tls")]
    pub tls: Option<std::sync::Arc<tokio_rustls::rustls::ServerConfig>>,
}

impl WebSocketConfig {
    /// A listener on `host:port` for clients presenting `token`, with the defaults: no
    /// origin or extra host allowed, 64 MiB messages, 256 connections, pings every 30 s.
    pub fn new(host: impl Into<String>, port: u16, token: Token) -> Self {
        WebSocketConfig {
            host: host.into(),
            port,
            token,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_frame_bytes: crate::codec::DEFAULT_MAX_FRAME_BYTES,
            slots: ConnectionSlots::new(256),
            ping_interval: Duration::from_secs(30),
            pong_timeout: Duration::from_secs(30),
            handshake_timeout: Duration::from_secs(10),
            #[cfg(feature = "websocket-tls")]
            tls: None,
        }
    }

    fn is_tls(&self) -> bool {
        #[cfg(feature = "websocket-tls")]
        {
            self.tls.is_some()
        }
        #[cfg(not(feature = "websocket-tls"))]
        {
            false
        }
    }
}

/// Whether `host` (a name or an address, IPv6 without brackets) is a loopback one.
pub fn is_loopback(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|address| address.is_loopback())
}
