//! A [`Backend`] as tower services: [`BackendService`] (the adapter), [`BackendStack`] (what
//! any layers around it still are), and [`BoxBackend`] (a stack as the server holds it).

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tower::{BoxError, Service};

use super::{
    Backend, BackendError, BackendRequest, CanRelabelRequest, DescribeRequest, InstallRequest,
    LockInstallRequest, LockRequest, PrepareSpareRequest, ProvisionRequest, RelabelRequest,
    ReleaseRequest, ResolveRequest, RunRequest, UninstallRequest,
};

/// Any [`Backend`] as a `tower::Service` of every [`BackendRequest`]: a [`ProvisionRequest`]
/// is answered with [`Provisioned`](super::Provisioned), a [`DescribeRequest`] with
/// [`Description`](super::Description), and so on.
/// Always ready; cloning is cheap and shares the backend.
///
/// ```
/// # use std::time::Duration;
/// # struct Venvs;
/// # impl wsp_backend::Backend for Venvs {
/// #     async fn provision(
/// #         &self,
/// #         _: wsp_backend::ProvisionRequest,
/// #     ) -> Result<wsp_backend::Provisioned, wsp_backend::BackendError> {
/// #         unimplemented!()
/// #     }
/// #     async fn describe(&self, _: wsp_backend::DescribeRequest) -> Result<wsp_backend::Description, wsp_backend::BackendError> { unimplemented!() }
/// #     async fn run(&self, _: wsp_backend::RunRequest) -> Result<wsp_protocol::ExecuteResult, wsp_backend::BackendError> { unimplemented!() }
/// #     async fn install(&self, _: wsp_backend::InstallRequest) -> Result<(), wsp_backend::BackendError> { unimplemented!() }
/// #     async fn uninstall(&self, _: wsp_backend::UninstallRequest) -> Result<(), wsp_backend::BackendError> { unimplemented!() }
/// #     async fn release(&self, _: wsp_backend::ReleaseRequest) -> Result<(), wsp_backend::BackendError> { unimplemented!() }
/// #     async fn lock(&self, _: wsp_backend::LockRequest) -> Result<wsp_protocol::Lock, wsp_backend::BackendError> { unimplemented!() }
/// #     async fn install_lock(&self, _: wsp_backend::LockInstallRequest) -> Result<(), wsp_backend::BackendError> { unimplemented!() }
/// # }
/// use tower::ServiceBuilder;
/// use wsp_backend::{BackendService, BoxBackend};
///
/// let layered = ServiceBuilder::new()
///     .timeout(Duration::from_secs(120))
///     .concurrency_limit(4)
///     .service(BackendService::new(Venvs));
/// let for_the_server = BoxBackend::new(layered);
/// ```
pub struct BackendService<B> {
    backend: Arc<B>,
}

impl<B: Backend> BackendService<B> {
    /// Serves `backend`.
    pub fn new(backend: B) -> Self {
        BackendService {
            backend: Arc::new(backend),
        }
    }
}

impl<B> Clone for BackendService<B> {
    fn clone(&self) -> Self {
        BackendService {
            backend: self.backend.clone(),
        }
    }
}

impl<B: Backend, R: BackendRequest> Service<R> for BackendService<B> {
    type Response = R::Response;
    type Error = BackendError;
    type Future = BoxFuture<'static, Result<R::Response, BackendError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BackendError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: R) -> Self::Future {
        let backend = self.backend.clone();
        Box::pin(async move { request.answer(&*backend).await })
    }
}

/// A service that answers `R` with `R::Response`, whose errors convert into
/// [`BackendError`]s ([`BackendError::from_layer`]) and whose futures are `Send`: what
/// [`BackendService`] is, wrapped in any tower layers. Implemented for every such service.
pub trait Answers<R: BackendRequest>: Send + 'static {
    /// `Service::poll_ready`, its error converted.
    fn poll_ready_to_answer(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BackendError>>;

    /// `Service::call`, its future boxed and its error converted.
    fn answer(&mut self, request: R) -> BoxFuture<'static, Result<R::Response, BackendError>>;
}

impl<S, R> Answers<R> for S
where
    R: BackendRequest,
    S: Service<R, Response = R::Response> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    fn poll_ready_to_answer(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BackendError>> {
        Service::poll_ready(self, cx).map_err(|error| BackendError::from_layer(error.into()))
    }

    fn answer(&mut self, request: R) -> BoxFuture<'static, Result<R::Response, BackendError>> {
        let answer = Service::call(self, request);
        Box::pin(async move {
            answer
                .await
                .map_err(|error| BackendError::from_layer(error.into()))
        })
    }
}

/// A backend as tower services of all its requests: a [`BackendService`] in any tower
/// layers (`TimeoutLayer`, `ConcurrencyLimitLayer`, `RateLimitLayer`, your own), `Clone` or
/// not. Implemented for every service that [`Answers`] each request.
pub trait BackendStack:
    Answers<ProvisionRequest>
    + Answers<DescribeRequest>
    + Answers<RunRequest>
    + Answers<InstallRequest>
    + Answers<UninstallRequest>
    + Answers<ReleaseRequest>
    + Answers<LockRequest>
    + Answers<LockInstallRequest>
    + Answers<ResolveRequest>
    + Answers<CanRelabelRequest>
    + Answers<RelabelRequest>
    + Answers<PrepareSpareRequest>
{
}

impl<S> BackendStack for S where
    S: Answers<ProvisionRequest>
        + Answers<DescribeRequest>
        + Answers<RunRequest>
        + Answers<InstallRequest>
        + Answers<UninstallRequest>
        + Answers<ReleaseRequest>
        + Answers<LockRequest>
        + Answers<LockInstallRequest>
        + Answers<ResolveRequest>
        + Answers<CanRelabelRequest>
        + Answers<RelabelRequest>
        + Answers<PrepareSpareRequest>
{
}

/// A [`BackendStack`], type-erased and cheap to clone: what the environment service holds.
/// Any [`Backend`] converts into one (with no layers); a layered one is
/// `BoxBackend::new(layers.service(BackendService::new(backend)))`.
///
/// The stack need not be `Clone` (tower's `RateLimit` is not): it is shared behind a lock
/// that is held only while the stack becomes ready and is called, so its backpressure still
/// applies and the answers still run concurrently.
#[derive(Clone)]
pub struct BoxBackend {
    stack: Arc<tokio::sync::Mutex<dyn BackendStack>>,
}

impl BoxBackend {
    /// Holds `stack`.
    pub fn new(stack: impl BackendStack) -> Self {
        BoxBackend {
            stack: Arc::new(tokio::sync::Mutex::new(stack)),
        }
    }

    /// Sends `request` through the stack: waits until it is ready, calls it, and awaits the
    /// answer, whose type follows from the request's.
    pub async fn call<R>(&self, request: R) -> Result<R::Response, BackendError>
    where
        R: BackendRequest,
        dyn BackendStack: Answers<R>,
    {
        let answer = {
            let mut stack = self.stack.lock().await;
            let stack: &mut dyn BackendStack = &mut *stack;
            std::future::poll_fn(|cx| Answers::<R>::poll_ready_to_answer(stack, cx)).await?;
            Answers::<R>::answer(stack, request)
        };
        answer.await
    }
}

impl<B: Backend> From<B> for BoxBackend {
    fn from(backend: B) -> Self {
        BoxBackend::new(BackendService::new(backend))
    }
}
