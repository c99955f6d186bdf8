//! Memory: core blocks (persona, user, facts, context) and archival entries with a full-text
//! index (FTS5, BM25 ranking) and optional embeddings (little-endian `f32` blobs).

use crate::error::DbContext;
use crate::{Store, StoreError, parse_ts, ts};
use chrono::{DateTime, Utc};
use sqlx::Row;

/// The core memory blocks, in the order the system prompt shows them.
pub const MEMORY_BLOCKS: &[&str] = &["persona", "user", "facts", "context"];

/// An archival entry to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewArchival {
    /// Whose memory it is.
    pub user_id: String,
    /// The chat it came from, if any.
    pub chat_id: Option<String>,
    /// How it was written: `tool` (explicit), `summary` (end of a chat)...
    pub source: String,
    /// The text.
    pub content: String,
    /// Its embedding, if an embedder is configured.
    pub embedding: Option<Vec<f32>>,
}

/// A stored archival entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchivalEntry {
    /// Row id.
    pub id: i64,
    /// The chat it came from.
    pub chat_id: Option<String>,
    /// How it was written.
    pub source: String,
    /// The text.
    pub content: String,
    /// When it was stored.
    pub created_at: DateTime<Utc>,
}

/// An archival entry that has no embedding yet (or one from another model).
#[derive(Debug, Clone, PartialEq)]
pub struct UnembeddedEntry {
    /// Row id.
    pub id: i64,
    /// Whose memory it is.
    pub user_id: String,
    /// The text to embed.
    pub content: String,
}

/// One full-text hit: the entry id and its BM25 score (higher is better).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FtsHit {
    /// Row id.
    pub id: i64,
    /// BM25 relevance, negated from SQLite's so that higher is better.
    pub score: f64,
}

/// The FTS5 query for free text: every word quoted (no FTS syntax reaches SQLite), joined by OR
/// so that BM25 ranks entries by how many and how rare the shared terms are. `None` when the
/// text has no word.
pub fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{}\"", w.to_lowercase()))
        .collect();
    (!words.is_empty()).then(|| words.join(" OR "))
}

/// Bytes of an embedding blob of `dims` values (little-endian `f32`).
fn blob_len(dims: usize) -> i64 {
    i64::try_from(dims.saturating_mul(4)).unwrap_or(i64::MAX)
}

