//! The durable agent inbox: messages with sender-chosen idempotent ids, leases, retries with
//! capped exponential backoff and at most one message in flight per target; plus the sub-agent
//! links.
//!
//! A dispatcher [`claim`](Store::claim_inbox)s a due message (its lease says who delivers it until
//! when), writes it into the target's transcript with
//! [`record_inbox_delivery`](Store::record_inbox_delivery) (message and delivery record in one
//! transaction), runs the turn, then [`complete`](Store::complete_inbox)s it. After a crash the
//! lease expires, another claim finds the delivery record, and the message is acknowledged
//! without being added (or run) twice.

use crate::error::{ChatDbContext, DbContext};
use crate::{Store, StoreError, decode_json, encode_json, parse_ts, ts};
use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use std::time::Duration;
use suzent_core::ChatMessage;

/// First retry delay; doubled per attempt up to [`MAX_BACKOFF`].
pub const BASE_BACKOFF: Duration = Duration::from_secs(2);
/// Longest retry delay.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// Attempts before a message is marked failed.
pub const DEFAULT_MAX_ATTEMPTS: i64 = 8;

/// Where an inbox message is.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InboxStatus {
    /// Waiting for delivery (maybe until `next_attempt_at`).
    Pending,
    /// Leased by a dispatcher that is delivering it.
    Processing,
    /// In the target's transcript and handled.
    Delivered,
    /// Gave up after too many attempts.
    Failed,
    /// Withdrawn before delivery (e.g. the command's result was already read).
    Cancelled,
}

impl InboxStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            InboxStatus::Pending => "pending",
            InboxStatus::Processing => "processing",
            InboxStatus::Delivered => "delivered",
            InboxStatus::Failed => "failed",
            InboxStatus::Cancelled => "cancelled",
        }
    }
}

impl std::str::FromStr for InboxStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "pending" => InboxStatus::Pending,
            "processing" => InboxStatus::Processing,
            "delivered" => InboxStatus::Delivered,
            "failed" => InboxStatus::Failed,
            "cancelled" => InboxStatus::Cancelled,
            other => return Err(format!("unknown inbox status '{other}'")),
        })
    }
}

/// A message to queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewInboxMessage {
    /// Idempotent id chosen by the sender (`command:<id>`, a fresh id for `agent_send`...).
    pub id: String,
    /// The receiving agent's chat id.
    pub target: String,
    /// Who sends it (`command:<id>`, a chat id, `user`).
    pub sender: String,
    /// What it is (`command_finished`, `agent_message`, `subagent_report`).
    pub kind: String,
    /// The text the agent reads.
    pub text: String,
}

/// A stored inbox message.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InboxMessage {
    /// Id.
    pub id: String,
    /// Receiving chat.
    pub target: String,
    /// Sender.
    pub sender: String,
    /// Kind.
    pub kind: String,
    /// Text.
    pub text: String,
    /// Status.
    pub status: InboxStatus,
    /// Delivery attempts started.
    pub attempts: i64,
    /// Attempts allowed.
    pub max_attempts: i64,
    /// Not delivered before this time.
    pub next_attempt_at: DateTime<Utc>,
    /// The dispatcher holding the lease.
    pub lease_owner: Option<String>,
    /// When the lease expires.
    pub lease_until: Option<DateTime<Utc>>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// Queued at.
    pub created_at: DateTime<Utc>,
    /// Delivered at.
    pub delivered_at: Option<DateTime<Utc>>,
}

/// A sub-agent's link to the chat that started it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentLink {
    /// The sub-agent's chat id.
    pub chat_id: String,
    /// The chat that delegated the task.
    pub parent_id: String,
    /// `subagent`.
    pub kind: String,
    /// Tool profile.
    pub profile: Option<String>,
    /// 1 for a sub-agent of a top-level chat.
    pub depth: i64,
}

