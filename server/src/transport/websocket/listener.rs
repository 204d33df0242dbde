//! Accepting WebSocket connections: TCP (and TLS) accepted in one task, each upgrade in a task
//! of its own with a deadline, the admitted ones handed out in order.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig as ProtocolConfig;

use super::connection::WebSocketConnection;
use super::{handshake, is_loopback, WebSocketConfig};
use crate::transport::Listener;

/// Upgrades done and waiting for [`Listener::accept`].
const ADMITTED_BACKLOG: usize = 16;

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
    let stream = secure(stream, config).await?;
    let protocol = ProtocolConfig::default()
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
pub enum MaybeTls {
    /// `ws://`.
    Plain(TcpStream),
    /// `wss://`.
    #[cfg(feature = "websocket-tls")]
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
}

async fn secure(stream: TcpStream, config: &WebSocketConfig) -> io::Result<MaybeTls> {
    #[cfg(feature = "websocket-tls")]
    if let Some(tls) = &config.tls {
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::clone(tls));
        return Ok(MaybeTls::Tls(Box::new(acceptor.accept(stream).await?)));
    }
    let _ = config;
    Ok(MaybeTls::Plain(stream))
}

impl AsyncRead for MaybeTls {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MaybeTls::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
            #[cfg(feature = "websocket-tls")]
            MaybeTls::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for MaybeTls {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            MaybeTls::Plain(stream) => Pin::new(stream).poll_write(cx, buf),
            #[cfg(feature = "websocket-tls")]
            MaybeTls::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MaybeTls::Plain(stream) => Pin::new(stream).poll_flush(cx),
            #[cfg(feature = "websocket-tls")]
            MaybeTls::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MaybeTls::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
            #[cfg(feature = "websocket-tls")]
            MaybeTls::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
        }
    }
}
