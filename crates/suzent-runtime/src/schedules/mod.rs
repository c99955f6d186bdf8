//! Scheduled jobs as users see them: add, edit, pause, run now, history, heartbeats, and the
//! scheduler that runs them (see [`crate::scheduler`]). Runs go through [`runner::TurnRunner`]:
//! a headless turn (auto mode, what would ask is denied at once) in the job's own chat.

mod dream;
mod heartbeat;
mod runner;

pub use dream::{DEFAULT_DREAM_MIN_MEMORIES, DREAM_JOB_ID, DreamPlan};
pub use heartbeat::{HEARTBEAT_FILE, HEARTBEAT_OK};

use crate::error::RuntimeError;
use crate::runtime::WeakRuntime;
use crate::scheduler::{self, Clock, Schedule, Scheduler, SchedulerOptions, SchedulerStatus};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};
use suzent_core::{CatchUpPolicy, Delivery, JobKind, OverlapPolicy, new_id};
use suzent_store::{JobDraft, JobRecord, RunRecord, Store};

/// Longest timeout of a run: one day.
pub const MAX_TIMEOUT_SECS: u32 = 86_400;
/// Default timeout of a run: 30 minutes.
pub const DEFAULT_TIMEOUT_SECS: u32 = 1_800;
/// Most retries a job may have.
pub const MAX_RETRIES: u32 = 5;
/// Runs shown by [`Schedules::history`] at most.
pub const MAX_HISTORY: u32 = 500;

/// A job to add or change (UI builder, `suzent schedule add`). Missing fields take defaults:
/// kind `prompt`, the system's time zone, notify, overlap `skip`, catch-up `run_once`, 30 min
/// timeout, no retries, enabled.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobInput {
    /// The job to change (`None`: a new job).
    pub id: Option<String>,
    /// Name shown in lists.
    pub name: String,
    /// Kind (default `prompt`).
    pub kind: Option<JobKind>,
    /// Cron pattern or `every N minutes`.
    pub schedule: String,
    /// IANA time zone (default: the system's).
    pub timezone: Option<String>,
    /// What the agent is asked.
    pub prompt: String,
    /// Workspace folder (default: the configured one).
    pub workspace: Option<String>,
    /// Model `provider/model` (default: the configured one).
    pub model: Option<String>,
    /// Notify or silent.
    pub delivery: Option<Delivery>,
    /// Overlap policy.
    pub overlap: Option<OverlapPolicy>,
    /// Catch-up policy.
    pub catch_up: Option<CatchUpPolicy>,
    /// Timeout in seconds, 1 to 86,400.
    pub timeout_secs: Option<u32>,
    /// Retries after a failure or a confirmed timeout, 0 to 5.
    pub max_retries: Option<u32>,
    /// Enabled (default true).
    pub enabled: Option<bool>,
}

/// A job with what the Schedules page shows beside it.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobView {
    /// The job.
    pub job: JobRecord,
    /// Its next occurrence (none when paused or when the pattern never matches).
    pub next_run: Option<DateTime<Utc>>,
    /// Its latest run.
    pub last_run: Option<RunRecord>,
}

/// The next times of a schedule in its zone (the builder's preview).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchedulePreview {
    /// The schedule as given.
    pub schedule: String,
    /// The zone.
    pub timezone: String,
    /// The next occurrences, RFC 3339 with the zone's offset (`2026-03-29T03:00:00+02:00`).
    pub next: Vec<String>,
}

/// The scheduled-jobs service. Owned by the runtime; cheap to clone.
#[derive(Clone)]
pub struct Schedules {
    store: Store,
    events: crate::event_bus::Events,
    runtime: Arc<OnceLock<WeakRuntime>>,
    scheduler: Arc<OnceLock<Scheduler>>,
}

impl std::fmt::Debug for Schedules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schedules").finish_non_exhaustive()
    }
}

fn invalid(field: &str, message: impl Into<String>) -> RuntimeError {
    RuntimeError::InvalidInput {
        field: field.into(),
        message: message.into(),
    }
}

