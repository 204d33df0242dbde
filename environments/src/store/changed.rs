//! When an environment's files last changed through a request, in any process: the
//! modification time of `locks/<id>.changed`, set (to the nanosecond) when an execute, install
//! or uninstall starts and when it ends. What `get` caches about an environment is valid while
//! this time (and the root's own) stays the same.

use std::io;
use std::path::PathBuf;
use std::time::SystemTime;

use rustix::fs::{Mode, OFlags};

use super::layout::Layout;
use super::record::is_environment_id;
use super::Store;

/// The suffix of the marker's name in `locks/`.
pub(crate) const KIND: &str = "changed";

fn marker(layout: &Layout, id: &str) -> Option<PathBuf> {
    is_environment_id(id).then(|| layout.locks.join(format!("{id}.{KIND}")))
}

/// What [`Store::change_stamp`] reads: the marker's and the root's modification times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeStamp {
    marker: Option<SystemTime>,
    root: Option<SystemTime>,
}

impl Store {
    /// Records that environment `id`'s files change now. On the calling thread: an open, a
    /// `futimens` and a close, none of which waits on anyone. A failure is logged: it can only
    /// make a cached `get` older than the files.
    pub fn mark_changed(&self, id: &str) {
        let Some(path) = marker(&self.layout, id) else {
            return;
        };
        let touched = rustix::fs::open(
            &path,
            OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(io::Error::from)
        .and_then(|fd| std::fs::File::from(fd).set_modified(SystemTime::now()));
        if let Err(error) = touched {
            tracing::warn!(path = %path.display(), %error, "could not record a change of an environment");
        }
    }

    /// When environment `id` (whose root is `root`) last changed, as far as [`mark_changed`]
    /// and the root directory's own entries tell. Two `lstat`s on the calling thread.
    ///
    /// [`mark_changed`]: Store::mark_changed
    pub fn change_stamp(&self, id: &str, root: &std::path::Path) -> ChangeStamp {
        let modified = |path: &std::path::Path| {
            std::fs::symlink_metadata(path)
                .and_then(|metadata| metadata.modified())
                .ok()
        };
        ChangeStamp {
            marker: marker(&self.layout, id).and_then(|path| modified(&path)),
            root: modified(root),
        }
    }
}
