//! Discord through a bot account (twilight): REST `GET /users/@me` to connect, the gateway to
//! receive (`GET /gateway/bot` gives its URL; Hello, Identify, Ready and heartbeats are
//! twilight-gateway's; `MESSAGE_CREATE` dispatches are passed on), REST
//! `POST /channels/{id}/messages` to send (audio as a multipart attachment, `files[0]` beside
//! `payload_json`, which Discord's apps play). Only text messages from people are passed on,
//! and presses of the bot's buttons: a message with an action row of buttons (message
//! components, each with its `custom_id`), pressed as an `INTERACTION_CREATE` dispatch of a
//! message component, answered with `POST /interactions/{id}/{token}/callback` (an ephemeral
//! message only the person who pressed sees).

use crate::receive::{Receiver, stream_of};
use crate::{
    AudioFile, BotIdentity, Button, Channel, ChannelError, ChannelPlatform, Incoming, LengthUnit,
    MessageLimit, Press, Received, check_size, scrub,
};
use async_trait::async_trait;
use futures::stream::BoxStream;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use twilight_gateway::{
    CloseFrame, ConfigBuilder, Event, EventTypeFlags, Intents, Shard, ShardId, StreamExt as _,
};
use twilight_http::error::ErrorType;
use twilight_http::{Client, Response};
use twilight_model::application::interaction::{Interaction, InteractionData, InteractionType};
use twilight_model::channel::Message;
use twilight_model::channel::message::MessageFlags;
use twilight_model::channel::message::component::{
    ActionRow, Button as ComponentButton, ButtonStyle, Component,
};
use twilight_model::http::attachment::Attachment;
use twilight_model::http::interaction::{
    InteractionResponse, InteractionResponseData, InteractionResponseType,
};
use twilight_model::id::Id;

/// Discord's public REST host (`https://discord.com/api/v10`).
pub const DISCORD_API: &str = "https://discord.com";
/// Discord's longest message: 2,000 characters (Create Message, `content`).
pub const DISCORD_LIMIT: MessageLimit = MessageLimit {
    max: 2000,
    unit: LengthUnit::Chars,
};
/// The largest attachment a bot may upload to a server without boosts (10 MiB).
pub const DISCORD_UPLOAD_LIMIT: u64 = 10 * 1024 * 1024;
const PLATFORM: &str = "Discord";
/// The gateway's close code for a refused token ("Authentication failed").
const AUTHENTICATION_FAILED: u16 = 4004;

/// A Discord bot (its token from the Developer Portal). `Debug` never shows the token.
pub struct DiscordChannel {
    /// Built on first use, inside the async methods: twilight's client spawns its rate
    /// limiter on the Tokio runtime when it is built.
    http: OnceLock<Client>,
    proxy: (String, bool),
    token: String,
    base: String,
}

impl std::fmt::Debug for DiscordChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscordChannel")
            .field("api", &self.base)
            .finish_non_exhaustive()
    }
}

