//! Shared plumbing of the provider clients: sending a request, turning an error status into
//! [`ProviderError::Http`] with a bounded body, and reading the SSE stream.

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use serde_json::Value;
use std::pin::Pin;

use super::ProviderError;

/// The most of an error body kept in [`ProviderError::Http`].
pub(crate) const MAX_ERROR_BODY: usize = 2048;

/// The parsed SSE events of a response.
pub(crate) type Events = Pin<Box<dyn Stream<Item = Result<Event, ProviderError>> + Send>>;

/// Where a provider client sends its requests: the shared HTTP client, the base URL and the API
/// key. `Debug` prints the URL and whether a key is set, never the key.
pub(crate) struct Endpoint {
    pub(crate) client: reqwest::Client,
    pub(crate) base_url: String,
    pub(crate) api_key: Option<String>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("has_key", &self.api_key.is_some())
            .finish()
    }
}

/// One non-empty data payload of an SSE stream.
pub(crate) enum SseData {
    /// The event name (`message` when the server gives none) and the payload parsed as JSON.
    Json(String, Value),
    /// The OpenAI end marker `data: [DONE]`.
    Done,
}

/// The next non-empty data payload of `events`, parsed; `None` at the end of the stream.
/// Errors: transport and framing errors of the stream, and a payload that is not JSON.
pub(crate) async fn next_data(
    provider: &str,
    events: &mut Events,
) -> Option<Result<SseData, ProviderError>> {
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(e) => return Some(Err(e)),
        };
        let data = event.data.trim();
        if data.is_empty() {
            continue;
        }
        if data == "[DONE]" {
            return Some(Ok(SseData::Done));
        }
        return Some(parse_data(provider, data).map(|value| SseData::Json(event.event, value)));
    }
    None
}

/// Posts `body` as JSON and returns the response when its status is a success; otherwise
/// [`ProviderError::Http`] with the status, the bounded body and `Retry-After`, or a transport
/// error.
pub(crate) async fn post_json<B: serde::Serialize + ?Sized>(
    provider: &str,
    request: reqwest::RequestBuilder,
    body: &B,
) -> Result<reqwest::Response, ProviderError> {
    send_checked(provider, request.json(body)).await
}

/// `request` with `body`, JSON already serialized, as its body.
pub(crate) fn with_json(
    request: reqwest::RequestBuilder,
    body: Vec<u8>,
) -> reqwest::RequestBuilder {
    request
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body)
}

/// Sends `request` (its body set) and returns the response when its status is a success;
/// otherwise [`ProviderError::Http`] with the status, the bounded body and `Retry-After`, or a
/// transport error.
pub(crate) async fn send_checked(
    provider: &str,
    request: reqwest::RequestBuilder,
) -> Result<reqwest::Response, ProviderError> {
    let response = request.send().await.map_err(|e| transport(provider, &e))?;
    let status = response.status();
    if !status.is_success() {
        let retry_after_ms = retry_after_ms(response.headers());
        return Err(ProviderError::Http {
            provider: provider.to_string(),
            status: status.as_u16(),
            body: bounded_body(response).await,
            retry_after_ms,
        });
    }
    Ok(response)
}

/// Posts `body` as JSON and returns the response's SSE events, or the error status with its body.
pub(crate) async fn post_sse<B: serde::Serialize + ?Sized>(
    provider: &str,
    request: reqwest::RequestBuilder,
    body: &B,
) -> Result<Events, ProviderError> {
    send_sse(provider, request.json(body)).await
}

/// Sends `request` (its body set) and returns the response's SSE events, or the error status
/// with its body.
pub(crate) async fn send_sse(
    provider: &str,
    request: reqwest::RequestBuilder,
) -> Result<Events, ProviderError> {
    let response = send_checked(
        provider,
        request.header(reqwest::header::ACCEPT, "text/event-stream"),
    )
    .await?;
    let provider = provider.to_string();
    Ok(Box::pin(response.bytes_stream().eventsource().map(
        move |item| {
            item.map_err(|e| match e {
                EventStreamError::Transport(e) => transport(&provider, &e),
                EventStreamError::Utf8(e) => ProviderError::Protocol {
                    provider: provider.clone(),
                    message: format!("stream is not UTF-8: {e}"),
                },
                EventStreamError::Parser(e) => ProviderError::Protocol {
                    provider: provider.clone(),
                    message: format!("malformed server-sent events: {e}"),
                },
            })
        },
    )))
}

