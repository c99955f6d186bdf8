//! Slack through the Web API and Socket Mode (`slack-morphism`): `auth.test` (bot token) and
//! `apps.connections.open` (app-level token) to connect; Socket Mode to receive (the WebSocket
//! URL comes from `apps.connections.open`; `hello`, `events_api` envelopes with `message`
//! events, each acknowledged with its `envelope_id` once the stream handed it on);
//! `chat.postMessage` to send. Only plain messages from people are passed on. Audio is a
//! file shared in the conversation, uploaded as Slack's current API wants it:
//! `files.getUploadURLExternal` (name and length) gives an upload URL and a file id, the bytes
//! are posted to that URL, and `files.completeUploadExternal` shares the file in the channel.
//! Buttons are Block Kit: a `section` with the text and an `actions` block of buttons, each
//! with its `value`; a press comes over Socket Mode as an `interactive` envelope with a
//! `block_actions` payload (acknowledged like the others) and is answered through its
//! `response_url` with a message only the person who pressed sees.
//!
//! A Slack channel needs two tokens, stored together as one secret: the bot token
//! (`xoxb-…`) and the app-level token (`xapp-…`, scope `connections:write`), separated by
//! whitespace, in any order ([`SlackChannel::new`]).

use crate::receive::{Receiver, stream_of};
use crate::{
    AudioFile, BotIdentity, Button, Channel, ChannelError, ChannelPlatform, Incoming, LengthUnit,
    MessageLimit, Press, Received, check_size, scrub,
};
use async_trait::async_trait;
use futures::stream::BoxStream;
use slack_morphism::errors::SlackClientError;
use slack_morphism::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::mpsc;

/// Slack's public Web API root.
pub const SLACK_API: &str = "https://slack.com/api";
/// Slack's recommended longest message: 4,000 characters (`chat.postMessage`, `text`: "we
/// recommend keeping it under 4,000 characters"; longer text is truncated by Slack).
pub const SLACK_LIMIT: MessageLimit = MessageLimit {
    max: 4000,
    unit: LengthUnit::Chars,
};
/// The largest file Slack takes (1 GB).
pub const SLACK_UPLOAD_LIMIT: u64 = 1000 * 1000 * 1000;
const PLATFORM: &str = "Slack";

type Connector = SlackClientHyperConnector<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
>;
type Client = SlackClient<Connector>;

/// A Slack app in Socket Mode (its bot and app-level tokens). `Debug` never shows them.
pub struct SlackChannel {
    client: Arc<Client>,
    bot: SlackApiToken,
    app: SlackApiToken,
    secrets: [String; 2],
    base: String,
    /// Display names by user id (`users.info`).
    names: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for SlackChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlackChannel")
            .field("api", &self.base)
            .finish_non_exhaustive()
    }
}

/// The bot token and the app-level token in `secret`.
fn tokens(secret: &str) -> Result<(String, String), ChannelError> {
    let mut bot = None;
    let mut app = None;
    for word in secret.split_whitespace() {
        if word.starts_with("xoxb-") {
            bot = Some(word.to_string());
        } else if word.starts_with("xapp-") {
            app = Some(word.to_string());
        } else {
            return Err(ChannelError::Invalid {
                field: "token",
                message: "a Slack channel takes a bot token (xoxb-…) and an app-level token \
                          (xapp-…); another word was given"
                    .into(),
            });
        }
    }
    match (bot, app) {
        (Some(bot), Some(app)) => Ok((bot, app)),
        (None, _) => Err(ChannelError::Invalid {
            field: "token",
            message: "the Slack bot token (xoxb-…, OAuth & Permissions) is missing".into(),
        }),
        (_, None) => Err(ChannelError::Invalid {
            field: "token",
            message: "the Slack app-level token (xapp-…, Basic Information → App-Level Tokens, \
                      scope connections:write) is missing"
                .into(),
        }),
    }
}

