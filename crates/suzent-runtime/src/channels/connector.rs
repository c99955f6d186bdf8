//! One channel's connection: connect (retrying with backoff unless the token is refused), send
//! the replies a restart left unsent, then take each incoming message: from an allowed user to
//! the inbox of its conversation's chat, from anyone else to a pending request (with one
//! polite refusal). Presses of approval buttons go to `buttons.rs`.

use super::{CHANNEL_MESSAGE_KIND, ChannelState, ChannelStatus, Channels, REFUSAL_TEXT};
use crate::chats::CreateChat;
use crate::error::RuntimeError;
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use suzent_channels::{Channel, ChannelError, Incoming, Received};
use suzent_store::{ChannelRequestStatus, NewChannelConversation, NewInboxMessage};
use tokio_util::sync::CancellationToken;

const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The inbox id of a platform message: per channel and conversation, so a message the
/// platform hands out again (after a crash before it was acknowledged) is stored once.
pub(crate) fn inbox_id(channel: &str, incoming: &Incoming) -> String {
    format!(
        "channel:{channel}:{}:{}",
        incoming.conversation, incoming.message_id
    )
}

/// Sleeps `backoff` (unless stopped; then `false`) and doubles it up to the maximum.
async fn wait(stop: &CancellationToken, backoff: &mut Duration) -> bool {
    let slept = tokio::select! {
        () = tokio::time::sleep(*backoff) => true,
        () = stop.cancelled() => false,
    };
    *backoff = (*backoff * 2).min(MAX_BACKOFF);
    slept
}

fn failed(error: &ChannelError) -> ChannelStatus {
    ChannelStatus {
        state: ChannelState::Failed,
        bot: None,
        error: Some(error.to_string()),
    }
}

/// Runs channel `name` until `stop`.
pub(super) async fn run(
    channels: Arc<Channels>,
    name: String,
    client: Arc<dyn Channel>,
    stop: CancellationToken,
) {
    let mut backoff = FIRST_BACKOFF;
    let bot = loop {
        match tokio::select! {
            r = client.connect() => r,
            () = stop.cancelled() => return,
        } {
            Ok(me) => break me,
            Err(e @ ChannelError::Unauthorized { .. }) => {
                tracing::warn!(channel = %name, "channel refused: {e}");
                channels.set_status(&name, failed(&e));
                return;
            }
            Err(e) => {
                tracing::warn!(channel = %name, "channel connection failed: {e}");
                channels.set_status(&name, failed(&e));
                if !wait(&stop, &mut backoff).await {
                    return;
                }
            }
        }
    };
    let connected = ChannelStatus {
        state: ChannelState::Connected,
        bot: Some(bot.name.clone()),
        error: None,
    };
    channels.set_status(&name, connected.clone());
    tracing::info!(channel = %name, bot = %bot.name, "channel connected");
    // What a restart left unsent goes out first.
    channels.flush_channel(&name).await;
    let mut incoming = Arc::clone(&client).receive();
    backoff = FIRST_BACKOFF;
    loop {
        let next = tokio::select! {
            next = incoming.next() => next,
            () = stop.cancelled() => return,
        };
        match next {
            None => return,
            Some(Ok(received)) => {
                backoff = FIRST_BACKOFF;
                channels.set_status(&name, connected.clone());
                match received {
                    Received::Message(message) => {
                        if let Err(e) = channels.handle(&name, client.as_ref(), message).await {
                            tracing::warn!(channel = %name, "channel message not handled: {e}");
                        }
                    }
                    Received::Press(press) => {
                        channels.handle_press(&name, client.as_ref(), press).await;
                    }
                }
            }
            Some(Err(e)) => {
                tracing::warn!(channel = %name, "channel receive failed: {e}");
                channels.set_status(&name, failed(&e));
                if matches!(e, ChannelError::Unauthorized { .. })
                    || !wait(&stop, &mut backoff).await
                {
                    return;
                }
            }
        }
    }
}

impl Channels {
    /// Takes one incoming message of channel `name` (see the module docs). The allow-list is
    /// read from the settings in force, so an approval counts from the next message.
    pub(super) async fn handle(
        &self,
        name: &str,
        client: &dyn Channel,
        message: Incoming,
    ) -> Result<(), RuntimeError> {
        let Some(config) = self.config_of(name) else {
            return Ok(());
        };
        if !config.allowed_users.iter().any(|u| *u == message.sender) {
            let (request, new) = self
                .store
                .record_channel_request(
                    name,
                    &message.sender,
                    &message.sender_name,
                    &message.conversation,
                )
                .await?;
            tracing::info!(
                channel = %name,
                user = %message.sender,
                new,
                "message from a user not on the allow-list refused"
            );
            if new && request.status == ChannelRequestStatus::Pending {
                client.send(&message.conversation, REFUSAL_TEXT).await?;
            }
            return Ok(());
        }
        let chat_id = match self
            .store
            .channel_conversation(name, &message.conversation)
            .await?
        {
            Some(conversation) => {
                self.store
                    .touch_channel_conversation(
                        name,
                        &message.conversation,
                        &message.conversation_name,
                    )
                    .await?;
                conversation.chat_id
            }
            None => {
                let workspace =
                    self.settings.config().workspace.or_else(|| {
                        directories::UserDirs::new().map(|d| d.home_dir().to_path_buf())
                    });
                let chat = self
                    .chats
                    .create(CreateChat {
                        title: Some(format!(
                            "{} · {}",
                            config.platform.label(),
                            message.conversation_name
                        )),
                        workspace,
                        ..CreateChat::default()
                    })
                    .await?;
                let recorded = self
                    .store
                    .record_channel_conversation(&NewChannelConversation {
                        channel: name.to_string(),
                        conversation: message.conversation.clone(),
                        platform: config.platform.as_str().to_string(),
                        chat_id: chat.id.clone(),
                        name: message.conversation_name.clone(),
                    })
                    .await?;
                if recorded.chat_id != chat.id {
                    // Another process recorded the conversation first: its chat wins.
                    self.chats.delete(&chat.id).await?;
                }
                recorded.chat_id
            }
        };
        self.inbox
            .enqueue(NewInboxMessage {
                id: inbox_id(name, &message),
                target: chat_id,
                sender: format!("channel:{name}:{}", message.sender),
                kind: CHANNEL_MESSAGE_KIND.into(),
                text: message.text,
            })
            .await?;
        Ok(())
    }
}
