//! wsp-environments: the WSP environment methods, bound to any backend.
//!
//! [`Environments`] holds what every backend shares: the state store (index, ids, names,
//! locks), the in-process side of the delete-waits rule, and the order of checks. The backend
//! only provisions, describes, runs in, installs into and releases environments (see
//! [`wsp_backend::Backend`]).
//!
//! Work that decides a request's fate by read order is each handler's read-time part (see
//! [`wsp_middleware::handler`]): a `get`/`execute`/`install`/`uninstall` registers its use of
//! the environment, a `delete` marks the environment as going away. Both take a
//! [`ReadTime`], so they can't be moved into the async part by mistake. Everything else runs
//! in the request's future.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backends;
mod changes;
mod create;
mod disk_use;
mod failure;
mod from_spare;
mod gc;
mod handlers;
mod input;
mod install;
mod install_turns;
mod interpreters;
mod lock;
mod progress;
mod reuse;
mod spares;
pub mod store;
mod streaming;
mod usage;
mod views;

use std::sync::Arc;

use crate::store::Store;
use wsp_backend::{BoxBackend, InstallSource};
use wsp_middleware::{handler_fn, read_ordered, Context, ReadTime, Router};
use wsp_protocol::method::{
    Create, Delete, Execute, Gc, Get, Install, InterpreterList, List, Lock, Uninstall,
};
use wsp_protocol::params::DeleteParams;
use wsp_protocol::UninstallParams;
use wsp_protocol::{methods, ExecuteParams, GcParams, IdParams, InstallParams, NoParams};

