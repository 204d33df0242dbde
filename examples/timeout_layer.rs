//! A stock tower layer in the session stack: `tower::timeout::TimeoutLayer` through
//! `TowerLayer`, the one adapter for tower's own layers.
//!
//! Every request gets at most two seconds; a handler still running then is dropped, and the
//! request is answered `-32603` with the timeout's text. `TowerLayer` only wraps the services
//! below the layer: what read order decides (the lifecycle, the router, a handler's read-time
//! part) was decided before the timeout's service saw the call.
//!
//! ```text
//! $ cargo run --example timeout_layer
//! --> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"client_name":"a","client_protocol_version":"0.1.0"}}
//! <-- {"jsonrpc":"2.0","id":1,"result":{"methods":["initialize","shutdown","sleep"], ...}}
//! --> {"jsonrpc":"2.0","id":2,"method":"sleep","params":{"millis":10}}
//! <-- {"jsonrpc":"2.0","id":2,"result":10}
//! --> {"jsonrpc":"2.0","id":3,"method":"sleep","params":{"millis":5000}}
//! <-- {"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"request timed out"}}
//! ```

use std::time::Duration;

use tower::timeout::TimeoutLayer;
use wsp_middleware::{handler_fn, Context, TowerLayer};
use wsp_server::ServerBuilder;

wsp_protocol::params! {
    /// Params of `sleep`.
    #[derive(Debug)]
    pub struct SleepParams {
        /// How long to sleep, in milliseconds (none by default).
        pub millis: Option<u64> = wsp_protocol::fields::optional_integer(0, 60_000),
    }
}

fn main() {
    let sleep = handler_fn(|params: SleepParams, _: Context| async move {
        let millis = params.millis.unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(millis)).await;
        Ok::<_, wsp_protocol::ErrorObjectOwned>(millis)
    });
    let server = ServerBuilder::new()
        .route("sleep", sleep)
        .layer(TowerLayer::new(TimeoutLayer::new(Duration::from_secs(2))))
        .build();
    std::process::exit(server.run_stdio());
}
