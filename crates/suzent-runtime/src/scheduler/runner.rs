//! The narrow seam between the scheduler and whatever runs a job: the runtime's headless turn in
//! the product, a scripted fake in the scheduler's own tests.

use async_trait::async_trait;
use suzent_core::{DeniedCall, RunStatus};
use suzent_store::{JobRecord, RunEnd, RunRecord};
use tokio_util::sync::CancellationToken;

/// How a run went, as its runner saw it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunReport {
    /// `Completed` or `Failed` (`None`: completed).
    pub status: Option<RunStatus>,
    /// Model steps taken.
    pub steps: u32,
    /// Calls refused because nobody can answer a prompt, with why.
    pub denied: Vec<DeniedCall>,
    /// The error, or the start of the answer.
    pub detail: Option<String>,
    /// Nothing to do (a heartbeat that found nothing, a dream with too few memories).
    pub quiet: bool,
    /// What a dream changed.
    pub changes: Option<serde_json::Value>,
    /// Set when the run was stopped but something it started may still run (the runner could
    /// not confirm its processes are gone): the run then ends as `unknown` and is not retried.
    pub processes_left: bool,
}

impl RunReport {
    /// The store's record of this report with `status`.
    pub(crate) fn into_end(self, status: RunStatus, detail: Option<String>) -> RunEnd {
        RunEnd {
            status: Some(status),
            steps: self.steps,
            denied: self.denied,
            detail: detail.or(self.detail),
            quiet: self.quiet,
            changes: self.changes,
        }
    }
}

/// Runs the occurrences the scheduler claimed.
#[async_trait]
pub trait JobRunner: Send + Sync {
    /// Runs `run` of `job` until it ends. When `cancel` fires (timeout, shutdown) it stops its
    /// work, processes included, and returns; returning means everything it started is gone,
    /// unless the report says [`RunReport::processes_left`].
    async fn run(&self, job: &JobRecord, run: &RunRecord, cancel: CancellationToken) -> RunReport;

    /// Told whenever a run row changes (started, ended, skipped, missed, interrupted), after it
    /// is stored. For notifications and live views.
    fn updated(&self, _job: &JobRecord, _run: &RunRecord) {}
}
