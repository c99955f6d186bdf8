//! OpenAI chat completions, streaming (`POST {base}/chat/completions`). Also serves
//! OpenAI-compatible servers and Ollama (`{OLLAMA_HOST}/v1`, no key).

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use suzent_core::{ChatMessage, ToolCall};

use super::schema::normalize_schema;
use super::wire::{Endpoint, SseData, join_url, next_data, post_sse, stream_error};
use super::{
    ModelProvider, ModelRequest, ModelResponse, ProviderError, ProviderKind, StopReason, TextSink,
};

/// A client of the OpenAI chat completions wire format.
#[derive(Debug)]
pub struct OpenAiProvider {
    kind: ProviderKind,
    endpoint: Endpoint,
}

impl OpenAiProvider {
    /// A client for `base_url` (including `/v1`). `kind` is [`ProviderKind::OpenAi`] or
    /// [`ProviderKind::Ollama`] (names errors and selects schema normalization); `api_key` is
    /// sent as a bearer token when present.
    pub fn new(
        client: reqwest::Client,
        kind: ProviderKind,
        base_url: impl Into<String>,
        api_key: Option<String>,
    ) -> OpenAiProvider {
        OpenAiProvider {
            kind,
            endpoint: Endpoint {
                client,
                base_url: base_url.into(),
                api_key,
            },
        }
    }

    /// The JSON body sent for `request` (public for inspection in tests and `doctor`).
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        request_body(request, self.kind)
    }
}

#[async_trait]
impl ModelProvider for OpenAiProvider {
    fn name(&self) -> &str {
        self.kind.as_str()
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        on_text: &TextSink<'_>,
    ) -> Result<ModelResponse, ProviderError> {
        let provider = self.name();
        let body = request_body(request, self.kind);
        let mut http = self
            .endpoint
            .client
            .post(join_url(&self.endpoint.base_url, "chat/completions"));
        if let Some(key) = &self.endpoint.api_key {
            http = http.bearer_auth(key);
        }
        let mut events = post_sse(provider, http, &body).await?;
        let mut state = StreamState::default();
        while let Some(data) = next_data(provider, &mut events).await {
            match data? {
                SseData::Done => {
                    state.done = true;
                    break;
                }
                SseData::Json(_, chunk) => state.apply(provider, &chunk, on_text)?,
            }
        }
        state.finish(provider)
    }
}

/// Builds the chat completions body.
fn request_body(request: &ModelRequest, kind: ProviderKind) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        messages.push(map_message(message));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": normalize_schema(&tool.parameters, kind),
                    }
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    Value::Object(body)
}

fn map_message(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::User { text } => json!({"role": "user", "content": text}),
        ChatMessage::Assistant { text, tool_calls } => {
            let mut m = Map::new();
            m.insert("role".into(), json!("assistant"));
            if tool_calls.is_empty() {
                m.insert("content".into(), json!(text));
            } else {
                m.insert(
                    "content".into(),
                    if text.is_empty() {
                        Value::Null
                    } else {
                        json!(text)
                    },
                );
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                // A JSON string holding a valid object, even when the model's
                                // text was malformed (model-io 1).
                                "arguments": call.arguments_for_history().to_string(),
                            }
                        })
                    })
                    .collect();
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(m)
        }
        ChatMessage::Tool {
            tool_call_id,
            content,
            ..
        } => {
            json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
        }
    }
}

/// A tool call being assembled from fragments.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Assembles streamed tool-call fragments (public case model-io 3).
///
/// A fragment carrying an `id` different from the call currently at its index starts a new call;
/// fragments without an id continue the call at their index (or the latest call when they carry
/// no index). Arguments are concatenated as raw text; calls keep the order they started in.
#[derive(Debug, Default)]
pub(crate) struct ToolCallAssembler {
    calls: Vec<PartialCall>,
    by_index: HashMap<u64, usize>,
}

