//! Telegram through the Bot API (`teloxide-core`): `getMe` to connect, `getUpdates` long
//! polling to receive, `sendMessage` to send. Only text messages and presses of the bot's
//! inline keyboard buttons (`callback_query`) are passed on. Audio goes as a multipart upload:
//! `sendVoice` for OGG/Opus (what Telegram plays as a voice message), `sendAudio` for MP3/M4A,
//! `sendDocument` for anything else (Suzent's WAV clips). Buttons are an inline keyboard on
//! `sendMessage`; a press is answered with `answerCallbackQuery`.

use crate::receive::{Poller, Polling, stream_of};
use crate::{
    AudioFile, BotIdentity, Button, Channel, ChannelError, ChannelPlatform, Incoming, LengthUnit,
    MessageLimit, Press, Received, check_size, scrub,
};
use async_trait::async_trait;
use futures::stream::BoxStream;
use std::sync::Arc;
use std::time::Duration;
use teloxide_core::Bot;
use teloxide_core::errors::{ApiError, RequestError};
use teloxide_core::payloads::{
    AnswerCallbackQuerySetters, GetUpdatesSetters, SendMessageSetters, SendVoiceSetters,
};
use teloxide_core::requests::{Request, Requester};
use teloxide_core::types::{
    AllowedUpdate, CallbackQuery, CallbackQueryId, ChatId, InlineKeyboardButton,
    InlineKeyboardMarkup, InputFile, Message, UpdateKind,
};

/// The Bot API's public address.
pub const TELEGRAM_API: &str = "https://api.telegram.org";
/// Telegram's longest message: 4096 characters, counted in UTF-16 code units.
pub const TELEGRAM_LIMIT: MessageLimit = MessageLimit {
    max: 4096,
    unit: LengthUnit::Utf16,
};
/// The largest file a bot may upload (Bot API, "Sending files": 50 MB for other files).
pub const TELEGRAM_UPLOAD_LIMIT: u64 = 50 * 1000 * 1000;
/// How long one `getUpdates` waits for a message (seconds).
const LONG_POLL_SECS: u32 = 25;
const PLATFORM: &str = "Telegram";

/// A Telegram bot (its token from @BotFather). `Debug` never shows the token.
pub struct TelegramChannel {
    bot: Bot,
    token: String,
    long_poll: u32,
}

impl std::fmt::Debug for TelegramChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelegramChannel")
            .field("api", &self.bot.api_url().to_string())
            .finish_non_exhaustive()
    }
}

impl TelegramChannel {
    /// A bot with `token` against `base_url` (default [`TELEGRAM_API`]).
    ///
    /// Errors: [`ChannelError::Invalid`] naming `token` (empty, or with whitespace) or
    /// `base_url` (not an http(s) URL), or the HTTP client cannot be built.
    pub fn new(token: &str, base_url: Option<&str>) -> Result<TelegramChannel, ChannelError> {
        TelegramChannel::with_long_poll(token, base_url, LONG_POLL_SECS)
    }

    /// As [`TelegramChannel::new`], with `getUpdates` waiting at most `long_poll_secs` (tests
    /// and benchmarks use a short wait so that a stop is quick).
    pub fn with_long_poll(
        token: &str,
        base_url: Option<&str>,
        long_poll_secs: u32,
    ) -> Result<TelegramChannel, ChannelError> {
        let token = token.trim();
        if token.is_empty() || token.contains(char::is_whitespace) || token.contains('/') {
            return Err(ChannelError::Invalid {
                field: "token",
                message: "a Telegram bot token is one word like 123456:ABC-DEF (from @BotFather)"
                    .into(),
            });
        }
        let base = base_url.unwrap_or(TELEGRAM_API);
        let url = url::Url::parse(base)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && !u.cannot_be_a_base())
            .ok_or_else(|| ChannelError::Invalid {
                field: "base_url",
                message: format!("'{base}' is not an http(s) URL"),
            })?;
        // The long poll must end before the client gives up on it.
        let client = teloxide_core::net::default_reqwest_settings()
            .timeout(Duration::from_secs(u64::from(long_poll_secs) + 15))
            .build()
            .map_err(|e| ChannelError::Invalid {
                field: "client",
                message: format!("the HTTP client cannot be built: {e}"),
            })?;
        Ok(TelegramChannel {
            bot: Bot::with_client(token, client).set_api_url(url),
            token: token.to_string(),
            long_poll: long_poll_secs,
        })
    }

    fn error(&self, e: RequestError) -> ChannelError {
        let message = scrub(&e.to_string(), &self.token);
        match e {
            // The Bot API's answer to an upload above its limit.
            RequestError::Api(ApiError::RequestEntityTooLarge) => ChannelError::TooLarge {
                platform: PLATFORM,
                bytes: 0,
                limit: TELEGRAM_UPLOAD_LIMIT,
            },
            RequestError::Api(ApiError::InvalidToken) => ChannelError::Unauthorized {
                platform: PLATFORM,
                message,
            },
            RequestError::Api(_)
            | RequestError::MigrateToChatId(_)
            | RequestError::RetryAfter(_) => ChannelError::Api {
                platform: PLATFORM,
                message,
            },
            _ => ChannelError::Network {
                platform: PLATFORM,
                message,
            },
        }
    }
}