/// What `users.info` says a person is called.
fn display_name(user: &SlackUser) -> Option<String> {
    let profile = user.profile.as_ref();
    [
        profile.and_then(|p| p.display_name.clone()),
        profile.and_then(|p| p.real_name.clone()),
        user.real_name.clone(),
        user.name.clone(),
    ]
    .into_iter()
    .flatten()
    .find(|n| !n.trim().is_empty())
}

impl SlackChannel {
    /// An app with `secret` (bot and app-level token, see the module docs) against the Web
    /// API root `base_url` (default [`SLACK_API`]; Socket Mode's URL comes from
    /// `apps.connections.open`).
    ///
    /// Errors: [`ChannelError::Invalid`] naming `token` (a token missing or not Slack's) or
    /// `base_url` (not an http(s) URL).
    pub fn new(secret: &str, base_url: Option<&str>) -> Result<SlackChannel, ChannelError> {
        let (bot, app) = tokens(secret)?;
        let base = base_url
            .unwrap_or(SLACK_API)
            .trim_end_matches('/')
            .to_string();
        let url = url::Url::parse(&base)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
            .ok_or_else(|| ChannelError::Invalid {
                field: "base_url",
                message: format!("'{base}' is not an http(s) URL"),
            })?;
        crate::discord::ensure_crypto_provider();
        let builder = hyper_rustls::HttpsConnectorBuilder::new().with_webpki_roots();
        // Plain HTTP only where the base URL asks for it (a server on loopback).
        let https = if url.scheme() == "http" {
            builder.https_or_http().enable_http1().build()
        } else {
            builder.https_only().enable_http1().enable_http2().build()
        };
        let connector = SlackClientHyperConnector::with_connector(https).with_slack_api_url(&base);
        Ok(SlackChannel {
            client: Arc::new(SlackClient::new(connector)),
            bot: SlackApiToken::new(bot.clone().into()),
            app: SlackApiToken::new(app.clone().into()),
            secrets: [bot, app],
            base,
            names: Mutex::new(HashMap::new()),
        })
    }

    fn scrub(&self, text: &str) -> String {
        self.secrets
            .iter()
            .fold(text.to_string(), |text, secret| scrub(&text, secret))
    }

    fn error(&self, e: &SlackClientError) -> ChannelError {
        let message = self.scrub(&e.to_string());
        match e {
            SlackClientError::ApiError(api)
                if matches!(
                    api.code.as_str(),
                    "invalid_auth"
                        | "not_authed"
                        | "account_inactive"
                        | "token_revoked"
                        | "token_expired"
                        | "not_allowed_token_type"
                ) =>
            {
                ChannelError::Unauthorized {
                    platform: PLATFORM,
                    message,
                }
            }
            // "The size of provided file is too large, as the team has restricted uploads of
            // large files" (files.getUploadURLExternal).
            SlackClientError::ApiError(api) if api.code == "file_upload_size_restricted" => {
                ChannelError::TooLarge {
                    platform: PLATFORM,
                    bytes: 0,
                    limit: SLACK_UPLOAD_LIMIT,
                }
            }
            SlackClientError::ApiError(_) | SlackClientError::RateLimitError(_) => {
                ChannelError::Api {
                    platform: PLATFORM,
                    message,
                }
            }
            _ => ChannelError::Network {
                platform: PLATFORM,
                message,
            },
        }
    }

    /// `chat.postMessage` of `content` to `conversation`; the message's `ts`.
    async fn post(
        &self,
        conversation: &str,
        content: SlackMessageContent,
    ) -> Result<String, ChannelError> {
        check_conversation(conversation)?;
        let request = SlackApiChatPostMessageRequest::new(conversation.to_string().into(), content);
        let sent = self
            .client
            .open_session(&self.bot)
            .chat_post_message(&request)
            .await
            .map_err(|e| self.error(&e))?;
        Ok(sent.ts.to_string())
    }

