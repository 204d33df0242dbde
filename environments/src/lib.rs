//! wsp-environments: the WSP environment methods, bound to any backend.
//!
//! [`Environments`] holds what every backend shares: the state store (index, ids, names,
//! locks), the in-process side of the delete-waits rule, and the order of checks. The backend
//! only provisions, describes, runs in, installs into and releases environments (see
//! [`wsp_backend::backend`]).
//!
//! Work that decides a request's fate by read order happens synchronously when the router calls
//! the handler: a `get`/`execute` registers its use of the environment, a `delete` marks the
//! environment as going away. Everything else runs in the request's future.

#![warn(missing_docs)]

mod failure;
mod handlers;
mod install;
mod progress;
mod streaming;
mod usage;

use std::sync::Arc;

use wsp_backend::install::InstallSource;
use wsp_backend::store::Store;
use wsp_backend::BoxBackend;
use wsp_protocol::methods;
use wsp_protocol::schema::MethodSchema;

use usage::Usage;
use wsp_middleware::Notifier;
use wsp_middleware::Router;
use wsp_server::{Facts, MethodGroup};

/// What an `environment/execute` that does not say gets (`wsp serve --max-output-bytes`,
/// `--sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecuteDefaults {
    /// The most bytes each output stream takes in the result, JSON-encoded (at least 1).
    pub max_output_bytes: u64,
    /// Whether the command runs sandboxed; installs into the environments then run
    /// sandboxed too.
    pub sandbox: bool,
}

impl Default for ExecuteDefaults {
    fn default() -> Self {
        ExecuteDefaults {
            max_output_bytes: wsp_backend::execute::DEFAULT_MAX_OUTPUT_BYTES,
            sandbox: false,
        }
    }
}

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
    execute_defaults: ExecuteDefaults,
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
                execute_defaults: ExecuteDefaults::default(),
            }),
        }
    }

    /// Sets what every install uses unless its request says otherwise: `find_links` come
    /// before the request's own, `index_url` and `no_index` are replaced by the request's
    /// (`wsp serve --find-links`, `--index-url`, `--no-index`).
    pub fn with_install_defaults(self, defaults: InstallSource) -> Self {
        self.rebuilt(defaults, self.inner.execute_defaults)
    }

    /// Sets what every execute gets unless its request says otherwise.
    pub fn with_execute_defaults(self, defaults: ExecuteDefaults) -> Self {
        let defaults = ExecuteDefaults {
            max_output_bytes: defaults.max_output_bytes.max(1),
            ..defaults
        };
        self.rebuilt(self.inner.install_defaults.clone(), defaults)
    }

    fn rebuilt(&self, install: InstallSource, execute: ExecuteDefaults) -> Self {
        let inner = &self.inner;
        Environments {
            inner: Arc::new(Inner {
                store: inner.store.clone(),
                backend: inner.backend.clone(),
                backend_name: inner.backend_name.clone(),
                usage: inner.usage.clone(),
                turns: install::Turns::default(),
                install_defaults: install,
                execute_defaults: execute,
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
        if wsp_backend::execute::sandbox_availability().is_ok() {
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

/// The environment methods as a server's method group: bound with each connection's
/// notifier, they report the state directory, the backend, what the sandbox and the process
/// limit can do here, and the features they serve; at shutdown, whatever an execute started
/// and the drain did not end is killed.
impl MethodGroup for Environments {
    fn bind(&self, router: Router, notifier: &Notifier) -> Router {
        self.clone().bind(router, Some(notifier.clone()))
    }

    fn facts(&self, facts: &mut Facts) {
        facts
            .set("wsp_home", self.inner.store.dir().display().to_string())
            .set("session_durability", "durable");
        // Probed once per process: whether the shared runner can enforce `sandbox: true`.
        match wsp_backend::execute::sandbox_availability() {
            Ok(()) => facts
                .set("sandbox_availability", "available")
                .remove("sandbox_unavailable_reason"),
            Err(reason) => facts
                .set("sandbox_availability", "unavailable")
                .set("sandbox_unavailable_reason", reason),
        };
        facts
            .set(
                "process_limit",
                wsp_backend::execute::process_limit().as_str(),
            )
            .set("backend", &self.inner.backend_name)
            .add_features(Environments::features(true));
    }

    fn shutdown(&self) {
        wsp_backend::execute::kill_all_live();
    }
}
