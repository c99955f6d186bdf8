//! Provider checks for set-up screens: which models a provider offers, and whether a model
//! answers (one real request). Nothing is stored; a base URL given here overrides the
//! configured one for this check only.

use crate::error::RuntimeError;
use crate::provider::{
    KeySource, ModelRequest, ProviderError, ProviderKind, build_provider, list_models, parse_model,
    shared_client,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_core::{ChatMessage, ProvidersConfig};

/// How long the test request may take.
const TEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Most characters of the model's answer kept in [`ConnectionCheck::reply`].
const MAX_REPLY_CHARS: usize = 200;

/// What a successful connection test saw.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionCheck {
    /// The model that answered (`provider/model`).
    pub model: String,
    /// How long the answer took, in milliseconds.
    pub latency_ms: u64,
    /// The start of its answer.
    pub reply: String,
}

/// Checks providers with the configured base URLs and the runtime's keys.
pub struct ProviderCheck {
    providers: ProvidersConfig,
    keys: Arc<dyn KeySource>,
}

/// The configured providers with `base_url` put in for `kind`.
fn with_base(
    mut providers: ProvidersConfig,
    kind: ProviderKind,
    base_url: Option<&str>,
) -> ProvidersConfig {
    let Some(url) = base_url.map(str::trim).filter(|u| !u.is_empty()) else {
        return providers;
    };
    let slot = match kind {
        ProviderKind::OpenAi => &mut providers.openai,
        ProviderKind::Anthropic => &mut providers.anthropic,
        ProviderKind::Gemini => &mut providers.gemini,
        ProviderKind::Ollama => &mut providers.ollama,
        ProviderKind::OpenAiCompatible => &mut providers.openai_compatible,
        // Runs in process: there is no address to override.
        ProviderKind::Local => return providers,
    };
    slot.base_url = Some(url.to_string());
    providers
}

/// A provider error in plain words first (what to do), the technical detail after.
fn explain(e: ProviderError, base: &str) -> RuntimeError {
    let hint = match &e {
        ProviderError::Http {
            status: 401 | 403, ..
        } => "the provider refused the API key",
        ProviderError::Http { status: 404, .. } => {
            "the provider does not know this model or address"
        }
        ProviderError::Http { status: 429, .. } => {
            "the provider is rate-limiting this key (or its quota is used up)"
        }
        ProviderError::Http { .. } => "the provider answered with an error",
        ProviderError::Transport { .. } => "Suzent could not reach the provider",
        ProviderError::Protocol { .. } => "the provider's answer was not understood",
        ProviderError::EmptyCompletion { .. } => {
            "the model answered nothing (its tool-call output may not have parsed)"
        }
        ProviderError::ToolCallCutOff { .. } => "the model's tool call did not fit its token limit",
        ProviderError::MissingApiKey { .. } => return RuntimeError::Provider(e),
        ProviderError::InvalidModel { .. } | ProviderError::Cancelled => {
            return RuntimeError::Provider(e);
        }
    };
    RuntimeError::InvalidInput {
        field: "connection".into(),
        message: format!("{hint} at {base}: {e}"),
    }
}

impl ProviderCheck {
    /// Checks against `providers` with `keys`.
    pub fn new(providers: ProvidersConfig, keys: Arc<dyn KeySource>) -> ProviderCheck {
        ProviderCheck { providers, keys }
    }

    /// The models `provider` offers (`openai`, `anthropic`, `gemini`, `ollama`), sorted, using
    /// `api_key` or else the provider's key from the key source.
    ///
    /// Errors: `provider` unknown ([`RuntimeError::InvalidInput`]); a missing key; the listing
    /// failing, in words that say what to do (a refused key, an unreachable address).
    pub async fn list_models(
        &self,
        provider: &str,
        base_url: Option<&str>,
        api_key: Option<&str>,
    ) -> Result<Vec<String>, RuntimeError> {
        let kind = ProviderKind::from_name(provider).ok_or_else(|| RuntimeError::InvalidInput {
            field: "provider".into(),
            message: format!(
                "unknown provider '{provider}' (expected openai, anthropic, gemini or ollama)"
            ),
        })?;
        let key = match api_key.map(str::trim).filter(|k| !k.is_empty()) {
            Some(k) => Some(k.to_string()),
            None => self.keys.api_key(kind.as_str()),
        };
        if kind.needs_key() && key.is_none() {
            return Err(RuntimeError::Provider(ProviderError::MissingApiKey {
                provider: kind.as_str().to_string(),
                env_var: kind
                    .key_env_vars()
                    .first()
                    .copied()
                    .unwrap_or_default()
                    .to_string(),
            }));
        }
        let providers = with_base(self.providers.clone(), kind, base_url);
        let base = crate::provider::resolve::base_url(kind, &providers);
        list_models(&shared_client()?, kind, &base, key.as_deref())
            .await
            .map_err(|e| explain(e, &base))
    }

