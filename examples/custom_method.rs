//! A WSP server with a method of its own, in a few lines.
//!
//! Tool authors bind their own methods next to (or instead of) the environment methods. A
//! method is a [`Method`](wsp_server::Method) — its name, its params type and its result
//! type, declared by `method!` — and a handler of its params; the router validates params
//! first, so the handler only ever sees well-formed input, and the method shows up in
//! `initialize`'s `methods` list and in the schema fingerprint by being bound. A crate like
//! this one needs `wsp-server` and `tokio` only.
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

use wsp_server::{handler_fn, Context, ErrorObjectOwned, ServerBuilder};

// `shout`: one non-empty string of at most 1000 characters, answered in capitals. The method
// with its params, their rules and its result, then its handler: seven lines.
wsp_server::method! {
    Shout = "shout", ShoutParams { text: String = string(1, Some(1000)) } => Shouted { text: String }
}
async fn shout(params: ShoutParams, _: Context) -> Result<Shouted, ErrorObjectOwned> {
    let text = format!("{}!", params.text.to_uppercase());
    Ok(Shouted { text })
}

fn main() {
    let server = ServerBuilder::new().method::<Shout, _>(handler_fn(shout));
    std::process::exit(server.build().run_stdio());
}
