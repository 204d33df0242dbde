//! The lifecycle gate: WSP's state machine, applied to each request as it is read.
//!
//! [`Lifecycle`] is the shared state (UNINITIALIZED → INITIALIZED → SHUTTING_DOWN → EXITED).
//! The stack decides each request against it in the request's read-time step (see
//! [`crate::call`]), after the custom layers' read-time parts and before the router's, so each
//! request is judged by the state the server was in when that request was read — not when a
//! handler or a layer gets to run. A successful `initialize` or `shutdown` moves the state
//! there, so a pipelined request right behind it already sees the new state.
//!
//! The lifecycle also owns the end of the session: the `exit` notification, in any state,
//! stops reading with the exit status the lifecycle decides (`0` after `shutdown`, else `1`).

use std::sync::{Arc, Mutex, PoisonError};

use wsp_protocol::{error, methods, ErrorObjectOwned, InitializeParams, NoParams, Params, Request};

/// A state of the WSP lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LifecycleState {
    /// Before a successful `initialize`: only `initialize` is accepted.
    Uninitialized,
    /// After `initialize`: every registered method is served.
    Initialized,
    /// After `shutdown`: every request is rejected; only `exit` is honoured.
    ShuttingDown,
    /// After `exit`.
    Exited,
}

/// The server's lifecycle state, shared by the gate and the runtime.
#[derive(Debug, Clone)]
pub struct Lifecycle {
    state: Arc<Mutex<LifecycleState>>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Self::new()
    }
}

impl Lifecycle {
    /// A fresh lifecycle in [`LifecycleState::Uninitialized`].
    pub fn new() -> Self {
        Lifecycle {
            state: Arc::new(Mutex::new(LifecycleState::Uninitialized)),
        }
    }

    /// The current state.
    pub fn state(&self) -> LifecycleState {
        *self.lock()
    }

    /// Handles the `exit` notification: moves to [`LifecycleState::Exited`] and returns the
    /// process exit status, `0` after a successful `shutdown`, else `1`.
    pub fn exit(&self) -> i32 {
        let mut state = self.lock();
        let previous = std::mem::replace(&mut *state, LifecycleState::Exited);
        tracing::debug!(?previous, "lifecycle: exit");
        if previous == LifecycleState::ShuttingDown {
            0
        } else {
            1
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LifecycleState> {
        // The state is a plain `Copy` value, so a poisoned lock still holds a valid state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Decides one request against the current state, moving the state when the request is a
    /// valid `initialize` or `shutdown`. `Err` is the error the request is answered with.
    pub(crate) fn admit(&self, request: &Request) -> Result<(), ErrorObjectOwned> {
        let mut state = self.lock();
        let method = request.method.as_str();
        match *state {
            LifecycleState::Uninitialized if method == methods::INITIALIZE => {
                InitializeParams::from_params(request.params.as_ref())
                    .map_err(|violations| error::invalid_params(&violations))?;
                *state = LifecycleState::Initialized;
                tracing::debug!("lifecycle: initialized");
                Ok(())
            }
            LifecycleState::Uninitialized => Err(error::server_not_initialized()),
            LifecycleState::Initialized if method == methods::INITIALIZE => {
                Err(error::invalid_request("server already initialized"))
            }
            LifecycleState::Initialized if method == methods::SHUTDOWN => {
                NoParams::from_params(request.params.as_ref())
                    .map_err(|violations| error::invalid_params(&violations))?;
                *state = LifecycleState::ShuttingDown;
                tracing::debug!("lifecycle: shutting down");
                Ok(())
            }
            LifecycleState::Initialized => Ok(()),
            LifecycleState::ShuttingDown => Err(error::invalid_request(
                "server is shutting down: only the exit notification is accepted",
            )),
            LifecycleState::Exited => Err(error::invalid_request("server has exited")),
        }
    }
}
