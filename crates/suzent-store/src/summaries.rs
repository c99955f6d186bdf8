//! End-of-chat summaries: which part of each chat's transcript has been summarized into archival
//! memory (table `chat_summaries`), so that a summary is written once per new stretch of
//! conversation.

use crate::error::DbContext;
use crate::memory::encode_embedding;
use crate::{NewArchival, Store, StoreError, parse_ts, ts};
use chrono::{DateTime, Utc};
use sqlx::Row;

/// The `source` of the archival entries that are end-of-chat summaries (deleted with their
/// chat, see [`Store::delete_chat`]).
pub const SUMMARY_SOURCE: &str = "summary";

/// A chat with transcript messages after its last summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryDue {
    /// The chat.
    pub chat_id: String,
    /// The last position the summaries cover (0: never summarized).
    pub summarized_through: i64,
    /// The position of the chat's newest message.
    pub last_seq: i64,
    /// When the newest message was stored.
    pub last_at: DateTime<Utc>,
}

/// What [`Store::record_chat_summary`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryRecord {
    /// The mark moved to the new position; the id of the stored entry, if one was given.
    Recorded(Option<i64>),
    /// A summary already covers that position (written meanwhile by another task or process):
    /// nothing was stored.
    AlreadyCovered,
}

impl Store {
    /// Chats whose newest message is after their last summary and was stored at or before
    /// `idle_since`, least recently active first, at most `limit`, leaving out the chats in
    /// `skip` (e.g. those whose summary just failed) before the limit applies, so skipped chats
    /// never take the places of others.
    ///
    /// Errors: [`StoreError::Corrupt`] for an unreadable timestamp, [`StoreError::Database`].
    pub async fn chats_due_for_summary(
        &self,
        idle_since: DateTime<Utc>,
        limit: u32,
        skip: &[String],
    ) -> Result<Vec<SummaryDue>, StoreError> {
        let skip = serde_json::to_string(skip).map_err(|e| StoreError::Corrupt {
            what: "the chats to skip in the summary sweep".into(),
            message: e.to_string(),
        })?;
        // The newest message of each chat is found through the (chat_id, seq) unique index.
        let rows = sqlx::query(
            "SELECT c.id AS chat_id, COALESCE(s.through_seq, 0) AS through_seq,
                    m.seq AS last_seq, m.created_at AS last_at
             FROM chats c
             JOIN messages m
               ON m.chat_id = c.id AND m.seq = (SELECT MAX(seq) FROM messages WHERE chat_id = c.id)
             LEFT JOIN chat_summaries s ON s.chat_id = c.id
             WHERE m.seq > COALESCE(s.through_seq, 0) AND m.created_at <= ?
               AND c.id NOT IN (SELECT value FROM json_each(?))
             ORDER BY m.created_at
             LIMIT ?",
        )
        .bind(ts(&idle_since))
        .bind(skip)
        .bind(i64::from(limit))
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "finding chats due for a summary".to_string())?;
        rows.iter()
            .map(|row| {
                let read = || "reading a chat due for a summary".to_string();
                let chat_id: String = row.try_get("chat_id").db(read)?;
                let last_at: String = row.try_get("last_at").db(read)?;
                Ok(SummaryDue {
                    summarized_through: row.try_get("through_seq").db(read)?,
                    last_seq: row.try_get("last_seq").db(read)?,
                    last_at: parse_ts(&last_at, || {
                        format!("messages row of chat '{chat_id}' (created_at)")
                    })?,
                    chat_id,
                })
            })
            .collect()
    }

    /// The last transcript position covered by the chat's summaries (0: never summarized).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn summarized_through(&self, chat_id: &str) -> Result<i64, StoreError> {
        let through: Option<i64> =
            sqlx::query_scalar("SELECT through_seq FROM chat_summaries WHERE chat_id = ?")
                .bind(chat_id)
                .fetch_optional(&mut *self.read_conn().await?)
                .await
                .db(|| format!("reading the summary mark of chat '{chat_id}'"))?;
        Ok(through.unwrap_or(0))
    }

    /// Marks the chat summarized through `through_seq` and stores `entry` (the summary) in
    /// archival memory, in one transaction: either both happen or neither. When a summary
    /// already covers `through_seq`, nothing is stored ([`SummaryRecord::AlreadyCovered`]), so
    /// two writers racing on the same stretch store it once. `entry` is `None` for a stretch
    /// with nothing worth summarizing (only the mark moves).
    ///
    /// Errors: [`StoreError::NotFound`] (`what: "chat"`) if there is no such chat,
    /// [`StoreError::Database`].
    pub async fn record_chat_summary(
        &self,
        chat_id: &str,
        through_seq: i64,
        entry: Option<&NewArchival>,
    ) -> Result<SummaryRecord, StoreError> {
        let context = || format!("recording a summary of chat '{chat_id}'");
        let mut tx = self.begin_write(context).await?;
        crate::require_chat(&mut tx, chat_id, context).await?;
        let current: Option<i64> =
            sqlx::query_scalar("SELECT through_seq FROM chat_summaries WHERE chat_id = ?")
                .bind(chat_id)
                .fetch_optional(&mut *tx)
                .await
                .db(context)?;
        if current.is_some_and(|c| c >= through_seq) {
            return Ok(SummaryRecord::AlreadyCovered);
        }
        let now = ts(&self.now());
        let mut archival_id = None;
        if let Some(e) = entry {
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO memory_archive (user_id, chat_id, source, content, embedding, created_at)
                 VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
            )
            .bind(&e.user_id)
            .bind(&e.chat_id)
            .bind(&e.source)
            .bind(&e.content)
            .bind(e.embedding.as_deref().map(encode_embedding))
            .bind(&now)
            .fetch_one(&mut *tx)
            .await
            .db(context)?;
            archival_id = Some(id);
        }
        sqlx::query(
            "INSERT INTO chat_summaries (chat_id, through_seq, archival_id, summarized_at)
             VALUES (?, ?, ?, ?)
             ON CONFLICT (chat_id) DO UPDATE SET through_seq = excluded.through_seq,
                 archival_id = excluded.archival_id, summarized_at = excluded.summarized_at",
        )
        .bind(chat_id)
        .bind(through_seq)
        .bind(archival_id)
        .bind(&now)
        .execute(&mut *tx)
        .await
        .db(context)?;
        tx.commit().await.db(context)?;
        Ok(SummaryRecord::Recorded(archival_id))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::NewChat;
    use pretty_assertions::assert_eq;
    use suzent_core::{ChatMessage, PermissionMode};

    async fn chat_with_messages(store: &Store, n: usize) -> String {
        let chat = store
            .create_chat(&NewChat {
                id: suzent_core::new_id(),
                title: "t".into(),
                workspace: "/w".into(),
                model: None,
                mode: PermissionMode::Default,
                tools: None,
            })
            .await
            .unwrap();
        for i in 0..n {
            store
                .append_message(
                    &chat.id,
                    None,
                    &ChatMessage::User {
                        text: format!("m{i}"),
                        attachments: Vec::new(),
                    },
                )
                .await
                .unwrap();
        }
        chat.id
    }

    fn entry(chat: &str, text: &str) -> NewArchival {
        NewArchival {
            user_id: "u".into(),
            chat_id: Some(chat.into()),
            source: "summary".into(),
            content: text.into(),
            embedding: None,
        }
    }

    #[tokio::test]
    async fn a_stretch_is_recorded_once_and_new_messages_make_the_chat_due_again() {
        let store = Store::open_in_memory().await.unwrap();
        let chat = chat_with_messages(&store, 2).await;
        let empty = chat_with_messages(&store, 0).await;
        let later = Utc::now() + chrono::TimeDelta::seconds(1);
        let due = store.chats_due_for_summary(later, 10, &[]).await.unwrap();
        assert_eq!(
            due.iter()
                .map(|d| (d.chat_id.as_str(), d.summarized_through, d.last_seq))
                .collect::<Vec<_>>(),
            vec![(chat.as_str(), 0, 2)],
            "a chat without messages is never due: {empty}"
        );
        let earlier = due[0].last_at - chrono::TimeDelta::milliseconds(1);
        assert_eq!(
            store.chats_due_for_summary(earlier, 10, &[]).await.unwrap(),
            Vec::new(),
            "not idle long enough"
        );

        let first = store
            .record_chat_summary(&chat, 2, Some(&entry(&chat, "one")))
            .await
            .unwrap();
        let SummaryRecord::Recorded(Some(id)) = first else {
            panic!("{first:?}")
        };
        assert_eq!(
            store
                .record_chat_summary(&chat, 2, Some(&entry(&chat, "again")))
                .await
                .unwrap(),
            SummaryRecord::AlreadyCovered
        );
        assert_eq!(store.archival_count("u").await.unwrap(), 1);
        assert_eq!(
            store.archival_entries(&[id]).await.unwrap()[0].content,
            "one"
        );
        assert_eq!(store.summarized_through(&chat).await.unwrap(), 2);
        assert!(
            store
                .chats_due_for_summary(later, 10, &[])
                .await
                .unwrap()
                .is_empty()
        );

        store
            .append_message(
                &chat,
                None,
                &ChatMessage::User {
                    text: "m3".into(),
                    attachments: Vec::new(),
                },
            )
            .await
            .unwrap();
        let now = Utc::now() + chrono::TimeDelta::seconds(1);
        let due = store.chats_due_for_summary(now, 10, &[]).await.unwrap();
        assert_eq!((due[0].summarized_through, due[0].last_seq), (2, 3));
    }

    #[tokio::test]
    async fn skipped_chats_do_not_take_the_places_of_other_due_chats() {
        let store = Store::open_in_memory().await.unwrap();
        let mut chats = Vec::new();
        for _ in 0..4 {
            chats.push(chat_with_messages(&store, 1).await);
        }
        let later = Utc::now() + chrono::TimeDelta::seconds(1);
        let ids = |due: Vec<SummaryDue>| due.into_iter().map(|d| d.chat_id).collect::<Vec<_>>();
        // Oldest first: the first two fill a batch of two.
        assert_eq!(
            ids(store.chats_due_for_summary(later, 2, &[]).await.unwrap()),
            chats[..2]
        );
        // With those two skipped (their summaries keep failing) the batch holds the others.
        assert_eq!(
            ids(store
                .chats_due_for_summary(later, 2, &chats[..2])
                .await
                .unwrap()),
            chats[2..]
        );
        assert!(
            store
                .chats_due_for_summary(later, 2, &chats)
                .await
                .unwrap()
                .is_empty()
        );
    }

    #[tokio::test]
    async fn deleting_a_chat_removes_its_summaries_but_not_deliberate_entries() {
        let store = Store::open_in_memory().await.unwrap();
        let chat = chat_with_messages(&store, 1).await;
        let other = chat_with_messages(&store, 1).await;
        store
            .record_chat_summary(&chat, 1, Some(&entry(&chat, "the secret is 42")))
            .await
            .unwrap();
        store
            .record_chat_summary(&other, 1, Some(&entry(&other, "other chat")))
            .await
            .unwrap();
        let kept = store
            .add_archival(&[NewArchival {
                source: "agent".into(),
                ..entry(&chat, "archived on purpose")
            }])
            .await
            .unwrap()[0];
        assert_eq!(store.archival_count("u").await.unwrap(), 3);
        store.delete_chat(&chat).await.unwrap();
        assert_eq!(store.archival_count("u").await.unwrap(), 2);
        let found = store.search_archival_text("u", "secret", 10).await.unwrap();
        assert!(found.is_empty(), "{found:?}");
        assert_eq!(
            store.archival_entries(&[kept]).await.unwrap()[0].content,
            "archived on purpose"
        );
    }

    #[tokio::test]
    async fn recording_for_a_deleted_chat_is_not_found_and_stores_nothing() {
        let store = Store::open_in_memory().await.unwrap();
        let chat = chat_with_messages(&store, 1).await;
        store.delete_chat(&chat).await.unwrap();
        let err = store
            .record_chat_summary(&chat, 1, Some(&entry(&chat, "x")))
            .await
            .unwrap_err();
        assert!(
            matches!(err, StoreError::NotFound { what: "chat", .. }),
            "{err}"
        );
        assert_eq!(store.archival_count("u").await.unwrap(), 0);
    }
}
