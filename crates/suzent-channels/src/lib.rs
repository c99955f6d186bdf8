//! Suzent's messaging channels: a [`Channel`] is one bot account on one platform (Telegram,
//! Discord, Slack, Matrix) that connects, yields the messages people send it (and the buttons
//! they press) as a stream, and sends text back, split at the platform's length limit in order
//! (never cut silently, see [`split_message`]), audio files (speech clips, within the
//! platform's upload limit, see [`Channel::send_audio`]) and, where the platform has them,
//! messages with buttons ([`Channel::send_buttons`]).
//!
//! This crate knows platforms, not agents: who may talk to the agent, which chat a
//! conversation goes to and what the reply is are the runtime's channel service's business.
//! Every client takes a base URL, so tests point it at a server on loopback.
//!
//! ```no_run
//! # async fn demo() -> Result<(), suzent_channels::ChannelError> {
//! use futures::StreamExt;
//! use std::sync::Arc;
//! use suzent_channels::{Channel, Received, TelegramChannel};
//! let bot = Arc::new(TelegramChannel::new("123:token", None)?);
//! let me = bot.connect().await?;
//! println!("connected as {}", me.name);
//! let mut incoming = Arc::clone(&bot).receive();
//! while let Some(Ok(received)) = incoming.next().await {
//!     if let Received::Message(message) = received {
//!         bot.send(&message.conversation, &format!("you said: {}", message.text)).await?;
//!     }
//! }
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod discord;
mod matrix;
mod receive;
mod slack;
mod split;
mod telegram;

pub use discord::{DISCORD_API, DISCORD_LIMIT, DiscordChannel};
pub use matrix::{MATRIX_LIMIT, MatrixChannel};
pub use slack::{SLACK_API, SLACK_LIMIT, SlackChannel};
pub use split::{LengthUnit, MessageLimit, split_message};
pub use suzent_core::ChannelPlatform;
pub use telegram::{TELEGRAM_API, TELEGRAM_LIMIT, TelegramChannel};

use async_trait::async_trait;
use futures::stream::BoxStream;
use std::sync::Arc;

/// Who the channel's bot account is on its platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotIdentity {
    /// The platform's id of the bot account.
    pub id: String,
    /// Its display name.
    pub name: String,
    /// Its user name (`@name` on Telegram), where the platform has one.
    pub username: Option<String>,
}

/// A text message someone sent to the channel's bot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming {
    /// The platform's message id, unique within the conversation.
    pub message_id: String,
    /// The conversation it was sent in (a Telegram chat id); replies go there.
    pub conversation: String,
    /// Who or what the conversation is with: the person in a private conversation, else the
    /// group's title.
    pub conversation_name: String,
    /// The platform's id of the sender (what allow-lists hold).
    pub sender: String,
    /// The sender's display name.
    pub sender_name: String,
    /// The text.
    pub text: String,
    /// A one-to-one conversation with the bot.
    pub private: bool,
}

/// Someone pressed a button of a message the bot sent ([`Channel::send_buttons`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press {
    /// The platform's id of the press (Telegram's callback query id), for
    /// [`Channel::answer_press`].
    pub id: String,
    /// The conversation of the message whose button was pressed.
    pub conversation: String,
    /// The platform's id of who pressed it (what allow-lists hold).
    pub sender: String,
    /// Their display name.
    pub sender_name: String,
    /// The button's data as the platform handed it back: untrusted, whatever the bot sent.
    pub data: String,
}

/// What people do in a conversation with the bot: write, or press a button.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// A text message.
    Message(Incoming),
    /// A button press.
    Press(Press),
}

/// A button under a message: what it says and the data the platform hands back when it is
/// pressed (Telegram's `callback_data`: at most 64 bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    /// The label.
    pub label: String,
    /// The data.
    pub data: String,
}

