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
}
