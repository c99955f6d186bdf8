//! Scheduled jobs, their runs, the scheduler lease and chat goals.
//!
//! - Jobs have stable ids: [`Store::upsert_job`] inserts or updates in place, so registering the
//!   same jobs again (an upgrade, an import) never makes copies, and a job's chat binding is kept
//!   when the new definition has none.
//! - An occurrence is claimed before it runs: [`Store::claim_run`] writes the `schedule_runs`
//!   row (unique per job, slot and attempt) in the same `BEGIN IMMEDIATE` transaction that checks
//!   the caller still holds the scheduler lease and applies the job's overlap policy, then moves
//!   the job's cursor past the slot. A restart finds the row and never runs the slot again.
//! - One scheduler per data directory: [`Store::acquire_scheduler_lease`] takes or renews the
//!   single lease row in a `BEGIN IMMEDIATE` transaction; it is taken only when free or expired.
//!
//! Times that drive scheduling (`now`, slots, lease expiry) are passed in by the caller, whose
//! clock may be a test's.

use crate::error::{DbContext, is_unique_violation};
use crate::{Store, StoreError, decode_json, encode_json, parse_name, parse_ts, ts};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use std::time::Duration;
use suzent_core::{
    CatchUpPolicy, Delivery, DeniedCall, GoalStatus, JobKind, OverlapPolicy, RunStatus, RunTrigger,
    new_id,
};

/// A job as registered: everything but its bookkeeping.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobDraft {
    /// Stable id (re-registering the same id updates the job).
    pub id: String,
    /// Shown in lists.
    pub name: String,
    /// What it does.
    pub kind: JobKind,
    /// A 5-field cron pattern (seconds optional as a sixth, leading field) or `every N minutes`.
    pub schedule: String,
    /// IANA time zone the cron pattern is read in (`Europe/Berlin`).
    pub timezone: String,
    /// What the agent is asked each run (heartbeats and dreams have a built-in prompt; this is
    /// added to it).
    pub prompt: String,
    /// Workspace folder (`None`: the configured default).
    pub workspace: Option<String>,
    /// Model `provider/model` (`None`: the configured default).
    pub model: Option<String>,
    /// The job's own chat (`None`: created at the first run; kept on update when `None`).
    pub chat_id: Option<String>,
    /// Notify when a run finishes, or not.
    pub delivery: Delivery,
    /// What an occurrence does while the previous run still runs.
    pub overlap: OverlapPolicy,
    /// What happens to missed occurrences and interrupted runs.
    pub catch_up: CatchUpPolicy,
    /// Longest a run may take, in seconds, the whole turn included.
    pub timeout_secs: u32,
    /// Runs again after a failure or a timeout whose processes were confirmed gone, this many
    /// times at most.
    pub max_retries: u32,
    /// Paused when false.
    pub enabled: bool,
}

/// A stored job.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobRecord {
    /// The definition.
    #[serde(flatten)]
    pub draft: JobDraft,
    /// Occurrences up to this time are handled; later ones are due.
    pub cursor: DateTime<Utc>,
    /// Registered at.
    pub created_at: DateTime<Utc>,
    /// Last changed at.
    pub updated_at: DateTime<Utc>,
}

/// A run to claim.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    /// The job.
    pub job_id: String,
    /// The occurrence.
    pub slot: DateTime<Utc>,
    /// 1 for the first attempt.
    pub attempt: u32,
    /// Why.
    pub trigger: RunTrigger,
    /// Whether it stands for missed occurrences.
    pub catch_up: bool,
    /// Occurrences it stands for beyond `slot` (catch-up).
    pub missed: u32,
    /// `Running` for a run to start now (the overlap policy may turn it into `Queued` or
    /// `Skipped`), `Missed` or `Skipped` for a record only, `Requested` for Run now.
    pub status: RunStatus,
    /// Why it was skipped or missed.
    pub detail: Option<String>,
}

/// One stored run.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// Run id.
    pub id: String,
    /// The job.
    pub job_id: String,
    /// The occurrence it is for.
    pub slot: DateTime<Utc>,
    /// 1, then recoveries and retries.
    pub attempt: u32,
    /// Why it exists.
    pub trigger: RunTrigger,
    /// Whether it stands for missed occurrences (`slot` is the latest of them).
    pub catch_up: bool,
    /// Occurrences it stands for beyond `slot`.
    pub missed: u32,
    /// Where it is or how it ended.
    pub status: RunStatus,
    /// The scheduler instance that claimed it.
    pub owner: Option<String>,
    /// That instance's process id.
    pub pid: Option<i64>,
    /// The chat it ran in.
    pub chat_id: Option<String>,
    /// The turn's run id (transcript messages carry it).
    pub turn_run_id: Option<String>,
    /// Written at (before the run started).
    pub claimed_at: DateTime<Utc>,
    /// Started at.
    pub started_at: Option<DateTime<Utc>>,
    /// Ended at.
    pub ended_at: Option<DateTime<Utc>>,
    /// Model steps of the turn.
    pub steps: u32,
    /// Calls refused because nobody can answer a prompt.
    pub denied: Vec<DeniedCall>,
    /// The error, the reason it was skipped, or the start of the answer.
    pub detail: Option<String>,
    /// A heartbeat that found nothing to do (its reply is folded in the UI, never deleted).
    pub quiet: bool,
    /// A dream's record of what it changed.
    pub changes: Option<serde_json::Value>,
}

