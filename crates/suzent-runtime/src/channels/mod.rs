//! The channel service (issue 20): messaging platforms the agent is reachable on.
//!
//! Each enabled channel with a token (OS keychain, account `channel:NAME`) is connected by a
//! connector task (`connector.rs`): a message from someone on the channel's allow-list goes
//! through the durable inbox to the chat of its platform conversation (one chat per
//! conversation, recorded with its channel and platform); the dispatcher runs the turn under
//! the channel's permission profile (default: headless). When a run of such a chat ends, its
//! new assistant messages go back to the same conversation, split at the platform's limit
//! (`replies.rs`); how far they went is stored, so a restart sends what was not sent yet.
//! Anyone else gets one polite refusal and is recorded as a pending request the user can
//! approve (Settings, `suzent channels approve`): approving adds them to the allow-list.
//! `social_message` reaches the channels through [`Channels`] as its host (`social.rs`).
//! Speech clips of a channel turn go to the conversation as audio files, in transcript order
//! (`replies.rs`); approvals a turn waits for are sent with the platform's buttons where the
//! client has them, and a press from an allowed user of that conversation answers them
//! (`buttons.rs`).

mod buttons;
mod connector;
mod replies;
mod social;

use crate::chats::ChatService;
use crate::error::RuntimeError;
use crate::event_bus::Events;
use crate::inbox::InboxService;
use crate::rules::RuleService;
use crate::settings::SettingsService;
use crate::speech::SpeechService;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use suzent_channels::{
    Channel, ChannelError, DiscordChannel, MatrixChannel, SlackChannel, TelegramChannel,
};
use suzent_core::{ChannelConfig, ChannelPlatform, ChannelProfile, Config, PermissionMode};
use suzent_store::{
    ChannelConversation, ChannelRequest, ChannelRequestStatus, InboxMessage, Store,
};
use tokio_util::sync::CancellationToken;

pub(crate) use buttons::ChannelTurns;
pub use buttons::{PRESS_DECIDED, PRESS_ELSEWHERE, PRESS_INVALID, PRESS_NOT_ALLOWED};

/// The inbox kind of a message from a channel.
pub const CHANNEL_MESSAGE_KIND: &str = "channel_message";

/// The refusal a person not on a channel's allow-list gets, once.
pub const REFUSAL_TEXT: &str = "Hello! This assistant only answers people its owner has \
    approved, so your message was not passed on. The owner has been asked to approve you; \
    please wait for them.";

/// What a conversation is told when its turn waits for approvals in the app.
pub const WAITING_TEXT: &str = "(Waiting for approval in the Suzent app before continuing.)";

/// Where a channel's connection is.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelState {
    /// Switched off in the settings.
    Off,
    /// No token in the keychain (or this session).
    NoToken,
    /// Connecting (or reconnecting after an error).
    Connecting,
    /// Connected: messages are received.
    Connected,
    /// The platform refused the token or cannot be reached; `error` says why.
    Failed,
    /// The platform has no client in this build yet.
    Unsupported,
}

/// A channel's connection as the app shows it.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelStatus {
    /// The state.
    pub state: ChannelState,
    /// The bot's name on the platform, once connected.
    pub bot: Option<String>,
    /// The last error (never with the token in it).
    pub error: Option<String>,
}

/// One channel: its settings, whether it has a token, its connection.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelView {
    /// The settings (`config.toml`).
    pub config: ChannelConfig,
    /// A token is stored (keychain or session); the token itself is never returned.
    pub has_token: bool,
    /// The connection.
    pub status: ChannelStatus,
}

/// Who a test connection reached.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelCheck {
    /// The bot's id on the platform.
    pub bot_id: String,
    /// Its display name.
    pub bot_name: String,
    /// Its user name, where the platform has one.
    pub username: Option<String>,
}

struct Running {
    client: Arc<dyn Channel>,
    stop: CancellationToken,
}

