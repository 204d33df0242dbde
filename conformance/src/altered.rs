//! The backend under test with one step altered, for the checks of the server's own rules
//! (what a failed or stalled create leaves, the order of installs). It wraps any backend.

use std::sync::Arc;

use tokio::sync::{mpsc, Semaphore};
use wsp_backend::{Answers, Backend, BackendError, BackendRequest, BackendStack, BoxBackend};
use wsp_backend::{DescribeRequest, Description, ProvisionRequest, Provisioned};
use wsp_backend::{
    LockInstallRequest, LockRequest, ReleaseRequest, ResolveRequest, ResolvedInterpreter,
    RunRequest,
};
use wsp_install::{InstallRequest, UninstallRequest};
use wsp_protocol::{ExecuteResult, FailureReason};

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

/// The steps an alteration tells apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Provision,
    Install,
    Other,
}

impl Alteration {
    /// `backend` with this alteration, ready for the server.
    pub(crate) fn apply(self, backend: BoxBackend) -> BoxBackend {
        BoxBackend::from(Altered {
            inner: backend,
            alteration: self,
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

struct Altered {
    inner: BoxBackend,
    alteration: Alteration,
}

impl Altered {
    /// `request` through the backend under test, the alteration around it.
    async fn pass<R>(&self, step: Step, request: R) -> Result<R::Response, BackendError>
    where
        R: BackendRequest,
        dyn BackendStack: Answers<R>,
    {
        self.alteration.before(step).await?;
        let answer = self.inner.call(request).await?;
        self.alteration.after(step).await?;
        Ok(answer)
    }
}

impl Backend for Altered {
    async fn provision(&self, request: ProvisionRequest) -> Result<Provisioned, BackendError> {
        self.pass(Step::Provision, request).await
    }

    async fn describe(&self, request: DescribeRequest) -> Result<Description, BackendError> {
        self.pass(Step::Other, request).await
    }

    async fn run(&self, request: RunRequest) -> Result<ExecuteResult, BackendError> {
        self.pass(Step::Other, request).await
    }

    async fn install(&self, request: InstallRequest) -> Result<(), BackendError> {
        self.pass(Step::Install, request).await
    }

    async fn uninstall(&self, request: UninstallRequest) -> Result<(), BackendError> {
        self.pass(Step::Other, request).await
    }

    async fn release(&self, request: ReleaseRequest) -> Result<(), BackendError> {
        self.pass(Step::Other, request).await
    }

    async fn lock(&self, request: LockRequest) -> Result<wsp_protocol::Lock, BackendError> {
        self.pass(Step::Other, request).await
    }

    async fn install_lock(&self, request: LockInstallRequest) -> Result<(), BackendError> {
        self.pass(Step::Install, request).await
    }

    async fn resolve_interpreter(
        &self,
        request: ResolveRequest,
    ) -> Result<Option<ResolvedInterpreter>, BackendError> {
        self.pass(Step::Other, request).await
    }
}