/// The system's IANA time zone (`TZ`, then the OS setting), or `UTC` when it cannot be read.
pub fn system_timezone() -> String {
    let from_env = std::env::var("TZ")
        .ok()
        .map(|t| t.trim_start_matches(':').to_string())
        .filter(|t| t.parse::<chrono_tz::Tz>().is_ok());
    from_env
        .or_else(|| {
            iana_time_zone::get_timezone()
                .ok()
                .filter(|t| t.parse::<chrono_tz::Tz>().is_ok())
        })
        .unwrap_or_else(|| "UTC".to_string())
}

/// The next `n` occurrences of `schedule` in `timezone` after `after` (the builder's preview).
///
/// Errors: [`RuntimeError::InvalidInput`] naming the bad pattern or zone.
pub fn preview(
    schedule: &str,
    timezone: Option<&str>,
    after: DateTime<Utc>,
    n: usize,
) -> Result<SchedulePreview, RuntimeError> {
    let tz = timezone.map(str::to_string).unwrap_or_else(system_timezone);
    let parsed = Schedule::parse(schedule, &tz).map_err(|e| invalid("schedule", e.to_string()))?;
    let zone = parsed.timezone();
    Ok(SchedulePreview {
        schedule: schedule.to_string(),
        timezone: tz,
        next: parsed
            .upcoming(after, n.min(50))
            .into_iter()
            .map(|t| t.with_timezone(&zone).to_rfc3339())
            .collect(),
    })
}

impl Schedules {
    pub(crate) fn new(store: Store, events: crate::event_bus::Events) -> Schedules {
        Schedules {
            store,
            events,
            runtime: Arc::new(OnceLock::new()),
            scheduler: Arc::new(OnceLock::new()),
        }
    }

    /// Gives the service the runtime whose turns run the jobs (once, right after opening).
    pub(crate) fn bind(&self, runtime: WeakRuntime) {
        let _ = self.runtime.set(runtime);
    }

    /// The scheduler's time (before it starts: the clock it would use).
    fn clock_now(&self) -> DateTime<Utc> {
        match self.scheduler.get() {
            Some(s) => s.clock().now(),
            None => scheduler::from_env().now(),
        }
    }

    /// Starts the scheduler of this process (desktop app, `suzent serve`) with `clock` (`None`:
    /// the system clock, or the test clock file of [`scheduler::TEST_CLOCK_ENV`]). Returns
    /// whether this process schedules; when another process already does, this one stands by,
    /// says so in the status, and takes over if that process stops. Starting twice returns the
    /// status.
    pub async fn start(&self, clock: Option<Arc<dyn Clock>>) -> SchedulerStatus {
        let scheduler = self.scheduler.get_or_init(|| {
            let clock = clock.unwrap_or_else(scheduler::from_env);
            let runner = runner::TurnRunner::new(
                Arc::clone(&self.runtime),
                self.store.clone(),
                self.events.clone(),
                Arc::clone(&clock),
            );
            Scheduler::new(
                self.store.clone(),
                clock,
                Arc::new(runner),
                SchedulerOptions::default(),
            )
        });
        scheduler.start().await
    }

    /// Stops the scheduler of this process (running runs are interrupted and recorded so, the
    /// lease is released).
    pub async fn stop(&self) {
        if let Some(s) = self.scheduler.get() {
            s.shutdown().await;
        }
    }

    /// The scheduler of this process, once started.
    pub fn scheduler(&self) -> Option<&Scheduler> {
        self.scheduler.get()
    }

    /// Whether this process schedules, and who does when another process holds the lease.
    pub async fn status(&self) -> Result<SchedulerStatus, RuntimeError> {
        if let Some(s) = self.scheduler.get() {
            return Ok(s.status());
        }
        let holder = self
            .store
            .scheduler_lease()
            .await?
            .filter(|h| h.expires_at > Utc::now());
        Ok(SchedulerStatus {
            started: false,
            scheduling: false,
            holder,
        })
    }

    fn wake(&self) {
        if let Some(s) = self.scheduler.get() {
            s.wake();
        }
    }

    /// Checks `input` and registers it as a new job, or as a change of job `input.id`.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] naming the bad field (schedule, time zone,
    /// workspace, model, timeout, retries...), [`RuntimeError::Store`].
    pub async fn save(&self, input: JobInput) -> Result<JobRecord, RuntimeError> {
        let existing = match &input.id {
            Some(id) => Some(self.get_record(id).await?),
            None => None,
        };
        let draft = self.draft(input, existing.as_ref())?;
        let (job, _) = self.store.upsert_job(&draft, self.clock_now()).await?;
        self.wake();
        Ok(job)
    }

