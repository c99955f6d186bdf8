//! Google Gemini, streaming (`POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`).

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use suzent_core::{ChatMessage, ToolCall};

use super::schema::normalize_tool_schema;
use super::turns::merge_turns;
use super::wire::{Endpoint, SseData, join_url, next_data, post_sse, stream_error};
use super::{
    ModelProvider, ModelRequest, ModelResponse, ProviderError, ProviderKind, StopReason, TextSink,
};

/// Prefix of the ids Suzent gives Gemini's function calls (Gemini sends none).
pub const SYNTHETIC_ID_PREFIX: &str = "gemini-call-";

/// A client of the Gemini `streamGenerateContent` wire format.
#[derive(Debug)]
pub struct GeminiProvider {
    endpoint: Endpoint,
}

impl GeminiProvider {
    /// A client for `base_url` (`https://generativelanguage.googleapis.com`; a trailing
    /// `/v1beta` is accepted too).
    pub fn new(
        client: reqwest::Client,
        base_url: impl Into<String>,
        api_key: String,
    ) -> GeminiProvider {
        GeminiProvider {
            endpoint: Endpoint {
                client,
                base_url: base_url.into(),
                api_key: Some(api_key),
            },
        }
    }

    /// The JSON body sent for `request`.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        request_body(request)
    }

    fn url(&self, model: &str) -> String {
        let base = self.endpoint.base_url.trim_end_matches('/');
        let base = if base.ends_with("/v1beta") {
            base.to_string()
        } else {
            join_url(base, "v1beta")
        };
        let model = model.strip_prefix("models/").unwrap_or(model);
        join_url(
            &base,
            &format!("models/{model}:streamGenerateContent?alt=sse"),
        )
    }
}

#[async_trait]
impl ModelProvider for GeminiProvider {
    fn name(&self) -> &str {
        "gemini"
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        on_text: &TextSink<'_>,
    ) -> Result<ModelResponse, ProviderError> {
        let provider = self.name();
        let body = request_body(request);
        let http = self.endpoint.client.post(self.url(&request.model)).header(
            "x-goog-api-key",
            self.endpoint.api_key.as_deref().unwrap_or_default(),
        );
        let mut events = post_sse(provider, http, &body).await?;
        let mut state = StreamState {
            next_id: next_synthetic_id(&request.messages),
            ..Default::default()
        };
        while let Some(data) = next_data(provider, &mut events).await {
            if let SseData::Json(_, chunk) = data? {
                state.apply(provider, &chunk, on_text)?;
            }
        }
        state.finish(provider)
    }
}

/// The first free `gemini-call-N` number given the ids already in the transcript, so synthesized
/// ids stay unique within a chat.
fn next_synthetic_id(messages: &[ChatMessage]) -> u64 {
    messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .filter_map(|call| {
            call.id
                .strip_prefix(SYNTHETIC_ID_PREFIX)?
                .parse::<u64>()
                .ok()
        })
        .max()
        .map_or(1, |n| n + 1)
}

fn request_body(request: &ModelRequest) -> Value {
    let mut body = Map::new();
    body.insert(
        "contents".into(),
        Value::Array(map_messages(&request.messages)),
    );
    if !request.system.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": request.system}]}),
        );
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let mut decl = Map::new();
                decl.insert("name".into(), json!(tool.name));
                decl.insert("description".into(), json!(tool.description));
                let parameters =
                    normalize_tool_schema(&tool.name, &tool.parameters, ProviderKind::Gemini);
                // Gemini rejects an OBJECT with empty `properties`: a tool without parameters
                // declares none.
                let has_properties = parameters
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|p| !p.is_empty());
                if has_properties {
                    decl.insert("parameters".into(), parameters);
                }
                Value::Object(decl)
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    Value::Object(body)
}

/// Maps the transcript to `contents`. Tool results go back as `functionResponse` parts named
/// after the tool; consecutive entries of one role are merged (parallel results in one content).
fn map_messages(messages: &[ChatMessage]) -> Vec<Value> {
    // Tool names by call id, for results whose name is missing.
    let mut names: HashMap<&str, &str> = HashMap::new();
    let turns = messages.iter().map(|message| match message {
        ChatMessage::User { .. } => {
            let text = message.user_text_for_model().unwrap_or_default();
            let mut parts = Vec::new();
            if !text.is_empty() {
                parts.push(json!({"text": text}));
            }
            for (mime, data) in message.inline_images() {
                parts.push(json!({"inlineData": {"mimeType": mime, "data": data}}));
            }
            ("user", parts)
        }
        ChatMessage::Assistant { text, tool_calls } => {
            let mut parts = Vec::new();
            if !text.is_empty() {
                parts.push(json!({"text": text}));
            }
            for call in tool_calls {
                names.insert(call.id.as_str(), call.name.as_str());
                parts.push(json!({
                    "functionCall": {"name": call.name, "args": call.arguments_for_history()}
                }));
            }
            ("model", parts)
        }
        ChatMessage::Tool {
            tool_call_id,
            tool_name,
            content,
            is_error,
        } => {
            let name = if tool_name.is_empty() {
                names
                    .get(tool_call_id.as_str())
                    .copied()
                    .unwrap_or_default()
            } else {
                tool_name.as_str()
            };
            let response = if *is_error {
                json!({"error": content})
            } else {
                json!({"content": content})
            };
            (
                "user",
                vec![json!({"functionResponse": {"name": name, "response": response}})],
            )
        }
    });
    // functionResponse parts first, as they answer the previous model turn.
    merge_turns(turns, is_function_response)
        .into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect()
}

