//! The backend conformance kit: the whole environment contract, run against any backend.
//!
//! A backend author hands [`check_backend`] a [`BackendUnderTest`]: a name, a constructor, and a
//! Python version the backend can provision on the machine running the kit. The kit builds a real
//! server around each fresh backend ([`Environments`] over a new state directory), talks WSP to it
//! over an in-memory pipe, and checks every rule of the methods and of `environment/execute`
//! (`docs/PROTOCOL.md`): ids and ordering, every error code with its `data`, name conflicts under
//! concurrency, creates side by side, failed or cancelled provisioning leaving nothing behind (the
//! in-process counterpart of a crash), the delete-waits rule, everything about running commands,
//! and the extensions: installing and uninstalling packages (from [`KIT_PACKAGES`], see
//! [`KitPackages`]), creating with packages, one install at a time, a delete waiting for an
//! install, `$/progress`, and, on a server that lists `environment.lock`, locking an
//! environment and creating one from the lock. It panics with the list of failed checks.
//!
//! The constructor returns any [`Backend`](wsp_backend::Backend): a backend of your own, or a
//! [`BoxBackend`] holding one wrapped in tower layers (`BoxBackend::new(layers.service(BackendService::new(b)))`,
//! `Clone` or not). A backend crate runs the kit from its tests, with this crate as a
//! dev-dependency:
//!
//! ```no_run
//! # struct MyVenvs;
//! # impl wsp_install::venv_layout::VenvProvider for MyVenvs {
//! #     async fn provision(
//! #         &self,
//! #         _: wsp_backend::ProvisionRequest,
//! #     ) -> Result<wsp_backend::Provisioned, wsp_backend::BackendError> {
//! #         unimplemented!()
//! #     }
//! # }
//! # struct MyBackend;
//! # impl MyBackend {
//! #     fn new(_: wsp_interpreters::Inventory) -> wsp_install::venv_layout::VenvLayout<MyVenvs> {
//! #         wsp_install::venv_layout::VenvLayout(MyVenvs)
//! #     }
//! # }
//! // backends/mine/tests/conformance.rs
//! use wsp_conformance::{check_backend, BackendUnderTest};
//!
//! #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
//! async fn my_backend_conforms() {
//!     check_backend(BackendUnderTest::new("mine", "3.12", |ctx| {
//!         MyBackend::new(ctx.inventory())
//!     }))
//!     .await;
//! }
//! ```
//!
//! [`BackendService`]: wsp_backend::BackendService
#![forbid(unsafe_code)]

mod altered;
mod cancellation;
mod contract;
mod execute;
mod install;
mod install_order;
mod lock;
mod reuse;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use wsp_backend::BoxBackend;
use wsp_environments::store::Store;
use wsp_interpreters::{Inventory, InventoryConfig};

pub use install_order::progress_values;
pub use wsp_server::client::Client;

use wsp_environments::Environments;
use wsp_server::{Server, ServerBuilder};

/// What a backend constructor gets: the state directory of the server it will serve.
pub struct KitContext {
    state_dir: PathBuf,
}

impl KitContext {
    /// The server's state directory (a fresh temporary directory).
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// An interpreter inventory from the environment, caching queries in the state directory.
    pub fn inventory(&self) -> Inventory {
        let mut config = InventoryConfig::from_env();
        config.cache_file = Some(self.state_dir.join("interpreters.json"));
        Inventory::new(config)
    }
}

type MakeBackend = Arc<dyn Fn(&KitContext) -> BoxBackend + Send + Sync>;

/// One distribution the install checks use (see [`KIT_PACKAGES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KitPackage {
    /// Its name; its module is the name with `-` as `_`, and sets `VERSION`.
    pub name: &'static str,
    /// Its version.
    pub version: &'static str,
    /// The names of the packages it needs.
    pub requires: &'static [&'static str],
}