    fn draft(
        &self,
        input: JobInput,
        existing: Option<&JobRecord>,
    ) -> Result<JobDraft, RuntimeError> {
        let name = input.name.trim().to_string();
        if name.is_empty() {
            return Err(invalid("name", "a job needs a name"));
        }
        let kind = input
            .kind
            .or(existing.map(|e| e.draft.kind))
            .unwrap_or(JobKind::Prompt);
        let timezone = input
            .timezone
            .filter(|t| !t.trim().is_empty())
            .or(existing.map(|e| e.draft.timezone.clone()))
            .unwrap_or_else(system_timezone);
        Schedule::parse(&input.schedule, &timezone).map_err(|e| match e {
            scheduler::ScheduleError::TimeZone(_) => invalid("timezone", e.to_string()),
            _ => invalid("schedule", e.to_string()),
        })?;
        let prompt = input.prompt.trim().to_string();
        if prompt.is_empty() && kind == JobKind::Prompt {
            return Err(invalid(
                "prompt",
                "a job needs a prompt: what should the agent do?",
            ));
        }
        if let Some(ws) = &input.workspace
            && !std::path::Path::new(ws).is_dir()
        {
            return Err(invalid(
                "workspace",
                format!("'{ws}' is not an existing folder"),
            ));
        }
        if let Some(model) = &input.model {
            crate::provider::parse_model(model).map_err(|e| invalid("model", e.to_string()))?;
        }
        let timeout_secs = input
            .timeout_secs
            .or(existing.map(|e| e.draft.timeout_secs))
            .unwrap_or(DEFAULT_TIMEOUT_SECS);
        if !(1..=MAX_TIMEOUT_SECS).contains(&timeout_secs) {
            return Err(invalid(
                "timeout_secs",
                format!("{timeout_secs} s is out of range; give 1 to {MAX_TIMEOUT_SECS} seconds"),
            ));
        }
        let max_retries = input
            .max_retries
            .or(existing.map(|e| e.draft.max_retries))
            .unwrap_or(0);
        if max_retries > MAX_RETRIES {
            return Err(invalid(
                "max_retries",
                format!("{max_retries} retries is too many; give 0 to {MAX_RETRIES}"),
            ));
        }
        Ok(JobDraft {
            id: input.id.unwrap_or_else(|| format!("job-{}", new_id())),
            name,
            kind,
            schedule: input.schedule.trim().to_string(),
            timezone,
            prompt,
            workspace: input
                .workspace
                .or_else(|| existing.and_then(|e| e.draft.workspace.clone())),
            model: input
                .model
                .or_else(|| existing.and_then(|e| e.draft.model.clone())),
            chat_id: existing.and_then(|e| e.draft.chat_id.clone()),
            delivery: input
                .delivery
                .or(existing.map(|e| e.draft.delivery))
                .unwrap_or(Delivery::Notify),
            overlap: input
                .overlap
                .or(existing.map(|e| e.draft.overlap))
                .unwrap_or(OverlapPolicy::Skip),
            catch_up: input
                .catch_up
                .or(existing.map(|e| e.draft.catch_up))
                .unwrap_or(CatchUpPolicy::RunOnce),
            timeout_secs,
            max_retries,
            enabled: input
                .enabled
                .or(existing.map(|e| e.draft.enabled))
                .unwrap_or(true),
        })
    }

    /// Registers jobs from an export (stable ids: importing the same file again updates them in
    /// place, and keeps each job's chat). Every job is checked before any is written.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] naming the job and field, [`RuntimeError::Store`].
    pub async fn import(&self, jobs: Vec<JobDraft>) -> Result<Vec<JobRecord>, RuntimeError> {
        for job in &jobs {
            if job.id.trim().is_empty() {
                return Err(invalid("id", format!("job '{}' has no id", job.name)));
            }
            Schedule::parse(&job.schedule, &job.timezone)
                .map_err(|e| invalid("schedule", format!("job '{}': {e}", job.id)))?;
        }
        let now = self.clock_now();
        let mut out = Vec::new();
        for job in jobs {
            let existing = self.store.get_job(&job.id).await?;
            let chat = match (&job.chat_id, &existing) {
                // A chat id from another installation means nothing here; keep ours.
                (Some(c), _) if self.store.get_chat(c).await?.is_some() => Some(c.clone()),
                _ => None,
            };
            let draft = JobDraft {
                chat_id: chat,
                ..job
            };
            out.push(self.store.upsert_job(&draft, now).await?.0);
        }
        self.wake();
        Ok(out)
    }

