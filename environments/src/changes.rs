//! `environment/changed`: every change of an environment reaches every client of every server
//! on the same state directory.
//!
//! A server that commits a change (a create, a delete, an install or an uninstall) appends one
//! line to the state directory's change journal, `changes.jsonl`: `{"id":…,"change":…}`. Each
//! server that sends change notifications follows the journal (woken by inotify when a writer
//! closes it, and at least every half second) and broadcasts every line it reads, its own
//! included: one source, so nothing is sent twice and nothing another server commits is
//! missed. A server starts following at the journal's end; what was written before is history.
//!
//! Each append opens the journal, writes one line with `O_APPEND` (one `write`, so lines never
//! interleave) and closes it, under a shared `flock` of `changes.lock`. Once the journal
//! passes [`JOURNAL_ROTATE_BYTES`], the writer that noticed takes the lock exclusively and
//! removes it; followers still hold it open, read it to its end, then follow the new one. The
//! journal is read as untrusted input: lines longer than [`MAX_LINE_BYTES`], lines that don't
//! parse and ids that are not environment ids are skipped.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use wsp_exec::file_events::FileEvents;
use wsp_protocol::methods;
use wsp_protocol::results::{ChangedParams, EnvironmentChange};
use wsp_server::Broadcast;

use crate::store::is_environment_id;
use crate::store::lock::{LockMode, PathLock};

/// The journal's file name in the state directory.
pub const JOURNAL_FILE: &str = "changes.jsonl";
/// The lock that orders appends against the journal's removal.
const JOURNAL_LOCK_FILE: &str = "changes.lock";
/// Past this size, the journal is removed and begun again.
pub const JOURNAL_ROTATE_BYTES: u64 = 1024 * 1024;
/// The longest line a follower takes.
pub const MAX_LINE_BYTES: usize = 4096;
/// How often a follower reads the journal when inotify says nothing.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(500);

/// The change journal of one state directory.
#[derive(Debug, Clone)]
pub(crate) struct Journal {
    path: PathBuf,
    lock: PathBuf,
}

impl Journal {
    pub(crate) fn new(state_dir: &Path) -> Self {
        Journal {
            path: state_dir.join(JOURNAL_FILE),
            lock: state_dir.join(JOURNAL_LOCK_FILE),
        }
    }

    /// Appends one change. A failure is logged: the change itself is committed, and only
    /// its notification is lost.
    pub(crate) async fn record(&self, id: &str, change: EnvironmentChange) {
        let journal = self.clone();
        let line = ChangedParams {
            id: id.to_owned(),
            change,
        };
        let appended = tokio::task::spawn_blocking(move || journal.append(&line)).await;
        match appended {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, id, "the change journal could not be written"),
            Err(error) => tracing::warn!(%error, id, "the change journal writer failed"),
        }
    }

    fn append(&self, change: &ChangedParams) -> io::Result<()> {
        let mut line = serde_json::to_vec(change).map_err(io::Error::other)?;
        line.push(b'\n');
        let shared = PathLock::acquire(&self.lock, LockMode::Shared)?;
        let mut journal = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&self.path)?;
        journal.write_all(&line)?;
        let size = journal.metadata()?.len();
        drop(journal);
        drop(shared);
        if size > JOURNAL_ROTATE_BYTES {
            let _exclusive = PathLock::acquire(&self.lock, LockMode::Exclusive)?;
            match std::fs::metadata(&self.path) {
                Ok(now) if now.len() > JOURNAL_ROTATE_BYTES => std::fs::remove_file(&self.path)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// Follows the journal from its end, broadcasting every change read as
    /// `environment/changed`, for as long as the process runs.
    pub(crate) fn follow(self, broadcast: Broadcast) {
        let mut follower = Follower::at_end(self.path.clone());
        tokio::spawn(async move {
            let mut events = FileEvents::new(&self.path);
            loop {
                for change in follower.read() {
                    broadcast.send(methods::CHANGED, change);
                }
                match events.as_mut() {
                    Some(events) => events.next(FOLLOW_INTERVAL).await,
                    None => tokio::time::sleep(FOLLOW_INTERVAL).await,
                }
            }
        });
    }
}

/// A reader of the journal that keeps its place, across removals.
pub(crate) struct Follower {
    path: PathBuf,
    /// The journal being read and the offset read up to; `None` while there is none.
    file: Option<File>,
    lines: Lines,
}

/// Bytes read cut into lines, each at most [`MAX_LINE_BYTES`].
#[derive(Default)]
struct Lines {
    partial: Vec<u8>,
    /// Skipping the rest of a line that was too long.
    skipping: bool,
}

impl Follower {
    /// A follower that takes only what is written from now on.
    pub(crate) fn at_end(path: PathBuf) -> Self {
        let file = open_journal(&path).and_then(|mut file| {
            file.seek(SeekFrom::End(0)).ok()?;
            Some(file)
        });
        Follower {
            path,
            file,
            lines: Lines::default(),
        }
    }

    /// Every complete change written since the last read.
    pub(crate) fn read(&mut self) -> Vec<ChangedParams> {
        let mut changes = Vec::new();
        loop {
            if let Some(file) = self.file.as_mut() {
                let mut chunk = [0u8; 8192];
                loop {
                    match file.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => self.lines.take(&chunk[..n], &mut changes),
                        Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                        Err(error) => {
                            tracing::warn!(%error, "the change journal could not be read");
                            break;
                        }
                    }
                }
            }
            // Read to its end; follow a new journal if this one was removed or replaced.
            let current = std::fs::symlink_metadata(&self.path).ok();
            let same = match (&self.file, &current) {
                (Some(file), Some(current)) => file
                    .metadata()
                    .is_ok_and(|open| open.ino() == current.ino() && open.dev() == current.dev()),
                (None, None) => true,
                _ => false,
            };
            if same {
                return changes;
            }
            self.lines = Lines::default();
            self.file = current.and_then(|_| open_journal(&self.path));
            if self.file.is_none() {
                return changes;
            }
        }
    }
}

