//! Process groups started by tools (issue 13 item 8, migration 0015): a row per `run_command` or
//! `start_command` process group while it runs, so a runtime that was killed leaves a record the
//! next one can act on. A row is deleted when its runtime saw the process end; a row of a dead
//! runtime is marked `interrupted` once the next runtime has stopped what was left of it.

use crate::error::DbContext;
use crate::{Store, StoreError, parse_ts, ts};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

/// What started a recorded process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessKind {
    /// A `run_command` call (the turn waits for it).
    RunCommand,
    /// A background command (`start_command`).
    BackgroundCommand,
}

impl ProcessKind {
    fn as_str(self) -> &'static str {
        match self {
            ProcessKind::RunCommand => "run_command",
            ProcessKind::BackgroundCommand => "background_command",
        }
    }
}

/// A process group to record right after it was spawned (and, in a [`ProcessRecord`], what
/// was recorded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewProcess {
    /// Unique id of the record.
    pub id: String,
    /// The chat whose tool started it.
    pub chat_id: String,
    /// What started it.
    pub kind: ProcessKind,
    /// The tool call that started it, when known.
    pub tool_call_id: Option<String>,
    /// The background command id (`start_command` only).
    pub command_id: Option<String>,
    /// The command line.
    pub command: String,
    /// Pid of the group leader (the shell).
    pub pid: u32,
    /// Process group id (equal to `pid`: the shell leads its own session).
    pub pgid: u32,
    /// The leader's start time in clock ticks after boot (`/proc/PID/stat` field 22), when the
    /// OS tells.
    pub start_ticks: Option<u64>,
    /// The boot the start time counts from (`/proc/sys/kernel/random/boot_id`).
    pub boot_id: Option<String>,
    /// Pid of the runtime process that started it.
    pub owner_pid: u32,
    /// The runtime process's start time in clock ticks after boot.
    pub owner_start_ticks: Option<u64>,
}

/// Whether a recorded group still runs as far as the record knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessStatus {
    /// Its runtime was running it.
    Running,
    /// Its runtime died while it ran; a later runtime stopped what was left.
    Interrupted,
}

/// A recorded process group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessRecord {
    /// What was recorded at spawn.
    #[serde(flatten)]
    pub process: NewProcess,
    /// Running or interrupted.
    pub status: ProcessStatus,
    /// When it was spawned.
    pub started_at: DateTime<Utc>,
    /// When it was marked interrupted.
    pub ended_at: Option<DateTime<Utc>>,
    /// What the sweep found and did (interrupted rows).
    pub note: Option<String>,
}

const COLUMNS: &str = "id, chat_id, kind, tool_call_id, command_id, command, pid, pgid, \
                       start_ticks, boot_id, owner_pid, owner_start_ticks, status, started_at, \
                       ended_at, note";

fn ticks(row: &SqliteRow, column: &str) -> Option<u64> {
    row.get::<Option<i64>, _>(column)
        .and_then(|v| u64::try_from(v).ok())
}

fn decode(row: &SqliteRow) -> Result<ProcessRecord, StoreError> {
    let id: String = row.get("id");
    let corrupt = |column: &str, value: String| StoreError::Corrupt {
        what: format!("processes row '{id}' ({column})"),
        message: format!("unknown value '{value}'"),
    };
    let kind: String = row.get("kind");
    let kind = match kind.as_str() {
        "run_command" => ProcessKind::RunCommand,
        "background_command" => ProcessKind::BackgroundCommand,
        _ => return Err(corrupt("kind", kind)),
    };
    let status: String = row.get("status");
    let status = match status.as_str() {
        "running" => ProcessStatus::Running,
        "interrupted" => ProcessStatus::Interrupted,
        _ => return Err(corrupt("status", status)),
    };
    let pid = |column: &str| -> Result<u32, StoreError> {
        let v: i64 = row.get(column);
        u32::try_from(v).map_err(|_| corrupt(column, v.to_string()))
    };
    let started_at: String = row.get("started_at");
    let ended_at: Option<String> = row.get("ended_at");
    Ok(ProcessRecord {
        process: NewProcess {
            chat_id: row.get("chat_id"),
            kind,
            tool_call_id: row.get("tool_call_id"),
            command_id: row.get("command_id"),
            command: row.get("command"),
            pid: pid("pid")?,
            pgid: pid("pgid")?,
            start_ticks: ticks(row, "start_ticks"),
            boot_id: row.get("boot_id"),
            owner_pid: pid("owner_pid")?,
            owner_start_ticks: ticks(row, "owner_start_ticks"),
            id: id.clone(),
        },
        status,
        started_at: parse_ts(&started_at, || format!("processes row '{id}' (started_at)"))?,
        ended_at: ended_at
            .map(|t| parse_ts(&t, || format!("processes row '{id}' (ended_at)")))
            .transpose()?,
        note: row.get("note"),
    })
}

