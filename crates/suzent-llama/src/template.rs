//! Chat templates: the Jinja template stored in a GGUF file (`tokenizer.chat_template`), rendered
//! with minijinja the way Hugging Face's `apply_chat_template` renders it.
//!
//! Templates written for Python Jinja get what they expect: Python string methods
//! (`minijinja-contrib`'s pycompat), `raise_exception`, `strftime_now`, and a `tojson` filter that
//! writes like Python's `json.dumps` (`", "` and `": "`, no HTML escaping). Tool calls in the
//! history reach the template as `{"id", "type": "function", "function": {"name", "arguments"}}`
//! with the arguments as an object, tool results as `{"role": "tool", "content", "tool_call_id",
//! "name"}`.
//!
//! A template that knows no tools (SmolLM2's ChatML, Gemma, Phi-3.5) gets the tools described in
//! the system prompt with llama.cpp's generic reply form — one JSON object, `{"tool_call":
//! {"name", "arguments"}}` or `{"response": "..."}`, which a grammar then enforces — earlier
//! calls and answers written back in that form and results as `<tool_response>` user messages. A template that rejects a system message (Gemma) gets it at
//! the top of the first user message.

use minijinja::{Environment, Error, ErrorKind, Value as JinjaValue};
use serde::Serialize;
use serde_json::{Value, json};
use suzent_core::ChatMessage;

/// How a model family writes its tool calls (read from its chat template).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFormat {
    /// `<tool_call>{"name", "arguments"}</tool_call>` (Qwen 2.5, Hermes).
    Hermes,
    /// One JSON object, `{"tool_call": {...}}` or `{"response": "..."}` (llama.cpp's generic
    /// form, for templates that know no tools: Suzent describes it in the system prompt and the
    /// grammar enforces it from the first token).
    Generic,
    /// Qwen3-Coder's `<tool_call><function=NAME><parameter=P>...` XML.
    QwenXml,
    /// `[TOOL_CALLS][{"name", "arguments", "id"}]` (Mistral Nemo, Ministral 2410).
    MistralJson,
    /// `[TOOL_CALLS]NAME[ARGS]{...}` (Mistral Small 3.2, Devstral, Ministral 3).
    MistralArgs,
    /// `{"name", "parameters"}` as the whole reply, `<|python_tag|>` for built-ins (Llama 3.x).
    Llama3,
}

/// A tool as the template sees it (OpenAI function format).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TemplateTool {
    /// Runtime name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: Value,
}

/// A template failure: the template does not parse, or it raised an exception for this
/// conversation.
#[derive(Debug, thiserror::Error)]
#[error("chat template error: {0}")]
pub struct TemplateError(String);

/// A chat template ready to render.
#[derive(Debug)]
pub struct ChatTemplate {
    source: String,
    bos_token: String,
    eos_token: String,
    native_tools: bool,
    format: ToolFormat,
}

/// Name under which the template is stored in the environment.
const NAME: &str = "chat";

impl ChatTemplate {
    /// Parses `source`; `bos_token`/`eos_token` are the model's special token texts (`<s>`,
    /// `<|im_end|>`, ...). Errors when the template does not compile.
    pub fn new(
        source: &str,
        bos_token: &str,
        eos_token: &str,
    ) -> Result<ChatTemplate, TemplateError> {
        // Compile once to report syntax errors now rather than on the first turn.
        environment(source).map_err(|e| TemplateError(describe(&e)))?;
        let native_tools = source.contains("tools") && source.contains("tool_call");
        Ok(ChatTemplate {
            source: source.to_string(),
            bos_token: bos_token.to_string(),
            eos_token: eos_token.to_string(),
            native_tools,
            format: detect_format(source, native_tools),
        })
    }

    /// How this model writes tool calls.
    pub fn tool_format(&self) -> ToolFormat {
        self.format
    }

    /// Whether the template renders tools itself (otherwise Suzent describes them).
    pub fn has_native_tools(&self) -> bool {
        self.native_tools
    }

