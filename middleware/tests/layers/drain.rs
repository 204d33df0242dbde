//! The drain counts requests in flight, reports those that finish, and cancels the rest at the
//! deadline, dropping their futures.

use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{request, DropFlag};
use serde_json::json;
use tokio::sync::watch;
use tokio::time::Instant;
use tower::{Service, ServiceExt};
use wsp_middleware::drain::CANCELLED_MESSAGE;
use wsp_middleware::{Drain, DrainReport, DEFAULT_DRAIN_DEADLINE};
use wsp_protocol::error::INTERNAL_ERROR;
use wsp_protocol::{Request, Response};

/// Handlers: `wait` finishes when the gate opens, `forever` never finishes (and flags its drop),
/// anything else answers at once.
fn service(
    drain: &Drain,
    gate: watch::Receiver<bool>,
    dropped: Arc<AtomicBool>,
) -> impl Service<
    wsp_middleware::Call,
    Response = Response,
    Error = Infallible,
    Future: Future<Output = Result<Response, Infallible>> + Send + 'static,
> {
    let handler = tower::service_fn(move |req: wsp_middleware::Call| {
        let mut gate = gate.clone();
        let guard = DropFlag(Arc::clone(&dropped));
        async move {
            let _guard = guard;
            match req.method.as_str() {
                "wait" => {
                    let _ = gate.wait_for(|open| *open).await;
                }
                "forever" => std::future::pending::<()>().await,
                _ => {}
            }
            Ok::<_, Infallible>(Response::ok(req.id.clone(), json!(req.method)))
        }
    });
    tower::Layer::layer(&drain.layer(), handler)
}

async fn spawn_call<S>(service: &mut S, req: Request) -> tokio::task::JoinHandle<Response>
where
    S: Service<wsp_middleware::Call, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    let Ok(future) = service.ready().await.map(|s| s.call(req.into()));
    tokio::spawn(async move {
        let Ok(response) = future.await;
        response
    })
}

#[tokio::test]
async fn nothing_in_flight_drains_at_once() {
    let drain = Drain::new();
    let report = drain.drain(DEFAULT_DRAIN_DEADLINE).await;
    assert_eq!(report, DrainReport::default());
}

#[tokio::test]
async fn finished_work_is_reported() {
    let drain = Drain::new();
    let (open, gate) = watch::channel(false);
    let mut service = service(&drain, gate, Arc::default());
    let first = spawn_call(&mut service, request(1, "wait", None)).await;
    let second = spawn_call(&mut service, request(2, "wait", None)).await;
    assert_eq!(drain.in_flight(), 2, "counted at call, before any poll");

    // The opener can only run once `drain` has started waiting (this runtime has one thread).
    tokio::spawn(async move { open.send_replace(true) });
    let report = drain.drain(Duration::from_secs(60)).await;
    assert_eq!(
        report,
        DrainReport {
            finished: 2,
            cancelled: 0
        }
    );
    assert_eq!(drain.in_flight(), 0);
    assert_eq!(first.await.expect("task").outcome, Ok(json!("wait")));
    assert_eq!(second.await.expect("task").outcome, Ok(json!("wait")));
}

#[tokio::test(start_paused = true)]
async fn a_never_ending_request_is_cancelled_at_the_deadline_and_dropped() {
    let drain = Drain::new();
    let (_open, gate) = watch::channel(false);
    let dropped = Arc::new(AtomicBool::new(false));
    let mut service = service(&drain, gate, Arc::clone(&dropped));
    let Ok(stuck) = service
        .ready()
        .await
        .map(|s| s.call(request(9, "forever", None).into()));
    let mut stuck = pin!(stuck);

    let started = Instant::now();
    let (report, response) = tokio::join!(drain.drain(DEFAULT_DRAIN_DEADLINE), async {
        let Ok(response) = stuck.as_mut().await;
        // The response future is still alive here: only its inner future may be gone.
        assert!(
            dropped.load(Ordering::SeqCst),
            "the inner future was dropped at once"
        );
        response
    });
    assert_eq!(
        report,
        DrainReport {
            finished: 0,
            cancelled: 1
        }
    );
    assert!(started.elapsed() >= DEFAULT_DRAIN_DEADLINE);
    assert_eq!(drain.in_flight(), 0);

    assert_eq!(response.id, 9.into());
    assert_eq!(response.error_code(), Some(INTERNAL_ERROR));
    let Err(e) = response.outcome else {
        panic!("cancelled requests answer an error")
    };
    assert_eq!(e.message(), CANCELLED_MESSAGE);
}

#[tokio::test(start_paused = true)]
async fn the_drain_reports_finished_and_cancelled_together() {
    let drain = Drain::new();
    let (open, gate) = watch::channel(false);
    let mut service = service(&drain, gate, Arc::default());
    let slow = spawn_call(&mut service, request(1, "wait", None)).await;
    let stuck = spawn_call(&mut service, request(2, "forever", None)).await;
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        open.send_replace(true);
    });

    let report = drain.drain(DEFAULT_DRAIN_DEADLINE).await;
    assert_eq!(
        report,
        DrainReport {
            finished: 1,
            cancelled: 1
        }
    );
    assert!(slow.await.expect("task").outcome.is_ok());
    assert_eq!(
        stuck.await.expect("task").error_code(),
        Some(INTERNAL_ERROR)
    );
}

#[tokio::test]
async fn a_dropped_future_releases_its_slot() {
    let drain = Drain::new();
    let (_open, gate) = watch::channel(false);
    let dropped = Arc::new(AtomicBool::new(false));
    let mut service = service(&drain, gate, Arc::clone(&dropped));
    let Ok(future) = service
        .ready()
        .await
        .map(|s| s.call(request(1, "forever", None).into()));
    assert_eq!(drain.in_flight(), 1);
    drop(future);
    assert_eq!(drain.in_flight(), 0);
    assert!(dropped.load(Ordering::SeqCst));
    let report = drain.drain(Duration::ZERO).await;
    assert_eq!(report, DrainReport::default());
}
