//! Model listing: the models a provider offers, for the model pickers (first run, composer).
//! OpenAI and compatible servers: `GET {base}/models`; Anthropic: `GET /v1/models`; Gemini:
//! `GET /v1beta/models` (`models.list`, only models that support `generateContent`); Ollama:
//! `GET /api/tags` (the locally pulled models).

use super::ProviderError;
use super::ProviderKind;
use super::wire::MAX_ERROR_BODY;
use serde_json::Value;
use std::time::Duration;

/// How long one listing may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(20);
/// Most model ids kept from one listing (some servers list thousands).
const MAX_MODELS: usize = 500;

fn ids_at(value: &Value, array: &str, field: &str) -> Vec<String> {
    value
        .get(array)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|m| m.get(field).and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The model ids (without the provider prefix) that `kind` offers at `base` (as
/// [`super::resolve::base_url`] gives it), sorted, at most 500.
///
/// Errors: [`ProviderError::Transport`] (unreachable, timeout), [`ProviderError::Http`] (an
/// error status, e.g. 401 for a refused key, with the body), [`ProviderError::Protocol`] (an
/// answer that is not a model list).
pub async fn list_models(
    client: &reqwest::Client,
    kind: ProviderKind,
    base: &str,
    api_key: Option<&str>,
) -> Result<Vec<String>, ProviderError> {
    let provider = kind.as_str();
    if kind == ProviderKind::Local {
        return Err(ProviderError::InvalidModel {
            model: provider.to_string(),
            message: "local models are the GGUF files in the models folder (suzent models list), not a server's listing".into(),
        });
    }
    let base = base.trim_end_matches('/');
    let request = match kind {
        // `Local` returned above.
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible | ProviderKind::Local => {
            let r = client.get(format!("{base}/models"));
            match api_key {
                Some(key) => r.bearer_auth(key),
                None => r,
            }
        }
        ProviderKind::Anthropic => {
            let url = if base.ends_with("/v1") {
                format!("{base}/models?limit=1000")
            } else {
                format!("{base}/v1/models?limit=1000")
            };
            client
                .get(url)
                .header("x-api-key", api_key.unwrap_or_default())
                .header("anthropic-version", super::anthropic::ANTHROPIC_VERSION)
        }
        ProviderKind::Gemini => {
            let url = if base.ends_with("/v1beta") {
                format!("{base}/models?pageSize=1000")
            } else {
                format!("{base}/v1beta/models?pageSize=1000")
            };
            client
                .get(url)
                .header("x-goog-api-key", api_key.unwrap_or_default())
        }
        ProviderKind::Ollama => {
            let host = base.strip_suffix("/v1").unwrap_or(base);
            client.get(format!("{host}/api/tags"))
        }
    };
    let response =
        request
            .timeout(LIST_TIMEOUT)
            .send()
            .await
            .map_err(|e| ProviderError::Transport {
                provider: provider.to_string(),
                message: e.to_string(),
            })?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|e| ProviderError::Transport {
            provider: provider.to_string(),
            message: e.to_string(),
        })?;
    if !status.is_success() {
        let mut body = text;
        if body.len() > MAX_ERROR_BODY {
            let mut end = MAX_ERROR_BODY;
            while !body.is_char_boundary(end) {
                end -= 1;
            }
            body.truncate(end);
        }
        return Err(ProviderError::Http {
            provider: provider.to_string(),
            status: status.as_u16(),
            body,
            retry_after_ms: None,
        });
    }
    let value: Value = serde_json::from_str(&text).map_err(|e| ProviderError::Protocol {
        provider: provider.to_string(),
        message: format!("the model list is not JSON: {e}"),
    })?;
    let mut ids = match kind {
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible | ProviderKind::Anthropic => {
            ids_at(&value, "data", "id")
        }
        ProviderKind::Local => Vec::new(),
        ProviderKind::Ollama => ids_at(&value, "models", "name"),
        ProviderKind::Gemini => value
            .get("models")
            .and_then(Value::as_array)
            .map(|models| {
                models
                    .iter()
                    .filter(|m| {
                        m.get("supportedGenerationMethods")
                            .and_then(Value::as_array)
                            .is_none_or(|methods| {
                                methods
                                    .iter()
                                    .any(|x| x.as_str() == Some("generateContent"))
                            })
                    })
                    .filter_map(|m| m.get("name").and_then(Value::as_str))
                    .map(|n| n.strip_prefix("models/").unwrap_or(n).to_string())
                    .collect()
            })
            .unwrap_or_default(),
    };
    if ids.is_empty() && value.get("data").is_none() && value.get("models").is_none() {
        return Err(ProviderError::Protocol {
            provider: provider.to_string(),
            message: "the answer has no model list".into(),
        });
    }
    ids.sort();
    ids.dedup();
    ids.truncate(MAX_MODELS);
    Ok(ids)
}
