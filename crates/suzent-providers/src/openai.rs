//! OpenAI chat completions, streaming (`POST {base}/chat/completions`). Also serves
//! OpenAI-compatible servers and Ollama (`{OLLAMA_HOST}/v1`, no key).

use async_trait::async_trait;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use suzent_core::{ChatMessage, ToolCall};

use super::local::generated_call_id;
use super::recovery::{OfferedTool, TextCallFilter};
use super::schema::{normalize_tool_schema, normalized_tool_schema};
use super::wire::{
    Endpoint, MAX_ERROR_BODY, SseData, join_url, next_data, send_checked, send_sse, stream_error,
    truncate_text, with_json,
};
use super::{
    ModelProvider, ModelRequest, ModelResponse, ProviderError, ProviderKind, StopReason, TextSink,
    ToolDefinition,
};

/// A client of the OpenAI chat completions wire format.
///
/// For local servers (Ollama, llama.cpp's server, LM Studio, vLLM) it also:
/// - reads tool calls written as text in the reply (when [`Self::with_text_call_recovery`] is
///   on and the reply has no structured calls), keeping their markup out of the streamed text;
/// - falls back to a non-streaming request when the server refuses to stream tool calls, and to
///   describing the tools in the system prompt when it refuses the `tools` field (llama.cpp's
///   server without `--jinja`); either fallback is remembered for the next requests;
/// - always sends `max_tokens` and an explicit `tool_choice`, and `""` rather than `null` as
///   the content of an assistant message with tool calls;
/// - replaces empty or missing call ids with unique generated ones (kept in the transcript, so
///   the next request repeats them).
#[derive(Debug)]
pub struct OpenAiProvider {
    kind: ProviderKind,
    endpoint: Endpoint,
    max_tokens: u32,
    recover: bool,
    /// The server refused `tools`: they are described in the system prompt instead.
    tools_in_prompt: AtomicBool,
    /// The server refused to stream a request with tools: such requests are not streamed.
    no_stream_with_tools: AtomicBool,
    /// The messages and tools of the last request with their wire JSON: a run's next request
    /// repeats them and adds a few messages, so only the new ones are serialized.
    sent: Mutex<Sent>,
}

/// How one request is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mode {
    stream: bool,
    tools_in_prompt: bool,
}

