//! The router: method names bound to handlers.
//!
//! A [`Router`] runs last in the stack's read-time step (see [`crate::call`]): it looks the
//! method up (`-32601` when nothing is bound), validates the params into the handler's typed
//! value (every violated rule is listed in a `-32602`), runs the handler's read-time part and
//! makes its future, all before anything is polled. [`Dispatch`], the innermost service of
//! the stack, hands that future (or the answer) on.
//!
//! The router also knows what it binds, which is where the `methods` list of `initialize` and
//! the schema document and its fingerprint come from: nothing is listed that is not routed.
//! It is ready when every bound handler is (the way tower's `Steer` is).
//!
//! Notifications: a handler bound with [`Router::notification`] runs for its method, in read
//! order; any other notification goes to the fallback handler, if one is set, and is otherwise
//! ignored (logged at debug).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use serde_json::Value;
use sha2::{Digest, Sha256};
use tower::Service;
use wsp_protocol::method::Method;
use wsp_protocol::schema::{self, MethodSchema};
use wsp_protocol::{error, Notification, Params, Response};

use crate::call::{Call, Extensions, ReadTime, Settled};
use crate::context::{Connection, Context};
use crate::handler::{Handler, IntoHandler};
use crate::notify::BoxResponseFuture;
use crate::validation::Answering;
use crate::{ExitStatus, Notifier, Notify};

/// A handler of notifications; called in read order, it must not block.
pub type NotificationHandler = Arc<dyn Fn(&Notification) + Send + Sync>;

/// A handler of notifications that may hold the reading back: the session reads nothing more
/// until [`FlowHandler::poll_ready`] is ready for the notification, and then hands it to
/// [`FlowHandler::handle`] at once. Both are called in read order and must not block.
pub trait FlowHandler: Send + Sync + 'static {
    /// Whether `notification`, from `connection`, can be handled now; `Pending` (with `cx`'s
    /// waker kept for when it can) stops the session's reading until then.
    fn poll_ready(
        &self,
        connection: &Connection,
        notification: &Notification,
        cx: &mut TaskContext<'_>,
    ) -> Poll<()>;

    /// Handles `notification`, from `connection`.
    fn handle(&self, connection: &Connection, notification: &Notification);
}

trait Route: Send + Sync {
    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<()>;
    fn start(&mut self, call: &mut Call, connection: &Arc<Connection>);
    fn clone_box(&self) -> Box<dyn Route>;
}

struct Typed<P, H> {
    handler: H,
    params: PhantomData<fn() -> P>,
}

impl<P: Params + Send + 'static, H: Handler<P>> Route for Typed<P, H> {
    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<()> {
        self.handler.poll_ready(cx)
    }

    fn start(&mut self, call: &mut Call, connection: &Arc<Connection>) {
        let params = match P::from_request(call.request()) {
            Ok(params) => params,
            Err(violations) => return call.reject(error::invalid_params(&violations)),
        };
        let admitted = match self.handler.admit(&params, &ReadTime::new(call.request())) {
            Ok(admitted) => admitted,
            Err(e) => return call.reject(e),
        };
        let extensions = std::mem::take(&mut call.extensions);
        let cx = Context::new(call.request(), Arc::clone(connection), extensions);
        let future = self.handler.run(admitted, params, cx);
        call.settled = Settled::Routed(Box::pin(Answering::new(future, call.id().clone())));
    }

    fn clone_box(&self) -> Box<dyn Route> {
        Box::new(Typed {
            handler: self.handler.clone(),
            params: PhantomData::<fn() -> P>,
        })
    }
}

struct Bound {
    route: Box<dyn Route>,
    /// Shared by every connection's clone of the router.
    schema: Arc<MethodSchema>,
}

impl Clone for Bound {
    fn clone(&self) -> Self {
        Bound {
            route: self.route.clone_box(),
            schema: Arc::clone(&self.schema),
        }
    }
}

/// Method names bound to handlers.
#[derive(Default)]
pub struct Router {
    /// Each method's place in `bound`.
    routes: BTreeMap<String, usize>,
    bound: Vec<Bound>,
    /// The places in `bound` of the handlers that have not answered ready since they were
    /// bound, cloned or last started: only those are polled for readiness.
    unready: Vec<usize>,
    notifications: BTreeMap<String, NotificationHandler>,
    flows: BTreeMap<String, Arc<dyn FlowHandler>>,
    other_notifications: Option<NotificationHandler>,
    connection: Arc<Connection>,
}

impl Router {
    /// An empty router.
    pub fn new() -> Self {
        Router::default()
    }

    /// Binds the typed method `M` to a handler of its params: a [`Handler`] or a
    /// `tower::Service` of `M::Params` answering `M::Result`.
    pub fn method<M: Method, K>(
        self,
        handler: impl IntoHandler<M::Params, K, Handler: Handler<M::Params, Output = M::Result>>,
    ) -> Self
    where
        M::Params: Send + 'static,
    {
        self.route(M::NAME, handler)
    }

