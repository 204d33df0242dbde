//! `--connect ws://HOST:PORT` and `wss://HOST:PORT`: the CLI's byte-stream [`Client`] talks to
//! a WebSocket through a bridge. The client writes `Content-Length` frames into an in-memory
//! pipe; a task cuts them with the framework's codec and sends each payload as one text
//! message, and writes each text message it receives back into the pipe as a frame.
//!
//! The token goes in `Authorization: Bearer`; `wss://` trusts `--ca-cert` if given, else the
//! system's root certificates (rustls, ring).

use std::path::Path;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;
use tokio_util::codec::{FramedRead, FramedWrite};
use wsp_server::client::Client;
use wsp_server::codec::{Frame, FrameCodec};

use super::transport::TransportError;

/// The client of a WebSocket connection.
pub type WebSocketClient = Client<ReadHalf<DuplexStream>, WriteHalf<DuplexStream>, ()>;

/// Bytes the in-memory pipe between the client and the bridge holds each way.
const PIPE_BYTES: usize = 256 * 1024;
/// The largest message taken from the server (an `execute` answer holds up to 16 MiB of each
/// stream, JSON-encoded).
const MAX_MESSAGE_BYTES: usize = 128 * 1024 * 1024;

/// Where to connect and how.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// The address as given, for messages (`ws://127.0.0.1:8080`).
    pub address: String,
    /// `wss://`.
    pub tls: bool,
    /// The host, without brackets.
    pub host: &'a str,
    /// The port.
    pub port: u16,
}

/// Connects, upgrades with `token` and starts the bridge; the session is the client's.
pub async fn connect(
    target: &Target<'_>,
    token: &str,
    ca_cert: Option<&Path>,
) -> Result<WebSocketClient, TransportError> {
    let address = &target.address;
    let mut request = format!("{address}/")
        .into_client_request()
        .map_err(|source| handshake_error(address, source))?;
    let bearer =
        HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| TransportError::BadToken)?;
    request.headers_mut().insert("authorization", bearer);
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES));
    let tcp = TcpStream::connect((target.host, target.port))
        .await
        .map_err(|source| TransportError::Connect {
            address: address.clone(),
            source,
        })?;
    let (client_end, bridge_end) = tokio::io::duplex(PIPE_BYTES);
    if target.tls {
        let connector = tokio_rustls::TlsConnector::from(tls_config(ca_cert)?);
        let name = ServerName::try_from(target.host.to_owned())
            .map_err(|_| TransportError::BadServerName(target.host.to_owned()))?;
        let tls = connector
            .connect(name, tcp)
            .await
            .map_err(|source| TransportError::Tls {
                address: address.clone(),
                source,
            })?;
        let socket = upgrade(request, tls, config, address).await?;
        tokio::spawn(bridge(socket, bridge_end));
    } else {
        let socket = upgrade(request, tcp, config, address).await?;
        tokio::spawn(bridge(socket, bridge_end));
    }
    let (reader, writer) = tokio::io::split(client_end);
    Ok(Client::new(reader, writer, ()))
}

async fn upgrade<S: AsyncRead + AsyncWrite + Unpin>(
    request: tokio_tungstenite::tungstenite::handshake::client::Request,
    stream: S,
    config: WebSocketConfig,
    address: &str,
) -> Result<WebSocketStream<S>, TransportError> {
    tokio_tungstenite::client_async_with_config(request, stream, Some(config))
        .await
        .map(|(socket, _)| socket)
        .map_err(|source| handshake_error(address, source))
}

fn handshake_error(address: &str, source: WsError) -> TransportError {
    match source {
        WsError::Http(response) if response.status().as_u16() == 401 => {
            TransportError::TokenRefused {
                address: address.to_owned(),
            }
        }
        WsError::Http(response) => TransportError::UpgradeRefused {
            address: address.to_owned(),
            status: response.status().to_string(),
        },
        source => TransportError::Handshake {
            address: address.to_owned(),
            source: Box::new(source),
        },
    }
}

/// The roots `wss://` trusts: the certificates of `ca_cert`, else the system's.
fn tls_config(ca_cert: Option<&Path>) -> Result<Arc<ClientConfig>, TransportError> {
    let mut roots = RootCertStore::empty();
    match ca_cert {
        Some(path) => {
            let unusable = |reason: String| TransportError::CaCert {
                path: path.to_owned(),
                reason,
            };
            let certificates = CertificateDer::pem_file_iter(path)
                .map_err(|e| unusable(e.to_string()))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| unusable(e.to_string()))?;
            for certificate in certificates {
                roots
                    .add(certificate)
                    .map_err(|e| unusable(e.to_string()))?;
            }
            if roots.is_empty() {
                return Err(unusable("no certificate in it".into()));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            if roots.is_empty() {
                return Err(TransportError::NoSystemRoots);
            }
        }
    }
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TransportError::TlsSetup(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Moves messages between the client's pipe and the WebSocket until both ways have ended:
/// the client's EOF closes the WebSocket, the server's close (or a failure) is EOF for the
/// client.
async fn bridge<S: AsyncRead + AsyncWrite + Unpin>(socket: WebSocketStream<S>, pipe: DuplexStream) {
    let (mut to_server, mut from_server) = socket.split();
    let (read, write) = tokio::io::split(pipe);
    let mut requests = FramedRead::new(read, FrameCodec::new());
    let mut answers = FramedWrite::new(write, FrameCodec::new());
    let outgoing = async move {
        while let Some(Ok(Frame::Payload(text))) = requests.next().await {
            if to_server.send(Message::text(text)).await.is_err() {
                return;
            }
        }
        let _ = to_server.close().await;
    };
    let incoming = async move {
        while let Some(Ok(message)) = from_server.next().await {
            let text = match message {
                Message::Text(text) => text,
                Message::Close(_) => break,
                // Pongs are sent by tungstenite itself; the server sends no binary frames.
                _ => continue,
            };
            if answers.send(text.as_str()).await.is_err() {
                break;
            }
        }
        let _ = SinkExt::<&str>::close(&mut answers).await;
    };
    futures::join!(outgoing, incoming);
}