impl OpenAiProvider {
    /// A client for `base_url` (including `/v1`). `kind` names errors and selects schema
    /// normalization; `api_key` is sent as a bearer token when present.
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
            max_tokens: super::resolve::DEFAULT_MAX_TOKENS,
            recover: kind.recovers_text_calls(),
            tools_in_prompt: AtomicBool::new(false),
            no_stream_with_tools: AtomicBool::new(false),
            sent: Mutex::new(Sent::default()),
        }
    }

    /// Sets the `max_tokens` sent with every request.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> OpenAiProvider {
        self.max_tokens = max_tokens.max(1);
        self
    }

    /// Turns the reading of tool calls written as text on or off.
    pub fn with_text_call_recovery(mut self, on: bool) -> OpenAiProvider {
        self.recover = on;
        self
    }

    /// The JSON body sent for `request` (public for inspection in tests and `doctor`).
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        request_body(
            request,
            self.kind,
            self.max_tokens,
            Mode {
                stream: true,
                tools_in_prompt: self.tools_in_prompt.load(Ordering::Relaxed),
            },
        )
    }

    fn mode(&self, request: &ModelRequest) -> Mode {
        let tools = !request.tools.is_empty();
        Mode {
            stream: !(tools && self.no_stream_with_tools.load(Ordering::Relaxed)),
            tools_in_prompt: tools && self.tools_in_prompt.load(Ordering::Relaxed),
        }
    }

    fn http(&self) -> reqwest::RequestBuilder {
        let mut http = self
            .endpoint
            .client
            .post(join_url(&self.endpoint.base_url, "chat/completions"));
        if let Some(key) = &self.endpoint.api_key {
            http = http.bearer_auth(key);
        }
        http
    }

    /// The serialized body of `request` in `mode`: the messages also sent last time (equal,
    /// in the same places) and the tools (when all are equal) are copied from the last
    /// request's JSON, the rest serialized.
    ///
    /// Errors: [`ProviderError::Protocol`] if the body cannot be serialized (it always can:
    /// every map key is a string and every number finite).
    fn body_bytes(&self, request: &ModelRequest, mode: Mode) -> Result<Vec<u8>, ProviderError> {
        let unserializable = |e: serde_json::Error| ProviderError::Protocol {
            provider: self.name().to_string(),
            message: format!("the request could not be serialized: {e}"),
        };
        let tools_in_prompt = mode.tools_in_prompt && !request.tools.is_empty();
        // Another request of this provider in flight (a summary beside a step) serializes
        // without the cache rather than waiting for it.
        let sent = if tools_in_prompt {
            None
        } else {
            self.sent.try_lock().ok()
        };
        let Some(mut sent) = sent else {
            let body = wire_body(request, self.kind, self.max_tokens, mode, None);
            return serde_json::to_vec(&body).map_err(unserializable);
        };
        sent.update(request, self.kind).map_err(unserializable)?;
        let body = wire_body(request, self.kind, self.max_tokens, mode, Some(&sent));
        let mut bytes = Vec::with_capacity(sent.bytes() + request.system.len() + BODY_SLACK);
        serde_json::to_writer(&mut bytes, &body).map_err(unserializable)?;
        Ok(bytes)
    }

    /// One attempt in `mode`.
    async fn send(
        &self,
        request: &ModelRequest,
        mode: Mode,
        on_text: &TextSink<'_>,
    ) -> Result<ModelResponse, ProviderError> {
        let provider = self.name();
        let http = with_json(self.http(), self.body_bytes(request, mode)?);
        let offered = !request.tools.is_empty();
        let mut state = StreamState {
            filter: (self.recover && offered).then(TextCallFilter::new),
            ..StreamState::default()
        };
        if mode.stream {
            let mut events = send_sse(provider, http).await?;
            while let Some(data) = next_data(provider, &mut events).await {
                match data? {
                    SseData::Done => {
                        state.done = true;
                        break;
                    }
                    SseData::Json(_, chunk) => state.apply(provider, &chunk, on_text)?,
                }
            }
        } else {
            let response = send_checked(provider, http).await?;
            let value: Value = response.json().await.map_err(|e| ProviderError::Protocol {
                provider: provider.to_string(),
                message: format!("the response is not JSON: {e}"),
            })?;
            state.apply_whole(provider, &value, on_text)?;
        }
        state.finish(provider, request, self.max_tokens, on_text)
    }
}

/// Whether an error status says the server cannot take the `tools` field.
fn refuses_tools(error: &ProviderError) -> bool {
    let ProviderError::Http { status, body, .. } = error else {
        return false;
    };
    let body = body.to_ascii_lowercase();
    // llama.cpp's server says "tools param requires --jinja flag" with status 500.
    (400..=500).contains(status)
        && (body.contains("tools") || body.contains("jinja") || body.contains("function call"))
        && !body.contains("stream")
}

/// Whether an error status says the server cannot stream a request with tools.
fn refuses_streaming(error: &ProviderError) -> bool {
    let ProviderError::Http { status, body, .. } = error else {
        return false;
    };
    let body = body.to_ascii_lowercase();
    (400..=501).contains(status) && body.contains("stream")
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
        let mut mode = self.mode(request);
        // At most one fallback of each kind.
        for _ in 0..3 {
            match self.send(request, mode, on_text).await {
                Err(error)
                    if !request.tools.is_empty() && mode.stream && refuses_streaming(&error) =>
                {
                    tracing::info!(provider = self.name(), %error, "the server does not stream tool calls; asking without streaming");
                    self.no_stream_with_tools.store(true, Ordering::Relaxed);
                    mode.stream = false;
                }
                Err(error)
                    if !request.tools.is_empty()
                        && !mode.tools_in_prompt
                        && refuses_tools(&error) =>
                {
                    tracing::info!(provider = self.name(), %error, "the server refuses the tools field; describing the tools in the system prompt");
                    self.tools_in_prompt.store(true, Ordering::Relaxed);
                    mode.tools_in_prompt = true;
                }
                other => return other,
            }
        }
        self.send(request, mode, on_text).await
    }
}