    /// Binds `method` to a handler of params `P` (see [`Router::method`]). Its `Ok` is
    /// serialized into the response's `result`, its `Err` sent as the response's `error`.
    pub fn route<P: Params + Send + 'static, K>(
        mut self,
        method: &str,
        handler: impl IntoHandler<P, K>,
    ) -> Self {
        let bound = bound::<P, K, _>(handler);
        let place = match self.routes.get(method) {
            Some(&place) => {
                self.bound[place] = bound;
                place
            }
            None => {
                self.bound.push(bound);
                self.routes.insert(method.to_owned(), self.bound.len() - 1);
                self.bound.len() - 1
            }
        };
        self.poll_before_next_call(place);
        self
    }

    /// Has the handler at `place` polled for readiness before the router is ready again.
    fn poll_before_next_call(&mut self, place: usize) {
        if !self.unready.contains(&place) {
            self.unready.push(place);
        }
    }

    /// Serves one connection: the handlers' notifications go through `notifier`, and their
    /// [`Context::facts`] are `facts` (the server sets both for each connection).
    pub fn with_connection(mut self, notifier: Notifier, facts: Extensions) -> Self {
        self.connection = Arc::new(Connection {
            id: Default::default(),
            notifier: Some(notifier),
            facts,
        });
        self
    }

    /// The connection every handler's [`Context`] sees.
    pub fn connection(&self) -> &Connection {
        &self.connection
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

    /// Runs `handler` for each notification of `method`, in read order, reading nothing more
    /// while it is not ready for one (see [`FlowHandler`]).
    pub fn notification_flow(mut self, method: &str, handler: impl FlowHandler) -> Self {
        self.flows.insert(method.to_owned(), Arc::new(handler));
        self
    }

    /// Whether the handler of `notification` can take it now (see [`FlowHandler`]).
    pub(crate) fn poll_notify_ready(
        &self,
        notification: &Notification,
        cx: &mut TaskContext<'_>,
    ) -> Poll<()> {
        match self.flows.get(&notification.method) {
            Some(flow) => flow.poll_ready(&self.connection, notification, cx),
            None => Poll::Ready(()),
        }
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
            .map(|(name, &place)| (name.clone(), MethodSchema::clone(&self.bound[place].schema)))
            .collect();
        schema::document(&methods)
    }

    /// The hex SHA-256 of the canonical [`Router::schema_document`].
    pub fn fingerprint(&self) -> String {
        fingerprint_of(&self.schema_document())
    }

    /// Ready when every bound handler is.
    pub(crate) fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<()> {
        let bound = &mut self.bound;
        self.unready
            .retain(|&place| bound[place].route.poll_ready(cx).is_pending());
        if self.unready.is_empty() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    /// The router's read-time step: settles `call` with its handler's future or an answer.
    pub(crate) fn admit(&mut self, call: &mut Call) {
        match self.routes.get(&call.method) {
            Some(&place) => {
                self.poll_before_next_call(place);
                self.bound[place].route.start(call, &self.connection);
            }
            None => {
                let missing = error::method_not_found(&call.method);
                call.reject(missing);
            }
        }
    }
}

fn bound<P: Params + Send + 'static, K, I: IntoHandler<P, K>>(handler: I) -> Bound {
    let schema = MethodSchema::with_result::<<I::Handler as Handler<P>>::Output>(P::schema());
    Bound {
        route: Box::new(Typed {
            handler: handler.into_handler(),
            params: PhantomData::<fn() -> P>,
        }),
        schema: Arc::new(schema),
    }
}

impl Clone for Router {
    /// Each handler of the clone is polled for readiness on its own before its first call.
    fn clone(&self) -> Self {
        Router {
            routes: self.routes.clone(),
            bound: self.bound.clone(),
            unready: (0..self.bound.len()).collect(),
            notifications: self.notifications.clone(),
            flows: self.flows.clone(),
            other_notifications: self.other_notifications.clone(),
            connection: Arc::clone(&self.connection),
        }
    }
}

impl Notify for Router {
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        if let Some(flow) = self.flows.get(&notification.method) {
            flow.handle(&self.connection, notification);
            return ControlFlow::Continue(());
        }
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

/// The hex SHA-256 of a schema document's canonical JSON.
pub fn fingerprint_of(document: &Value) -> String {
    Sha256::digest(schema::canonical_json(document).as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The innermost service of the stack: answers each call with what its read-time step
/// settled (the handler's future, or the answer).
#[derive(Debug, Clone, Copy, Default)]
pub struct Dispatch;

/// The response of [`Dispatch`].
pub enum DispatchFuture {
    /// The handler's future.
    Routed(BoxResponseFuture),
    /// Answered at read time; `None` once taken.
    Answered(Option<Response>),
}

impl Future for DispatchFuture {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            DispatchFuture::Routed(future) => future.as_mut().poll(cx),
            DispatchFuture::Answered(response) => Poll::Ready(Ok(response
                .take()
                .unwrap_or_else(crate::polled_after_completion))),
        }
    }
}

impl Service<Call> for Dispatch {
    type Response = Response;
    type Error = Infallible;
    type Future = DispatchFuture;

    fn poll_ready(&mut self, _cx: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call) -> DispatchFuture {
        match call.settled {
            Settled::Routed(future) => DispatchFuture::Routed(future),
            Settled::Answered(response) => DispatchFuture::Answered(Some(response)),
            Settled::Open => DispatchFuture::Answered(Some(Response::error(
                call.request().id.clone(),
                error::internal_error("the request reached no handler"),
            ))),
        }
    }
}

impl Notify for Dispatch {
    fn notify(&mut self, _notification: &Notification) -> ControlFlow<ExitStatus> {
        ControlFlow::Continue(())
    }
}