/// How a run ended, for [`Store::finish_run`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunEnd {
    /// A final status.
    pub status: Option<RunStatus>,
    /// Model steps.
    pub steps: u32,
    /// Refused calls.
    pub denied: Vec<DeniedCall>,
    /// Error or the answer's start.
    pub detail: Option<String>,
    /// Nothing to do (heartbeats).
    pub quiet: bool,
    /// What a dream changed.
    pub changes: Option<serde_json::Value>,
}

/// Who holds the scheduler lease.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseHolder {
    /// Scheduler instance id.
    pub owner: String,
    /// Its process id.
    pub pid: i64,
    /// Its host name.
    pub host: String,
    /// Held since.
    pub acquired_at: DateTime<Utc>,
    /// Free after this time unless renewed.
    pub expires_at: DateTime<Utc>,
}

/// The result of [`Store::acquire_scheduler_lease`].
#[derive(Debug, Clone, PartialEq)]
pub enum LeaseOutcome {
    /// The caller holds it (newly, or renewed) until the time given.
    Acquired(DateTime<Utc>),
    /// Another instance holds it.
    Held(LeaseHolder),
}

/// The result of [`Store::claim_run`].
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// The row is written (its status says whether it runs, waits or was skipped).
    Claimed(RunRecord),
    /// The slot and attempt were claimed before (e.g. before a restart): nothing written.
    Duplicate,
    /// The caller no longer holds the scheduler lease: nothing written.
    LeaseLost,
}

/// A chat's goal.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalRecord {
    /// The chat.
    pub chat_id: String,
    /// What the agent works toward.
    pub objective: String,
    /// Active, paused, met or budget spent.
    pub status: GoalStatus,
    /// Why it stopped (the judge's words, the budget, the user).
    pub reason: Option<String>,
    /// Turns taken so far.
    pub turns_used: u32,
    /// Turn budget.
    pub max_turns: u32,
    /// Tokens used so far (estimated from the text sent and received).
    pub tokens_used: u64,
    /// Token budget.
    pub max_tokens: u64,
    /// Set at.
    pub created_at: DateTime<Utc>,
    /// Last changed at.
    pub updated_at: DateTime<Utc>,
}

const JOB_COLUMNS: &str = "id, name, kind, schedule, timezone, prompt, workspace, model, chat_id, \
    delivery, overlap, catch_up, timeout_secs, max_retries, enabled, cursor, created_at, updated_at";

const RUN_COLUMNS: &str = "id, job_id, slot, attempt, trigger, catch_up, missed, status, owner, \
    pid, chat_id, turn_run_id, claimed_at, started_at, ended_at, steps, denied, detail, quiet, \
    changes";

fn job_from_row(row: &SqliteRow) -> Result<JobRecord, StoreError> {
    let id: String = row.get("id");
    let what = |col: &str| format!("schedule_jobs row '{id}' ({col})");
    Ok(JobRecord {
        draft: JobDraft {
            name: row.get("name"),
            kind: parse_name(row.get("kind"), || what("kind"))?,
            schedule: row.get("schedule"),
            timezone: row.get("timezone"),
            prompt: row.get("prompt"),
            workspace: row.get("workspace"),
            model: row.get("model"),
            chat_id: row.get("chat_id"),
            delivery: parse_name(row.get("delivery"), || what("delivery"))?,
            overlap: parse_name(row.get("overlap"), || what("overlap"))?,
            catch_up: parse_name(row.get("catch_up"), || what("catch_up"))?,
            timeout_secs: u32::try_from(row.get::<i64, _>("timeout_secs")).unwrap_or(u32::MAX),
            max_retries: u32::try_from(row.get::<i64, _>("max_retries")).unwrap_or(0),
            enabled: row.get::<i64, _>("enabled") != 0,
            id: id.clone(),
        },
        cursor: parse_ts(row.get("cursor"), || what("cursor"))?,
        created_at: parse_ts(row.get("created_at"), || what("created_at"))?,
        updated_at: parse_ts(row.get("updated_at"), || what("updated_at"))?,
    })
}

fn run_from_row(row: &SqliteRow) -> Result<RunRecord, StoreError> {
    let id: String = row.get("id");
    let what = |col: &str| format!("schedule_runs row '{id}' ({col})");
    let opt_ts = |col: &str| -> Result<Option<DateTime<Utc>>, StoreError> {
        row.get::<Option<String>, _>(col)
            .map(|t| parse_ts(&t, || what(col)))
            .transpose()
    };
    Ok(RunRecord {
        job_id: row.get("job_id"),
        slot: parse_ts(row.get("slot"), || what("slot"))?,
        attempt: u32::try_from(row.get::<i64, _>("attempt")).unwrap_or(1),
        trigger: parse_name(row.get("trigger"), || what("trigger"))?,
        catch_up: row.get::<i64, _>("catch_up") != 0,
        missed: u32::try_from(row.get::<i64, _>("missed")).unwrap_or(0),
        status: parse_name(row.get("status"), || what("status"))?,
        owner: row.get("owner"),
        pid: row.get("pid"),
        chat_id: row.get("chat_id"),
        turn_run_id: row.get("turn_run_id"),
        claimed_at: parse_ts(row.get("claimed_at"), || what("claimed_at"))?,
        started_at: opt_ts("started_at")?,
        ended_at: opt_ts("ended_at")?,
        steps: u32::try_from(row.get::<i64, _>("steps")).unwrap_or(0),
        denied: decode_json(row.get("denied"), || what("denied"))?,
        detail: row.get("detail"),
        quiet: row.get::<i64, _>("quiet") != 0,
        changes: row
            .get::<Option<String>, _>("changes")
            .map(|c| decode_json(&c, || what("changes")))
            .transpose()?,
        id,
    })
}

