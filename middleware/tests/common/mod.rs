//! Helpers shared by the middleware tests: requests, a small method dispatcher standing in for
//! the server's router, and a drop flag.
#![allow(dead_code)]

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use tower::{Service, ServiceExt};
use wsp_protocol::{error, methods, Id, Request, Response};

/// A request with a numeric id.
pub fn request(id: i64, method: &str, params: Option<Value>) -> Request {
    Request::new(Id::from(id), method, params)
}

/// Valid `initialize` params.
pub fn init_params() -> Option<Value> {
    Some(json!({"client_name": "test", "client_protocol_version": "0.1.0"}))
}

/// A dispatcher for the WSP methods that answers `{"method": <name>}` and counts its calls;
/// unknown methods get `-32601`.
#[derive(Clone, Default)]
pub struct Dispatch {
    pub calls: Arc<AtomicUsize>,
}

impl Dispatch {
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    pub fn service(
        &self,
    ) -> impl Service<wsp_middleware::Call, Response = Response, Error = Infallible, Future: Send> + Clone
    {
        let calls = Arc::clone(&self.calls);
        tower::service_fn(move |request: wsp_middleware::Call| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move {
                let known = [
                    methods::INITIALIZE,
                    methods::SHUTDOWN,
                    methods::LIST,
                    methods::GET,
                ];
                Ok::<_, Infallible>(if known.contains(&request.method.as_str()) {
                    Response::ok(request.id.clone(), json!({ "method": request.method }))
                } else {
                    Response::error(request.id.clone(), error::method_not_found(&request.method))
                })
            }
        })
    }
}

impl Dispatch {
    /// A router binding the same methods, counting its handlers' calls.
    pub fn router(&self) -> wsp_middleware::Router {
        let answer = |method: &'static str, calls: Arc<AtomicUsize>| {
            wsp_middleware::handler_fn(
                move |_: wsp_protocol::NoParams, _: wsp_middleware::Context| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    async move { Ok(json!({ "method": method })) }
                },
            )
        };
        let initialize = {
            let calls = Arc::clone(&self.calls);
            wsp_middleware::handler_fn(
                move |_: wsp_protocol::InitializeParams, _: wsp_middleware::Context| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    async move { Ok(json!({ "method": methods::INITIALIZE })) }
                },
            )
        };
        wsp_middleware::Router::new()
            .route(methods::INITIALIZE, initialize)
            .route(
                methods::SHUTDOWN,
                answer(methods::SHUTDOWN, Arc::clone(&self.calls)),
            )
            .route(
                methods::LIST,
                answer(methods::LIST, Arc::clone(&self.calls)),
            )
            .route(methods::GET, answer(methods::GET, Arc::clone(&self.calls)))
    }
}

/// Sends one request through a whole stack once it is ready.
pub async fn ask<S>(service: &mut S, request: Request) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let Ok(response) = service.ready().await.map(|s| s.call(request));
    let Ok(response) = response.await;
    response
}

/// Sends one request through `service` once it is ready.
pub async fn send<S>(service: &mut S, request: Request) -> Response
where
    S: Service<wsp_middleware::Call, Response = Response, Error = Infallible>,
{
    let Ok(response) = service.ready().await.map(|s| s.call(request.into()));
    let Ok(response) = response.await;
    response
}

/// Sets its flag when dropped.
pub struct DropFlag(pub Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The `data.violations` of an error response, as `(field, rule)` pairs.
pub fn violations(response: &Response) -> Vec<(String, String)> {
    let Err(e) = &response.outcome else {
        panic!("expected an error, got {response:?}");
    };
    let data: Value = e
        .data()
        .map(|raw| serde_json::from_str(raw.get()).expect("data is JSON"))
        .expect("violations data");
    data["violations"]
        .as_array()
        .expect("violations array")
        .iter()
        .map(|v| {
            (
                v["field"].as_str().unwrap_or_default().to_owned(),
                v["rule"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}