/// The channel service: connectors, conversations, requests, replies.
pub struct Channels {
    store: Store,
    settings: Arc<SettingsService>,
    inbox: Arc<InboxService>,
    chats: Arc<ChatService>,
    rules: Arc<RuleService>,
    /// Where `speak`'s clips are (they go to the conversation as audio).
    speech: Arc<SpeechService>,
    events: Events,
    running: Mutex<HashMap<String, Running>>,
    statuses: Mutex<HashMap<String, ChannelStatus>>,
    /// One reply flush at a time, so no reply goes out twice.
    flush: tokio::sync::Mutex<()>,
    /// The approval buttons sent, by token (`buttons.rs`).
    buttons: Mutex<HashMap<String, buttons::Binding>>,
    /// Continues a turn once a button answered its approval.
    turns: OnceLock<Weak<dyn ChannelTurns>>,
    started: AtomicBool,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for Channels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channels").finish_non_exhaustive()
    }
}

/// A platform client for `config` with `token` (for Slack both of its tokens, see
/// [`SlackChannel::new`]).
///
/// Errors: [`ChannelError::Invalid`] for a token or base URL the platform cannot take.
pub(crate) fn client_for(
    config: &ChannelConfig,
    token: &str,
) -> Result<Arc<dyn Channel>, ChannelError> {
    let base = config.base_url.as_deref();
    let client: Arc<dyn Channel> = match config.platform {
        ChannelPlatform::Telegram => Arc::new(TelegramChannel::with_long_poll(
            token,
            base,
            long_poll_secs(),
        )?),
        ChannelPlatform::Discord => Arc::new(DiscordChannel::new(token, base)?),
        ChannelPlatform::Slack => Arc::new(SlackChannel::new(token, base)?),
        ChannelPlatform::Matrix => Arc::new(MatrixChannel::new(token, base, long_poll_secs())?),
    };
    Ok(client)
}

