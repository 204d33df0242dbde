//! The standard stack as `standard_stack` builds it (the one the server runs): handler capacity
//! never blocks readiness, notifications pass through every layer while handlers hold every
//! slot, panics release their slot, the gate judges in call order, `exit` ends the session with
//! its status, the end of input drains through every layer, and a custom layer's read-time part
//! decides before the lifecycle.

use std::convert::Infallible;
use std::future::poll_fn;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{ask as send, init_params, request};
use serde_json::{json, Value};
use tokio::sync::watch;
use tokio_test::{assert_pending, assert_ready, task};
use tower::{Service, ServiceExt};
use wsp_middleware::drain::CANCELLED_MESSAGE;
use wsp_middleware::{
    handler_fn, standard_stack, BoxSession, Call, LifecycleState, Notify, Router, SessionLayer,
    StackConfig, StackHandles,
};
use wsp_protocol::error::SERVER_NOT_INITIALIZED;
use wsp_protocol::error::{INTERNAL_ERROR, INVALID_REQUEST, REQUEST_CANCELLED};
use wsp_protocol::{methods, Notification, Params, Request, Response, Violation};

/// Any params at all.
struct Anything;

impl Params for Anything {
    fn from_params(_: Option<&Value>) -> Result<Self, Vec<Violation>> {
        Ok(Anything)
    }

    fn schema() -> Value {
        json!({})
    }
}

/// A router: `wait` finishes when the gate opens, `forever` never does, `boom` panics at read
/// time; `environment/list` answers at once. Notifications are recorded.
fn test_router(gate: watch::Receiver<bool>, notified: Arc<Mutex<Vec<String>>>) -> Router {
    let answer = |method: &'static str| {
        let gate = gate.clone();
        handler_fn(move |_: Anything, _: wsp_middleware::Context| {
            if method == "boom" {
                panic!("router exploded");
            }
            let mut gate = gate.clone();
            async move {
                match method {
                    "wait" => {
                        let _ = gate.wait_for(|open| *open).await;
                    }
                    "forever" => std::future::pending::<()>().await,
                    _ => {}
                }
                Ok(json!(method))
            }
        })
    };
    let mut router = Router::new();
    for method in [
        "wait",
        "forever",
        "boom",
        methods::LIST,
        methods::SHUTDOWN,
        methods::INITIALIZE,
    ] {
        router = router.route(method, answer(method));
    }
    router.other_notifications(move |notification| {
        notified
            .lock()
            .expect("lock")
            .push(notification.method.clone());
    })
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
    let router = test_router(gate, notified.clone());
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

/// Answers every request at read time, before the lifecycle decides.
struct Answer(&'static str);

impl SessionLayer for Answer {
    fn admit(&self, call: &mut Call) {
        let response = Response::ok(call.id.clone(), json!(self.0));
        call.answer(response);
    }

    fn layer(&self, inner: BoxSession) -> BoxSession {
        inner
    }
}

#[tokio::test]
async fn a_custom_layer_decides_at_read_time_before_the_lifecycle() {
    let mut config = StackConfig::default();
    config.layer(Answer("here"));
    let mut f = fixture(config);
    let response = send(&mut f.stack, request(1, methods::LIST, None)).await;
    assert_eq!(response.outcome, Ok(json!("here")));
    assert_eq!(f.handles.lifecycle.state(), LifecycleState::Uninitialized);
    let flow = f.stack.notify(&notification("custom/n", None));
    assert_eq!(flow, ControlFlow::Continue(()));
    assert_eq!(*f.notified.lock().expect("lock"), ["custom/n"]);
}
