//! Replies: when a run of a conversation's chat ends, its assistant messages after the last one
//! sent go to the conversation, in order, each split at the platform's limit. How far they went
//! is stored after each message (and, when a long message fails midway, how many of its parts
//! went out), so nothing is sent twice by one process and a restart, a retry or a missed event
//! sends only what is left.
//!
//! Speech clips go with them, as audio files ([`Channel::send_audio`]), in transcript order:
//! a clip that a step's `speak` call made goes after the text of that step (the assistant
//! message that holds the call comes first in the transcript) and before the text of later
//! steps, so the conversation reads as the chat in the app does ("Here it is:", the clip,
//! "Anything else?"). A clip the platform cannot take (larger than its upload limit, or its
//! file gone) becomes a short text note in the conversation instead, never a silent gap.

use super::{Channels, WAITING_TEXT};
use std::sync::Arc;
use suzent_channels::{AudioFile, Channel, ChannelError};
use suzent_core::{AgentEvent, ChatMessage, RunOutcome, SpeechClip};
use tokio::sync::broadcast::error::RecvError;

/// Listens for the end of runs until the service stops.
pub(super) fn start(channels: Arc<Channels>) {
    let mut events = channels.events.subscribe();
    let stop = channels.shutdown.clone();
    tokio::spawn(async move {
        loop {
            let event = tokio::select! {
                e = events.recv() => e,
                () = stop.cancelled() => return,
            };
            match event {
                Ok(AgentEvent::RunFinished {
                    chat_id, outcome, ..
                }) => {
                    channels
                        .flush_chat(&chat_id, outcome == RunOutcome::Suspended)
                        .await;
                }
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => {
                    // Events were missed: every conversation is checked.
                    for channel in channels.running_names() {
                        channels.flush_channel(&channel).await;
                    }
                }
                Err(RecvError::Closed) => return,
            }
        }
    });
}

impl Channels {
    fn running_names(&self) -> Vec<String> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .keys()
            .cloned()
            .collect()
    }

    /// Sends the unsent replies of every conversation of channel `name`.
    pub(super) async fn flush_channel(&self, name: &str) {
        match self.store.channel_conversations(Some(name)).await {
            Ok(conversations) => {
                for c in conversations {
                    self.flush_chat(&c.chat_id, false).await;
                }
            }
            Err(e) => tracing::warn!(channel = %name, "listing conversations failed: {e}"),
        }
    }

    /// Sends the unsent assistant messages (and speech clips) of `chat_id` to its conversation
    /// (nothing when the chat holds none or its channel is not connected: they wait for the
    /// next flush). With `waiting`, the conversation is also told that the turn waits for
    /// approvals: with a prompt and buttons per approval where the platform has buttons, else
    /// in words (answered in the app).
    pub(super) async fn flush_chat(&self, chat_id: &str, waiting: bool) {
        let _one_at_a_time = self.flush.lock().await;
        let conversation = match self.store.channel_conversation_of_chat(chat_id).await {
            Ok(Some(c)) => c,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(chat = %chat_id, "reading the conversation failed: {e}");
                return;
            }
        };
        let Some(client) = self.client(&conversation.channel) else {
            return;
        };
        let messages = match self
            .store
            .messages_after(chat_id, conversation.replied_seq)
            .await
        {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(chat = %chat_id, "reading the transcript failed: {e}");
                return;
            }
        };
        // The parts of the first message that went out before a failure midway.
        let mut from = conversation.replied_parts;
        for message in messages {
            if let ChatMessage::Tool {
                tool_name,
                content,
                is_error: false,
                ..
            } = &message.message
                && tool_name == SPEAK_TOOL
                && let Err(e) = self
                    .send_clip(
                        client.as_ref(),
                        &conversation.conversation,
                        chat_id,
                        content,
                    )
                    .await
            {
                // Left unsent: the next flush tries again.
                tracing::warn!(
                    channel = %conversation.channel,
                    chat = %chat_id,
                    "sending a speech clip failed: {e}"
                );
                return;
            }
            if let ChatMessage::Assistant { text, .. } = &message.message
                && !text.trim().is_empty()
            {
                match client
                    .send_from(&conversation.conversation, text, from)
                    .await
                {
                    Ok(_) => {}
                    Err(e) => {
                        // Left unsent: the next flush tries again, from the first part that
                        // did not go out.
                        tracing::warn!(
                            channel = %conversation.channel,
                            chat = %chat_id,
                            "sending a reply failed: {e}"
                        );
                        if let ChannelError::Partial { sent, .. } = e
                            && let Err(e) =
                                self.store.set_channel_replied_parts(chat_id, sent).await
                        {
                            tracing::warn!(chat = %chat_id, "recording the parts sent failed: {e}");
                        }
                        return;
                    }
                }
            }
            from = 0;
            if let Err(e) = self.store.set_channel_replied(chat_id, message.seq).await {
                tracing::warn!(chat = %chat_id, "recording a sent reply failed: {e}");
                return;
            }
        }
        if !waiting
            || (client.has_buttons()
                && self
                    .prompt_approvals(client.as_ref(), &conversation, chat_id)
                    .await)
        {
            return;
        }
        if let Err(e) = client.send(&conversation.conversation, WAITING_TEXT).await {
            tracing::warn!(chat = %chat_id, "sending the waiting notice failed: {e}");
        }
    }
}