/// An audio file to send to a conversation (a speech clip of `speak`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AudioFile {
    /// The file name the conversation shows (`<uuid>.wav`).
    pub file_name: String,
    /// Its MIME type (`audio/wav` for Suzent's clips).
    pub mime_type: String,
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Its length in milliseconds.
    pub duration_ms: u64,
}

/// What went wrong talking to a platform. Messages never contain the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    /// The platform refused the credentials (a wrong or revoked token).
    #[error("{platform} refused the token: {message}")]
    Unauthorized {
        /// The platform.
        platform: &'static str,
        /// What it said.
        message: String,
    },
    /// The platform answered with an error.
    #[error("{platform} answered with an error: {message}")]
    Api {
        /// The platform.
        platform: &'static str,
        /// What it said.
        message: String,
    },
    /// The platform could not be reached (network, timeout, a bad answer).
    #[error("{platform} cannot be reached: {message}")]
    Network {
        /// The platform.
        platform: &'static str,
        /// What failed.
        message: String,
    },
    /// A file is larger than the platform takes from a bot (checked before sending, or the
    /// platform's own answer).
    #[error(
        "a file of {bytes} bytes is too large for {platform} (its limit for bots: {limit} bytes)"
    )]
    TooLarge {
        /// The platform.
        platform: &'static str,
        /// The file's size.
        bytes: u64,
        /// The platform's limit for bots as Suzent knows it (a workspace or homeserver may
        /// set a lower one: then the platform refused a file below this).
        limit: u64,
    },
    /// The configuration cannot work (an empty token, a bad base URL).
    #[error("invalid {field}: {message}")]
    Invalid {
        /// The bad setting.
        field: &'static str,
        /// Why.
        message: String,
    },
    /// Part of a long message was not sent; the parts before it were (by this call or, with
    /// [`Channel::send_from`], an earlier one).
    #[error("part {part} of {parts} was not sent ({sent} sent before it): {source}")]
    Partial {
        /// The 1-based number of the part that failed.
        part: usize,
        /// How many parts the message has.
        parts: usize,
        /// How many went out.
        sent: usize,
        /// Why it failed.
        source: Box<ChannelError>,
    },
}

