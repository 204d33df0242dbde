//! The last index this process read or wrote, reused while `index.json` is unchanged.
//!
//! `index.json` is never modified in place: every change writes a new file and renames it over
//! the old one, which gives the path a new inode. The cache keeps the file it was parsed from
//! open, so that inode cannot be freed and its number cannot be reused while cached. One
//! `lstat` of the path then tells whether the cached index is still current: same device and
//! inode (plus size, mtime and ctime, against edits in place by hand) means the same contents.
//! A commit by another process renames a new file into place, so it is seen at the next lookup.
//!
//! A store looked up often (a server's) also watches its directory with inotify
//! ([`IndexWatch`]). Once an `lstat` has confirmed the cache, later lookups skip the `lstat`
//! while the watch has queued no event about `index.json`. The kernel queues the event within
//! the rename (or write) itself, and each lookup reads the queue before it answers, so a
//! commit that finished before a lookup began is seen by it, as with the `lstat` alone.
//! Events are read before the `lstat` that confirms, so one that comes in between is read at
//! the next lookup.

use std::fs::File;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use rustix::fs::Stat;
use rustix::io::Errno;

use super::index::Index;
use super::index_watch::{IndexWatch, Seen};

/// Lookups of one store after which it watches its directory. A process that looks a few
/// times (a CLI command) has no use for the watch, and its exit would wait for the kernel to
/// free the watch (up to ~20 ms measured here).
const WATCH_AFTER_LOOKUPS: u32 = 16;

/// What identifies one version of `index.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    size: i128,
    mtime: (i128, i128),
    ctime: (i128, i128),
}

impl Stamp {
    pub(crate) fn of(stat: &Stat) -> Stamp {
        Stamp {
            dev: stat.st_dev,
            ino: stat.st_ino,
            size: i128::from(stat.st_size),
            mtime: (i128::from(stat.st_mtime), i128::from(stat.st_mtime_nsec)),
            ctime: (i128::from(stat.st_ctime), i128::from(stat.st_ctime_nsec)),
        }
    }

    /// The stamp of an open file.
    pub(crate) fn of_file(file: &File) -> std::io::Result<Stamp> {
        Ok(Stamp::of(&rustix::fs::fstat(file)?))
    }
}

/// The cached index, shared by every handle on one store in this process.
#[derive(Debug)]
pub(crate) struct IndexCache {
    empty: Arc<Index>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    last: Option<Cached>,
    /// What the last `lstat` of `index.json` found, while the watch has seen nothing about it
    /// since.
    confirmed: Option<Confirmed>,
    /// When the read of the watch's queue that `confirmed` stands on began.
    drained: Option<Instant>,
    watch: Watching,
}

#[derive(Debug)]
struct Cached {
    /// Held open so that the inode behind `stamp` stays allocated.
    _file: File,
    stamp: Stamp,
    index: Arc<Index>,
}

#[derive(Debug, Clone, Copy)]
enum Confirmed {
    /// No `index.json`: the empty index.
    Absent,
    /// `index.json` is the file `last` was read from.
    Last,
}

#[derive(Debug)]
enum Watching {
    NotYet { lookups: u32 },
    Active(IndexWatch),
    Off,
}

impl Default for Watching {
    fn default() -> Self {
        Watching::NotYet { lookups: 0 }
    }
}

impl Default for IndexCache {
    fn default() -> Self {
        IndexCache {
            empty: Arc::new(Index::default()),
            state: Mutex::default(),
        }
    }
}

impl IndexCache {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The index of a store that has no `index.json`.
    pub(crate) fn empty(&self) -> Arc<Index> {
        self.empty.clone()
    }

    /// The current index if answering needs no read: the watch of `dir` has seen no change
    /// since the last confirmation, or one `lstat` of `index` finds it missing (the empty
    /// index) or unchanged since this process last read or wrote it. Cheap enough to call on
    /// an async thread. `None` means the file must be read.
    ///
    /// `received` is when the request asking was read ([`Request::received`]), if known. The
    /// watch's queue is read once per batch of requests read together: a request read before
    /// the last read of the queue began gets that read's answer, since whatever finished
    /// before the request was sent had queued its event by then.
    ///
    /// [`Request::received`]: wsp_protocol::Request::received
    pub(crate) fn current(
        &self,
        dir: &Path,
        index: &Path,
        received: Option<Instant>,
    ) -> Option<Arc<Index>> {
        let mut state = self.state();
        if let (Some(received), Some(drained)) = (received, state.drained) {
            if received < drained {
                if let Some(index) = self.confirmed(&state) {
                    return Some(index);
                }
            }
        }
        let draining = Instant::now();
        state.drained = None;
        if !state.watch_saw_no_change(dir) {
            state.confirmed = None;
        }
        let current = match self.confirmed(&state) {
            Some(index) => Some(index),
            None => self.confirm(&mut state, index),
        };
        if current.is_some() && matches!(state.watch, Watching::Active(_)) {
            state.drained = Some(draining);
        }
        current
    }

    fn confirmed(&self, state: &State) -> Option<Arc<Index>> {
        match (state.confirmed, &state.last) {
            (Some(Confirmed::Absent), _) => Some(self.empty.clone()),
            (Some(Confirmed::Last), Some(last)) => Some(last.index.clone()),
            _ => None,
        }
    }

    /// One `lstat` of `index`: the cached index if the file is the one it was read from.
    fn confirm(&self, state: &mut State, index: &Path) -> Option<Arc<Index>> {
        match rustix::fs::lstat(index) {
            Ok(stat) => {
                let stamp = Stamp::of(&stat);
                let last = state.last.as_ref().filter(|last| last.stamp == stamp)?;
                let index = last.index.clone();
                state.confirmed = Some(Confirmed::Last);
                Some(index)
            }
            Err(Errno::NOENT) => {
                state.confirmed = Some(Confirmed::Absent);
                Some(self.empty.clone())
            }
            Err(_) => None,
        }
    }

    /// Remembers `index` as the contents of `file`, the current `index.json`.
    pub(crate) fn store(&self, file: File, stamp: Stamp, index: Arc<Index>) {
        let mut state = self.state();
        state.last = Some(Cached {
            _file: file,
            stamp,
            index,
        });
        // Until an `lstat` after the watch's events confirms it: a commit elsewhere may have
        // come between the read and now.
        state.confirmed = None;
        state.drained = None;
    }
}

impl State {
    /// Whether the watch is on and has queued no event about `index.json` since the last
    /// call. Starts the watch at the lookup that makes this store one looked up often.
    fn watch_saw_no_change(&mut self, dir: &Path) -> bool {
        match &mut self.watch {
            Watching::NotYet { lookups } => {
                *lookups += 1;
                if *lookups >= WATCH_AFTER_LOOKUPS {
                    self.watch = IndexWatch::new(dir).map_or(Watching::Off, Watching::Active);
                }
                false
            }
            Watching::Active(watch) => match watch.drain() {
                Seen::Nothing => true,
                Seen::IndexChanged => false,
                Seen::Broken => {
                    self.watch = Watching::Off;
                    false
                }
            },
            Watching::Off => false,
        }
    }
}