/// Builds the chat completions body.
/// The request body as a JSON value (what [`wire_body`] sends).
fn request_body(request: &ModelRequest, kind: ProviderKind, max_tokens: u32, mode: Mode) -> Value {
    // Cannot fail: every map key is a string and every number finite.
    serde_json::to_value(wire_body(request, kind, max_tokens, mode, None)).unwrap_or(Value::Null)
}

/// The Chat Completions request body, borrowing the transcript: serialized straight onto the
/// wire, so no tree of the whole transcript is built and copied for each model step.
#[derive(Serialize)]
struct WireBody<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<Value>,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<WireTools<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
}

/// One Chat Completions message.
#[derive(Serialize)]
#[serde(untagged)]
enum WireMessage<'a> {
    /// A message serialized before (its wire JSON as sent).
    Raw(&'a RawValue),
    /// A message built as a value (content parts with images, the tools-in-prompt transcript).
    Value(Value),
    /// A system, user or assistant message of text.
    Text {
        role: &'static str,
        content: Cow<'a, str>,
    },
    /// An assistant message with tool calls (`""` rather than `null` as its content:
    /// llama.cpp's server and others refuse a null content).
    Calls {
        role: &'static str,
        content: &'a str,
        tool_calls: Vec<WireCall<'a>>,
    },
    /// A tool result.
    Result {
        role: &'static str,
        tool_call_id: &'a str,
        content: &'a str,
    },
}

/// Room in a body for what is not a message (the tools, the other fields), in bytes: the
/// serialized body grows at most once past it.
const BODY_SLACK: usize = 64 * 1024;

/// The messages and tools of a provider's last request with their wire JSON ([`wire_message`],
/// [`wire_tools`]).
#[derive(Debug, Default)]
struct Sent {
    messages: Vec<(ChatMessage, Box<RawValue>)>,
    /// The length of the messages' JSON, in bytes.
    message_bytes: usize,
    /// The tools and their JSON array; `None` before the first request with tools.
    tools: Option<(Vec<ToolDefinition>, Box<RawValue>)>,
}

impl Sent {
    /// Holds what `request` sends: the messages equal to the ones held in the same places keep
    /// their JSON, the rest (from the first that differs) are serialized; the tools keep
    /// theirs when every one is equal.
    fn update(
        &mut self,
        request: &ModelRequest,
        kind: ProviderKind,
    ) -> Result<(), serde_json::Error> {
        let same = self
            .messages
            .iter()
            .zip(&request.messages)
            .take_while(|((held, _), message)| held == *message)
            .count();
        for (_, json) in self.messages.drain(same..) {
            self.message_bytes -= json.get().len();
        }
        for message in &request.messages[same..] {
            let json = serde_json::value::to_raw_value(&wire_message(message))?;
            self.message_bytes += json.get().len();
            self.messages.push((message.clone(), json));
        }
        let kept = matches!(&self.tools, Some((held, _)) if *held == request.tools);
        if !kept && !request.tools.is_empty() {
            let json = serde_json::value::to_raw_value(&wire_tools(&request.tools, kind))?;
            self.tools = Some((request.tools.clone(), json));
        }
        Ok(())
    }

    /// The length of the JSON held, in bytes.
    fn bytes(&self) -> usize {
        self.message_bytes + self.tools.as_ref().map_or(0, |(_, json)| json.get().len())
    }

    /// The tools' JSON array, when it is `tools`' ([`Sent::update`] with their request made
    /// it so; the names are checked again).
    fn tools_json(&self, tools: &[ToolDefinition]) -> Option<&RawValue> {
        match &self.tools {
            Some((held, json))
                if held.len() == tools.len()
                    && held.iter().zip(tools).all(|(a, b)| a.name == b.name) =>
            {
                Some(json)
            }
            _ => None,
        }
    }
}

/// The tools offered to the model.
#[derive(Serialize)]
#[serde(untagged)]
enum WireTools<'a> {
    /// Serialized before (the JSON array as sent).
    Raw(&'a RawValue),
    List(Vec<WireTool<'a>>),
}

/// `tools` as Chat Completions functions, with schemas normalized for `kind`.
fn wire_tools(tools: &[ToolDefinition], kind: ProviderKind) -> Vec<WireTool<'_>> {
    tools
        .iter()
        .map(|tool| WireTool {
            kind: "function",
            function: WireToolFunction {
                name: &tool.name,
                description: &tool.description,
                parameters: normalized_tool_schema(&tool.name, &tool.parameters, kind),
            },
        })
        .collect()
}

