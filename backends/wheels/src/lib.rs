//! Installing wheels from local `find_links` directories into a virtual environment without
//! pip: the fast path of the pip installer (see `wsp_install::install`), which gives the
//! result on disk pip gives, or says it does not apply ([`Outcome::NotApplicable`]) and
//! changes nothing, so that pip runs instead.
//!
//! 1. **Find**: the `*.whl` files directly in each `find_links` directory (absolute local
//!    paths only), kept when their tags fit the target interpreter as `packaging.tags` would
//!    say (a `manylinux` wheel by the interpreter's glibc version). A wheel whose fit cannot
//!    be told without guessing (`musllinux`, a non-CPython interpreter), or an sdist of a
//!    needed project, leaves the request to pip.
//! 2. **Resolve**: the request's PEP 508 requirements and each picked wheel's `Requires-Dist`
//!    (markers evaluated for the target interpreter, extras followed), `Requires-Python`
//!    checked. Greedy: the highest fitting version satisfying what is known when a project is
//!    first needed; a later conflict, a pre-release, a direct reference, an installed version
//!    that does not satisfy, or two wheels of one version leave the request to pip. An
//!    installed version that satisfies is kept, as pip keeps it.
//! 3. **Install**, only once everything resolved and every destination is known to be new:
//!    files extracted (with `.data/{purelib,platlib,scripts,data}`, `#!python` rewritten),
//!    bytecode compiled by one run of the interpreter as pip compiles it, `console_scripts`
//!    and `gui_scripts` generated as pip's distlib writes them, `INSTALLER` (`wsp`),
//!    `REQUESTED` for the requested projects, and a `RECORD` laid out as pip writes it.
//!
//! A wheel is untrusted input: its central directory is checked whole before anything is
//! written (no name leaving its directory, no link, declared sizes within limits), and every
//! entry is read no further than its declared size. The environment is untrusted as well:
//! every path is walked from its root without following a symlink, and files are only ever
//! created, never replaced. A failure while writing, or the install future dropped, removes
//! everything the install wrote.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod archive;
mod compile;
mod find;
mod installed;
mod interpreter;
mod layout;
mod metadata;
mod python;
mod resolve;
mod tags;
mod tree;
mod write;
mod writing;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use wsp_backend::{BackendError, InstallRequest, ProgressStep};
use wsp_exec::Activation;
use wsp_protocol::{FailureReason, Package};

use crate::layout::Layout;
use crate::write::Halt;

pub use metadata::normalize_name;
pub use writing::settled;

/// The pip releases whose wheel installs (script template, RECORD) this reproduces.
const PIP_RELEASES: std::ops::Range<u64> = 22..26;

/// The longest shebang line distlib writes as `#!<interpreter>` (longer: a `/bin/sh` trampoline).
const MAX_SHEBANG: usize = 127;

/// The environment to install into, as the caller found it.
#[derive(Debug, Clone)]
pub struct Environment {
    /// Its root: a virtual environment (it has a `pyvenv.cfg`).
    pub root: PathBuf,
    /// Its interpreter, `<root>/bin/python`: what scripts' shebangs name.
    pub python: PathBuf,
    /// How its commands run (the interpreter's runs are commands of the environment).
    pub activation: Activation,
    /// Its site-packages directories (`wsp_install::packages::site_packages_dirs`).
    pub site_packages: Vec<PathBuf>,
    /// What is installed in it (`wsp_install::packages::installed_packages`).
    pub installed: Vec<Package>,
    /// The version of the pip that would install otherwise, whose result this reproduces.
    pub pip_version: Option<String>,
}

/// What [`install`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The request is installed: this many distributions were added (none when everything
    /// requested was installed already).
    Installed(usize),
    /// The fast path does not apply, for this reason; nothing was changed.
    NotApplicable(String),
}

/// Why the fast path stopped before writing anything.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Stop {
    /// pip should install this request.
    #[error("{0}")]
    NotApplicable(String),
    /// The request cannot be installed (a broken or hostile wheel).
    #[error("{0}")]
    Failed(String),
}

