//! `environment/execute` of `/bin/true`, sandboxed and not, through an in-process server
//! (the full request: store, use lock, containment, the sandbox's namespaces, mounts and
//! Landlock ruleset), side by side in one run.
//!
//! `cargo bench --bench execute`

use std::time::Duration;
use wsp_testing::ClientExt;

#[allow(dead_code)]
mod support;

use support::runtime;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use wsp_conformance::{BackendUnderTest, Client, Fixture};

fn venv_backend() -> BackendUnderTest {
    BackendUnderTest::new("venv", "3.12", |ctx| {
        wsp_backend_venv::VenvBackend::new(ctx.inventory(), Default::default())
    })
}

fn execute(c: &mut Criterion) {
    let rt = runtime();
    let fixture = Fixture::for_backend(&venv_backend());
    let mut client: Client = rt.block_on(fixture.client());
    let created = rt.block_on(client.ok(
        "environment/create",
        json!({"name": "bench", "python_version": "3.12"}),
    ));
    let mut group = c.benchmark_group("execute /bin/true");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(8));
    for sandbox in [false, true] {
        let name = if sandbox { "sandboxed" } else { "unsandboxed" };
        let params = json!({"id": created["id"], "argv": ["/bin/true"], "sandbox": sandbox});
        group.bench_function(name, |b| {
            b.iter(|| {
                let ran = rt.block_on(client.ok("environment/execute", params.clone()));
                assert_eq!(ran["exit_code"], 0, "{ran}");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, execute);
criterion_main!(benches);
