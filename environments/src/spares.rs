//! Spare environments: one environment provisioned ahead, in the background, for each
//! (backend, resolved interpreter) a create recently used, so that the next create like it
//! only renames and commits it.
//!
//! A spare is an ordinary store reservation ([`Reservation`]) under a name no client can
//! take (longer than the 64 characters a name may have), filled by the backend's
//! `provision` as a create would fill it, and described. Being a reservation, it holds its
//! owner lock for its life: it is in no listing, no `gc`, no change journal, and once its
//! server dies it is stale and the next sweep removes it. Its root is
//! `environments/<id>` from the start and never moves (a venv's scripts hold their root).
//!
//! A create whose backend and resolved interpreter match a spare takes it: the backend
//! relabels it with the client's name ([`RelabelRequest`]), the create's packages are
//! installed into it, then the store commits it under that name, with the name checks of a
//! reservation, in the one durable index write every create makes. Only a backend that says
//! it can relabel ([`CanRelabelRequest`]) gets spares. A spare that cannot be used is aborted
//! and the create goes the usual way. After a create that could have used one, the spare of
//! its key is made again: after the answer, or, for a create that installs into the spare it
//! took, while it installs. Once made, a spare is usable at once; when the create it replaces
//! installed packages, the backend then prepares it for installs in the background
//! ([`PrepareSpareRequest`]: uv's first look at its interpreter). At the server's stop, every
//! spare is aborted.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{watch, Mutex as AsyncMutex, OwnedMutexGuard};
use wsp_backend::{
    CanRelabelRequest, DescribeRequest, Description, PrepareSpareRequest, ProvisionRequest,
    Provisioned, ResolvedInterpreter,
};
use wsp_protocol::VersionRequest;

use crate::store::{new_environment_id, Reservation};
use crate::Environments;

/// How many keys keep a spare at once; making one for another key aborts the oldest.
const MAX_SPARES: usize = 4;

/// How long a backend may prepare a spare (an install into it waits for that): uv's look at
/// an interpreter takes about 50 ms.
const PREPARING_AT_MOST: std::time::Duration = std::time::Duration::from_secs(10);

/// The start of every spare's name: with an id after it, longer than any client's name.
const SPARE_NAME: &str = "wsp spare environment, provisioned ahead; a name no client may take: ";

/// What a spare is for: a backend and the interpreter it resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpareKey {
    backend: String,
    interpreter: ResolvedInterpreter,
}

impl SpareKey {
    pub(crate) fn new(backend: &str, interpreter: &ResolvedInterpreter) -> Self {
        SpareKey {
            backend: backend.to_owned(),
            interpreter: interpreter.clone(),
        }
    }
}

/// An environment provisioned and described ahead, held by its reservation.
pub(crate) struct Spare {
    pub(crate) reservation: Reservation,
    pub(crate) provisioned: Provisioned,
    pub(crate) description: Description,
    /// Becomes `true` once the backend is done preparing it (or gave up): a create that
    /// installs waits for that rather than have its installer do the same work beside it.
    pub(crate) prepared: watch::Receiver<bool>,
}

/// Where one key's spare is, or will be: its filler holds the lock until the spare is
/// made (or failed), so a create that takes the slot waits for it, never longer.
type Slot = Arc<AsyncMutex<Option<Spare>>>;

/// The spares of one server.
#[derive(Default)]
pub(crate) struct Spares {
    enabled: bool,
    state: Mutex<State>,
    closed: AtomicBool,
}

#[derive(Default)]
struct State {
    /// Oldest first, each with the request whose create made it.
    slots: Vec<(SpareKey, VersionRequest, Slot)>,
    /// Backends that cannot relabel, and keys whose spare could not be relabelled.
    refused_backends: HashSet<String>,
    refused_keys: Vec<SpareKey>,
}