    /// Renders the prompt for the next assistant message.
    pub fn render(
        &self,
        system: &str,
        messages: &[ChatMessage],
        tools: &[TemplateTool],
    ) -> Result<String, TemplateError> {
        let env = environment(&self.source).map_err(|e| TemplateError(describe(&e)))?;
        let template = env
            .get_template(NAME)
            .map_err(|e| TemplateError(describe(&e)))?;
        let native = self.native_tools && !tools.is_empty();
        let system = if tools.is_empty() || native {
            system.to_string()
        } else {
            with_tool_instructions(system, tools)
        };
        let mut conversation = if native {
            native_messages(messages, self.format)
        } else {
            plain_messages(messages)
        };
        let tools_value: Option<Vec<Value>> = native.then(|| {
            tools
                .iter()
                .map(|t| json!({"type": "function", "function": t}))
                .collect()
        });
        let render = |conversation: &[Value]| {
            template.render(minijinja::context! {
                messages => conversation,
                tools => tools_value.clone(),
                add_generation_prompt => true,
                bos_token => self.bos_token.clone(),
                eos_token => self.eos_token.clone(),
            })
        };
        let mut with_system = conversation.clone();
        if !system.is_empty() {
            with_system.insert(0, json!({"role": "system", "content": system}));
        }
        match render(&with_system) {
            Ok(prompt) => Ok(prompt),
            Err(first) if !system.is_empty() => {
                // Templates without a system role (Gemma) get it at the top of the first user
                // message.
                match conversation
                    .iter_mut()
                    .find(|m| m["role"] == "user")
                    .and_then(|m| m.get_mut("content"))
                {
                    Some(Value::String(content)) => *content = format!("{system}\n\n{content}"),
                    _ => conversation.insert(0, json!({"role": "user", "content": system})),
                }
                render(&conversation).map_err(|_| TemplateError(describe(&first)))
            }
            Err(e) => Err(TemplateError(describe(&e))),
        }
    }
}

fn describe(error: &Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

fn detect_format(source: &str, native_tools: bool) -> ToolFormat {
    if !native_tools {
        return ToolFormat::Generic;
    }
    if source.contains("[TOOL_CALLS]") {
        if source.contains("[ARGS]") {
            ToolFormat::MistralArgs
        } else {
            ToolFormat::MistralJson
        }
    } else if source.contains("<function=") {
        ToolFormat::QwenXml
    } else if source.contains("<tool_call>") {
        ToolFormat::Hermes
    } else if source.contains("<|python_tag|>") || source.contains("ipython") {
        ToolFormat::Llama3
    } else {
        ToolFormat::Hermes
    }
}

/// The environment with the Python-compatible helpers HF templates use.
fn environment(source: &str) -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_function(
        "raise_exception",
        |message: String| -> Result<String, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, message))
        },
    );
    env.add_function("strftime_now", |format: String| -> String {
        chrono::Local::now().format(&format).to_string()
    });
    env.add_filter("tojson", tojson);
    env.add_template_owned(NAME, source.to_string())?;
    Ok(env)
}

/// Python's `json.dumps(value, ensure_ascii=False, indent=indent)`.
fn tojson(value: JinjaValue, kwargs: minijinja::value::Kwargs) -> Result<String, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    kwargs.assert_all_used()?;
    let json = serde_json::to_value(&value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    Ok(python_json(&json, indent))
}

/// JSON text the way Python writes it: `", "` between items, `": "` after keys, or the
/// indented form.
pub(crate) fn python_json(value: &Value, indent: Option<usize>) -> String {
    let mut out = String::new();
    write_python_json(value, indent, 0, &mut out);
    out
}