/// The long-poll wait: `SUZENT_CHANNEL_POLL_SECS` (tests use 1 so stops are quick), else 25.
fn long_poll_secs() -> u32 {
    std::env::var("SUZENT_CHANNEL_POLL_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|s| (1..=50).contains(s))
        .unwrap_or(25)
}

/// The channel name of an inbox sender `channel:NAME:USER`.
pub(crate) fn channel_of_sender(sender: &str) -> Option<&str> {
    sender.strip_prefix("channel:")?.split(':').next()
}

/// The mode and whether asks suspend, for a turn started by a channel message: the channel's
/// profile (a channel no longer configured runs headless).
pub(crate) fn turn_profile(config: &Config, message: &InboxMessage) -> (PermissionMode, bool) {
    let profile = channel_of_sender(&message.sender)
        .and_then(|name| config.channels.iter().find(|c| c.name == name))
        .map(|c| c.profile)
        .unwrap_or_default();
    profile_mode(profile)
}

/// The mode of a channel profile's turns and whether their asks suspend.
pub(crate) fn profile_mode(profile: ChannelProfile) -> (PermissionMode, bool) {
    match profile {
        ChannelProfile::Headless => (PermissionMode::Auto, false),
        ChannelProfile::AskInApp => (PermissionMode::Default, true),
    }
}

fn invalid(field: &str, message: impl Into<String>) -> RuntimeError {
    RuntimeError::InvalidInput {
        field: field.into(),
        message: message.into(),
    }
}

impl Channels {
    /// The service (nothing connected until [`Channels::start`]).
    pub(crate) fn new(
        store: Store,
        settings: Arc<SettingsService>,
        inbox: Arc<InboxService>,
        chats: Arc<ChatService>,
        rules: Arc<RuleService>,
        speech: Arc<SpeechService>,
        events: Events,
    ) -> Channels {
        Channels {
            store,
            settings,
            inbox,
            chats,
            rules,
            speech,
            events,
            running: Mutex::new(HashMap::new()),
            statuses: Mutex::new(HashMap::new()),
            flush: tokio::sync::Mutex::new(()),
            buttons: Mutex::new(HashMap::new()),
            turns: OnceLock::new(),
            started: AtomicBool::new(false),
            shutdown: CancellationToken::new(),
        }
    }

    fn config_of(&self, name: &str) -> Option<ChannelConfig> {
        self.settings
            .config()
            .channels
            .into_iter()
            .find(|c| c.name == name)
    }

    fn require(&self, name: &str) -> Result<ChannelConfig, RuntimeError> {
        self.config_of(name).ok_or_else(|| {
            let names: Vec<String> = self
                .settings
                .config()
                .channels
                .into_iter()
                .map(|c| c.name)
                .collect();
            invalid(
                "channel",
                format!(
                    "no channel '{name}' (channels: {})",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            )
        })
    }

    fn token(&self, name: &str) -> Option<String> {
        self.settings
            .keys()
            .channel_token(name)
            .filter(|t| !t.trim().is_empty())
    }

    fn set_status(&self, name: &str, status: ChannelStatus) {
        self.statuses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_string(), status);
    }

    fn status(&self, config: &ChannelConfig) -> ChannelStatus {
        let idle = |state| ChannelStatus {
            state,
            bot: None,
            error: None,
        };
        if !config.enabled {
            return idle(ChannelState::Off);
        }
        if let Some(status) = self
            .statuses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&config.name)
        {
            return status.clone();
        }
        if self.token(&config.name).is_none() {
            return idle(ChannelState::NoToken);
        }
        idle(ChannelState::Connecting)
    }

    fn client(&self, name: &str) -> Option<Arc<dyn Channel>> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .map(|r| Arc::clone(&r.client))
    }

    /// Every configured channel with its connection.
    pub fn list(&self) -> Vec<ChannelView> {
        self.settings
            .config()
            .channels
            .into_iter()
            .map(|config| ChannelView {
                has_token: self.token(&config.name).is_some(),
                status: self.status(&config),
                config,
            })
            .collect()
    }

    /// One channel with its connection.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] (`channel`) for an unknown name.
    pub fn get(&self, name: &str) -> Result<ChannelView, RuntimeError> {
        let config = self.require(name)?;
        Ok(ChannelView {
            has_token: self.token(name).is_some(),
            status: self.status(&config),
            config,
        })
    }

    /// Connects every enabled channel that has a token, and starts sending replies (once;
    /// later calls do nothing). Needs a Tokio runtime; runs until [`Channels::stop`].
    pub fn start(self: &Arc<Self>) {
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        replies::start(Arc::clone(self));
        for config in self.settings.config().channels {
            self.connect(&config.name);
        }
    }

    /// (Re)connects channel `name` after a change of its settings or token: the old
    /// connection is stopped; an enabled channel with a token is connected again. Does
    /// nothing before [`Channels::start`].
    fn connect(self: &Arc<Self>, name: &str) {
        if let Some(old) = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(name)
        {
            old.stop.cancel();
        }
        self.statuses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(name);
        if !self.started.load(Ordering::SeqCst) || self.shutdown.is_cancelled() {
            return;
        }
        let Some(config) = self.config_of(name).filter(|c| c.enabled) else {
            return;
        };
        let Some(token) = self.token(name) else {
            return;
        };
        let client = match client_for(&config, &token) {
            Ok(client) => client,
            Err(e) => {
                let state = if matches!(
                    e,
                    ChannelError::Invalid {
                        field: "platform",
                        ..
                    }
                ) {
                    ChannelState::Unsupported
                } else {
                    ChannelState::Failed
                };
                self.set_status(
                    name,
                    ChannelStatus {
                        state,
                        bot: None,
                        error: Some(e.to_string()),
                    },
                );
                return;
            }
        };
        let stop = self.shutdown.child_token();
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                name.to_string(),
                Running {
                    client: Arc::clone(&client),
                    stop: stop.clone(),
                },
            );
        self.set_status(
            name,
            ChannelStatus {
                state: ChannelState::Connecting,
                bot: None,
                error: None,
            },
        );
        tokio::spawn(connector::run(
            Arc::clone(self),
            name.to_string(),
            client,
            stop,
        ));
    }

    /// Disconnects every channel (app exit). Queued inbox messages stay queued; unsent
    /// replies go out after the next start.
    pub fn stop(&self) {
        self.shutdown.cancel();
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Checks a token against a platform without saving anything (Settings' "Test
    /// connection"): who the bot is.
    ///
    /// Errors: [`RuntimeError::Channel`] (refused token, unreachable platform, unsupported
    /// platform), [`RuntimeError::InvalidInput`] (`base_url`).
    pub async fn test_connection(
        &self,
        platform: ChannelPlatform,
        base_url: Option<&str>,
        token: &str,
    ) -> Result<ChannelCheck, RuntimeError> {
        let draft = ChannelConfig {
            name: "test".into(),
            platform,
            enabled: true,
            allowed_users: Vec::new(),
            profile: ChannelProfile::Headless,
            base_url: base_url.map(str::to_string),
        };
        let me = client_for(&draft, token)?.connect().await?;
        Ok(ChannelCheck {
            bot_id: me.id,
            bot_name: me.name,
            username: me.username,
        })
    }

    /// Tests the stored token of channel `name`.
    ///
    /// Errors: as [`Channels::test_connection`]; [`RuntimeError::InvalidInput`] (`channel`,
    /// `token`) for an unknown channel or one without a token.
    pub async fn test_stored(&self, name: &str) -> Result<ChannelCheck, RuntimeError> {
        let config = self.require(name)?;
        let token = self
            .token(name)
            .ok_or_else(|| invalid("token", format!("channel '{name}' has no token")))?;
        self.test_connection(config.platform, config.base_url.as_deref(), &token)
            .await
    }

    /// Adds a channel to `config.toml` and connects it when it is enabled and has a token
    /// (store the token first with [`Channels::set_token`], or keep one for the session).
    ///
    /// Errors: [`RuntimeError::Config`] (a bad or taken name, a bad user id or base URL),
    /// [`RuntimeError::Io`].
    pub fn add(self: &Arc<Self>, channel: ChannelConfig) -> Result<ChannelView, RuntimeError> {
        let name = channel.name.clone();
        self.settings.update(|config| {
            if config.channels.iter().any(|c| c.name == name) {
                return Err(invalid(
                    "channel",
                    format!("a channel named '{name}' exists already"),
                ));
            }
            config.channels.push(channel);
            Ok(())
        })?;
        self.connect(&name);
        self.get(&name)
    }

    /// Changes a channel's settings with `change` (its name stays), saves and reconnects it.
    fn change(
        self: &Arc<Self>,
        name: &str,
        change: impl FnOnce(&mut ChannelConfig),
    ) -> Result<ChannelView, RuntimeError> {
        self.require(name)?;
        self.settings.update(|config| {
            if let Some(c) = config.channels.iter_mut().find(|c| c.name == name) {
                change(c);
                c.name = name.to_string();
            }
            Ok(())
        })?;
        self.connect(name);
        self.get(name)
    }

    /// Switches a channel on or off.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] (`channel`), [`RuntimeError::Io`].
    pub fn set_enabled(
        self: &Arc<Self>,
        name: &str,
        enabled: bool,
    ) -> Result<ChannelView, RuntimeError> {
        self.change(name, |c| c.enabled = enabled)
    }

    /// Replaces a channel's allow-list (platform user ids).
    ///
    /// Errors: [`RuntimeError::InvalidInput`] (`channel`), [`RuntimeError::Config`] for a
    /// blank id, [`RuntimeError::Io`].
    pub fn set_allowed_users(
        self: &Arc<Self>,
        name: &str,
        users: Vec<String>,
    ) -> Result<ChannelView, RuntimeError> {
        let mut users: Vec<String> = users.into_iter().map(|u| u.trim().to_string()).collect();
        users.dedup();
        self.change(name, |c| c.allowed_users = users)
    }

    /// Sets a channel's permission profile.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] (`channel`), [`RuntimeError::Io`].
    pub fn set_profile(
        self: &Arc<Self>,
        name: &str,
        profile: ChannelProfile,
    ) -> Result<ChannelView, RuntimeError> {
        self.change(name, |c| c.profile = profile)
    }

    /// Stores a channel's token in the OS keychain (account `channel:NAME`) and reconnects it.
    /// Where the keychain cannot store it, the error says so: the shell may keep the token
    /// for this session instead (`SessionKeys`), then call [`Channels::reconnect`].
    ///
    /// Errors: [`RuntimeError::InvalidInput`] (`channel`), [`RuntimeError::Provider`] (the
    /// keychain failed; the message never holds the token).
    pub fn set_token(self: &Arc<Self>, name: &str, token: &str) -> Result<(), RuntimeError> {
        self.require(name)?;
        crate::provider::set_api_key(
            &format!("{}{name}", crate::provider::CHANNEL_SECRET_PREFIX),
            token,
        )?;
        self.connect(name);
        Ok(())
    }

    /// Connects channel `name` again (after a session token was set).
    pub fn reconnect(self: &Arc<Self>, name: &str) {
        self.connect(name);
    }

    /// Removes a channel from `config.toml` and its token from the keychain. Its chats stay.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] (`channel`), [`RuntimeError::Io`],
    /// [`RuntimeError::Provider`] when the keychain entry cannot be removed.
    pub fn remove(self: &Arc<Self>, name: &str) -> Result<(), RuntimeError> {
        self.require(name)?;
        self.settings.update(|config| {
            config.channels.retain(|c| c.name != name);
            Ok(())
        })?;
        self.connect(name);
        crate::provider::delete_api_key(&format!(
            "{}{name}",
            crate::provider::CHANNEL_SECRET_PREFIX
        ))
        .map(|_| ())
        .or_else(|e| {
            // No keychain here: there was no token in it either.
            tracing::debug!(channel = name, "removing the channel token: {e}");
            Ok(())
        })
    }

    /// The requests of people not on an allow-list, of one channel or all, latest first.
    ///
    /// Errors: [`RuntimeError::Store`].
    pub async fn requests(
        &self,
        channel: Option<&str>,
    ) -> Result<Vec<ChannelRequest>, RuntimeError> {
        Ok(self.store.channel_requests(channel).await?)
    }

    /// Approves a request: the user id joins the channel's allow-list (saved in
    /// `config.toml`); their next message reaches the agent.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] (`channel`), [`RuntimeError::Store`]
    /// (`NotFound` for no such request), [`RuntimeError::Io`].
    pub async fn approve(
        self: &Arc<Self>,
        channel: &str,
        user_id: &str,
    ) -> Result<ChannelRequest, RuntimeError> {
        let config = self.require(channel)?;
        let known = self
            .store
            .channel_requests(Some(channel))
            .await?
            .into_iter()
            .any(|r| r.user_id == user_id);
        if !known {
            return Err(suzent_store::StoreError::NotFound {
                what: "channel request",
                id: format!("{channel}/{user_id}"),
            }
            .into());
        }
        if !config.allowed_users.iter().any(|u| u == user_id) {
            let user = user_id.to_string();
            self.settings.update(|config| {
                if let Some(c) = config.channels.iter_mut().find(|c| c.name == channel) {
                    c.allowed_users.push(user);
                }
                Ok(())
            })?;
        }
        Ok(self
            .store
            .set_channel_request_status(channel, user_id, ChannelRequestStatus::Approved)
            .await?)
    }

    /// Dismisses a request: its sender stays refused, without another refusal message.
    ///
    /// Errors: [`RuntimeError::Store`] (`NotFound` for no such request).
    pub async fn dismiss(
        &self,
        channel: &str,
        user_id: &str,
    ) -> Result<ChannelRequest, RuntimeError> {
        Ok(self
            .store
            .set_channel_request_status(channel, user_id, ChannelRequestStatus::Dismissed)
            .await?)
    }

    /// The platform conversations that have chats, latest message first (the app marks
    /// those chats with their platform).
    ///
    /// Errors: [`RuntimeError::Store`].
    pub async fn conversations(&self) -> Result<Vec<ChannelConversation>, RuntimeError> {
        Ok(self.store.channel_conversations(None).await?)
    }

    /// Waits until channel `name` is connected or failed, at most `timeout`; returns its
    /// status then (tests, `suzent channels test`).
    pub async fn wait_connected(
        &self,
        name: &str,
        timeout: std::time::Duration,
    ) -> Result<ChannelStatus, RuntimeError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let status = self.get(name)?.status;
            if matches!(
                status.state,
                ChannelState::Connected
                    | ChannelState::Failed
                    | ChannelState::Off
                    | ChannelState::NoToken
                    | ChannelState::Unsupported
            ) || tokio::time::Instant::now() >= deadline
            {
                return Ok(status);
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}