/// What the install checks install: two versions of `wsp-kit-alpha`, and `wsp-kit-beta`,
/// which needs it. The checks' requirements (`wsp-kit-alpha==1.0`, `wsp-kit-alpha>=3`, …)
/// read the same as PEP 508 requirements and as conda match specs.
pub const KIT_PACKAGES: [KitPackage; 3] = [
    KitPackage {
        name: "wsp-kit-alpha",
        version: "1.0",
        requires: &[],
    },
    KitPackage {
        name: "wsp-kit-alpha",
        version: "2.0",
        requires: &[],
    },
    KitPackage {
        name: "wsp-kit-beta",
        version: "1.0",
        requires: &["wsp-kit-alpha"],
    },
];

/// Where the backend finds [`KIT_PACKAGES`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum KitPackages {
    /// The kit builds them as wheels into a directory and installs with
    /// `find_links: [that directory], no_index: true` (backends that install PEP 508
    /// requirements: venv, uv).
    #[default]
    Wheels,
    /// The backend's own configured sources hold them already (a conda backend over a channel
    /// built with them); installs name no source.
    Configured,
}

/// A backend to check.
#[derive(Clone)]
pub struct BackendUnderTest {
    /// The backend's name, expected in `extra.backend`.
    pub name: String,
    /// A Python version (`X.Y` or `X.Y.Z`) the backend can provision here.
    pub python_version: String,
    /// The variable the backend's activation sets: `VIRTUAL_ENV` or `CONDA_PREFIX`.
    pub activation_variable: String,
    /// Where the install checks' packages come from.
    pub packages: KitPackages,
    make: MakeBackend,
}

impl BackendUnderTest {
    /// A backend named `name` that can provision `python_version`, built by `make` for each
    /// fresh server. Its activation variable defaults to `VIRTUAL_ENV`.
    pub fn new<B: Into<BoxBackend>>(
        name: &str,
        python_version: &str,
        make: impl Fn(&KitContext) -> B + Send + Sync + 'static,
    ) -> Self {
        BackendUnderTest {
            name: name.to_owned(),
            python_version: python_version.to_owned(),
            activation_variable: "VIRTUAL_ENV".to_owned(),
            packages: KitPackages::default(),
            make: Arc::new(move |context| make(context).into()),
        }
    }

    /// Sets the variable the backend's activation sets (e.g. `CONDA_PREFIX`).
    pub fn activation_variable(mut self, name: &str) -> Self {
        self.activation_variable = name.to_owned();
        self
    }

    /// Sets where the install checks' packages come from.
    pub fn packages(mut self, packages: KitPackages) -> Self {
        self.packages = packages;
        self
    }
}

/// One check's setting: a fresh server over a fresh state directory.
pub struct Fixture {
    /// The backend being checked.
    pub backend: BackendUnderTest,
    /// The state directory.
    pub state_dir: PathBuf,
    /// A scratch directory outside the state directory.
    pub scratch: PathBuf,
    _temp: tempfile::TempDir,
}

impl Fixture {
    /// A fixture for `backend`: fresh state and scratch directories, removed on drop.
    pub fn for_backend(backend: &BackendUnderTest) -> Fixture {
        Fixture::new(backend)
    }

    fn new(backend: &BackendUnderTest) -> Fixture {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let state_dir = temp.path().join("state");
        let scratch = temp.path().join("scratch");
        std::fs::create_dir_all(&scratch).expect("a scratch directory");
        Fixture {
            backend: backend.clone(),
            state_dir,
            scratch,
            _temp: temp,
        }
    }

    /// The environment methods over this fixture's state directory and a fresh backend,
    /// optionally wrapped by `wrap`.
    pub fn environments(&self, wrap: impl FnOnce(BoxBackend) -> BoxBackend) -> Environments {
        let store = Store::open(&self.state_dir).expect("the state directory opens");
        let context = KitContext {
            state_dir: self.state_dir.clone(),
        };
        let backend = wrap((self.backend.make)(&context));
        Environments::new(store, self.backend.name.clone(), backend)
    }

