//! `$/cancelRequest`: a client withdraws a request it sent.
//!
//! An extension WSP borrows from LSP (clients that speak LSP already send it). The notification
//! carries `{"id": <the request's id>}`. If that request is still running, its work is dropped
//! at once (a running `environment/execute` has its whole process group killed) and it is
//! answered with `-32800` ("Request cancelled"); a request that already finished, or an id that
//! names nothing, is ignored. Requests inside a batch are not cancellable one by one.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use wsp_protocol::{error, Id, Response};

/// The notification's method name.
pub const CANCEL_REQUEST: &str = "$/cancelRequest";

/// The requests that can still be cancelled, by id.
#[derive(Clone, Default)]
pub(crate) struct Cancellations {
    running: Arc<Mutex<Running>>,
}

/// Each registration gets a serial number, so a request that ends removes its own entry and
/// not that of a newer request that reused its id.
#[derive(Default)]
struct Running {
    next_serial: u64,
    by_id: HashMap<Id, (u64, CancellationToken)>,
}

impl Cancellations {
    fn running(&self) -> std::sync::MutexGuard<'_, Running> {
        self.running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `answer` for request `id` until it finishes or a `$/cancelRequest` names it.
    pub(crate) fn track(
        &self,
        id: Id,
        answer: impl Future<Output = Response> + Send + 'static,
    ) -> impl Future<Output = Response> + Send + 'static {
        let token = CancellationToken::new();
        let serial = {
            let mut running = self.running();
            running.next_serial += 1;
            let serial = running.next_serial;
            running.by_id.insert(id.clone(), (serial, token.clone()));
            serial
        };
        let cancellations = self.clone();
        async move {
            let response = tokio::select! {
                biased;
                response = answer => response,
                () = token.cancelled() => Response::error(
                    id.clone(),
                    error::error(error::REQUEST_CANCELLED, "Request cancelled", None),
                ),
            };
            let mut running = cancellations.running();
            if running
                .by_id
                .get(&id)
                .is_some_and(|(current, _)| *current == serial)
            {
                running.by_id.remove(&id);
            }
            response
        }
    }

    /// Handles a `$/cancelRequest` notification's params.
    pub(crate) fn cancel(&self, params: Option<&Value>) {
        let Some(id) = params.and_then(|p| p.get("id")).and_then(Id::from_value) else {
            tracing::debug!("$/cancelRequest without a readable id ignored");
            return;
        };
        let found = self.running().by_id.remove(&id);
        match found {
            Some((_, token)) => {
                tracing::debug!(%id, "request cancelled by the client");
                token.cancel();
            }
            None => tracing::debug!(%id, "$/cancelRequest for no running request ignored"),
        }
    }
}
