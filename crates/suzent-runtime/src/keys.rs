//! API keys for one run of the app: keys the user chose to keep for this session only (when the
//! OS keychain cannot store them), in front of another key source (the environment, then the
//! keychain). Session keys live in memory only and are never written anywhere.

use crate::error::RuntimeError;
use crate::provider::{KeySource, ProviderKind, keychain_has_key};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Where a provider's key can come from right now.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderKeyInfo {
    /// Provider name (`openai`, `anthropic`, `gemini`).
    pub provider: String,
    /// The environment variable that holds its key (`OPENAI_API_KEY`).
    pub env_var: String,
    /// The environment variable is set (not empty).
    pub in_environment: bool,
    /// The OS keychain holds a key.
    pub in_keychain: bool,
    /// A key is kept for this session.
    pub in_session: bool,
}

/// Session keys in front of `fallback`. Share it (`Arc`) between the runtime's options and
/// whatever sets session keys.
pub struct SessionKeys {
    keys: Mutex<HashMap<String, String>>,
    fallback: Arc<dyn KeySource>,
}

impl std::fmt::Debug for SessionKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        let mut names: Vec<&String> = keys.keys().collect();
        names.sort();
        f.debug_struct("SessionKeys")
            .field("providers", &names)
            .finish()
    }
}

impl SessionKeys {
    /// No session keys yet; other keys come from `fallback`.
    pub fn new(fallback: Arc<dyn KeySource>) -> SessionKeys {
        SessionKeys {
            keys: Mutex::new(HashMap::new()),
            fallback,
        }
    }

    /// Keeps `key` for `provider` (or the token of a channel, named `channel:NAME`) until the
    /// process ends (it wins over the fallback's).
    ///
    /// Errors: [`RuntimeError::InvalidInput`] naming `provider` (unknown, or one without keys)
    /// or `key` (empty).
    pub fn set(&self, provider: &str, key: &str) -> Result<(), RuntimeError> {
        let kind = ProviderKind::from_name(provider).filter(|k| k.needs_key());
        let channel = provider
            .strip_prefix(crate::provider::CHANNEL_SECRET_PREFIX)
            .is_some_and(suzent_core::valid_channel_name);
        if kind.is_none() && !channel {
            return Err(RuntimeError::InvalidInput {
                field: "provider".into(),
                message: format!(
                    "'{provider}' is not a provider that takes an API key (openai, anthropic, gemini)"
                ),
            });
        }
        let key = key.trim();
        if key.is_empty() {
            return Err(RuntimeError::InvalidInput {
                field: "key".into(),
                message: "the key is empty".into(),
            });
        }
        self.keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(provider.to_string(), key.to_string());
        Ok(())
    }

    /// Forgets the session key of `provider`; `true` when there was one.
    pub fn remove(&self, provider: &str) -> bool {
        self.keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(provider)
            .is_some()
    }

    /// Where the key of each provider that takes one can come from.
    pub fn info(&self) -> Vec<ProviderKeyInfo> {
        [
            ProviderKind::OpenAi,
            ProviderKind::Anthropic,
            ProviderKind::Gemini,
        ]
        .into_iter()
        .map(|kind| {
            let vars = kind.key_env_vars();
            ProviderKeyInfo {
                provider: kind.as_str().to_string(),
                env_var: vars.first().copied().unwrap_or_default().to_string(),
                in_environment: vars
                    .iter()
                    .any(|v| std::env::var(v).is_ok_and(|value| !value.trim().is_empty())),
                in_keychain: keychain_has_key(kind.as_str()),
                in_session: self
                    .keys
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .contains_key(kind.as_str()),
            }
        })
        .collect()
    }
}

impl KeySource for SessionKeys {
    fn api_key(&self, provider: &str) -> Option<String> {
        let session = self
            .keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(provider)
            .cloned();
        session.or_else(|| self.fallback.api_key(provider))
    }

    fn mcp_secret(&self, entry: &str) -> Option<String> {
        self.fallback.mcp_secret(entry)
    }

    fn channel_token(&self, channel: &str) -> Option<String> {
        let account = format!("{}{channel}", crate::provider::CHANNEL_SECRET_PREFIX);
        let session = self
            .keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&account)
            .cloned();
        session.or_else(|| self.fallback.channel_token(channel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::StaticKeys;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_session_key_wins_over_the_fallback_and_is_forgotten_on_remove() -> anyhow::Result<()> {
        let keys = SessionKeys::new(Arc::new(StaticKeys::new().with("openai", "from-env")));
        assert_eq!(keys.api_key("openai").as_deref(), Some("from-env"));
        keys.set("openai", "  typed  ")?;
        assert_eq!(keys.api_key("openai").as_deref(), Some("typed"));
        assert!(keys.remove("openai"));
        assert_eq!(keys.api_key("openai").as_deref(), Some("from-env"));
        Ok(())
    }

    #[test]
    fn bad_providers_and_empty_keys_are_refused_and_debug_never_shows_a_key() -> anyhow::Result<()>
    {
        let keys = SessionKeys::new(Arc::new(StaticKeys::new()));
        let errs: Vec<String> = [
            keys.set("ollama", "k"),
            keys.set("nope", "k"),
            keys.set("gemini", " "),
        ]
        .into_iter()
        .filter_map(|r| r.err().map(|e| e.to_string()))
        .collect();
        assert_eq!(errs.len(), 3);
        keys.set("anthropic", "sk-secret")?;
        assert_eq!(
            format!("{keys:?}"),
            r#"SessionKeys { providers: ["anthropic"] }"#
        );
        Ok(())
    }
}
