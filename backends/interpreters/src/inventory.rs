//! The inventory: every interpreter on this machine, the versions they offer, and the choice of
//! one for a [`VersionRequest`]. Queries go through one cache per inventory.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::cache::QueryCache;
use super::choose::{self, Answers, NeedsQuery};
use super::config::InventoryConfig;
use super::discovery::{Discovery, Found};
use super::files::FileStamp;
use super::query::{self, Queried, QueryError};
use super::shim::{inspect, Inspection};
use super::{Candidate, InterpreterInfo, PythonVersion, VersionRequest};

/// Why a version request could not be satisfied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// No working interpreter of the requested version.
    #[error("Python {requested} is not available (available: {})", .available.join(", "))]
    Unavailable {
        /// The request, `X.Y` or `X.Y.Z`.
        requested: String,
        /// Every available version, `X.Y.Z`, ascending.
        available: Vec<String>,
    },
}

impl From<ResolveError> for wsp_backend::BackendError {
    fn from(error: ResolveError) -> Self {
        match error {
            ResolveError::Unavailable {
                requested,
                available,
            } => wsp_backend::BackendError::VersionUnavailable {
                requested,
                available,
            },
        }
    }
}

/// The interpreter chosen for a request, and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The candidate that was chosen, as discovered.
    pub candidate: Candidate,
    /// What querying it said.
    pub info: InterpreterInfo,
}

/// A working interpreter, as [`Inventory::available`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Available {
    /// The candidate, as discovered.
    pub candidate: Candidate,
    /// Its version: from its files, else from a query.
    pub version: PythonVersion,
}

/// As `interpreter/list` and `wsp python list` show it.
impl From<Available> for wsp_protocol::Interpreter {
    fn from(available: Available) -> Self {
        wsp_protocol::Interpreter {
            version: available.version.to_string(),
            source: available.candidate.source.to_string(),
            path: available.candidate.executable.display().to_string(),
        }
    }
}

/// The interpreters of this machine. Cloning shares the query cache.
#[derive(Clone)]
pub struct Inventory {
    inner: Arc<Inner>,
}

struct Inner {
    config: InventoryConfig,
    discovery: Discovery,
    cache: QueryCache,
    timeout: Duration,
    queries: AtomicU64,
}

impl Inventory {
    /// An inventory over `config`, with the default query timeout (10 s).
    pub fn new(config: InventoryConfig) -> Self {
        Self::with_query_timeout(config, query::DEFAULT_TIMEOUT)
    }

    /// An inventory whose queries are killed after `timeout`.
    pub fn with_query_timeout(config: InventoryConfig, timeout: Duration) -> Self {
        Inventory {
            inner: Arc::new(Inner {
                cache: QueryCache::new(config.cache_file.clone()),
                discovery: Discovery::new(config.locators()),
                config,
                timeout,
                queries: AtomicU64::new(0),
            }),
        }
    }

    /// The configuration this inventory searches.
    pub fn config(&self) -> &InventoryConfig {
        &self.inner.config
    }

    /// How many interpreter processes this inventory has started.
    #[doc(hidden)]
    pub fn query_count(&self) -> u64 {
        self.inner.queries.load(Ordering::Relaxed)
    }

    /// Every interpreter found, one per real file, preferred sources first. Nothing is run.
    pub async fn candidates(&self) -> Vec<Candidate> {
        self.discover()
            .await
            .into_iter()
            .map(|found| found.candidate)
            .collect()
    }

    /// Every working interpreter, newest first; among equal versions in the order
    /// [`resolve_detailed`](Self::resolve_detailed) prefers them, so the first of each `X.Y` is
    /// the one a request for `X.Y` picks. Interpreters whose version no file tells are queried
    /// (once; the answer is cached); one that doesn't answer as a final release is left out.
    pub async fn available(&self) -> Vec<Available> {
        let found = self.discover().await;
        let ranked = choose::rank(found, |_| true, Answers::Queried(self)).await;
        ranked
            .unwrap_or_default()
            .into_iter()
            .map(|ranked| Available {
                candidate: ranked.found.candidate,
                version: ranked.version,
            })
            .collect()
    }

    /// The versions of every working interpreter, ascending, each once (those of
    /// [`available`](Self::available)).
    pub async fn available_versions(&self) -> Vec<PythonVersion> {
        let mut versions: Vec<PythonVersion> = self
            .available()
            .await
            .into_iter()
            .map(|available| available.version)
            .collect();
        versions.sort();
        versions.dedup();
        versions
    }