impl ToolCallAssembler {
    /// Applies one fragment.
    pub(crate) fn fragment(
        &mut self,
        index: Option<u64>,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&str>,
    ) {
        let id = id.filter(|id| !id.is_empty());
        let at_index = index.and_then(|i| self.by_index.get(&i).copied());
        let slot = match id {
            Some(id) => match at_index {
                Some(slot) if self.calls[slot].id == id || self.calls[slot].id.is_empty() => {
                    if self.calls[slot].id.is_empty() {
                        self.calls[slot].id = id.to_string();
                    }
                    slot
                }
                Some(_) => self.start(index, id),
                None => match index {
                    // No index: continue the call with this id, if any.
                    None => match self.calls.iter().position(|c| c.id == id) {
                        Some(slot) => slot,
                        None => self.start(None, id),
                    },
                    Some(_) => self.start(index, id),
                },
            },
            None => match at_index {
                Some(slot) => slot,
                None if index.is_none() && !self.calls.is_empty() => self.calls.len() - 1,
                None => self.start(index, ""),
            },
        };
        let call = &mut self.calls[slot];
        if let Some(name) = name.filter(|n| !n.is_empty())
            && call.name.is_empty()
        {
            call.name = name.to_string();
        }
        if let Some(arguments) = arguments {
            call.arguments.push_str(arguments);
        }
    }

    fn start(&mut self, index: Option<u64>, id: &str) -> usize {
        self.calls.push(PartialCall {
            id: id.to_string(),
            ..PartialCall::default()
        });
        let slot = self.calls.len() - 1;
        if let Some(index) = index {
            self.by_index.insert(index, slot);
        }
        slot
    }

    /// Whether any call started.
    pub(crate) fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The calls in order; a call that never got an id gets `call_{n}`.
    pub(crate) fn finish(self) -> Vec<ToolCall> {
        self.calls
            .into_iter()
            .enumerate()
            .map(|(n, call)| ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{n}")
                } else {
                    call.id
                },
                name: call.name,
                arguments: call.arguments,
            })
            .collect()
    }
}