impl Spares {
    pub(crate) fn new(enabled: bool) -> Self {
        Spares {
            enabled,
            ..Spares::default()
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether a create with `backend` may find a spare (and should resolve its interpreter
    /// before anything else to look for one).
    pub(crate) fn may_serve(&self, backend: &str) -> bool {
        self.enabled
            && !self.closed.load(Ordering::Acquire)
            && !self.state().refused_backends.contains(backend)
    }

    /// Takes the spare of `key`, waiting for it if it is being made; `None` if there is none.
    pub(crate) async fn take(&self, key: &SpareKey) -> Option<Spare> {
        let taken = self.take_where(|k, _| k == key).await;
        taken.map(|(_, spare)| spare)
    }

    /// Takes the spare a create of `backend` and `request` made last, with its key, before
    /// the request is resolved: the taker uses it only if the request still resolves to that
    /// key's interpreter.
    pub(crate) async fn take_guessed(
        &self,
        backend: &str,
        request: VersionRequest,
    ) -> Option<(SpareKey, Spare)> {
        self.take_where(|k, r| k.backend == backend && *r == request)
            .await
    }

    /// Takes the first spare whose key and request `wanted` accepts, waiting for it if it is
    /// being made.
    async fn take_where(
        &self,
        wanted: impl Fn(&SpareKey, &VersionRequest) -> bool,
    ) -> Option<(SpareKey, Spare)> {
        let (key, slot) = {
            let mut state = self.state();
            let at = state.slots.iter().position(|(k, r, _)| wanted(k, r))?;
            let (key, _, slot) = state.slots.remove(at);
            (key, slot)
        };
        let spare = slot.lock().await.take()?;
        Some((key, spare))
    }

    /// Never makes spares for `key` again (its spare could not be relabelled).
    pub(crate) fn refuse(&self, key: &SpareKey) {
        self.state().refused_keys.push(key.clone());
    }

    /// Ends spares: aborts every one, waiting for those being made. Later refills do nothing.
    pub(crate) async fn stop(&self) {
        let slots = {
            let mut state = self.state();
            self.closed.store(true, Ordering::Release);
            std::mem::take(&mut state.slots)
        };
        for (_, _, slot) in slots {
            abort(&slot).await;
        }
    }
}

/// Aborts the spare in `slot`, once its filler is done.
async fn abort(slot: &Slot) {
    let spare = slot.lock().await.take();
    if let Some(spare) = spare {
        discard(spare.reservation).await;
    }
}

/// Aborts the reservation of a spare no create will take; a failure is only logged.
pub(crate) async fn discard(reservation: Reservation) {
    let root = reservation.root.clone();
    if let Err(error) = reservation.abort().await {
        tracing::warn!(%error, root = %root.display(), "removing a spare environment failed");
    }
}

impl Environments {
    /// After a create that could have used the spare of `key`: makes one, in the background,
    /// unless there is one (or one is being made), spares are off or this key was refused.
    /// The spare is prepared for installs when that create `installed` packages (or a lock),
    /// as the next create like it is likely to: preparing costs a Python run in the
    /// background, which creates without packages would only have to share the CPU with.
    pub(crate) fn refill_spare(
        &self,
        key: SpareKey,
        python_version: VersionRequest,
        installed: bool,
    ) {
        let spares = &self.inner.spares;
        if !spares.may_serve(&key.backend) {
            return;
        }
        let slot: Slot = Arc::new(AsyncMutex::new(None));
        let Ok(guard) = slot.clone().try_lock_owned() else {
            return;
        };
        let evicted = {
            let mut state = spares.state();
            // Checked again under the lock: a stop that began meanwhile has taken every slot.
            let closed = spares.closed.load(Ordering::Acquire);
            if closed
                || state.refused_keys.contains(&key)
                || state.slots.iter().any(|(k, _, _)| *k == key)
            {
                return;
            }
            state
                .slots
                .push((key.clone(), python_version, slot.clone()));
            match state.slots.len() > MAX_SPARES {
                true => Some(state.slots.remove(0).2),
                false => None,
            }
        };
        let env = self.clone();
        tokio::spawn(async move {
            if let Some(evicted) = evicted {
                abort(&evicted).await;
            }
            env.fill(key, python_version, installed, guard, slot).await;
        });
    }

    /// Makes the spare of `key` into `guard`, then, if `prepare`, has the backend prepare it
    /// (see the module's docs). A spare that cannot be made leaves its slot empty and gone.
    async fn fill(
        self,
        key: SpareKey,
        python_version: VersionRequest,
        prepare: bool,
        mut guard: OwnedMutexGuard<Option<Spare>>,
        slot: Slot,
    ) {
        let Some((spare, prepared)) = self.made(&key, python_version).await else {
            let mut state = self.inner.spares.state();
            state.slots.retain(|(_, _, s)| !Arc::ptr_eq(s, &slot));
            return;
        };
        let id = spare.reservation.id.clone();
        let preparing = PrepareSpareRequest {
            root: spare.reservation.root.clone(),
            interpreter_path: spare.provisioned.interpreter_path.clone(),
        };
        tracing::debug!(%id, prepare, "a spare environment is ready");
        *guard = Some(spare);
        drop(guard);
        let Some(backend) = prepare.then(|| self.backend(&key.backend).ok()).flatten() else {
            let _ = prepared.send(true);
            return;
        };
        // A create may take the spare meanwhile (one that installs waits for this), and may
        // delete it: the backend then fails here, which costs nothing.
        match tokio::time::timeout(PREPARING_AT_MOST, backend.call(preparing)).await {
            Ok(Ok(())) => tracing::debug!(%id, "a spare environment is prepared for installs"),
            Ok(Err(error)) => {
                tracing::debug!(%id, %error, "a spare environment could not be prepared")
            }
            Err(_) => tracing::debug!(%id, "preparing a spare environment took too long"),
        }
        let _ = prepared.send(true);
    }

    /// A new spare for `key`, provisioned and described, and the sender that says it is
    /// prepared; `None` (logged) if it can't be made.
    async fn made(
        &self,
        key: &SpareKey,
        python_version: VersionRequest,
    ) -> Option<(Spare, watch::Sender<bool>)> {
        let backend = self.backend(&key.backend).ok()?;
        match backend.call(CanRelabelRequest).await {
            Ok(true) => {}
            Ok(false) | Err(_) => {
                let mut state = self.inner.spares.state();
                state.refused_backends.insert(key.backend.clone());
                return None;
            }
        }
        let name = format!("{SPARE_NAME}{}", new_environment_id());
        let store = &self.inner.store;
        let reservation = match store.reserve(&name, &key.backend).await {
            Ok(reservation) => reservation,
            Err(error) => {
                tracing::debug!(%error, "no spare environment: reserving failed");
                return None;
            }
        };
        let root = reservation.root.clone();
        let provisioning = ProvisionRequest {
            root: root.clone(),
            name,
            python_version,
            interpreter: Some(key.interpreter.clone()),
        };
        let made = match backend.call(provisioning).await {
            // Provisioning resolves again if the interpreter changed meanwhile: not this key's.
            Ok(provisioned) if provisioned.python_full_version == key.interpreter.full_version => {
                match backend.call(DescribeRequest { root: root.clone() }).await {
                    Ok(description) => Ok((provisioned, description)),
                    Err(error) => Err(error.to_string()),
                }
            }
            Ok(_) => Err("the interpreter changed while it was provisioned".to_owned()),
            Err(error) => Err(error.to_string()),
        };
        match made {
            Ok((provisioned, description)) => {
                let (done, prepared) = watch::channel(false);
                let spare = Spare {
                    reservation,
                    provisioned,
                    description,
                    prepared,
                };
                Some((spare, done))
            }
            Err(error) => {
                tracing::debug!(%error, root = %root.display(), "no spare environment");
                discard(reservation).await;
                None
            }
        }
    }
}
