//! From a model string (`openai/gpt-4.1`) and the configuration to a ready provider: base URL,
//! API key (environment, then the OS keychain), one shared HTTP client.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use suzent_core::ProvidersConfig;

use super::{
    AnthropicProvider, GeminiProvider, LocalProvider, ModelProvider, OpenAiProvider, ProviderError,
    ProviderKind,
};

/// Keychain service name under which keys are stored (account = provider name).
pub const KEYCHAIN_SERVICE: &str = "suzent";
/// Time allowed to connect.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest silence between two chunks of a response before it counts as broken.
pub const IDLE_READ_TIMEOUT: Duration = Duration::from_secs(120);

/// Public default base URLs.
pub const OPENAI_DEFAULT_BASE: &str = "https://api.openai.com/v1";
/// Anthropic's API.
pub const ANTHROPIC_DEFAULT_BASE: &str = "https://api.anthropic.com";
/// Google's Generative Language API.
pub const GEMINI_DEFAULT_BASE: &str = "https://generativelanguage.googleapis.com";
/// A local Ollama.
pub const OLLAMA_DEFAULT_HOST: &str = "http://127.0.0.1:11434";

/// Splits `provider/model` (the model id may contain further `/`).
pub fn parse_model(model: &str) -> Result<(ProviderKind, String), ProviderError> {
    let known = || {
        ProviderKind::ALL
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let invalid = |message: String| ProviderError::InvalidModel {
        model: model.to_string(),
        message,
    };
    let Some((provider, id)) = model.trim().split_once('/') else {
        return Err(invalid(format!(
            "expected provider/model, e.g. openai/gpt-4.1; known providers: {}",
            known()
        )));
    };
    let Some(kind) = ProviderKind::from_name(provider) else {
        return Err(invalid(format!(
            "unknown provider '{provider}'; known providers: {}",
            known()
        )));
    };
    let id = id.trim();
    if id.is_empty() {
        return Err(invalid(format!("no model id after '{provider}/'")));
    }
    Ok((kind, id.to_string()))
}

/// Where API keys come from.
pub trait KeySource: Send + Sync {
    /// The key of `provider` (`openai`, `anthropic`, `gemini`), if any.
    fn api_key(&self, provider: &str) -> Option<String>;

    /// The MCP secret `entry` (what `${keychain:ENTRY}` in `mcp.json` stands for), if any. MCP
    /// secrets live in their own namespace, the keychain account `mcp:ENTRY`, so an MCP server
    /// configuration can never name a model provider's key (`${keychain:openai}` looks up
    /// `mcp:openai`, not the OpenAI key). The default asks [`KeySource::api_key`] for
    /// `mcp:ENTRY`.
    fn mcp_secret(&self, entry: &str) -> Option<String> {
        self.api_key(&format!("{MCP_SECRET_PREFIX}{entry}"))
    }

    /// The token (or password) of the messaging channel `channel` (issue 20), if any: the
    /// keychain account `channel:NAME`, its own namespace like MCP secrets. The default asks
    /// [`KeySource::api_key`] for `channel:NAME`.
    fn channel_token(&self, channel: &str) -> Option<String> {
        self.api_key(&format!("{CHANNEL_SECRET_PREFIX}{channel}"))
    }
}

/// Prefix of the keychain accounts that hold channel tokens: account `channel:NAME` of service
/// [`KEYCHAIN_SERVICE`] (`suzent channels token NAME`).
pub const CHANNEL_SECRET_PREFIX: &str = "channel:";

/// Prefix of the keychain accounts that hold MCP secrets: `${keychain:ENTRY}` reads the account
/// `mcp:ENTRY` of service [`KEYCHAIN_SERVICE`] (`suzent keys set mcp:ENTRY`).
pub const MCP_SECRET_PREFIX: &str = "mcp:";

/// The environment variable first (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY` or
/// `GOOGLE_API_KEY`), then the OS keychain (service `suzent`, account = provider name).
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvAndKeychain;

impl KeySource for EnvAndKeychain {
    fn api_key(&self, provider: &str) -> Option<String> {
        if let Some(kind) = ProviderKind::from_name(provider) {
            for var in kind.key_env_vars() {
                if let Ok(value) = std::env::var(var) {
                    let value = value.trim();
                    if !value.is_empty() {
                        return Some(value.to_string());
                    }
                }
            }
        }
        keychain_get(provider)
    }

    /// The keychain account `mcp:ENTRY` only: never an environment variable, never a provider's
    /// key.
    fn mcp_secret(&self, entry: &str) -> Option<String> {
        keychain_get(&format!("{MCP_SECRET_PREFIX}{entry}"))
    }

    /// The keychain account `channel:NAME` only, never an environment variable.
    fn channel_token(&self, channel: &str) -> Option<String> {
        keychain_get(&format!("{CHANNEL_SECRET_PREFIX}{channel}"))
    }
}

/// Whether the OS keychain holds a key for `provider` (`false` when it cannot be read).
pub fn keychain_has_key(provider: &str) -> bool {
    keychain_get(provider).is_some()
}

fn keychain_get(provider: &str) -> Option<String> {
    let entry = match keyring::Entry::new(KEYCHAIN_SERVICE, provider) {
        Ok(entry) => entry,
        Err(e) => {
            tracing::debug!(provider, error = %e, "keychain unavailable");
            return None;
        }
    };
    match entry.get_password() {
        Ok(key) if !key.trim().is_empty() => Some(key.trim().to_string()),
        Ok(_) | Err(keyring::Error::NoEntry) => None,
        Err(e) => {
            tracing::debug!(provider, error = %e, "could not read the keychain");
            None
        }
    }
}

/// Fixed keys, for tests.
#[derive(Clone, Default)]
pub struct StaticKeys(pub HashMap<String, String>);

impl StaticKeys {
    /// No keys.
    pub fn new() -> StaticKeys {
        StaticKeys::default()
    }

    /// Adds the key of `provider`.
    pub fn with(mut self, provider: &str, key: &str) -> StaticKeys {
        self.0.insert(provider.to_string(), key.to_string());
        self
    }
}

impl std::fmt::Debug for StaticKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

impl KeySource for StaticKeys {
    fn api_key(&self, provider: &str) -> Option<String> {
        self.0.get(provider).filter(|k| !k.is_empty()).cloned()
    }
}

/// Stores `key` in the OS keychain (`suzent keys set`) for `provider` (`openai`, `anthropic`,
/// `gemini`) or, named `mcp:ENTRY`, as the MCP secret that `${keychain:ENTRY}` stands for.
pub fn set_api_key(provider: &str, key: &str) -> Result<(), ProviderError> {
    let account = keychain_account(provider)?;
    let key = key.trim();
    if key.is_empty() {
        return Err(keychain_error(&account, "the key is empty".into()));
    }
    let entry = keyring::Entry::new(KEYCHAIN_SERVICE, &account)
        .map_err(|e| keychain_error(&account, e.to_string()))?;
    entry
        .set_password(key)
        .map_err(|e| keychain_error(&account, e.to_string()))
}

/// Removes the key of `provider` (or the MCP secret `mcp:ENTRY`) from the OS keychain;
/// `Ok(false)` when there was none.
pub fn delete_api_key(provider: &str) -> Result<bool, ProviderError> {
    let account = keychain_account(provider)?;
    let entry = keyring::Entry::new(KEYCHAIN_SERVICE, &account)
        .map_err(|e| keychain_error(&account, e.to_string()))?;
    match entry.delete_credential() {
        Ok(()) => Ok(true),
        Err(keyring::Error::NoEntry) => Ok(false),
        Err(e) => Err(keychain_error(&account, e.to_string())),
    }
}

/// The keychain account of a key name: a provider's name, or `mcp:ENTRY` for an MCP secret
/// (ENTRY non-empty, without whitespace, `}` or control characters, as `${keychain:ENTRY}`
/// can name it).
fn keychain_account(name: &str) -> Result<String, ProviderError> {
    let name = name.trim();
    if let Some(channel) = name.strip_prefix(CHANNEL_SECRET_PREFIX) {
        if !suzent_core::valid_channel_name(channel) {
            return Err(ProviderError::InvalidModel {
                model: name.to_string(),
                message: "a channel token is named channel:NAME, NAME a channel name \
                          (a-z 0-9 - _)"
                    .into(),
            });
        }
        return Ok(name.to_string());
    }
    if let Some(entry) = name.strip_prefix(MCP_SECRET_PREFIX) {
        if entry.is_empty()
            || entry
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == '}')
        {
            return Err(ProviderError::InvalidModel {
                model: name.to_string(),
                message: "an MCP secret is named mcp:ENTRY, ENTRY as in ${keychain:ENTRY} \
                          (no spaces, no '}')"
                    .into(),
            });
        }
        return Ok(name.to_string());
    }
    known_provider(name).map(|k| k.as_str().to_string())
}