impl Lines {
    fn take(&mut self, mut bytes: &[u8], changes: &mut Vec<ChangedParams>) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            let (line, rest) = (&bytes[..end], &bytes[end + 1..]);
            if !self.skipping && self.partial.len() + line.len() <= MAX_LINE_BYTES {
                self.partial.extend_from_slice(line);
                if let Some(change) = parse(&self.partial) {
                    changes.push(change);
                }
            }
            self.partial.clear();
            self.skipping = false;
            bytes = rest;
        }
        if self.partial.len() + bytes.len() > MAX_LINE_BYTES {
            self.partial.clear();
            self.skipping = true;
        } else if !self.skipping {
            self.partial.extend_from_slice(bytes);
        }
    }
}

fn open_journal(path: &Path) -> Option<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(path)
        .ok()
        .filter(|file| file.metadata().is_ok_and(|m| m.is_file()))
}

fn parse(line: &[u8]) -> Option<ChangedParams> {
    let change: ChangedParams = serde_json::from_slice(line).ok()?;
    is_environment_id(&change.id).then_some(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(id: &str, change: EnvironmentChange) -> ChangedParams {
        ChangedParams {
            id: id.to_owned(),
            change,
        }
    }

    #[test]
    fn a_follower_reads_what_is_appended_after_it_started_across_a_rotation() {
        let dir = tempfile::tempdir().expect("dir");
        let journal = Journal::new(dir.path());
        journal
            .append(&change("env-000000000001", EnvironmentChange::Created))
            .expect("append");
        let mut follower = Follower::at_end(dir.path().join(JOURNAL_FILE));
        assert!(follower.read().is_empty());
        journal
            .append(&change("env-000000000002", EnvironmentChange::Packages))
            .expect("append");
        assert_eq!(
            follower.read(),
            vec![change("env-000000000002", EnvironmentChange::Packages)]
        );
        std::fs::remove_file(dir.path().join(JOURNAL_FILE)).expect("rotate");
        journal
            .append(&change("env-000000000003", EnvironmentChange::Deleted))
            .expect("append");
        assert_eq!(
            follower.read(),
            vec![change("env-000000000003", EnvironmentChange::Deleted)]
        );
    }

    #[test]
    fn garbage_long_lines_and_foreign_ids_are_skipped() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join(JOURNAL_FILE);
        std::fs::write(&path, b"").expect("create");
        let mut follower = Follower::at_end(path.clone());
        let mut bytes = b"not json\n{\"id\":\"../etc\",\"change\":\"created\"}\n".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES * 3));
        bytes.extend(b"\n{\"id\":\"env-000000000004\",\"change\":\"created\"}\n{\"id\":");
        std::fs::write(&path, &bytes).expect("write");
        assert_eq!(
            follower.read(),
            vec![change("env-000000000004", EnvironmentChange::Created)]
        );
    }

    #[test]
    fn the_journal_is_removed_once_past_its_size() {
        let dir = tempfile::tempdir().expect("dir");
        let journal = Journal::new(dir.path());
        let path = dir.path().join(JOURNAL_FILE);
        let line_bytes = 48;
        for _ in 0..=(JOURNAL_ROTATE_BYTES / line_bytes) {
            journal
                .append(&change("env-000000000005", EnvironmentChange::Packages))
                .expect("append");
        }
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        assert!(size <= JOURNAL_ROTATE_BYTES, "{size}");
    }
}