#[derive(Default)]
struct StreamState {
    text: String,
    calls: ToolCallAssembler,
    finish_reason: Option<String>,
    chunks: usize,
    done: bool,
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
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Ok(());
        };
        // One completion is requested; take choice 0 (or the first one given).
        let choice = choices
            .iter()
            .find(|c| c.get("index").and_then(Value::as_u64) == Some(0))
            .or_else(|| choices.first());
        let Some(choice) = choice else {
            return Ok(()); // The usage chunk has no choices.
        };
        if let Some(delta) = choice.get("delta") {
            if let Some(text) = delta.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                self.text.push_str(text);
                on_text(text);
            }
            if let Some(fragments) = delta.get("tool_calls").and_then(Value::as_array) {
                for fragment in fragments {
                    let function = fragment.get("function");
                    self.calls.fragment(
                        fragment.get("index").and_then(Value::as_u64),
                        fragment.get("id").and_then(Value::as_str),
                        function.and_then(|f| f.get("name")).and_then(Value::as_str),
                        function
                            .and_then(|f| f.get("arguments"))
                            .and_then(Value::as_str),
                    );
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        Ok(())
    }

    fn finish(self, provider: &str) -> Result<ModelResponse, ProviderError> {
        if self.chunks == 0 && !self.done {
            return Err(ProviderError::Protocol {
                provider: provider.to_string(),
                message: "the stream ended before any data".into(),
            });
        }
        let has_calls = !self.calls.is_empty();
        let stop_reason = match self.finish_reason.as_deref() {
            Some("stop") if has_calls => StopReason::ToolUse,
            Some("stop") => StopReason::EndTurn,
            Some("tool_calls") | Some("function_call") => StopReason::ToolUse,
            Some("length") => StopReason::MaxTokens,
            Some(other) => StopReason::Other(other.to_string()),
            None if has_calls => StopReason::ToolUse,
            None => StopReason::EndTurn,
        };
        Ok(ModelResponse {
            text: self.text,
            tool_calls: self.calls.finish(),
            stop_reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolDefinition;

    type Fragment<'a> = (
        Option<u64>,
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
    );

    fn calls(fragments: &[Fragment<'_>]) -> Vec<ToolCall> {
        let mut a = ToolCallAssembler::default();
        for (index, id, name, args) in fragments {
            a.fragment(*index, *id, *name, *args);
        }
        a.finish()
    }

    #[test]
    fn interleaved_fragments_by_index_make_separate_calls() {
        let out = calls(&[
            (Some(0), Some("a"), Some("read_file"), Some("")),
            (Some(1), Some("b"), Some("glob"), Some("")),
            (Some(0), None, None, Some("{\"path\":")),
            (Some(1), None, None, Some("{\"pattern\":")),
            (Some(0), None, None, Some("\"x\"}")),
            (Some(1), None, None, Some("\"*.rs\"}")),
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!(
            (out[0].id.as_str(), out[0].arguments.as_str()),
            ("a", "{\"path\":\"x\"}")
        );
        assert_eq!(
            (out[1].id.as_str(), out[1].arguments.as_str()),
            ("b", "{\"pattern\":\"*.rs\"}")
        );
    }

    #[test]
    fn distinct_ids_at_index_zero_are_distinct_calls() {
        let out = calls(&[
            (
                Some(0),
                Some("a"),
                Some("read_file"),
                Some("{\"path\":\"1\"}"),
            ),
            (Some(0), Some("b"), Some("read_file"), Some("{\"path\":")),
            (Some(0), None, None, Some("\"2\"}")),
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].arguments, "{\"path\":\"1\"}");
        assert_eq!(out[1].arguments, "{\"path\":\"2\"}");
    }

    #[test]
    fn repeated_ids_continue_the_same_call() {
        let out = calls(&[
            (Some(0), Some("a"), Some("f"), Some("{\"x\"")),
            (Some(0), Some("a"), Some("f"), Some(":1}")),
            (None, None, None, Some("")),
        ]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].arguments, "{\"x\":1}");
    }

    #[test]
    fn fragments_without_index_follow_ids_or_the_latest_call() {
        let out = calls(&[
            (None, Some("a"), Some("f"), Some("{")),
            (None, Some("b"), Some("g"), Some("[")),
            (None, Some("a"), None, Some("}")),
            (None, None, None, Some("]")),
        ]);
        assert_eq!(out[0].arguments, "{}");
        assert_eq!(out[1].arguments, "[]");
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let p = OpenAiProvider::new(
            reqwest::Client::new(),
            ProviderKind::OpenAi,
            "http://h/v1",
            Some("sk-secret".into()),
        );
        let shown = format!("{p:?}");
        assert!(
            !shown.contains("sk-secret") && shown.contains("has_key: true"),
            "{shown}"
        );
    }

    #[test]
    fn history_replays_malformed_arguments_as_an_empty_object() {
        let request = ModelRequest {
            model: "m".into(),
            system: "sys".into(),
            messages: vec![
                ChatMessage::User { text: "hi".into() },
                ChatMessage::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "call_1".into(),
                        name: "read_file".into(),
                        arguments: "{\"path\": \"a".into(),
                    }],
                },
                ChatMessage::Tool {
                    tool_call_id: "call_1".into(),
                    tool_name: "read_file".into(),
                    content: "bad json".into(),
                    is_error: true,
                },
            ],
            tools: vec![ToolDefinition {
                name: "read_file".into(),
                description: "Reads".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            }],
        };
        let body = request_body(&request, ProviderKind::OpenAi);
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "sys"})
        );
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            json!("{}")
        );
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(
            body["messages"][3],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "bad json"})
        );
        assert_eq!(body["tools"][0]["function"]["name"], json!("read_file"));
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
    }
}