/// The tool whose results are speech clips.
const SPEAK_TOOL: &str = "speak";

/// What a conversation is told instead of a clip that is larger than the platform takes.
fn too_large_note(platform: &str, bytes: u64, limit: u64) -> String {
    let mb = |b: u64| format!("{:.1} MB", b as f64 / 1_000_000.0);
    // Below the known limit, the workspace or homeserver set a lower one.
    let known = if bytes > limit {
        format!(" (it takes at most {} from a bot)", mb(limit))
    } else {
        String::new()
    };
    format!(
        "(A voice message of {} was made here, but it is too large to send to {platform}{known}. \
         It is in the Suzent app, in this chat.)",
        mb(bytes)
    )
}

impl Channels {
    /// Sends the speech clip that a successful `speak` result (`content`, a [`SpeechClip`] as
    /// JSON) names to `conversation`. The file is looked up in `chat_id`'s own speech folder
    /// (never at the path the result states), so only clips the runtime stored for this chat
    /// go out. A clip the platform cannot take, or whose file is gone, becomes a text note.
    ///
    /// Errors: what a later flush may mend (the platform unreachable, or refusing for another
    /// reason than the size).
    async fn send_clip(
        &self,
        client: &dyn Channel,
        conversation: &str,
        chat_id: &str,
        content: &str,
    ) -> Result<(), ChannelError> {
        let Ok(clip) = serde_json::from_str::<SpeechClip>(content) else {
            // Not a clip (an older result): nothing to send.
            return Ok(());
        };
        let bytes = match self.speech.clip_path(chat_id, &clip.file) {
            Ok(path) => tokio::fs::read(&path).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        let note = match bytes {
            Err(e) => {
                tracing::warn!(chat = %chat_id, "a speech clip cannot be read: {e}");
                "(A voice message was made here, but its file is gone, so it cannot be sent.)"
                    .to_string()
            }
            Ok(bytes) => {
                let audio = AudioFile {
                    file_name: clip.file.clone(),
                    mime_type: clip.mime_type.clone(),
                    bytes,
                    duration_ms: clip.duration_ms,
                };
                match client.send_audio(conversation, &audio).await {
                    Ok(_) => return Ok(()),
                    Err(ChannelError::TooLarge {
                        platform,
                        bytes,
                        limit,
                    }) => too_large_note(platform, bytes, limit),
                    Err(e) => return Err(e),
                }
            }
        };
        client.send(conversation, &note).await.map(|_| ())
    }
}
