//! The scheduler service: holds the lease, claims due occurrences in the store, runs them through
//! its [`JobRunner`] with a timeout, and recovers what a dead process left running.

use super::clock::{Clock, SystemClock};
use super::owner::{self, Instance};
use super::plan::{Decision, decide};
use super::runner::{JobRunner, RunReport};
use super::spec::{Schedule, delta};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use suzent_core::{CatchUpPolicy, RunStatus, RunTrigger};
use suzent_store::{
    Claim, JobRecord, LeaseHolder, LeaseOutcome, NewRun, RunEnd, RunRecord, Store, StoreError,
};
use tokio::sync::{Notify, watch};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

/// Timings of a scheduler.
#[derive(Debug, Clone)]
pub struct SchedulerOptions {
    /// How long the lease lasts unless renewed (default 30 s).
    pub lease_ttl: Duration,
    /// How often the owner renews the lease, a standby process retries it, and the job list is
    /// checked for changes made by other processes (default 10 s).
    pub renew_every: Duration,
    /// After a timeout or at shutdown: how long a run may take to stop before its end counts as
    /// unconfirmed (`unknown`, default 15 s).
    pub kill_grace: Duration,
    /// The clock of the lease (default: the system clock). The schedule's clock may be a test's.
    pub lease_clock: Option<Arc<dyn Clock>>,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        SchedulerOptions {
            lease_ttl: Duration::from_secs(30),
            renew_every: Duration::from_secs(10),
            kill_grace: Duration::from_secs(15),
            lease_clock: None,
        }
    }
}

/// Whether this process schedules.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchedulerStatus {
    /// The scheduler was started in this process.
    pub started: bool,
    /// This process holds the lease and runs the jobs.
    pub scheduling: bool,
    /// Who holds the lease when another process does.
    pub holder: Option<LeaseHolder>,
}

struct Entry {
    job: JobRecord,
    schedule: Option<Schedule>,
    next: Option<DateTime<Utc>>,
}

impl Entry {
    fn new(job: JobRecord) -> Entry {
        let schedule = match Schedule::parse(&job.draft.schedule, &job.draft.timezone) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(job = %job.draft.id, "job not scheduled: {e}");
                None
            }
        };
        let mut entry = Entry {
            job,
            schedule,
            next: None,
        };
        entry.refresh();
        entry
    }

    fn refresh(&mut self) {
        self.next = match (&self.schedule, self.job.draft.enabled) {
            (Some(s), true) => s.next_after(self.job.cursor),
            _ => None,
        };
    }
}

struct Running {
    job_id: String,
    abort: Option<AbortHandle>,
}

#[derive(Default)]
struct State {
    scheduling: bool,
    jobs: Vec<Entry>,
    version: Option<i64>,
    running: HashMap<String, Running>,
    next_renew: Option<DateTime<Utc>>,
}

struct Inner {
    store: Store,
    clock: Arc<dyn Clock>,
    lease_clock: Arc<dyn Clock>,
    runner: Arc<dyn JobRunner>,
    options: SchedulerOptions,
    instance: Instance,
    state: Mutex<State>,
    wake: Notify,
    shutdown: CancellationToken,
    status: watch::Sender<SchedulerStatus>,
    /// After each pass: the time it looked at and the next occurrence due after it.
    progress: watch::Sender<Progress>,
    main: Mutex<Option<AbortHandle>>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    passes: u64,
    looked_at: Option<DateTime<Utc>>,
    next_due: Option<DateTime<Utc>>,
    /// When the lease is renewed next (on the lease's clock).
    next_renew: Option<DateTime<Utc>>,
}

/// The scheduler: one per data directory is active (the lease holder); others stand by and take
/// over when the lease expires. Cheap to clone.
#[derive(Clone)]
pub struct Scheduler {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("instance", &self.inner.instance.id)
            .finish_non_exhaustive()
    }
}