impl Poller for TelegramChannel {
    type Cursor = i32;

    /// One `getUpdates` from `offset`: the text messages and button presses in it and the
    /// next offset.
    async fn poll(&self, offset: i32) -> Result<(Vec<Received>, i32), ChannelError> {
        let updates = self
            .bot
            .get_updates()
            .offset(offset)
            .timeout(self.long_poll)
            .allowed_updates(vec![AllowedUpdate::Message, AllowedUpdate::CallbackQuery])
            .send()
            .await
            .map_err(|e| self.error(e))?;
        let mut next = offset;
        let mut out = Vec::new();
        for update in updates {
            next = next.max(
                i32::try_from(update.id.0)
                    .unwrap_or(i32::MAX)
                    .saturating_add(1),
            );
            match update.kind {
                UpdateKind::Message(message) => {
                    out.extend(incoming(&message).map(Received::Message));
                }
                UpdateKind::CallbackQuery(query) => {
                    out.extend(press(&query).map(Received::Press));
                }
                _ => {}
            }
        }
        Ok((out, next))
    }
}

/// A text message from a person as an [`Incoming`]; `None` for anything else (media, service
/// messages, other bots, anonymous senders).
fn incoming(message: &Message) -> Option<Incoming> {
    let text = message.text()?;
    let from = message.from.as_ref().filter(|u| !u.is_bot)?;
    let private = message.chat.is_private();
    let conversation_name = if private {
        from.full_name()
    } else {
        message
            .chat
            .title()
            .map(str::to_string)
            .unwrap_or_else(|| format!("chat {}", message.chat.id))
    };
    Some(Incoming {
        message_id: message.id.0.to_string(),
        conversation: message.chat.id.0.to_string(),
        conversation_name,
        sender: from.id.0.to_string(),
        sender_name: from.full_name(),
        text: text.to_string(),
        private,
    })
}

/// A press of an inline keyboard button of a message in a chat as a [`Press`]; `None` for
/// presses without data or without their message (inline mode, games).
fn press(query: &CallbackQuery) -> Option<Press> {
    let data = query.data.clone()?;
    let message = query.message.as_ref()?;
    Some(Press {
        id: query.id.0.clone(),
        conversation: message.chat().id.0.to_string(),
        sender: query.from.id.0.to_string(),
        sender_name: query.from.full_name(),
        data,
    })
}

fn chat_id(conversation: &str) -> Result<ChatId, ChannelError> {
    conversation
        .parse()
        .map(ChatId)
        .map_err(|_| ChannelError::Invalid {
            field: "conversation",
            message: format!("'{conversation}' is not a Telegram chat id"),
        })
}

/// How Telegram shows a file of this MIME type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AudioMethod {
    /// `sendVoice`: a voice message (OGG with Opus).
    Voice,
    /// `sendAudio`: a track in the music player (MP3, M4A).
    Audio,
    /// `sendDocument`: a file.
    Document,
}

