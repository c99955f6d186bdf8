//! Pending approvals and their answers.

use crate::error::{DbContext, is_foreign_key_violation};
use crate::{
    ApprovalRecord, ApprovalStatus, PendingApproval, Store, StoreError, decode_json, encode_json,
    parse_ts, ts,
};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use suzent_core::ApprovalActionId;

const APPROVAL_COLUMNS: &str = "id, chat_id, run_id, tool_call_id, tool_name, args, decision, status, action, \
                                feedback, created_at, resolved_at";

impl Store {
    /// Stores a pending approval. Idempotent: inserting the same approval again is a no-op
    /// (whatever its status now).
    ///
    /// Errors: [`StoreError::Conflict`] if an approval with this id exists with different
    /// content, [`StoreError::NotFound`] (`what: "chat"`) if the chat does not exist,
    /// [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn insert_pending_approval(
        &self,
        approval: &PendingApproval,
    ) -> Result<(), StoreError> {
        let id = &approval.id;
        let args = encode_json(&approval.args, || format!("args of approval '{id}'"))?;
        let decision = encode_json(&approval.decision, || {
            format!("decision of approval '{id}'")
        })?;
        let result = sqlx::query(
            "INSERT INTO approvals (id, chat_id, run_id, tool_call_id, tool_name, args, decision, status, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(id)
        .bind(&approval.chat_id)
        .bind(&approval.run_id)
        .bind(&approval.tool_call_id)
        .bind(&approval.tool_name)
        .bind(args)
        .bind(decision)
        .bind(ts(&approval.created_at))
        .execute(&mut *self.write_conn().await?)
        .await;
        let inserted = match result {
            Ok(done) => done.rows_affected() == 1,
            Err(e) if is_foreign_key_violation(&e) => {
                return Err(StoreError::NotFound {
                    what: "chat",
                    id: approval.chat_id.clone(),
                });
            }
            Err(e) => return Err(e).db(|| format!("storing approval '{id}'")),
        };
        if inserted {
            return Ok(());
        }
        match self.get_approval(id).await? {
            Some(existing) if existing.approval == *approval => Ok(()),
            Some(_) => Err(StoreError::Conflict {
                message: format!("approval '{id}' already exists with different content"),
            }),
            // Deleted (with its chat) between the two statements.
            None => Err(StoreError::Conflict {
                message: format!("approval '{id}' was removed while being stored"),
            }),
        }
    }

    /// Pending approvals, oldest first: of one chat, or of every chat with `None`.
    ///
    /// Errors: [`StoreError::Corrupt`] naming the approval if a column cannot be decoded,
    /// [`StoreError::Database`].
    pub async fn pending_approvals(
        &self,
        chat_id: Option<&str>,
    ) -> Result<Vec<PendingApproval>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals
             WHERE status = 'pending' AND (? IS NULL OR chat_id = ?)
             ORDER BY created_at, rowid"
        ))
        .bind(chat_id)
        .bind(chat_id)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing pending approvals".to_string())?;
        rows.iter()
            .map(|row| approval_from_row(row).map(|r| r.approval))
            .collect()
    }

    /// The approval with this id, pending or resolved, or `None`.
    ///
    /// Errors: [`StoreError::Corrupt`] naming the approval if a column cannot be decoded,
    /// [`StoreError::Database`].
    pub async fn get_approval(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = ?"
        ))
        .bind(id)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading approval '{id}'"))?;
        row.as_ref().map(approval_from_row).transpose()
    }

    /// Answers an approval: atomically moves it from pending to resolved with the action, the
    /// feedback and the time. Returns `false` (and changes nothing) if it is not pending: already
    /// resolved (a stale or repeated answer) or unknown.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn resolve_approval(
        &self,
        id: &str,
        action: ApprovalActionId,
        feedback: Option<&str>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE approvals SET status = 'resolved', action = ?, feedback = ?, resolved_at = ?
             WHERE id = ? AND status = 'pending'",
        )
        .bind(action.as_str())
        .bind(feedback)
        .bind(ts(&self.now()))
        .bind(id)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("resolving approval '{id}'"))?;
        Ok(done.rows_affected() == 1)
    }
}

fn approval_from_row(row: &SqliteRow) -> Result<ApprovalRecord, StoreError> {
    let id: String = row
        .try_get("id")
        .db(|| "reading an approvals row".to_string())?;
    let read = |col: &str| format!("reading column {col} of approval '{id}'");
    let what = |col: &str| format!("approvals row '{id}' ({col})");
    let args: String = row.try_get("args").db(|| read("args"))?;
    let decision: String = row.try_get("decision").db(|| read("decision"))?;
    let status: String = row.try_get("status").db(|| read("status"))?;
    let action: Option<String> = row.try_get("action").db(|| read("action"))?;
    let created_at: String = row.try_get("created_at").db(|| read("created_at"))?;
    let resolved_at: Option<String> = row.try_get("resolved_at").db(|| read("resolved_at"))?;
    let status = match status.as_str() {
        "pending" => ApprovalStatus::Pending,
        "resolved" => ApprovalStatus::Resolved,
        other => {
            return Err(StoreError::Corrupt {
                what: what("status"),
                message: format!("unknown status '{other}'"),
            });
        }
    };
    let action = action
        .as_deref()
        .map(|a| {
            ApprovalActionId::parse(a).map_err(|message| StoreError::Corrupt {
                what: what("action"),
                message,
            })
        })
        .transpose()?;
    Ok(ApprovalRecord {
        approval: PendingApproval {
            chat_id: row.try_get("chat_id").db(|| read("chat_id"))?,
            run_id: row.try_get("run_id").db(|| read("run_id"))?,
            tool_call_id: row.try_get("tool_call_id").db(|| read("tool_call_id"))?,
            tool_name: row.try_get("tool_name").db(|| read("tool_name"))?,
            args: decode_json(&args, || what("args"))?,
            decision: decode_json(&decision, || what("decision"))?,
            created_at: parse_ts(&created_at, || what("created_at"))?,
            id: id.clone(),
        },
        status,
        action,
        feedback: row.try_get("feedback").db(|| read("feedback"))?,
        resolved_at: resolved_at
            .as_deref()
            .map(|t| parse_ts(t, || what("resolved_at")))
            .transpose()?,
    })
}
