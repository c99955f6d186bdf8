//! Replies: when a run of a conversation's chat ends, its assistant messages after the last one
//! sent go to the conversation, in order, each split at the platform's limit. How far they went
//! is stored after each message (and, when a long message fails midway, how many of its parts
//! went out), so nothing is sent twice by one process and a restart, a retry or a missed event
//! sends only what is left.

use super::{Channels, WAITING_TEXT};
use std::sync::Arc;
use suzent_channels::ChannelError;
use suzent_core::{AgentEvent, ChatMessage, RunOutcome};
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

    /// Sends the unsent assistant messages of `chat_id` to its conversation (nothing when the
    /// chat holds none or its channel is not connected: they wait for the next flush). With
    /// `waiting`, the conversation is also told that the turn waits for approvals in the app.
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
        if waiting && let Err(e) = client.send(&conversation.conversation, WAITING_TEXT).await {
            tracing::warn!(chat = %chat_id, "sending the waiting notice failed: {e}");
        }
    }
}