/// A transport error, without the URL (it may carry a query string) and never a header.
pub(crate) fn transport(provider: &str, e: &reqwest::Error) -> ProviderError {
    let mut message = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "could not connect".to_string()
    } else if e.is_body() || e.is_decode() {
        "the response stream broke".to_string()
    } else {
        "request failed".to_string()
    };
    // The innermost cause says what actually happened (refused, reset, dns...).
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(e);
    let mut last = None;
    while let Some(s) = source {
        last = Some(s.to_string());
        source = s.source();
    }
    if let Some(cause) = last {
        message.push_str(": ");
        message.push_str(&cause);
    }
    if let Some(url) = e.url() {
        // Host only: paths and queries stay out of errors.
        if let Some(host) = url.host_str() {
            message.push_str(&format!(
                " ({host}{})",
                url.port().map(|p| format!(":{p}")).unwrap_or_default()
            ));
        }
    }
    ProviderError::Transport {
        provider: provider.to_string(),
        message,
    }
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of an error response.
/// How long an error answer asks the client to wait, in milliseconds: OpenAI's
/// `retry-after-ms`, else `Retry-After` in whole seconds (RFC 9110 §10.2.3; the HTTP-date form
/// is not used by model APIs and is ignored).
pub(crate) fn retry_after_ms(headers: &reqwest::header::HeaderMap) -> Option<u64> {
    let read = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    if let Some(ms) = read("retry-after-ms") {
        return Some(ms as u64);
    }
    read("retry-after").map(|s| (s * 1000.0) as u64)
}

pub(crate) async fn bounded_body(mut response: reqwest::Response) -> String {
    let mut bytes: Vec<u8> = Vec::new();
    let mut truncated = false;
    while let Ok(Some(chunk)) = response.chunk().await {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > MAX_ERROR_BODY {
            truncated = true;
            break;
        }
    }
    truncate_text(&String::from_utf8_lossy(&bytes), MAX_ERROR_BODY, truncated)
}

/// Cuts `text` to at most `max` bytes on a character boundary, marking a cut with `…`.
pub(crate) fn truncate_text(text: &str, max: usize, already_truncated: bool) -> String {
    if text.len() <= max && !already_truncated {
        return text.to_string();
    }
    format!("{}…", suzent_core::text::prefix_bytes(text, max))
}

/// Parses one SSE data payload as JSON.
pub(crate) fn parse_data(provider: &str, data: &str) -> Result<Value, ProviderError> {
    serde_json::from_str(data).map_err(|e| ProviderError::Protocol {
        provider: provider.to_string(),
        message: format!(
            "event data is not JSON ({e}): {}",
            truncate_text(data, 200, false)
        ),
    })
}

/// An `error` object inside a stream, as a protocol error.
pub(crate) fn stream_error(provider: &str, error: &Value) -> ProviderError {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| error.as_str().map(str::to_string))
        .unwrap_or_else(|| error.to_string());
    let kind = error
        .get("type")
        .or_else(|| error.get("status"))
        .or_else(|| error.get("code"))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    ProviderError::Protocol {
        provider: provider.to_string(),
        message: truncate_text(
            &match kind {
                Some(kind) => format!("error in stream ({kind}): {message}"),
                None => format!("error in stream: {message}"),
            },
            MAX_ERROR_BODY,
            false,
        ),
    }
}

/// Joins a base URL and a path with exactly one slash.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_respects_char_boundaries() {
        let text = "é".repeat(10);
        let cut = truncate_text(&text, 5, false);
        assert_eq!(cut, "éé…");
        assert_eq!(truncate_text("short", 10, false), "short");
    }

    #[test]
    fn endpoint_debug_never_prints_the_key() {
        let endpoint = Endpoint {
            client: reqwest::Client::new(),
            base_url: "https://api.example.com/v1".into(),
            api_key: Some("sk-secret-123".into()),
        };
        let shown = format!("{endpoint:?}");
        assert!(shown.contains("https://api.example.com/v1"), "{shown}");
        assert!(shown.contains("has_key: true"), "{shown}");
        assert!(!shown.contains("sk-secret-123"), "{shown}");
    }

    #[test]
    fn urls_join_with_one_slash() {
        assert_eq!(
            join_url("http://h/v1/", "/chat/completions"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            join_url("http://h/v1", "chat/completions"),
            "http://h/v1/chat/completions"
        );
    }
}
