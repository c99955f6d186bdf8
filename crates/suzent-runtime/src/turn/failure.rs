//! How a provider failure reaches the user (issue #13 items 5 and 6): each failure names itself
//! with the provider's own message and says what to do (a missing or wrong key, a wrong base
//! URL, an unknown model, a quota, a server in trouble). A request that did not fit the model's
//! context is its own outcome, `context_overflow`, with the server's message — never a generic
//! stream error.

use crate::provider::ProviderError;
use suzent_core::RunOutcome;

/// Phrases servers use for a request larger than the model's context: OpenAI
/// (`context_length_exceeded`, "maximum context length"), Anthropic ("prompt is too long"),
/// Gemini ("exceeds the maximum number of tokens"), llama.cpp (`exceed_context_size_error`,
/// "exceeds the available context size"), vLLM and Ollama ("context length", "context window").
const OVERFLOW_MARKERS: &[&str] = &[
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "context size",
    "exceed_context_size",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "exceeds the maximum number of tokens",
];

/// Whether the provider's error says the request did not fit the model's context.
pub(super) fn is_context_overflow(e: &ProviderError) -> bool {
    let text = match e {
        ProviderError::Http { status, body, .. } if (400..500).contains(status) => body,
        ProviderError::Protocol { message, .. } => message,
        _ => return false,
    };
    let text = text.to_lowercase();
    OVERFLOW_MARKERS.iter().any(|m| text.contains(m))
}

/// The run's outcome for a provider failure and the message shown to the user: the provider's
/// message and what to do.
pub(super) fn explain(e: &ProviderError) -> (RunOutcome, String) {
    if is_context_overflow(e) {
        return (
            RunOutcome::ContextOverflow,
            format!(
                "context overflow: the request did not fit the model's context window ({e}). Start a new chat, or switch to a model with a larger context; the chat stays usable."
            ),
        );
    }
    let hint = match e {
        ProviderError::Http { status: 401, .. } | ProviderError::Http { status: 403, .. } => {
            "the API key was refused: check it (`suzent keys set PROVIDER`, or the provider's environment variable)"
        }
        ProviderError::Http { status: 404, .. } => {
            "the model or the endpoint was not found: check the model name and the provider's base_url in config.toml"
        }
        ProviderError::Http { status: 429, .. } => {
            "rate limit or quota: wait and retry, or check the plan and billing of the provider account"
        }
        ProviderError::Http { status, .. } if *status >= 500 => {
            "the provider's server is in trouble: retry later"
        }
        ProviderError::Http { .. } => "the provider refused the request: see its message",
        ProviderError::Transport { .. } => {
            "the server could not be reached: check the network and the provider's base_url (a local server must be running)"
        }
        ProviderError::Protocol { .. } => {
            "the server's answer could not be read: check that base_url points at a compatible server, then retry"
        }
        ProviderError::EmptyCompletion { .. } => {
            "retry, or pick a model that handles tool calls better"
        }
        // The message already says what to do (raise max_tokens, set a key, fix the model).
        ProviderError::ToolCallCutOff { .. }
        | ProviderError::MissingApiKey { .. }
        | ProviderError::InvalidModel { .. }
        | ProviderError::Cancelled => "",
    };
    let message = if hint.is_empty() {
        e.to_string()
    } else {
        format!("{e}. What to do: {hint}.")
    };
    (RunOutcome::Failed, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn http(status: u16, body: &str) -> ProviderError {
        ProviderError::Http {
            provider: "openai".into(),
            status,
            body: body.into(),
            retry_after_ms: None,
        }
    }

    #[test]
    fn context_overflow_errors_of_each_server_name_themselves() {
        for body in [
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9013 tokens.","code":"context_length_exceeded"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."}}"#,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#,
        ] {
            let (outcome, message) = explain(&http(400, body));
            assert_eq!(outcome, RunOutcome::ContextOverflow, "{body}");
            assert!(
                message.starts_with("context overflow:") && message.contains(body),
                "{message}"
            );
        }
    }

    #[test]
    fn other_failures_keep_the_providers_message_and_say_what_to_do() {
        let (outcome, message) = explain(&http(
            429,
            r#"{"error":{"message":"You exceeded your current quota"}}"#,
        ));
        assert_eq!(outcome, RunOutcome::Failed);
        assert!(
            message.contains("You exceeded your current quota")
                && message.contains("What to do: rate limit or quota"),
            "{message}"
        );
        let (_, message) = explain(&http(401, "invalid api key"));
        assert!(
            message.contains("invalid api key") && message.contains("API key was refused"),
            "{message}"
        );
        let (_, message) = explain(&http(404, "model 'gpt-9' not found"));
        assert!(message.contains("check the model name"), "{message}");
        assert!(!is_context_overflow(&http(500, "context length")));
    }
}