fn goal_from_row(row: &SqliteRow) -> Result<GoalRecord, StoreError> {
    let chat_id: String = row.get("chat_id");
    let what = |col: &str| format!("chat_goals row '{chat_id}' ({col})");
    Ok(GoalRecord {
        objective: row.get("objective"),
        status: parse_name(row.get("status"), || what("status"))?,
        reason: row.get("reason"),
        turns_used: u32::try_from(row.get::<i64, _>("turns_used")).unwrap_or(u32::MAX),
        max_turns: u32::try_from(row.get::<i64, _>("max_turns")).unwrap_or(u32::MAX),
        tokens_used: u64::try_from(row.get::<i64, _>("tokens_used")).unwrap_or(0),
        max_tokens: u64::try_from(row.get::<i64, _>("max_tokens")).unwrap_or(u64::MAX),
        created_at: parse_ts(row.get("created_at"), || what("created_at"))?,
        updated_at: parse_ts(row.get("updated_at"), || what("updated_at"))?,
        chat_id,
    })
}

fn lease_from_row(row: &SqliteRow) -> Result<LeaseHolder, StoreError> {
    let what = |col: &str| format!("scheduler_lease ({col})");
    Ok(LeaseHolder {
        owner: row.get("owner"),
        pid: row.get("pid"),
        host: row.get("host"),
        acquired_at: parse_ts(row.get("acquired_at"), || what("acquired_at"))?,
        expires_at: parse_ts(row.get("expires_at"), || what("expires_at"))?,
    })
}

type Tx = crate::connections::WriteTx;

async fn bump_version(tx: &mut Tx) -> Result<(), StoreError> {
    sqlx::query("UPDATE schedule_version SET version = version + 1 WHERE id = 1")
        .execute(&mut **tx)
        .await
        .db(|| "bumping the schedule version".to_string())?;
    Ok(())
}

/// Whether `owner` holds an unexpired lease at `now` (inside a write transaction).
async fn holds_lease(tx: &mut Tx, owner: &str, now: &DateTime<Utc>) -> Result<bool, StoreError> {
    let held: Option<String> =
        sqlx::query_scalar("SELECT owner FROM scheduler_lease WHERE id = 1 AND expires_at > ?")
            .bind(ts(now))
            .fetch_optional(&mut **tx)
            .await
            .db(|| "reading the scheduler lease".to_string())?;
    Ok(held.as_deref() == Some(owner))
}

impl Store {
    // ---- jobs ----

    /// Registers `draft`, or updates the job with its id in place (an upgrade or an import that
    /// registers the same jobs again changes nothing else). A job's chat binding is kept when
    /// `draft.chat_id` is `None`. A new job, a changed schedule or time zone, and a paused job
    /// that is enabled again all start counting occurrences at `now`: past slots never fire.
    /// Returns the stored job and whether it was new.
    ///
    /// Errors: [`StoreError::Conflict`] if `draft.chat_id` names no chat or a chat that already
    /// has a heartbeat, [`StoreError::Database`].
    pub async fn upsert_job(
        &self,
        draft: &JobDraft,
        now: DateTime<Utc>,
    ) -> Result<(JobRecord, bool), StoreError> {
        let id = &draft.id;
        let mut tx = self
            .begin_write(|| format!("registering job '{id}'"))
            .await?;
        let existing = sqlx::query(&format!(
            "SELECT {JOB_COLUMNS} FROM schedule_jobs WHERE id = ?"
        ))
        .bind(id)
        .fetch_optional(&mut *tx)
        .await
        .db(|| format!("reading job '{id}'"))?
        .as_ref()
        .map(job_from_row)
        .transpose()?;
        let now_text = ts(&now);
        let created = existing.is_none();
        let (cursor, created_at, chat_id) = match &existing {
            None => (now, now, draft.chat_id.clone()),
            Some(old) => {
                let restart = old.draft.schedule != draft.schedule
                    || old.draft.timezone != draft.timezone
                    || (!old.draft.enabled && draft.enabled);
                let cursor = if restart && now > old.cursor {
                    now
                } else {
                    old.cursor
                };
                let chat = draft.chat_id.clone().or_else(|| old.draft.chat_id.clone());
                (cursor, old.created_at, chat)
            }
        };
        let result = sqlx::query(
            "INSERT INTO schedule_jobs (id, name, kind, schedule, timezone, prompt, workspace, model,
                 chat_id, delivery, overlap, catch_up, timeout_secs, max_retries, enabled, cursor,
                 created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, kind = excluded.kind,
                 schedule = excluded.schedule, timezone = excluded.timezone,
                 prompt = excluded.prompt, workspace = excluded.workspace, model = excluded.model,
                 chat_id = excluded.chat_id, delivery = excluded.delivery,
                 overlap = excluded.overlap, catch_up = excluded.catch_up,
                 timeout_secs = excluded.timeout_secs, max_retries = excluded.max_retries,
                 enabled = excluded.enabled, cursor = excluded.cursor,
                 updated_at = excluded.updated_at",
        )
        .bind(id)
        .bind(&draft.name)
        .bind(draft.kind.as_str())
        .bind(&draft.schedule)
        .bind(&draft.timezone)
        .bind(&draft.prompt)
        .bind(&draft.workspace)
        .bind(&draft.model)
        .bind(&chat_id)
        .bind(draft.delivery.as_str())
        .bind(draft.overlap.as_str())
        .bind(draft.catch_up.as_str())
        .bind(i64::from(draft.timeout_secs))
        .bind(i64::from(draft.max_retries))
        .bind(i64::from(draft.enabled))
        .bind(ts(&cursor))
        .bind(ts(&created_at))
        .bind(&now_text)
        .execute(&mut *tx)
        .await;
        match result {
            Ok(_) => {}
            Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => {
                return Err(StoreError::Conflict {
                    message: format!(
                        "job '{id}' names chat '{}', which does not exist",
                        chat_id.unwrap_or_default()
                    ),
                });
            }
            Err(e) if is_unique_violation(&e) => {
                return Err(StoreError::Conflict {
                    message: format!(
                        "chat '{}' already has a heartbeat job",
                        chat_id.unwrap_or_default()
                    ),
                });
            }
            Err(e) => return Err(e).db(|| format!("registering job '{id}'")),
        }
        bump_version(&mut tx).await?;
        let row = sqlx::query(&format!(
            "SELECT {JOB_COLUMNS} FROM schedule_jobs WHERE id = ?"
        ))
        .bind(id)
        .fetch_one(&mut *tx)
        .await
        .db(|| format!("reading job '{id}'"))?;
        let job = job_from_row(&row)?;
        tx.commit().await.db(|| format!("committing job '{id}'"))?;
        Ok((job, created))
    }

