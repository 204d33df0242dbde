//! The standard stack as `standard_stack` builds it (the one the server runs): handler capacity
//! never blocks readiness, notifications pass through every layer while handlers hold every
//! slot, panics release their slot, the gate judges in call order, `exit` ends the session with
//! its status, the end of input drains through every layer, and custom layers land where
//! they were put.

mod common;

use std::convert::Infallible;
use std::future::poll_fn;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use common::{init_params, request, send};
use serde_json::{json, Value};
use tokio::sync::watch;
use tokio_test::{assert_pending, assert_ready, task};
use tower::{Layer, Service, ServiceExt};
use wsp_middleware::drain::CANCELLED_MESSAGE;
use wsp_middleware::{
    standard_stack, ExitStatus, LayerPosition, LifecycleState, Notify, StackConfig, StackHandles,
};
use wsp_protocol::error::SERVER_NOT_INITIALIZED;
use wsp_protocol::error::{INTERNAL_ERROR, INVALID_REQUEST, REQUEST_CANCELLED};
use wsp_protocol::{methods, Notification, Request, Response};

/// Stands in for the router: `wait` finishes when the gate opens, `forever` never does, `boom`
/// panics in `call`; anything else answers at once. Notifications are recorded.
#[derive(Clone)]
struct TestRouter {
    gate: watch::Receiver<bool>,
    notified: Arc<Mutex<Vec<String>>>,
}

impl Service<Request> for TestRouter {
    type Response = Response;
    type Error = Infallible;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        if req.method == "boom" {
            panic!("router exploded");
        }
        let mut gate = self.gate.clone();
        Box::pin(async move {
            match req.method.as_str() {
                "wait" => {
                    let _ = gate.wait_for(|open| *open).await;
                }
                "forever" => std::future::pending::<()>().await,
                _ => {}
            }
            Ok(Response::ok(req.id, json!(req.method)))
        })
    }
}

impl Notify for TestRouter {
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        self.notified
            .lock()
            .expect("lock")
            .push(notification.method.clone());
        ControlFlow::Continue(())
    }
}

struct Fixture<S> {
    stack: S,
    handles: StackHandles,
    open: watch::Sender<bool>,
    notified: Arc<Mutex<Vec<String>>>,
}

fn fixture(
    config: StackConfig,
) -> Fixture<
    impl Service<Request, Response = Response, Error = Infallible, Future: Send + 'static> + Notify,
> {
    let (open, gate) = watch::channel(false);
    let notified = Arc::new(Mutex::new(Vec::new()));
    let router = TestRouter {
        gate,
        notified: notified.clone(),
    };
    let (stack, handles) = standard_stack(router, config);
    Fixture {
        stack,
        handles,
        open,
        notified,
    }
}

fn limit(n: usize) -> StackConfig {
    StackConfig::default().handler_limit(n)
}

fn notification(method: &str, params: Option<Value>) -> Notification {
    Notification {
        method: method.to_owned(),
        params,
    }
}

async fn initialize<S>(service: &mut S)
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let response = send(service, request(0, methods::INITIALIZE, init_params())).await;
    assert!(response.outcome.is_ok(), "{response:?}");
}

#[tokio::test]
async fn a_full_handler_limit_keeps_the_stack_ready_and_queues_the_handler() {
    let mut f = fixture(limit(1));
    initialize(&mut f.stack).await;
    let first = tokio::spawn(f.stack.call(request(1, "wait", None)));

    let mut ready = task::spawn(poll_fn(|cx| f.stack.poll_ready(cx)));
    let Ok(()) = assert_ready!(ready.poll());
    drop(ready);
    let mut second = task::spawn(f.stack.call(request(2, methods::LIST, None)));
    assert_pending!(second.poll(), "the second handler waits for the slot");

    f.open.send_replace(true);
    let Ok(response) = first.await.expect("task");
    assert_eq!(response.outcome, Ok(json!("wait")));
    assert!(
        second.is_woken(),
        "the freed slot wakes the waiting request"
    );
    let Ok(response) = assert_ready!(second.poll());
    assert_eq!(response.outcome, Ok(json!("environment/list")));
}

#[tokio::test]
async fn a_cancel_reaches_a_request_waiting_for_a_slot() {
    let mut f = fixture(limit(1));
    initialize(&mut f.stack).await;
    let mut holder = task::spawn(f.stack.call(request(1, "forever", None)));
    assert_pending!(holder.poll());
    let mut waiting = task::spawn(f.stack.call(request(2, methods::LIST, None)));
    assert_pending!(waiting.poll());

    let flow = f
        .stack
        .notify(&notification("$/cancelRequest", Some(json!({"id": 2}))));
    assert_eq!(flow, ControlFlow::Continue(()));
    assert!(waiting.is_woken());
    let Ok(response) = assert_ready!(waiting.poll());
    assert_eq!(response.error_code(), Some(REQUEST_CANCELLED));
    assert_pending!(holder.poll(), "only the named request is cancelled");
    assert_eq!(*f.notified.lock().expect("lock"), ["$/cancelRequest"]);
}

