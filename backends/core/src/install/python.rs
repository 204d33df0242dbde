//! Pythons that are not on the machine: [`PythonDownloads`] wraps a backend and, when a create
//! asks for a version that no locator finds, installs it with `uv python install` and
//! provisions again, so the new uv-managed interpreter is found and used.
//!
//! uv decides where the interpreter comes from and where it goes: its download metadata
//! (`UV_PYTHON_DOWNLOADS_JSON_URL`, mirrors) and its install directory
//! (`UV_PYTHON_INSTALL_DIR`), which is also where the inventory's uv locator looks. Nothing is
//! put on `PATH` (`--no-bin`). When uv cannot install the version, the create's answer is the
//! original "not available" one.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::Stdio;
use std::task::{Context, Poll};

use tower::{BoxError, Service, ServiceExt};

use crate::backend::{BackendError, BackendRequest, BackendResponse};

/// A backend that installs a missing Python with uv before giving up on it.
#[derive(Debug, Clone)]
pub struct PythonDownloads<S> {
    inner: S,
    uv: PathBuf,
}

impl<S> PythonDownloads<S> {
    /// `inner`, with missing Pythons installed by the `uv` at `uv`.
    pub fn new(inner: S, uv: PathBuf) -> Self {
        PythonDownloads { inner, uv }
    }
}

type Answer = Pin<Box<dyn Future<Output = Result<BackendResponse, BoxError>> + Send>>;

impl<S> Service<BackendRequest> for PythonDownloads<S>
where
    S: Service<BackendRequest, Response = BackendResponse> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = BackendResponse;
    type Error = BoxError;
    type Future = Answer;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: BackendRequest) -> Answer {
        let BackendRequest::Provision(provision) = &request else {
            let answer = self.inner.call(request);
            return Box::pin(async move { answer.await.map_err(Into::into) });
        };
        let retry = self.inner.clone();
        let again = provision.clone();
        let uv = self.uv.clone();
        let first = self.inner.call(request);
        Box::pin(async move {
            let error = match first.await.map_err(Into::into) {
                Ok(response) => return Ok(response),
                Err(error) => error,
            };
            let requested = match error.downcast_ref::<BackendError>() {
                Some(BackendError::VersionUnavailable { requested, .. }) => requested.clone(),
                _ => return Err(error),
            };
            if let Err(why) = uv_python_install(&uv, &requested).await {
                tracing::warn!(version = %requested, "uv could not install Python: {why}");
                return Err(error);
            }
            retry
                .oneshot(BackendRequest::Provision(again))
                .await
                .map_err(Into::into)
        })
    }
}

/// `uv python install --no-config --no-bin <version>`; `Err` holds what uv said.
async fn uv_python_install(uv: &std::path::Path, version: &str) -> Result<(), String> {
    let output = tokio::process::Command::new(uv)
        .args(["python", "install", "--no-config", "--no-bin", version])
        .env("UV_PYTHON_DOWNLOADS", "automatic")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("running {}: {e}", uv.display()))?;
    if output.status.success() {
        tracing::info!(version, "installed Python with uv");
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    Err(super::output::tail(stderr.trim(), 4096).to_owned())
}
