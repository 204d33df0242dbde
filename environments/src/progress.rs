//! `$/progress` for a request that carries `work_done_token`: `begin`, the backend's own steps
//! as `report`s, then `end`, each sent (queued before the answer, so written before it)
//! before the handler returns.

use std::future::Future;

use tokio::sync::mpsc;
use wsp_install::{ProgressSink, ProgressStep};
use wsp_protocol::{methods, ProgressParams, ProgressToken, WorkDoneProgress};

use wsp_middleware::Notifier;

/// Steps a backend may have reported before they are sent on.
const STEPS_IN_FLIGHT: usize = 16;

/// The progress of one request: does nothing without both a token and a notifier.
#[derive(Clone)]
pub(super) struct Progress {
    target: Option<(Notifier, ProgressToken)>,
}

/// How a phase's own percentages (0–100) map into the request's: `start + p * span / 100`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub(super) start: u32,
    pub(super) span: u32,
}

impl Span {
    /// A phase that is the whole request.
    pub(super) const WHOLE: Span = Span {
        start: 0,
        span: 100,
    };

    fn map(self, percentage: u32) -> u32 {
        self.start + percentage.min(100) * self.span / 100
    }
}

impl Progress {
    pub(super) fn new(notifier: Option<Notifier>, token: Option<ProgressToken>) -> Progress {
        Progress {
            target: notifier.zip(token),
        }
    }

    pub(super) fn is_active(&self) -> bool {
        self.target.is_some()
    }

    async fn send(&self, value: WorkDoneProgress) {
        if let Some((notifier, token)) = &self.target {
            let params = ProgressParams {
                token: token.clone(),
                value,
            };
            notifier.notify(methods::PROGRESS, &params).await;
        }
    }

    pub(super) async fn begin(&self, title: String, message: Option<String>) {
        let percentage = Some(0);
        self.send(WorkDoneProgress::Begin {
            title,
            message,
            percentage,
        })
        .await;
    }

    pub(super) async fn report(&self, message: String, percentage: Option<u32>) {
        let message = Some(message);
        self.send(WorkDoneProgress::Report {
            message,
            percentage,
        })
        .await;
    }

    pub(super) async fn end(&self, message: String) {
        let message = Some(message);
        self.send(WorkDoneProgress::End { message }).await;
    }

    /// Runs `work` with a sink for its steps (`None` when this progress is inactive), sending
    /// each step on as a `report` with its percentage mapped through `span`; returns once the
    /// work is done and every step was sent.
    pub(super) async fn forward<F, T>(
        &self,
        span: Span,
        work: impl FnOnce(Option<ProgressSink>) -> F,
    ) -> T
    where
        F: Future<Output = T>,
    {
        if !self.is_active() {
            return work(None).await;
        }
        let (sink, mut steps) = mpsc::channel::<ProgressStep>(STEPS_IN_FLIGHT);
        let forward = async {
            while let Some(step) = steps.recv().await {
                let percentage = step.percentage.map(|p| span.map(p));
                self.report(step.message, percentage).await;
            }
        };
        let (result, ()) = tokio::join!(work(Some(sink)), forward);
        result
    }
}
