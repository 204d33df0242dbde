//! The install-turn rule: installs and uninstalls of one environment run one at a time, in
//! this process in the order they asked for their turn, and across processes through the
//! environment's install lock, an exclusive `flock` of `<root>/.wsp-install.lock`.
//!
//! Both halves are one [`InstallTurns::take`]. The cross-process half waits the way the store's
//! locks do ([`crate::store`]'s waiting: a lock tried without blocking, retried when inotify
//! says the file was closed), so a waiting install holds no thread and can be cancelled at any
//! moment, leaving nothing locked. The lock file lives in the environment, whose files are not
//! trusted: it is opened without following a symlink and without blocking on a FIFO, and must
//! be a regular file.

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::OwnedMutexGuard;
use wsp_install::INSTALL_LOCK_FILE;

use crate::store::{acquire_lock, LockMode, PathLock};

/// The turns of every environment of this process (a clone shares them).
#[derive(Clone, Default)]
pub(crate) struct InstallTurns {
    turns: Arc<Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>>,
}

/// One environment's turn, in this process and across processes; it ends when dropped.
pub(crate) struct InstallTurn {
    _across_processes: PathLock,
    _in_process: OwnedMutexGuard<()>,
}

impl InstallTurns {
    /// Waits for the turn of environment `id`, whose root is `root`.
    pub(crate) async fn take(&self, id: &str, root: &Path) -> io::Result<InstallTurn> {
        let in_process = self.in_process(id).lock_owned().await;
        let path = root.join(INSTALL_LOCK_FILE);
        let across_processes = acquire_lock(&path, LockMode::Exclusive).await?;
        Ok(InstallTurn {
            _across_processes: across_processes,
            _in_process: in_process,
        })
    }

    fn in_process(&self, id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        turns.retain(|_, turn| turn.strong_count() > 0);
        if let Some(turn) = turns.get(id).and_then(Weak::upgrade) {
            return turn;
        }
        let turn = Arc::new(tokio::sync::Mutex::new(()));
        turns.insert(id.to_owned(), Arc::downgrade(&turn));
        turn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_turn_waits_for_the_lock_another_process_holds_and_a_dropped_wait_holds_nothing() {
        let root = tempfile::tempdir().expect("root");
        let path = root.path().join(INSTALL_LOCK_FILE);
        // Another process: flock(1) holding the lock until its stdin closes.
        let mut holder = tokio::process::Command::new("flock")
            .arg(&path)
            .args(["-c", "echo held; read _"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("flock runs");
        let mut held = String::new();
        let stdout = holder.stdout.take().expect("stdout");
        let mut stdout = tokio::io::BufReader::new(stdout);
        tokio::io::AsyncBufReadExt::read_line(&mut stdout, &mut held)
            .await
            .expect("flock says it holds the lock");
        assert_eq!(held, "held\n");

        let turns = InstallTurns::default();
        let mut waiting = Box::pin(turns.take("env-1", root.path()));
        tokio::select! {
            biased;
            _ = waiting.as_mut() => panic!("the turn came while another process holds the lock"),
            () = tokio::task::yield_now() => {}
        }
        drop(waiting);

        let waiting = tokio::spawn({
            let turns = turns.clone();
            let root = root.path().to_owned();
            async move { turns.take("env-1", &root).await.map(|_| ()) }
        });
        drop(holder.stdin.take());
        holder.wait().await.expect("flock ends");
        waiting.await.expect("the task").expect("the turn comes");
        let free = std::fs::File::open(&path).expect("the lock file");
        let locked = fs4::fs_std::FileExt::try_lock_exclusive(&free).expect("try the lock");
        assert!(locked, "nothing holds the lock once the turn is dropped");
    }

    #[tokio::test]
    async fn a_symlinked_lock_file_is_refused() {
        let root = tempfile::tempdir().expect("root");
        std::os::unix::fs::symlink("/etc/passwd", root.path().join(INSTALL_LOCK_FILE))
            .expect("symlink");
        assert!(InstallTurns::default()
            .take("env-1", root.path())
            .await
            .is_err());
    }
}
