//! Chats.

use crate::error::DbContext;
use crate::{
    ChatPatch, ChatRecord, NewChat, Store, StoreError, decode_json, encode_json, parse_name,
    parse_ts, ts,
};
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::SqliteConnection;
use sqlx::sqlite::SqliteRow;

const CHAT_COLUMNS: &str = "id, title, workspace, model, mode, tools, created_at, updated_at";

impl Store {
    /// Creates a chat; `created_at` and `updated_at` are now.
    ///
    /// Errors: [`StoreError::Conflict`] if a chat with this id exists, [`StoreError::Database`].
    pub async fn create_chat(&self, new: &NewChat) -> Result<ChatRecord, StoreError> {
        let mut conn = self
            .writer
            .acquire()
            .await
            .db(|| format!("creating chat '{}'", new.id))?;
        insert_chat(&mut conn, new, self.now()).await
    }

    /// The chat with this id, or `None`.
    ///
    /// Errors: [`StoreError::Corrupt`] if a column cannot be decoded, [`StoreError::Database`].
    pub async fn get_chat(&self, id: &str) -> Result<Option<ChatRecord>, StoreError> {
        let row = sqlx::query(&format!("SELECT {CHAT_COLUMNS} FROM chats WHERE id = ?"))
            .bind(id)
            .fetch_optional(&mut *self.read_conn().await?)
            .await
            .db(|| format!("reading chat '{id}'"))?;
        row.as_ref().map(chat_from_row).transpose()
    }

    /// Every chat, most recently updated first.
    ///
    /// Errors: [`StoreError::Corrupt`] if a column cannot be decoded, [`StoreError::Database`].
    pub async fn list_chats(&self) -> Result<Vec<ChatRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {CHAT_COLUMNS} FROM chats ORDER BY updated_at DESC, rowid DESC"
        ))
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing chats".to_string())?;
        rows.iter().map(chat_from_row).collect()
    }

    /// Applies `patch` to a chat in one statement, sets `updated_at` to now and returns the result.
    ///
    /// Errors: [`StoreError::NotFound`] (`what: "chat"`) if there is no such chat,
    /// [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn update_chat(&self, id: &str, patch: &ChatPatch) -> Result<ChatRecord, StoreError> {
        let now = self.now();
        let tools = match &patch.tools {
            Some(Some(t)) => Some(encode_json(t, || format!("tools of chat '{id}'"))?),
            _ => None,
        };
        let row = sqlx::query(&format!(
            "UPDATE chats SET
                title = CASE WHEN ? THEN ? ELSE title END,
                model = CASE WHEN ? THEN ? ELSE model END,
                mode = CASE WHEN ? THEN ? ELSE mode END,
                tools = CASE WHEN ? THEN ? ELSE tools END,
                updated_at = ?
             WHERE id = ?
             RETURNING {CHAT_COLUMNS}"
        ))
        .bind(patch.title.is_some())
        .bind(&patch.title)
        .bind(patch.model.is_some())
        .bind(patch.model.clone().flatten())
        .bind(patch.mode.is_some())
        .bind(patch.mode.map(|m| m.as_str()))
        .bind(patch.tools.is_some())
        .bind(tools)
        .bind(ts(&now))
        .bind(id)
        .fetch_optional(&mut *self.write_conn().await?)
        .await
        .db(|| format!("updating chat '{id}'"))?;
        match row {
            Some(row) => chat_from_row(&row),
            None => Err(StoreError::NotFound {
                what: "chat",
                id: id.to_string(),
            }),
        }
    }

    /// Deletes a chat with its messages, tool steps, approvals and session rules, and the
    /// end-of-chat summaries of it in archival memory (entries with source `summary` and this
    /// chat id), in one transaction. Entries the agent or the user archived on purpose (other
    /// sources) stay: archival memory is shared by all chats.
    ///
    /// Errors: [`StoreError::NotFound`] (`what: "chat"`) if there is no such chat,
    /// [`StoreError::Database`].
    pub async fn delete_chat(&self, id: &str) -> Result<(), StoreError> {
        let context = || format!("deleting chat '{id}'");
        let mut tx = self.begin_write(context).await?;
        let done = sqlx::query("DELETE FROM chats WHERE id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await
            .db(context)?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound {
                what: "chat",
                id: id.to_string(),
            });
        }
        sqlx::query("DELETE FROM memory_archive WHERE chat_id = ? AND source = ?")
            .bind(id)
            .bind(crate::summaries::SUMMARY_SOURCE)
            .execute(&mut *tx)
            .await
            .db(context)?;
        tx.commit().await.db(context)
    }
}

/// Inserts the chat `new` with `created_at` and `updated_at` set to `now` on `conn` (a pooled
/// connection or an open transaction).
///
/// Errors: [`StoreError::Conflict`] if a chat with this id exists, [`StoreError::Database`].
pub(crate) async fn insert_chat(
    conn: &mut SqliteConnection,
    new: &NewChat,
    now: DateTime<Utc>,
) -> Result<ChatRecord, StoreError> {
    let tools = new
        .tools
        .as_ref()
        .map(|t| encode_json(t, || format!("tools of chat '{}'", new.id)))
        .transpose()?;
    let result = sqlx::query(
        "INSERT INTO chats (id, title, workspace, model, mode, tools, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&new.id)
    .bind(&new.title)
    .bind(&new.workspace)
    .bind(&new.model)
    .bind(new.mode.as_str())
    .bind(&tools)
    .bind(ts(&now))
    .bind(ts(&now))
    .execute(&mut *conn)
    .await;
    match result {
        Ok(_) => Ok(ChatRecord {
            id: new.id.clone(),
            title: new.title.clone(),
            workspace: new.workspace.clone(),
            model: new.model.clone(),
            mode: new.mode,
            tools: new.tools.clone(),
            created_at: now,
            updated_at: now,
        }),
        Err(e) if crate::error::is_unique_violation(&e) => Err(StoreError::Conflict {
            message: format!("a chat with id '{}' already exists", new.id),
        }),
        Err(e) => Err(e).db(|| format!("creating chat '{}'", new.id)),
    }
}

fn chat_from_row(row: &SqliteRow) -> Result<ChatRecord, StoreError> {
    let id: String = row.try_get("id").db(|| "reading a chats row".to_string())?;
    let read = |col: &str| format!("reading column {col} of chat '{id}'");
    let what = |col: &str| format!("chats row '{id}' ({col})");
    let mode: String = row.try_get("mode").db(|| read("mode"))?;
    let tools: Option<String> = row.try_get("tools").db(|| read("tools"))?;
    let created_at: String = row.try_get("created_at").db(|| read("created_at"))?;
    let updated_at: String = row.try_get("updated_at").db(|| read("updated_at"))?;
    Ok(ChatRecord {
        title: row.try_get("title").db(|| read("title"))?,
        workspace: row.try_get("workspace").db(|| read("workspace"))?,
        model: row.try_get("model").db(|| read("model"))?,
        mode: parse_name(&mode, || what("mode"))?,
        tools: tools
            .as_deref()
            .map(|t| decode_json(t, || what("tools")))
            .transpose()?,
        created_at: parse_ts(&created_at, || what("created_at"))?,
        updated_at: parse_ts(&updated_at, || what("updated_at"))?,
        id,
    })
}
