//! Read order survives layers and handlers that await first: a layer that boxes an
//! `async move` and holds a request back until the next one arrives, and a handler written as
//! a plain `async fn` that yields before it does anything, change no decision read order makes.
//! The lifecycle judges each request by the state at its read time, and a `get` read before a
//! `delete` of the same environment finishes before the delete removes it. The servers are
//! real (the framework's in-process server over a duplex pipe, the environment methods over the
//! venv backend and a real interpreter).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde_json::json;
use tokio::sync::oneshot;
use tower::{Layer, Service};
use wsp_middleware::{handler_fn, Call, TowerLayer};
use wsp_protocol::{methods, NoParams, Response};
use wsp_server::client::Client;
use wsp_server::ServerBuilder;

/// Holds the first request of `method` back, in an `async move` around the inner call, until
/// the layer is called with the next request: exactly what a layer author must not do when the
/// lifecycle or a handler decides inside `call`.
#[derive(Clone)]
struct HoldUntilNext {
    method: &'static str,
    held: Arc<Mutex<Option<oneshot::Sender<()>>>>,
    armed: Arc<AtomicBool>,
}

impl HoldUntilNext {
    fn new(method: &'static str) -> Self {
        HoldUntilNext {
            method,
            held: Arc::default(),
            armed: Arc::new(AtomicBool::new(true)),
        }
    }
}

impl<S> Layer<S> for HoldUntilNext {
    type Service = Holding<S>;

    fn layer(&self, inner: S) -> Holding<S> {
        Holding {
            inner,
            hold: self.clone(),
        }
    }
}

#[derive(Clone)]
struct Holding<S> {
    inner: S,
    hold: HoldUntilNext,
}

impl<S> Service<Call> for Holding<S>
where
    S: Service<Call, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: Call) -> Self::Future {
        let mut held = self.hold.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(release) = held.take() {
            let _ = release.send(());
        }
        if call.method == self.hold.method && self.hold.armed.swap(false, Ordering::SeqCst) {
            let (release, released) = oneshot::channel();
            *held = Some(release);
            let mut inner = self.inner.clone();
            return Box::pin(async move {
                let _ = released.await;
                inner.call(call).await
            });
        }
        Box::pin(self.inner.call(call))
    }
}

#[tokio::test]
async fn a_request_read_right_after_initialize_is_judged_by_the_state_at_its_read_time() {
    let ping = handler_fn(|_: NoParams, _| async {
        tokio::task::yield_now().await;
        Ok::<_, wsp_protocol::ErrorObjectOwned>("pong".to_owned())
    });
    let server = ServerBuilder::new()
        .route("test/ping", ping)
        .layer(TowerLayer::new(HoldUntilNext::new(methods::INITIALIZE)))
        .build();
    let mut client = Client::connect(server);
    let params = json!({"client_name": "read-order", "client_protocol_version": "0.1.0"});
    let initialize = client
        .send_request(methods::INITIALIZE, Some(params))
        .await
        .expect("send initialize");
    let ping = client
        .send_request("test/ping", None)
        .await
        .expect("send ping");
    let pong = client.response_to(ping, |_| {}).await.expect("ping answer");
    assert_eq!(pong["result"], json!("pong"), "{pong}");
    let initialized = client
        .response_to(initialize, |_| {})
        .await
        .expect("initialize answer");
    assert!(initialized["result"].is_object(), "{initialized}");

    let shutdown = client
        .send_request(methods::SHUTDOWN, None)
        .await
        .expect("send shutdown");
    let late = client
        .send_request("test/ping", None)
        .await
        .expect("send ping");
    let late = client.response_to(late, |_| {}).await.expect("late answer");
    assert_eq!(late["error"]["code"], json!(-32600), "{late}");
    let shutdown = client
        .response_to(shutdown, |_| {})
        .await
        .expect("shutdown");
    assert_eq!(shutdown["result"], json!(null), "{shutdown}");
}

#[tokio::test]
async fn a_get_read_before_a_delete_finishes_before_the_delete_removes_the_environment() {
    let state = tempfile::tempdir().expect("state dir");
    let environments = crate::support::venv_environments(state.path());
    let server = ServerBuilder::new()
        .group(environments)
        .layer(TowerLayer::new(HoldUntilNext::new(methods::GET)))
        .build();
    let mut client = Client::initialized(server).await;
    let params = json!({"name": "held", "python_version": "3.12"});
    let create = client
        .send_request(methods::CREATE, Some(params))
        .await
        .expect("send create");
    let created = client.response_to(create, |_| {}).await.expect("create");
    let id = created["result"]["id"].clone();
    assert!(id.is_string(), "{created}");

    let get = client
        .send_request(methods::GET, Some(json!({ "id": id })))
        .await
        .expect("send get");
    let delete = client
        .send_request(methods::DELETE, Some(json!({ "id": id })))
        .await
        .expect("send delete");
    let got = client.response_to(get, |_| {}).await.expect("get answer");
    assert_eq!(got["result"]["id"], id, "the get was read first: {got}");
    let deleted = client.response_to(delete, |_| {}).await.expect("delete");
    assert_eq!(deleted["result"]["id"], id, "{deleted}");
    let after = client
        .send_request(methods::GET, Some(json!({ "id": id })))
        .await
        .expect("send get");
    let after = client.response_to(after, |_| {}).await.expect("get after");
    assert_eq!(after["error"]["code"], json!(-31001), "{after}");
}