fn known_provider(provider: &str) -> Result<ProviderKind, ProviderError> {
    ProviderKind::from_name(provider)
        .filter(|k| k.accepts_key())
        .ok_or_else(|| ProviderError::InvalidModel {
            model: provider.to_string(),
            message: "keys can be stored for openai, anthropic, gemini, openai-compatible and \
                      local, MCP secrets as mcp:ENTRY and channel tokens as channel:NAME"
                .into(),
        })
}

fn keychain_error(account: &str, message: String) -> ProviderError {
    // keyring's messages describe the store, never the secret.
    ProviderError::Transport {
        provider: account.to_string(),
        message: format!("OS keychain: {message}"),
    }
}

/// The one HTTP client of all providers: connect timeout 10 s, no overall timeout (streams are
/// long) but at most 120 s of silence between chunks.
pub fn shared_client() -> Result<reqwest::Client, ProviderError> {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    if let Some(client) = CLIENT.get() {
        return Ok(client.clone());
    }
    let client = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(IDLE_READ_TIMEOUT)
        .user_agent(concat!("suzent/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ProviderError::Transport {
            provider: "http".into(),
            message: format!("could not create the HTTP client: {e}"),
        })?;
    Ok(CLIENT.get_or_init(|| client).clone())
}

/// The base URL of `kind`: the config override, else the environment, else the public default.
/// Empty for the providers that have no default (`openai-compatible`, `local`) when none is set.
pub fn base_url(kind: ProviderKind, providers: &ProvidersConfig) -> String {
    let (config, env_var, default) = match kind {
        ProviderKind::OpenAi => (
            providers.openai.base_url.as_deref(),
            "OPENAI_BASE_URL",
            OPENAI_DEFAULT_BASE,
        ),
        ProviderKind::Anthropic => (
            providers.anthropic.base_url.as_deref(),
            "ANTHROPIC_BASE_URL",
            ANTHROPIC_DEFAULT_BASE,
        ),
        ProviderKind::Gemini => (
            providers.gemini.base_url.as_deref(),
            "GEMINI_BASE_URL",
            GEMINI_DEFAULT_BASE,
        ),
        ProviderKind::Ollama => (
            providers.ollama.base_url.as_deref(),
            "OLLAMA_HOST",
            OLLAMA_DEFAULT_HOST,
        ),
        ProviderKind::OpenAiCompatible => (
            providers.openai_compatible.base_url.as_deref(),
            "OPENAI_COMPATIBLE_BASE_URL",
            "",
        ),
        ProviderKind::Local => (
            providers.local.base_url.as_deref(),
            "SUZENT_LOCAL_BASE_URL",
            "",
        ),
    };
    let chosen = config
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(|| {
            std::env::var(env_var)
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        })
        .unwrap_or_else(|| default.to_string());
    let chosen = chosen.trim_end_matches('/').to_string();
    match kind {
        ProviderKind::Ollama => {
            // OLLAMA_HOST is often `host:port` without a scheme; the OpenAI-compatible API is /v1.
            let with_scheme = if chosen.contains("://") {
                chosen
            } else {
                format!("http://{chosen}")
            };
            if with_scheme.ends_with("/v1") {
                with_scheme
            } else {
                format!("{with_scheme}/v1")
            }
        }
        _ => chosen,
    }
}

