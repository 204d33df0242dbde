//! A tower layer of your own in the stack: a shared-secret check.
//!
//! Layers added with [`wsp_server::ServerBuilder::layer`] sit in front of the lifecycle gate, so they
//! see every request (`initialize` and `shutdown` included) and can answer it themselves or
//! pass it on. This one demands that every request's params carry
//! `"auth_token"` equal to the `WSP_EXAMPLE_TOKEN` environment variable, and answers a JSON-RPC
//! error (`-32001`, with the method in `data`) otherwise. Params validation ignores unknown
//! fields, so the handlers never notice the extra field.
//!
//! The layer is an ordinary tower `Layer` + `Service` pair: `poll_ready` is forwarded so
//! backpressure still works, and the check happens synchronously in `call`, so the decision
//! is taken in the order requests were read.
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

use std::convert::Infallible;
use std::future::{ready, Future};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::json;
use tower::{Layer, Service};
use wsp_protocol::{error, Request, Response};

/// Rejects requests without the right `params.auth_token`.
#[derive(Clone)]
struct RequireTokenLayer {
    token: Arc<str>,
}

#[derive(Clone)]
struct RequireToken<S> {
    inner: S,
    token: Arc<str>,
}

impl<S> Layer<S> for RequireTokenLayer {
    type Service = RequireToken<S>;

    fn layer(&self, inner: S) -> RequireToken<S> {
        RequireToken {
            inner,
            token: self.token.clone(),
        }
    }
}

impl<S> Service<Request> for RequireToken<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let presented = request
            .params
            .as_ref()
            .and_then(|params| params.get("auth_token"))
            .and_then(|token| token.as_str());
        if presented == Some(&*self.token) {
            return Box::pin(self.inner.call(request));
        }
        let denied = error::error(
            -32001,
            "Unauthorized",
            Some(json!({"method": request.method})),
        );
        Box::pin(ready(Ok(Response::error(request.id, denied))))
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