    /// One job, or `None`.
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn get_job(&self, id: &str) -> Result<Option<JobRecord>, StoreError> {
        sqlx::query(&format!(
            "SELECT {JOB_COLUMNS} FROM schedule_jobs WHERE id = ?"
        ))
        .bind(id)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading job '{id}'"))?
        .as_ref()
        .map(job_from_row)
        .transpose()
    }

    /// Every job, by name then id.
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn list_jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        sqlx::query(&format!(
            "SELECT {JOB_COLUMNS} FROM schedule_jobs ORDER BY name, id"
        ))
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing jobs".to_string())?
        .iter()
        .map(job_from_row)
        .collect()
    }

    /// The heartbeat job of a chat, if it has one.
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn heartbeat_job(&self, chat_id: &str) -> Result<Option<JobRecord>, StoreError> {
        sqlx::query(&format!(
            "SELECT {JOB_COLUMNS} FROM schedule_jobs WHERE kind = 'heartbeat' AND chat_id = ?"
        ))
        .bind(chat_id)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading the heartbeat of chat '{chat_id}'"))?
        .as_ref()
        .map(job_from_row)
        .transpose()
    }

    /// Deletes a job and its run history. Returns whether it existed.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn delete_job(&self, id: &str) -> Result<bool, StoreError> {
        let mut tx = self.begin_write(|| format!("deleting job '{id}'")).await?;
        let done = sqlx::query("DELETE FROM schedule_jobs WHERE id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await
            .db(|| format!("deleting job '{id}'"))?
            .rows_affected()
            > 0;
        bump_version(&mut tx).await?;
        tx.commit()
            .await
            .db(|| format!("committing the deletion of job '{id}'"))?;
        Ok(done)
    }

    /// Pauses or resumes a job. Resuming starts counting occurrences at `now` (a paused period is
    /// not caught up).
    ///
    /// Errors: [`StoreError::NotFound`], [`StoreError::Database`].
    pub async fn set_job_enabled(
        &self,
        id: &str,
        enabled: bool,
        now: DateTime<Utc>,
    ) -> Result<JobRecord, StoreError> {
        let mut job = self
            .get_job(id)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                what: "job",
                id: id.to_string(),
            })?;
        job.draft.enabled = enabled;
        Ok(self.upsert_job(&job.draft, now).await?.0)
    }

    /// Binds a job to its chat (created at its first run).
    ///
    /// Errors: [`StoreError::NotFound`] if the job does not exist, [`StoreError::Database`].
    pub async fn set_job_chat(&self, id: &str, chat_id: &str) -> Result<(), StoreError> {
        let mut tx = self
            .begin_write(|| format!("binding job '{id}' to chat '{chat_id}'"))
            .await?;
        let n = sqlx::query("UPDATE schedule_jobs SET chat_id = ? WHERE id = ?")
            .bind(chat_id)
            .bind(id)
            .execute(&mut *tx)
            .await
            .db(|| format!("binding job '{id}' to chat '{chat_id}'"))?
            .rows_affected();
        if n == 0 {
            return Err(StoreError::NotFound {
                what: "job",
                id: id.to_string(),
            });
        }
        bump_version(&mut tx).await?;
        tx.commit()
            .await
            .db(|| format!("binding job '{id}' to chat '{chat_id}'"))?;
        Ok(())
    }

    /// Moves a job's cursor forward to `slot` (never back), without claiming anything.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn advance_job_cursor(
        &self,
        id: &str,
        slot: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE schedule_jobs SET cursor = MAX(cursor, ?) WHERE id = ?")
            .bind(ts(&slot))
            .bind(id)
            .execute(&mut *self.write_conn().await?)
            .await
            .db(|| format!("moving the cursor of job '{id}'"))?;
        Ok(())
    }

    /// A number that changes whenever a job is added, changed or removed (by any process).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn schedule_version(&self) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT version FROM schedule_version WHERE id = 1")
            .fetch_one(&mut *self.read_conn().await?)
            .await
            .db(|| "reading the schedule version".to_string())
    }

    // ---- the lease ----

    /// Takes the scheduler lease for `owner` until `now + ttl` when it is free, expired, or
    /// already `owner`'s (a renewal); otherwise reports who holds it. One `BEGIN IMMEDIATE`
    /// transaction, so two processes never both get it.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn acquire_scheduler_lease(
        &self,
        owner: &str,
        pid: i64,
        host: &str,
        now: DateTime<Utc>,
        ttl: Duration,
    ) -> Result<LeaseOutcome, StoreError> {
        let mut tx = self
            .begin_write(|| "taking the scheduler lease".to_string())
            .await?;
        let current = sqlx::query(
            "SELECT owner, pid, host, acquired_at, expires_at FROM scheduler_lease WHERE id = 1",
        )
        .fetch_optional(&mut *tx)
        .await
        .db(|| "reading the scheduler lease".to_string())?
        .as_ref()
        .map(lease_from_row)
        .transpose()?;
        let expires = now + chrono::TimeDelta::from_std(ttl).unwrap_or(chrono::TimeDelta::MAX);
        let acquired_at = match &current {
            Some(held) if held.owner == owner => held.acquired_at,
            Some(held) if held.expires_at > now => return Ok(LeaseOutcome::Held(held.clone())),
            _ => now,
        };
        sqlx::query(
            "INSERT INTO scheduler_lease (id, owner, pid, host, acquired_at, expires_at)
             VALUES (1, ?, ?, ?, ?, ?)
             ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid,
                 host = excluded.host, acquired_at = excluded.acquired_at,
                 expires_at = excluded.expires_at",
        )
        .bind(owner)
        .bind(pid)
        .bind(host)
        .bind(ts(&acquired_at))
        .bind(ts(&expires))
        .execute(&mut *tx)
        .await
        .db(|| "writing the scheduler lease".to_string())?;
        tx.commit()
            .await
            .db(|| "committing the scheduler lease".to_string())?;
        Ok(LeaseOutcome::Acquired(expires))
    }

    /// Takes the lease from `dead_owner`, an instance the caller knows has stopped (its process
    /// is gone), even before it expires; nothing changes when someone else holds it by now.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn take_over_scheduler_lease(
        &self,
        owner: &str,
        pid: i64,
        host: &str,
        now: DateTime<Utc>,
        ttl: Duration,
        dead_owner: &str,
    ) -> Result<LeaseOutcome, StoreError> {
        let mut tx = self
            .begin_write(|| "taking over the scheduler lease".to_string())
            .await?;
        let expires = now + chrono::TimeDelta::from_std(ttl).unwrap_or(chrono::TimeDelta::MAX);
        let n = sqlx::query(
            "UPDATE scheduler_lease SET owner = ?, pid = ?, host = ?, acquired_at = ?, expires_at = ?
             WHERE id = 1 AND owner = ?",
        )
        .bind(owner)
        .bind(pid)
        .bind(host)
        .bind(ts(&now))
        .bind(ts(&expires))
        .bind(dead_owner)
        .execute(&mut *tx)
        .await
        .db(|| "taking over the scheduler lease".to_string())?
        .rows_affected();
        tx.commit()
            .await
            .db(|| "committing the scheduler lease".to_string())?;
        if n == 1 {
            return Ok(LeaseOutcome::Acquired(expires));
        }
        match self.scheduler_lease().await? {
            Some(h) if h.owner != owner && h.expires_at > now => Ok(LeaseOutcome::Held(h)),
            _ => {
                self.acquire_scheduler_lease(owner, pid, host, now, ttl)
                    .await
            }
        }
    }

    /// Gives the lease up if `owner` holds it (another process may take it at once).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn release_scheduler_lease(&self, owner: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM scheduler_lease WHERE id = 1 AND owner = ?")
            .bind(owner)
            .execute(&mut *self.write_conn().await?)
            .await
            .db(|| "releasing the scheduler lease".to_string())?;
        Ok(())
    }

    /// Who holds the lease (possibly expired), if anyone wrote it.
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn scheduler_lease(&self) -> Result<Option<LeaseHolder>, StoreError> {
        sqlx::query(
            "SELECT owner, pid, host, acquired_at, expires_at FROM scheduler_lease WHERE id = 1",
        )
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| "reading the scheduler lease".to_string())?
        .as_ref()
        .map(lease_from_row)
        .transpose()
    }

    // ---- runs ----

    /// Claims an occurrence for `owner` (which must hold the lease at `lease_now`, a time of the
    /// lease's clock; `now` is the scheduler's, written as the claim time): writes its run row
    /// before anything runs, applies the job's overlap policy to a run that would start
    /// (`Running` becomes `Queued` or `Skipped` while another run of the job runs), and moves
    /// the job's cursor to `advance_to`. The cursor also moves for a [`Claim::Duplicate`].
    ///
    /// Errors: [`StoreError::NotFound`] if the job is gone, [`StoreError::Database`].
    pub async fn claim_run(
        &self,
        owner: &str,
        pid: i64,
        new: &NewRun,
        advance_to: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
        lease_now: DateTime<Utc>,
    ) -> Result<Claim, StoreError> {
        let job_id = &new.job_id;
        let mut tx = self
            .begin_write(|| format!("claiming a run of job '{job_id}'"))
            .await?;
        if !holds_lease(&mut tx, owner, &lease_now).await? {
            return Ok(Claim::LeaseLost);
        }
        let overlap: Option<String> =
            sqlx::query_scalar("SELECT overlap FROM schedule_jobs WHERE id = ?")
                .bind(job_id)
                .fetch_optional(&mut *tx)
                .await
                .db(|| format!("reading job '{job_id}'"))?;
        let Some(overlap) = overlap else {
            return Err(StoreError::NotFound {
                what: "job",
                id: job_id.clone(),
            });
        };
        let overlap: OverlapPolicy = parse_name(&overlap, || {
            format!("schedule_jobs row '{job_id}' (overlap)")
        })?;
        if let Some(slot) = advance_to {
            sqlx::query("UPDATE schedule_jobs SET cursor = MAX(cursor, ?) WHERE id = ?")
                .bind(ts(&slot))
                .bind(job_id)
                .execute(&mut *tx)
                .await
                .db(|| format!("moving the cursor of job '{job_id}'"))?;
        }
        let (status, detail) =
            overlap_status(&mut tx, job_id, overlap, new.status, new.detail.clone()).await?;
        let id = new_id();
        let started = (status == RunStatus::Running).then(|| ts(&now));
        let result = sqlx::query(
            "INSERT INTO schedule_runs (id, job_id, slot, attempt, trigger, catch_up, missed, status,
                 owner, pid, claimed_at, started_at, ended_at, detail)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(job_id)
        .bind(ts(&new.slot))
        .bind(i64::from(new.attempt))
        .bind(new.trigger.as_str())
        .bind(i64::from(new.catch_up))
        .bind(i64::from(new.missed))
        .bind(status.as_str())
        .bind(owner)
        .bind(pid)
        .bind(ts(&now))
        .bind(&started)
        .bind(status.is_final().then(|| ts(&now)))
        .bind(&detail)
        .execute(&mut *tx)
        .await;
        match result {
            Ok(_) => {}
            Err(e) if is_unique_violation(&e) => {
                tx.commit()
                    .await
                    .db(|| format!("committing the cursor of job '{job_id}'"))?;
                return Ok(Claim::Duplicate);
            }
            Err(e) => return Err(e).db(|| format!("claiming a run of job '{job_id}'")),
        }
        let row = sqlx::query(&format!(
            "SELECT {RUN_COLUMNS} FROM schedule_runs WHERE id = ?"
        ))
        .bind(&id)
        .fetch_one(&mut *tx)
        .await
        .db(|| format!("reading run '{id}'"))?;
        let run = run_from_row(&row)?;
        tx.commit().await.db(|| format!("committing run '{id}'"))?;
        Ok(Claim::Claimed(run))
    }

    /// Asks for a run of `job_id` now (Run now): a `requested` row the process that schedules
    /// starts, from this or another process.
    ///
    /// Errors: [`StoreError::NotFound`] if the job does not exist, [`StoreError::Database`].
    pub async fn request_run(
        &self,
        job_id: &str,
        now: DateTime<Utc>,
    ) -> Result<RunRecord, StoreError> {
        if self.get_job(job_id).await?.is_none() {
            return Err(StoreError::NotFound {
                what: "job",
                id: job_id.to_string(),
            });
        }
        let id = new_id();
        // Two requests in one instant get slots a nanosecond apart (the slot is unique per job).
        let mut slot = now;
        loop {
            let result = sqlx::query(
                "INSERT INTO schedule_runs (id, job_id, slot, attempt, trigger, catch_up, status,
                     claimed_at)
                 VALUES (?, ?, ?, 1, 'manual', 0, 'requested', ?)",
            )
            .bind(&id)
            .bind(job_id)
            .bind(ts(&slot))
            .bind(ts(&now))
            .execute(&mut *self.write_conn().await?)
            .await;
            match result {
                Ok(_) => break,
                Err(e) if is_unique_violation(&e) && slot - now < chrono::TimeDelta::seconds(1) => {
                    slot += chrono::TimeDelta::nanoseconds(1);
                }
                Err(e) => return Err(e).db(|| format!("requesting a run of job '{job_id}'")),
            }
        }
        self.get_run(&id)
            .await?
            .ok_or(StoreError::NotFound { what: "run", id })
    }

    /// Starts a `requested` or `queued` run for `owner` (holding the lease at `lease_now`), under the
    /// job's overlap policy: a requested run while another runs may be queued or skipped, a
    /// queued one stays queued. Returns the row as it is now, or `None` when it is not waiting
    /// any more or the lease is lost.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn start_waiting_run(
        &self,
        owner: &str,
        pid: i64,
        run_id: &str,
        now: DateTime<Utc>,
        lease_now: DateTime<Utc>,
    ) -> Result<Option<RunRecord>, StoreError> {
        let mut tx = self
            .begin_write(|| format!("starting run '{run_id}'"))
            .await?;
        if !holds_lease(&mut tx, owner, &lease_now).await? {
            return Ok(None);
        }
        let row = sqlx::query(&format!(
            "SELECT {RUN_COLUMNS} FROM schedule_runs WHERE id = ? AND status IN ('requested', 'queued')"
        ))
        .bind(run_id)
        .fetch_optional(&mut *tx)
        .await
        .db(|| format!("reading run '{run_id}'"))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let run = run_from_row(&row)?;
        let overlap: String = sqlx::query_scalar("SELECT overlap FROM schedule_jobs WHERE id = ?")
            .bind(&run.job_id)
            .fetch_one(&mut *tx)
            .await
            .db(|| format!("reading job '{}'", run.job_id))?;
        let overlap: OverlapPolicy = parse_name(&overlap, || {
            format!("schedule_jobs row '{}' (overlap)", run.job_id)
        })?;
        let (status, detail) = if run.status == RunStatus::Queued {
            let running: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM schedule_runs WHERE job_id = ? AND status = 'running'",
            )
            .bind(&run.job_id)
            .fetch_one(&mut *tx)
            .await
            .db(|| format!("counting runs of job '{}'", run.job_id))?;
            if running > 0 && overlap != OverlapPolicy::Allow {
                return Ok(Some(run));
            }
            (RunStatus::Running, None)
        } else {
            // A requested run is a new occurrence under the job's overlap policy.
            overlap_status(&mut tx, &run.job_id, overlap, RunStatus::Running, None).await?
        };
        let now_text = ts(&now);
        sqlx::query(
            "UPDATE schedule_runs SET status = ?, owner = ?, pid = ?, detail = COALESCE(?, detail),
                 started_at = CASE WHEN ? = 'running' THEN ? ELSE started_at END,
                 ended_at = CASE WHEN ? IN ('skipped') THEN ? ELSE ended_at END
             WHERE id = ?",
        )
        .bind(status.as_str())
        .bind(owner)
        .bind(pid)
        .bind(&detail)
        .bind(status.as_str())
        .bind(&now_text)
        .bind(status.as_str())
        .bind(&now_text)
        .bind(run_id)
        .execute(&mut *tx)
        .await
        .db(|| format!("starting run '{run_id}'"))?;
        let row = sqlx::query(&format!(
            "SELECT {RUN_COLUMNS} FROM schedule_runs WHERE id = ?"
        ))
        .bind(run_id)
        .fetch_one(&mut *tx)
        .await
        .db(|| format!("reading run '{run_id}'"))?;
        let run = run_from_row(&row)?;
        tx.commit()
            .await
            .db(|| format!("committing run '{run_id}'"))?;
        Ok(Some(run))
    }

    /// Records which chat and turn a running run uses.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn set_run_turn(
        &self,
        run_id: &str,
        chat_id: &str,
        turn_run_id: Option<&str>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE schedule_runs SET chat_id = ?, turn_run_id = COALESCE(?, turn_run_id) WHERE id = ?",
        )
            .bind(chat_id)
            .bind(turn_run_id)
            .bind(run_id)
            .execute(&mut *self.write_conn().await?)
            .await
            .db(|| format!("recording the turn of run '{run_id}'"))?;
        Ok(())
    }

    /// Ends a run that is still `running` (or `queued`/`requested`, e.g. interrupted before it
    /// started). Returns whether it was open; an ended run is never changed again.
    ///
    /// Errors: [`StoreError::Conflict`] if `end.status` is not final, [`StoreError::Database`].
    pub async fn finish_run(
        &self,
        run_id: &str,
        end: &RunEnd,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let status = end.status.unwrap_or(RunStatus::Completed);
        if !status.is_final() {
            return Err(StoreError::Conflict {
                message: format!("run '{run_id}' cannot end as '{status}'"),
            });
        }
        let denied = encode_json(&end.denied, || {
            format!("the denied calls of run '{run_id}'")
        })?;
        let changes = end
            .changes
            .as_ref()
            .map(|c| encode_json(c, || format!("the changes of run '{run_id}'")))
            .transpose()?;
        let n = sqlx::query(
            "UPDATE schedule_runs SET status = ?, ended_at = ?, steps = ?, denied = ?,
                 detail = COALESCE(?, detail), quiet = ?, changes = ?
             WHERE id = ? AND status IN ('requested', 'queued', 'running')",
        )
        .bind(status.as_str())
        .bind(ts(&now))
        .bind(i64::from(end.steps))
        .bind(denied)
        .bind(&end.detail)
        .bind(i64::from(end.quiet))
        .bind(changes)
        .bind(run_id)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("ending run '{run_id}'"))?
        .rows_affected();
        Ok(n > 0)
    }

    /// One run, or `None`.
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn get_run(&self, id: &str) -> Result<Option<RunRecord>, StoreError> {
        sqlx::query(&format!(
            "SELECT {RUN_COLUMNS} FROM schedule_runs WHERE id = ?"
        ))
        .bind(id)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading run '{id}'"))?
        .as_ref()
        .map(run_from_row)
        .transpose()
    }

    /// Runs of one job (or all), newest first, at most `limit`.
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn list_runs(
        &self,
        job_id: Option<&str>,
        limit: u32,
    ) -> Result<Vec<RunRecord>, StoreError> {
        let rows = match job_id {
            Some(job) => sqlx::query(&format!(
                "SELECT {RUN_COLUMNS} FROM schedule_runs WHERE job_id = ?
                 ORDER BY claimed_at DESC, rowid DESC LIMIT ?"
            ))
            .bind(job)
            .bind(i64::from(limit))
            .fetch_all(&mut *self.read_conn().await?)
            .await,
            None => sqlx::query(&format!(
                "SELECT {RUN_COLUMNS} FROM schedule_runs ORDER BY claimed_at DESC, rowid DESC LIMIT ?"
            ))
            .bind(i64::from(limit))
            .fetch_all(&mut *self.read_conn().await?)
            .await,
        }
        .db(|| "listing runs".to_string())?;
        rows.iter().map(run_from_row).collect()
    }

    /// Runs that are requested, queued or running, oldest first.
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn open_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        sqlx::query(&format!(
            "SELECT {RUN_COLUMNS} FROM schedule_runs
             WHERE status IN ('requested', 'queued', 'running') ORDER BY claimed_at, rowid"
        ))
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing open runs".to_string())?
        .iter()
        .map(run_from_row)
        .collect()
    }

    /// The turn ids of a chat's runs that found nothing to do (heartbeats), for folding.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn quiet_turns(&self, chat_id: &str) -> Result<Vec<String>, StoreError> {
        sqlx::query_scalar(
            "SELECT turn_run_id FROM schedule_runs
             WHERE chat_id = ? AND quiet = 1 AND turn_run_id IS NOT NULL ORDER BY claimed_at",
        )
        .bind(chat_id)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| format!("listing the quiet runs of chat '{chat_id}'"))
    }

    // ---- goals ----

    /// Sets the chat's goal (replacing any), active with fresh counts.
    ///
    /// Errors: [`StoreError::NotFound`] if the chat does not exist, [`StoreError::Database`].
    pub async fn set_goal(
        &self,
        chat_id: &str,
        objective: &str,
        max_turns: u32,
        max_tokens: u64,
    ) -> Result<GoalRecord, StoreError> {
        let now = ts(&self.now());
        let result = sqlx::query(
            "INSERT INTO chat_goals (chat_id, objective, status, reason, turns_used, max_turns,
                 tokens_used, max_tokens, created_at, updated_at)
             VALUES (?, ?, 'active', NULL, 0, ?, 0, ?, ?, ?)
             ON CONFLICT (chat_id) DO UPDATE SET objective = excluded.objective,
                 status = 'active', reason = NULL, turns_used = 0, max_turns = excluded.max_turns,
                 tokens_used = 0, max_tokens = excluded.max_tokens,
                 created_at = excluded.created_at, updated_at = excluded.updated_at",
        )
        .bind(chat_id)
        .bind(objective)
        .bind(i64::from(max_turns.max(1)))
        .bind(i64::try_from(max_tokens.max(1)).unwrap_or(i64::MAX))
        .bind(&now)
        .bind(&now)
        .execute(&mut *self.write_conn().await?)
        .await;
        match result {
            Ok(_) => {}
            Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => {
                return Err(StoreError::NotFound {
                    what: "chat",
                    id: chat_id.to_string(),
                });
            }
            Err(e) => return Err(e).db(|| format!("setting the goal of chat '{chat_id}'")),
        }
        self.get_goal(chat_id).await?.ok_or(StoreError::NotFound {
            what: "goal",
            id: chat_id.to_string(),
        })
    }

    /// The chat's goal, or `None`.
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn get_goal(&self, chat_id: &str) -> Result<Option<GoalRecord>, StoreError> {
        sqlx::query("SELECT * FROM chat_goals WHERE chat_id = ?")
            .bind(chat_id)
            .fetch_optional(&mut *self.read_conn().await?)
            .await
            .db(|| format!("reading the goal of chat '{chat_id}'"))?
            .as_ref()
            .map(goal_from_row)
            .transpose()
    }

    /// Adds a turn's use to the goal's counts and sets its status and reason, in one statement
    /// (so counts survive a restart). Returns the goal as stored.
    ///
    /// Errors: [`StoreError::NotFound`] if the chat has no goal, [`StoreError::Database`].
    pub async fn update_goal(
        &self,
        chat_id: &str,
        status: GoalStatus,
        reason: Option<&str>,
        add_turns: u32,
        add_tokens: u64,
    ) -> Result<GoalRecord, StoreError> {
        let n = sqlx::query(
            "UPDATE chat_goals SET status = ?, reason = ?, turns_used = turns_used + ?,
                 tokens_used = tokens_used + ?, updated_at = ? WHERE chat_id = ?",
        )
        .bind(status.as_str())
        .bind(reason)
        .bind(i64::from(add_turns))
        .bind(i64::try_from(add_tokens).unwrap_or(i64::MAX))
        .bind(ts(&self.now()))
        .bind(chat_id)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("updating the goal of chat '{chat_id}'"))?
        .rows_affected();
        if n == 0 {
            return Err(StoreError::NotFound {
                what: "goal",
                id: chat_id.to_string(),
            });
        }
        self.get_goal(chat_id).await?.ok_or(StoreError::NotFound {
            what: "goal",
            id: chat_id.to_string(),
        })
    }

    /// Removes the chat's goal. Returns whether it had one.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn clear_goal(&self, chat_id: &str) -> Result<bool, StoreError> {
        Ok(sqlx::query("DELETE FROM chat_goals WHERE chat_id = ?")
            .bind(chat_id)
            .execute(&mut *self.write_conn().await?)
            .await
            .db(|| format!("clearing the goal of chat '{chat_id}'"))?
            .rows_affected()
            > 0)
    }

    /// Goals that are active, oldest first (resumed after a restart).
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn active_goals(&self) -> Result<Vec<GoalRecord>, StoreError> {
        sqlx::query("SELECT * FROM chat_goals WHERE status = 'active' ORDER BY created_at")
            .fetch_all(&mut *self.read_conn().await?)
            .await
            .db(|| "listing active goals".to_string())?
            .iter()
            .map(goal_from_row)
            .collect()
    }
}

