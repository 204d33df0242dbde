//! Busy polling: an idle session keeps looking at its input for a moment after it answered,
//! before it goes to sleep.
//!
//! A client that sends its next request as soon as it has read an answer (one request in
//! flight at a time) would otherwise find the server asleep every time: its request then
//! waits for the kernel to wake the server's thread, which on a virtual machine with an idle
//! vCPU costs more than the request itself (BENCHMARKS.md, "Busy polling"). For up to
//! [`RuntimeOptions::busy_poll`](super::RuntimeOptions::busy_poll) after it last wrote, a
//! session with nothing running yields to the runtime and reads again instead, so the other
//! tasks of the runtime still run in between.
//!
//! It costs CPU only for clients it helps: after [`MISSES_TO_REST`] windows in a row in which
//! no input came, the session stops polling and only tries again every [`RETRY_EVERY`]th
//! time, so a client that takes longer to come back (a person at an editor) costs one window
//! in [`RETRY_EVERY`].

use std::time::{Duration, Instant};

/// Windows in a row without input after which polling rests.
pub const MISSES_TO_REST: u8 = 4;

/// While resting, one window in this many is polled, to notice a client that became fast.
pub const RETRY_EVERY: u8 = 32;

/// When a session polls its input instead of sleeping.
#[derive(Debug)]
pub struct BusyPoll {
    window: Duration,
    /// The end of the current window: set when answers are written, cleared once input comes
    /// or the window passes.
    until: Option<Instant>,
    misses: u8,
    rested: u8,
}

impl BusyPoll {
    /// Polling for `window` after each write; `Duration::ZERO` never polls.
    pub fn new(window: Duration) -> Self {
        BusyPoll {
            window,
            until: None,
            misses: 0,
            rested: 0,
        }
    }

    /// Answers were just written: a window opens (unless polling rests this time).
    pub fn wrote(&mut self) {
        if self.window.is_zero() || self.until.is_some() {
            return;
        }
        if self.misses >= MISSES_TO_REST {
            self.rested += 1;
            if self.rested < RETRY_EVERY {
                return;
            }
            self.rested = 0;
        }
        self.until = Some(Instant::now() + self.window);
    }

    /// Input came: the open window, if any, did its job.
    pub fn input_came(&mut self) {
        if self.until.take().is_some() {
            self.misses = 0;
            self.rested = 0;
        }
    }

    /// Whether the session should look at its input again rather than sleep; `false` ends the
    /// window (and counts a miss).
    pub fn keep_polling(&mut self) -> bool {
        let Some(until) = self.until else {
            return false;
        };
        if Instant::now() < until {
            return true;
        }
        self.until = None;
        self.misses = self.misses.saturating_add(1);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expired(poll: &mut BusyPoll) {
        poll.until = Some(Instant::now() - Duration::from_micros(1));
        assert!(!poll.keep_polling());
    }

    #[test]
    fn a_zero_window_never_polls() {
        let mut poll = BusyPoll::new(Duration::ZERO);
        poll.wrote();
        assert!(!poll.keep_polling());
    }

    #[test]
    fn a_window_opens_at_a_write_and_closes_at_input() {
        let mut poll = BusyPoll::new(Duration::from_secs(60));
        assert!(!poll.keep_polling());
        poll.wrote();
        assert!(poll.keep_polling());
        poll.input_came();
        assert!(!poll.keep_polling());
    }

    #[test]
    fn polling_rests_after_misses_and_retries_now_and_then() {
        let mut poll = BusyPoll::new(Duration::from_secs(60));
        for _ in 0..MISSES_TO_REST {
            poll.wrote();
            expired(&mut poll);
        }
        let mut windows = 0;
        for _ in 0..2 * u32::from(RETRY_EVERY) {
            poll.wrote();
            if poll.keep_polling() {
                windows += 1;
                expired(&mut poll);
            }
        }
        assert_eq!(windows, 2);
        poll.wrote();
        for _ in 0..RETRY_EVERY {
            poll.wrote();
        }
        assert!(poll.keep_polling(), "a retry window is open");
        poll.input_came();
        poll.wrote();
        assert!(poll.keep_polling(), "a hit ends the rest");
    }
}