/// Most tokens of a reply unless configured (`max_tokens` is always sent).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The configured reply limit and context size of `kind`.
pub fn limits(kind: ProviderKind, providers: &ProvidersConfig) -> (u32, Option<u32>) {
    match kind {
        ProviderKind::Local => (
            providers
                .local
                .max_tokens
                .unwrap_or(super::local::DEFAULT_MAX_TOKENS),
            providers.local.context_size,
        ),
        _ => {
            let config = match kind {
                ProviderKind::OpenAi => &providers.openai,
                ProviderKind::Anthropic => &providers.anthropic,
                ProviderKind::Gemini => &providers.gemini,
                ProviderKind::Ollama => &providers.ollama,
                _ => &providers.openai_compatible,
            };
            (
                config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
                config.context_size,
            )
        }
    }
}

/// The engine options of the in-process provider from `[providers.local]`.
pub fn engine_options(local: &suzent_core::LocalConfig) -> suzent_llama::EngineOptions {
    let defaults = suzent_llama::EngineOptions::default();
    suzent_llama::EngineOptions {
        context_size: local.context_size,
        threads: local.threads,
        idle_unload: local
            .idle_unload_secs
            .map(|s| Duration::from_secs(u64::from(s)))
            .unwrap_or(defaults.idle_unload),
        ..defaults
    }
}

