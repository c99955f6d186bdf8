//! Chat search: titles and the text of user and assistant messages (migration 0012, an FTS5
//! index with the trigram tokenizer kept in step by triggers).

use crate::error::DbContext;
use crate::{Store, StoreError};
use serde::{Deserialize, Serialize};
use sqlx::Row;

/// Opens a matched term in [`ChatSearchHit::snippet`] (U+0002, START OF TEXT).
pub const MATCH_START: char = '\u{2}';
/// Closes a matched term in [`ChatSearchHit::snippet`] (U+0003, END OF TEXT).
pub const MATCH_END: char = '\u{3}';

/// Characters of context kept on each side of a match in a snippet built outside FTS5.
const CONTEXT_CHARS: usize = 40;

/// One chat that matches a search: its best match (the title, or one message).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatSearchHit {
    /// The chat.
    pub chat_id: String,
    /// Its title.
    pub title: String,
    /// The matching message's position in the chat, or `None` when the title matched.
    pub seq: Option<i64>,
    /// The matching text around the match, each matched term between [`MATCH_START`] and
    /// [`MATCH_END`]; `…` where text was cut.
    pub snippet: String,
}

/// The words of a query, each quoted as an FTS5 phrase (so `"`, `*`, `-`, `AND` are plain
/// text), or `None` when a word is shorter than three characters (the trigram index cannot match
/// it; the search then scans with `LIKE`).
fn trigram_query(words: &[&str]) -> Option<String> {
    if words.iter().any(|w| w.chars().count() < 3) {
        return None;
    }
    Some(
        words
            .iter()
            .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// `text` cut to the first case-insensitive occurrence of `word` with some context, the
/// occurrence marked; `None` when it does not occur.
fn like_snippet(text: &str, word: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let needle = word.to_lowercase();
    // Lower-casing can change byte lengths: find the match by characters.
    let chars: Vec<char> = text.chars().collect();
    let lower_chars: Vec<char> = lower.chars().collect();
    let needle_chars: Vec<char> = needle.chars().collect();
    if lower_chars.len() != chars.len() || needle_chars.is_empty() {
        return Some(text.chars().take(2 * CONTEXT_CHARS).collect());
    }
    let at = lower_chars
        .windows(needle_chars.len())
        .position(|w| w == needle_chars.as_slice())?;
    let end = at + needle_chars.len();
    let from = at.saturating_sub(CONTEXT_CHARS);
    let to = (end + CONTEXT_CHARS).min(chars.len());
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    out.extend(&chars[from..at]);
    out.push(MATCH_START);
    out.extend(&chars[at..end]);
    out.push(MATCH_END);
    out.extend(&chars[end..to]);
    if to < chars.len() {
        out.push('…');
    }
    Some(out)
}

impl Store {
    /// Chats whose title or messages contain every word of `query` (case-insensitive
    /// substrings), best first (BM25, the title counting like a message; ties: the most recently
    /// updated chat), at most `limit` chats, each with its best match. An empty query finds
    /// nothing.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn search_chats(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<ChatSearchHit>, StoreError> {
        let words: Vec<&str> = query.split_whitespace().collect();
        if words.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let context = || format!("searching chats for '{query}'");
        // Several rows of one chat may match: read more than `limit` rows, keep one per chat.
        let rows_wanted = (limit * 8).min(2_000) as i64;
        let rows = match trigram_query(&words) {
            Some(fts) => sqlx::query(
                "SELECT s.chat_id, s.seq,
                        snippet(chat_search, 0, char(2), char(3), '…', 64) AS snippet,
                        c.title
                 FROM chat_search s JOIN chats c ON c.id = s.chat_id
                 WHERE chat_search MATCH ?
                 ORDER BY bm25(chat_search), c.updated_at DESC, s.seq
                 LIMIT ?",
            )
            .bind(fts)
            .bind(rows_wanted)
            .fetch_all(&mut *self.read_conn().await?)
            .await
            .db(context)?,
            None => {
                // Short words (two-letter words, most Chinese words): a scan, newest chats first.
                let mut sql = String::from(
                    "SELECT s.chat_id, s.seq, s.body AS snippet, c.title
                     FROM chat_search s JOIN chats c ON c.id = s.chat_id WHERE 1",
                );
                for _ in &words {
                    sql.push_str(" AND s.body LIKE ? ESCAPE '\\'");
                }
                sql.push_str(" ORDER BY c.updated_at DESC, s.seq IS NOT NULL, s.seq LIMIT ?");
                let mut q = sqlx::query(&sql);
                for w in &words {
                    let escaped = w
                        .replace('\\', "\\\\")
                        .replace('%', "\\%")
                        .replace('_', "\\_");
                    q = q.bind(format!("%{escaped}%"));
                }
                let rows = q
                    .bind(rows_wanted)
                    .fetch_all(&mut *self.read_conn().await?)
                    .await
                    .db(context)?;
                rows
            }
        };
        let short = trigram_query(&words).is_none();
        let mut hits: Vec<ChatSearchHit> = Vec::new();
        for row in rows {
            let chat_id: String = row.try_get("chat_id").db(context)?;
            if hits.iter().any(|h| h.chat_id == chat_id) {
                continue;
            }
            let body: String = row.try_get("snippet").db(context)?;
            let snippet = if short {
                like_snippet(&body, words[0]).unwrap_or(body)
            } else {
                body
            };
            hits.push(ChatSearchHit {
                chat_id,
                title: row.try_get("title").db(context)?,
                seq: row.try_get("seq").db(context)?,
                snippet,
            });
            if hits.len() == limit {
                break;
            }
        }
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::{ChatPatch, NewChat};
    use pretty_assertions::assert_eq;
    use suzent_core::{ChatMessage, PermissionMode};

    async fn chat(store: &Store, title: &str, messages: &[&str]) -> String {
        let chat = store
            .create_chat(&NewChat {
                id: suzent_core::new_id(),
                title: title.into(),
                workspace: "/w".into(),
                model: None,
                mode: PermissionMode::Default,
                tools: None,
            })
            .await
            .unwrap();
        for (i, text) in messages.iter().enumerate() {
            let message = if i % 2 == 0 {
                ChatMessage::User {
                    text: (*text).into(),
                    attachments: Vec::new(),
                }
            } else {
                ChatMessage::Assistant {
                    text: (*text).into(),
                    tool_calls: vec![],
                }
            };
            store
                .append_message(&chat.id, None, &message)
                .await
                .unwrap();
        }
        chat.id
    }

    fn marked(s: &str) -> String {
        s.replace(MATCH_START, "[").replace(MATCH_END, "]")
    }

    #[tokio::test]
    async fn a_chat_is_found_by_a_word_from_its_third_message() -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        let wanted = chat(
            &store,
            "Groceries",
            &[
                "list my groceries",
                "milk and bread",
                "also buy pomegranates please",
            ],
        )
        .await;
        chat(&store, "Other", &["nothing to see", "really nothing"]).await;
        let hits = store.search_chats("pomegranate", 10).await?;
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].chat_id, wanted);
        assert_eq!(hits[0].seq, Some(3));
        assert_eq!(marked(&hits[0].snippet), "also buy [pomegranate]s please");
        Ok(())
    }

    #[tokio::test]
    async fn titles_match_and_follow_a_rename() -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        let id = chat(&store, "Quarterly report", &["hello"]).await;
        assert_eq!(store.search_chats("quarterly", 10).await?[0].seq, None);
        store
            .update_chat(
                &id,
                &ChatPatch {
                    title: Some("Holiday plans".into()),
                    ..ChatPatch::default()
                },
            )
            .await?;
        assert_eq!(store.search_chats("quarterly", 10).await?, vec![]);
        assert_eq!(store.search_chats("holiday", 10).await?[0].chat_id, id);
        Ok(())
    }

    #[tokio::test]
    async fn every_word_must_match_and_query_syntax_is_plain_text() -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        let id = chat(&store, "t", &["deploy the \"staging\" server", "ok"]).await;
        assert_eq!(
            store.search_chats("staging server", 10).await?[0].chat_id,
            id
        );
        assert_eq!(store.search_chats("staging production", 10).await?, vec![]);
        // FTS5 operators and quotes are searched for, not interpreted.
        assert_eq!(store.search_chats("\"staging\" OR", 10).await?, vec![]);
        assert_eq!(store.search_chats("NOT*", 10).await?, vec![]);
        Ok(())
    }

    #[tokio::test]
    async fn short_and_chinese_words_are_found_by_a_scan() -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        let id = chat(&store, "笔记", &["请帮我整理会议记录", "好的"]).await;
        let hits = store.search_chats("会议", 10).await?;
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].chat_id, id);
        assert_eq!(marked(&hits[0].snippet), "请帮我整理[会议]记录");
        // A LIKE wildcard in the query is a plain character.
        assert_eq!(store.search_chats("%", 10).await?, vec![]);
        Ok(())
    }

    #[tokio::test]
    async fn a_deleted_chat_is_no_longer_found() -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        let id = chat(&store, "Secret plans", &["the zeppelin launch"]).await;
        store.delete_chat(&id).await?;
        assert_eq!(store.search_chats("zeppelin", 10).await?, vec![]);
        assert_eq!(store.search_chats("secret", 10).await?, vec![]);
        Ok(())
    }

    #[tokio::test]
    async fn one_hit_per_chat_at_most_limit_chats() -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        for i in 0..5 {
            chat(
                &store,
                &format!("kiwi chat {i}"),
                &["kiwi", "more kiwi", "kiwi again"],
            )
            .await;
        }
        let hits = store.search_chats("kiwi", 3).await?;
        assert_eq!(hits.len(), 3);
        let mut ids: Vec<_> = hits.iter().map(|h| h.chat_id.clone()).collect();
        ids.dedup();
        assert_eq!(ids.len(), 3);
        Ok(())
    }
}
