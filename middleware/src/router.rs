//! The router: method names bound to tower services.
//!
//! A [`Router`] is the innermost layer the runtime's stack reaches: it looks the method up
//! (`-32601` when nothing is bound) and hands the request to that method's service. Methods are
//! usually bound with [`Router::route`], which validates params into a typed value first (every
//! violated rule is listed in a `-32602`); [`Router::route_raw`] takes an untyped service.
//!
//! The router also knows what it binds, which is where the `methods` list of `initialize` and
//! the schema document and its fingerprint come from: nothing is listed that is not routed.
//!
//! The router is ready when every bound service is (the way tower's `Steer` is), and then
//! calls the request's service synchronously from its own `call`, so work a handler does before
//! its first `.await` happens in the order requests were read.
//!
//! Notifications reach the router through [`Notify`]: a handler bound with
//! [`Router::notification`] runs for its method, in read order; any other notification goes to
//! the fallback handler, if one is set, and is otherwise ignored (logged at debug).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::{ExitStatus, Notify};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tower::util::BoxCloneSyncService;
use tower::Service;
use wsp_protocol::method::Method;
use wsp_protocol::schema::{self, MethodSchema};
use wsp_protocol::{error, ErrorObjectOwned, Notification, Params, Request, Response};

/// A handler of notifications; called in read order, it must not block.
pub type NotificationHandler = Arc<dyn Fn(&Notification) + Send + Sync>;

/// A method's service, type-erased.
pub type MethodService = BoxCloneSyncService<Request, Response, Infallible>;

struct Route {
    service: MethodService,
    schema: MethodSchema,
    /// Its service answered `poll_ready` with ready and has not been called since.
    ready: bool,
}

impl Clone for Route {
    /// A clone of a service must be polled for readiness on its own.
    fn clone(&self) -> Self {
        Route {
            service: self.service.clone(),
            schema: self.schema.clone(),
            ready: false,
        }
    }
}

/// Method names bound to services.
#[derive(Clone, Default)]
pub struct Router {
    routes: BTreeMap<String, Route>,
    notifications: BTreeMap<String, NotificationHandler>,
    other_notifications: Option<NotificationHandler>,
}

impl Router {
    /// An empty router.
    pub fn new() -> Self {
        Router::default()
    }

    /// Binds the typed method `M` to a service of its validated params.
    pub fn method<M, S>(self, service: S) -> Self
    where
        M: Method,
        S: Service<M::Params, Response = M::Result, Error = ErrorObjectOwned>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
        M::Result: Send + 'static,
    {
        self.route(M::NAME, service)
    }

    /// Binds `method` to a service taking validated params `P`. Its `Ok` is serialized into the
    /// response's `result`, its `Err` sent as the response's `error`.
    pub fn route<P, S, R>(self, method: &str, service: S) -> Self
    where
        P: Params,
        S: Service<P, Response = R, Error = ErrorObjectOwned> + Clone + Send + Sync + 'static,
        S::Future: Send + 'static,
        R: Serialize + JsonSchema + Send + 'static,
    {
        let schema = MethodSchema::with_result::<R>(P::schema());
        self.route_raw(method, crate::validation::typed::<P, S>(service), schema)
    }

    /// Binds `method` to an untyped service; `schema` describes its params and result for the
    /// schema document and the fingerprint.
    pub fn route_raw<S>(mut self, method: &str, service: S, schema: MethodSchema) -> Self
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
            ready: false,
        };
        self.routes.insert(method.to_owned(), route);
        self
    }

    /// Runs `handler` for each notification of `method`, in read order.
    pub fn notification(
        mut self,
        method: &str,
        handler: impl Fn(&Notification) + Send + Sync + 'static,
    ) -> Self {
        self.notifications
            .insert(method.to_owned(), Arc::new(handler));
        self
    }

    /// Runs `handler` for each notification no other handler is bound to.
    pub fn other_notifications(
        mut self,
        handler: impl Fn(&Notification) + Send + Sync + 'static,
    ) -> Self {
        self.other_notifications = Some(Arc::new(handler));
        self
    }

    /// The bound methods, sorted ascending, each once.
    pub fn methods(&self) -> Vec<String> {
        self.routes.keys().cloned().collect()
    }

    /// The JSON Schema document of what is bound (see [`wsp_protocol::schema`]).
    pub fn schema_document(&self) -> Value {
        let methods = self
            .routes
            .iter()
            .map(|(name, route)| (name.clone(), route.schema.clone()))
            .collect();
        schema::document(&methods)
    }

    /// The hex SHA-256 of the canonical [`Router::schema_document`].
    pub fn fingerprint(&self) -> String {
        fingerprint_of(&self.schema_document())
    }
}

/// The hex SHA-256 of a schema document's canonical JSON.
pub fn fingerprint_of(document: &Value) -> String {
    Sha256::digest(schema::canonical_json(document).as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The router's response future: the bound service's, or the `-32601` for an unbound method.
pub enum RouterFuture {
    /// The bound service's future.
    Routed(Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>),
    /// Answered by the router itself; `None` once taken.
    Answered(Option<Response>),
}

impl Future for RouterFuture {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            RouterFuture::Routed(future) => future.as_mut().poll(cx),
            RouterFuture::Answered(response) => Poll::Ready(Ok(response
                .take()
                .unwrap_or_else(crate::polled_after_completion))),
        }
    }
}

impl Service<Request> for Router {
    type Response = Response;
    type Error = Infallible;
    type Future = RouterFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        let mut ready = true;
        for route in self.routes.values_mut().filter(|route| !route.ready) {
            route.ready = route.service.poll_ready(cx).is_ready();
            ready &= route.ready;
        }
        if ready {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match self.routes.get_mut(&request.method) {
            Some(route) => {
                route.ready = false;
                RouterFuture::Routed(route.service.call(request))
            }
            None => RouterFuture::Answered(Some(Response::error(
                request.id,
                error::method_not_found(&request.method),
            ))),
        }
    }
}

impl Notify for Router {
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        match self
            .notifications
            .get(&notification.method)
            .or(self.other_notifications.as_ref())
        {
            Some(handler) => handler(notification),
            None => tracing::debug!(method = %notification.method, "notification ignored"),
        }
        ControlFlow::Continue(())
    }
}
