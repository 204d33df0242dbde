//! Query answers cached by executable path and [`FileStamp`]: in memory for the inventory's
//! life (failures too, except timeouts and spawn errors, which may be passing), and — for
//! successes — optionally in a JSON file that later inventories and other processes share.
//! The file is replaced atomically (temporary file, then rename).

use std::collections::HashMap;
use std::fs;
use std::future::Future;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use super::files::FileStamp;
use super::query::{Queried, QueryError};

type Outcome = Result<Queried, QueryError>;

/// The state a path was in when it was asked about, and the answer for that state.
type Slot = (FileStamp, Arc<OnceCell<Outcome>>);

/// Bumped when the file's layout changes; files of another format are ignored.
const FORMAT: u32 = 1;

/// One cached answer per (path, stamp); concurrent askers share one query.
pub(crate) struct QueryCache {
    cells: Mutex<HashMap<PathBuf, Slot>>,
    disk: Option<DiskCache>,
}

impl QueryCache {
    /// A cache kept in memory and, when `file` is given, on disk.
    pub(crate) fn new(file: Option<PathBuf>) -> Self {
        QueryCache {
            cells: Mutex::new(HashMap::new()),
            disk: file.map(DiskCache::new),
        }
    }

    /// The answer held in memory for `path` as it is now (`stamp`), if one settled.
    pub(crate) fn settled(&self, path: &Path, stamp: &FileStamp) -> Option<Outcome> {
        let cells = self
            .cells
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        match cells.get(path) {
            Some((cached, cell)) if cached == stamp => cell.get().cloned(),
            _ => None,
        }
    }

    /// The answer for `path` as it is now (`stamp`), from memory, from disk, or by running
    /// `query` — at most once per stamp unless it fails in a passing way.
    pub(crate) async fn get_or_query<F, Fut>(
        &self,
        path: &Path,
        stamp: FileStamp,
        query: F,
    ) -> Outcome
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Outcome>,
    {
        let cell = {
            let mut cells = self
                .cells
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            match cells.get(path) {
                Some((cached, cell)) if *cached == stamp => Arc::clone(cell),
                _ => {
                    let cell = Arc::new(OnceCell::new());
                    cells.insert(path.to_path_buf(), (stamp.clone(), Arc::clone(&cell)));
                    cell
                }
            }
        };
        let settled = cell
            .get_or_try_init(|| async {
                if let Some(disk) = &self.disk {
                    if let Some(answer) = disk.lookup(path, &stamp).await {
                        return Ok(Ok(answer));
                    }
                }
                match query().await {
                    Ok(answer) => {
                        if let Some(disk) = &self.disk {
                            disk.store(path, stamp, answer.clone()).await;
                        }
                        Ok(Ok(answer))
                    }
                    Err(error @ (QueryError::Timeout { .. } | QueryError::Spawn { .. })) => {
                        Err(error)
                    }
                    Err(error) => Ok(Err(error)),
                }
            })
            .await;
        match settled {
            Ok(outcome) => outcome.clone(),
            Err(passing) => Err(passing),
        }
    }
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct DiskEntry {
    path: PathBuf,
    stamp: FileStamp,
    answer: Queried,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct DiskFile {
    format: u32,
    entries: Vec<serde_json::Value>,
}

/// The on-disk part: loaded on first use, rewritten whole after each new answer.
struct DiskCache {
    file: PathBuf,
    entries: tokio::sync::Mutex<Option<HashMap<PathBuf, DiskEntry>>>,
}

impl DiskCache {
    fn new(file: PathBuf) -> Self {
        DiskCache {
            file,
            entries: tokio::sync::Mutex::new(None),
        }
    }

    async fn lookup(&self, path: &Path, stamp: &FileStamp) -> Option<Queried> {
        let mut entries = self.entries.lock().await;
        let entries = match &mut *entries {
            Some(loaded) => loaded,
            empty => empty.insert(read_entries(&self.file).await),
        };
        entries
            .get(path)
            .filter(|entry| entry.stamp == *stamp)
            .map(|entry| entry.answer.clone())
    }

    async fn store(&self, path: &Path, stamp: FileStamp, answer: Queried) {
        let mut entries = self.entries.lock().await;
        // Merge with what other processes wrote since we read the file; our answers win.
        let mut merged = read_entries(&self.file).await;
        merged.extend(entries.take().unwrap_or_default());
        merged.insert(
            path.to_path_buf(),
            DiskEntry {
                path: path.to_path_buf(),
                stamp,
                answer,
            },
        );
        let file = self.file.clone();
        let kept = merged.clone();
        let written = tokio::task::spawn_blocking(move || write_entries(&file, kept)).await;
        match written {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(
                file = %self.file.display(),
                %error,
                "cannot write the interpreter cache"
            ),
            Err(error) => tracing::warn!(%error, "interpreter cache writer did not finish"),
        }
        *entries = Some(merged);
    }
}

/// The entries of `file`; an absent, unreadable or foreign file counts as empty.
async fn read_entries(file: &Path) -> HashMap<PathBuf, DiskEntry> {
    let bytes = match tokio::fs::read(file).await {
        Ok(bytes) => bytes,
        Err(error) => {
            if error.kind() != io::ErrorKind::NotFound {
                tracing::debug!(file = %file.display(), %error, "interpreter cache unreadable");
            }
            return HashMap::new();
        }
    };
    match serde_json::from_slice::<DiskFile>(&bytes) {
        Ok(parsed) if parsed.format == FORMAT => parsed
            .entries
            .into_iter()
            .filter_map(|value| serde_json::from_value::<DiskEntry>(value).ok())
            .map(|entry| (entry.path.clone(), entry))
            .collect(),
        _ => {
            tracing::debug!(file = %file.display(), "ignoring an interpreter cache of another format");
            HashMap::new()
        }
    }
}

/// Writes the entries still current (the file unchanged since it was queried) atomically.
fn write_entries(file: &Path, entries: HashMap<PathBuf, DiskEntry>) -> io::Result<()> {
    let mut current: Vec<DiskEntry> = entries
        .into_values()
        .filter(|entry| FileStamp::of(&entry.path).is_ok_and(|now| now == entry.stamp))
        .collect();
    current.sort_by(|a, b| a.path.cmp(&b.path));
    let document = DiskFile {
        format: FORMAT,
        // An entry whose paths are not UTF-8 can't be JSON; it is simply not persisted.
        entries: current
            .iter()
            .filter_map(|entry| serde_json::to_value(entry).ok())
            .collect(),
    };
    let bytes = serde_json::to_vec_pretty(&document).map_err(io::Error::other)?;
    write_atomically(file, &bytes)
}

/// Writes `bytes` to a temporary file next to `file`, syncs it, and renames it over `file`.
fn write_atomically(file: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = file
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = file.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "cache path has no file name")
    })?;
    fs::create_dir_all(dir)?;
    let temp = dir.join(format!(
        ".{}.{}.{:016x}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        rand::random::<u64>()
    ));
    let result = fs::File::create_new(&temp)
        .and_then(|mut out| {
            out.write_all(bytes)?;
            out.sync_all()
        })
        .and_then(|()| fs::rename(&temp, file));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}
