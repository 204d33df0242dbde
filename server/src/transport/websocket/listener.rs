//! Accepting WebSocket connections: TCP (and TLS) accepted in one task, each upgrade in a task
//! of its own with a deadline, the admitted ones handed out in order.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig as ProtocolConfig;

use super::connection::WebSocketConnection;
use super::{handshake, is_loopback, WebSocketConfig};
use crate::transport::Listener;

/// Upgrades done and waiting for [`Listener::accept`].
const ADMITTED_BACKLOG: usize = 16;

/// How much tungstenite reads at once; larger messages take several reads.
const READ_BUFFER_BYTES: usize = 16 * 1024;

/// Accepts WebSocket connections (see the [module docs](super)).
#[derive(Debug)]
pub struct WebSocketListener {
    local_addr: SocketAddr,
    admitted: mpsc::Receiver<WebSocketConnection>,
    accepting: tokio::task::AbortHandle,
}

impl Drop for WebSocketListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl WebSocketListener {
    /// Binds `config.host:config.port`. A plain (`ws://`) listener on a host that is not a
    /// loopback one is refused. Must be called inside a tokio runtime.
    pub async fn bind(config: WebSocketConfig) -> io::Result<Self> {
        if !config.is_tls() && !is_loopback(&config.host) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "ws:// listens on loopback addresses only, not {}; use wss:// (TLS)",
                    config.host
                ),
            ));
        }
        let listener = TcpListener::bind((config.host.as_str(), config.port)).await?;
        let local_addr = listener.local_addr()?;
        let (admit, admitted) = mpsc::channel(ADMITTED_BACKLOG);
        let accepting = tokio::spawn(accept(listener, Arc::new(config), admit)).abort_handle();
        Ok(WebSocketListener {
            local_addr,
            admitted,
            accepting,
        })
    }

    /// The address bound (the port picked, when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }
}

impl Listener for WebSocketListener {
    type Connection = WebSocketConnection;

    async fn accept(&mut self) -> io::Result<WebSocketConnection> {
        self.admitted
            .recv()
            .await
            .ok_or_else(|| io::Error::other("the WebSocket listener stopped accepting"))
    }
}

async fn accept(
    listener: TcpListener,
    config: Arc<WebSocketConfig>,
    admit: mpsc::Sender<WebSocketConnection>,
) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::debug!(%error, "a TCP connection failed while being accepted");
                continue;
            }
        };
        let (config, admit) = (Arc::clone(&config), admit.clone());
        tokio::spawn(async move {
            let upgraded =
                tokio::time::timeout(config.handshake_timeout, upgrade(stream, peer, &config));
            match upgraded.await {
                Ok(Ok(connection)) => {
                    let _ = admit.send(connection).await;
                }
                Ok(Err(error)) => tracing::debug!(%peer, %error, "a WebSocket upgrade failed"),
                Err(_) => tracing::debug!(%peer, "a WebSocket upgrade took too long"),
            }
        });
    }
}

async fn upgrade(
    stream: TcpStream,
    peer: SocketAddr,
    config: &WebSocketConfig,
) -> io::Result<WebSocketConnection> {
    // Each answer is one write: sent at once, never held back for the peer's ACK of the last.
    stream.set_nodelay(true)?;
    let stream = secure(stream, config).await?;
    // tungstenite zero-fills its read buffer up to this size before every read: its default
    // (128 KiB) costs every message a 128 KiB memset and every idle connection 128 KiB.
    let protocol = ProtocolConfig::default()
        .read_buffer_size(READ_BUFFER_BYTES)
        .max_message_size(Some(config.max_frame_bytes))
        .max_frame_size(Some(config.max_frame_bytes));
    let mut admitted = None;
    #[allow(
        clippy::result_large_err,
        reason = "tungstenite's callback answers this type"
    )]
    let callback = |request: &_, response| {
        let (response, held) = handshake::check(config, request, response)?;
        admitted = Some(held);
        Ok(response)
    };
    let socket = tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(protocol))
        .await
        .map_err(io::Error::other)?;
    let admitted = admitted.ok_or_else(|| io::Error::other("the upgrade admitted nothing"))?;
    Ok(WebSocketConnection::new(
        socket,
        peer,
        admitted.slot,
        config,
    ))
}

/// A TCP stream, or TLS over one.
#[cfg(feature = "websocket-tls")]
pub type MaybeTls =
    tokio_util::either::Either<TcpStream, tokio_rustls::server::TlsStream<TcpStream>>;
/// A TCP stream (TLS needs the `websocket-tls` feature).
#[cfg(not(feature = "websocket-tls"))]
pub type MaybeTls = TcpStream;

#[cfg(feature = "websocket-tls")]
async fn secure(stream: TcpStream, config: &WebSocketConfig) -> io::Result<MaybeTls> {
    use tokio_util::either::Either;
    match &config.tls {
        Some(tls) => {
            let acceptor = tokio_rustls::TlsAcceptor::from(Arc::clone(tls));
            Ok(Either::Right(acceptor.accept(stream).await?))
        }
        None => Ok(Either::Left(stream)),
    }
}

#[cfg(not(feature = "websocket-tls"))]
async fn secure(stream: TcpStream, _config: &WebSocketConfig) -> io::Result<MaybeTls> {
    Ok(stream)
}
