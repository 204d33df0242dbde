//! The backend under test with one step altered, for the checks of the server's own rules
//! (what a failed or stalled create leaves, the order of installs): one tower service over
//! every request type, so it wraps any backend.

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tokio::sync::{mpsc, Semaphore};
use wsp_backend::{Answers, BackendError, BackendRequest, BackendStack, BoxBackend, Step};
use wsp_protocol::FailureReason;

/// What changes.
pub(crate) enum Alteration {
    /// A provision that succeeded answers an error (reason `injected`) instead.
    FailAfterProvision,
    /// A provision that succeeded never answers.
    StallAfterProvision,
    /// Each install says so on `entered`, then waits for a permit of `release`.
    GateInstalls {
        entered: mpsc::UnboundedSender<()>,
        release: Arc<Semaphore>,
    },
}

impl Alteration {
    /// `backend` with this alteration, ready for the server.
    pub(crate) fn apply(self, backend: BoxBackend) -> BoxBackend {
        BoxBackend::new(Altered {
            inner: backend,
            alteration: Arc::new(self),
        })
    }

    async fn before(&self, step: Step) -> Result<(), BackendError> {
        if let (Alteration::GateInstalls { entered, release }, Step::Install) = (self, step) {
            let _ = entered.send(());
            let permit = release.acquire().await.map_err(|closed| {
                BackendError::caused_by(FailureReason::custom("gate"), "the gate closed", closed)
            })?;
            permit.forget();
        }
        Ok(())
    }

    async fn after(&self, step: Step) -> Result<(), BackendError> {
        match (self, step) {
            (Alteration::FailAfterProvision, Step::Provision) => Err(BackendError::failed(
                FailureReason::custom("injected"),
                "provisioned, then failed",
            )),
            (Alteration::StallAfterProvision, Step::Provision) => std::future::pending().await,
            _ => Ok(()),
        }
    }
}

#[derive(Clone)]
struct Altered {
    inner: BoxBackend,
    alteration: Arc<Alteration>,
}

impl<R> tower::Service<R> for Altered
where
    R: BackendRequest,
    dyn BackendStack: Answers<R>,
{
    type Response = R::Response;
    type Error = BackendError;
    type Future = BoxFuture<'static, Result<R::Response, BackendError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BackendError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: R) -> Self::Future {
        let Altered { inner, alteration } = self.clone();
        Box::pin(async move {
            alteration.before(R::STEP).await?;
            let answer = inner.call(request).await?;
            alteration.after(R::STEP).await?;
            Ok(answer)
        })
    }
}