impl Scheduler {
    /// A scheduler over `store` that runs jobs with `runner`, reading the time from `clock`.
    /// Nothing happens until [`Scheduler::start`].
    pub fn new(
        store: Store,
        clock: Arc<dyn Clock>,
        runner: Arc<dyn JobRunner>,
        options: SchedulerOptions,
    ) -> Scheduler {
        let lease_clock = options
            .lease_clock
            .clone()
            .unwrap_or_else(|| Arc::new(SystemClock));
        let (status, _) = watch::channel(SchedulerStatus::default());
        let (progress, _) = watch::channel(Progress::default());
        Scheduler {
            inner: Arc::new(Inner {
                store,
                clock,
                lease_clock,
                runner,
                options,
                instance: Instance::new(),
                state: Mutex::new(State::default()),
                wake: Notify::new(),
                shutdown: CancellationToken::new(),
                status,
                progress,
                main: Mutex::new(None),
            }),
        }
    }

    /// This instance's id (`host:pid:uuid`), as written in the lease and in the runs it claims.
    pub fn instance_id(&self) -> &str {
        &self.inner.instance.id
    }

    /// The clock it schedules by.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.clock
    }

    /// Tries the lease once, then keeps scheduling (or standing by) in the background until
    /// [`Scheduler::shutdown`]. Returns the status after the first try: a second process on the
    /// same data directory learns at once that it does not schedule, and who does. Calling it
    /// again returns the current status. Needs a Tokio runtime.
    pub async fn start(&self) -> SchedulerStatus {
        {
            let mut main = self
                .inner
                .main
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if main.is_some() {
                return self.status();
            }
            let inner = Arc::clone(&self.inner);
            *main = Some(tokio::spawn(async move { inner.main_loop().await }).abort_handle());
        }
        self.inner.status.send_modify(|s| s.started = true);
        let mut rx = self.inner.status.subscribe();
        let _ = tokio::time::timeout(
            Duration::from_secs(10),
            rx.wait_for(|s| s.scheduling || s.holder.is_some()),
        )
        .await;
        self.status()
    }

    /// Whether this process schedules, and who does if not.
    pub fn status(&self) -> SchedulerStatus {
        self.inner.status.borrow().clone()
    }

    /// Waits until the status satisfies `f` (e.g. this instance took the lease over).
    pub async fn wait_status(&self, f: impl Fn(&SchedulerStatus) -> bool) -> SchedulerStatus {
        let mut rx = self.inner.status.subscribe();
        match rx.wait_for(|s| f(s)).await {
            Ok(s) => s.clone(),
            Err(_) => self.status(),
        }
    }

    /// Waits until this scheduler has handled every occurrence due at or before `t` (it holds
    /// the lease, looked at the jobs at `t` or later or knows nothing is due until after `t`).
    /// Runs it started may still be running. For tests with a [`super::ManualClock`] and for
    /// benchmarks.
    pub async fn settled(&self, t: DateTime<Utc>) {
        let mut rx = self.inner.progress.subscribe();
        let lease_clock = Arc::clone(&self.inner.lease_clock);
        let _ = rx
            .wait_for(|p| {
                let renewed = p.next_renew.is_none_or(|r| r > lease_clock.now());
                p.passes > 0
                    && renewed
                    && (p.looked_at.is_some_and(|l| l >= t) || p.next_due.is_none_or(|n| n > t))
            })
            .await;
    }

    /// How many passes (wake-ups) the scheduler made so far: for benchmarks of its idle cost.
    pub fn passes(&self) -> u64 {
        self.inner.progress.borrow().passes
    }

    /// When the next occurrence of any job is due (as of the last pass), if any.
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        self.inner.progress.borrow().next_due
    }

    /// Looks at the jobs again now (after a job was added, changed, paused or asked to run).
    pub fn wake(&self) {
        self.inner.wake.notify_one();
    }

    /// Asks for a run of `job_id` now. This process starts it if it schedules; otherwise the
    /// process that does picks the request up within [`SchedulerOptions::renew_every`].
    ///
    /// Errors: [`StoreError::NotFound`] for an unknown job, [`StoreError::Database`].
    pub async fn run_now(&self, job_id: &str) -> Result<RunRecord, StoreError> {
        let run = self
            .inner
            .store
            .request_run(job_id, self.inner.clock.now())
            .await?;
        self.wake();
        Ok(run)
    }

    /// The runs this instance is running now: `(run id, job id)`, by run id.
    pub fn running(&self) -> Vec<(String, String)> {
        let state = self.inner.lock();
        let mut ids: Vec<(String, String)> = state
            .running
            .iter()
            .map(|(run, r)| (run.clone(), r.job_id.clone()))
            .collect();
        ids.sort();
        ids
    }

    /// Stops scheduling: running runs are cancelled (and recorded as interrupted when they
    /// stop within the kill grace), the lease is released so another process can take over.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        self.inner.wake.notify_one();
        let deadline = self.inner.lease_clock.now() + delta(self.inner.options.kill_grace);
        loop {
            if self.inner.lock().running.is_empty() {
                break;
            }
            if self.inner.lease_clock.now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if let Some(main) = self
            .inner
            .main
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            main.abort();
        }
        if let Err(e) = self
            .inner
            .store
            .release_scheduler_lease(&self.inner.instance.id)
            .await
        {
            tracing::warn!("releasing the scheduler lease: {e}");
        }
        self.inner.instance.end();
        self.inner.status.send_modify(|s| s.scheduling = false);
    }

    /// Stops dead, as a crash would (for tests): every task is aborted, nothing is recorded, the
    /// lease stays until it expires, and the instance counts as gone.
    pub fn abandon(&self) {
        self.inner.shutdown.cancel();
        if let Some(main) = self
            .inner
            .main
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            main.abort();
        }
        let mut state = self.inner.lock();
        for (_, running) in state.running.drain() {
            if let Some(abort) = running.abort {
                abort.abort();
            }
        }
        drop(state);
        self.inner.instance.end();
    }
}