/// One bot account on one messaging platform.
#[async_trait]
pub trait Channel: Send + Sync + std::fmt::Debug + 'static {
    /// The platform.
    fn platform(&self) -> ChannelPlatform;

    /// The longest text one message may hold on this platform.
    fn limit(&self) -> MessageLimit;

    /// Checks the credentials and says who the bot is (Telegram `getMe`).
    async fn connect(&self) -> Result<BotIdentity, ChannelError>;

    /// The largest file the bot may upload, in bytes (Telegram 50 MB, Discord 10 MiB, Slack
    /// 1 GB, Matrix the homeserver's `m.upload.size` when it says, else 50 MiB).
    fn upload_limit(&self) -> u64;

    /// Sends an audio file to `conversation` as one message: a voice message where the
    /// platform has them for the file's format (Telegram's `sendVoice` takes OGG/Opus), else
    /// an audio file the platform's apps play (a Discord attachment, a Slack file, a Matrix
    /// `m.audio` event) or, on Telegram, a document (`sendDocument`: WAV is neither a voice
    /// message nor `sendAudio`'s MP3/M4A). Returns the platform's message (or file) id.
    ///
    /// Errors: [`ChannelError::TooLarge`] above [`Channel::upload_limit`] (nothing is sent)
    /// or when the platform refuses the size; else as [`Channel::send_one`].
    async fn send_audio(
        &self,
        conversation: &str,
        audio: &AudioFile,
    ) -> Result<String, ChannelError>;

    /// Whether [`Channel::send_buttons`] shows buttons (and presses come back as
    /// [`Received::Press`]); `false` where this client sends only the text.
    fn has_buttons(&self) -> bool {
        false
    }

    /// Sends `text` (at most [`Channel::limit`]) with `buttons` in one row under it; returns
    /// the message id. Without buttons on this platform ([`Channel::has_buttons`]), only the
    /// text is sent.
    async fn send_buttons(
        &self,
        conversation: &str,
        text: &str,
        buttons: &[Button],
    ) -> Result<String, ChannelError> {
        let _ = buttons;
        self.send_one(conversation, text).await
    }

    /// Answers a button press (Telegram's `answerCallbackQuery`: the app stops its spinner
    /// and shows `text` briefly). Does nothing where presses need no answer.
    async fn answer_press(&self, press: &Press, text: &str) -> Result<(), ChannelError> {
        let _ = (press, text);
        Ok(())
    }

    /// What people send to the bot (messages, and presses of its buttons), in order, for as
    /// long as the stream is polled. A message is acknowledged to the platform only when the next one is asked for, so one
    /// taken from the stream and not yet handled when the process dies is delivered again
    /// (the runtime's inbox ids make that harmless). An error item is one failed poll; the
    /// stream goes on after it (the caller decides how long to wait).
    fn receive(self: Arc<Self>) -> BoxStream<'static, Result<Received, ChannelError>>;

    /// Sends one message of at most [`Channel::limit`]; returns the platform's message id.
    async fn send_one(&self, conversation: &str, text: &str) -> Result<String, ChannelError>;

    /// Sends `text` to `conversation` in as many messages as the platform's limit needs, in
    /// order ([`split_message`]); returns their ids. Empty text sends nothing.
    ///
    /// Errors: [`ChannelError::Partial`] when a part after the first fails (the parts before
    /// it were sent), else the error of the first part.
    async fn send(&self, conversation: &str, text: &str) -> Result<Vec<String>, ChannelError> {
        self.send_from(conversation, text, 0).await
    }

    /// As [`Channel::send`], leaving out the first `from` parts (they went out before a
    /// failure midway: a retry sends only the rest); returns the ids of the parts sent now.
    /// The parts are the same for the same text, so `from` stays meaningful across retries.
    ///
    /// Errors: [`ChannelError::Partial`] when a part fails after `from + 1` parts or more
    /// were asked for (`sent` counts every part delivered, including the first `from`), else
    /// the error of the first part.
    async fn send_from(
        &self,
        conversation: &str,
        text: &str,
        from: usize,
    ) -> Result<Vec<String>, ChannelError> {
        let parts = split_message(text, self.limit());
        let mut ids = Vec::with_capacity(parts.len().saturating_sub(from));
        for (i, part) in parts.iter().enumerate().skip(from) {
            match self.send_one(conversation, part).await {
                Ok(id) => ids.push(id),
                Err(e) if i == 0 => return Err(e),
                Err(e) => {
                    return Err(ChannelError::Partial {
                        part: i + 1,
                        parts: parts.len(),
                        sent: i,
                        source: Box::new(e),
                    });
                }
            }
        }
        Ok(ids)
    }
}

impl ChannelError {
    /// A [`ChannelError::TooLarge`] from the platform's answer (which does not say the size)
    /// with the size of the file that was refused; any other error as it is.
    pub(crate) fn with_size(self, bytes: u64) -> ChannelError {
        match self {
            ChannelError::TooLarge {
                platform, limit, ..
            } => ChannelError::TooLarge {
                platform,
                bytes,
                limit,
            },
            other => other,
        }
    }
}

/// [`ChannelError::TooLarge`] when `audio` is above `limit` bytes.
pub(crate) fn check_size(
    platform: &'static str,
    audio: &AudioFile,
    limit: u64,
) -> Result<(), ChannelError> {
    let bytes = audio.bytes.len() as u64;
    if bytes > limit {
        return Err(ChannelError::TooLarge {
            platform,
            bytes,
            limit,
        });
    }
    Ok(())
}

/// Replaces every occurrence of `secret` in `text` with `<token>` (platform client errors may
/// quote a URL that holds the token).
pub(crate) fn scrub(text: &str, secret: &str) -> String {
    if secret.is_empty() {
        return text.to_string();
    }
    text.replace(secret, "<token>")
}
