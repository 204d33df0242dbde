//! Where the store keeps what, and the file-system helpers every part of it uses.
//!
//! ```text
//! <dir>/index.json            committed environments (roots relative to <dir>) and
//!                             reservations (atomically replaced)
//! <dir>/index.lock            exclusive flock: held by whoever rewrites index.json
//! <dir>/index.reserve         spaces, allocated ahead: lets a delete rewrite the index on
//!                             a full file system (see reserve.rs)
//! <dir>/environments/<id>/    environment roots
//! <dir>/locks/<id>.owner      exclusive flock held by a live reservation
//! <dir>/locks/<id>.use        shared by users of an environment, exclusive while deleting it;
//!                             its modification time is when <id> was last used
//! <dir>/locks/<id>.delete     exclusive flock held by a deletion of <id>, waiting or not
//! <dir>/locks/<id>.sandboxed  <id> has run sandboxed code
//! <dir>/locks/<id>.changed    modified when a request starts or ends changing <id>'s files
//! <dir>/locks/<key>.reuse     exclusive flock: the turn to build the environment of a key
//! <dir>/trash/<id>.<nonce>    directories on their way out
//! <dir>/tmp/                  the private TMPDIRs of sandboxed runs
//!                             (`wsp-sandbox-<uid>-<pid>-<random>/<random>`), hidden from
//!                             every sandbox with the rest of <dir>
//! ```
//!
//! `environments/`, `locks/`, `trash/` and `tmp/` must be real directories; a symlink in their
//! place is refused at open, since the store deletes and locks what it finds inside them.

use std::fs::DirBuilder;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::Rng;

use super::cache::IndexCache;
use super::error::StoreError;
use super::in_flight::InFlight;

/// The name of the directory that holds the environment roots.
const ENVIRONMENTS: &str = "environments";

/// The paths of one store directory.
#[derive(Debug)]
pub(crate) struct Layout {
    pub(crate) dir: PathBuf,
    pub(crate) environments: PathBuf,
    pub(crate) locks: PathBuf,
    pub(crate) trash: PathBuf,
    pub(crate) tmp: PathBuf,
    pub(crate) index: PathBuf,
    pub(crate) index_temp: PathBuf,
    pub(crate) index_lock: PathBuf,
    pub(crate) reserve: PathBuf,
    /// The last index read or written here, reused while `index.json` is unchanged.
    pub(crate) cache: IndexCache,
    /// Deletions this process is finishing in the background.
    pub(crate) deletions: Arc<InFlight>,
}

impl Layout {
    /// Creates the store directory and its subdirectories (mode 0700) if missing.
    pub(crate) fn create(dir: &Path) -> Result<Layout, StoreError> {
        if dir.to_str().is_none() {
            return Err(StoreError::io(
                format!("opening store {}", dir.display()),
                io::Error::new(io::ErrorKind::InvalidInput, "path is not valid UTF-8"),
            ));
        }
        create_private_dir_all(dir)?;
        let dir = dir
            .canonicalize()
            .map_err(|e| StoreError::io(format!("resolving {}", dir.display()), e))?;
        let layout = Layout {
            environments: dir.join(ENVIRONMENTS),
            locks: dir.join("locks"),
            trash: dir.join("trash"),
            tmp: dir.join("tmp"),
            index: dir.join("index.json"),
            index_temp: dir.join("index.json.tmp"),
            index_lock: dir.join("index.lock"),
            reserve: dir.join("index.reserve"),
            cache: IndexCache::default(),
            deletions: Arc::default(),
            dir,
        };
        for subdir in [
            &layout.environments,
            &layout.locks,
            &layout.trash,
            &layout.tmp,
        ] {
            refuse_symlink(subdir)?;
            create_private_dir_all(subdir)?;
        }
        Ok(layout)
    }

    /// `environments/<id>`: where the root of environment `id` lies, relative to the store
    /// directory. This is how the index spells it, so a copied store stays self-contained.
    pub(crate) fn relative_root(id: &str) -> PathBuf {
        Path::new(ENVIRONMENTS).join(id)
    }

    /// The root directory of environment `id`.
    pub(crate) fn root(&self, id: &str) -> PathBuf {
        self.environments.join(id)
    }

    /// The lock a live reservation of `id` holds.
    pub(crate) fn owner_lock(&self, id: &str) -> PathBuf {
        self.locks.join(format!("{id}.owner"))
    }

    /// The lock users of environment `id` share and its deleter takes exclusively.
    pub(crate) fn use_lock(&self, id: &str) -> PathBuf {
        self.locks.join(format!("{id}.use"))
    }

    /// The lock a deletion of `id` holds exclusively from its start to its end: while it is
    /// held, new users of `id` are turned away.
    pub(crate) fn delete_lock(&self, id: &str) -> PathBuf {
        self.locks.join(format!("{id}.delete"))
    }

    /// A fresh name in the trash for something that belonged to `id`.
    pub(crate) fn new_trash_entry(&self, id: &str) -> PathBuf {
        let nonce: u64 = rand::rng().random();
        self.trash.join(format!("{id}.{nonce:016x}"))
    }
}

/// The id a trash entry belonged to: its name up to the first `.`.
pub(crate) fn trash_entry_id(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// Fails with [`StoreError::SymlinkedDirectory`] if `path` is a symlink: whatever it points at
/// would be swept, trashed or locked as if it were the store's own.
fn refuse_symlink(path: &Path) -> Result<(), StoreError> {
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_symlink() => Err(StoreError::SymlinkedDirectory {
            path: path.to_path_buf(),
            target: std::fs::read_link(path).unwrap_or_default(),
        }),
        Ok(_) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(StoreError::io(
            format!("inspecting {}", path.display()),
            error,
        )),
    }
}

/// Creates `dir` and its missing parents, each with exactly mode 0700 whatever the umask;
/// directories that already exist are left alone.
fn create_private_dir_all(dir: &Path) -> Result<(), StoreError> {
    let missing: Vec<&Path> = dir
        .ancestors()
        .take_while(|path| !path.as_os_str().is_empty() && !path.is_dir())
        .collect();
    for path in missing.into_iter().rev() {
        match DirBuilder::new().mode(0o700).create(path) {
            Ok(()) => std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| {
                    StoreError::io(format!("setting mode 0700 on {}", path.display()), e)
                })?,
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => {}
            Err(error) => {
                return Err(StoreError::io(
                    format!("creating directory {}", path.display()),
                    error,
                ))
            }
        }
    }
    Ok(())
}

/// Renames `from` to `to`; a missing `from` is not an error (returns `false`).
pub(crate) fn rename_if_present(from: &Path, to: &Path) -> io::Result<bool> {
    match std::fs::rename(from, to) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(error),
    }
}

/// Deletes a directory tree, a file or a symlink; a missing path is not an error.
///
/// Nothing is followed (a symlink anywhere inside is removed as a link and what it points at is
/// left alone), and no depth of tree exhausts the stack or the descriptors: see
/// [`wsp_exec::remove_tree`].
pub(crate) fn remove_path(path: &Path) -> io::Result<()> {
    wsp_exec::remove_tree::remove_tree(path)
}

/// Makes a rename or creation inside `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}
