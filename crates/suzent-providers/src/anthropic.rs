//! Anthropic messages, streaming (`POST {base}/v1/messages`).

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

/// The API version header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` of every request.
pub const MAX_TOKENS: u32 = 8192;

/// A client of the Anthropic messages wire format.
#[derive(Debug)]
pub struct AnthropicProvider {
    endpoint: Endpoint,
}

impl AnthropicProvider {
    /// A client for `base_url` (`https://api.anthropic.com`; a trailing `/v1` is accepted too).
    pub fn new(
        client: reqwest::Client,
        base_url: impl Into<String>,
        api_key: String,
    ) -> AnthropicProvider {
        AnthropicProvider {
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

    fn url(&self) -> String {
        let base = self.endpoint.base_url.trim_end_matches('/');
        if base.ends_with("/v1") {
            join_url(base, "messages")
        } else {
            join_url(base, "v1/messages")
        }
    }
}

#[async_trait]
impl ModelProvider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        on_text: &TextSink<'_>,
    ) -> Result<ModelResponse, ProviderError> {
        let provider = self.name();
        let body = request_body(request);
        let http = self
            .endpoint
            .client
            .post(self.url())
            .header(
                "x-api-key",
                self.endpoint.api_key.as_deref().unwrap_or_default(),
            )
            .header("anthropic-version", ANTHROPIC_VERSION);
        let mut events = post_sse(provider, http, &body).await?;
        let mut state = StreamState::default();
        while let Some(data) = next_data(provider, &mut events).await {
            let SseData::Json(event, value) = data? else {
                continue;
            };
            if state.apply(provider, &event, &value, on_text)? {
                break;
            }
        }
        state.finish(provider)
    }
}

fn request_body(request: &ModelRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(MAX_TOKENS));
    if !request.system.is_empty() {
        body.insert("system".into(), json!(request.system));
    }
    body.insert(
        "messages".into(),
        Value::Array(map_messages(&request.messages)),
    );
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": normalize_tool_schema(&tool.name, &tool.parameters, ProviderKind::Anthropic),
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

/// Maps the transcript to content-block messages. Consecutive messages of one role (tool results,
/// a user message after them) are merged, so roles alternate; empty messages are left out.
fn map_messages(messages: &[ChatMessage]) -> Vec<Value> {
    let turns = messages.iter().map(|message| match message {
        ChatMessage::User { .. } => {
            // Images first, as Anthropic's vision guide advises, then the text.
            let mut blocks: Vec<Value> = message
                .inline_images()
                .into_iter()
                .map(|(mime, data)| {
                    json!({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}})
                })
                .collect();
            let text = message.user_text_for_model().unwrap_or_default();
            if !text.is_empty() {
                blocks.push(json!({"type": "text", "text": text}));
            }
            ("user", blocks)
        }
        ChatMessage::Assistant { text, tool_calls } => {
            let mut blocks = Vec::new();
            if !text.is_empty() {
                blocks.push(json!({"type": "text", "text": text}));
            }
            for call in tool_calls {
                blocks.push(json!({
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": call.arguments_for_history(),
                }));
            }
            ("assistant", blocks)
        }
        ChatMessage::Tool {
            tool_call_id,
            content,
            is_error,
            ..
        } => (
            "user",
            vec![json!({
                "type": "tool_result",
                "tool_use_id": tool_call_id,
                "content": content,
                "is_error": is_error,
            })],
        ),
    });
    // tool_result blocks must come first in a user message.
    merge_turns(turns, is_tool_result)
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

fn is_tool_result(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("tool_result")
}

enum Block {
    Text,
    Tool {
        id: String,
        name: String,
        initial_input: Option<Value>,
        json: String,
    },
    Other,
}

#[derive(Default)]
struct StreamState {
    text: String,
    /// Blocks in the order they started.
    blocks: Vec<Block>,
    /// Stream index -> the latest block started at it.
    by_index: HashMap<u64, usize>,
    stop_reason: Option<String>,
    started: bool,
    /// `message_start`'s input tokens (with cache reads and writes) and the output tokens of
    /// the last `message_delta` (cumulative).
    usage: Option<crate::Usage>,
}

/// Input tokens of an Anthropic `usage` object: uncached, cache reads and cache writes.
fn anthropic_input_tokens(usage: &Value) -> u64 {
    [
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ]
    .iter()
    .filter_map(|k| usage.get(*k).and_then(Value::as_u64))
    .sum()
}