    /// The interpreter for `request`: see [`resolve_detailed`](Self::resolve_detailed).
    pub async fn resolve(&self, request: &VersionRequest) -> Result<InterpreterInfo, ResolveError> {
        self.resolve_detailed(request)
            .await
            .map(|resolved| resolved.info)
    }

    /// The newest version matching `request` (`X.Y`: newest `X.Y.*`; `X.Y.Z`: exactly that), among
    /// equal versions the preferred [`Source`](crate::Source); the chosen interpreter is
    /// queried and, if that fails or it turns out to be another version, the next one is
    /// tried. When every answer needed is cached already, discovery and the choice take one
    /// trip to the blocking pool and run no interpreter.
    pub async fn resolve_detailed(
        &self,
        request: &VersionRequest,
    ) -> Result<Resolved, ResolveError> {
        let inventory = self.clone();
        let wanted = *request;
        let at_once = tokio::task::spawn_blocking(move || {
            let found = inventory.inner.discovery.run();
            let cached = choose::choose(found.clone(), &wanted, Answers::Cached(&inventory));
            match futures::executor::block_on(cached) {
                Ok(Some(resolved)) => Ok(resolved),
                Ok(None) | Err(NeedsQuery) => Err(found),
            }
        })
        .await;
        let found = match at_once {
            Ok(Ok(resolved)) => return Ok(resolved),
            Ok(Err(found)) => found,
            Err(error) => {
                tracing::warn!(%error, "interpreter discovery did not finish");
                Vec::new()
            }
        };
        if let Ok(Some(resolved)) = choose::choose(found, request, Answers::Queried(self)).await {
            return Ok(resolved);
        }
        let available = self
            .available_versions()
            .await
            .iter()
            .map(ToString::to_string)
            .collect();
        Err(ResolveError::Unavailable {
            requested: request.to_string(),
            available,
        })
    }

    /// What `executable` says about itself: run once per path and file state (path, inode,
    /// size, mtime), then answered from the cache. pyenv shims are refused, never run.
    pub async fn query(&self, executable: &Path) -> Result<InterpreterInfo, QueryError> {
        self.answer(executable).await.map(|answer| answer.info)
    }

    /// What the cache holds for `executable` as its file is now, if anything; a path that
    /// can't be examined has no cached answer. Blocking.
    pub(crate) fn cached_answer(&self, executable: &Path) -> Option<Result<Queried, QueryError>> {
        let path = std::path::absolute(executable).ok()?;
        let stamp = FileStamp::of(&path).ok()?;
        let config = &self.inner.config;
        if config.in_pyenv_shims(&path) || config.in_pyenv_shims(&stamp.real_path) {
            return None;
        }
        // Only an interpreter found not to be a shim was ever asked: no need to look again.
        self.inner.cache.settled(&path, &stamp)
    }

    pub(crate) async fn answer(&self, executable: &Path) -> Result<Queried, QueryError> {
        let inaccessible = |message: String| QueryError::Inaccessible {
            path: executable.to_path_buf(),
            message,
        };
        let path = std::path::absolute(executable).map_err(|e| inaccessible(e.to_string()))?;
        let examined = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || (FileStamp::of(&path), inspect(&path))).await
        };
        let (stamp, inspection) = examined.map_err(|e| inaccessible(e.to_string()))?;
        let stamp = stamp.map_err(|e| inaccessible(e.to_string()))?;
        let config = &self.inner.config;
        if inspection != Inspection::NotShim
            || config.in_pyenv_shims(&path)
            || config.in_pyenv_shims(&stamp.real_path)
        {
            return Err(QueryError::Shim { path });
        }
        let inner = &self.inner;
        inner
            .cache
            .get_or_query(&path, stamp, || {
                inner.queries.fetch_add(1, Ordering::Relaxed);
                query::run(&path, inner.timeout)
            })
            .await
    }

    /// Every candidate; each locator's last answer is reused while the paths it watches are
    /// unchanged (see [`Locator::watched_paths`](super::Locator::watched_paths)).
    async fn discover(&self) -> Vec<Found> {
        let inner = self.inner.clone();
        match tokio::task::spawn_blocking(move || inner.discovery.run()).await {
            Ok(found) => found,
            Err(error) => {
                tracing::warn!(%error, "interpreter discovery did not finish");
                Vec::new()
            }
        }
    }
}