#[tokio::test]
async fn a_panic_in_call_releases_its_slot_and_its_drain_count() {
    let mut f = fixture(limit(1));
    initialize(&mut f.stack).await;

    let response = send(&mut f.stack, request(1, "boom", None)).await;
    assert_eq!(response.error_code(), Some(INTERNAL_ERROR));
    assert_eq!(f.handles.drain.in_flight(), 0);
    let response = send(&mut f.stack, request(2, methods::LIST, None)).await;
    assert_eq!(response.outcome, Ok(json!("environment/list")));
}

#[tokio::test]
async fn the_gate_judges_requests_in_call_order() {
    let mut f = fixture(limit(4));
    f.open.send_replace(true);
    let response = send(&mut f.stack, request(1, methods::LIST, None)).await;
    assert_eq!(response.error_code(), Some(SERVER_NOT_INITIALIZED));

    let mut pending = Vec::new();
    for (id, method) in [
        (2, methods::INITIALIZE),
        (3, "wait"),
        (4, methods::SHUTDOWN),
        (5, "wait"),
    ] {
        let Ok(future) = f
            .stack
            .ready()
            .await
            .map(|s| s.call(request(id, method, init_params())));
        pending.push(tokio::spawn(future));
    }
    assert_eq!(f.handles.lifecycle.state(), LifecycleState::ShuttingDown);
    let mut codes = Vec::new();
    for handle in pending {
        let Ok(response) = handle.await.expect("task");
        codes.push(response.error_code());
    }
    assert_eq!(codes, [None, None, None, Some(INVALID_REQUEST)]);
    let flow = f.stack.notify(&notification(methods::EXIT, None));
    assert_eq!(
        flow,
        ControlFlow::Break(0),
        "exit after shutdown ends with 0"
    );
    assert!(
        f.notified.lock().expect("lock").is_empty(),
        "exit stops at the gate"
    );
}

#[tokio::test]
async fn exit_without_shutdown_ends_the_session_with_1() {
    let mut f = fixture(StackConfig::default());
    initialize(&mut f.stack).await;
    let flow = f.stack.notify(&notification(methods::EXIT, None));
    assert_eq!(flow, ControlFlow::Break(1));
}

#[tokio::test(start_paused = true)]
async fn the_end_of_input_drains_through_the_whole_stack() {
    let deadline = Duration::from_secs(3);
    let mut f = fixture(StackConfig::default().drain_deadline(deadline));
    initialize(&mut f.stack).await;
    let stuck = tokio::spawn(f.stack.call(request(7, "forever", None)));
    tokio::task::yield_now().await;

    let started = tokio::time::Instant::now();
    let closes_at = f.stack.input_ended().expect("the drain bounds the session");
    let bound = closes_at.duration_since(started.into_std());
    assert!(
        bound >= deadline && bound <= deadline + Duration::from_secs(1),
        "{bound:?}"
    );

    let Ok(response) = stuck.await.expect("task");
    assert_eq!(
        started.elapsed(),
        deadline,
        "cancelled exactly at the deadline"
    );
    assert_eq!(response.id, 7.into());
    let Err(e) = response.outcome else {
        panic!("expected the cancellation error")
    };
    assert_eq!((e.code(), e.message()), (INTERNAL_ERROR, CANCELLED_MESSAGE));
}

/// Answers every request with the position it was put at, without calling further in.
#[derive(Clone)]
struct Answer(&'static str);

impl<S> Layer<S> for Answer {
    type Service = AnswerService;

    fn layer(&self, _inner: S) -> AnswerService {
        AnswerService(self.0)
    }
}

#[derive(Clone)]
struct AnswerService(&'static str);

impl Service<Request> for AnswerService {
    type Response = Response;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        std::future::ready(Ok(Response::ok(req.id, json!(self.0))))
    }
}

#[tokio::test]
async fn custom_layers_sit_where_they_were_put() {
    for (position, before_initialize) in [
        (LayerPosition::Outermost, Some(json!("here"))),
        (LayerPosition::BeforeLifecycle, Some(json!("here"))),
        (LayerPosition::BeforeRouter, None),
    ] {
        let mut config = StackConfig::default();
        config.request_layer(position, Answer("here"));
        let mut f = fixture(config);
        let response = send(&mut f.stack, request(1, methods::LIST, None)).await;
        match before_initialize {
            Some(answer) => assert_eq!(response.outcome, Ok(answer), "{position:?}"),
            None => assert_eq!(
                response.error_code(),
                Some(SERVER_NOT_INITIALIZED),
                "{position:?}: inside the gate"
            ),
        }
        let flow = f.stack.notify(&notification("custom/n", None));
        assert_eq!(flow, ControlFlow::Continue(()));
        assert_eq!(
            *f.notified.lock().expect("lock"),
            ["custom/n"],
            "{position:?}: notifications bypass a request layer"
        );
    }
}
