//! Log lines handed to a thread that writes them to stderr, dropped when too many wait.

use std::io::Write;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// Log lines that may wait for stderr; more are dropped.
const WAITING_LINES: usize = 1024;

/// Bytes of log lines that may wait for stderr; a line that would make more is dropped (a line
/// can hold what a client sent, a method name, say).
const WAITING_BYTES: usize = 1 << 20;

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
    writer: LossyStderr,
}

impl LogThread {
    /// Starts the thread. If it can't be started, lines are dropped (and counted) instead.
    pub fn start() -> LogThread {
        let (lines, to_write) = sync_channel(WAITING_LINES);
        let waiting = Arc::new(AtomicUsize::new(0));
        let written = Arc::clone(&waiting);
        let started = std::thread::Builder::new()
            .name("wsp-log".into())
            .spawn(move || write_all(to_write, &written));
        if let Err(error) = started {
            eprintln!("wsp: cannot start the log thread ({error}); logs are dropped");
        }
        LogThread {
            writer: LossyStderr {
                lines,
                waiting,
                dropped: Arc::default(),
            },
        }
    }

    /// What the subscriber writes events with.
    pub fn writer(&self) -> LossyStderr {
        self.writer.clone()
    }
}

impl Drop for LogThread {
    fn drop(&mut self) {
        let dropped = self.writer.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            let note = format!("wsp: {dropped} log lines were dropped: stderr took too long\n");
            let _ = self.writer.write(note.as_bytes());
        }
        let (done, finished) = sync_channel(1);
        if self.writer.lines.try_send(Line::Finish(done)).is_ok() {
            let _: Result<(), RecvTimeoutError> = finished.recv_timeout(LAST_WRITE);
        }
    }
}

fn write_all(to_write: Receiver<Line>, waiting: &AtomicUsize) {
    let mut stderr = std::io::stderr();
    for line in to_write {
        match line {
            Line::Text(text) => {
                let _ = stderr.write_all(&text);
                waiting.fetch_sub(text.len(), Ordering::AcqRel);
            }
            Line::Finish(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// Hands each event's text to the [`LogThread`], or drops it when [`WAITING_LINES`] or
/// [`WAITING_BYTES`] wait.
#[derive(Clone)]
pub struct LossyStderr {
    lines: SyncSender<Line>,
    waiting: Arc<AtomicUsize>,
    dropped: Arc<AtomicU64>,
}

impl Write for LossyStderr {
    fn write(&mut self, text: &[u8]) -> std::io::Result<usize> {
        let len = text.len();
        let before = self.waiting.fetch_add(len, Ordering::AcqRel);
        let sent = before.saturating_add(len) <= WAITING_BYTES
            && match self.lines.try_send(Line::Text(text.to_vec())) {
                Ok(()) => true,
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
            };
        if !sent {
            self.waiting.fetch_sub(len, Ordering::AcqRel);
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        Ok(len)
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