/// A tool offered to the model: a function with its provider-normalized JSON Schema.
#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireToolFunction<'a>,
}

#[derive(Serialize)]
struct WireToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(serialize_with = "shared_value")]
    parameters: Arc<Value>,
}

fn shared_value<S: serde::Serializer>(value: &Arc<Value>, to: S) -> Result<S::Ok, S::Error> {
    value.as_ref().serialize(to)
}

/// A tool call of an assistant message.
#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

/// A tool call's function: its name and arguments (a JSON string holding a valid object, even
/// when the model's text was malformed: model-io 1).
#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    arguments: String,
}

/// The body of `request`; `sent`: the wire JSON of its messages and tools, when serialized
/// before ([`Sent`]).
fn wire_body<'a>(
    request: &'a ModelRequest,
    kind: ProviderKind,
    max_tokens: u32,
    mode: Mode,
    sent: Option<&'a Sent>,
) -> WireBody<'a> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    let tools_in_prompt = mode.tools_in_prompt && !request.tools.is_empty();
    let text_tools: Vec<suzent_llama::TemplateTool> = if tools_in_prompt {
        request
            .tools
            .iter()
            .map(|t| suzent_llama::TemplateTool {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: normalize_tool_schema(&t.name, &t.parameters, kind),
            })
            .collect()
    } else {
        Vec::new()
    };
    let system: Cow<'_, str> = if tools_in_prompt {
        Cow::Owned(suzent_llama::with_tool_instructions(
            &request.system,
            &text_tools,
        ))
    } else {
        Cow::Borrowed(&request.system)
    };
    if !system.is_empty() {
        messages.push(WireMessage::Text {
            role: "system",
            content: system,
        });
    }
    if tools_in_prompt {
        messages.extend(
            suzent_llama::plain_messages(&request.messages)
                .into_iter()
                .map(WireMessage::Value),
        );
    } else if let Some(sent) = sent {
        messages.extend(sent.messages.iter().map(|(_, json)| WireMessage::Raw(json)));
    } else {
        messages.extend(request.messages.iter().map(wire_message));
    }
    let local = kind == ProviderKind::Local;
    let offered = !request.tools.is_empty() && !tools_in_prompt;
    WireBody {
        model: &request.model,
        messages,
        stream: mode.stream,
        stream_options: mode.stream.then(|| json!({"include_usage": true})),
        max_tokens,
        // A local model through llama.cpp's server decodes as the in-process engine does
        // (greedy, seed 0), so one model answers alike either way; servers default to sampling.
        temperature: local.then_some(0.0),
        seed: local.then_some(0),
        // The reply must be the generic object the system prompt describes; servers that
        // support structured output (llama.cpp, vLLM, LM Studio, Ollama) enforce it.
        response_format: tools_in_prompt.then(|| {
            json!({
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": suzent_llama::generic_reply_schema(&text_tools)},
            })
        }),
        tools: offered.then(|| {
            match sent.and_then(|sent| sent.tools_json(&request.tools)) {
                Some(json) => WireTools::Raw(json),
                None => WireTools::List(wire_tools(&request.tools, kind)),
            }
        }),
        // Explicit: some local servers only put tools in the prompt when they see a choice.
        tool_choice: offered.then_some("auto"),
    }
}