/// Inserts `link` on `conn` (a pooled connection or an open transaction), created `now`.
///
/// Errors: [`StoreError::NotFound`] for an unknown chat, [`StoreError::Database`].
async fn insert_agent_link(
    conn: &mut sqlx::SqliteConnection,
    link: &AgentLink,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let result = sqlx::query(
        "INSERT INTO agent_links (chat_id, parent_id, kind, profile, depth, created_at)
         VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(&link.chat_id)
    .bind(&link.parent_id)
    .bind(&link.kind)
    .bind(&link.profile)
    .bind(link.depth)
    .bind(ts(&now))
    .execute(&mut *conn)
    .await;
    result.chat_db(&link.chat_id, || {
        format!("linking sub-agent '{}'", link.chat_id)
    })?;
    Ok(())
}

/// The retry delay after `attempts` failed attempts: `BASE_BACKOFF * 2^(attempts-1)`, at most
/// [`MAX_BACKOFF`].
pub fn backoff(attempts: i64) -> Duration {
    let exp = u32::try_from(attempts.saturating_sub(1).clamp(0, 20)).unwrap_or(20);
    BASE_BACKOFF
        .saturating_mul(2u32.saturating_pow(exp))
        .min(MAX_BACKOFF)
}

pub(crate) fn delta(d: Duration) -> TimeDelta {
    TimeDelta::from_std(d).unwrap_or(TimeDelta::MAX)
}

#[derive(Serialize, Deserialize)]
struct Body {
    text: String,
}

const COLUMNS: &str = "id, target, sender, kind, body, status, attempts, max_attempts, \
    next_attempt_at, lease_owner, lease_until, last_error, created_at, delivered_at";

fn row_to_message(row: &SqliteRow) -> Result<InboxMessage, StoreError> {
    let read = || "reading an inbox message".to_string();
    let id: String = row.try_get("id").db(read)?;
    let what = |col: &str| format!("inbox row '{id}' ({col})");
    let body: String = row.try_get("body").db(read)?;
    let body: Body = decode_json(&body, || what("body"))?;
    let status: String = row.try_get("status").db(read)?;
    let opt_ts = |col: &str| -> Result<Option<DateTime<Utc>>, StoreError> {
        let v: Option<String> = row.try_get(col).db(read)?;
        v.map(|t| parse_ts(&t, || what(col))).transpose()
    };
    let next: String = row.try_get("next_attempt_at").db(read)?;
    let created: String = row.try_get("created_at").db(read)?;
    Ok(InboxMessage {
        target: row.try_get("target").db(read)?,
        sender: row.try_get("sender").db(read)?,
        kind: row.try_get("kind").db(read)?,
        text: body.text,
        status: crate::parse_name(&status, || what("status"))?,
        attempts: row.try_get("attempts").db(read)?,
        max_attempts: row.try_get("max_attempts").db(read)?,
        next_attempt_at: parse_ts(&next, || what("next_attempt_at"))?,
        lease_owner: row.try_get("lease_owner").db(read)?,
        lease_until: opt_ts("lease_until")?,
        last_error: row.try_get("last_error").db(read)?,
        created_at: parse_ts(&created, || what("created_at"))?,
        delivered_at: opt_ts("delivered_at")?,
        id,
    })
}

impl Store {
    /// Queues a message. The same id with the same target, sender, kind and text returns the
    /// stored message (whatever its status); the same id with other content is a
    /// [`StoreError::Conflict`].
    ///
    /// Errors: [`StoreError::NotFound`] (`what: "chat"`) for an unknown target,
    /// [`StoreError::Conflict`], [`StoreError::Database`].
    pub async fn enqueue_inbox(&self, new: &NewInboxMessage) -> Result<InboxMessage, StoreError> {
        let context = || format!("queueing inbox message '{}'", new.id);
        let body = encode_json(
            &Body {
                text: new.text.clone(),
            },
            || format!("inbox message '{}'", new.id),
        )?;
        let mut tx = self.begin_write(context).await?;
        let existing = sqlx::query(&format!("SELECT {COLUMNS} FROM inbox WHERE id = ?"))
            .bind(&new.id)
            .fetch_optional(&mut *tx)
            .await
            .db(context)?;
        if let Some(row) = existing {
            let stored = row_to_message(&row)?;
            tx.commit().await.db(context)?;
            if stored.target == new.target
                && stored.sender == new.sender
                && stored.kind == new.kind
                && stored.text == new.text
            {
                return Ok(stored);
            }
            return Err(StoreError::Conflict {
                message: format!(
                    "inbox message id '{}' is already used for a different message",
                    new.id
                ),
            });
        }
        crate::require_chat(&mut tx, &new.target, context).await?;
        let now = ts(&self.now());
        sqlx::query(
            "INSERT INTO inbox (id, target, sender, kind, body, status, attempts, max_attempts,
                                next_attempt_at, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?)",
        )
        .bind(&new.id)
        .bind(&new.target)
        .bind(&new.sender)
        .bind(&new.kind)
        .bind(body)
        .bind(DEFAULT_MAX_ATTEMPTS)
        .bind(&now)
        .bind(&now)
        .bind(&now)
        .execute(&mut *tx)
        .await
        .db(context)?;
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM inbox WHERE id = ?"))
            .bind(&new.id)
            .fetch_one(&mut *tx)
            .await
            .db(context)?;
        let message = row_to_message(&row)?;
        tx.commit().await.db(context)?;
        Ok(message)
    }

    /// One inbox message.
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn inbox_message(&self, id: &str) -> Result<Option<InboxMessage>, StoreError> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM inbox WHERE id = ?"))
            .bind(id)
            .fetch_optional(&mut *self.read_conn().await?)
            .await
            .db(|| format!("reading inbox message '{id}'"))?;
        row.as_ref().map(row_to_message).transpose()
    }

    /// Inbox messages (of one target, or all), oldest first.
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn list_inbox(&self, target: Option<&str>) -> Result<Vec<InboxMessage>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM inbox WHERE (?1 IS NULL OR target = ?1) ORDER BY created_at, id"
        ))
        .bind(target)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing the inbox".to_string())?;
        rows.iter().map(row_to_message).collect()
    }

    /// Leases the oldest due message for `lease` to `owner`, counting an attempt: a pending one
    /// whose retry time has come, or a processing one whose lease expired (its dispatcher died).
    /// Targets with a message under a live lease are skipped (one in flight per target), as are
    /// `skip_targets` (agents busy in this process) and, when `only_target` is set, every other
    /// target.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn claim_inbox(
        &self,
        owner: &str,
        lease: Duration,
        only_target: Option<&str>,
        skip_targets: &[String],
    ) -> Result<Option<InboxMessage>, StoreError> {
        let context = || "claiming an inbox message".to_string();
        let now = self.now();
        let now_s = ts(&now);
        let mut tx = self.begin_write(context).await?;
        let skip = serde_json::to_string(skip_targets).unwrap_or_else(|_| "[]".into());
        let id: Option<String> = sqlx::query_scalar(
            "SELECT m.id FROM inbox m
             WHERE ((m.status = 'pending' AND m.next_attempt_at <= ?1)
                    OR (m.status = 'processing' AND m.lease_until <= ?1))
               AND (?2 IS NULL OR m.target = ?2)
               AND m.target NOT IN (SELECT value FROM json_each(?3))
               AND NOT EXISTS (SELECT 1 FROM inbox o
                               WHERE o.target = m.target AND o.id <> m.id
                                 AND o.status = 'processing' AND o.lease_until > ?1)
             ORDER BY m.created_at, m.id
             LIMIT 1",
        )
        .bind(&now_s)
        .bind(only_target)
        .bind(&skip)
        .fetch_optional(&mut *tx)
        .await
        .db(context)?;
        let Some(id) = id else {
            tx.commit().await.db(context)?;
            return Ok(None);
        };
        sqlx::query(
            "UPDATE inbox SET status = 'processing', attempts = attempts + 1, lease_owner = ?,
                              lease_until = ?, updated_at = ?
             WHERE id = ?",
        )
        .bind(owner)
        .bind(ts(&(now + delta(lease))))
        .bind(&now_s)
        .bind(&id)
        .execute(&mut *tx)
        .await
        .db(context)?;
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM inbox WHERE id = ?"))
            .bind(&id)
            .fetch_one(&mut *tx)
            .await
            .db(context)?;
        let message = row_to_message(&row)?;
        tx.commit().await.db(context)?;
        Ok(Some(message))
    }

    /// Whether `target` has a message that is due now (pending and due, or under an expired
    /// lease): a cheap read before [`Store::claim_inbox`], which takes the write lock.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn has_due_inbox(&self, target: &str) -> Result<bool, StoreError> {
        let now = ts(&self.now());
        let found: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM inbox WHERE target = ?1
               AND ((status = 'pending' AND next_attempt_at <= ?2)
                    OR (status = 'processing' AND lease_until <= ?2))
             LIMIT 1",
        )
        .bind(target)
        .bind(&now)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("looking for inbox messages to '{target}'"))?;
        Ok(found.is_some())
    }

    /// Extends `owner`'s lease on a message. `false` when the lease is no longer theirs.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn renew_inbox_lease(
        &self,
        id: &str,
        owner: &str,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        let now = self.now();
        let done = sqlx::query(
            "UPDATE inbox SET lease_until = ?, updated_at = ?
             WHERE id = ? AND status = 'processing' AND lease_owner = ?",
        )
        .bind(ts(&(now + delta(lease))))
        .bind(ts(&now))
        .bind(id)
        .bind(owner)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("renewing the lease of inbox message '{id}'"))?;
        Ok(done.rows_affected() == 1)
    }

    /// Marks `owner`'s leased message delivered. `false` when the lease is no longer theirs.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn complete_inbox(&self, id: &str, owner: &str) -> Result<bool, StoreError> {
        let now = ts(&self.now());
        let done = sqlx::query(
            "UPDATE inbox SET status = 'delivered', lease_owner = NULL, lease_until = NULL,
                              delivered_at = ?, updated_at = ?
             WHERE id = ? AND status = 'processing' AND lease_owner = ?",
        )
        .bind(&now)
        .bind(&now)
        .bind(id)
        .bind(owner)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("completing inbox message '{id}'"))?;
        Ok(done.rows_affected() == 1)
    }

    /// Records a failed attempt of `owner`'s leased message: back to pending after
    /// [`backoff`]`(attempts)`, or failed when the attempts are used up. Returns the new status.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::NotFound`] when the lease is not theirs.
    pub async fn fail_inbox(
        &self,
        id: &str,
        owner: &str,
        error: &str,
    ) -> Result<InboxStatus, StoreError> {
        let context = || format!("recording a failed delivery of inbox message '{id}'");
        let now = self.now();
        let mut tx = self.begin_write(context).await?;
        let row: Option<(i64, i64)> = sqlx::query_as(
            "SELECT attempts, max_attempts FROM inbox
             WHERE id = ? AND status = 'processing' AND lease_owner = ?",
        )
        .bind(id)
        .bind(owner)
        .fetch_optional(&mut *tx)
        .await
        .db(context)?;
        let Some((attempts, max)) = row else {
            return Err(StoreError::NotFound {
                what: "leased inbox message",
                id: id.to_string(),
            });
        };
        let status = if attempts >= max {
            InboxStatus::Failed
        } else {
            InboxStatus::Pending
        };
        sqlx::query(
            "UPDATE inbox SET status = ?, lease_owner = NULL, lease_until = NULL,
                              next_attempt_at = ?, last_error = ?, updated_at = ?
             WHERE id = ?",
        )
        .bind(status.as_str())
        .bind(ts(&(now + delta(backoff(attempts)))))
        .bind(error)
        .bind(ts(&now))
        .bind(id)
        .execute(&mut *tx)
        .await
        .db(context)?;
        tx.commit().await.db(context)?;
        Ok(status)
    }

    /// Gives `owner`'s leased message back to the queue without using up an attempt (the
    /// target could not take it yet, e.g. it waits for the user's approval): pending again, due
    /// now, the attempt this lease counted taken back. `false` when the lease is not theirs.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn release_inbox(&self, id: &str, owner: &str) -> Result<bool, StoreError> {
        let now = ts(&self.now());
        let done = sqlx::query(
            "UPDATE inbox SET status = 'pending', attempts = MAX(attempts - 1, 0),
                              lease_owner = NULL, lease_until = NULL, next_attempt_at = ?,
                              updated_at = ?
             WHERE id = ? AND status = 'processing' AND lease_owner = ?",
        )
        .bind(&now)
        .bind(&now)
        .bind(id)
        .bind(owner)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("releasing inbox message '{id}'"))?;
        Ok(done.rows_affected() == 1)
    }

    /// Withdraws a message that is still pending. `false` when it is already being delivered,
    /// delivered, failed or unknown.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn cancel_inbox(&self, id: &str) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE inbox SET status = 'cancelled', updated_at = ? WHERE id = ? AND status = 'pending'",
        )
        .bind(ts(&self.now()))
        .bind(id)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("cancelling inbox message '{id}'"))?;
        Ok(done.rows_affected() == 1)
    }

    /// The earliest time a pending message becomes due or a lease expires (for the dispatcher's
    /// sleep), if any.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn next_inbox_wakeup(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        let next: Option<String> = sqlx::query_scalar(
            "SELECT MIN(t) FROM (
                SELECT MIN(next_attempt_at) AS t FROM inbox WHERE status = 'pending'
                UNION ALL
                SELECT MIN(lease_until) AS t FROM inbox WHERE status = 'processing')",
        )
        .fetch_one(&mut *self.read_conn().await?)
        .await
        .db(|| "reading the next inbox wake-up".to_string())?;
        next.map(|t| parse_ts(&t, || "inbox (next wake-up)".to_string()))
            .transpose()
    }

    /// Writes an inbox message into its target's transcript as `message`, with the delivery
    /// record, in one transaction. Returns the transcript seq, or `None` when this message was
    /// already recorded (a redelivery): nothing is written then.
    ///
    /// Errors: [`StoreError::NotFound`] for an unknown chat, [`StoreError::Database`].
    pub async fn record_inbox_delivery(
        &self,
        message_id: &str,
        chat_id: &str,
        run_id: Option<&str>,
        message: &ChatMessage,
    ) -> Result<Option<i64>, StoreError> {
        let context = || format!("recording inbox message '{message_id}' in chat '{chat_id}'");
        let mut tx = self.begin_write(context).await?;
        let seen: Option<i64> =
            sqlx::query_scalar("SELECT seq FROM inbox_deliveries WHERE message_id = ?")
                .bind(message_id)
                .fetch_optional(&mut *tx)
                .await
                .db(context)?;
        if seen.is_some() {
            tx.commit().await.db(context)?;
            return Ok(None);
        }
        let now = self.now();
        let seq = crate::transcript::insert_message(&mut tx, chat_id, run_id, message, now).await?;
        sqlx::query(
            "INSERT INTO inbox_deliveries (message_id, chat_id, seq, created_at) VALUES (?, ?, ?, ?)",
        )
        .bind(message_id)
        .bind(chat_id)
        .bind(seq)
        .bind(ts(&now))
        .execute(&mut *tx)
        .await
        .db(context)?;
        tx.commit().await.db(context)?;
        Ok(Some(seq))
    }

    /// Records a sub-agent's link to its parent.
    ///
    /// Errors: [`StoreError::NotFound`] for an unknown chat, [`StoreError::Database`].
    pub async fn add_agent_link(&self, link: &AgentLink) -> Result<(), StoreError> {
        let mut conn = self
            .writer
            .acquire()
            .await
            .db(|| format!("linking sub-agent '{}'", link.chat_id))?;
        insert_agent_link(&mut conn, link, self.now()).await
    }

    /// Creates a sub-agent's chat `new`, its link to the parent (`link.chat_id` must be
    /// `new.id`) and its first transcript message `task`, in one transaction: on any error none
    /// of the three is stored, so a failed start never leaves an unlinked chat behind.
    ///
    /// Errors: [`StoreError::Conflict`] if a chat with this id exists or `link` names another
    /// chat, [`StoreError::Database`].
    pub async fn create_subagent_chat(
        &self,
        new: &crate::NewChat,
        link: &AgentLink,
        task: &ChatMessage,
    ) -> Result<crate::ChatRecord, StoreError> {
        if link.chat_id != new.id {
            return Err(StoreError::Conflict {
                message: format!(
                    "the sub-agent link names chat '{}', not the new chat '{}'",
                    link.chat_id, new.id
                ),
            });
        }
        let context = || format!("creating sub-agent chat '{}'", new.id);
        let now = self.now();
        let mut tx = self.begin_write(context).await?;
        let chat = crate::chats::insert_chat(&mut tx, new, now).await?;
        insert_agent_link(&mut tx, link, now).await?;
        crate::transcript::insert_message(&mut tx, &new.id, None, task, now).await?;
        tx.commit().await.db(context)?;
        Ok(chat)
    }

    /// The link of a sub-agent, or `None` for a top-level chat.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn agent_link(&self, chat_id: &str) -> Result<Option<AgentLink>, StoreError> {
        let row: Option<(String, String, String, Option<String>, i64)> = sqlx::query_as(
            "SELECT chat_id, parent_id, kind, profile, depth FROM agent_links WHERE chat_id = ?",
        )
        .bind(chat_id)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading the link of chat '{chat_id}'"))?;
        Ok(
            row.map(|(chat_id, parent_id, kind, profile, depth)| AgentLink {
                chat_id,
                parent_id,
                kind,
                profile,
                depth,
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::NewChat;
    use suzent_core::PermissionMode;

    fn new_chat(id: &str) -> NewChat {
        NewChat {
            id: id.into(),
            title: format!("Sub-agent: {id}"),
            workspace: "/w".into(),
            model: None,
            mode: PermissionMode::Auto,
            tools: None,
        }
    }

    fn link(chat: &str) -> AgentLink {
        AgentLink {
            chat_id: chat.into(),
            parent_id: "parent".into(),
            kind: "subagent".into(),
            profile: Some("general".into()),
            depth: 1,
        }
    }

    fn task() -> ChatMessage {
        ChatMessage::User {
            text: "do it".into(),
            attachments: Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_sub_agent_chat_is_stored_with_its_link_and_task_or_not_at_all() {
        let store = Store::open_in_memory().await.unwrap();
        store.create_chat(&new_chat("parent")).await.unwrap();
        let chat = store
            .create_subagent_chat(&new_chat("ok"), &link("ok"), &task())
            .await
            .unwrap();
        assert_eq!(chat.id, "ok");
        assert_eq!(store.agent_link("ok").await.unwrap(), Some(link("ok")));
        assert_eq!(store.messages("ok").await.unwrap().len(), 1);

        // The first message cannot be stored: neither the chat nor its link remain.
        sqlx::query(
            "CREATE TRIGGER fail_messages BEFORE INSERT ON messages
             BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
        )
        .execute(&mut *store.write_conn().await.unwrap())
        .await
        .unwrap();
        let err = store
            .create_subagent_chat(&new_chat("half"), &link("half"), &task())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("injected failure"), "{err}");
        assert_eq!(store.get_chat("half").await.unwrap(), None);
        assert_eq!(store.agent_link("half").await.unwrap(), None);

        // The link cannot be stored: no chat either.
        sqlx::query("DROP TRIGGER fail_messages")
            .execute(&mut *store.write_conn().await.unwrap())
            .await
            .unwrap();
        sqlx::query(
            "CREATE TRIGGER fail_links BEFORE INSERT ON agent_links
             BEGIN SELECT RAISE(ABORT, 'injected link failure'); END",
        )
        .execute(&mut *store.write_conn().await.unwrap())
        .await
        .unwrap();
        assert!(
            store
                .create_subagent_chat(&new_chat("half2"), &link("half2"), &task())
                .await
                .is_err()
        );
        assert_eq!(store.get_chat("half2").await.unwrap(), None);

        // A link naming another chat is refused before anything is written.
        let err = store
            .create_subagent_chat(&new_chat("x"), &link("y"), &task())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("'y'"), "{err}");
        assert_eq!(store.get_chat("x").await.unwrap(), None);
    }
}