fn write_python_json(value: &Value, indent: Option<usize>, depth: usize, out: &mut String) {
    let newline = |out: &mut String, depth: usize| {
        if let Some(width) = indent {
            out.push('\n');
            out.push_str(&" ".repeat(width * depth));
        }
    };
    let separator = if indent.is_some() { "," } else { ", " };
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(separator);
                }
                newline(out, depth + 1);
                write_python_json(item, indent, depth + 1, out);
            }
            newline(out, depth);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(separator);
                }
                newline(out, depth + 1);
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                write_python_json(item, indent, depth + 1, out);
            }
            newline(out, depth);
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A tool call id a strict template accepts: Mistral's wants exactly 9 alphanumerics, so ids
/// are mapped onto that shape (the same id always maps to the same text).
fn template_call_id(id: &str, format: ToolFormat) -> String {
    match format {
        ToolFormat::MistralJson | ToolFormat::MistralArgs => {
            if id.len() == 9 && id.chars().all(|c| c.is_ascii_alphanumeric()) {
                return id.to_string();
            }
            // FNV-1a over the id, written in base 36.
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
            for byte in id.bytes() {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
            const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
            (0..9)
                .map(|_| {
                    let digit = DIGITS[(hash % 36) as usize] as char;
                    hash /= 36;
                    digit
                })
                .collect()
        }
        _ => id.to_string(),
    }
}

/// The transcript in the OpenAI shape HF templates read; consecutive user messages merged
/// (templates that check alternation would refuse them).
fn native_messages(messages: &[ChatMessage], format: ToolFormat) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            ChatMessage::User { .. } => push_merged(
                &mut out,
                "user",
                &message.user_text_for_model().unwrap_or_default(),
            ),
            ChatMessage::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                push_merged(&mut out, "assistant", text)
            }
            ChatMessage::Assistant { text, tool_calls } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": template_call_id(&call.id, format),
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": call.arguments_for_history(),
                            }
                        })
                    })
                    .collect();
                out.push(json!({"role": "assistant", "content": text, "tool_calls": calls}));
            }
            ChatMessage::Tool {
                tool_call_id,
                tool_name,
                content,
                ..
            } => out.push(json!({
                "role": "tool",
                "content": content,
                "tool_call_id": template_call_id(tool_call_id, format),
                "name": tool_name,
            })),
        }
    }
    out
}

/// The transcript as plain user/assistant turns, for templates (and servers) that know no
/// tools: calls written as `<tool_call>` text in the assistant's content, results as
/// `<tool_response>` user messages, consecutive messages of one role merged. Each item is
/// `{"role", "content"}` (OpenAI chat message shape).
pub fn plain_messages(messages: &[ChatMessage]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            ChatMessage::User { .. } => push_merged(
                &mut out,
                "user",
                &message.user_text_for_model().unwrap_or_default(),
            ),
            ChatMessage::Assistant { text, tool_calls } => {
                let mut content = String::new();
                if !text.trim().is_empty() {
                    content.push_str(&python_json(&json!({"response": text.trim()}), None));
                }
                for call in tool_calls {
                    if !content.is_empty() {
                        content.push('\n');
                    }
                    let body = json!({"tool_call": {"name": call.name, "arguments": call.arguments_for_history()}});
                    content.push_str(&python_json(&body, None));
                }
                push_merged(&mut out, "assistant", &content);
            }
            ChatMessage::Tool { content, .. } => push_merged(
                &mut out,
                "user",
                &format!("<tool_response>\n{content}\n</tool_response>"),
            ),
        }
    }
    // Small models otherwise call the same tool again and again: after fresh results, say
    // what to do with them.
    if matches!(messages.last(), Some(ChatMessage::Tool { .. }))
        && let Some(Value::String(content)) = out.last_mut().and_then(|m| m.get_mut("content"))
    {
        content.push_str(RESULT_NUDGE);
    }
    out
}

/// Appended after the newest tool results for templates that know no tools.
pub const RESULT_NUDGE: &str = "\n\nUse this result to answer my question.";

fn push_merged(out: &mut Vec<Value>, role: &str, text: &str) {
    if let Some(last) = out.last_mut()
        && last["role"] == role
        && last.get("tool_calls").is_none()
        && let Some(Value::String(content)) = last.get_mut("content")
    {
        content.push_str("\n\n");
        content.push_str(text);
        return;
    }
    out.push(json!({"role": role, "content": text}));
}

/// The system prompt with the tools and the generic reply form described: one JSON object,
/// `{"tool_call": {"name", "arguments"}}` or `{"response": "..."}` (as llama.cpp does for
/// templates without tools), for templates and servers that know no tools.
pub fn with_tool_instructions(system: &str, tools: &[TemplateTool]) -> String {
    let mut out = String::new();
    if !system.is_empty() {
        out.push_str(system);
        out.push_str("\n\n");
    }
    out.push_str("# Tools\n\nYou can call these functions:\n<tools>");
    for tool in tools {
        out.push('\n');
        out.push_str(&python_json(
            &json!({"type": "function", "function": tool}),
            None,
        ));
    }
    out.push_str(
        "\n</tools>\n\nReply with one JSON object and nothing else: either {\"tool_call\": {\"name\": <function-name>, \"arguments\": <args-json-object>}} to call a function, or {\"response\": <your answer>} to answer the user.\n",
    );
    out.push_str(
        "A function's result comes back within <tool_response></tool_response>; answer from it.",
    );
    out
}

