//! Tools activated per chat (`tool_search`) and the MCP schema cache.

use crate::error::DbContext;
use crate::{Store, StoreError, decode_json, encode_json, parse_ts, ts};
use chrono::{DateTime, Utc};

/// One server's cached tool list.
#[derive(Debug, Clone, PartialEq)]
pub struct McpSchemaRow {
    /// Fingerprint of the server configuration the tools were fetched with.
    pub fingerprint: String,
    /// The tools (JSON array, as the MCP crate wrote it).
    pub tools: serde_json::Value,
    /// When they were fetched.
    pub fetched_at: DateTime<Utc>,
}

impl Store {
    /// Records that `tool_name` was activated in a chat. Activating twice is not an error; the
    /// first time is kept. Returns whether it was new.
    ///
    /// Errors: [`StoreError::Database`] (also when the chat does not exist).
    pub async fn activate_tool(&self, chat_id: &str, tool_name: &str) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO tool_activations (chat_id, tool_name, activated_at) VALUES (?, ?, ?)
             ON CONFLICT (chat_id, tool_name) DO NOTHING",
        )
        .bind(chat_id)
        .bind(tool_name)
        .bind(ts(&self.now()))
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("activating tool '{tool_name}' in chat '{chat_id}'"))?;
        Ok(done.rows_affected() == 1)
    }

    /// The tools activated in a chat, in activation order.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn activated_tools(&self, chat_id: &str) -> Result<Vec<String>, StoreError> {
        sqlx::query_scalar(
            "SELECT tool_name FROM tool_activations WHERE chat_id = ? ORDER BY activated_at, tool_name",
        )
        .bind(chat_id)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading the activated tools of chat '{chat_id}'"))
    }

    /// The cached tool list of an MCP server, if any.
    ///
    /// Errors: [`StoreError::Corrupt`] for an undecodable row, [`StoreError::Database`].
    pub async fn mcp_schemas(&self, server: &str) -> Result<Option<McpSchemaRow>, StoreError> {
        let row: Option<(String, String, String)> = sqlx::query_as(
            "SELECT fingerprint, tools, fetched_at FROM mcp_schema_cache WHERE server = ?",
        )
        .bind(server)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading cached MCP schemas of '{server}'"))?;
        row.map(|(fingerprint, tools, fetched_at)| {
            Ok(McpSchemaRow {
                fingerprint,
                tools: decode_json(&tools, || {
                    format!("mcp_schema_cache row '{server}' (tools)")
                })?,
                fetched_at: parse_ts(&fetched_at, || {
                    format!("mcp_schema_cache row '{server}' (fetched_at)")
                })?,
            })
        })
        .transpose()
    }

    /// Replaces the cached tool list of an MCP server.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn put_mcp_schemas(
        &self,
        server: &str,
        row: &McpSchemaRow,
    ) -> Result<(), StoreError> {
        let tools = encode_json(&row.tools, || format!("MCP schemas of '{server}'"))?;
        sqlx::query(
            "INSERT INTO mcp_schema_cache (server, fingerprint, tools, fetched_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (server) DO UPDATE SET fingerprint = excluded.fingerprint,
                 tools = excluded.tools, fetched_at = excluded.fetched_at",
        )
        .bind(server)
        .bind(&row.fingerprint)
        .bind(tools)
        .bind(ts(&row.fetched_at))
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("storing MCP schemas of '{server}'"))?;
        Ok(())
    }

    /// Drops the cached tool list of one MCP server, or of all.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn invalidate_mcp_schemas(&self, server: Option<&str>) -> Result<(), StoreError> {
        match server {
            Some(s) => sqlx::query("DELETE FROM mcp_schema_cache WHERE server = ?")
                .bind(s)
                .execute(&mut *self.write_conn().await?)
                .await
                .db(|| format!("dropping cached MCP schemas of '{s}'"))?,
            None => sqlx::query("DELETE FROM mcp_schema_cache")
                .execute(&mut *self.write_conn().await?)
                .await
                .db(|| "dropping every cached MCP schema".to_string())?,
        };
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::{NewChat, Store};
    use pretty_assertions::assert_eq;
    use suzent_core::PermissionMode;

    async fn chat(store: &Store, id: &str) {
        store
            .create_chat(&NewChat {
                id: id.into(),
                title: "t".into(),
                workspace: "/tmp".into(),
                model: None,
                mode: PermissionMode::Default,
                tools: None,
            })
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn activations_persist_per_chat_and_go_with_the_chat() {
        let store = Store::open_in_memory().await.unwrap();
        chat(&store, "c1").await;
        chat(&store, "c2").await;
        assert!(store.activate_tool("c1", "glob_search").await.unwrap());
        assert!(!store.activate_tool("c1", "glob_search").await.unwrap());
        store
            .activate_tool("c1", "mcp__fs__read_text_file")
            .await
            .unwrap();
        assert_eq!(
            store.activated_tools("c1").await.unwrap(),
            ["glob_search", "mcp__fs__read_text_file"]
        );
        assert!(store.activated_tools("c2").await.unwrap().is_empty());
        store.delete_chat("c1").await.unwrap();
        assert!(store.activated_tools("c1").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn mcp_schema_cache_round_trips_and_invalidates_per_server() {
        let store = Store::open_in_memory().await.unwrap();
        let row = super::McpSchemaRow {
            fingerprint: "f1".into(),
            tools: serde_json::json!([{"name": "echo"}]),
            fetched_at: chrono::Utc::now(),
        };
        store.put_mcp_schemas("a", &row).await.unwrap();
        store.put_mcp_schemas("b", &row).await.unwrap();
        let back = store.mcp_schemas("a").await.unwrap().unwrap();
        assert_eq!(back.tools, row.tools);
        store.invalidate_mcp_schemas(Some("a")).await.unwrap();
        assert!(store.mcp_schemas("a").await.unwrap().is_none());
        assert!(store.mcp_schemas("b").await.unwrap().is_some());
        store.invalidate_mcp_schemas(None).await.unwrap();
        assert!(store.mcp_schemas("b").await.unwrap().is_none());
    }
}