    async fn get_record(&self, id: &str) -> Result<JobRecord, RuntimeError> {
        self.store
            .get_job(id)
            .await?
            .ok_or_else(|| invalid("id", format!("no job '{id}'")))
    }

    /// Every job with its next run and last run, by name.
    ///
    /// Errors: [`RuntimeError::Store`].
    pub async fn list(&self) -> Result<Vec<JobView>, RuntimeError> {
        let now = self.clock_now();
        let mut out = Vec::new();
        for job in self.store.list_jobs().await? {
            out.push(self.view(job, now).await?);
        }
        Ok(out)
    }

    async fn view(&self, job: JobRecord, now: DateTime<Utc>) -> Result<JobView, RuntimeError> {
        let next_run = if job.draft.enabled {
            Schedule::parse(&job.draft.schedule, &job.draft.timezone)
                .ok()
                .and_then(|s| s.next_after(job.cursor.max(now)))
        } else {
            None
        };
        let last_run = self
            .store
            .list_runs(Some(&job.draft.id), 1)
            .await?
            .into_iter()
            .next();
        Ok(JobView {
            job,
            next_run,
            last_run,
        })
    }

    /// One job with its next and last run.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for an unknown id, [`RuntimeError::Store`].
    pub async fn get(&self, id: &str) -> Result<JobView, RuntimeError> {
        let job = self.get_record(id).await?;
        self.view(job, self.clock_now()).await
    }

    /// Deletes a job and its history (its chat stays).
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for an unknown id, [`RuntimeError::Store`].
    pub async fn remove(&self, id: &str) -> Result<(), RuntimeError> {
        if !self.store.delete_job(id).await? {
            return Err(invalid("id", format!("no job '{id}'")));
        }
        self.wake();
        Ok(())
    }

    /// Pauses (`true`) or resumes a job. A resumed job does not catch up the paused time.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for an unknown id, [`RuntimeError::Store`].
    pub async fn pause(&self, id: &str, paused: bool) -> Result<JobRecord, RuntimeError> {
        self.get_record(id).await?;
        let job = self
            .store
            .set_job_enabled(id, !paused, self.clock_now())
            .await?;
        self.wake();
        Ok(job)
    }

    /// Pauses every enabled job (the tray's "Pause all schedules"). Returns how many it paused.
    ///
    /// Errors: [`RuntimeError::Store`].
    pub async fn pause_all(&self) -> Result<usize, RuntimeError> {
        let now = self.clock_now();
        let mut paused = 0;
        for job in self.store.list_jobs().await? {
            if job.draft.enabled {
                self.store
                    .set_job_enabled(&job.draft.id, false, now)
                    .await?;
                paused += 1;
            }
        }
        self.wake();
        Ok(paused)
    }

    /// How many of the user's jobs are enabled (whether closing the window should keep the app
    /// running). The memory consolidation job ("dream") every install has is not counted.
    ///
    /// Errors: [`RuntimeError::Store`].
    pub async fn enabled_count(&self) -> Result<usize, RuntimeError> {
        Ok(self
            .store
            .list_jobs()
            .await?
            .iter()
            .filter(|j| j.draft.enabled && j.draft.id != DREAM_JOB_ID)
            .count())
    }

    /// Asks for a run now. The process that schedules starts it (this one when it does); while
    /// the job runs, its overlap policy applies (a `skip` job records the request as skipped).
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for an unknown id, [`RuntimeError::Store`].
    pub async fn run_now(&self, id: &str) -> Result<RunRecord, RuntimeError> {
        self.get_record(id).await?;
        let run = match self.scheduler.get() {
            Some(s) => s.run_now(id).await?,
            None => self.store.request_run(id, self.clock_now()).await?,
        };
        Ok(run)
    }

    /// One run.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for an unknown id, [`RuntimeError::Store`].
    pub async fn run(&self, run_id: &str) -> Result<RunRecord, RuntimeError> {
        self.store
            .get_run(run_id)
            .await?
            .ok_or_else(|| invalid("run", format!("no run '{run_id}'")))
    }

