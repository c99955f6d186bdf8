//! Transcripts and tool steps.

use crate::error::{ChatDbContext, DbContext, is_foreign_key_violation, is_unique_violation};
use crate::{
    Store, StoreError, StoredMessage, ToolStepStatus, decode_json, encode_json, parse_ts, ts,
};
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::sqlite::SqliteConnection;
use suzent_core::ChatMessage;

impl Store {
    /// Appends a message to a chat's transcript and bumps the chat's `updated_at`, in one
    /// statement (the bump is the `messages_bump_chat` trigger). Returns the message's `seq`
    /// (1, 2, 3... within the chat).
    ///
    /// A [`ChatMessage::Tool`] result is indexed by its tool call id: storing a second result for
    /// the same call in the same chat is refused.
    ///
    /// Errors: [`StoreError::NotFound`] (`what: "chat"`) if there is no such chat,
    /// [`StoreError::Conflict`] for a second result of one tool call, [`StoreError::Database`].
    pub async fn append_message(
        &self,
        chat_id: &str,
        run_id: Option<&str>,
        message: &ChatMessage,
    ) -> Result<i64, StoreError> {
        let mut conn = self.write_conn().await?;
        insert_message(&mut conn, chat_id, run_id, message, self.now()).await
    }

    /// A chat's transcript, ordered by `seq`. Empty for an unknown chat.
    ///
    /// Errors: [`StoreError::Corrupt`] naming the chat and seq if a body is not a valid
    /// [`ChatMessage`], [`StoreError::Database`].
    pub async fn messages(&self, chat_id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        self.messages_after(chat_id, 0).await
    }

