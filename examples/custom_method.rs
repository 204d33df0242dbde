//! A WSP server with a method of its own, in a few lines.
//!
//! Tool authors bind their own methods next to (or instead of) the environment methods. A
//! method is a [`Method`](wsp_protocol::method::Method) — its name, its params type and its
//! result type, declared in the eight lines below — and a tower `Service` from its params to its result; the router
//! validates params first, so the handler only ever sees well-formed input, and the method
//! shows up in `initialize`'s `methods` list and in the schema fingerprint by being bound.
//!
//! Run it and paste frames into it (`cargo run --example custom_method`):
//!
//! ```text
//! --> Content-Length: 110
//! -->
//! --> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"client_name":"me","client_protocol_version":"0.1.0"}}
//! <-- {"jsonrpc":"2.0","id":1,"result":{"methods":["initialize","shout","shutdown"], ...}}
//! --> Content-Length: 67
//! -->
//! --> {"jsonrpc":"2.0","id":2,"method":"shout","params":{"text":"hello"}}
//! <-- {"jsonrpc":"2.0","id":2,"result":{"text":"HELLO!"}}
//! --> Content-Length: 62
//! -->
//! --> {"jsonrpc":"2.0","id":3,"method":"shout","params":{"text":""}}
//! <-- {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params",
//!      "data":{"violations":[{"field":"text","rule":"non_empty","message":"`text` must not be empty"}]}}}
//! ```
//!
//! (Each `<--` line is preceded by its own `Content-Length` header on the wire.) Close stdin
//! to end the session: the server drains and exits 0.

use schemars::JsonSchema;
use serde::Serialize;
use wsp_server::ServerBuilder;

wsp_protocol::method! {
    /// `shout`: one non-empty string of at most 1000 characters, answered in capitals.
    Shout = "shout", ShoutParams { text: String = string(1, Some(1000)) } => Shouted
}
#[derive(Serialize, JsonSchema)]
pub struct Shouted {
    pub text: String,
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let shout = tower::service_fn(|params: ShoutParams| async move {
        Ok::<_, wsp_protocol::ErrorObjectOwned>(Shouted {
            text: format!("{}!", params.text.to_uppercase()),
        })
    });
    let server = ServerBuilder::new().method::<Shout, _>(shout).build();
    let status = server.serve(tokio::io::stdin(), tokio::io::stdout()).await;
    std::process::exit(status);
}