fn audio_method(mime_type: &str) -> AudioMethod {
    let base = mime_type.split(';').next().unwrap_or_default().trim();
    match base.to_ascii_lowercase().as_str() {
        "audio/ogg" | "audio/opus" => AudioMethod::Voice,
        "audio/mpeg" | "audio/mp3" | "audio/mp4" | "audio/m4a" | "audio/x-m4a" => {
            AudioMethod::Audio
        }
        _ => AudioMethod::Document,
    }
}

#[async_trait]
impl Channel for TelegramChannel {
    fn platform(&self) -> ChannelPlatform {
        ChannelPlatform::Telegram
    }

    fn limit(&self) -> MessageLimit {
        TELEGRAM_LIMIT
    }

    async fn connect(&self) -> Result<BotIdentity, ChannelError> {
        let me = self.bot.get_me().send().await.map_err(|e| self.error(e))?;
        Ok(BotIdentity {
            id: me.user.id.0.to_string(),
            name: me.user.full_name(),
            username: me.user.username.clone(),
        })
    }

    fn upload_limit(&self) -> u64 {
        TELEGRAM_UPLOAD_LIMIT
    }

    async fn send_audio(
        &self,
        conversation: &str,
        audio: &AudioFile,
    ) -> Result<String, ChannelError> {
        check_size(PLATFORM, audio, TELEGRAM_UPLOAD_LIMIT)?;
        let chat = chat_id(conversation)?;
        let file = InputFile::memory(audio.bytes.clone()).file_name(audio.file_name.clone());
        let seconds = u32::try_from(audio.duration_ms.div_ceil(1000)).unwrap_or(u32::MAX);
        let sent = match audio_method(&audio.mime_type) {
            AudioMethod::Voice => {
                self.bot
                    .send_voice(chat, file)
                    .duration(seconds)
                    .send()
                    .await
            }
            AudioMethod::Audio => self.bot.send_audio(chat, file).send().await,
            AudioMethod::Document => self.bot.send_document(chat, file).send().await,
        };
        let sent = sent.map_err(|e| self.error(e).with_size(audio.bytes.len() as u64))?;
        Ok(sent.id.0.to_string())
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
        let row = buttons
            .iter()
            .map(|b| InlineKeyboardButton::callback(b.label.clone(), b.data.clone()))
            .collect::<Vec<_>>();
        let sent = self
            .bot
            .send_message(chat_id(conversation)?, text)
            .reply_markup(InlineKeyboardMarkup::new(vec![row]))
            .send()
            .await
            .map_err(|e| self.error(e))?;
        Ok(sent.id.0.to_string())
    }

    async fn answer_press(&self, press: &Press, text: &str) -> Result<(), ChannelError> {
        self.bot
            .answer_callback_query(CallbackQueryId(press.id.clone()))
            .text(text)
            .send()
            .await
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    fn receive(self: Arc<Self>) -> BoxStream<'static, Result<Received, ChannelError>> {
        // Asking from the next offset acknowledges what was handed out before.
        stream_of(Polling::new(self))
    }

    async fn send_one(&self, conversation: &str, text: &str) -> Result<String, ChannelError> {
        let sent = self
            .bot
            .send_message(chat_id(conversation)?, text)
            .send()
            .await
            .map_err(|e| self.error(e))?;
        Ok(sent.id.0.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ogg_opus_goes_as_a_voice_message_and_wav_as_a_document() {
        assert_eq!(audio_method("audio/ogg; codecs=opus"), AudioMethod::Voice);
        assert_eq!(audio_method("audio/mpeg"), AudioMethod::Audio);
        assert_eq!(audio_method("audio/wav"), AudioMethod::Document);
    }

    #[test]
    fn debug_and_errors_never_show_the_token() {
        let bot = TelegramChannel::new("123:SECRET", Some("http://127.0.0.1:9"))
            .map_err(|e| e.to_string());
        let shown = format!("{bot:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(matches!(
            TelegramChannel::new("", None),
            Err(ChannelError::Invalid { field: "token", .. })
        ));
        assert!(matches!(
            TelegramChannel::new("1:a", Some("ftp://x")),
            Err(ChannelError::Invalid {
                field: "base_url",
                ..
            })
        ));
    }
}
