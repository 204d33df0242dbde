//! Running the locators: each one's last answer is reused while the paths it watches keep
//! their modification times, and the answers are combined into one candidate per real file.

use std::collections::HashMap;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::files::NameHint;
use super::locators::{stamp, Locator, Stamps};
use super::Candidate;

/// A discovered candidate with what discovery learnt about its file.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The candidate as reported by its locator.
    pub(crate) candidate: Candidate,
    /// What the real file's name (else the link's name) says about the version.
    pub(crate) hint: NameHint,
}

/// One locator's last answer, and the stamps it was given under (`None`: not reusable).
struct Answer {
    stamps: Option<Stamps>,
    candidates: Vec<Candidate>,
}

#[derive(Default)]
struct State {
    answers: Vec<Option<Answer>>,
    combined: Option<Vec<Found>>,
}

/// The locators of an inventory and what they last said.
pub(crate) struct Discovery {
    locators: Vec<Arc<dyn Locator>>,
    state: Mutex<State>,
}

impl Discovery {
    /// Discovery over `locators`, run in that order.
    pub(crate) fn new(locators: Vec<Arc<dyn Locator>>) -> Self {
        let answers = locators.iter().map(|_| None).collect();
        Discovery {
            locators,
            state: Mutex::new(State {
                answers,
                combined: None,
            }),
        }
    }

    /// Every candidate: each locator whose watched paths changed (or that watches none) is
    /// asked again, the others' answers are reused; see [`combine`] for the result's order.
    pub(crate) fn run(&self) -> Vec<Found> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut changed = state.combined.is_none();
        for (locator, answer) in self.locators.iter().zip(state.answers.iter_mut()) {
            let stamps = locator.watched_paths().map(stamp);
            let reusable = answer
                .as_ref()
                .is_some_and(|last| stamps.is_some() && last.stamps == stamps);
            if reusable {
                continue;
            }
            let fresh = ask(locator.as_ref(), stamps);
            changed |= answer
                .as_ref()
                .is_none_or(|last| last.candidates != fresh.candidates);
            *answer = Some(fresh);
        }
        if !changed {
            if let Some(combined) = &state.combined {
                return combined.clone();
            }
        }
        let combined = combine(
            state
                .answers
                .iter()
                .flatten()
                .flat_map(|answer| answer.candidates.iter().cloned())
                .collect(),
        );
        state.combined = Some(combined.clone());
        combined
    }
}

/// What `locator` finds now; a panic counts as finding nothing, and is not remembered.
fn ask(locator: &dyn Locator, stamps: Option<Stamps>) -> Answer {
    match catch_unwind(AssertUnwindSafe(|| locator.find())) {
        Ok(candidates) => {
            tracing::trace!(
                locator = locator.name(),
                found = candidates.len(),
                "located"
            );
            Answer { stamps, candidates }
        }
        Err(_) => {
            tracing::warn!(
                locator = locator.name(),
                "interpreter locator panicked; skipped"
            );
            Answer {
                stamps: None,
                candidates: Vec::new(),
            }
        }
    }
}

/// Keeps one candidate per real file (symlinks resolved; missing files are dropped): the one
/// from the preferred source, and among those the first whose version is known. Candidates
/// stay in source preference order, then discovery order (locator order, then each locator's
/// own order).
fn combine(mut candidates: Vec<Candidate>) -> Vec<Found> {
    candidates.sort_by_key(|c| c.source.preference());
    let mut kept: Vec<Found> = Vec::new();
    let mut index_of_real: HashMap<PathBuf, usize> = HashMap::new();
    for candidate in candidates {
        let Ok(real) = fs::canonicalize(&candidate.executable) else {
            continue;
        };
        if let Some(&index) = index_of_real.get(&real) {
            let earlier = &mut kept[index].candidate;
            if earlier.version.is_none()
                && candidate.version.is_some()
                && earlier.source == candidate.source
            {
                *earlier = candidate;
            }
            continue;
        }
        let hint = NameHint::of(&real)
            .or_else(|| NameHint::of(&candidate.executable))
            .unwrap_or_default();
        index_of_real.insert(real, kept.len());
        kept.push(Found { candidate, hint });
    }
    kept
}
