//! Counting the background deletions of this process, so that a sweep can wait for them.

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

/// How many deletions are running in the background, and a way to wait until none is.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    count: Mutex<usize>,
    idle: Notify,
}

/// One deletion in flight; dropping it ends it.
#[derive(Debug)]
pub(crate) struct InFlightGuard {
    in_flight: Arc<InFlight>,
}

impl InFlight {
    fn count(&self) -> MutexGuard<'_, usize> {
        self.count
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Counts one more deletion until the guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>) -> InFlightGuard {
        *self.count() += 1;
        InFlightGuard {
            in_flight: self.clone(),
        }
    }

    /// Waits until no deletion is in flight.
    pub(crate) async fn idle(&self) {
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if *self.count() == 0 {
                return;
            }
            idle.await;
        }
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        let mut count = self.in_flight.count();
        *count -= 1;
        let now_idle = *count == 0;
        drop(count);
        if now_idle {
            self.in_flight.idle.notify_waiters();
        }
    }
}
