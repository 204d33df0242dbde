//! The router: method names bound to tower services.
//!
//! A [`Router`] is the innermost layer the runtime's stack reaches: it looks the method up
//! (`-32601` when nothing is bound) and hands the request to that method's service. Methods are
//! usually bound with [`Router::route`], which validates params into a typed value first (every
//! violated rule is listed in a `-32602`); [`Router::route_raw`] takes an untyped service.
//!
//! The router also knows what it binds, which is where the `methods` list of `initialize` and
//! the schema fingerprint come from: nothing is listed that is not routed.
//!
//! A bound service is called synchronously from the router's `call` whenever it is ready, so
//! work a handler does before its first `.await` happens in the order requests were read.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tower::util::BoxCloneSyncService;
use tower::{Service, ServiceExt};
use wsp_protocol::{error, ErrorObjectOwned, Params, Request, Response};

/// A method's service, type-erased.
pub type MethodService = BoxCloneSyncService<Request, Response, Infallible>;

#[derive(Clone)]
struct Route {
    service: MethodService,
    schema: Value,
}

/// Method names bound to services.
#[derive(Clone, Default)]
pub struct Router {
    routes: BTreeMap<String, Route>,
}

impl Router {
    /// An empty router.
    pub fn new() -> Self {
        Router::default()
    }

    /// Binds `method` to a service taking validated params `P`. Its `Ok` is serialized into the
    /// response's `result`, its `Err` sent as the response's `error`.
    pub fn route<P, S, R>(self, method: &str, service: S) -> Self
    where
        P: Params,
        S: Service<P, Response = R, Error = ErrorObjectOwned> + Clone + Send + Sync + 'static,
        S::Future: Send + 'static,
        R: Serialize + Send + 'static,
    {
        self.route_raw(
            method,
            wsp_middleware::validation::typed::<P, S>(service),
            P::schema(),
        )
    }

    /// Binds `method` to an untyped service; `schema` describes its params for the fingerprint.
    pub fn route_raw<S>(mut self, method: &str, service: S, schema: Value) -> Self
    where
        S: Service<Request, Response = Response, Error = Infallible>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
    {
        let route = Route {
            service: BoxCloneSyncService::new(service),
            schema,
        };
        self.routes.insert(method.to_owned(), route);
        self
    }

    /// Whether `method` is bound.
    pub fn has(&self, method: &str) -> bool {
        self.routes.contains_key(method)
    }

    /// The bound methods, sorted ascending, each once.
    pub fn methods(&self) -> Vec<String> {
        self.routes.keys().cloned().collect()
    }

    /// A stable hex SHA-256 of the bound methods and their params schemas.
    pub fn fingerprint(&self) -> String {
        let mut hasher = Sha256::new();
        for (method, route) in self.routes.iter() {
            hasher.update(method.as_bytes());
            hasher.update([0]);
            hasher.update(canonical_json(&route.schema).as_bytes());
            hasher.update([0]);
        }
        hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }
}

/// JSON with object keys sorted, so equal schemas hash equally.
fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, String> =
                map.iter().map(|(k, v)| (k, canonical_json(v))).collect();
            let fields: Vec<String> = sorted
                .into_iter()
                .map(|(k, v)| format!("{}:{v}", Value::String(k.clone())))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// The router's response future.
pub type RouterFuture = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl Service<Request> for Router {
    type Response = Response;
    type Error = Infallible;
    type Future = RouterFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let Some(route) = self.routes.get(&request.method) else {
            let response = Response::error(request.id, error::method_not_found(&request.method));
            return Box::pin(std::future::ready(Ok(response)));
        };
        let mut service = route.service.clone();
        let mut cx = Context::from_waker(Waker::noop());
        match service.poll_ready(&mut cx) {
            Poll::Ready(Ok(())) => Box::pin(service.call(request)),
            Poll::Ready(Err(never)) => match never {},
            Poll::Pending => Box::pin(service.oneshot(request)),
        }
    }
}