    /// A job's runs (or every job's), newest first, at most `limit` (up to 500).
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for an unknown job, [`RuntimeError::Store`].
    pub async fn history(
        &self,
        job_id: Option<&str>,
        limit: u32,
    ) -> Result<Vec<RunRecord>, RuntimeError> {
        if let Some(id) = job_id {
            self.get_record(id).await?;
        }
        Ok(self
            .store
            .list_runs(job_id, limit.clamp(1, MAX_HISTORY))
            .await?)
    }

    /// Every job as stored, for `suzent schedule export` (re-importing it changes nothing).
    ///
    /// Errors: [`RuntimeError::Store`].
    pub async fn export(&self) -> Result<Vec<JobDraft>, RuntimeError> {
        Ok(self
            .store
            .list_jobs()
            .await?
            .into_iter()
            .map(|j| j.draft)
            .collect())
    }

    /// The heartbeat of a chat, if it has one.
    ///
    /// Errors: [`RuntimeError::Store`].
    pub async fn heartbeat(&self, chat_id: &str) -> Result<Option<JobRecord>, RuntimeError> {
        Ok(self.store.heartbeat_job(chat_id).await?)
    }

    /// Turns a chat's heartbeat on (every `every_minutes` minutes, 1 to 1,440) or off (`None`).
    /// Each beat reads `HEARTBEAT.md` in the chat's workspace and acts on it, headless.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for an unknown chat or interval,
    /// [`RuntimeError::Store`].
    pub async fn set_heartbeat(
        &self,
        chat_id: &str,
        every_minutes: Option<u32>,
    ) -> Result<Option<JobRecord>, RuntimeError> {
        let chat = self
            .store
            .get_chat(chat_id)
            .await?
            .ok_or_else(|| invalid("chat_id", format!("no chat '{chat_id}'")))?;
        let existing = self.store.heartbeat_job(chat_id).await?;
        let Some(minutes) = every_minutes else {
            if let Some(job) = existing {
                self.store.delete_job(&job.draft.id).await?;
                self.wake();
            }
            return Ok(None);
        };
        if !(1..=1440).contains(&minutes) {
            return Err(invalid(
                "every_minutes",
                format!("{minutes} minutes is out of range; give 1 to 1440"),
            ));
        }
        let draft = JobDraft {
            id: existing
                .as_ref()
                .map(|j| j.draft.id.clone())
                .unwrap_or_else(|| format!("heartbeat-{chat_id}")),
            name: format!("Heartbeat: {}", chat.title),
            kind: JobKind::Heartbeat,
            schedule: format!("every {minutes} minutes"),
            timezone: "UTC".to_string(),
            prompt: String::new(),
            workspace: None,
            model: None,
            chat_id: Some(chat_id.to_string()),
            delivery: Delivery::Silent,
            overlap: OverlapPolicy::Skip,
            catch_up: CatchUpPolicy::RunOnce,
            timeout_secs: DEFAULT_TIMEOUT_SECS.min(minutes * 60),
            max_retries: 0,
            enabled: true,
        };
        let (job, _) = self.store.upsert_job(&draft, self.clock_now()).await?;
        self.wake();
        Ok(Some(job))
    }

    /// The turn ids of a chat's runs that found nothing to do (heartbeats); the UI folds their
    /// messages.
    ///
    /// Errors: [`RuntimeError::Store`].
    pub async fn quiet_turns(&self, chat_id: &str) -> Result<Vec<String>, RuntimeError> {
        Ok(self.store.quiet_turns(chat_id).await?)
    }