impl StreamState {
    /// Applies one event; true when the message is complete.
    fn apply(
        &mut self,
        provider: &str,
        event_name: &str,
        data: &Value,
        on_text: &TextSink<'_>,
    ) -> Result<bool, ProviderError> {
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event_name);
        let index = data.get("index").and_then(Value::as_u64);
        match kind {
            "message_start" => {
                self.started = true;
                if let Some(u) = data.get("message").and_then(|m| m.get("usage")) {
                    self.usage = Some(crate::Usage {
                        input_tokens: anthropic_input_tokens(u),
                        output_tokens: u.get("output_tokens").and_then(Value::as_u64).unwrap_or(0),
                    });
                }
            }
            "ping" | "content_block_stop" => {}
            "content_block_start" => {
                self.started = true;
                let block = data.get("content_block").cloned().unwrap_or(Value::Null);
                let new = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let text = block
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        if !text.is_empty() {
                            self.text.push_str(text);
                            on_text(text);
                        }
                        Block::Text
                    }
                    Some("tool_use") => Block::Tool {
                        id: str_field(&block, "id"),
                        name: str_field(&block, "name"),
                        initial_input: block.get("input").cloned(),
                        json: String::new(),
                    },
                    _ => Block::Other,
                };
                self.blocks.push(new);
                let slot = self.blocks.len() - 1;
                if let Some(index) = index {
                    self.by_index.insert(index, slot);
                }
            }
            "content_block_delta" => {
                let delta = data.get("delta").cloned().unwrap_or(Value::Null);
                let slot = match index {
                    Some(index) => self.by_index.get(&index).copied(),
                    None => self.blocks.len().checked_sub(1),
                };
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let text = delta
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        if !text.is_empty() {
                            self.text.push_str(text);
                            on_text(text);
                        }
                    }
                    Some("input_json_delta") => {
                        let partial = delta
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        match slot.and_then(|s| self.blocks.get_mut(s)) {
                            Some(Block::Tool { json, .. }) => json.push_str(partial),
                            _ => {
                                return Err(ProviderError::Protocol {
                                    provider: provider.to_string(),
                                    message: format!(
                                        "input_json_delta for index {} which is not a tool_use block",
                                        index.map(|i| i.to_string()).unwrap_or_else(|| "?".into())
                                    ),
                                });
                            }
                        }
                    }
                    // thinking_delta, signature_delta, citations...: not part of the answer.
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(out) = data
                    .get("usage")
                    .and_then(|u| u.get("output_tokens"))
                    .and_then(Value::as_u64)
                {
                    self.usage
                        .get_or_insert_with(crate::Usage::default)
                        .output_tokens = out;
                }
                if let Some(reason) = data
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop_reason = Some(reason.to_string());
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                return Err(stream_error(provider, data.get("error").unwrap_or(data)));
            }
            _ => {} // Unknown events are ignored, as the API documentation asks.
        }
        Ok(false)
    }

    fn finish(self, provider: &str) -> Result<ModelResponse, ProviderError> {
        if !self.started {
            return Err(ProviderError::Protocol {
                provider: provider.to_string(),
                message: "the stream ended before any message".into(),
            });
        }
        let tool_calls: Vec<ToolCall> = self
            .blocks
            .into_iter()
            .filter_map(|block| match block {
                Block::Tool {
                    id,
                    name,
                    initial_input,
                    json,
                } => {
                    let arguments = if !json.is_empty() {
                        json
                    } else {
                        match initial_input {
                            Some(Value::Object(map)) if !map.is_empty() => {
                                Value::Object(map).to_string()
                            }
                            _ => String::new(), // Treated as {} when parsed (model-io 2).
                        }
                    };
                    Some(ToolCall {
                        id,
                        name,
                        arguments,
                    })
                }
                _ => None,
            })
            .collect();
        let stop_reason = match self.stop_reason.as_deref() {
            Some("end_turn") | Some("stop_sequence") => StopReason::EndTurn,
            Some("tool_use") => StopReason::ToolUse,
            Some("max_tokens") => StopReason::MaxTokens,
            Some(other) => StopReason::Other(other.to_string()),
            None if !tool_calls.is_empty() => StopReason::ToolUse,
            None => StopReason::EndTurn,
        };
        Ok(ModelResponse {
            text: self.text,
            tool_calls,
            stop_reason,
            usage: self.usage,
        })
    }
}

fn str_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_results_merge_into_one_user_message_before_text() {
        let messages = vec![
            ChatMessage::User {
                text: "do it".into(),
                attachments: Vec::new(),
            },
            ChatMessage::Assistant {
                text: "ok".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "t1".into(),
                        name: "a".into(),
                        arguments: "{\"x\":1}".into(),
                    },
                    ToolCall {
                        id: "t2".into(),
                        name: "b".into(),
                        arguments: "{\"x\":".into(),
                    },
                ],
            },
            ChatMessage::Tool {
                tool_call_id: "t1".into(),
                tool_name: "a".into(),
                content: "one".into(),
                is_error: false,
            },
            ChatMessage::Tool {
                tool_call_id: "t2".into(),
                tool_name: "b".into(),
                content: "bad".into(),
                is_error: true,
            },
            ChatMessage::User {
                text: "next".into(),
                attachments: Vec::new(),
            },
        ];
        let out = map_messages(&messages);
        assert_eq!(out.len(), 3);
        assert_eq!(out[1]["content"][1]["input"], json!({"x": 1}));
        assert_eq!(out[1]["content"][2]["input"], json!({}));
        assert_eq!(out[2]["role"], json!("user"));
        let blocks = out[2]["content"].as_array().cloned().unwrap_or_default();
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[0]["tool_use_id"], json!("t1"));
        assert_eq!(blocks[1]["is_error"], json!(true));
        assert_eq!(blocks[2], json!({"type": "text", "text": "next"}));
    }
}