use usage::Usage;
use wsp_server::{Broadcast, Facts, MethodGroup};

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
            max_output_bytes: wsp_exec::DEFAULT_MAX_OUTPUT_BYTES,
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
    backends: backends::Backends,
    usage: Usage,
    turns: install_turns::InstallTurns,
    /// The stdins and terminals of the running interactive executes.
    inputs: input::Inputs,
    install_defaults: InstallSource,
    execute_defaults: ExecuteDefaults,
    /// Directories besides an environment's root an unsandboxed execute may run in.
    allowed_cwds: Arc<[std::path::PathBuf]>,
    /// Where every committed change is recorded, for the servers that send notifications.
    journal: changes::Journal,
    /// Where the journal's changes go, with change notifications on.
    changes: Option<Broadcast>,
    /// What `get` last found in each environment's files.
    views: views::Views,
    /// What `interpreter/list` lists, when it is served.
    interpreters: Option<wsp_interpreters::Inventory>,
    /// The environments provisioned ahead for creates (none unless turned on).
    spares: Arc<spares::Spares>,
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
        let journal = changes::Journal::new(store.dir());
        Environments {
            inner: Arc::new(Inner {
                store,
                backends: backends::Backends::new(backend_name.into(), backend.into()),
                usage: Usage::default(),
                turns: install_turns::InstallTurns::default(),
                inputs: input::Inputs::default(),
                install_defaults: InstallSource::default(),
                execute_defaults: ExecuteDefaults::default(),
                allowed_cwds: Arc::from([]),
                journal,
                changes: None,
                views: views::Views::default(),
                interpreters: None,
                spares: Arc::new(spares::Spares::new(false)),
            }),
        }
    }

    /// Adds the backend `name`, for environments it made and for creates that name it; the
    /// one given to [`Environments::new`] stays the default for creates that name none.
    pub fn with_backend(self, name: impl Into<String>, backend: impl Into<BoxBackend>) -> Self {
        let (name, backend) = (name.into(), backend.into());
        self.rebuilt(|inner| inner.backends.add(name, backend))
    }

    /// Names a backend this server knows of but can't run (its tool is missing, say): the
    /// environments it made, and creates that name it, are answered `-31004` with reason
    /// `backend-unavailable` and `reason` in the detail; their files are never touched.
    pub fn with_unavailable_backend(
        self,
        name: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        let (name, reason) = (name.into(), reason.into());
        self.rebuilt(|inner| inner.backends.add_unavailable(name, reason))
    }

    /// Sets what every install uses unless its request says otherwise: `find_links` come
    /// before the request's own, `index_url` and `no_index` are replaced by the request's
    /// (`wsp serve --find-links`, `--index-url`, `--no-index`).
    pub fn with_install_defaults(self, defaults: InstallSource) -> Self {
        self.rebuilt(|inner| inner.install_defaults = defaults)
    }

    /// Sets what every execute gets unless its request says otherwise.
    pub fn with_execute_defaults(self, defaults: ExecuteDefaults) -> Self {
        let defaults = ExecuteDefaults {
            max_output_bytes: defaults.max_output_bytes.max(1),
            ..defaults
        };
        self.rebuilt(|inner| inner.execute_defaults = defaults)
    }

    /// Admits a `cwd` inside any of `dirs` (absolute) for an execute that is not sandboxed,
    /// besides the environment's root (`wsp serve --allow-cwd`); `initialize` lists them as
    /// `allowed_cwd_roots`.
    pub fn with_allowed_cwds(self, dirs: Vec<std::path::PathBuf>) -> Self {
        self.rebuilt(|inner| inner.allowed_cwds = Arc::from(dirs))
    }

    /// Turns on `environment/changed`: every create, delete, install and uninstall committed
    /// on this state directory, by this server or another, is sent through `broadcast` (give
    /// it to the server with [`ServerBuilder::broadcast`](wsp_server::ServerBuilder::broadcast))
    /// once the server has started (see [`MethodGroup::start`]).
    pub fn with_change_notifications(self, broadcast: Broadcast) -> Self {
        self.rebuilt(|inner| inner.changes = Some(broadcast))
    }

    /// Serves `interpreter/list` (feature `interpreter.list`): the interpreters `inventory`
    /// finds, which should be the one the backends resolve `python_version` with.
    pub fn with_interpreters(self, inventory: wsp_interpreters::Inventory) -> Self {
        self.rebuilt(|inner| inner.interpreters = Some(inventory))
    }

    /// Turns spare environments on or off (off by default; `wsp serve --spare-environments`):
    /// on, after a create the server provisions another empty environment like it in the
    /// background, under a name no client can take, for the next such create to rename,
    /// install into and commit (see the `spares` module). Only backends that can relabel get
    /// them.
    pub fn with_spare_environments(self, on: bool) -> Self {
        self.rebuilt(|inner| inner.spares = Arc::new(spares::Spares::new(on)))
    }

    fn rebuilt(&self, change: impl FnOnce(&mut Inner)) -> Self {
        let inner = &self.inner;
        let mut rebuilt = Inner {
            store: inner.store.clone(),
            backends: inner.backends.clone(),
            usage: inner.usage.clone(),
            turns: inner.turns.clone(),
            inputs: inner.inputs.clone(),
            install_defaults: inner.install_defaults.clone(),
            execute_defaults: inner.execute_defaults,
            allowed_cwds: inner.allowed_cwds.clone(),
            journal: inner.journal.clone(),
            changes: inner.changes.clone(),
            views: inner.views.clone(),
            interpreters: inner.interpreters.clone(),
            spares: inner.spares.clone(),
        };
        change(&mut rebuilt);
        Environments {
            inner: Arc::new(rebuilt),
        }
    }

    /// Records a committed change in the journal (every server does, whether it sends
    /// notifications or not), on a task of its own: the request that made
    /// it never waits for the journal, so nothing after its commit can be cancelled.
    fn changed(&self, id: &str, change: wsp_protocol::results::EnvironmentChange) {
        let (journal, id) = (self.inner.journal.clone(), id.to_owned());
        tokio::spawn(async move { journal.record(&id, change).await });
    }

    /// The extensions beyond WSP 0.1.0 that [`Environments::bind`] serves, for `initialize`'s
    /// `features`: `execute.sandbox` only where this kernel can enforce the sandbox, and
    /// `environment.changed` only where changes are broadcast.
    fn features(&self) -> Vec<&'static str> {
        let mut features = vec![
            methods::INSTALL,
            "execute.stream",
            "execute.stdin",
            "execute.stdin_stream",
            "execute.pty",
            "execute.timeout",
            "execute.limits",
            "progress",
            "create.backend",
            "environment.lock",
        ];
        if wsp_exec::sandbox_availability().is_ok() {
            features.push("execute.sandbox");
        }
        if self.inner.changes.is_some() {
            features.push("environment.changed");
        }
        if self.inner.interpreters.is_some() {
            features.push("interpreter.list");
        }
        features
    }

    /// Binds `environment/list`, `create`, `get`, `delete`, `execute`, `install`,
    /// `uninstall`, `lock` and `gc` (and `interpreter/list`, given an inventory), and the
    /// `environment/input` and `environment/resize` notifications of interactive executes;
    /// `environment/output` and `$/progress` notifications go through the connection's
    /// notifier (without one, `stream: true` and `work_done_token` change nothing but the
    /// result still carries the output).
    pub fn bind(self, router: Router) -> Router {
        let env = self;
        let router = env
            .inner
            .inputs
            .bind(router)
            .method::<List, _>(handler_fn({
                let env = env.clone();
                move |_: NoParams, cx: Context| env.clone().list(cx.received())
            }))
            .method::<Create, _>(handler_fn({
                let env = env.clone();
                move |params, cx: Context| env.clone().create(params, cx.notifier().cloned())
            }))
            .method::<Get, _>(read_ordered(
                env.admits(|env, p: &IdParams, read| env.begin_use(&p.id, read)),
                env.runs(|env, in_use, params, _| env.get(in_use, params)),
            ))
            .method::<Delete, _>(read_ordered(
                env.admits(|env, p: &DeleteParams, read| env.begin_delete(&p.id, read)),
                env.runs(|env, mark, DeleteParams { id }, _| env.delete(mark, IdParams { id })),
            ))
            .method::<Execute, _>(read_ordered(
                env.admits(|env, p: &ExecuteParams, read| env.begin_use(&p.id, read)),
                env.runs(|env, in_use, params, cx| env.execute(in_use, params, cx)),
            ))
            .method::<Install, _>(read_ordered(
                env.admits(|env, p: &InstallParams, read| env.begin_use(&p.id, read)),
                env.runs(|env, in_use, params, cx: Context| {
                    let notifier = cx.notifier().cloned();
                    env.install(in_use, params, notifier)
                }),
            ))
            .method::<Uninstall, _>(read_ordered(
                env.admits(|env, p: &UninstallParams, read| env.begin_use(&p.id, read)),
                env.runs(|env, in_use, params, _| env.uninstall(in_use, params)),
            ))
            .method::<Lock, _>(read_ordered(
                env.admits(|env, p: &IdParams, read| env.begin_use(&p.id, read)),
                env.runs(|env, in_use, params, _| env.lock(in_use, params)),
            ))
            .method::<Gc, _>(handler_fn({
                let env = env.clone();
                move |params: GcParams, _: Context| env.clone().gc(params)
            }));
        match env.inner.interpreters.clone() {
            Some(inventory) => {
                router.method::<InterpreterList, _>(handler_fn(move |_: NoParams, _: Context| {
                    interpreters::list(inventory.clone())
                }))
            }
            None => router,
        }
    }

    /// A read-time part over these environments.
    fn admits<P, T>(
        &self,
        admit: fn(&Environments, &P, &ReadTime<'_>) -> T,
    ) -> impl Fn(&P, &ReadTime<'_>) -> T + Clone + Send + Sync + 'static
    where
        P: 'static,
        T: 'static,
    {
        let env = self.clone();
        move |params: &P, read: &ReadTime<'_>| admit(&env, params, read)
    }

    /// An async part over these environments.
    fn runs<T, P, F>(
        &self,
        run: fn(Environments, T, P, Context) -> F,
    ) -> impl Fn(T, P, Context) -> F + Clone + Send + Sync + 'static
    where
        T: 'static,
        P: 'static,
        F: 'static,
    {
        let env = self.clone();
        move |admitted, params, cx| run(env.clone(), admitted, params, cx)
    }

    /// The backend called `name` (an environment's record says which made it).
    fn backend(&self, name: &str) -> Result<&BoxBackend, wsp_server::ErrorObjectOwned> {
        self.inner.backends.get(name)
    }
}

/// The environment methods as a server's method group: they report the state directory, the backend, what the sandbox and the process
/// limit can do here, and the features they serve; at shutdown, whatever an execute started
/// and the drain did not end is killed.
impl MethodGroup for Environments {
    fn bind(&self, router: Router) -> Router {
        self.clone().bind(router)
    }

    fn facts(&self, facts: &mut Facts) {
        facts
            .set("wsp_home", self.inner.store.dir().display().to_string())
            .set("session_durability", "durable");
        // Probed once per process: whether the shared runner can enforce `sandbox: true`.
        match wsp_exec::sandbox_availability() {
            Ok(()) => facts
                .set("sandbox_availability", "available")
                .remove("sandbox_unavailable_reason"),
            Err(reason) => facts
                .set("sandbox_availability", "unavailable")
                .set("sandbox_unavailable_reason", reason),
        };
        facts
            .set("process_limit", wsp_exec::process_limit().as_str())
            .set("backend", self.inner.backends.default_name())
            .set("backends", self.inner.backends.names().collect::<Vec<_>>())
            .add_features(self.features())
            .set("allowed_cwd_roots", &*self.inner.allowed_cwds);
    }

    fn start(&self) {
        if let Some(broadcast) = &self.inner.changes {
            self.inner.journal.clone().follow(broadcast.clone());
        }
    }

    /// Aborts every spare environment (waiting for those being made), then kills every command
    /// still running.
    fn shutdown(&self) -> futures::future::BoxFuture<'static, ()> {
        let spares = self.inner.spares.clone();
        Box::pin(async move {
            spares.stop().await;
            wsp_exec::kill_all_live();
        })
    }
}