    /// Sends one short real request to `model` (`provider/model`) and returns its answer.
    ///
    /// Errors: an invalid model string; a missing key; the request failing or taking over 60 s,
    /// in words that say what failed.
    pub async fn test_connection(
        &self,
        model: &str,
        base_url: Option<&str>,
    ) -> Result<ConnectionCheck, RuntimeError> {
        let (kind, _) = parse_model(model)?;
        let providers = with_base(self.providers.clone(), kind, base_url);
        let base = crate::provider::resolve::base_url(kind, &providers);
        let (provider, model_id) = build_provider(model, &providers, self.keys.as_ref())?;
        let request = ModelRequest {
            model: model_id,
            system: String::new(),
            messages: vec![ChatMessage::User {
                text: "This is a connection test. Reply with the word OK.".into(),
                attachments: Vec::new(),
            }],
            tools: Vec::new(),
        };
        let started = Instant::now();
        let answer = tokio::time::timeout(TEST_TIMEOUT, provider.stream(&request, &|_| {}))
            .await
            .map_err(|_| RuntimeError::InvalidInput {
                field: "connection".into(),
                message: format!(
                    "{model} did not answer within {} s at {base}",
                    TEST_TIMEOUT.as_secs()
                ),
            })?
            .map_err(|e| explain(e, &base))?;
        Ok(ConnectionCheck {
            model: model.to_string(),
            latency_ms: started.elapsed().as_millis() as u64,
            reply: answer.text.chars().take(MAX_REPLY_CHARS).collect(),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::provider::StaticKeys;
    use pretty_assertions::assert_eq;
    use suzent_tests::{ScriptedServer, Turn};

    fn check(keys: StaticKeys) -> ProviderCheck {
        ProviderCheck::new(ProvidersConfig::default(), Arc::new(keys))
    }

    fn invalid(e: RuntimeError) -> (String, String) {
        match e {
            RuntimeError::InvalidInput { field, message } => (field, message),
            other => panic!("{other}"),
        }
    }

    #[tokio::test]
    async fn the_models_a_server_lists_come_back_from_the_base_url_given_for_the_check()
    -> anyhow::Result<()> {
        let server = ScriptedServer::start(Vec::new()).await;
        server.set_models(&["zeta-1", "alpha-2"]);
        let models = check(StaticKeys::new().with("openai", "sk-test"))
            .list_models("openai", Some(&server.openai_base()), None)
            .await?;
        assert_eq!(models, vec!["alpha-2".to_string(), "zeta-1".to_string()]);
        Ok(())
    }

    #[tokio::test]
    async fn a_connection_test_returns_the_models_answer() -> anyhow::Result<()> {
        let server = ScriptedServer::start(vec![Turn::text("OK")]).await;
        let answer = check(StaticKeys::new().with("openai", "sk-test"))
            .test_connection("openai/gpt-test", Some(&server.openai_base()))
            .await?;
        assert_eq!(
            (answer.model.as_str(), answer.reply.as_str()),
            ("openai/gpt-test", "OK")
        );
        let sent = server.recorded();
        assert_eq!(
            (sent.len(), sent[0].header("authorization")),
            (1, Some("Bearer sk-test"))
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_refused_key_is_said_in_plain_words_before_the_detail() -> anyhow::Result<()> {
        let server = ScriptedServer::start(vec![Turn::error(
            401,
            r#"{"error":{"message":"invalid api key"}}"#,
        )])
        .await;
        let base = server.openai_base();
        let err = check(StaticKeys::new().with("openai", "sk-wrong"))
            .test_connection("openai/gpt-test", Some(&base))
            .await
            .unwrap_err();
        let (field, message) = invalid(err);
        assert_eq!(field, "connection");
        assert!(
            message.starts_with(&format!("the provider refused the API key at {base}: ")),
            "{message}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn an_unknown_provider_or_a_missing_key_is_refused_before_any_request()
    -> anyhow::Result<()> {
        let server = ScriptedServer::start(Vec::new()).await;
        let checker = check(StaticKeys::new());
        let (field, _) = invalid(
            checker
                .list_models("acme", Some(&server.openai_base()), None)
                .await
                .unwrap_err(),
        );
        assert_eq!(field, "provider");
        let missing = checker
            .list_models("openai", Some(&server.openai_base()), None)
            .await
            .unwrap_err();
        assert!(
            matches!(
                &missing,
                RuntimeError::Provider(ProviderError::MissingApiKey { provider, .. }) if provider == "openai"
            ),
            "{missing}"
        );
        assert_eq!(server.recorded().len(), 0);
        Ok(())
    }
}