fn is_function_response(part: &Value) -> bool {
    part.get("functionResponse").is_some()
}

#[derive(Default)]
struct StreamState {
    text: String,
    calls: Vec<ToolCall>,
    finish_reason: Option<String>,
    chunks: usize,
    next_id: u64,
    /// The latest `usageMetadata` (each chunk carries the running totals).
    usage: Option<crate::Usage>,
}

impl StreamState {
    fn apply(
        &mut self,
        provider: &str,
        chunk: &Value,
        on_text: &TextSink<'_>,
    ) -> Result<(), ProviderError> {
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(stream_error(provider, error));
        }
        self.chunks += 1;
        if let Some(u) = chunk.get("usageMetadata") {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Some(crate::Usage {
                input_tokens: n("promptTokenCount"),
                output_tokens: n("candidatesTokenCount") + n("thoughtsTokenCount"),
            });
        }
        if let Some(reason) = chunk
            .get("promptFeedback")
            .and_then(|f| f.get("blockReason"))
            .and_then(Value::as_str)
        {
            return Err(ProviderError::Protocol {
                provider: provider.to_string(),
                message: format!("the prompt was blocked ({reason})"),
            });
        }
        let Some(candidate) = chunk
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(()); // Usage-only chunk.
        };
        let parts = candidate
            .get("content")
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for part in &parts {
            if let Some(call) = part.get("functionCall") {
                let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                let arguments = match call.get("args") {
                    None | Some(Value::Null) => String::new(),
                    // Some proxies send the arguments as text: keep it raw.
                    Some(Value::String(raw)) => raw.clone(),
                    Some(args) => args.to_string(),
                };
                let id = match call
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                {
                    Some(id) => id.to_string(),
                    None => {
                        let id = format!("{SYNTHETIC_ID_PREFIX}{}", self.next_id);
                        self.next_id += 1;
                        id
                    }
                };
                self.calls.push(ToolCall {
                    id,
                    name: name.to_string(),
                    arguments,
                });
            } else if let Some(text) = part.get("text").and_then(Value::as_str) {
                // Thought summaries are not part of the answer.
                if part.get("thought").and_then(Value::as_bool) == Some(true) || text.is_empty() {
                    continue;
                }
                self.text.push_str(text);
                on_text(text);
            }
        }
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        Ok(())
    }

    fn finish(self, provider: &str) -> Result<ModelResponse, ProviderError> {
        if self.chunks == 0 {
            return Err(ProviderError::Protocol {
                provider: provider.to_string(),
                message: "the stream ended before any data".into(),
            });
        }
        let has_calls = !self.calls.is_empty();
        // Gemini says STOP also when it calls functions.
        let stop_reason = match self.finish_reason.as_deref() {
            _ if has_calls => StopReason::ToolUse,
            Some("STOP") | None => StopReason::EndTurn,
            Some("MAX_TOKENS") => StopReason::MaxTokens,
            Some(other) => StopReason::Other(other.to_string()),
        };
        Ok(ModelResponse {
            text: self.text,
            tool_calls: self.calls,
            stop_reason,
            usage: self.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_go_back_by_name_and_merge() {
        let messages = vec![
            ChatMessage::User {
                text: "go".into(),
                attachments: Vec::new(),
            },
            ChatMessage::Assistant {
                text: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "gemini-call-1".into(),
                        name: "a".into(),
                        arguments: "{}".into(),
                    },
                    ToolCall {
                        id: "gemini-call-2".into(),
                        name: "b".into(),
                        arguments: "{\"q\":".into(),
                    },
                ],
            },
            ChatMessage::Tool {
                tool_call_id: "gemini-call-1".into(),
                tool_name: "a".into(),
                content: "A".into(),
                is_error: false,
            },
            ChatMessage::Tool {
                tool_call_id: "gemini-call-2".into(),
                tool_name: String::new(),
                content: "bad".into(),
                is_error: true,
            },
        ];
        let out = map_messages(&messages);
        assert_eq!(out.len(), 3);
        assert_eq!(out[1]["role"], json!("model"));
        assert_eq!(out[1]["parts"][1]["functionCall"]["args"], json!({}));
        assert_eq!(
            out[2]["parts"],
            json!([
                {"functionResponse": {"name": "a", "response": {"content": "A"}}},
                {"functionResponse": {"name": "b", "response": {"error": "bad"}}}
            ])
        );
        assert_eq!(next_synthetic_id(&messages), 3);
    }
}
