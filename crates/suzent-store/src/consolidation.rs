//! Memory consolidation ("dream"): how many memories are new, and applying a consolidation —
//! duplicates replaced by one merged entry, the `facts` block rewritten — in one transaction, so
//! a consolidation that fails part-way changes nothing.

use crate::error::DbContext;
use crate::memory::ArchivalEntry;
use crate::{Store, StoreError, parse_ts, ts};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::Row;

/// Duplicates to replace by one entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Merge {
    /// The entries merged (all removed).
    pub ids: Vec<i64>,
    /// The merged text (stored as a new entry with source `dream`).
    pub text: String,
}

/// What a consolidation changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Consolidated {
    /// Each merge with the id of the entry that replaced its entries.
    pub merged: Vec<(Merge, i64)>,
    /// The `facts` block before and after, when it changed.
    pub facts: Option<(String, String)>,
}

impl Store {
    /// Archival entries of `user_id` stored after `since` (all when `None`).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn archival_added_since(
        &self,
        user_id: &str,
        since: Option<DateTime<Utc>>,
    ) -> Result<i64, StoreError> {
        let since = since.map(|s| ts(&s)).unwrap_or_default();
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM memory_archive WHERE user_id = ? AND created_at > ?",
        )
        .bind(user_id)
        .bind(since)
        .fetch_one(&mut *self.read_conn().await?)
        .await
        .db(|| format!("counting the new memories of '{user_id}'"))
    }

    /// The newest `limit` archival entries of `user_id`, newest first.
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn recent_archival(
        &self,
        user_id: &str,
        limit: u32,
    ) -> Result<Vec<ArchivalEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, chat_id, source, content, created_at FROM memory_archive
             WHERE user_id = ? ORDER BY id DESC LIMIT ?",
        )
        .bind(user_id)
        .bind(i64::from(limit))
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| format!("listing the memories of '{user_id}'"))?;
        rows.iter()
            .map(|row| {
                let id: i64 = row.get("id");
                Ok(ArchivalEntry {
                    id,
                    chat_id: row.get("chat_id"),
                    source: row.get("source"),
                    content: row.get("content"),
                    created_at: parse_ts(row.get("created_at"), || {
                        format!("memory_archive row {id} (created_at)")
                    })?,
                })
            })
            .collect()
    }

    /// Applies a consolidation of `user_id`'s memory in one transaction: each merge's entries
    /// are removed and one entry with its text is added (source `dream`, embedded later), and
    /// the `facts` block is set when `facts` is given. Every id must be an entry of `user_id`
    /// and appear in one merge only; otherwise nothing changes.
    ///
    /// Errors: [`StoreError::Conflict`] naming the bad id, [`StoreError::Database`].
    pub async fn apply_consolidation(
        &self,
        user_id: &str,
        chat_id: Option<&str>,
        merges: &[Merge],
        facts: Option<&str>,
    ) -> Result<Consolidated, StoreError> {
        let mut seen = std::collections::HashSet::new();
        for merge in merges {
            for id in &merge.ids {
                if !seen.insert(*id) {
                    return Err(StoreError::Conflict {
                        message: format!("memory {id} is in two merges"),
                    });
                }
            }
        }
        let mut tx = self
            .begin_write(|| format!("consolidating the memory of '{user_id}'"))
            .await?;
        let now = ts(&self.now());
        let mut merged = Vec::new();
        for merge in merges {
            for id in &merge.ids {
                let n = sqlx::query("DELETE FROM memory_archive WHERE id = ? AND user_id = ?")
                    .bind(id)
                    .bind(user_id)
                    .execute(&mut *tx)
                    .await
                    .db(|| format!("removing memory {id}"))?
                    .rows_affected();
                if n == 0 {
                    // Dropping the transaction rolls every change back.
                    return Err(StoreError::Conflict {
                        message: format!("memory {id} does not exist (or is not '{user_id}''s)"),
                    });
                }
            }
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO memory_archive (user_id, chat_id, source, content, embedding, created_at)
                 VALUES (?, ?, 'dream', ?, NULL, ?) RETURNING id",
            )
            .bind(user_id)
            .bind(chat_id)
            .bind(&merge.text)
            .bind(&now)
            .fetch_one(&mut *tx)
            .await
            .db(|| "storing a merged memory".to_string())?;
            merged.push((merge.clone(), id));
        }
        let mut facts_change = None;
        if let Some(new) = facts {
            let before: Option<String> = sqlx::query_scalar(
                "SELECT content FROM memory_blocks WHERE user_id = ? AND block = 'facts'",
            )
            .bind(user_id)
            .fetch_optional(&mut *tx)
            .await
            .db(|| "reading the facts block".to_string())?;
            let before = before.unwrap_or_default();
            if before != new {
                sqlx::query(
                    "INSERT INTO memory_blocks (user_id, block, content, updated_at)
                     VALUES (?, 'facts', ?, ?)
                     ON CONFLICT (user_id, block) DO UPDATE SET content = excluded.content,
                         updated_at = excluded.updated_at",
                )
                .bind(user_id)
                .bind(new)
                .bind(&now)
                .execute(&mut *tx)
                .await
                .db(|| "writing the facts block".to_string())?;
                facts_change = Some((before, new.to_string()));
            }
        }
        tx.commit()
            .await
            .db(|| format!("committing the consolidation of '{user_id}'"))?;
        Ok(Consolidated {
            merged,
            facts: facts_change,
        })
    }
}
