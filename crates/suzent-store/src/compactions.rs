//! Compaction records (table `compactions`, migration 0014): what a chat's requests send in
//! place of older history. The transcript itself is never changed.

use crate::error::DbContext;
use crate::{Store, StoreError, parse_ts, ts};
use sqlx::Row;
use suzent_core::CompactionInfo;

/// A compaction as stored: what it did and the summary it wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionRecord {
    /// What the `chat_compacted` event reports.
    pub info: CompactionInfo,
    /// The summary of messages `1..=info.summary_through_seq` (`None`: no summary yet).
    pub summary: Option<String>,
}

/// A compaction to store (the id and the time are the store's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCompaction {
    /// `auto`, `overflow` or `manual`.
    pub trigger: String,
    /// See [`CompactionInfo::cut_through_seq`].
    pub cut_through_seq: i64,
    /// See [`CompactionInfo::summary_through_seq`].
    pub summary_through_seq: i64,
    /// The summary (`None`: none yet).
    pub summary: Option<String>,
    /// See [`CompactionInfo::tool_outputs_cut`].
    pub tool_outputs_cut: u32,
    /// See [`CompactionInfo::messages_summarized`].
    pub messages_summarized: u32,
    /// See [`CompactionInfo::tokens_before`].
    pub tokens_before: u32,
    /// See [`CompactionInfo::tokens_after`].
    pub tokens_after: u32,
    /// See [`CompactionInfo::context_window`].
    pub context_window: u32,
}

const COLUMNS: &str = "id, trigger, cut_through_seq, summary_through_seq, summary, tool_outputs_cut, \
     messages_summarized, tokens_before, tokens_after, context_window, created_at";

impl Store {
    /// Stores a compaction of `chat_id`; it applies to the chat's requests from now on.
    ///
    /// Errors: [`StoreError::NotFound`] (`what: "chat"`) if there is no such chat,
    /// [`StoreError::Database`].
    pub async fn record_compaction(
        &self,
        chat_id: &str,
        new: &NewCompaction,
    ) -> Result<CompactionRecord, StoreError> {
        let context = || format!("recording a compaction of chat '{chat_id}'");
        let mut tx = self.begin_write(context).await?;
        crate::require_chat(&mut tx, chat_id, context).await?;
        let id = suzent_core::new_id();
        let now = self.now();
        sqlx::query(
            "INSERT INTO compactions (id, chat_id, trigger, cut_through_seq, summary_through_seq,
                 summary, tool_outputs_cut, messages_summarized, tokens_before, tokens_after,
                 context_window, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(chat_id)
        .bind(&new.trigger)
        .bind(new.cut_through_seq)
        .bind(new.summary_through_seq)
        .bind(&new.summary)
        .bind(i64::from(new.tool_outputs_cut))
        .bind(i64::from(new.messages_summarized))
        .bind(i64::from(new.tokens_before))
        .bind(i64::from(new.tokens_after))
        .bind(i64::from(new.context_window))
        .bind(ts(&now))
        .execute(&mut *tx)
        .await
        .db(context)?;
        tx.commit().await.db(context)?;
        Ok(CompactionRecord {
            info: CompactionInfo {
                id,
                trigger: new.trigger.clone(),
                cut_through_seq: new.cut_through_seq,
                summary_through_seq: new.summary_through_seq,
                tool_outputs_cut: new.tool_outputs_cut,
                messages_summarized: new.messages_summarized,
                tokens_before: new.tokens_before,
                tokens_after: new.tokens_after,
                context_window: new.context_window,
                created_at: ts(&now),
            },
            summary: new.summary.clone(),
        })
    }

    /// The chat's newest compaction (the one its requests apply), if any.
    ///
    /// Errors: [`StoreError::Corrupt`] for an unreadable row, [`StoreError::Database`].
    pub async fn latest_compaction(
        &self,
        chat_id: &str,
    ) -> Result<Option<CompactionRecord>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM compactions WHERE chat_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1"
        );
        let row = sqlx::query(&sql)
            .bind(chat_id)
            .fetch_optional(&mut *self.read_conn().await?)
            .await
            .db(|| format!("reading the compaction of chat '{chat_id}'"))?;
        row.map(|r| read_row(&r, chat_id)).transpose()
    }

    /// Every compaction of the chat, oldest first (the transcript's dividers).
    ///
    /// Errors: as [`Store::latest_compaction`].
    pub async fn compactions(&self, chat_id: &str) -> Result<Vec<CompactionRecord>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM compactions WHERE chat_id = ? ORDER BY created_at, rowid"
        );
        let rows = sqlx::query(&sql)
            .bind(chat_id)
            .fetch_all(&mut *self.read_conn().await?)
            .await
            .db(|| format!("reading the compactions of chat '{chat_id}'"))?;
        rows.iter().map(|r| read_row(r, chat_id)).collect()
    }
}

