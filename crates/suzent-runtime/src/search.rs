//! Chat search: finds chats by words of their title or messages (the desktop search box, Ctrl+K).
//! The index lives in the store (SQLite FTS5, trigram tokenizer); this service checks the input.

use crate::error::RuntimeError;
use suzent_store::{ChatSearchHit, Store};

/// Most chats one search returns.
pub const MAX_SEARCH_HITS: usize = 100;
/// Longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 500;

/// The chat search service: owns nothing but a store handle.
#[derive(Debug, Clone)]
pub struct ChatSearch {
    store: Store,
}

impl ChatSearch {
    /// A search over `store`'s chats.
    pub fn new(store: Store) -> ChatSearch {
        ChatSearch { store }
    }

    /// Chats whose title or messages contain every word of `query`, best first, at most
    /// `limit` (1-100), each with its best match (see [`ChatSearchHit`]). An empty query finds
    /// nothing.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] naming `limit` (0 or over 100) or `query` (over
    /// 500 characters); storage errors.
    pub async fn search(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<ChatSearchHit>, RuntimeError> {
        if limit == 0 || limit > MAX_SEARCH_HITS {
            return Err(RuntimeError::InvalidInput {
                field: "limit".into(),
                message: format!("limit must be 1 to {MAX_SEARCH_HITS}, got {limit}"),
            });
        }
        let chars = query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(RuntimeError::InvalidInput {
                field: "query".into(),
                message: format!(
                    "the search is {chars} characters long; the most is {MAX_QUERY_CHARS}"
                ),
            });
        }
        Ok(self.store.search_chats(query.trim(), limit).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn a_limit_out_of_range_is_refused_naming_it() -> anyhow::Result<()> {
        let search = ChatSearch::new(Store::open_in_memory().await?);
        let err = search.search("x", 0).await.err().map(|e| e.to_string());
        assert_eq!(
            err,
            Some("invalid limit: limit must be 1 to 100, got 0".to_string())
        );
        assert_eq!(search.search("  ", 5).await?, vec![]);
        Ok(())
    }

    #[tokio::test]
    async fn a_word_of_a_message_finds_its_chat_and_not_the_others() -> anyhow::Result<()> {
        let s = crate::test_services::TestServices::open(suzent_core::Config::default()).await;
        let wanted = s.chat().await;
        let other = s.chat().await;
        let say = |text: &str| suzent_core::ChatMessage::User {
            text: text.into(),
            attachments: Vec::new(),
        };
        s.store
            .append_message(&wanted.id, None, &say("the flamingo migration failed"))
            .await?;
        s.store
            .append_message(&other.id, None, &say("lunch at noon"))
            .await?;
        let search = ChatSearch::new(s.store.clone());
        let hits: Vec<(String, Option<i64>)> = search
            .search("flamingo", 10)
            .await?
            .into_iter()
            .map(|h| (h.chat_id, h.seq))
            .collect();
        assert_eq!(hits, vec![(wanted.id.clone(), Some(1))]);
        let too_long = "x".repeat(MAX_QUERY_CHARS + 1);
        let err = search.search(&too_long, 10).await.unwrap_err();
        assert!(
            matches!(&err, RuntimeError::InvalidInput { field, .. } if field == "query"),
            "{err}"
        );
        Ok(())
    }
}