    /// The messages of a chat's transcript after position `after_seq` (all of them for 0),
    /// ordered by `seq`. Transcripts are only appended to, so a reader that keeps what it read
    /// asks only for what is new. Errors as [`Store::messages`].
    pub async fn messages_after(
        &self,
        chat_id: &str,
        after_seq: i64,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, run_id, body, created_at FROM messages WHERE chat_id = ? AND seq > ? ORDER BY seq",
        )
        .bind(chat_id)
        .bind(after_seq)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading the transcript of chat '{chat_id}'"))?;
        rows.iter()
            .map(|row| {
                let read = || format!("reading a message of chat '{chat_id}'");
                let seq: i64 = row.try_get("seq").db(read)?;
                let body: String = row.try_get("body").db(read)?;
                let created_at: String = row.try_get("created_at").db(read)?;
                let what =
                    |col: &str| format!("messages row seq {seq} of chat '{chat_id}' ({col})");
                Ok(StoredMessage {
                    seq,
                    run_id: row.try_get("run_id").db(read)?,
                    message: decode_json(&body, || what("body"))?,
                    created_at: parse_ts(&created_at, || what("created_at"))?,
                })
            })
            .collect()
    }

    /// Claims `id` as the step id of a tool call of `chat_id` (issue 13 item 1). Returns `true`
    /// if the id was free and is now this call's, `false` if any chat claimed it before (a
    /// provider that numbers its calls `call_0`, `call_1`, or repeats an id within one
    /// response): the caller then claims a fresh id instead. Atomic across processes. An empty
    /// id is never claimed.
    ///
    /// Errors: [`StoreError::NotFound`] (`what: "chat"`) if there is no such chat,
    /// [`StoreError::Database`].
    pub async fn claim_tool_call_id(&self, chat_id: &str, id: &str) -> Result<bool, StoreError> {
        if id.is_empty() {
            return Ok(false);
        }
        let result = sqlx::query(
            "INSERT INTO tool_call_ids (id, chat_id, claimed_at) VALUES (?, ?, ?)
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(id)
        .bind(chat_id)
        .bind(ts(&self.now()))
        .execute(&mut *self.write_conn().await?)
        .await;
        let done = result.chat_db(chat_id, || {
            format!("claiming tool call id '{id}' in chat '{chat_id}'")
        })?;
        Ok(done.rows_affected() == 1)
    }

    /// Which of `ids` any chat has claimed as a step id ([`Store::claim_tool_call_id`]), in one
    /// read: the ids of a model step that [`Store::append_claiming`] could not claim.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn taken_tool_call_ids(
        &self,
        ids: &[&str],
    ) -> Result<std::collections::HashSet<String>, StoreError> {
        if ids.is_empty() {
            return Ok(std::collections::HashSet::new());
        }
        let sql = format!(
            "SELECT id FROM tool_call_ids WHERE id IN ({})",
            vec!["?"; ids.len()].join(", ")
        );
        let mut query = sqlx::query_scalar::<_, String>(&sql);
        for id in ids {
            query = query.bind(*id);
        }
        let taken = query
            .fetch_all(&mut *self.read_conn().await?)
            .await
            .db(|| format!("looking up {} tool call ids", ids.len()))?;
        Ok(taken.into_iter().collect())
    }

    /// Stores a model step, an assistant `message` with tool calls, and claims each call's id
    /// as its step id ([`Store::claim_tool_call_id`]) in the same round trip to the database:
    /// the claims are one statement and the message another, sent together. Returns
    /// `Some(seq)` when every id was free and the step is stored, `None` when any id was
    /// claimed before (or two calls share one): then nothing is stored nor claimed, and the
    /// caller gives the taken ones fresh ids ([`Store::taken_tool_call_ids`]) and sends again. A message without calls is simply appended.
    ///
    /// Errors: [`StoreError::Conflict`] for an empty id or a message that is not an assistant
    /// message, [`StoreError::NotFound`] (`what: "chat"`) if there is no such chat,
    /// [`StoreError::Database`].
    pub async fn append_claiming(
        &self,
        chat_id: &str,
        run_id: Option<&str>,
        message: &ChatMessage,
    ) -> Result<Option<i64>, StoreError> {
        let ChatMessage::Assistant { tool_calls, .. } = message else {
            return Err(StoreError::Conflict {
                message: "only a model step (an assistant message) claims tool call ids".into(),
            });
        };
        if tool_calls.is_empty() {
            return self
                .append_message(chat_id, run_id, message)
                .await
                .map(Some);
        }
        if tool_calls.iter().any(|c| c.id.is_empty()) {
            return Err(StoreError::Conflict {
                message: "an empty tool call id cannot be claimed".into(),
            });
        }
        let now = self.now();
        let body = encode_json(message, || format!("a message of chat '{chat_id}'"))?;
        let tuples = vec!["(?, ?, ?)"; tool_calls.len()].join(", ");
        let sql = format!(
            "INSERT INTO tool_call_ids (id, chat_id, claimed_at) VALUES {tuples};
             INSERT INTO messages (chat_id, seq, run_id, role, tool_call_id, body, created_at)
             VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE chat_id = ?), ?, 'assistant', NULL, ?, ?)
             RETURNING seq"
        );
        let at = ts(&now);
        let mut query = sqlx::query_scalar::<_, i64>(&sql);
        for call in tool_calls {
            query = query.bind(call.id.as_str()).bind(chat_id).bind(at.as_str());
        }
        let stored = query
            .bind(chat_id)
            .bind(chat_id)
            .bind(run_id)
            .bind(body)
            .bind(at.as_str())
            .fetch_all(&mut *self.write_conn().await?)
            .await;
        match stored {
            Ok(seqs) => match seqs.first() {
                Some(seq) => Ok(Some(*seq)),
                None => Err(StoreError::Conflict {
                    message: format!("the model step of chat '{chat_id}' was not stored"),
                }),
            },
            // The claims are one statement: a taken id (or two calls sharing one) undoes them all
            // and the message is not stored.
            Err(e) if is_unique_violation(&e) => Ok(None),
            Err(e) => Err(e).chat_db(chat_id, || {
                format!("storing a model step of chat '{chat_id}'")
            }),
        }
    }

    /// Marks a tool call as running before it is executed. Returns `true` if the step was newly
    /// recorded (run the tool), `false` if a step for this `tool_call_id` already exists, running
    /// or done (do not run it again: it may have run before a crash).
    ///
    /// Tool call ids are step ids claimed with [`Store::claim_tool_call_id`], unique across
    /// chats (a provider's id is kept only when no call used it before: issue 13 item 1).
    ///
    /// Errors: [`StoreError::NotFound`] (`what: "chat"`) if there is no such chat,
    /// [`StoreError::Database`].
    pub async fn begin_tool_step(
        &self,
        chat_id: &str,
        tool_call_id: &str,
        tool_name: &str,
        args: &str,
    ) -> Result<bool, StoreError> {
        let result = sqlx::query(
            "INSERT INTO tool_steps (tool_call_id, chat_id, tool_name, args, status, started_at)
             VALUES (?, ?, ?, ?, 'running', ?)
             ON CONFLICT (tool_call_id) DO NOTHING",
        )
        .bind(tool_call_id)
        .bind(chat_id)
        .bind(tool_name)
        .bind(args)
        .bind(ts(&self.now()))
        .execute(&mut *self.write_conn().await?)
        .await;
        let done = result.chat_db(chat_id, || {
            format!("beginning tool step '{tool_call_id}' in chat '{chat_id}'")
        })?;
        Ok(done.rows_affected() == 1)
    }

    /// The state of a tool call's step, or `None` if it was never begun nor finished.
    ///
    /// Errors: [`StoreError::Corrupt`] for an unknown stored status, [`StoreError::Database`].
    pub async fn tool_step_status(
        &self,
        tool_call_id: &str,
    ) -> Result<Option<ToolStepStatus>, StoreError> {
        let status: Option<String> =
            sqlx::query_scalar("SELECT status FROM tool_steps WHERE tool_call_id = ?")
                .bind(tool_call_id)
                .fetch_optional(&mut *self.read_conn().await?)
                .await
                .db(|| format!("reading tool step '{tool_call_id}'"))?;
        status
            .map(|s| match s.as_str() {
                "running" => Ok(ToolStepStatus::Running),
                "done" => Ok(ToolStepStatus::Done),
                other => Err(StoreError::Corrupt {
                    what: format!("tool_steps row '{tool_call_id}' (status)"),
                    message: format!("unknown status '{other}'"),
                }),
            })
            .transpose()
    }

    /// Stores a tool call's result and marks its step done, in one statement (the
    /// `messages_finish_tool_step` trigger): appends `result` to the transcript (bumping the
    /// chat's `updated_at`) and sets the step to done, inserting it as done if
    /// [`Store::begin_tool_step`] was never called (e.g. a refused or rejected call). Any tool
    /// result stored with [`Store::append_message`] marks its step done the same way.
    /// Returns the result message's `seq`.
    ///
    /// Errors: [`StoreError::Conflict`] if a result for this tool call is already stored in the
    /// chat (nothing is written), or if `result` is not a [`ChatMessage::Tool`] answering
    /// `tool_call_id`; [`StoreError::NotFound`] (`what: "chat"`) if there is no such chat;
    /// [`StoreError::Database`].
    pub async fn finish_tool_step(
        &self,
        chat_id: &str,
        run_id: Option<&str>,
        tool_call_id: &str,
        result: &ChatMessage,
    ) -> Result<i64, StoreError> {
        match result {
            ChatMessage::Tool {
                tool_call_id: answered,
                ..
            } if answered == tool_call_id => {}
            ChatMessage::Tool {
                tool_call_id: answered,
                ..
            } => {
                return Err(StoreError::Conflict {
                    message: format!(
                        "the result answers tool call '{answered}', not '{tool_call_id}'"
                    ),
                });
            }
            _ => {
                return Err(StoreError::Conflict {
                    message: format!(
                        "the result of tool call '{tool_call_id}' must be a tool message"
                    ),
                });
            }
        };
        let mut conn = self.write_conn().await?;
        insert_message(&mut conn, chat_id, run_id, result, self.now()).await
    }

    /// Whether the chat's transcript holds a result for this tool call.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn has_tool_result(
        &self,
        chat_id: &str,
        tool_call_id: &str,
    ) -> Result<bool, StoreError> {
        sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM messages WHERE chat_id = ? AND role = 'tool' AND tool_call_id = ?)",
        )
        .bind(chat_id)
        .bind(tool_call_id)
        .fetch_one(&mut *self.read_conn().await?)
        .await
        .db(|| format!("looking up the result of tool call '{tool_call_id}' in chat '{chat_id}'"))
    }
}

