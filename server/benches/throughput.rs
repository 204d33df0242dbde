//! The framework's own cost per request: 1,000 `ping` requests through the whole stack (codec,
//! tracing, catch-panic, drain, concurrency limit, lifecycle gate, router, params validation)
//! over an in-memory pipe, sent pipelined (all written, then all read) and one at a time.
//!
//! `cargo bench -p wsp-server --bench throughput`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};
use wsp_protocol::{ErrorObjectOwned, NoParams};
use wsp_server::client::Client;
use wsp_server::ServerBuilder;

const REQUESTS: usize = 1000;

fn server() -> wsp_server::Server {
    let ping =
        tower::service_fn(|_: NoParams| async { Ok::<Value, ErrorObjectOwned>(json!("pong")) });
    ServerBuilder::new()
        .route("ping", ping)
        .concurrency_limit(256)
        .build()
}

fn throughput(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut client: Client = rt.block_on(Client::initialized(server()));
    let mut group = c.benchmark_group("1000 ping requests");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("pipelined", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut ids = Vec::with_capacity(REQUESTS);
                for _ in 0..REQUESTS {
                    let id = client.send_request("ping", None).await;
                    ids.push(id.expect("sent"));
                }
                for id in ids {
                    let response = client.response_to(id, |_| {}).await;
                    assert_eq!(response.expect("answered")["result"], "pong");
                }
            })
        })
    });
    group.bench_function("one at a time", |b| {
        b.iter(|| {
            rt.block_on(async {
                for _ in 0..REQUESTS {
                    let response = client.request("ping", None).await.expect("answered");
                    assert_eq!(response.outcome.ok(), Some(Value::from("pong")));
                }
            })
        })
    });
    group.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);