pub(crate) fn encode_embedding(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Decodes an embedding blob written by this module.
pub fn decode_embedding(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl Store {
    /// The user's core blocks that have content, as `(block, content)` in [`MEMORY_BLOCKS`] order.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn memory_blocks(&self, user_id: &str) -> Result<Vec<(String, String)>, StoreError> {
        let rows = sqlx::query("SELECT block, content FROM memory_blocks WHERE user_id = ?")
            .bind(user_id)
            .fetch_all(&mut *self.read_conn().await?)
            .await
            .db(|| format!("reading the memory blocks of '{user_id}'"))?;
        let mut blocks = Vec::new();
        for row in rows {
            let block: String = row.try_get("block").db(|| "reading memory_blocks".into())?;
            let content: String = row
                .try_get("content")
                .db(|| "reading memory_blocks".into())?;
            blocks.push((block, content));
        }
        blocks.sort_by_key(|(b, _)| MEMORY_BLOCKS.iter().position(|k| k == b));
        Ok(blocks)
    }

    /// Sets a core block's content (an empty text clears it).
    ///
    /// Errors: [`StoreError::Conflict`] for a block not in [`MEMORY_BLOCKS`],
    /// [`StoreError::Database`].
    pub async fn set_memory_block(
        &self,
        user_id: &str,
        block: &str,
        content: &str,
    ) -> Result<(), StoreError> {
        if !MEMORY_BLOCKS.contains(&block) {
            return Err(StoreError::Conflict {
                message: format!(
                    "unknown memory block '{block}'; the blocks are {}",
                    MEMORY_BLOCKS.join(", ")
                ),
            });
        }
        sqlx::query(
            "INSERT INTO memory_blocks (user_id, block, content, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (user_id, block) DO UPDATE SET content = excluded.content,
             updated_at = excluded.updated_at",
        )
        .bind(user_id)
        .bind(block)
        .bind(content)
        .bind(ts(&self.now()))
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("storing memory block '{block}' of '{user_id}'"))?;
        Ok(())
    }

    /// Stores archival entries in one transaction; returns their ids in order.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn add_archival(&self, entries: &[NewArchival]) -> Result<Vec<i64>, StoreError> {
        let mut tx = self
            .begin_write(|| "storing archival memory".to_string())
            .await?;
        let now = ts(&self.now());
        let mut ids = Vec::with_capacity(entries.len());
        for e in entries {
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
            .db(|| "storing an archival memory entry".to_string())?;
            ids.push(id);
        }
        tx.commit()
            .await
            .db(|| "committing archival memory".to_string())?;
        Ok(ids)
    }

    /// Full-text search of the user's archive: the best `limit` entries by BM25.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn search_archival_text(
        &self,
        user_id: &str,
        query: &str,
        limit: usize,
    ) -> Result<Vec<FtsHit>, StoreError> {
        let Some(fts) = fts_query(query) else {
            return Ok(Vec::new());
        };
        let rows = sqlx::query(
            "SELECT a.id AS id, bm25(memory_archive_fts) AS rank
             FROM memory_archive_fts JOIN memory_archive a ON a.id = memory_archive_fts.rowid
             WHERE memory_archive_fts MATCH ? AND a.user_id = ?
             ORDER BY rank LIMIT ?",
        )
        .bind(&fts)
        .bind(user_id)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| format!("searching archival memory for '{query}'"))?;
        rows.iter()
            .map(|r| {
                Ok(FtsHit {
                    id: r.try_get("id").db(|| "reading an FTS hit".into())?,
                    score: -r
                        .try_get::<f64, _>("rank")
                        .db(|| "reading an FTS hit".into())?,
                })
            })
            .collect()
    }

    /// The user's embeddings with an id above `after_id`, in id order (for loading a vector
    /// index once and then incrementally).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn archival_embeddings(
        &self,
        user_id: &str,
        after_id: i64,
    ) -> Result<Vec<(i64, Vec<f32>)>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, embedding FROM memory_archive
             WHERE user_id = ? AND id > ? AND embedding IS NOT NULL ORDER BY id",
        )
        .bind(user_id)
        .bind(after_id)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading the archival embeddings of '{user_id}'"))?;
        rows.iter()
            .map(|r| {
                let id: i64 = r.try_get("id").db(|| "reading an embedding".into())?;
                let blob: Vec<u8> = r
                    .try_get("embedding")
                    .db(|| "reading an embedding".into())?;
                Ok((id, decode_embedding(&blob)))
            })
            .collect()
    }

    /// The entries with these ids (missing ids are skipped), in the order given.
    ///
    /// Errors: [`StoreError::Corrupt`] for a bad timestamp, [`StoreError::Database`].
    pub async fn archival_entries(&self, ids: &[i64]) -> Result<Vec<ArchivalEntry>, StoreError> {
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let row = sqlx::query(
                "SELECT id, chat_id, source, content, created_at FROM memory_archive WHERE id = ?",
            )
            .bind(id)
            .fetch_optional(&mut *self.read_conn().await?)
            .await
            .db(|| format!("reading archival entry {id}"))?;
            let Some(row) = row else { continue };
            let created: String = row.try_get("created_at").db(|| "reading an entry".into())?;
            out.push(ArchivalEntry {
                id,
                chat_id: row.try_get("chat_id").db(|| "reading an entry".into())?,
                source: row.try_get("source").db(|| "reading an entry".into())?,
                content: row.try_get("content").db(|| "reading an entry".into())?,
                created_at: parse_ts(&created, || format!("memory_archive row {id} (created_at)"))?,
            });
        }
        Ok(out)
    }

    /// Entries of every user that need an embedding from a model whose vectors have `dims`
    /// values: those with none, and (when `dims` is not 0) those holding a vector of another
    /// length, which another model wrote. Only ids above `after_id`, in id order, at most
    /// `limit` (for embedding them in batches).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn archival_needing_embedding(
        &self,
        dims: usize,
        after_id: i64,
        limit: usize,
    ) -> Result<Vec<UnembeddedEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, user_id, content FROM memory_archive
             WHERE id > ? AND (embedding IS NULL OR (? > 0 AND length(embedding) != ?))
             ORDER BY id LIMIT ?",
        )
        .bind(after_id)
        .bind(blob_len(dims))
        .bind(blob_len(dims))
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "reading the archival entries without an embedding".to_string())?;
        rows.iter()
            .map(|r| {
                Ok(UnembeddedEntry {
                    id: r.try_get("id").db(|| "reading an entry".into())?,
                    user_id: r.try_get("user_id").db(|| "reading an entry".into())?,
                    content: r.try_get("content").db(|| "reading an entry".into())?,
                })
            })
            .collect()
    }

    /// How many of the user's entries need an embedding from a model of `dims` dimensions (the
    /// rule of [`Store::archival_needing_embedding`]).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn archival_needing_embedding_count(
        &self,
        user_id: &str,
        dims: usize,
    ) -> Result<i64, StoreError> {
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM memory_archive
             WHERE user_id = ? AND (embedding IS NULL OR (? > 0 AND length(embedding) != ?))",
        )
        .bind(user_id)
        .bind(blob_len(dims))
        .bind(blob_len(dims))
        .fetch_one(&mut *self.read_conn().await?)
        .await
        .db(|| format!("counting the archival entries of '{user_id}' without an embedding"))
    }

    /// Stores the embeddings of existing entries, `(id, vector)`, in one transaction (replacing
    /// any vector they held). Returns the ids that were updated, in order; ids of entries that
    /// no longer exist are left out.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn set_archival_embeddings(
        &self,
        vectors: &[(i64, Vec<f32>)],
    ) -> Result<Vec<i64>, StoreError> {
        let mut tx = self
            .begin_write(|| "storing archival embeddings".to_string())
            .await?;
        let mut updated = Vec::with_capacity(vectors.len());
        for (id, vector) in vectors {
            let done = sqlx::query("UPDATE memory_archive SET embedding = ? WHERE id = ?")
                .bind(encode_embedding(vector))
                .bind(id)
                .execute(&mut *tx)
                .await
                .db(|| format!("storing the embedding of archival entry {id}"))?;
            if done.rows_affected() > 0 {
                updated.push(*id);
            }
        }
        tx.commit()
            .await
            .db(|| "committing archival embeddings".to_string())?;
        Ok(updated)
    }

    /// How many archival entries the user has.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn archival_count(&self, user_id: &str) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT COUNT(*) FROM memory_archive WHERE user_id = ?")
            .bind(user_id)
            .fetch_one(&mut *self.read_conn().await?)
            .await
            .db(|| format!("counting the archival memory of '{user_id}'"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    fn entry(content: &str) -> NewArchival {
        NewArchival {
            user_id: "u".into(),
            chat_id: None,
            source: "tool".into(),
            content: content.into(),
            embedding: Some(vec![0.5, -1.0]),
        }
    }

    #[tokio::test]
    async fn full_text_search_ranks_entries_sharing_rarer_terms_first() {
        let store = Store::open_in_memory().await.unwrap();
        let ids = store
            .add_archival(&[
                entry("The cat sat on the mat"),
                entry("Invoices are due on the fifth of each month"),
                entry("The dog chased the cat"),
            ])
            .await
            .unwrap();
        let hits = store
            .search_archival_text("u", "when are invoices due?", 10)
            .await
            .unwrap();
        assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), vec![ids[1]]);
        // FTS syntax in the query is quoted, not interpreted.
        assert!(
            store
                .search_archival_text("u", "cat AND \"(", 10)
                .await
                .is_ok()
        );
        assert_eq!(
            store
                .search_archival_text("other", "cat", 10)
                .await
                .unwrap(),
            vec![]
        );
        let embeddings = store.archival_embeddings("u", ids[0]).await.unwrap();
        assert_eq!(
            embeddings,
            vec![(ids[1], vec![0.5, -1.0]), (ids[2], vec![0.5, -1.0])]
        );
    }

    #[tokio::test]
    async fn entries_without_a_vector_of_the_current_length_are_listed_in_batches_and_backfilled() {
        let store = Store::open_in_memory().await.unwrap();
        let with = |user: &str, content: &str, embedding: Option<Vec<f32>>| NewArchival {
            user_id: user.into(),
            embedding,
            ..entry(content)
        };
        let ids = store
            .add_archival(&[
                with("u", "stored before any model", None),
                with("u", "stored with the current model", Some(vec![0.6, 0.8])),
                with("u", "stored with another model", Some(vec![1.0, 0.0, 0.0])),
                with("v", "another user's old entry", None),
            ])
            .await
            .unwrap();
        let listed = |dims, after, limit| {
            let store = store.clone();
            async move {
                store
                    .archival_needing_embedding(dims, after, limit)
                    .await
                    .unwrap()
                    .iter()
                    .map(|e| (e.id, e.user_id.clone()))
                    .collect::<Vec<_>>()
            }
        };
        assert_eq!(
            listed(2, 0, 10).await,
            vec![
                (ids[0], "u".into()),
                (ids[2], "u".into()),
                (ids[3], "v".into())
            ]
        );
        // Dimensions not known yet (a provider before its first answer): only missing vectors.
        assert_eq!(
            listed(0, 0, 10).await,
            vec![(ids[0], "u".into()), (ids[3], "v".into())]
        );
        assert_eq!(listed(2, ids[0], 1).await, vec![(ids[2], "u".into())]);
        assert_eq!(
            store
                .archival_needing_embedding_count("u", 2)
                .await
                .unwrap(),
            2
        );
        let first = store.archival_needing_embedding(2, 0, 1).await.unwrap();
        assert_eq!(first[0].content, "stored before any model");

        let updated = store
            .set_archival_embeddings(&[
                (ids[0], vec![1.0, 0.0]),
                (ids[2], vec![0.0, 1.0]),
                (9_999, vec![1.0, 0.0]),
            ])
            .await
            .unwrap();
        assert_eq!(
            updated,
            vec![ids[0], ids[2]],
            "a missing id is not reported"
        );
        assert_eq!(listed(2, 0, 10).await, vec![(ids[3], "v".into())]);
        assert_eq!(
            store
                .archival_needing_embedding_count("u", 2)
                .await
                .unwrap(),
            0
        );
        assert_eq!(
            store.archival_embeddings("u", 0).await.unwrap(),
            vec![
                (ids[0], vec![1.0, 0.0]),
                (ids[1], vec![0.6, 0.8]),
                (ids[2], vec![0.0, 1.0])
            ]
        );
        // Storing a vector leaves the full-text index alone.
        let hits = store
            .search_archival_text("u", "before any model", 10)
            .await
            .unwrap();
        assert_eq!(hits[0].id, ids[0]);
    }

    #[tokio::test]
    async fn core_blocks_come_back_in_prompt_order_and_unknown_blocks_are_refused() {
        let store = Store::open_in_memory().await.unwrap();
        store
            .set_memory_block("u", "facts", "likes tea")
            .await
            .unwrap();
        store
            .set_memory_block("u", "persona", "terse")
            .await
            .unwrap();
        assert_eq!(
            store.memory_blocks("u").await.unwrap(),
            vec![
                ("persona".into(), "terse".into()),
                ("facts".into(), "likes tea".into())
            ]
        );
        assert!(store.set_memory_block("u", "secrets", "x").await.is_err());
    }
}