fn wire_message(message: &ChatMessage) -> WireMessage<'_> {
    match message {
        ChatMessage::User { text, attachments } => {
            let images = message.inline_images();
            let content = if attachments.is_empty() {
                Cow::Borrowed(text.as_str())
            } else {
                Cow::Owned(message.user_text_for_model().unwrap_or_default())
            };
            if images.is_empty() {
                return WireMessage::Text {
                    role: "user",
                    content,
                };
            }
            // Chat Completions content parts: text, then each image as a data URL.
            let mut parts = vec![json!({"type": "text", "text": content})];
            for (mime, data) in images {
                parts.push(json!({
                    "type": "image_url",
                    "image_url": {"url": format!("data:{mime};base64,{data}")}
                }));
            }
            WireMessage::Value(json!({"role": "user", "content": parts}))
        }
        ChatMessage::Assistant { text, tool_calls } if tool_calls.is_empty() => WireMessage::Text {
            role: "assistant",
            content: Cow::Borrowed(text),
        },
        ChatMessage::Assistant { text, tool_calls } => WireMessage::Calls {
            role: "assistant",
            content: text,
            tool_calls: tool_calls
                .iter()
                .map(|call| WireCall {
                    id: &call.id,
                    kind: "function",
                    function: WireFunction {
                        name: &call.name,
                        arguments: call.arguments_for_history().to_string(),
                    },
                })
                .collect(),
        },
        ChatMessage::Tool {
            tool_call_id,
            content,
            ..
        } => WireMessage::Result {
            role: "tool",
            tool_call_id,
            content,
        },
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

    /// The calls in order; a call whose id was empty or missing gets a unique generated one
    /// (public case R2-L07), which the transcript keeps and the next request repeats.
    pub(crate) fn finish(self) -> Vec<ToolCall> {
        self.calls
            .into_iter()
            .map(|call| ToolCall {
                id: if call.id.is_empty() {
                    generated_call_id()
                } else {
                    call.id
                },
                name: call.name,
                arguments: call.arguments,
            })
            .collect()
    }
}