    /// Registers the memory consolidation job ("dream") unless it exists: daily at 03:00 in the
    /// system's zone; it runs only when at least [`DEFAULT_DREAM_MIN_MEMORIES`] memories were
    /// added since the last dream.
    ///
    /// Errors: [`RuntimeError::Store`].
    pub async fn ensure_dream(&self) -> Result<JobRecord, RuntimeError> {
        if let Some(job) = self.store.get_job(DREAM_JOB_ID).await? {
            return Ok(job);
        }
        let draft = dream::default_job(system_timezone());
        let (job, _) = self.store.upsert_job(&draft, self.clock_now()).await?;
        self.wake();
        Ok(job)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use suzent_core::{Config, RunStatus, RunTrigger};

    /// The schedules service over the fixture's store, with no scheduler started and no
    /// runtime bound (nothing runs; requests are recorded).
    async fn schedules() -> (TestServices, Schedules) {
        let s = TestServices::open(Config::default()).await;
        let schedules = Schedules::new(s.store.clone(), s.events.clone());
        (s, schedules)
    }

    fn standup() -> JobInput {
        JobInput {
            name: "Standup notes".into(),
            schedule: "0 9 * * 1-5".into(),
            timezone: Some("Europe/Paris".into()),
            prompt: "Summarize yesterday's commits".into(),
            ..JobInput::default()
        }
    }

    #[tokio::test]
    async fn a_saved_job_is_listed_with_its_next_run_until_it_is_paused() -> anyhow::Result<()> {
        let (_s, schedules) = schedules().await;
        let job = schedules.save(standup()).await?;
        let listed = schedules.list().await?;
        assert_eq!(
            listed
                .iter()
                .map(|v| (
                    v.job.draft.id.clone(),
                    v.job.draft.name.clone(),
                    v.next_run.is_some()
                ))
                .collect::<Vec<_>>(),
            vec![(job.draft.id.clone(), "Standup notes".to_string(), true)]
        );
        let paused = schedules.pause(&job.draft.id, true).await?;
        assert!(!paused.draft.enabled);
        assert_eq!(schedules.get(&job.draft.id).await?.next_run, None);
        schedules.remove(&job.draft.id).await?;
        assert_eq!(schedules.list().await?, Vec::new());
        Ok(())
    }

    #[tokio::test]
    async fn pause_all_pauses_every_enabled_job_and_counts_them() -> anyhow::Result<()> {
        let (_s, schedules) = schedules().await;
        let a = schedules.save(standup()).await?;
        let b = schedules
            .save(JobInput {
                name: "Weekly report".into(),
                ..standup()
            })
            .await?;
        schedules.pause(&b.draft.id, true).await?;
        schedules.ensure_dream().await?;
        assert_eq!(
            schedules.enabled_count().await?,
            1,
            "the dream job is not counted"
        );
        assert_eq!(
            schedules.pause_all().await?,
            2,
            "the dream job is paused too"
        );
        assert_eq!(
            (
                schedules.get(&a.draft.id).await?.job.draft.enabled,
                schedules.enabled_count().await?,
                schedules.pause_all().await?
            ),
            (false, 0, 0)
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_bad_schedule_time_zone_or_empty_prompt_is_refused_naming_the_field()
    -> anyhow::Result<()> {
        let (_s, schedules) = schedules().await;
        let field = |e: RuntimeError| match e {
            RuntimeError::InvalidInput { field, .. } => field,
            other => panic!("{other}"),
        };
        let bad_schedule = schedules
            .save(JobInput {
                schedule: "every tuesday-ish".into(),
                ..standup()
            })
            .await
            .unwrap_err();
        let bad_zone = schedules
            .save(JobInput {
                timezone: Some("Mars/Olympus".into()),
                ..standup()
            })
            .await
            .unwrap_err();
        let no_prompt = schedules
            .save(JobInput {
                prompt: "  ".into(),
                ..standup()
            })
            .await
            .unwrap_err();
        assert_eq!(
            (field(bad_schedule), field(bad_zone), field(no_prompt)),
            (
                "schedule".to_string(),
                "timezone".to_string(),
                "prompt".to_string()
            )
        );
        assert_eq!(schedules.list().await?, Vec::new());
        Ok(())
    }

    #[tokio::test]
    async fn run_now_without_a_scheduler_here_records_a_request_for_the_one_that_schedules()
    -> anyhow::Result<()> {
        let (_s, schedules) = schedules().await;
        let job = schedules.save(standup()).await?;
        let run = schedules.run_now(&job.draft.id).await?;
        assert_eq!(
            (run.job_id.as_str(), run.trigger, run.status),
            (
                job.draft.id.as_str(),
                RunTrigger::Manual,
                RunStatus::Requested
            )
        );
        assert_eq!(schedules.run(&run.id).await?, run);
        let err = schedules.run_now("no-such-job").await.unwrap_err();
        assert!(
            matches!(&err, RuntimeError::InvalidInput { field, message }
                if field == "id" && message == "no job 'no-such-job'"),
            "{err}"
        );
        Ok(())
    }
}