/// Makes sure rustls has a process-wide crypto provider (twilight builds its TLS configs from
/// it; with two providers compiled in, rustls picks none by itself).
pub(crate) fn ensure_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one first; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// `base_url` as twilight's REST "proxy": the host (with port and path) and whether it is
/// plain HTTP.
fn rest_base(base_url: &str) -> Result<(String, bool), ChannelError> {
    let url = url::Url::parse(base_url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
        .ok_or_else(|| ChannelError::Invalid {
            field: "base_url",
            message: format!("'{base_url}' is not an http(s) URL"),
        })?;
    let host = url.host_str().unwrap_or_default();
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    let path = url.path().trim_end_matches('/');
    Ok((format!("{host}{port}{path}"), url.scheme() == "http"))
}

impl DiscordChannel {
    /// A bot with `token` against `base_url` (default [`DISCORD_API`]; the gateway's URL comes
    /// from its `GET /gateway/bot`).
    ///
    /// Errors: [`ChannelError::Invalid`] naming `token` (empty, or with whitespace) or
    /// `base_url` (not an http(s) URL).
    pub fn new(token: &str, base_url: Option<&str>) -> Result<DiscordChannel, ChannelError> {
        let token = token.trim();
        let token = token.strip_prefix("Bot ").unwrap_or(token);
        if token.is_empty() || token.contains(char::is_whitespace) {
            return Err(ChannelError::Invalid {
                field: "token",
                message: "a Discord bot token is one word (Developer Portal → Bot → Token)".into(),
            });
        }
        let base = base_url.unwrap_or(DISCORD_API);
        let proxy = rest_base(base)?;
        ensure_crypto_provider();
        Ok(DiscordChannel {
            http: OnceLock::new(),
            proxy,
            token: token.to_string(),
            base: base.to_string(),
        })
    }

    /// The REST client (needs a Tokio runtime the first time).
    fn http(&self) -> &Client {
        self.http.get_or_init(|| {
            Client::builder()
                .token(self.token.clone())
                .proxy(self.proxy.0.clone(), self.proxy.1)
                .timeout(Duration::from_secs(30))
                // A refused token is reported each time, not remembered and hidden.
                .remember_invalid_token(false)
                .build()
        })
    }

    fn error(&self, e: &twilight_http::Error) -> ChannelError {
        let message = scrub(&e.to_string(), &self.token);
        match e.kind() {
            ErrorType::Unauthorized => ChannelError::Unauthorized {
                platform: PLATFORM,
                message,
            },
            // "Request entity too large" (JSON error code 40005).
            ErrorType::Response { status, .. } if status.get() == 413 => ChannelError::TooLarge {
                platform: PLATFORM,
                bytes: 0,
                limit: DISCORD_UPLOAD_LIMIT,
            },
            ErrorType::Response { status, .. } if status.get() == 401 => {
                ChannelError::Unauthorized {
                    platform: PLATFORM,
                    message,
                }
            }
            ErrorType::Response { .. } | ErrorType::Validation | ErrorType::Json => {
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

    /// Sends a REST request and reads its model; `what` names it in errors.
    async fn model<T, R>(&self, what: &str, request: R) -> Result<T, ChannelError>
    where
        T: serde::de::DeserializeOwned + Unpin + Send,
        R: std::future::IntoFuture<Output = Result<Response<T>, twilight_http::Error>> + Send,
        R::IntoFuture: Send,
    {
        let response = request.await.map_err(|e| self.error(&e))?;
        response
            .model()
            .await
            .map_err(|e| self.network(&format!("reading the answer to {what}"), e))
    }

    fn network(&self, what: &str, e: impl std::fmt::Display) -> ChannelError {
        ChannelError::Network {
            platform: PLATFORM,
            message: scrub(&format!("{what}: {e}"), &self.token),
        }
    }

    /// A shard connected to the gateway URL that `GET /gateway/bot` names.
    async fn shard(&self) -> Result<Shard, ChannelError> {
        let info = self
            .model("GET /gateway/bot", self.http().gateway().authed())
            .await?;
        let intents = Intents::GUILD_MESSAGES | Intents::DIRECT_MESSAGES | Intents::MESSAGE_CONTENT;
        let config = ConfigBuilder::new(self.token.clone(), intents)
            .proxy_url(info.url.trim_end_matches('/').to_string())
            .build();
        Ok(Shard::with_config(ShardId::ONE, config))
    }
}

/// A text message from a person as an [`Incoming`]; `None` for anything else (bots, webhooks,
/// empty content such as attachments only).
fn incoming(message: &Message) -> Option<Incoming> {
    if message.author.bot || message.webhook_id.is_some() || message.content.trim().is_empty() {
        return None;
    }
    let sender_name = message
        .author
        .global_name
        .clone()
        .unwrap_or_else(|| message.author.name.clone());
    let private = message.guild_id.is_none();
    Some(Incoming {
        message_id: message.id.to_string(),
        conversation: message.channel_id.to_string(),
        conversation_name: if private {
            sender_name.clone()
        } else {
            format!("channel {}", message.channel_id)
        },
        sender: message.author.id.to_string(),
        sender_name,
        text: message.content.clone(),
        private,
    })
}

/// A press of one of the bot's buttons as a [`Press`] (its id holds what the answer needs:
/// `application/interaction/token`); `None` for any other interaction.
fn press(interaction: &Interaction) -> Option<Press> {
    if interaction.kind != InteractionType::MessageComponent {
        return None;
    }
    let Some(InteractionData::MessageComponent(data)) = &interaction.data else {
        return None;
    };
    let user = interaction.author()?;
    let channel = interaction.channel.as_ref()?;
    Some(Press {
        id: format!(
            "{}/{}/{}",
            interaction.application_id, interaction.id, interaction.token
        ),
        conversation: channel.id.to_string(),
        sender: user.id.to_string(),
        sender_name: user
            .global_name
            .clone()
            .unwrap_or_else(|| user.name.clone()),
        data: data.custom_id.clone(),
    })
}

fn parse_id<T>(conversation: &str) -> Result<Id<T>, ChannelError> {
    conversation
        .parse::<u64>()
        .ok()
        .and_then(Id::new_checked)
        .ok_or_else(|| ChannelError::Invalid {
            field: "conversation",
            message: format!("'{conversation}' is not a Discord channel id"),
        })
}

struct GatewayState {
    channel: Arc<DiscordChannel>,
    shard: Option<Shard>,
}

impl Receiver for GatewayState {
    /// The next message, or one error (after which the shard is connected again).
    async fn next(&mut self) -> Result<Received, ChannelError> {
        loop {
            let shard = match &mut self.shard {
                Some(shard) => shard,
                None => self.shard.insert(self.channel.shard().await?),
            };
            // Close frames come whatever the flags.
            let wanted = EventTypeFlags::MESSAGE_CREATE | EventTypeFlags::INTERACTION_CREATE;
            match shard.next_event(wanted).await {
                Some(Ok(Event::MessageCreate(message))) => {
                    if let Some(incoming) = incoming(&message.message) {
                        return Ok(Received::Message(incoming));
                    }
                }
                Some(Ok(Event::InteractionCreate(interaction))) => {
                    if let Some(press) = press(&interaction.0) {
                        return Ok(Received::Press(press));
                    }
                }
                Some(Ok(Event::GatewayClose(Some(CloseFrame { code, reason, .. }))))
                    if code == AUTHENTICATION_FAILED =>
                {
                    self.shard = None;
                    return Err(ChannelError::Unauthorized {
                        platform: PLATFORM,
                        message: format!("the gateway closed with {code} ({reason})"),
                    });
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    // twilight reconnects by itself after a failed receive.
                    return Err(self.channel.network("the gateway failed", e));
                }
                None => {
                    // Closed for good (a close code that forbids reconnecting).
                    self.shard = None;
                    return Err(self.channel.network("the gateway", "closed the connection"));
                }
            }
        }
    }
}

#[async_trait]
impl Channel for DiscordChannel {
    fn platform(&self) -> ChannelPlatform {
        ChannelPlatform::Discord
    }

    fn limit(&self) -> MessageLimit {
        DISCORD_LIMIT
    }

    async fn connect(&self) -> Result<BotIdentity, ChannelError> {
        let me = self
            .model("GET /users/@me", self.http().current_user())
            .await?;
        Ok(BotIdentity {
            id: me.id.to_string(),
            name: me.global_name.clone().unwrap_or_else(|| me.name.clone()),
            username: Some(me.name),
        })
    }

    /// Discord's gateway does not deliver a message twice, so a message taken and not handled
    /// when the process dies is lost to the channel (it stays on Discord).
    fn receive(self: Arc<Self>) -> BoxStream<'static, Result<Received, ChannelError>> {
        stream_of(GatewayState {
            channel: self,
            shard: None,
        })
    }

    async fn send_one(&self, conversation: &str, text: &str) -> Result<String, ChannelError> {
        let channel = parse_id(conversation)?;
        let sent = self
            .model(
                "POST /channels/{id}/messages",
                self.http().create_message(channel).content(text),
            )
            .await?;
        Ok(sent.id.to_string())
    }

    fn upload_limit(&self) -> u64 {
        DISCORD_UPLOAD_LIMIT
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
        let channel = parse_id(conversation)?;
        let row = [Component::ActionRow(ActionRow {
            id: None,
            components: buttons
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    Component::Button(ComponentButton {
                        custom_id: Some(b.data.clone()),
                        disabled: false,
                        emoji: None,
                        id: None,
                        label: Some(b.label.clone()),
                        sku_id: None,
                        style: if i == 0 {
                            ButtonStyle::Primary
                        } else {
                            ButtonStyle::Secondary
                        },
                        url: None,
                    })
                })
                .collect(),
        })];
        let sent = self
            .model(
                "POST /channels/{id}/messages",
                self.http()
                    .create_message(channel)
                    .content(text)
                    .components(&row),
            )
            .await?;
        Ok(sent.id.to_string())
    }

    async fn answer_press(&self, press: &Press, text: &str) -> Result<(), ChannelError> {
        let mut parts = press.id.splitn(3, '/');
        let (Some(application), Some(interaction), Some(token)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(ChannelError::Invalid {
                field: "press",
                message: "not a Discord interaction".into(),
            });
        };
        let response = InteractionResponse {
            kind: InteractionResponseType::ChannelMessageWithSource,
            data: Some(InteractionResponseData {
                content: Some(text.to_string()),
                flags: Some(MessageFlags::EPHEMERAL),
                ..InteractionResponseData::default()
            }),
        };
        let client = self.http().interaction(parse_id(application)?);
        client
            .create_response(parse_id(interaction)?, token, &response)
            .await
            .map_err(|e| self.error(&e))?;
        Ok(())
    }

    async fn send_audio(
        &self,
        conversation: &str,
        audio: &AudioFile,
    ) -> Result<String, ChannelError> {
        check_size(PLATFORM, audio, DISCORD_UPLOAD_LIMIT)?;
        let channel = parse_id(conversation)?;
        let files = [Attachment::from_bytes(
            audio.file_name.clone(),
            audio.bytes.clone(),
            0,
        )];
        let sent = self
            .model(
                "POST /channels/{id}/messages",
                self.http().create_message(channel).attachments(&files),
            )
            .await
            .map_err(|e| e.with_size(audio.bytes.len() as u64))?;
        Ok(sent.id.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_base_url_becomes_twilights_host_and_scheme() {
        assert_eq!(
            rest_base("http://127.0.0.1:4567/").ok(),
            Some(("127.0.0.1:4567".to_string(), true))
        );
        assert_eq!(
            rest_base("https://discord.com").ok(),
            Some(("discord.com".to_string(), false))
        );
        assert!(matches!(
            rest_base("ws://x"),
            Err(ChannelError::Invalid {
                field: "base_url",
                ..
            })
        ));
    }

    #[test]
    fn debug_never_shows_the_token_and_a_blank_token_is_refused() {
        let bot = DiscordChannel::new("SECRET.TOKEN.x", Some("http://127.0.0.1:9"));
        let shown = format!("{bot:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(matches!(
            DiscordChannel::new(" ", None),
            Err(ChannelError::Invalid { field: "token", .. })
        ));
    }
}