    /// The display name of user `id` (asked once, then remembered; the id when Slack does
    /// not say).
    async fn name_of(&self, id: &str) -> String {
        if let Some(name) = self
            .names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
        {
            return name.clone();
        }
        let session = self.client.open_session(&self.bot);
        let name = match session
            .users_info(&SlackApiUsersInfoRequest::new(id.to_string().into()))
            .await
        {
            Ok(info) => display_name(&info.user),
            Err(e) => {
                tracing::debug!("users.info {id} failed: {}", self.error(&e));
                None
            }
        };
        let name = name.unwrap_or_else(|| id.to_string());
        self.names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_string(), name.clone());
        name
    }

    /// A plain message from a person as an [`Incoming`]; `None` for anything else (edits,
    /// joins, bots, files without text).
    async fn incoming(&self, event: SlackMessageEvent) -> Option<Incoming> {
        if event.subtype.is_some() || event.sender.bot_id.is_some() {
            return None;
        }
        let sender = event.sender.user?.to_string();
        let text = event.content.and_then(|c| c.text)?;
        if text.trim().is_empty() {
            return None;
        }
        let conversation = event.origin.channel?.to_string();
        let private = event
            .origin
            .channel_type
            .as_ref()
            .is_some_and(|t| t.0 == "im");
        let sender_name = self.name_of(&sender).await;
        Some(Incoming {
            message_id: event.origin.ts.to_string(),
            conversation_name: if private {
                sender_name.clone()
            } else {
                format!("channel {conversation}")
            },
            conversation,
            sender,
            sender_name,
            text,
            private,
        })
    }
}

/// What Socket Mode delivers that the stream takes: a push event, or an interaction.
enum SocketEvent {
    Push(Box<SlackPushEventCallback>),
    Interaction(Box<SlackInteractionEvent>),
}

/// What the Socket Mode callbacks hand on: each push event and interaction, in order. The
/// envelope is acknowledged when the send returns, that is when the stream has room for it.
struct Forward(mpsc::Sender<SocketEvent>);

async fn forward(states: SlackClientEventsUserState, event: SocketEvent) -> UserCallbackResult<()> {
    let sender = states
        .read()
        .await
        .get_user_state::<Forward>()
        .map(|f| f.0.clone());
    match sender {
        Some(sender) => sender
            .send(event)
            .await
            .map_err(|_| "the channel stopped receiving".into()),
        None => Err("no receiver for Slack events".into()),
    }
}

async fn on_push(
    event: SlackPushEventCallback,
    _client: Arc<Client>,
    states: SlackClientEventsUserState,
) -> UserCallbackResult<()> {
    forward(states, SocketEvent::Push(Box::new(event))).await
}

async fn on_interaction(
    event: SlackInteractionEvent,
    _client: Arc<Client>,
    states: SlackClientEventsUserState,
) -> UserCallbackResult<()> {
    forward(states, SocketEvent::Interaction(Box::new(event))).await
}

/// A press of one of the bot's buttons as a [`Press`] (its id is the `response_url` the answer
/// goes to); `None` for any other interaction.
fn press(event: &SlackInteractionEvent) -> Option<Press> {
    let SlackInteractionEvent::BlockActions(actions) = event else {
        return None;
    };
    let user = actions.user.as_ref()?;
    let conversation = match (&actions.channel, &actions.container) {
        (Some(channel), _) => channel.id.to_string(),
        (None, SlackInteractionActionContainer::Message(m)) => m.channel_id.as_ref()?.to_string(),
        _ => return None,
    };
    let data = actions.actions.as_ref()?.first()?.value.clone()?;
    Some(Press {
        id: actions.response_url.as_ref()?.value().to_string(),
        conversation,
        sender: user.id.to_string(),
        sender_name: user
            .name
            .clone()
            .or_else(|| user.username.clone())
            .unwrap_or_else(|| user.id.to_string()),
        data,
    })
}

fn on_error(
    err: Box<dyn std::error::Error + Send + Sync>,
    _client: Arc<Client>,
    _states: SlackClientEventsUserState,
) -> HttpStatusCode {
    // Not acknowledged: Slack delivers the envelope again.
    tracing::warn!("a Slack event was not taken: {err}");
    HttpStatusCode::INTERNAL_SERVER_ERROR
}

