//! `wss://`: a server certificate from PEM files (a self-signed one made here), a client that
//! trusts it completes a session; one that doesn't trust it gets no upgrade.

use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_rustls::TlsConnector;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use wsp_server::transport::websocket::{tls_from_pem, Token, WebSocketConfig, WebSocketListener};
use wsp_server::ServerBuilder;

const TOKEN: &str = "a-token-for-tls";

fn client_config(trusted: Option<&rcgen::Certificate>) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    if let Some(certificate) = trusted {
        roots
            .add(certificate.der().clone())
            .expect("the certificate is usable as a root");
    }
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

#[tokio::test]
async fn a_client_that_trusts_the_certificate_completes_a_session_over_wss() {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("cert");
    let dir = tempfile::tempdir().expect("dir");
    let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_path, made.cert.pem()).expect("cert.pem");
    std::fs::write(&key_path, made.signing_key.serialize_pem()).expect("key.pem");

    let mut config = WebSocketConfig::new("127.0.0.1", 0, Token::new(TOKEN).expect("token"));
    config.tls = Some(tls_from_pem(&cert_path, &key_path).expect("the PEM files load"));
    let listener = WebSocketListener::bind(config).await.expect("bind");
    let port = listener.local_addr().port();
    tokio::spawn(ServerBuilder::new().build().serve_listener(listener));

    let name = "localhost".try_into().expect("a server name");
    let untrusting = TlsConnector::from(client_config(None));
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.expect("tcp");
    assert!(
        untrusting.connect(name, tcp).await.is_err(),
        "an unknown certificate is refused"
    );

    let connector = TlsConnector::from(client_config(Some(&made.cert)));
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.expect("tcp");
    let name = "localhost".try_into().expect("a server name");
    let tls = connector.connect(name, tcp).await.expect("TLS");
    let mut request = format!("wss://localhost:{port}/")
        .into_client_request()
        .expect("request");
    let bearer = format!("Bearer {TOKEN}").parse().expect("header");
    request.headers_mut().insert("authorization", bearer);
    let (mut socket, _) = tokio_tungstenite::client_async(request, tls)
        .await
        .expect("upgrades");
    let params = json!({"client_name": "tls", "client_protocol_version": "0.1.0"});
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params});
    socket
        .send(Message::text(initialize.to_string()))
        .await
        .expect("send");
    let answer = loop {
        if let Message::Text(text) = socket.next().await.expect("a message").expect("readable") {
            break serde_json::from_str::<Value>(&text).expect("JSON");
        }
    };
    assert_eq!(
        answer["result"]["transport"],
        json!("websocket"),
        "{answer}"
    );
}

#[test]
fn pem_files_that_hold_no_certificate_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().expect("dir");
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").expect("write");
    let refused = tls_from_pem(&empty, &empty).expect_err("refused");
    assert!(refused.to_string().contains("empty.pem"), "{refused}");
}
