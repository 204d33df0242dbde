//! Putting pip into new environments without paying for `ensurepip` each time.
//!
//! The first environment for an interpreter runs `ensurepip` once, into a scratch environment
//! under the seed cache directory, under a file lock so that concurrent creates (threads or
//! processes) run it once between them. What it installed (`pip/`, `pip-*.dist-info/` and, on
//! older Pythons, setuptools) is kept in `<cache>/<key>/site-packages`, a directory that
//! appears by rename only when complete. Every environment then gets a hard-linked (or copied)
//! replica and console scripts that name its own interpreter.
//!
//! The bytecode pip compiled at that install is kept too. Linked, a source keeps its mtime, so
//! its bytecode stays valid and no pip run compiles pip again (1.1 s of a 2.3 s install where
//! `PYTHONDONTWRITEBYTECODE` is set). Python replaces bytecode it finds stale by rename, never
//! in place, so a Python run in an environment never writes into the cache's copy. A copied
//! source has a new mtime, and Python then compiles it as if the bytecode were not there.

mod copy;
mod scripts;

pub(crate) use copy::link_tree;

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wsp_interpreters::InterpreterInfo;

use crate::layout::{self, Layout};
use crate::{process, VenvError, VenvMode};

/// How pip got into a new environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedOutcome {
    /// Replicated from the seed cache, which already held this interpreter's pip.
    CacheHit,
    /// This create ran `ensurepip` to fill the seed cache, then replicated from it.
    CacheFilled,
    /// No seed cache was configured: `ensurepip` ran inside the environment.
    Ensurepip,
}

/// Installs pip into the environment at `layout`, whose base interpreter is `interpreter`.
pub(crate) async fn seed(
    layout: &Layout,
    interpreter: &InterpreterInfo,
    mode: VenvMode,
    cache_dir: Option<&Path>,
) -> Result<SeedOutcome, VenvError> {
    let v = interpreter.version;
    if (v.major, v.minor) < (3, 4) {
        return Err(layout::unsupported(
            interpreter,
            "pip seeding needs `ensurepip`, which arrived in Python 3.4",
        ));
    }
    if !layout::is_native_capable(interpreter) {
        // Other implementations lay out site-packages differently; let their pip place itself.
        run_ensurepip(&layout.python(), &layout.root).await?;
        return Ok(SeedOutcome::Ensurepip);
    }
    let Some(cache_dir) = cache_dir else {
        run_ensurepip(&layout.python(), &layout.root).await?;
        return Ok(SeedOutcome::Ensurepip);
    };
    let (cached, outcome) = cached_pip(interpreter, mode, cache_dir).await?;
    let layout = layout.clone();
    let version = interpreter.version;
    tokio::task::spawn_blocking(move || {
        copy::link_tree(&cached, &layout.site_packages)?;
        scripts::write_all(&cached, &layout, &version)
    })
    .await
    .map_err(VenvError::Task)??;
    Ok(outcome)
}

/// The seed cache's site-packages for `interpreter` (holding `pip/`), filled first when the
/// cache has none: with [`SeedOutcome::CacheHit`] or [`SeedOutcome::CacheFilled`].
pub(crate) async fn cached_pip(
    interpreter: &InterpreterInfo,
    mode: VenvMode,
    cache_dir: &Path,
) -> Result<(PathBuf, SeedOutcome), VenvError> {
    let key = cache_key(interpreter);
    let entry = cache_dir.join(&key);
    let outcome = if entry.is_dir() {
        SeedOutcome::CacheHit
    } else {
        fs::create_dir_all(cache_dir).map_err(VenvError::io("create directory", cache_dir))?;
        let lock = lock(cache_dir.join(format!("{key}.lock"))).await?;
        let outcome = if entry.is_dir() {
            SeedOutcome::CacheHit
        } else {
            fill(cache_dir, &key, interpreter, mode).await?;
            SeedOutcome::CacheFilled
        };
        drop(lock);
        outcome
    };
    Ok((entry.join("site-packages"), outcome))
}