    /// A server over [`Fixture::environments`].
    pub fn server_with(&self, wrap: impl FnOnce(BoxBackend) -> BoxBackend) -> Server {
        self.builder_with(wrap).build()
    }

    /// A server builder over [`Fixture::environments`], for checks that tune the server.
    pub fn builder_with(&self, wrap: impl FnOnce(BoxBackend) -> BoxBackend) -> ServerBuilder {
        let environments = self.environments(wrap);
        ServerBuilder::new().group(environments)
    }

    /// An initialized client of a fresh server on this fixture.
    pub async fn client(&self) -> Client {
        Client::initialized(self.server_with(|backend| backend)).await
    }

    /// A client of a fresh server on this fixture, and what the server answered its
    /// `initialize`.
    pub async fn initialize(&self) -> (Client, serde_json::Value) {
        use wsp_testing::ClientExt;
        let mut client = Client::connect(self.server_with(|backend| backend));
        let params = serde_json::json!({"client_name": "kit", "client_protocol_version": "0.1.0"});
        let init = client.ok("initialize", params).await;
        (client, init)
    }
}

/// How long one check may take before it counts as failed (a hung backend must not hang the
/// kit).
pub const CHECK_DEADLINE: std::time::Duration = std::time::Duration::from_secs(300);

type CheckFn = fn(Fixture) -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// Every check of the kit, by name.
pub fn checks() -> Vec<(&'static str, CheckFn)> {
    let mut all = contract::checks();
    all.extend(execute::checks());
    all.extend(cancellation::checks());
    all.extend(install::checks());
    all.extend(install_order::checks());
    all.extend(lock::checks());
    all.extend(reuse::checks());
    all
}

/// How many checks run at once: each has its own fixture (store, server, backend), so they
/// are independent; a few at a time keep a small machine's cores busy without starving any
/// check's deadline. `WSP_KIT_CONCURRENCY` overrides it (1 runs them one by one).
pub fn check_concurrency() -> usize {
    std::env::var("WSP_KIT_CONCURRENCY")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(4)
}

/// Runs every check against `backend`, [`check_concurrency`] at a time; panics listing the
/// checks that failed.
pub async fn check_backend(backend: BackendUnderTest) {
    let checks = checks();
    let total = checks.len();
    let permits = Arc::new(tokio::sync::Semaphore::new(check_concurrency()));
    let mut running = Vec::with_capacity(total);
    for (name, check) in checks {
        let fixture = Fixture::new(&backend);
        let permits = Arc::clone(&permits);
        let backend_name = backend.name.clone();
        running.push(tokio::spawn(async move {
            let _permit = permits.acquire_owned().await;
            let outcome = run_one(check(fixture)).await;
            match &outcome {
                Ok(()) => eprintln!("conformance [{backend_name}] {name}: ok"),
                Err(message) => {
                    eprintln!("conformance [{backend_name}] {name}: FAILED: {message}")
                }
            }
            outcome.map_err(|message| format!("{name}: {message}"))
        }));
    }
    let mut failures = Vec::new();
    for task in running {
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(failure)) => failures.push(failure),
            Err(e) => failures.push(panic_message(e)),
        }
    }
    assert!(
        failures.is_empty(),
        "backend {} failed {} of {total} conformance checks:\n{}",
        backend.name,
        failures.len(),
        failures.join("\n")
    );
}

/// One check in a task of its own, so a panic is its failure and a hang ends at the deadline.
async fn run_one(check: Pin<Box<dyn Future<Output = ()> + Send>>) -> Result<(), String> {
    let task = tokio::spawn(check);
    let abort = task.abort_handle();
    match tokio::time::timeout(CHECK_DEADLINE, task).await {
        Ok(outcome) => outcome.map_err(panic_message),
        Err(_) => {
            abort.abort();
            Err(format!("no result within {CHECK_DEADLINE:?}"))
        }
    }
}

fn panic_message(error: tokio::task::JoinError) -> String {
    match error.try_into_panic() {
        Ok(payload) => payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic".to_owned()),
        Err(e) => e.to_string(),
    }
}
