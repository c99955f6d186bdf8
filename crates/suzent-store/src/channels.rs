//! Channels (messaging platforms): one chat per platform conversation, with how far its replies
//! were sent, and the requests of people who wrote without being on the channel's allow-list.
//! No token is stored here.

use crate::error::DbContext;
use crate::{Store, StoreError, parse_name, parse_ts, ts};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

/// One platform conversation and the chat that holds it.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelConversation {
    /// The channel's name (`config.toml`).
    pub channel: String,
    /// The platform's conversation id (a Telegram chat id, a Slack channel id).
    pub conversation: String,
    /// The platform (`telegram`, `slack`, `discord`, `matrix`).
    pub platform: String,
    /// The chat of this conversation.
    pub chat_id: String,
    /// Who or what the conversation is with (a person's or a group's name).
    pub name: String,
    /// The chat's last message (seq) whose reply went to the platform (0: none yet).
    pub replied_seq: i64,
    /// How many parts of the chat's first message after `replied_seq` already went to the
    /// platform (a send that failed midway; 0 otherwise).
    pub replied_parts: usize,
    /// When the conversation first reached a chat.
    pub created_at: DateTime<Utc>,
    /// When its last message arrived.
    pub last_seen: DateTime<Utc>,
}

/// A conversation to record with its new chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewChannelConversation {
    /// The channel's name.
    pub channel: String,
    /// The platform's conversation id.
    pub conversation: String,
    /// The platform.
    pub platform: String,
    /// The chat (it must exist).
    pub chat_id: String,
    /// Who or what the conversation is with.
    pub name: String,
}

/// Where the request of someone not on a channel's allow-list is.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelRequestStatus {
    /// Waiting for the user's decision; their messages are refused.
    Pending,
    /// The user approved them: they are on the allow-list now.
    Approved,
    /// The user dismissed the request; their messages are still refused.
    Dismissed,
}

impl ChannelRequestStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelRequestStatus::Pending => "pending",
            ChannelRequestStatus::Approved => "approved",
            ChannelRequestStatus::Dismissed => "dismissed",
        }
    }
}

impl std::str::FromStr for ChannelRequestStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "pending" => Ok(ChannelRequestStatus::Pending),
            "approved" => Ok(ChannelRequestStatus::Approved),
            "dismissed" => Ok(ChannelRequestStatus::Dismissed),
            other => Err(format!("unknown channel request status '{other}'")),
        }
    }
}

/// Someone who wrote to a channel without being on its allow-list.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelRequest {
    /// The channel's name.
    pub channel: String,
    /// The platform's user id (what the allow-list holds).
    pub user_id: String,
    /// Their display name as the platform gave it.
    pub name: String,
    /// The conversation they wrote from.
    pub conversation: String,
    /// Pending, approved or dismissed.
    pub status: ChannelRequestStatus,
    /// How many messages they sent (none reached a chat).
    pub messages: i64,
    /// Their first message.
    pub first_seen: DateTime<Utc>,
    /// Their last message.
    pub last_seen: DateTime<Utc>,
}

const CONVERSATION_COLUMNS: &str = "channel, conversation, platform, chat_id, name, replied_seq, replied_parts, created_at, \
     last_seen";
const REQUEST_COLUMNS: &str =
    "channel, user_id, name, conversation, status, messages, first_seen, last_seen";

fn row_to_conversation(row: &SqliteRow) -> Result<ChannelConversation, StoreError> {
    let read = || "reading a channel conversation".to_string();
    let chat_id: String = row.try_get("chat_id").db(read)?;
    let what = |col: &str| format!("channel_conversations row of chat '{chat_id}' ({col})");
    let created: String = row.try_get("created_at").db(read)?;
    let seen: String = row.try_get("last_seen").db(read)?;
    Ok(ChannelConversation {
        channel: row.try_get("channel").db(read)?,
        conversation: row.try_get("conversation").db(read)?,
        platform: row.try_get("platform").db(read)?,
        name: row.try_get("name").db(read)?,
        replied_seq: row.try_get("replied_seq").db(read)?,
        replied_parts: usize::try_from(row.try_get::<i64, _>("replied_parts").db(read)?).map_err(
            |e| StoreError::Corrupt {
                what: what("replied_parts"),
                message: e.to_string(),
            },
        )?,
        created_at: parse_ts(&created, || what("created_at"))?,
        last_seen: parse_ts(&seen, || what("last_seen"))?,
        chat_id,
    })
}