enum Ended {
    Report(RunReport),
    TimedOut,
    Shutdown,
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn main_loop(self: Arc<Self>) {
        loop {
            if self.shutdown.is_cancelled() {
                return;
            }
            let looked_at = self.clock.now();
            let next_due = match self.tick(looked_at).await {
                Ok(next) => next,
                Err(e) => {
                    tracing::warn!("scheduler: {e}");
                    None
                }
            };
            let (scheduling, next_renew) = {
                let state = self.lock();
                (state.scheduling, state.next_renew)
            };
            self.progress.send_modify(|p| {
                p.passes += 1;
                p.looked_at = Some(looked_at);
                // A process standing by has nothing due; it only retries the lease.
                p.next_due = if scheduling { next_due } else { None };
                p.next_renew = next_renew;
            });
            let Some(next_renew) = self.lock().next_renew else {
                // The lease was lost during the pass: try it again at once.
                tokio::task::yield_now().await;
                continue;
            };
            let due = async {
                match next_due {
                    Some(at) => self.clock.sleep_until(at).await,
                    None => futures::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = due => {}
                () = self.lease_clock.sleep_until(next_renew) => {}
                () = self.wake.notified() => {}
                () = self.shutdown.cancelled() => return,
            }
        }
    }

    fn set_status(&self, scheduling: bool, holder: Option<LeaseHolder>) {
        self.status.send_if_modified(|s| {
            let changed = s.scheduling != scheduling || s.holder != holder;
            s.scheduling = scheduling;
            s.holder = holder;
            changed
        });
    }

    /// One pass: the lease, then (when held) waiting runs, due occurrences. Returns when the
    /// next occurrence is due.
    async fn tick(
        self: &Arc<Self>,
        now: DateTime<Utc>,
    ) -> Result<Option<DateTime<Utc>>, StoreError> {
        let lease_now = self.lease_clock.now();
        let renew_due = self.lock().next_renew.is_none_or(|at| lease_now >= at);
        if renew_due {
            let mut outcome = self
                .store
                .acquire_scheduler_lease(
                    &self.instance.id,
                    self.instance.pid,
                    &self.instance.host,
                    lease_now,
                    self.options.lease_ttl,
                )
                .await?;
            // A holder on this machine whose process is gone (a crash) does not make a restart
            // wait for its lease to expire.
            if let LeaseOutcome::Held(holder) = &outcome
                && holder.host == self.instance.host
                && !owner::alive(&holder.owner, Some(holder.pid))
            {
                tracing::info!(
                    pid = holder.pid,
                    "the process that held the scheduler lease is gone; taking it over"
                );
                outcome = self
                    .store
                    .take_over_scheduler_lease(
                        &self.instance.id,
                        self.instance.pid,
                        &self.instance.host,
                        lease_now,
                        self.options.lease_ttl,
                        &holder.owner,
                    )
                    .await?;
            }
            let was = {
                let mut state = self.lock();
                state.next_renew = Some(lease_now + delta(self.options.renew_every));
                let was = state.scheduling;
                state.scheduling = matches!(outcome, LeaseOutcome::Acquired(_));
                was
            };
            match outcome {
                LeaseOutcome::Acquired(_) => {
                    if !was {
                        tracing::info!(instance = %self.instance.id, "this process schedules the jobs");
                        self.lock().version = None;
                        self.recover().await?;
                    }
                    self.set_status(true, None);
                }
                LeaseOutcome::Held(holder) => {
                    if was {
                        tracing::warn!(holder = %holder.owner, "the scheduler lease was taken over; this process stops scheduling");
                    } else if self.status.borrow().holder.as_ref().map(|h| &h.owner)
                        != Some(&holder.owner)
                    {
                        tracing::info!(pid = holder.pid, host = %holder.host, "another process (pid {}) schedules the jobs of this data directory; this one does not", holder.pid);
                    }
                    self.set_status(false, Some(holder));
                    return Ok(None);
                }
            }
        }
        if !self.lock().scheduling {
            return Ok(None);
        }
        self.reload_jobs().await?;
        self.start_waiting().await?;
        let due: Vec<JobRecord> = {
            let state = self.lock();
            state
                .jobs
                .iter()
                .filter(|e| e.next.is_some_and(|n| n <= now))
                .map(|e| e.job.clone())
                .collect()
        };
        for job in due {
            self.fire(&job, now).await?;
        }
        let state = self.lock();
        Ok(state.jobs.iter().filter_map(|e| e.next).min())
    }

    async fn reload_jobs(&self) -> Result<(), StoreError> {
        let version = self.store.schedule_version().await?;
        if self.lock().version == Some(version) {
            return Ok(());
        }
        let jobs = self.store.list_jobs().await?;
        let mut state = self.lock();
        state.jobs = jobs.into_iter().map(Entry::new).collect();
        state.version = Some(version);
        Ok(())
    }

    fn set_cursor(&self, job_id: &str, cursor: DateTime<Utc>) {
        let mut state = self.lock();
        if let Some(e) = state.jobs.iter_mut().find(|e| e.job.draft.id == job_id) {
            if cursor > e.job.cursor {
                e.job.cursor = cursor;
            }
            e.refresh();
        }
    }

    fn schedule_of(&self, job_id: &str) -> Option<Schedule> {
        self.lock()
            .jobs
            .iter()
            .find(|e| e.job.draft.id == job_id)
            .and_then(|e| e.schedule.clone())
    }

    /// Handles a job whose next occurrence is due.
    async fn fire(self: &Arc<Self>, job: &JobRecord, now: DateTime<Utc>) -> Result<(), StoreError> {
        let Some(schedule) = self.schedule_of(&job.draft.id) else {
            return Ok(());
        };
        let (slot, new) = match decide(&schedule, job.cursor, now, job.draft.catch_up) {
            Decision::Wait => {
                self.set_cursor(&job.draft.id, job.cursor);
                return Ok(());
            }
            Decision::Run {
                slot,
                trigger,
                catch_up,
                missed,
            } => (
                slot,
                NewRun {
                    job_id: job.draft.id.clone(),
                    slot,
                    attempt: 1,
                    trigger,
                    catch_up,
                    missed,
                    status: RunStatus::Running,
                    detail: None,
                },
            ),
            Decision::Missed { slot, count } => (
                slot,
                NewRun {
                    job_id: job.draft.id.clone(),
                    slot,
                    attempt: 1,
                    trigger: RunTrigger::CatchUp,
                    catch_up: false,
                    missed: count.saturating_sub(1),
                    status: RunStatus::Missed,
                    detail: Some(format!(
                        "{count} occurrence(s) passed while Suzent was not running or the machine slept; not run (catch-up policy: skip)"
                    )),
                },
            ),
        };
        self.claim_and_start(job, &new, Some(slot)).await?;
        self.set_cursor(&job.draft.id, slot);
        Ok(())
    }

    async fn claim_and_start(
        self: &Arc<Self>,
        job: &JobRecord,
        new: &NewRun,
        advance: Option<DateTime<Utc>>,
    ) -> Result<(), StoreError> {
        let claim = self
            .store
            .claim_run(
                &self.instance.id,
                self.instance.pid,
                new,
                advance,
                self.clock.now(),
                self.lease_clock.now(),
            )
            .await?;
        match claim {
            Claim::Claimed(run) => self.started(job.clone(), run),
            Claim::Duplicate => {}
            Claim::LeaseLost => {
                self.lock().scheduling = false;
                self.lock().next_renew = None;
            }
        }
        Ok(())
    }

    /// After a row was written: starts the run when its status is `running`, else reports it.
    fn started(self: &Arc<Self>, job: JobRecord, run: RunRecord) {
        self.runner.updated(&job, &run);
        if run.status != RunStatus::Running {
            return;
        }
        let cancel = CancellationToken::new();
        {
            let mut state = self.lock();
            state.running.insert(
                run.id.clone(),
                Running {
                    job_id: job.draft.id.clone(),
                    abort: None,
                },
            );
        }
        let inner = Arc::clone(self);
        let run_id = run.id.clone();
        let handle = tokio::spawn(async move { inner.execute(job, run, cancel).await });
        if let Some(r) = self.lock().running.get_mut(&run_id) {
            r.abort = Some(handle.abort_handle());
        }
    }

    async fn execute(self: Arc<Self>, job: JobRecord, run: RunRecord, cancel: CancellationToken) {
        let timeout = Duration::from_secs(u64::from(job.draft.timeout_secs.max(1)));
        let started = run.started_at.unwrap_or_else(|| self.clock.now());
        let deadline = started + delta(timeout);
        let runner = Arc::clone(&self.runner);
        let fut = runner.run(&job, &run, cancel.clone());
        tokio::pin!(fut);
        let ended = tokio::select! {
            report = &mut fut => Ended::Report(report),
            () = self.clock.sleep_until(deadline) => Ended::TimedOut,
            () = self.shutdown.cancelled() => Ended::Shutdown,
        };
        let grace = self.options.kill_grace;
        let (end, retry) = match ended {
            Ended::Report(report) => {
                let status = report.status.unwrap_or(RunStatus::Completed);
                let status = if status.is_final() && status.was_started() {
                    status
                } else {
                    RunStatus::Completed
                };
                (report.into_end(status, None), status == RunStatus::Failed)
            }
            Ended::TimedOut => {
                cancel.cancel();
                let stopped = tokio::select! {
                    report = &mut fut => Some(report),
                    () = self.clock.sleep_until(self.clock.now() + delta(grace)) => None,
                };
                match stopped {
                    Some(report) if !report.processes_left => {
                        let detail = format!(
                            "timed out after {} s; the run and the processes it started were stopped",
                            timeout.as_secs()
                        );
                        (report.into_end(RunStatus::TimedOut, Some(detail)), true)
                    }
                    Some(report) => {
                        let detail = format!(
                            "timed out after {} s; processes it started could not be confirmed stopped, so it is not retried",
                            timeout.as_secs()
                        );
                        (report.into_end(RunStatus::Unknown, Some(detail)), false)
                    }
                    None => (
                        RunEnd {
                            status: Some(RunStatus::Unknown),
                            detail: Some(format!(
                                "timed out after {} s and did not stop within {} s: it may still have effects, so it is not retried",
                                timeout.as_secs(),
                                grace.as_secs()
                            )),
                            ..RunEnd::default()
                        },
                        false,
                    ),
                }
            }
            Ended::Shutdown => {
                cancel.cancel();
                let stopped = tokio::select! {
                    report = &mut fut => Some(report),
                    () = self.lease_clock.sleep_until(self.lease_clock.now() + delta(grace)) => None,
                };
                let detail = "Suzent stopped during the run".to_string();
                match stopped {
                    Some(report) => (report.into_end(RunStatus::Interrupted, Some(detail)), false),
                    None => (
                        RunEnd {
                            status: Some(RunStatus::Unknown),
                            detail: Some(format!(
                                "{detail}, and the run did not stop within {} s",
                                grace.as_secs()
                            )),
                            ..RunEnd::default()
                        },
                        false,
                    ),
                }
            }
        };
        let now = self.clock.now();
        if let Err(e) = self.store.finish_run(&run.id, &end, now).await {
            tracing::warn!(run = %run.id, "recording the end of a scheduled run: {e}");
        }
        self.lock().running.remove(&run.id);
        match self.store.get_run(&run.id).await {
            Ok(Some(stored)) => self.runner.updated(&job, &stored),
            Ok(None) => {}
            Err(e) => tracing::warn!(run = %run.id, "reading a scheduled run: {e}"),
        }
        if retry && run.attempt <= job.draft.max_retries && !self.shutdown.is_cancelled() {
            let next = NewRun {
                job_id: job.draft.id.clone(),
                slot: run.slot,
                attempt: run.attempt + 1,
                trigger: RunTrigger::Retry,
                catch_up: run.catch_up,
                missed: run.missed,
                status: RunStatus::Running,
                detail: None,
            };
            if let Err(e) = self.claim_and_start(&job, &next, None).await {
                tracing::warn!(job = %job.draft.id, "claiming a retry: {e}");
            }
        }
        // A queued run of this job may start now.
        self.wake.notify_one();
    }

    /// Starts requested (Run now) and queued runs whose turn has come.
    async fn start_waiting(self: &Arc<Self>) -> Result<(), StoreError> {
        let open = self.store.open_runs().await?;
        for run in open {
            if !matches!(run.status, RunStatus::Requested | RunStatus::Queued) {
                continue;
            }
            let Some(job) = self.store.get_job(&run.job_id).await? else {
                continue;
            };
            let Some(now_run) = self
                .store
                .start_waiting_run(
                    &self.instance.id,
                    self.instance.pid,
                    &run.id,
                    self.clock.now(),
                    self.lease_clock.now(),
                )
                .await?
            else {
                continue;
            };
            if now_run.status != run.status {
                self.started(job, now_run);
            }
        }
        Ok(())
    }

    /// After taking the lease: runs marked running whose process is gone were interrupted; by
    /// the job's catch-up policy one recovery run follows, unless a later occurrence is due
    /// anyway (it runs instead) or the run was itself a recovery or a manual run.
    async fn recover(self: &Arc<Self>) -> Result<(), StoreError> {
        let now = self.clock.now();
        let open = self.store.open_runs().await?;
        let mine: Vec<String> = self.lock().running.keys().cloned().collect();
        for run in open {
            if run.status != RunStatus::Running || mine.contains(&run.id) {
                continue;
            }
            let owner_id = run.owner.clone().unwrap_or_default();
            if owner::alive(&owner_id, run.pid) {
                continue;
            }
            let end = RunEnd {
                status: Some(RunStatus::Interrupted),
                detail: Some(format!(
                    "the process running it (pid {}) stopped before it ended",
                    run.pid.unwrap_or_default()
                )),
                ..RunEnd::default()
            };
            if !self.store.finish_run(&run.id, &end, now).await? {
                continue;
            }
            let Some(job) = self.store.get_job(&run.job_id).await? else {
                continue;
            };
            if let Ok(Some(stored)) = self.store.get_run(&run.id).await {
                self.runner.updated(&job, &stored);
            }
            tracing::info!(job = %job.draft.id, run = %run.id, "a scheduled run was interrupted");
            let recoverable = job.draft.enabled
                && job.draft.catch_up == CatchUpPolicy::RunOnce
                && !matches!(run.trigger, RunTrigger::Recovery | RunTrigger::Manual);
            let later_due = Schedule::parse(&job.draft.schedule, &job.draft.timezone)
                .ok()
                .and_then(|s| s.next_after(run.slot.max(job.cursor)))
                .is_some_and(|next| next <= now);
            if recoverable && !later_due {
                let new = NewRun {
                    job_id: job.draft.id.clone(),
                    slot: run.slot,
                    attempt: run.attempt + 1,
                    trigger: RunTrigger::Recovery,
                    catch_up: true,
                    missed: run.missed,
                    status: RunStatus::Running,
                    detail: None,
                };
                self.claim_and_start(&job, &new, None).await?;
            }
        }
        Ok(())
    }
}
