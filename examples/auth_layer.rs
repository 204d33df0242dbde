//! A tower layer of your own in the stack: a shared-secret check.
//!
//! Layers added with [`wsp_server::ServerBuilder::layer`] sit in front of the lifecycle gate, so they
//! see every request (`initialize` and `shutdown` included) and can answer it themselves or
//! pass it on. This one demands that every request's params carry
//! `"auth_token"` equal to the `WSP_EXAMPLE_TOKEN` environment variable, and answers a JSON-RPC
//! error (`-32001`, with the method in `data`) otherwise. Params validation ignores unknown
//! fields, so the handlers never notice the extra field.
//!
//! The check is the layer's read-time part (`SessionLayer::admit`), which the stack runs for
//! every request in read order before the lifecycle decides; the layer adds no service.
//!
//! ```text
//! $ WSP_EXAMPLE_TOKEN=s3cret cargo run --example auth_layer
//! --> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"client_name":"a","client_protocol_version":"0.1.0"}}
//! <-- {"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Unauthorized","data":{"method":"initialize"}}}
//! --> {"jsonrpc":"2.0","id":2,"method":"initialize","params":{"client_name":"a","client_protocol_version":"0.1.0","auth_token":"s3cret"}}
//! <-- {"jsonrpc":"2.0","id":2,"result":{"methods":["initialize","shutdown"], ...}}
//! ```
//!
//! The unauthorized `initialize` never reached the lifecycle gate, so the server was still
//! UNINITIALIZED when the authorized one arrived.

use std::sync::Arc;

use serde_json::json;
use wsp_middleware::{BoxSession, Call, SessionLayer};
use wsp_protocol::error;

/// Rejects requests without the right `params.auth_token`, at read time.
struct RequireTokenLayer {
    token: Arc<str>,
}

impl SessionLayer for RequireTokenLayer {
    fn admit(&self, call: &mut Call) {
        let presented = call
            .params
            .as_ref()
            .and_then(|params| params.get("auth_token"))
            .and_then(|token| token.as_str());
        if presented != Some(&*self.token) {
            let data = json!({"method": call.method});
            call.reject(error::error(-32001, "Unauthorized", Some(data)));
        }
    }

    fn layer(&self, inner: BoxSession) -> BoxSession {
        inner
    }
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let Some(token) = std::env::var("WSP_EXAMPLE_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
    else {
        eprintln!("set WSP_EXAMPLE_TOKEN to the token clients must send");
        std::process::exit(2);
    };
    let server = wsp_server::ServerBuilder::new()
        .layer(RequireTokenLayer {
            token: token.into(),
        })
        .build();
    let status = server.serve(tokio::io::stdin(), tokio::io::stdout()).await;
    std::process::exit(status);
}