fn row_to_request(row: &SqliteRow) -> Result<ChannelRequest, StoreError> {
    let read = || "reading a channel request".to_string();
    let user_id: String = row.try_get("user_id").db(read)?;
    let what = |col: &str| format!("channel_requests row of user '{user_id}' ({col})");
    let status: String = row.try_get("status").db(read)?;
    let first: String = row.try_get("first_seen").db(read)?;
    let last: String = row.try_get("last_seen").db(read)?;
    Ok(ChannelRequest {
        channel: row.try_get("channel").db(read)?,
        name: row.try_get("name").db(read)?,
        conversation: row.try_get("conversation").db(read)?,
        status: parse_name(&status, || what("status"))?,
        messages: row.try_get("messages").db(read)?,
        first_seen: parse_ts(&first, || what("first_seen"))?,
        last_seen: parse_ts(&last, || what("last_seen"))?,
        user_id,
    })
}

impl Store {
    /// The conversation `conversation` of channel `channel`, if it has a chat.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn channel_conversation(
        &self,
        channel: &str,
        conversation: &str,
    ) -> Result<Option<ChannelConversation>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {CONVERSATION_COLUMNS} FROM channel_conversations \
             WHERE channel = ? AND conversation = ?"
        ))
        .bind(channel)
        .bind(conversation)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading conversation '{conversation}' of channel '{channel}'"))?;
        row.as_ref().map(row_to_conversation).transpose()
    }

    /// The platform conversation that chat `chat_id` holds, if it holds one.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn channel_conversation_of_chat(
        &self,
        chat_id: &str,
    ) -> Result<Option<ChannelConversation>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {CONVERSATION_COLUMNS} FROM channel_conversations WHERE chat_id = ?"
        ))
        .bind(chat_id)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading the channel conversation of chat '{chat_id}'"))?;
        row.as_ref().map(row_to_conversation).transpose()
    }

    /// Records a conversation with its chat. A conversation recorded already (by another
    /// process) is returned as it is.
    ///
    /// Errors: [`StoreError::NotFound`] for an unknown chat, [`StoreError::Database`].
    pub async fn record_channel_conversation(
        &self,
        new: &NewChannelConversation,
    ) -> Result<ChannelConversation, StoreError> {
        let context = || {
            format!(
                "recording conversation '{}' of channel '{}'",
                new.conversation, new.channel
            )
        };
        let mut tx = self.begin_write(context).await?;
        crate::require_chat(&mut tx, &new.chat_id, context).await?;
        let now = ts(&self.now());
        sqlx::query(
            "INSERT INTO channel_conversations \
             (channel, conversation, platform, chat_id, name, replied_seq, created_at, last_seen) \
             VALUES (?, ?, ?, ?, ?, 0, ?, ?) ON CONFLICT (channel, conversation) DO NOTHING",
        )
        .bind(&new.channel)
        .bind(&new.conversation)
        .bind(&new.platform)
        .bind(&new.chat_id)
        .bind(&new.name)
        .bind(&now)
        .bind(&now)
        .execute(&mut *tx)
        .await
        .db(context)?;
        let row = sqlx::query(&format!(
            "SELECT {CONVERSATION_COLUMNS} FROM channel_conversations \
             WHERE channel = ? AND conversation = ?"
        ))
        .bind(&new.channel)
        .bind(&new.conversation)
        .fetch_one(&mut *tx)
        .await
        .db(context)?;
        tx.commit().await.db(context)?;
        row_to_conversation(&row)
    }

    /// Notes a new message in a conversation: its name as the platform gives it now, and when.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn touch_channel_conversation(
        &self,
        channel: &str,
        conversation: &str,
        name: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE channel_conversations SET name = ?, last_seen = ? \
             WHERE channel = ? AND conversation = ?",
        )
        .bind(name)
        .bind(ts(&self.now()))
        .bind(channel)
        .bind(conversation)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("noting a message in conversation '{conversation}' of '{channel}'"))?;
        Ok(())
    }

    /// Records that the replies of chat `chat_id` up to message `seq` went to the platform
    /// (never backwards); a move forward clears the part count of
    /// [`Store::set_channel_replied_parts`].
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn set_channel_replied(&self, chat_id: &str, seq: i64) -> Result<(), StoreError> {
        // SQLite reads the old row in every SET expression: the part count is reset when the
        // seq moves on.
        sqlx::query(
            "UPDATE channel_conversations \
             SET replied_parts = CASE WHEN ? > replied_seq THEN 0 ELSE replied_parts END, \
                 replied_seq = MAX(replied_seq, ?) \
             WHERE chat_id = ?",
        )
        .bind(seq)
        .bind(seq)
        .bind(chat_id)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("recording the replies sent of chat '{chat_id}'"))?;
        Ok(())
    }

    /// Records that the first `parts` parts of the chat's next reply (its first message after
    /// `replied_seq`) reached the platform; the next attempt sends the rest.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn set_channel_replied_parts(
        &self,
        chat_id: &str,
        parts: usize,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE channel_conversations SET replied_parts = ? WHERE chat_id = ?")
            .bind(i64::try_from(parts).unwrap_or(i64::MAX))
            .bind(chat_id)
            .execute(&mut *self.write_conn().await?)
            .await
            .db(|| format!("recording the reply parts sent of chat '{chat_id}'"))?;
        Ok(())
    }

    /// The conversations of one channel or all, the latest message first.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn channel_conversations(
        &self,
        channel: Option<&str>,
    ) -> Result<Vec<ChannelConversation>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {CONVERSATION_COLUMNS} FROM channel_conversations \
             WHERE ?1 IS NULL OR channel = ?1 ORDER BY last_seen DESC, chat_id"
        ))
        .bind(channel)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing channel conversations".to_string())?;
        rows.iter().map(row_to_conversation).collect()
    }

    /// Records a message from someone not on the channel's allow-list: a new pending request,
    /// or one more message of the request they have. Returns the request and whether it is new
    /// (the one time they are told that their message was not passed on).
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn record_channel_request(
        &self,
        channel: &str,
        user_id: &str,
        name: &str,
        conversation: &str,
    ) -> Result<(ChannelRequest, bool), StoreError> {
        let context = || format!("recording the request of '{user_id}' on channel '{channel}'");
        let mut tx = self.begin_write(context).await?;
        let now = ts(&self.now());
        let inserted = sqlx::query(
            "INSERT INTO channel_requests \
             (channel, user_id, name, conversation, status, messages, first_seen, last_seen) \
             VALUES (?, ?, ?, ?, 'pending', 1, ?, ?) ON CONFLICT (channel, user_id) DO NOTHING",
        )
        .bind(channel)
        .bind(user_id)
        .bind(name)
        .bind(conversation)
        .bind(&now)
        .bind(&now)
        .execute(&mut *tx)
        .await
        .db(context)?
        .rows_affected()
            == 1;
        if !inserted {
            sqlx::query(
                "UPDATE channel_requests SET messages = messages + 1, name = ?, \
                 conversation = ?, last_seen = ? WHERE channel = ? AND user_id = ?",
            )
            .bind(name)
            .bind(conversation)
            .bind(&now)
            .bind(channel)
            .bind(user_id)
            .execute(&mut *tx)
            .await
            .db(context)?;
        }
        let row = sqlx::query(&format!(
            "SELECT {REQUEST_COLUMNS} FROM channel_requests WHERE channel = ? AND user_id = ?"
        ))
        .bind(channel)
        .bind(user_id)
        .fetch_one(&mut *tx)
        .await
        .db(context)?;
        tx.commit().await.db(context)?;
        Ok((row_to_request(&row)?, inserted))
    }

    /// The requests of one channel or all, the latest first.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn channel_requests(
        &self,
        channel: Option<&str>,
    ) -> Result<Vec<ChannelRequest>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {REQUEST_COLUMNS} FROM channel_requests \
             WHERE ?1 IS NULL OR channel = ?1 ORDER BY last_seen DESC, user_id"
        ))
        .bind(channel)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing channel requests".to_string())?;
        rows.iter().map(row_to_request).collect()
    }

    /// Sets the status of a request.
    ///
    /// Errors: [`StoreError::NotFound`] (`what: "channel request"`), [`StoreError::Database`].
    pub async fn set_channel_request_status(
        &self,
        channel: &str,
        user_id: &str,
        status: ChannelRequestStatus,
    ) -> Result<ChannelRequest, StoreError> {
        let context = || format!("updating the request of '{user_id}' on channel '{channel}'");
        let row = sqlx::query(&format!(
            "UPDATE channel_requests SET status = ? WHERE channel = ? AND user_id = ? \
             RETURNING {REQUEST_COLUMNS}"
        ))
        .bind(status.as_str())
        .bind(channel)
        .bind(user_id)
        .fetch_optional(&mut *self.write_conn().await?)
        .await
        .db(context)?;
        match row {
            Some(row) => row_to_request(&row),
            None => Err(StoreError::NotFound {
                what: "channel request",
                id: format!("{channel}/{user_id}"),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    async fn store_with_chat() -> anyhow::Result<Store> {
        let store = Store::open_in_memory().await?;
        store
            .create_chat(&crate::NewChat {
                id: "chat-1".into(),
                title: "Telegram · Ada".into(),
                workspace: "/tmp".into(),
                model: None,
                mode: suzent_core::PermissionMode::Default,
                tools: None,
            })
            .await?;
        Ok(store)
    }

    #[tokio::test]
    async fn a_conversation_is_recorded_once_and_its_replies_only_move_forward()
    -> anyhow::Result<()> {
        let store = store_with_chat().await?;
        let new = NewChannelConversation {
            channel: "telegram".into(),
            conversation: "42".into(),
            platform: "telegram".into(),
            chat_id: "chat-1".into(),
            name: "Ada".into(),
        };
        let first = store.record_channel_conversation(&new).await?;
        let again = store.record_channel_conversation(&new).await?;
        assert_eq!(first, again);
        store.set_channel_replied("chat-1", 4).await?;
        store.set_channel_replied("chat-1", 2).await?;
        let found = store.channel_conversation_of_chat("chat-1").await?;
        assert_eq!(found.map(|c| c.replied_seq), Some(4));
        store.delete_chat("chat-1").await?;
        assert_eq!(store.channel_conversation("telegram", "42").await?, None);
        Ok(())
    }

    #[tokio::test]
    async fn a_strangers_first_message_opens_a_request_and_later_ones_only_count()
    -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        let (first, new) = store
            .record_channel_request("telegram", "7", "Eve", "7")
            .await?;
        let (second, again) = store
            .record_channel_request("telegram", "7", "Eve", "7")
            .await?;
        assert_eq!((new, again), (true, false));
        assert_eq!(
            (first.messages, second.messages, second.status),
            (1, 2, ChannelRequestStatus::Pending)
        );
        let approved = store
            .set_channel_request_status("telegram", "7", ChannelRequestStatus::Approved)
            .await?;
        assert_eq!(approved.status, ChannelRequestStatus::Approved);
        assert!(
            store
                .set_channel_request_status("telegram", "8", ChannelRequestStatus::Approved)
                .await
                .is_err()
        );
        Ok(())
    }
}