/// What a run that would start becomes under the job's overlap policy, given the job's other
/// open runs (inside the claim's transaction).
async fn overlap_status(
    tx: &mut Tx,
    job_id: &str,
    overlap: OverlapPolicy,
    wanted: RunStatus,
    detail: Option<String>,
) -> Result<(RunStatus, Option<String>), StoreError> {
    if wanted != RunStatus::Running || overlap == OverlapPolicy::Allow {
        return Ok((wanted, detail));
    }
    let (running, queued): (i64, i64) = sqlx::query_as(
        "SELECT COALESCE(SUM(status = 'running'), 0), COALESCE(SUM(status = 'queued'), 0)
         FROM schedule_runs WHERE job_id = ?",
    )
    .bind(job_id)
    .fetch_one(&mut **tx)
    .await
    .db(|| format!("counting the open runs of job '{job_id}'"))?;
    if running == 0 {
        return Ok((RunStatus::Running, detail));
    }
    Ok(match overlap {
        OverlapPolicy::QueueOne if queued == 0 => (
            RunStatus::Queued,
            Some("waiting for the running run to end".into()),
        ),
        OverlapPolicy::QueueOne => (
            RunStatus::Skipped,
            Some("still running, and one run already waits".into()),
        ),
        _ => (RunStatus::Skipped, Some("still running".into())),
    })
}
