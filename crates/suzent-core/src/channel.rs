//! Channels: messaging platforms (Telegram, Slack, Discord, Matrix) the agent is reachable on.
//! `config.toml` holds each channel's name, platform, allow-list, on/off and permission profile
//! (`[[channels]]`); its token lives in the OS keychain (account `channel:NAME`), never here.

use crate::ConfigError;
use serde::{Deserialize, Serialize};

/// A messaging platform.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelPlatform {
    /// Telegram through the Bot API (long polling).
    Telegram,
    /// Slack through the Web API and Socket Mode.
    Slack,
    /// Discord through the gateway and REST API.
    Discord,
    /// Matrix through the client-server API.
    Matrix,
}

impl ChannelPlatform {
    /// The platform's name (`telegram`).
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelPlatform::Telegram => "telegram",
            ChannelPlatform::Slack => "slack",
            ChannelPlatform::Discord => "discord",
            ChannelPlatform::Matrix => "matrix",
        }
    }

    /// The platform's name as people write it (`Telegram`).
    pub fn label(self) -> &'static str {
        match self {
            ChannelPlatform::Telegram => "Telegram",
            ChannelPlatform::Slack => "Slack",
            ChannelPlatform::Discord => "Discord",
            ChannelPlatform::Matrix => "Matrix",
        }
    }
}

/// How a turn started by a channel message is allowed to act.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelProfile {
    /// The headless profile (default): `auto` mode, and what would ask is refused at once with
    /// the reason recorded.
    #[default]
    Headless,
    /// `default` mode: what would ask waits for the user's answer in the app (the turn is
    /// suspended; the reply goes out once the approvals are answered).
    AskInApp,
}

/// One channel (`[[channels]]` in `config.toml`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelConfig {
    /// The channel's name: 1 to 32 of `a-z 0-9 - _`, unique (`telegram`, `work-slack`).
    pub name: String,
    /// The platform.
    pub platform: ChannelPlatform,
    /// Connect it (default true).
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// The platform's user ids whose messages reach the agent. Everyone else gets one polite
    /// refusal and is recorded as a pending request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_users: Vec<String>,
    /// The permission profile of the turns its messages start (default headless).
    #[serde(default)]
    pub profile: ChannelProfile,
    /// The platform's API base URL (default: the platform's public API; tests point it at a
    /// server on loopback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

fn default_true() -> bool {
    true
}

/// The longest channel name.
pub const MAX_CHANNEL_NAME: usize = 32;

/// Whether `name` is a valid channel name (1 to 32 of `a-z 0-9 - _`, starting with a letter
/// or digit).
pub fn valid_channel_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_CHANNEL_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
}

/// Checks a channel list: valid, unique names, non-empty user ids, http(s) base URLs.
pub(crate) fn validate_channels(channels: &[ChannelConfig]) -> Result<(), ConfigError> {
    let mut seen = std::collections::HashSet::new();
    for channel in channels {
        if !valid_channel_name(&channel.name) {
            return Err(ConfigError::Value {
                field: "channels.name".into(),
                message: format!(
                    "'{}' is not a channel name (1 to {MAX_CHANNEL_NAME} of a-z 0-9 - _)",
                    channel.name
                ),
            });
        }
        if !seen.insert(channel.name.as_str()) {
            return Err(ConfigError::Value {
                field: "channels.name".into(),
                message: format!("'{}' names two channels", channel.name),
            });
        }
        if let Some(user) = channel
            .allowed_users
            .iter()
            .find(|u| u.trim().is_empty() || u.trim() != u.as_str() || u.len() > 256)
        {
            return Err(ConfigError::Value {
                field: format!("channels.{}.allowed_users", channel.name),
                message: format!("'{user}' is not a user id"),
            });
        }
        if let Some(url) = &channel.base_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(ConfigError::Value {
                field: format!("channels.{}.base_url", channel.name),
                message: format!("'{url}' is not an http(s) URL"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn channel(name: &str) -> ChannelConfig {
        ChannelConfig {
            name: name.into(),
            platform: ChannelPlatform::Telegram,
            enabled: true,
            allowed_users: vec!["42".into()],
            profile: ChannelProfile::Headless,
            base_url: None,
        }
    }

    #[test]
    fn bad_names_duplicates_blank_users_and_odd_urls_are_refused_by_field() {
        let mut blank = channel("tg");
        blank.allowed_users.push(" ".into());
        let mut url = channel("tg");
        url.base_url = Some("ftp://x".into());
        let fields: Vec<String> = [
            vec![channel("Bad Name")],
            vec![channel("tg"), channel("tg")],
            vec![blank],
            vec![url],
        ]
        .iter()
        .map(|c| match validate_channels(c) {
            Err(ConfigError::Value { field, .. }) => field,
            other => format!("{other:?}"),
        })
        .collect();
        assert_eq!(
            fields,
            vec![
                "channels.name",
                "channels.name",
                "channels.tg.allowed_users",
                "channels.tg.base_url"
            ]
        );
        assert!(validate_channels(&[channel("tg"), channel("work-slack")]).is_ok());
    }
}
