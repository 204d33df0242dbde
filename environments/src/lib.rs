//! wsp-environments: the WSP environment methods, bound to any backend.
//!
//! [`Environments`] holds what every backend shares: the state store (index, ids, names,
//! locks), the in-process side of the delete-waits rule, and the order of checks. The backend
//! only provisions, describes, runs in, installs into and releases environments (see
//! [`wsp_backend::Backend`]).
//!
//! Work that decides a request's fate by read order happens synchronously when the router calls
//! the handler: a `get`/`execute` registers its use of the environment, a `delete` marks the
//! environment as going away. Everything else runs in the request's future.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod failure;
mod handlers;
mod install;
mod progress;
pub mod store;
mod streaming;
mod usage;

use std::sync::Arc;

use crate::store::Store;
use wsp_backend::{BoxBackend, InstallSource};
use wsp_protocol::methods;
use wsp_protocol::schema::MethodSchema;

use usage::Usage;
use wsp_middleware::Notifier;
use wsp_middleware::Router;

/// The environment methods over one store and one backend.
#[derive(Clone)]
pub struct Environments {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    backend: BoxBackend,
    backend_name: String,
    usage: Usage,
    turns: install::Turns,
    install_defaults: InstallSource,
}

impl Environments {
    /// Serves environments from `store` with `backend`, whose name is `backend_name`.
    ///
    /// `backend` is any [`Backend`](wsp_backend::Backend), or a [`BoxBackend`] holding one
    /// wrapped in whatever tower layers the caller likes (they need not be `Clone`). A
    /// [`BackendError`](wsp_backend::BackendError) keeps its meaning; a tower timeout becomes
    /// `-31004` with reason `timeout`; any other error `-31004` with reason `backend-error`
    /// ([`BackendError::from_layer`](wsp_backend::BackendError::from_layer)).
    pub fn new(
        store: Store,
        backend_name: impl Into<String>,
        backend: impl Into<BoxBackend>,
    ) -> Self {
        Environments {
            inner: Arc::new(Inner {
                store,
                backend: backend.into(),
                backend_name: backend_name.into(),
                usage: Usage::default(),
                turns: install::Turns::default(),
                install_defaults: InstallSource::default(),
            }),
        }
    }

    /// Sets what every install uses unless its request says otherwise: `find_links` come
    /// before the request's own, `index_url` and `no_index` are replaced by the request's
    /// (`wsp serve --find-links`, `--index-url`, `--no-index`).
    pub fn with_install_defaults(self, defaults: InstallSource) -> Self {
        let inner = &self.inner;
        Environments {
            inner: Arc::new(Inner {
                store: inner.store.clone(),
                backend: inner.backend.clone(),
                backend_name: inner.backend_name.clone(),
                usage: inner.usage.clone(),
                turns: install::Turns::default(),
                install_defaults: defaults,
            }),
        }
    }

    /// The extensions beyond WSP 0.1.0 that [`Environments::bind`] serves, for `initialize`'s
    /// `features`: `progress` only with a notifier to send it through, `execute.sandbox` only
    /// where this kernel can enforce the sandbox.
    pub fn features(with_notifier: bool) -> Vec<String> {
        let mut features = vec![
            methods::INSTALL,
            "execute.stream",
            "execute.stdin",
            "execute.timeout",
            "execute.limits",
        ];
        if with_notifier {
            features.push("progress");
        }
        if wsp_exec::sandbox_availability().is_ok() {
            features.push("execute.sandbox");
        }
        features.into_iter().map(str::to_owned).collect()
    }

    /// Binds `environment/list`, `create`, `get`, `delete`, `execute`, `install` and
    /// `uninstall`; `environment/output` and `$/progress` notifications go through `notifier`
    /// (without one, `stream: true` and `work_done_token` change nothing but the result still
    /// carries the output).
    pub fn bind(self, router: Router, notifier: Option<Notifier>) -> Router {
        let list = self.clone();
        let create = (self.clone(), notifier.clone());
        let get = self.clone();
        let delete = self.clone();
        let install = (self.clone(), notifier.clone());
        let uninstall = self.clone();
        let execute = streaming::Execute {
            environments: self,
            notifier,
        };
        router
            .route(
                methods::LIST,
                tower::service_fn(move |_: wsp_protocol::NoParams| list.clone().list()),
            )
            .route(
                methods::CREATE,
                tower::service_fn(move |params| create.0.clone().create(params, create.1.clone())),
            )
            .route(
                methods::GET,
                tower::service_fn(move |params| get.clone().get(params)),
            )
            .route(
                methods::DELETE,
                tower::service_fn(move |wsp_protocol::params::DeleteParams { id }| {
                    delete.clone().delete(wsp_protocol::IdParams { id })
                }),
            )
            .route_raw(
                methods::EXECUTE,
                execute,
                MethodSchema::of::<wsp_protocol::method::Execute>(),
            )
            .route(
                methods::INSTALL,
                tower::service_fn(move |params| {
                    install.0.clone().install(params, install.1.clone())
                }),
            )
            .route(
                methods::UNINSTALL,
                tower::service_fn(move |params| uninstall.clone().uninstall(params)),
            )
    }

    fn backend(&self) -> &BoxBackend {
        &self.inner.backend
    }
}
