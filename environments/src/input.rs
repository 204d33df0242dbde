//! The stdin and the terminal of running interactive executes (`stdin_stream: true` or a
//! `pty`), fed by `environment/input` and resized by `environment/resize` notifications.
//!
//! An execute registers its stdin in read order (in the handler's synchronous part, before
//! the next message is read), under its connection and its request id, and the registration
//! ends with the request. Input naming a request that is not registered (unknown, finished,
//! another connection's) is logged at debug and dropped. Each stdin is a small bounded
//! channel: while it is full (the command doesn't read), its connection's next
//! `environment/input` waits, and with it the reading of that connection; memory stays
//! bounded by [`CHUNKS_QUEUED`] × [`MAX_INPUT_DATA_BYTES`] per running execute.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::PollSender;
use wsp_backend::StdinStream;
use wsp_middleware::{Connection, ConnectionId, FlowHandler, Router};
#[cfg(doc)]
use wsp_protocol::interactive::MAX_INPUT_DATA_BYTES;
use wsp_protocol::interactive::{request_id, InputParams, PtySize, ResizeParams};
use wsp_protocol::{methods, Id, Notification};

/// Chunks of input queued for one command beyond what its pipe holds.
pub(crate) const CHUNKS_QUEUED: usize = 2;

type Key = (ConnectionId, Id);

struct Entry {
    /// Which registration this is (an id reused by a client must not end another's).
    generation: u64,
    /// `None` once the input ended.
    stdin: Option<PollSender<Bytes>>,
    /// The terminal's size, for an execute with a `pty`.
    size: Option<watch::Sender<PtySize>>,
}

#[derive(Default)]
struct Table {
    entries: HashMap<Key, Entry>,
    generations: u64,
}

/// The stdins of the running interactive executes of every connection.
#[derive(Clone, Default)]
pub(crate) struct Inputs {
    table: Arc<Mutex<Table>>,
}

/// One execute's registration: its stdin and its terminal's sizes, for the run; dropped with
/// the request, which ends its input.
pub(crate) struct Registration {
    inputs: Inputs,
    key: Key,
    generation: u64,
    pub(crate) stdin: StdinStream,
    pub(crate) sizes: Option<watch::Receiver<PtySize>>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut table = self.inputs.lock();
        if table
            .entries
            .get(&self.key)
            .is_some_and(|entry| entry.generation == self.generation)
        {
            table.entries.remove(&self.key);
        }
    }
}

impl Inputs {
    fn lock(&self) -> MutexGuard<'_, Table> {
        // Nothing panics while holding the lock; a poisoned table is still consistent.
        self.table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers the stdin (and the terminal, with `pty`) of request `id` of `connection`.
    pub(crate) fn register(
        &self,
        connection: ConnectionId,
        id: &Id,
        pty: Option<PtySize>,
    ) -> Registration {
        let (sender, chunks) = mpsc::channel(CHUNKS_QUEUED);
        let (size, sizes) = match pty {
            Some(initial) => {
                let (size, sizes) = watch::channel(initial);
                (Some(size), Some(sizes))
            }
            None => (None, None),
        };
        let key = (connection, id.clone());
        let mut table = self.lock();
        table.generations += 1;
        let generation = table.generations;
        let entry = Entry {
            generation,
            stdin: Some(PollSender::new(sender)),
            size,
        };
        if table.entries.insert(key.clone(), entry).is_some() {
            tracing::warn!(%id, "an execute reuses the id of a running one: input goes to the new one");
        }
        drop(table);
        Registration {
            inputs: self.clone(),
            key,
            generation,
            stdin: StdinStream::new(chunks),
            sizes,
        }
    }

    /// Binds `environment/input` and `environment/resize`.
    pub(crate) fn bind(&self, router: Router) -> Router {
        router
            .notification_flow(methods::INPUT, InputFlow(self.clone()))
            .notification_flow(methods::RESIZE, ResizeFlow(self.clone()))
    }
}

struct InputFlow(Inputs);

impl FlowHandler for InputFlow {
    fn poll_ready(
        &self,
        connection: &Connection,
        notification: &Notification,
        cx: &mut TaskContext<'_>,
    ) -> Poll<()> {
        let Ok(id) = request_id(notification.params.as_ref()) else {
            return Poll::Ready(());
        };
        let mut table = self.0.lock();
        let Some(stdin) = table
            .entries
            .get_mut(&(connection.id, id))
            .and_then(|entry| entry.stdin.as_mut())
        else {
            return Poll::Ready(());
        };
        // A closed channel (the command's input is over) takes anything at once.
        stdin.poll_reserve(cx).map(|_| ())
    }

    fn handle(&self, connection: &Connection, notification: &Notification) {
        let params = notification.params.as_ref();
        let input = InputParams::read(params);
        let id = match (&input, request_id(params)) {
            (Ok(input), _) => input.request_id.clone(),
            (Err(_), Ok(id)) => id,
            (Err(problem), Err(_)) => {
                tracing::warn!(%problem, "environment/input ignored");
                return;
            }
        };
        let mut table = self.0.lock();
        let Some(entry) = table.entries.get_mut(&(connection.id, id.clone())) else {
            tracing::debug!(request_id = %id, "environment/input for no running execute: ignored");
            return;
        };
        let Some(stdin) = entry.stdin.as_mut() else {
            tracing::debug!(request_id = %id, "environment/input after its end: ignored");
            return;
        };
        let input = match input {
            Ok(input) => input,
            Err(problem) => {
                stdin.abort_send();
                tracing::warn!(request_id = %id, %problem, "environment/input ignored");
                return;
            }
        };
        if input.data.is_empty() {
            stdin.abort_send();
        } else if stdin.send_item(Bytes::from(input.data)).is_err() {
            tracing::debug!(request_id = %id, "environment/input after the command's stdin closed");
        }
        if input.eof {
            entry.stdin = None;
        }
    }
}

struct ResizeFlow(Inputs);

impl FlowHandler for ResizeFlow {
    fn poll_ready(&self, _: &Connection, _: &Notification, _: &mut TaskContext<'_>) -> Poll<()> {
        Poll::Ready(())
    }

    fn handle(&self, connection: &Connection, notification: &Notification) {
        let resize = match ResizeParams::read(notification.params.as_ref()) {
            Ok(resize) => resize,
            Err(problem) => {
                tracing::warn!(%problem, "environment/resize ignored");
                return;
            }
        };
        let table = self.0.lock();
        let key = (connection.id, resize.request_id.clone());
        match table
            .entries
            .get(&key)
            .and_then(|entry| entry.size.as_ref())
        {
            Some(size) => {
                size.send_replace(PtySize {
                    rows: resize.rows,
                    cols: resize.cols,
                });
            }
            None => {
                tracing::debug!(request_id = %resize.request_id, "environment/resize for no running terminal: ignored")
            }
        }
    }
}