impl Stop {
    pub(crate) fn skip(reason: impl Into<String>) -> Stop {
        Stop::NotApplicable(reason.into())
    }
}

/// A reason the fast path does not apply.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct NotApplicable(pub String);

/// How the interpreter runs for this install.
pub(crate) struct Step<'a> {
    pub python: &'a Path,
    pub activation: &'a Activation,
    pub environment_id: &'a str,
}

/// The bytecode compile and the journal of what was written: dropped in this order, so the
/// interpreter is killed before what it may have written is removed.
struct Compiling<F> {
    compile: std::pin::Pin<Box<F>>,
    journal: Option<tree::Journal>,
}

/// Sets the flag when dropped: the install future was dropped (or finished).
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Installs `request.packages` into `environment` from `request.source.find_links`, or says
/// why that is pip's to do. A wheel that is broken or hostile, or a failure while writing, is
/// [`InstallFailed`](FailureReason::InstallFailed), with everything written removed again.
pub async fn install(
    environment: &Environment,
    request: &InstallRequest,
) -> Result<Outcome, BackendError> {
    let started = Instant::now();
    let shebang = match applicable(environment, request) {
        Ok(shebang) => shebang,
        Err(reason) => return Ok(Outcome::NotApplicable(reason.0)),
    };
    let step = Step {
        python: &environment.python,
        activation: &environment.activation,
        environment_id: &request.environment_id,
    };
    let target = match interpreter::interpreter(&step).await {
        Ok(target) => target,
        Err(reason) => return Ok(Outcome::NotApplicable(reason.0)),
    };
    if target.version < (3, 8) {
        return Ok(Outcome::NotApplicable("Python older than 3.8".to_owned()));
    }
    let site_packages = environment.root.join(&target.site_packages);
    if environment.site_packages != [site_packages.clone()] {
        return Ok(Outcome::NotApplicable(format!(
            "the environment's site-packages are not just {}",
            site_packages.display()
        )));
    }
    let planned = {
        let (links, packages) = (request.source.find_links.clone(), request.packages.clone());
        let (root, installed) = (environment.root.clone(), environment.installed.clone());
        let target = target.clone();
        blocking(move || -> Result<_, Stop> {
            if has_manylinux_override(&site_packages) {
                let why = "a `_manylinux` module decides which manylinux wheels fit";
                return Err(Stop::skip(why));
            }
            let found = find::find(&links, &target)?;
            let installed = installed::Installed::new(site_packages, &installed);
            let picked = resolve::resolve(&packages, &found, &installed, &target)?;
            let tree = Arc::new(tree::Tree::open(&root).map_err(|e| Stop::skip(e.to_string()))?);
            let planned = layout::plan(picked, &Layout::new(&target), &tree)?;
            Ok((planned, tree))
        })
        .await?
    };
    let (mut planned, tree) = match planned {
        Ok(planned) => planned,
        Err(Stop::NotApplicable(reason)) => return Ok(Outcome::NotApplicable(reason)),
        Err(Stop::Failed(message)) => return Err(failed(message)),
    };
    let count = planned.len();
    let mut added: Vec<String> = planned
        .iter()
        .map(|plan| {
            let metadata = &plan.picked.wheel.metadata;
            let version = metadata.version.as_ref().map(ToString::to_string);
            format!("+ {}=={}", metadata.name, version.unwrap_or_default())
        })
        .collect();
    added.sort();
    let resolved = format!(
        "Resolved {count} packages in {}ms",
        started.elapsed().as_millis()
    );
    progress(request, resolved, Some(30)).await;
    if count == 0 {
        return Ok(Outcome::Installed(0));
    }
    // Held by whichever part runs the writes, a blocking task the drop of this future does not
    // stop included, until the journal is committed or has removed what it noted.
    let writer = writing::writer(&environment.root).await;
    let cancel = CancelOnDrop(Arc::new(AtomicBool::new(false)));
    let python = shebang.clone();
    let flag = cancel.0.clone();
    let extracted = blocking(move || {
        let writer = writer;
        let layout = Layout::new(&target);
        let mut journal = tree::Journal::new(tree, &target.cache_tag);
        let records = write::extract(&mut planned, &layout, &mut journal, &python, &flag)?;
        Ok::<_, Halt>((planned, journal, records, target, writer))
    })
    .await?;
    let (planned, journal, records, target, writer) = extracted.map_err(halted)?;
    let layout = Layout::new(&target);
    let root = environment.root.to_string_lossy();
    let mut compiling = Compiling {
        compile: Box::pin(compile::compile(
            &step,
            &root,
            &layout,
            &target.cache_tag,
            &planned,
        )),
        journal: Some(journal),
    };
    let compiled = (&mut compiling.compile)
        .await
        .map_err(|message| failed(format!("compiling the installed modules: {message}")))?;
    let journal = compiling.journal.take();
    drop(compiling);
    let Some(journal) = journal else {
        return Err(failed("the install lost its journal".to_owned()));
    };
    let flag = cancel.0.clone();
    blocking(move || {
        let _writer = writer;
        write::finish(
            &planned, &layout, journal, records, compiled, &shebang, &flag,
        )
    })
    .await?
    .map_err(halted)?;
    let installed = format!(
        "Installed {count} packages in {}ms",
        started.elapsed().as_millis()
    );
    progress(request, installed, Some(90)).await;
    for line in added {
        progress(request, line, None).await;
    }
    Ok(Outcome::Installed(count))
}