/// Whether the seed cache in `cache_dir` already holds `interpreter`'s pip.
pub(crate) fn is_cached(interpreter: &InterpreterInfo, cache_dir: &Path) -> bool {
    cache_dir.join(cache_key(interpreter)).is_dir()
}

/// The cache entry's name: implementation, full version, ABI flags and a digest of the
/// executable's path (two builds of one version may bundle different pips).
fn cache_key(interpreter: &InterpreterInfo) -> String {
    let digest = Sha256::digest(interpreter.executable.as_os_str().as_encoded_bytes());
    let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    let label: String = format!(
        "{}-{}{}",
        interpreter.implementation, interpreter.version, interpreter.abiflags
    )
    .chars()
    .map(|c| {
        if c.is_ascii_alphanumeric() || c == '.' {
            c
        } else {
            '-'
        }
    })
    .collect();
    // `bc`: entries made before the cache kept bytecode are filled again, once.
    format!("pip-bc-{label}-{hex}")
}

/// Takes the exclusive lock on `path` (created if missing); it is held until the file drops.
async fn lock(path: PathBuf) -> Result<File, VenvError> {
    tokio::task::spawn_blocking(move || {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(VenvError::io("open lock file", &path))?;
        fs4::fs_std::FileExt::lock_exclusive(&file).map_err(VenvError::io("lock", &path))?;
        Ok(file)
    })
    .await
    .map_err(VenvError::Task)?
}

/// Runs `ensurepip` into a scratch environment and moves its site-packages into
/// `<cache_dir>/<key>`. Called with the key's lock held.
async fn fill(
    cache_dir: &Path,
    key: &str,
    interpreter: &InterpreterInfo,
    mode: VenvMode,
) -> Result<(), VenvError> {
    remove_stale_staging(cache_dir, key)?;
    let staging = cache_dir.join(format!("{key}.partial-{}", std::process::id()));
    let result = fill_staging(&staging, cache_dir.join(key), interpreter, mode).await;
    if result.is_err() {
        // Best effort: a later fill sweeps whatever this leaves.
        let _ = fs::remove_dir_all(&staging);
    }
    result
}

async fn fill_staging(
    staging: &Path,
    entry: PathBuf,
    interpreter: &InterpreterInfo,
    mode: VenvMode,
) -> Result<(), VenvError> {
    let scratch = Layout::new(&staging.join("venv"), interpreter)?;
    crate::write_environment(&scratch, interpreter, mode, None, false).await?;
    run_ensurepip(&scratch.python(), staging).await?;
    let kept = staging.join("site-packages");
    fs::rename(&scratch.site_packages, &kept).map_err(VenvError::io("move", &kept))?;
    fs::remove_dir_all(&scratch.root).map_err(VenvError::io("remove", &scratch.root))?;
    fs::rename(staging, &entry).map_err(VenvError::io("move into place", &entry))
}

/// Removes `<key>.partial-*` directories: leftovers of fills that crashed. Only called with the
/// key's lock held, so none of them is in use.
fn remove_stale_staging(cache_dir: &Path, key: &str) -> Result<(), VenvError> {
    let prefix = format!("{key}.partial-");
    let entries = fs::read_dir(cache_dir).map_err(VenvError::io("read directory", cache_dir))?;
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let path = entry.path();
            fs::remove_dir_all(&path).map_err(VenvError::io("remove", &path))?;
        }
    }
    Ok(())
}

/// `python -m ensurepip --default-pip`, the way `python -m venv` seeds pip.
async fn run_ensurepip(python: &Path, cwd: &Path) -> Result<(), VenvError> {
    let args: Vec<OsString> = ["-E", "-m", "ensurepip", "--default-pip"]
        .into_iter()
        .map(OsString::from)
        .collect();
    process::run(python, &args, cwd).await
}