/// Arguments as the wire carries them: a JSON string, or (some local servers) an object.
fn arguments_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(text) => Some(text.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

#[derive(Default)]
struct StreamState {
    text: String,
    calls: ToolCallAssembler,
    finish_reason: Option<String>,
    completion_tokens: Option<u64>,
    /// `usage.prompt_tokens` of the usage chunk (or the whole response).
    prompt_tokens: Option<u64>,
    chunks: usize,
    done: bool,
    /// Holds back tool-call markup while streaming (text-call recovery on, tools offered).
    filter: Option<TextCallFilter>,
}

impl StreamState {
    fn show(&mut self, text: &str, on_text: &TextSink<'_>) {
        self.text.push_str(text);
        let shown = match &mut self.filter {
            Some(filter) => filter.push(text),
            None => text.to_string(),
        };
        if !shown.is_empty() {
            on_text(&shown);
        }
    }

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
        if let Some(tokens) = chunk
            .get("usage")
            .and_then(|u| u.get("completion_tokens"))
            .and_then(Value::as_u64)
        {
            self.completion_tokens = Some(tokens);
        }
        if let Some(tokens) = chunk
            .get("usage")
            .and_then(|u| u.get("prompt_tokens"))
            .and_then(Value::as_u64)
        {
            self.prompt_tokens = Some(tokens);
        }
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
                self.show(text, on_text);
            }
            if let Some(fragments) = delta.get("tool_calls").and_then(Value::as_array) {
                for fragment in fragments {
                    let function = fragment.get("function");
                    let arguments = arguments_text(function.and_then(|f| f.get("arguments")));
                    self.calls.fragment(
                        fragment.get("index").and_then(Value::as_u64),
                        fragment.get("id").and_then(Value::as_str),
                        function.and_then(|f| f.get("name")).and_then(Value::as_str),
                        arguments.as_deref(),
                    );
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        Ok(())
    }

    /// A whole (non-streamed) response.
    fn apply_whole(
        &mut self,
        provider: &str,
        value: &Value,
        on_text: &TextSink<'_>,
    ) -> Result<(), ProviderError> {
        if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
            return Err(stream_error(provider, error));
        }
        self.chunks += 1;
        self.done = true;
        self.completion_tokens = value
            .get("usage")
            .and_then(|u| u.get("completion_tokens"))
            .and_then(Value::as_u64);
        self.prompt_tokens = value
            .get("usage")
            .and_then(|u| u.get("prompt_tokens"))
            .and_then(Value::as_u64);
        let Some(choice) = value
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Err(ProviderError::Protocol {
                provider: provider.to_string(),
                message: "the response has no choices".into(),
            });
        };
        let message = choice.get("message").cloned().unwrap_or_default();
        if let Some(text) = message.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            self.show(text, on_text);
        }
        if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
            for (index, call) in calls.iter().enumerate() {
                let function = call.get("function");
                let arguments = arguments_text(function.and_then(|f| f.get("arguments")));
                self.calls.fragment(
                    Some(index as u64),
                    call.get("id").and_then(Value::as_str),
                    function.and_then(|f| f.get("name")).and_then(Value::as_str),
                    Some(arguments.as_deref().unwrap_or("")),
                );
            }
        }
        self.finish_reason = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string);
        Ok(())
    }

    /// Ends the reply; `max_tokens` is the limit the request was sent with.
    fn finish(
        mut self,
        provider: &str,
        request: &ModelRequest,
        max_tokens: u32,
        on_text: &TextSink<'_>,
    ) -> Result<ModelResponse, ProviderError> {
        if self.chunks == 0 && !self.done {
            return Err(ProviderError::Protocol {
                provider: provider.to_string(),
                message: "the stream ended before any data".into(),
            });
        }
        let mut text = std::mem::take(&mut self.text);
        let mut tool_calls = std::mem::take(&mut self.calls).finish();
        if let Some(filter) = self.filter.take() {
            let offered: Vec<OfferedTool<'_>> = request
                .tools
                .iter()
                .map(|t| OfferedTool {
                    name: &t.name,
                    parameters: &t.parameters,
                })
                .collect();
            // Structured calls win; only a reply without them is read for written calls. A
            // written call the token limit cut short is neither shown nor run.
            let at_limit = self.finish_reason.as_deref() == Some("length");
            let (recovered, tail) = if !tool_calls.is_empty() {
                filter.finish(&[])
            } else if at_limit {
                match filter.finish_at_limit(&offered) {
                    Some(end) => end,
                    None => {
                        tracing::warn!(
                            provider,
                            max_tokens,
                            "the token limit cut a written tool call short"
                        );
                        tracing::debug!(provider, raw = %truncate_text(&text, MAX_ERROR_BODY, false), "the cut-off call");
                        return Err(ProviderError::ToolCallCutOff {
                            provider: provider.to_string(),
                            max_tokens,
                        });
                    }
                }
            } else {
                filter.finish(&offered)
            };
            if !tail.is_empty() {
                on_text(&tail);
            }
            if let Some(reply) = recovered {
                tracing::debug!(provider, forms = ?reply.forms(), raw = %text, "tool calls read from the reply's text");
                text = reply.text;
                tool_calls = reply
                    .calls
                    .into_iter()
                    .map(|call| ToolCall {
                        id: generated_call_id(),
                        name: call.name,
                        arguments: call.arguments,
                    })
                    .collect();
            }
        }
        let has_calls = !tool_calls.is_empty();
        if !has_calls && text.trim().is_empty() && self.finish_reason.as_deref() != Some("length") {
            let tokens = self.completion_tokens.unwrap_or(0);
            tracing::warn!(
                provider,
                completion_tokens = tokens,
                "empty completion ({tokens} tokens) — possible tool-call parse failure"
            );
            tracing::debug!(provider, raw = %truncate_text(&text, MAX_ERROR_BODY, false), finish_reason = ?self.finish_reason, "the empty completion");
            return Err(ProviderError::EmptyCompletion {
                provider: provider.to_string(),
                completion_tokens: tokens,
            });
        }
        let stop_reason = match self.finish_reason.as_deref() {
            _ if has_calls => StopReason::ToolUse,
            Some("stop") => StopReason::EndTurn,
            Some("tool_calls") | Some("function_call") => StopReason::ToolUse,
            Some("length") => StopReason::MaxTokens,
            Some(other) => StopReason::Other(other.to_string()),
            None => StopReason::EndTurn,
        };
        let usage = (self.prompt_tokens.is_some() || self.completion_tokens.is_some()).then(|| {
            crate::Usage {
                input_tokens: self.prompt_tokens.unwrap_or(0),
                output_tokens: self.completion_tokens.unwrap_or(0),
            }
        });
        Ok(ModelResponse {
            text,
            tool_calls,
            stop_reason,
            usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolDefinition;

    /// The body as sent with the messages and tools kept from the last request, and as
    /// serialized whole: the same bytes, request after request.
    #[test]
    fn a_body_from_the_last_request_s_json_is_the_body_serialized_whole() {
        let provider = OpenAiProvider::new(
            reqwest::Client::new(),
            ProviderKind::OpenAi,
            "http://127.0.0.1:1/v1",
            None,
        );
        let mode = Mode {
            stream: true,
            tools_in_prompt: false,
        };
        let tool = |name: &str, kind: &str| ToolDefinition {
            name: name.into(),
            description: format!("{name} \"quoted\"\n"),
            parameters: json!({"type": "object", "properties": {"path": {"type": kind}}}),
        };
        let call = |id: &str| ChatMessage::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: "read_file".into(),
                arguments: r#"{"path":"a\tb"}"#.into(),
            }],
        };
        let result = |id: &str, content: &str| ChatMessage::Tool {
            tool_call_id: id.into(),
            tool_name: "read_file".into(),
            content: content.into(),
            is_error: false,
        };
        let mut request = ModelRequest {
            model: "gpt-test".into(),
            system: "You are Suzent.\n\tIndented é".into(),
            messages: vec![ChatMessage::user("read a")],
            tools: vec![tool("read_file", "string")],
        };
        let whole = |request: &ModelRequest| {
            serde_json::to_vec(&wire_body(request, ProviderKind::OpenAi, 64, mode, None)).unwrap()
        };
        let provider = provider.with_max_tokens(64);
        let check = |request: &ModelRequest, what: &str| {
            let sent = provider.body_bytes(request, mode).unwrap();
            assert_eq!(
                String::from_utf8(sent).unwrap(),
                String::from_utf8(whole(request)).unwrap(),
                "{what}"
            );
        };
        check(&request, "the first request");
        // Steps add messages at the end.
        for i in 0..3 {
            request.messages.push(call(&format!("call_{i}")));
            request.messages.push(result(
                &format!("call_{i}"),
                &"line\twith \"quotes\"\n".repeat(i + 1),
            ));
            check(&request, "a step added");
        }
        // A message in the middle changes (a compaction cut a tool output).
        request.messages[2] = result("call_0", "[output cut]");
        check(&request, "a message changed in the middle");
        // Messages removed from the end, then another tool set and another schema.
        request.messages.truncate(3);
        check(&request, "messages removed");
        request.tools.push(tool("grep_search", "string"));
        check(&request, "a tool added");
        request.tools[1] = tool("grep_search", "integer");
        check(&request, "a schema changed");
        request.tools.clear();
        check(&request, "no tools");
        request.messages.clear();
        check(&request, "no messages");
    }

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
    fn a_whole_response_with_object_arguments_and_no_id_gives_a_call_with_a_generated_id() {
        let mut state = StreamState::default();
        let shown = std::sync::Mutex::new(String::new());
        let on_text = |t: &str| shown.lock().unwrap().push_str(t);
        let value = json!({
            "choices": [{"message": {"role": "assistant", "content": "Reading.", "tool_calls": [
                {"id": "", "type": "function", "function": {"name": "read_file", "arguments": {"path": "a"}}}
            ]}, "finish_reason": "tool_calls"}],
            "usage": {"completion_tokens": 12}
        });
        state.apply_whole("local", &value, &on_text).unwrap();
        let request = ModelRequest {
            model: "m".into(),
            system: String::new(),
            messages: Vec::new(),
            tools: Vec::new(),
        };
        let response = state.finish("local", &request, 64, &on_text).unwrap();
        assert_eq!(response.text, "Reading.");
        assert_eq!(response.tool_calls[0].arguments, r#"{"path":"a"}"#);
        assert!(response.tool_calls[0].id.starts_with("call_"));
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(shown.lock().unwrap().as_str(), "Reading.");
    }

    /// Streams `pieces` of content ending with `finish_reason`, with text-call recovery on and
    /// `read_file` offered: the result and the text shown.
    fn stream_content(
        pieces: &[&str],
        finish_reason: &str,
    ) -> (Result<ModelResponse, ProviderError>, String) {
        let mut state = StreamState {
            filter: Some(TextCallFilter::new()),
            ..StreamState::default()
        };
        let shown = std::sync::Mutex::new(String::new());
        let on_text = |t: &str| shown.lock().unwrap().push_str(t);
        for piece in pieces {
            let chunk = json!({"choices": [{"index": 0, "delta": {"content": piece}}]});
            state.apply("llama.cpp", &chunk, &on_text).unwrap();
        }
        let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason}]});
        state.apply("llama.cpp", &end, &on_text).unwrap();
        state.done = true;
        let request = ModelRequest {
            model: "m".into(),
            system: String::new(),
            messages: Vec::new(),
            tools: vec![ToolDefinition {
                name: "read_file".into(),
                description: "Reads".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            }],
        };
        let result = state.finish("llama.cpp", &request, 32, &on_text);
        let shown = shown.lock().unwrap().clone();
        (result, shown)
    }

    #[test]
    fn a_written_call_cut_off_by_the_token_limit_is_an_error_and_never_shown() {
        let (result, shown) = stream_content(
            &[
                "Let me look.\n<tool",
                "_call>\n{\"name\": \"read_file\", \"argu",
            ],
            "length",
        );
        assert_eq!(
            result.unwrap_err(),
            ProviderError::ToolCallCutOff {
                provider: "llama.cpp".into(),
                max_tokens: 32
            }
        );
        assert_eq!(shown, "Let me look.\n");
    }

    #[test]
    fn a_written_call_complete_at_the_token_limit_still_runs() {
        let (result, shown) = stream_content(
            &[
                "<tool_call>{\"name\": \"read_file\", ",
                "\"arguments\": {\"path\": \"a\"}}</tool_call>",
            ],
            "length",
        );
        let response = result.unwrap();
        assert_eq!(response.tool_calls.len(), 1);
        assert_eq!(response.tool_calls[0].arguments, r#"{"path":"a"}"#);
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(shown, "");
    }

    #[test]
    fn prose_cut_off_by_the_token_limit_is_shown_as_it_came() {
        let (result, shown) = stream_content(&["The answer is forty", " and"], "length");
        let response = result.unwrap();
        assert_eq!(response.text, "The answer is forty and");
        assert_eq!(response.stop_reason, StopReason::MaxTokens);
        assert_eq!(shown, "The answer is forty and");
    }

    #[test]
    fn refusals_to_stream_and_to_take_tools_are_told_apart() {
        let http = |status: u16, body: &str| ProviderError::Http {
            provider: "local".into(),
            status,
            body: body.into(),
            retry_after_ms: None,
        };
        assert!(refuses_tools(&http(
            500,
            "tools param requires --jinja flag"
        )));
        assert!(refuses_tools(&http(
            400,
            "this model does not support tools"
        )));
        assert!(!refuses_tools(&http(
            400,
            "streaming is not supported with tools"
        )));
        assert!(refuses_streaming(&http(
            400,
            "streaming is not supported with tools"
        )));
        assert!(!refuses_streaming(&http(401, "invalid key")));
        assert!(!refuses_tools(&http(401, "invalid key")));
    }

    #[test]
    fn a_local_server_is_asked_to_decode_greedily_and_hosted_providers_keep_their_defaults() {
        let request = ModelRequest {
            model: "m".into(),
            system: String::new(),
            messages: vec![ChatMessage::User {
                text: "hi".into(),
                attachments: Vec::new(),
            }],
            tools: vec![],
        };
        let mode = Mode {
            stream: true,
            tools_in_prompt: false,
        };
        let local = request_body(&request, ProviderKind::Local, 64, mode);
        assert_eq!(
            (&local["temperature"], &local["seed"]),
            (&json!(0.0), &json!(0))
        );
        for kind in [
            ProviderKind::OpenAi,
            ProviderKind::OpenAiCompatible,
            ProviderKind::Ollama,
        ] {
            let body = request_body(&request, kind, 64, mode);
            assert_eq!(
                (body.get("temperature"), body.get("seed")),
                (None, None),
                "{kind:?}"
            );
        }
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
                ChatMessage::User {
                    text: "hi".into(),
                    attachments: Vec::new(),
                },
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
        let body = request_body(
            &request,
            ProviderKind::OpenAi,
            4096,
            Mode {
                stream: true,
                tools_in_prompt: false,
            },
        );
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "sys"})
        );
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            json!("{}")
        );
        assert_eq!(body["messages"][2]["content"], json!(""));
        assert_eq!(
            body["messages"][3],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "bad json"})
        );
        assert_eq!(body["tools"][0]["function"]["name"], json!("read_file"));
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
    }
}