/// The Socket Mode listener of one stream; stopped when the stream is dropped.
struct Listening {
    listener: Arc<SlackClientSocketModeListener<Connector>>,
    events: mpsc::Receiver<SocketEvent>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let listener = Arc::clone(&self.listener);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { listener.shutdown().await });
        }
    }
}

struct SocketState {
    channel: Arc<SlackChannel>,
    listening: Option<Listening>,
}

impl SocketState {
    async fn listen(&self) -> Result<Listening, ChannelError> {
        let (sender, events) = mpsc::channel(1);
        let environment = Arc::new(
            SlackClientEventsListenerEnvironment::new(Arc::clone(&self.channel.client))
                .with_error_handler(on_error)
                .with_user_state(Forward(sender)),
        );
        let callbacks = SlackSocketModeListenerCallbacks::new()
            .with_push_events(on_push)
            .with_interaction_events(on_interaction);
        let config = SlackClientSocketModeConfig::new()
            .with_max_connections_count(1)
            .with_initial_backoff_in_seconds(1);
        let listener = Arc::new(SlackClientSocketModeListener::new(
            &config,
            environment,
            callbacks,
        ));
        listener
            .listen_for(&self.channel.app)
            .await
            .map_err(|e| self.channel.error(&e))?;
        listener.start().await;
        Ok(Listening { listener, events })
    }
}

impl Receiver for SocketState {
    async fn next(&mut self) -> Result<Received, ChannelError> {
        loop {
            let listening = match &mut self.listening {
                Some(l) => l,
                None => self.listening.insert(self.listen().await?),
            };
            let Some(event) = listening.events.recv().await else {
                self.listening = None;
                return Err(ChannelError::Network {
                    platform: PLATFORM,
                    message: "Socket Mode stopped".into(),
                });
            };
            match event {
                SocketEvent::Push(push) => {
                    if let SlackEventCallbackBody::Message(event) = push.event
                        && let Some(incoming) = self.channel.incoming(event).await
                    {
                        return Ok(Received::Message(incoming));
                    }
                }
                SocketEvent::Interaction(interaction) => {
                    if let Some(press) = press(&interaction) {
                        return Ok(Received::Press(press));
                    }
                }
            }
        }
    }
}

#[async_trait]
impl Channel for SlackChannel {
    fn platform(&self) -> ChannelPlatform {
        ChannelPlatform::Slack
    }

    fn limit(&self) -> MessageLimit {
        SLACK_LIMIT
    }

    async fn connect(&self) -> Result<BotIdentity, ChannelError> {
        let me = self
            .client
            .open_session(&self.bot)
            .auth_test()
            .await
            .map_err(|e| self.error(&e))?;
        // The app-level token is checked too: Socket Mode needs it.
        self.client
            .open_session(&self.app)
            .apps_connections_open(&SlackApiAppsConnectionOpenRequest::new())
            .await
            .map_err(|e| self.error(&e))?;
        let name = me.user.clone().unwrap_or_else(|| me.user_id.to_string());
        Ok(BotIdentity {
            id: me.user_id.to_string(),
            name: format!("{name} ({})", me.team),
            username: me.user,
        })
    }

