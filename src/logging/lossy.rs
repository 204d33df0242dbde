//! Log lines handed to a thread that writes them to stderr, dropped when too many wait.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// Log lines that may wait for stderr; more are dropped.
const WAITING_LINES: usize = 1024;

/// How long the end of the process waits for the lines still waiting to be written.
const LAST_WRITE: Duration = Duration::from_secs(1);

enum Line {
    Text(Vec<u8>),
    /// Written everything before; answer on the sender.
    Finish(SyncSender<()>),
}

/// The thread that writes log lines to stderr. Dropping it waits (a bounded time) until the
/// lines handed over before are written, then says how many were dropped, if any.
pub struct LogThread {
    lines: SyncSender<Line>,
    dropped: Arc<AtomicU64>,
}

impl LogThread {
    /// Starts the thread. If it can't be started, lines are dropped (and counted) instead.
    pub fn start() -> LogThread {
        let (lines, waiting) = sync_channel(WAITING_LINES);
        let started = std::thread::Builder::new()
            .name("wsp-log".into())
            .spawn(move || write_all(waiting));
        if let Err(error) = started {
            eprintln!("wsp: cannot start the log thread ({error}); logs are dropped");
        }
        LogThread {
            lines,
            dropped: Arc::default(),
        }
    }

    /// What the subscriber writes events with.
    pub fn writer(&self) -> LossyStderr {
        LossyStderr {
            lines: self.lines.clone(),
            dropped: Arc::clone(&self.dropped),
        }
    }
}

impl Drop for LogThread {
    fn drop(&mut self) {
        let dropped = self.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            let note = format!("wsp: {dropped} log lines were dropped: stderr took too long\n");
            let _ = self.lines.try_send(Line::Text(note.into_bytes()));
        }
        let (done, finished) = sync_channel(1);
        if self.lines.try_send(Line::Finish(done)).is_ok() {
            let _: Result<(), RecvTimeoutError> = finished.recv_timeout(LAST_WRITE);
        }
    }
}

fn write_all(waiting: Receiver<Line>) {
    let mut stderr = std::io::stderr();
    for line in waiting {
        match line {
            Line::Text(text) => {
                let _ = stderr.write_all(&text);
            }
            Line::Finish(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// Hands each event's text to the [`LogThread`], or drops it when [`WAITING_LINES`] wait.
#[derive(Clone)]
pub struct LossyStderr {
    lines: SyncSender<Line>,
    dropped: Arc<AtomicU64>,
}

impl Write for LossyStderr {
    fn write(&mut self, text: &[u8]) -> std::io::Result<usize> {
        match self.lines.try_send(Line::Text(text.to_vec())) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(text.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LossyStderr {
    type Writer = LossyStderr;

    fn make_writer(&'a self) -> LossyStderr {
        self.clone()
    }
}
