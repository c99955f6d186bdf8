//! Checking that a configured model answers (`suzent doctor --model M`) and listing the models an
//! OpenAI-compatible server serves (`GET {base}/models`).
//!
//! Only the base URL the configuration names for the model's provider is contacted: its
//! `/models`, then one chat completion of at most one token. A server that answers 404 or HTML is
//! not "reachable".

use serde_json::{Value, json};
use std::time::Duration;
use suzent_core::{ChatMessage, ProvidersConfig};

use super::resolve::{KeySource, base_url, build_provider, parse_model, shared_client};
use super::wire::join_url;
use super::{ModelRequest, ProviderError, ProviderKind};

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeCheck {
    /// What was checked (`models`, `completion`).
    pub name: String,
    /// Whether it passed.
    pub ok: bool,
    /// What was found.
    pub detail: String,
}

fn check(name: &str, ok: bool, detail: impl Into<String>) -> ProbeCheck {
    ProbeCheck {
        name: name.into(),
        ok,
        detail: detail.into(),
    }
}

/// Time allowed to each probe request.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// The model ids an OpenAI-compatible server lists at `GET {base}/models` (`{"data":[{"id"}]}`,
/// or Ollama's `{"models":[{"name"}]}`).
pub async fn list_server_models(
    kind: ProviderKind,
    providers: &ProvidersConfig,
    keys: &dyn KeySource,
) -> Result<Vec<String>, ProviderError> {
    let base = base_url(kind, providers);
    if base.is_empty() {
        return Err(ProviderError::InvalidModel {
            model: kind.to_string(),
            message: format!("no base_url is set for [providers.{kind}]"),
        });
    }
    let client = shared_client()?;
    let mut request = client.get(join_url(&base, "models")).timeout(PROBE_TIMEOUT);
    if let Some(key) = keys.api_key(kind.as_str()) {
        request = request.bearer_auth(key);
    }
    let provider = kind.as_str();
    let response = request.send().await.map_err(|e| ProviderError::Transport {
        provider: provider.into(),
        message: e.to_string(),
    })?;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    if !(200..300).contains(&status) {
        return Err(ProviderError::Http {
            provider: provider.into(),
            status,
            body: text.chars().take(300).collect(),
            retry_after_ms: None,
        });
    }
    let value: Value = serde_json::from_str(&text).map_err(|_| ProviderError::Protocol {
        provider: provider.into(),
        message: "GET /models did not answer with JSON".into(),
    })?;
    let ids: Vec<String> = value
        .get("data")
        .or_else(|| value.get("models"))
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|m| m.get("id").or_else(|| m.get("name")))
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .ok_or_else(|| ProviderError::Protocol {
            provider: provider.into(),
            message: "GET /models has no model list (`data`)".into(),
        })?;
    Ok(ids)
}

/// Checks `model`: for OpenAI-compatible servers, that `/models` answers and lists it; for every
/// provider, that a completion of one token comes back.
pub async fn probe_model(
    model: &str,
    providers: &ProvidersConfig,
    keys: &dyn KeySource,
) -> Vec<ProbeCheck> {
    let mut checks = Vec::new();
    let (kind, id) = match parse_model(model) {
        Ok(parsed) => parsed,
        Err(e) => return vec![check("model", false, e.to_string())],
    };
    let in_process = kind == ProviderKind::Local && base_url(kind, providers).is_empty();
    let openai_wire = matches!(
        kind,
        ProviderKind::OpenAi
            | ProviderKind::Ollama
            | ProviderKind::OpenAiCompatible
            | ProviderKind::Local
    );
    if openai_wire && !in_process {
        match list_server_models(kind, providers, keys).await {
            Ok(ids) if ids.contains(&id) => {
                checks.push(check("models", true, format!("the server lists {id}")))
            }
            Ok(ids) if ids.is_empty() => {
                checks.push(check("models", false, "the server lists no models"))
            }
            Ok(ids) => checks.push(check(
                "models",
                false,
                format!(
                    "the server does not list {id}; it serves: {}",
                    ids.join(", ")
                ),
            )),
            Err(e) => checks.push(check("models", false, e.to_string())),
        }
    }
    let provider = match build_provider(model, providers, keys) {
        Ok((provider, _)) => provider,
        Err(e) => {
            checks.push(check("completion", false, e.to_string()));
            return checks;
        }
    };
    let request = ModelRequest {
        model: id,
        system: String::new(),
        messages: vec![ChatMessage::User {
            text: "Reply with OK.".into(),
            attachments: Vec::new(),
        }],
        tools: Vec::new(),
    };
    let started = std::time::Instant::now();
    let result = if openai_wire && !in_process {
        one_token(kind, providers, keys, &request).await
    } else {
        tokio::time::timeout(
            Duration::from_secs(300),
            provider.stream(&request, &|_: &str| {}),
        )
        .await
        .map_err(|_| "no answer within 300 s".to_string())
        .and_then(|r| r.map(|_| ()).map_err(|e| e.to_string()))
    };
    checks.push(match result {
        Ok(()) => check(
            "completion",
            true,
            format!("answered in {} ms", started.elapsed().as_millis()),
        ),
        Err(e) => check("completion", false, e),
    });
    checks
}

/// A non-streamed chat completion of at most one token.
async fn one_token(
    kind: ProviderKind,
    providers: &ProvidersConfig,
    keys: &dyn KeySource,
    request: &ModelRequest,
) -> Result<(), String> {
    let client = shared_client().map_err(|e| e.to_string())?;
    let base = base_url(kind, providers);
    let mut http = client
        .post(join_url(&base, "chat/completions"))
        .timeout(PROBE_TIMEOUT);
    if let Some(key) = keys.api_key(kind.as_str()) {
        http = http.bearer_auth(key);
    }
    let body = json!({
        "model": request.model,
        "messages": [{"role": "user", "content": "Reply with OK."}],
        "max_tokens": 1,
        "stream": false,
    });
    let response = http.json(&body).send().await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    if !(200..300).contains(&status) {
        return Err(format!(
            "HTTP {status}: {}",
            text.chars().take(300).collect::<String>()
        ));
    }
    let value: Value =
        serde_json::from_str(&text).map_err(|_| "the completion is not JSON".to_string())?;
    if value.get("choices").and_then(Value::as_array).is_none() {
        return Err("the completion has no choices".into());
    }
    Ok(())
}