fn read_row(row: &sqlx::sqlite::SqliteRow, chat_id: &str) -> Result<CompactionRecord, StoreError> {
    let read = || format!("reading a compaction of chat '{chat_id}'");
    let count = |col: &str| -> Result<u32, StoreError> {
        let v: i64 = row.try_get(col).db(read)?;
        u32::try_from(v).map_err(|_| StoreError::Corrupt {
            what: format!("compactions row of chat '{chat_id}' ({col})"),
            message: format!("{v} is not a count"),
        })
    };
    let created_at: String = row.try_get("created_at").db(read)?;
    // Checked, then kept as stored (RFC 3339).
    parse_ts(&created_at, || {
        format!("compactions row of chat '{chat_id}' (created_at)")
    })?;
    Ok(CompactionRecord {
        info: CompactionInfo {
            id: row.try_get("id").db(read)?,
            trigger: row.try_get("trigger").db(read)?,
            cut_through_seq: row.try_get("cut_through_seq").db(read)?,
            summary_through_seq: row.try_get("summary_through_seq").db(read)?,
            tool_outputs_cut: count("tool_outputs_cut")?,
            messages_summarized: count("messages_summarized")?,
            tokens_before: count("tokens_before")?,
            tokens_after: count("tokens_after")?,
            context_window: count("context_window")?,
            created_at,
        },
        summary: row.try_get("summary").db(read)?,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::NewChat;
    use pretty_assertions::assert_eq;
    use suzent_core::PermissionMode;

    #[tokio::test]
    async fn the_newest_compaction_applies_and_all_are_kept_in_order() -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        let chat = store
            .create_chat(&NewChat {
                id: suzent_core::new_id(),
                title: "t".into(),
                workspace: "/w".into(),
                model: None,
                mode: PermissionMode::Default,
                tools: None,
            })
            .await?;
        assert_eq!(store.latest_compaction(&chat.id).await?, None);
        let new = |through: i64, summary: Option<&str>| NewCompaction {
            trigger: "auto".into(),
            cut_through_seq: through,
            summary_through_seq: if summary.is_some() { through } else { 0 },
            summary: summary.map(str::to_string),
            tool_outputs_cut: 2,
            messages_summarized: 0,
            tokens_before: 9_000,
            tokens_after: 3_000,
            context_window: 8_192,
        };
        let first = store.record_compaction(&chat.id, &new(4, None)).await?;
        let second = store
            .record_compaction(&chat.id, &new(10, Some("the task")))
            .await?;
        assert_eq!(
            store.latest_compaction(&chat.id).await?,
            Some(second.clone())
        );
        assert_eq!(store.compactions(&chat.id).await?, vec![first, second]);
        let missing = store.record_compaction("nope", &new(1, None)).await;
        assert!(matches!(
            missing,
            Err(StoreError::NotFound { what: "chat", .. })
        ));
        Ok(())
    }
}