    /// Slack delivers an envelope again when it was not acknowledged; one taken from the
    /// stream was acknowledged, so a crash before it is handled loses it to the channel.
    fn receive(self: Arc<Self>) -> BoxStream<'static, Result<Received, ChannelError>> {
        stream_of(SocketState {
            channel: self,
            listening: None,
        })
    }

    async fn send_one(&self, conversation: &str, text: &str) -> Result<String, ChannelError> {
        self.post(
            conversation,
            SlackMessageContent::new().with_text(text.to_string()),
        )
        .await
    }

    fn upload_limit(&self) -> u64 {
        SLACK_UPLOAD_LIMIT
    }

    fn has_buttons(&self) -> bool {
        true
    }

    async fn send_buttons(
        &self,
        conversation: &str,
        text: &str,
        buttons: &[Button],
    ) -> Result<String, ChannelError> {
        let elements = buttons
            .iter()
            .enumerate()
            .map(|(i, b)| {
                SlackBlockButtonElement::new(b.label.as_str().into())
                    .with_action_id(format!("suzent-{i}").into())
                    .with_value(b.data.clone())
                    .into()
            })
            .collect();
        let blocks = vec![
            SlackSectionBlock::new()
                .with_text(SlackBlockPlainText::from(text).into())
                .into(),
            SlackActionsBlock::new(elements).into(),
        ];
        self.post(
            conversation,
            SlackMessageContent::new()
                .with_text(text.to_string())
                .with_blocks(blocks),
        )
        .await
    }

    async fn answer_press(&self, press: &Press, text: &str) -> Result<(), ChannelError> {
        let url = url::Url::parse(&press.id).map_err(|_| ChannelError::Invalid {
            field: "press",
            message: "not a Slack response URL".into(),
        })?;
        let answer = SlackApiPostWebhookMessageRequest::new(
            SlackMessageContent::new().with_text(text.to_string()),
        )
        .with_replace_original(false);
        self.client
            .respond_to_event(&SlackResponseUrl::new(url), &answer)
            .await
            .map_err(|e| self.error(&e))?;
        Ok(())
    }

    async fn send_audio(
        &self,
        conversation: &str,
        audio: &AudioFile,
    ) -> Result<String, ChannelError> {
        check_size(PLATFORM, audio, SLACK_UPLOAD_LIMIT)?;
        check_conversation(conversation)?;
        let session = self.client.open_session(&self.bot);
        let target = session
            .get_upload_url_external(&SlackApiFilesGetUploadUrlExternalRequest::new(
                audio.file_name.clone(),
                audio.bytes.len(),
            ))
            .await
            .map_err(|e| self.error(&e).with_size(audio.bytes.len() as u64))?;
        session
            .files_upload_via_url(&SlackApiFilesUploadViaUrlRequest::new(
                target.upload_url,
                audio.bytes.clone(),
                audio.mime_type.clone(),
            ))
            .await
            .map_err(|e| self.error(&e))?;
        let request = SlackApiFilesCompleteUploadExternalRequest::new(vec![
            SlackApiFilesComplete::new(target.file_id.clone()).with_title(audio.file_name.clone()),
        ])
        .with_channel_id(conversation.to_string().into());
        session
            .files_complete_upload_external(&request)
            .await
            .map_err(|e| self.error(&e))?;
        Ok(target.file_id.to_string())
    }
}

fn check_conversation(conversation: &str) -> Result<(), ChannelError> {
    if conversation.is_empty() || conversation.contains(char::is_whitespace) {
        return Err(ChannelError::Invalid {
            field: "conversation",
            message: format!("'{conversation}' is not a Slack channel id"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_secret_holds_both_tokens_in_any_order_and_a_missing_one_is_named() {
        assert_eq!(
            tokens("xapp-1-A  xoxb-2-B").ok(),
            Some(("xoxb-2-B".to_string(), "xapp-1-A".to_string()))
        );
        let missing_app = tokens("xoxb-2-B").unwrap_err().to_string();
        assert!(missing_app.contains("app-level token"), "{missing_app}");
        let missing_bot = tokens("xapp-1-A").unwrap_err().to_string();
        assert!(missing_bot.contains("bot token"), "{missing_bot}");
        let other = tokens("xoxb-2-B hunter2").unwrap_err().to_string();
        assert!(!other.contains("hunter2"), "{other}");
    }

    #[test]
    fn debug_never_shows_the_tokens() {
        let app = SlackChannel::new(
            "xoxb-SECRET-1 xapp-SECRET-2",
            Some("http://127.0.0.1:9/api"),
        );
        let shown = format!("{app:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
    }
}