/// Appends a message with the next `seq`, on the writer connection or inside an open write
/// transaction; the `messages_bump_chat` trigger sets the chat's `updated_at` to `now`.
///
/// Errors: [`StoreError::NotFound`] (`what: "chat"`) for an unknown chat (the insert breaks the
/// foreign key), [`StoreError::Conflict`] for a second result of one tool call.
pub(crate) async fn insert_message(
    conn: &mut SqliteConnection,
    chat_id: &str,
    run_id: Option<&str>,
    message: &ChatMessage,
    now: DateTime<Utc>,
) -> Result<i64, StoreError> {
    let context = || format!("appending a message to chat '{chat_id}'");
    let (role, tool_call_id) = match message {
        ChatMessage::User { .. } => ("user", None),
        ChatMessage::Assistant { .. } => ("assistant", None),
        ChatMessage::Tool { tool_call_id, .. } => ("tool", Some(tool_call_id.as_str())),
    };
    let body = encode_json(message, || format!("a message of chat '{chat_id}'"))?;
    let inserted = sqlx::query_scalar(
        "INSERT INTO messages (chat_id, seq, run_id, role, tool_call_id, body, created_at)
         VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE chat_id = ?), ?, ?, ?, ?, ?)
         RETURNING seq",
    )
    .bind(chat_id)
    .bind(chat_id)
    .bind(run_id)
    .bind(role)
    .bind(tool_call_id)
    .bind(body)
    .bind(ts(&now))
    .fetch_one(&mut *conn)
    .await;
    match (inserted, tool_call_id) {
        (Ok(seq), _) => Ok(seq),
        (Err(e), _) if is_foreign_key_violation(&e) => Err(StoreError::NotFound {
            what: "chat",
            id: chat_id.to_string(),
        }),
        (Err(e), Some(call)) if is_unique_violation(&e) => Err(StoreError::Conflict {
            message: format!(
                "a result for tool call '{call}' is already stored in chat '{chat_id}'"
            ),
        }),
        (Err(e), _) => Err(e).db(context),
    }
}
