//! The whole stack above a dispatcher: backpressure through the concurrency limit, panics that
//! release their slot, pipelining, and a drain that cancels through every layer.

mod common;

use std::convert::Infallible;
use std::future::poll_fn;

use common::{init_params, request, send};
use serde_json::json;
use tokio::sync::watch;
use tokio_test::{assert_pending, assert_ready, task};
use tower::{Service, ServiceExt};
use wsp_middleware::drain::CANCELLED_MESSAGE;
use wsp_middleware::{server_layers, Drain, DrainReport, Lifecycle, LifecycleState};
use wsp_protocol::error::{INTERNAL_ERROR, INVALID_REQUEST, SERVER_NOT_INITIALIZED};
use wsp_protocol::{methods, Request, Response};

/// `wait` finishes when the gate opens, `forever` never does, `boom` panics in `call`; anything
/// else answers at once.
fn stack(
    lifecycle: &Lifecycle,
    drain: &Drain,
    limit: usize,
    gate: watch::Receiver<bool>,
) -> impl Service<
    Request,
    Response = Response,
    Error = Infallible,
    Future: std::future::Future<Output = Result<Response, Infallible>> + Send + 'static,
> {
    let router = tower::service_fn(move |req: Request| {
        if req.method == "boom" {
            panic!("router exploded");
        }
        let mut gate = gate.clone();
        async move {
            match req.method.as_str() {
                "wait" => {
                    let _ = gate.wait_for(|open| *open).await;
                }
                "forever" => std::future::pending::<()>().await,
                _ => {}
            }
            Ok::<_, Infallible>(Response::ok(req.id, json!(req.method)))
        }
    });
    server_layers(lifecycle.clone(), drain, limit).service(router)
}

async fn initialize<S>(service: &mut S)
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let response = send(service, request(0, methods::INITIALIZE, init_params())).await;
    assert!(response.outcome.is_ok(), "{response:?}");
}

#[tokio::test]
async fn with_limit_1_poll_ready_is_pending_while_a_request_is_in_flight() {
    let (lifecycle, drain) = (Lifecycle::new(), Drain::new());
    let (open, gate) = watch::channel(false);
    let mut service = stack(&lifecycle, &drain, 1, gate);
    initialize(&mut service).await;

    let Ok(slow) = service
        .ready()
        .await
        .map(|s| s.call(request(1, "wait", None)));
    let slow = tokio::spawn(slow);

    let mut ready = task::spawn(poll_fn(|cx| service.poll_ready(cx)));
    assert_pending!(ready.poll());
    open.send_replace(true);
    let Ok(response) = slow.await.expect("task");
    assert_eq!(response.outcome, Ok(json!("wait")));
    assert!(
        ready.is_woken(),
        "finishing the request wakes the waiting caller"
    );
    let Ok(()) = assert_ready!(ready.poll());
    drop(ready);

    let response = send(&mut service, request(2, methods::LIST, None)).await;
    assert!(response.outcome.is_ok());
}

#[tokio::test]
async fn a_panic_in_call_releases_its_slot_and_its_drain_count() {
    let (lifecycle, drain) = (Lifecycle::new(), Drain::new());
    let (_open, gate) = watch::channel(false);
    let mut service = stack(&lifecycle, &drain, 1, gate);
    initialize(&mut service).await;

    let response = send(&mut service, request(1, "boom", None)).await;
    assert_eq!(response.error_code(), Some(INTERNAL_ERROR));
    assert_eq!(drain.in_flight(), 0);
    let response = send(&mut service, request(2, methods::LIST, None)).await;
    assert_eq!(response.outcome, Ok(json!("environment/list")));
}

#[tokio::test]
async fn the_gate_judges_requests_in_call_order() {
    let (lifecycle, drain) = (Lifecycle::new(), Drain::new());
    let (_open, gate) = watch::channel(true);
    let mut service = stack(&lifecycle, &drain, 4, gate);
    let response = send(&mut service, request(1, methods::LIST, None)).await;
    assert_eq!(response.error_code(), Some(SERVER_NOT_INITIALIZED));

    let mut pending = Vec::new();
    for (id, method) in [
        (2, methods::INITIALIZE),
        (3, "wait"),
        (4, methods::SHUTDOWN),
        (5, "wait"),
    ] {
        let Ok(future) = service
            .ready()
            .await
            .map(|s| s.call(request(id, method, init_params())));
        pending.push(tokio::spawn(future));
    }
    assert_eq!(lifecycle.state(), LifecycleState::ShuttingDown);
    let mut codes = Vec::new();
    for handle in pending {
        let Ok(response) = handle.await.expect("task");
        codes.push(response.error_code());
    }
    assert_eq!(codes, [None, None, None, Some(INVALID_REQUEST)]);
    assert_eq!(lifecycle.exit(), 0);
}

#[tokio::test(start_paused = true)]
async fn the_drain_cancels_through_the_whole_stack() {
    let (lifecycle, drain) = (Lifecycle::new(), Drain::new());
    let (_open, gate) = watch::channel(false);
    let mut service = stack(&lifecycle, &drain, 1, gate);
    initialize(&mut service).await;

    let Ok(stuck) = service
        .ready()
        .await
        .map(|s| s.call(request(7, "forever", None)));
    let stuck = tokio::spawn(stuck);

    let report = drain.drain(wsp_middleware::DEFAULT_DRAIN_DEADLINE).await;
    assert_eq!(
        report,
        DrainReport {
            finished: 0,
            cancelled: 1
        }
    );
    let Ok(response) = stuck.await.expect("task");
    assert_eq!(response.id, 7.into());
    let Err(e) = response.outcome else {
        panic!("expected the cancellation error")
    };
    assert_eq!((e.code(), e.message()), (INTERNAL_ERROR, CANCELLED_MESSAGE));
}