/// The interpreter's path for shebangs, if the request is one the fast path may take.
fn applicable(
    environment: &Environment,
    request: &InstallRequest,
) -> Result<String, NotApplicable> {
    let no = |reason: &str| Err(NotApplicable(reason.to_owned()));
    if request.upgrade {
        return no("an upgrade");
    }
    if !request.source.no_index {
        return no("an index may be used");
    }
    if request.source.find_links.is_empty() || request.packages.is_empty() {
        return no("nothing to install from find_links");
    }
    let release = environment
        .pip_version
        .as_deref()
        .and_then(|v| v.split('.').next()?.parse::<u64>().ok());
    if !release.is_some_and(|major| PIP_RELEASES.contains(&major)) {
        return Err(NotApplicable(format!(
            "pip {:?} is not a release whose installs this reproduces",
            environment.pip_version
        )));
    }
    if !environment.root.join("pyvenv.cfg").is_file() {
        return no("not a virtual environment");
    }
    let (Some(python), Some(_)) = (environment.python.to_str(), environment.root.to_str()) else {
        return no("the environment's path is not UTF-8");
    };
    if !environment.python.is_absolute() || python.contains([' ', '\n', '\0']) {
        return no("the interpreter's path needs quoting in a shebang");
    }
    if python.len() + 3 > MAX_SHEBANG {
        return no("the interpreter's path is too long for a plain shebang");
    }
    Ok(python.to_owned())
}

/// Whether `site_packages` holds a `_manylinux` module, which `packaging.tags` asks first.
fn has_manylinux_override(site_packages: &Path) -> bool {
    std::fs::read_dir(site_packages).is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name == "_manylinux" || name.starts_with("_manylinux.")
        })
    })
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, BackendError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| failed(format!("the install stopped: {error}")))
}

fn failed(message: String) -> BackendError {
    BackendError::failed(FailureReason::InstallFailed, message)
}

fn halted(halt: Halt) -> BackendError {
    match halt {
        Halt::Cancelled => failed("the install was cancelled".to_owned()),
        Halt::Failed(message) => failed(message),
    }
}

async fn progress(request: &InstallRequest, message: String, percentage: Option<u32>) {
    if let Some(sink) = &request.progress {
        let _ = sink
            .send(ProgressStep {
                message,
                percentage,
            })
            .await;
    }
}
