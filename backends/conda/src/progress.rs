//! rattler's installer steps as [`ProgressStep`]s: each package fetched into the package cache
//! (downloaded, or read from a local channel), each package unlinked and linked, each change
//! applied, and the transaction's end. Percentages run from `start` to 90
//! with the transaction's operations.

use std::collections::HashMap;
use std::sync::Mutex;

use rattler::install::{Reporter, Transaction};
use rattler_conda_types::{PrefixRecord, RepoDataRecord};
use wsp_install::{ProgressSink, ProgressStep};

/// Where a transaction's operations start on the percentage scale.
const START: u32 = 40;
/// Where they end.
const END: u32 = 90;

/// A [`Reporter`] sending steps to a [`ProgressSink`]. Its callbacks may not block, so a step
/// that finds the sink full is dropped (later ones still go).
pub(crate) struct StepReporter {
    sink: ProgressSink,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    operations: usize,
    done: usize,
    /// Package names by the index this reporter handed out for a cache entry, a download, an
    /// unlink or a link.
    names: HashMap<usize, String>,
    next: usize,
}

impl StepReporter {
    pub(crate) fn new(sink: ProgressSink) -> Self {
        StepReporter {
            sink,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn send(&self, message: String, percentage: Option<u32>) {
        let _ = self.sink.try_send(ProgressStep {
            message,
            percentage,
        });
    }

    /// Hands out a fresh index standing for `name`.
    fn remember(&self, name: String) -> usize {
        let mut state = self.state();
        let index = state.next;
        state.next += 1;
        state.names.insert(index, name);
        index
    }

    /// Hands out a fresh index standing for what `index` stands for.
    fn alias(&self, index: usize) -> usize {
        let name = self.name(index);
        self.remember(name)
    }

    fn name(&self, index: usize) -> String {
        self.state().names.get(&index).cloned().unwrap_or_default()
    }

    fn percentage(&self) -> u32 {
        let state = self.state();
        if state.operations == 0 {
            return END;
        }
        let share = (state.done.min(state.operations) * (END - START) as usize) / state.operations;
        START + share as u32
    }
}

fn record_name(record: &RepoDataRecord) -> String {
    format!(
        "{}-{}",
        record.package_record.name.as_normalized(),
        record.package_record.version
    )
}

impl Reporter for StepReporter {
    fn on_transaction_start(&self, transaction: &Transaction<PrefixRecord, RepoDataRecord>) {
        let operations = transaction.operations.len();
        self.state().operations = operations;
        let s = if operations == 1 { "" } else { "s" };
        self.send(
            format!("Applying {operations} change{s} to the prefix"),
            Some(START),
        );
    }

    fn on_transaction_operation_start(&self, _operation: usize) {}

    fn on_populate_cache_start(&self, _operation: usize, record: &RepoDataRecord) -> usize {
        self.remember(record_name(record))
    }

    fn on_validate_start(&self, cache_entry: usize) -> usize {
        self.alias(cache_entry)
    }

    fn on_validate_complete(&self, _validate_idx: usize) {}

    fn on_download_start(&self, cache_entry: usize) -> usize {
        self.alias(cache_entry)
    }

    fn on_download_progress(&self, _download_idx: usize, _progress: u64, _total: Option<u64>) {}

    fn on_download_completed(&self, download_idx: usize) {
        self.send(format!("Downloaded {}", self.name(download_idx)), None);
    }

    fn on_populate_cache_complete(&self, cache_entry: usize) {
        self.send(format!("Fetched {}", self.name(cache_entry)), None);
    }

    fn on_unlink_start(&self, _operation: usize, record: &PrefixRecord) -> usize {
        self.remember(record_name(&record.repodata_record))
    }

    fn on_unlink_complete(&self, index: usize) {
        self.send(format!("Unlinked {}", self.name(index)), None);
    }

    fn on_link_start(&self, _operation: usize, record: &RepoDataRecord) -> usize {
        self.remember(record_name(record))
    }

    fn on_link_complete(&self, index: usize) {
        self.send(format!("Linked {}", self.name(index)), None);
    }

    fn on_transaction_operation_complete(&self, _operation: usize) {
        let (done, operations) = {
            let mut state = self.state();
            state.done += 1;
            (state.done, state.operations)
        };
        let message = format!("{done} of {operations} changes applied");
        self.send(message, Some(self.percentage()));
    }

    fn on_transaction_complete(&self) {
        self.send("The prefix is up to date".to_owned(), Some(END));
    }

    fn on_post_link_start(&self, package_name: &str, _script_path: &str) -> usize {
        self.remember(package_name.to_owned())
    }

    fn on_post_link_complete(&self, _index: usize, _success: bool) {}

    fn on_pre_unlink_start(&self, package_name: &str, _script_path: &str) -> usize {
        self.remember(package_name.to_owned())
    }

    fn on_pre_unlink_complete(&self, _index: usize, _success: bool) {}
}

/// Where an install's own steps (beside rattler's) go, if anywhere.
#[derive(Clone, Default)]
pub(crate) struct Steps(Option<ProgressSink>);

impl Steps {
    pub(crate) fn new(sink: Option<ProgressSink>) -> Self {
        Steps(sink)
    }

    pub(crate) fn sink(&self) -> Option<ProgressSink> {
        self.0.clone()
    }

    /// Sends a step, waiting for room.
    pub(crate) async fn send(&self, message: String, percentage: Option<u32>) {
        if let Some(sink) = &self.0 {
            let _ = sink
                .send(ProgressStep {
                    message,
                    percentage,
                })
                .await;
        }
    }

    /// Sends a step without a percentage if there is room now (for blocking code).
    pub(crate) fn try_send(&self, message: String) {
        if let Some(sink) = &self.0 {
            let _ = sink.try_send(ProgressStep {
                message,
                percentage: None,
            });
        }
    }
}