/// The JSON Schema of the generic reply: `{"tool_call": CALL}` for one of `tools` or
/// `{"response": TEXT}`.
pub fn generic_reply_schema(tools: &[TemplateTool]) -> Value {
    let calls: Vec<Value> = tools
        .iter()
        .map(|tool| {
            json!({
                "type": "object",
                "properties": {"name": {"const": tool.name}, "arguments": tool.parameters},
                "required": ["name", "arguments"],
                "additionalProperties": false,
            })
        })
        .collect();
    json!({
        "anyOf": [
            {
                "type": "object",
                "properties": {"tool_call": {"anyOf": calls}},
                "required": ["tool_call"],
                "additionalProperties": false,
            },
            {
                "type": "object",
                "properties": {"response": {"type": "string"}},
                "required": ["response"],
                "additionalProperties": false,
            }
        ]
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const CHATML: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

    #[test]
    fn python_json_matches_json_dumps() {
        let value = json!({"a": [1, "x<y>"], "b": {}});
        assert_eq!(python_json(&value, None), r#"{"a": [1, "x<y>"], "b": {}}"#);
        assert_eq!(
            python_json(&json!({"a": [1]}), Some(2)),
            "{\n  \"a\": [\n    1\n  ]\n}"
        );
    }

    #[test]
    fn a_template_without_tools_gets_them_in_the_system_prompt_and_calls_as_text() {
        let template = ChatTemplate::new(CHATML, "", "<|im_end|>").unwrap();
        let prompt = template
            .render(
                "Be brief.",
                &[
                    ChatMessage::User {
                        text: "Read a.txt".into(),
                        attachments: Vec::new(),
                    },
                    ChatMessage::Assistant {
                        text: String::new(),
                        tool_calls: vec![suzent_core::ToolCall {
                            id: "c1".into(),
                            name: "read_file".into(),
                            arguments: r#"{"path":"a.txt"}"#.into(),
                        }],
                    },
                    ChatMessage::Tool {
                        tool_call_id: "c1".into(),
                        tool_name: "read_file".into(),
                        content: "hello".into(),
                        is_error: false,
                    },
                ],
                &[TemplateTool {
                    name: "read_file".into(),
                    description: "Reads a file.".into(),
                    parameters: json!({"type": "object"}),
                }],
            )
            .unwrap();
        assert!(
            prompt.starts_with("<|im_start|>system\nBe brief.\n\n# Tools"),
            "{prompt}"
        );
        assert!(prompt.contains(r#"{"type": "function", "function": {"name": "read_file", "description": "Reads a file.", "parameters": {"type": "object"}}}"#), "{prompt}");
        assert!(prompt.contains("<|im_start|>assistant\n{\"tool_call\": {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}}<|im_end|>\n<|im_start|>user\n<tool_response>\nhello\n</tool_response>"), "{prompt}");
        assert!(
            prompt.ends_with(&format!(
                "{RESULT_NUDGE}<|im_end|>\n<|im_start|>assistant\n"
            )),
            "{prompt}"
        );
        assert_eq!(template.tool_format(), ToolFormat::Generic);
    }

    #[test]
    fn mistral_ids_become_nine_alphanumerics_consistently() {
        let a = template_call_id("call_0", ToolFormat::MistralJson);
        assert_eq!(a.len(), 9);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(a, template_call_id("call_0", ToolFormat::MistralJson));
        assert_ne!(a, template_call_id("call_1", ToolFormat::MistralJson));
        assert_eq!(
            template_call_id("abcdefghi", ToolFormat::MistralArgs),
            "abcdefghi"
        );
    }

    #[test]
    fn raise_exception_is_a_template_error_naming_the_message() {
        let template =
            ChatTemplate::new("{{ raise_exception('roles must alternate') }}", "", "").unwrap();
        let error = template.render("", &[], &[]).unwrap_err();
        assert!(
            error.to_string().contains("roles must alternate"),
            "{error}"
        );
    }

    #[test]
    fn a_broken_template_is_refused_when_loaded() {
        assert!(ChatTemplate::new("{% for %}", "", "").is_err());
    }
}