fn missing_key(kind: ProviderKind) -> ProviderError {
    ProviderError::MissingApiKey {
        provider: kind.as_str().to_string(),
        env_var: kind
            .key_env_vars()
            .first()
            .copied()
            .unwrap_or_default()
            .to_string(),
    }
}

/// A provider for `model` (`provider/model-id`) and the model id to put in its requests.
///
/// `local/ID` runs `ID.gguf` from `[providers.local] models_dir` in process, or asks the local
/// OpenAI-compatible server at `[providers.local] base_url`; `openai-compatible/ID` asks the
/// server at `[providers.openai-compatible] base_url`. Neither needs a key (one stored with
/// `suzent keys set` is sent), and nor does `openai/` with a base URL other than OpenAI's.
pub fn build_provider(
    model: &str,
    providers: &ProvidersConfig,
    keys: &dyn KeySource,
) -> Result<(Box<dyn ModelProvider>, String), ProviderError> {
    let (kind, model_id) = parse_model(model)?;
    let base = base_url(kind, providers);
    let (max_tokens, _) = limits(kind, providers);
    if kind == ProviderKind::Local && base.is_empty() {
        let dir =
            providers
                .local
                .models_dir
                .clone()
                .ok_or_else(|| ProviderError::InvalidModel {
                    model: model.to_string(),
                    message: "no local models folder is known; set [providers.local] models_dir"
                        .into(),
                })?;
        let engine = super::local::shared_engine(&engine_options(&providers.local));
        let provider = LocalProvider::new(engine, dir, max_tokens);
        provider.model_path(&model_id)?;
        return Ok((Box::new(provider), model_id));
    }
    if base.is_empty() {
        return Err(ProviderError::InvalidModel {
            model: model.to_string(),
            message: format!(
                "{kind} needs the server's address: set [providers.{kind}] base_url in config.toml (e.g. http://127.0.0.1:8080/v1)"
            ),
        });
    }
    let key = keys.api_key(kind.as_str());
    // OpenAI's own API needs a key; a server elsewhere only if it asks for one.
    if key.is_none()
        && kind.needs_key()
        && !(kind == ProviderKind::OpenAi && base != OPENAI_DEFAULT_BASE)
    {
        return Err(missing_key(kind));
    }
    let client = shared_client()?;
    let provider: Box<dyn ModelProvider> = match (kind, key) {
        (ProviderKind::Anthropic, Some(key)) => Box::new(AnthropicProvider::new(client, base, key)),
        (ProviderKind::Gemini, Some(key)) => Box::new(GeminiProvider::new(client, base, key)),
        (ProviderKind::Anthropic | ProviderKind::Gemini, None) => return Err(missing_key(kind)),
        (_, key) => {
            let recover = kind.recovers_text_calls() || base != OPENAI_DEFAULT_BASE;
            Box::new(
                OpenAiProvider::new(client, kind, base, key)
                    .with_max_tokens(max_tokens)
                    .with_text_call_recovery(recover),
            )
        }
    };
    Ok((provider, model_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use suzent_core::ProviderConfig;

    #[test]
    fn model_strings_split_at_the_first_slash() {
        assert_eq!(
            parse_model("openai/gpt-4.1"),
            Ok((ProviderKind::OpenAi, "gpt-4.1".into()))
        );
        assert_eq!(
            parse_model("openai/meta-llama/Llama-3"),
            Ok((ProviderKind::OpenAi, "meta-llama/Llama-3".into()))
        );
        assert_eq!(
            parse_model("ollama/qwen2.5"),
            Ok((ProviderKind::Ollama, "qwen2.5".into()))
        );
        assert_eq!(
            parse_model("gemini/gemini-2.5-pro"),
            Ok((ProviderKind::Gemini, "gemini-2.5-pro".into()))
        );
        assert_eq!(
            parse_model("anthropic/claude-sonnet-4-5"),
            Ok((ProviderKind::Anthropic, "claude-sonnet-4-5".into()))
        );
    }

    #[test]
    fn unknown_providers_list_the_known_ones() {
        let Err(ProviderError::InvalidModel { message, .. }) = parse_model("mistral/large") else {
            panic!("expected InvalidModel");
        };
        assert!(
            message.contains("openai, anthropic, gemini, ollama"),
            "{message}"
        );
        assert!(matches!(
            parse_model("gpt-4.1"),
            Err(ProviderError::InvalidModel { .. })
        ));
        assert!(matches!(
            parse_model("openai/"),
            Err(ProviderError::InvalidModel { .. })
        ));
    }

    #[test]
    fn config_base_urls_win_and_ollama_gets_v1() {
        let providers = ProvidersConfig {
            ollama: ProviderConfig {
                base_url: Some("localhost:9999/".into()),
                ..ProviderConfig::default()
            },
            openai: ProviderConfig {
                base_url: Some("http://x/v1/".into()),
                ..ProviderConfig::default()
            },
            ..ProvidersConfig::default()
        };
        assert_eq!(
            base_url(ProviderKind::Ollama, &providers),
            "http://localhost:9999/v1"
        );
        assert_eq!(base_url(ProviderKind::OpenAi, &providers), "http://x/v1");
    }

    #[test]
    fn missing_keys_name_the_environment_variable() {
        let err = build_provider(
            "gemini/gemini-2.5-pro",
            &ProvidersConfig::default(),
            &StaticKeys::new(),
        )
        .err();
        assert_eq!(
            err,
            Some(ProviderError::MissingApiKey {
                provider: "gemini".into(),
                env_var: "GEMINI_API_KEY".into()
            })
        );
        let ok = build_provider(
            "ollama/qwen2.5",
            &ProvidersConfig::default(),
            &StaticKeys::new(),
        );
        assert!(ok.is_ok());
    }
}