fn as_i64(v: Option<u64>) -> Option<i64> {
    v.and_then(|v| i64::try_from(v).ok())
}

impl Store {
    /// Records a process group that was just spawned (status `running`).
    ///
    /// Errors: [`StoreError::Conflict`] if the id is taken, [`StoreError::Database`].
    pub async fn record_process(&self, p: &NewProcess) -> Result<(), StoreError> {
        let result = sqlx::query(
            "INSERT INTO processes (id, chat_id, kind, tool_call_id, command_id, command, pid, pgid,
                 start_ticks, boot_id, owner_pid, owner_start_ticks, status, started_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)",
        )
        .bind(&p.id)
        .bind(&p.chat_id)
        .bind(p.kind.as_str())
        .bind(&p.tool_call_id)
        .bind(&p.command_id)
        .bind(&p.command)
        .bind(i64::from(p.pid))
        .bind(i64::from(p.pgid))
        .bind(as_i64(p.start_ticks))
        .bind(&p.boot_id)
        .bind(i64::from(p.owner_pid))
        .bind(as_i64(p.owner_start_ticks))
        .bind(ts(&self.now()))
        .execute(&mut *self.write_conn().await?)
        .await;
        match result {
            Ok(_) => Ok(()),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(StoreError::Conflict {
                message: format!("process record '{}' exists already", p.id),
            }),
            Err(e) => Err(e).db(|| format!("recording process '{}'", p.id)),
        }
    }

    /// Forgets a process group its runtime saw end (a missing id is not an error).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn forget_process(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM processes WHERE id = ? AND status = 'running'")
            .bind(id)
            .execute(&mut *self.write_conn().await?)
            .await
            .db(|| format!("forgetting process '{id}'"))?;
        Ok(())
    }

    /// Marks a running record interrupted with what the sweep found. Returns whether it was
    /// still running (another runtime may have swept it first).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn mark_process_interrupted(&self, id: &str, note: &str) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE processes SET status = 'interrupted', ended_at = ?, note = ?
             WHERE id = ? AND status = 'running'",
        )
        .bind(ts(&self.now()))
        .bind(note)
        .bind(id)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("marking process '{id}' interrupted"))?;
        Ok(done.rows_affected() == 1)
    }

    /// Recorded process groups, running and interrupted, of one chat or all, oldest first.
    ///
    /// Errors: [`StoreError::Corrupt`] for a row that does not decode, [`StoreError::Database`].
    pub async fn processes(&self, chat_id: Option<&str>) -> Result<Vec<ProcessRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM processes WHERE (?1 IS NULL OR chat_id = ?1)
             ORDER BY started_at, id"
        ))
        .bind(chat_id)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing recorded processes".to_string())?;
        rows.iter().map(decode).collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    fn spawn(id: &str) -> NewProcess {
        NewProcess {
            id: id.into(),
            chat_id: "c1".into(),
            kind: ProcessKind::BackgroundCommand,
            tool_call_id: Some("call_1".into()),
            command_id: Some("cmd-1".into()),
            command: "sleep 600".into(),
            pid: 4242,
            pgid: 4242,
            start_ticks: Some(123_456),
            boot_id: Some("boot".into()),
            owner_pid: 17,
            owner_start_ticks: Some(99),
        }
    }

    #[tokio::test]
    async fn a_process_is_recorded_marked_interrupted_once_and_forgotten_only_while_running()
    -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        store.record_process(&spawn("p1")).await?;
        store.record_process(&spawn("p2")).await?;
        assert!(matches!(
            store.record_process(&spawn("p1")).await,
            Err(StoreError::Conflict { .. })
        ));
        store.forget_process("p2").await?;
        assert!(store.mark_process_interrupted("p1", "stopped").await?);
        assert!(!store.mark_process_interrupted("p1", "again").await?);
        // An interrupted record is history: forgetting it does nothing.
        store.forget_process("p1").await?;
        let rows = store.processes(Some("c1")).await?;
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!(
            (
                row.process.clone(),
                row.status,
                row.note.clone(),
                row.ended_at.is_some()
            ),
            (
                NewProcess {
                    id: "p1".into(),
                    chat_id: "c1".into(),
                    kind: ProcessKind::BackgroundCommand,
                    tool_call_id: Some("call_1".into()),
                    command_id: Some("cmd-1".into()),
                    command: "sleep 600".into(),
                    pid: 4242,
                    pgid: 4242,
                    start_ticks: Some(123_456),
                    boot_id: Some("boot".into()),
                    owner_pid: 17,
                    owner_start_ticks: Some(99),
                },
                ProcessStatus::Interrupted,
                Some("stopped".to_string()),
                true
            )
        );
        assert_eq!(store.processes(Some("other")).await?, vec![]);
        Ok(())
    }
}
