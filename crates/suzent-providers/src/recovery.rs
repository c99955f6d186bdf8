//! Tool calls written as text: the reply of a local model (Ollama, llama.cpp's server, LM Studio,
//! vLLM, the embedded llama.cpp) whose tool call came back in its content instead of the
//! structured `tool_calls` field.
//!
//! Forms understood (public cases R2-L01, R2-L02, R2-L05, R2-L06):
//! - Hermes / Qwen 2.5: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`
//! - Qwen3-Coder XML: `<tool_call><function=NAME><parameter=P>value</parameter></function></tool_call>`
//!   (the `<tool_call>` wrapper optional)
//! - Mistral: `[TOOL_CALLS] [{"name": ..., "arguments": {...}}]` and `[TOOL_CALLS]NAME[ARGS]{...}`
//! - Llama 3.x: `<|python_tag|>{"name": ..., "parameters": {...}}`
//! - a reply that is nothing but `{"name": ..., "arguments"|"parameters": {...}}`
//! - a trailing ```` ```json ```` fence holding such an object, as the last element of the reply
//! - llama.cpp's generic reply object, `{"tool_call": {...}}` (or `{"response": "..."}`, whose
//!   text is the answer), as the whole reply
//!
//! A reply becomes tool calls only when every call it holds parses and names a tool offered in that
//! request; the prose around the calls stays text. Anything else stays text byte for byte
//! ([`recover_tool_calls`] returns `None`). [`TextCallFilter`] keeps the raw markup away from the
//! UI while the reply streams.

use serde_json::{Map, Value};

/// Which written form a recovered call had (logged at debug level by the providers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextCallForm {
    /// `<tool_call>{json}</tool_call>` (Hermes, Qwen 2.5).
    HermesJson,
    /// `<function=NAME><parameter=P>...</parameter></function>` (Qwen3-Coder).
    QwenXml,
    /// `[TOOL_CALLS] [{json}, ...]` (Mistral, Ministral).
    MistralJson,
    /// `[TOOL_CALLS]NAME[ARGS]{json}` (Mistral v11+ templates).
    MistralArgs,
    /// `<|python_tag|>{json}` (Llama 3.x).
    PythonTag,
    /// A trailing fenced ```` ```json ```` block.
    JsonFence,
    /// The whole reply is one call object (Llama 3.x / 4 "JSON in content").
    BareJson,
    /// llama.cpp's generic reply object `{"tool_call": {...}}` (templates without tools, and
    /// servers asked for it with `response_format`).
    Envelope,
}

/// A tool offered in the request: its runtime name and the JSON Schema of its arguments (used to
/// type XML parameter values: a value of a non-string property is read as JSON).
#[derive(Debug, Clone, Copy)]
pub struct OfferedTool<'a> {
    /// Runtime name (`read_file`).
    pub name: &'a str,
    /// JSON Schema of the arguments (`{"type":"object","properties":{...}}`).
    pub parameters: &'a Value,
}

/// One call found in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct TextCall {
    /// The tool's runtime name, one of the offered tools.
    pub name: String,
    /// The arguments as compact JSON object text.
    pub arguments: String,
    /// The form it was written in.
    pub form: TextCallForm,
}

/// A reply split into its prose and its calls (no calls only for a generic `{"response"}` reply).
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveredReply {
    /// The prose around the calls, each piece trimmed, joined by a blank line.
    pub text: String,
    /// The calls, in order.
    pub calls: Vec<TextCall>,
}

impl RecoveredReply {
    /// The distinct forms seen, in order of first appearance.
    pub fn forms(&self) -> Vec<TextCallForm> {
        let mut forms = Vec::new();
        for call in &self.calls {
            if !forms.contains(&call.form) {
                forms.push(call.form);
            }
        }
        forms
    }
}

const TOOL_CALL_OPEN: &str = "<tool_call>";
const TOOL_CALL_CLOSE: &str = "</tool_call>";
const FUNCTION_OPEN: &str = "<function=";
const FUNCTION_CLOSE: &str = "</function>";
const PARAMETER_OPEN: &str = "<parameter=";
const PARAMETER_CLOSE: &str = "</parameter>";
const MISTRAL_MARKER: &str = "[TOOL_CALLS]";
const MISTRAL_ARGS: &str = "[ARGS]";
const PYTHON_TAG: &str = "<|python_tag|>";
const FENCE: &str = "```";

/// End-of-turn markers some servers leave in the content after a call.
const TRAILING_SPECIALS: [&str; 4] = ["<|eom_id|>", "<|eot_id|>", "</s>", "<|im_end|>"];

/// Finds the tool calls written in `text`. `None` when the text holds no call in a known form, a
/// call does not parse, or a call names a tool not in `offered`: the reply is then plain text.
pub fn recover_tool_calls(text: &str, offered: &[OfferedTool<'_>]) -> Option<RecoveredReply> {
    if offered.is_empty() {
        return None;
    }
    let (prose, calls) = if text.contains(TOOL_CALL_OPEN) || text.contains(FUNCTION_OPEN) {
        parse_tagged(text, offered)?
    } else if let Some(at) = text.find(MISTRAL_MARKER) {
        (vec![&text[..at]], parse_mistral(&text[at..], offered)?)
    } else if let Some(at) = text.find(PYTHON_TAG) {
        let calls = parse_json_sequence(
            &text[at + PYTHON_TAG.len()..],
            TextCallForm::PythonTag,
            offered,
        )?;
        (vec![&text[..at]], calls)
    } else if let Some((before, calls)) = parse_trailing_fence(text, offered) {
        (vec![before], calls)
    } else {
        let value: Value = serde_json::from_str(text.trim()).ok()?;
        if let Some(reply) = envelope(&value, offered) {
            return Some(reply);
        }
        (
            Vec::new(),
            calls_from_value(&value, TextCallForm::BareJson, true, offered)?,
        )
    };
    if calls.is_empty() {
        return None;
    }
    let text = prose
        .iter()
        .map(|piece| piece.trim())
        .filter(|piece| !piece.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    Some(RecoveredReply { text, calls })
}

/// The generic reply object: `{"tool_call": CALL}` (or `"tool_calls": [CALL, ...]`) or
/// `{"response": TEXT}` (then the reply is that text and has no calls).
fn envelope(value: &Value, offered: &[OfferedTool<'_>]) -> Option<RecoveredReply> {
    let object = value.as_object()?;
    if object.len() != 1 {
        return None;
    }
    let (key, inner) = object.iter().next()?;
    match key.as_str() {
        "response" => Some(RecoveredReply {
            text: inner.as_str()?.to_string(),
            calls: Vec::new(),
        }),
        "tool_call" | "tool_calls" => Some(RecoveredReply {
            text: String::new(),
            calls: calls_from_value(inner, TextCallForm::Envelope, false, offered)?,
        }),
        _ => None,
    }
}

/// `<tool_call>` blocks (JSON or XML inside) and bare `<function=...>` blocks, with prose between.
fn parse_tagged<'t>(
    text: &'t str,
    offered: &[OfferedTool<'_>],
) -> Option<(Vec<&'t str>, Vec<TextCall>)> {
    let mut prose = Vec::new();
    let mut calls = Vec::new();
    let mut rest = text;
    loop {
        let open = rest.find(TOOL_CALL_OPEN);
        let function = rest.find(FUNCTION_OPEN);
        let start = match (open, function) {
            (None, None) => {
                prose.push(strip_trailing_specials(rest));
                break;
            }
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
        };
        prose.push(&rest[..start]);
        let block = &rest[start..];
        if let Some(body) = block.strip_prefix(TOOL_CALL_OPEN) {
            // The block ends at its closing tag, at the next opening tag (a missing close), or at
            // the end of the reply (a model that stopped right after the call).
            let close = body.find(TOOL_CALL_CLOSE);
            let next_open = body.find(TOOL_CALL_OPEN);
            let (inner, consumed) = match (close, next_open) {
                (Some(c), Some(n)) if n < c => (&body[..n], n),
                (Some(c), _) => (&body[..c], c + TOOL_CALL_CLOSE.len()),
                (None, Some(n)) => (&body[..n], n),
                (None, None) => (body, body.len()),
            };
            let inner = strip_trailing_specials(inner).trim();
            if inner.starts_with(FUNCTION_OPEN) {
                let mut xml = inner;
                while !xml.is_empty() {
                    let (call, used) = parse_xml_function(xml, offered)?;
                    calls.push(call);
                    xml = xml[used..].trim_start();
                }
            } else {
                let value: Value = serde_json::from_str(inner).ok()?;
                calls.extend(calls_from_value(
                    &value,
                    TextCallForm::HermesJson,
                    false,
                    offered,
                )?);
            }
            rest = &body[consumed..];
        } else {
            let (call, used) = parse_xml_function(block, offered)?;
            calls.push(call);
            rest = &block[used..];
        }
    }
    Some((prose, calls))
}

/// One `<function=NAME>...</function>` block at the start of `block`; returns the call and the
/// bytes used. A parameter value ends at its `</parameter>`, or at the next `<parameter=` or
/// `</function>` when the model left the closing tag out, so one call never swallows the next
/// (R2-L02). One leading and one trailing newline of each value are the format's, not the value's.
fn parse_xml_function(block: &str, offered: &[OfferedTool<'_>]) -> Option<(TextCall, usize)> {
    let after_open = block.strip_prefix(FUNCTION_OPEN)?;
    let name_end = after_open.find('>')?;
    let name = after_open[..name_end].trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let tool = offered.iter().find(|tool| tool.name == name)?;
    let body_start = FUNCTION_OPEN.len() + name_end + 1;
    let body_all = &block[body_start..];
    let (body, used) = match body_all.find(FUNCTION_CLOSE) {
        Some(end) => (&body_all[..end], body_start + end + FUNCTION_CLOSE.len()),
        None => (body_all, block.len()),
    };
    let mut arguments = Map::new();
    let mut rest = body;
    loop {
        let lead = rest.trim_start();
        if lead.is_empty() {
            break;
        }
        let after = lead.strip_prefix(PARAMETER_OPEN)?;
        let key_end = after.find('>')?;
        let key = after[..key_end].trim();
        if key.is_empty() {
            return None;
        }
        let value_all = &after[key_end + 1..];
        let ends = [
            value_all.find(PARAMETER_CLOSE),
            value_all.find(PARAMETER_OPEN),
            value_all.find(FUNCTION_CLOSE),
        ];
        let end = ends.into_iter().flatten().min().unwrap_or(value_all.len());
        let mut value = &value_all[..end];
        value = value.strip_prefix('\n').unwrap_or(value);
        value = value.strip_suffix('\n').unwrap_or(value);
        arguments.insert(key.to_string(), typed_parameter(tool, key, value));
        rest = &value_all[end..];
        rest = rest.strip_prefix(PARAMETER_CLOSE).unwrap_or(rest);
    }
    Some((
        TextCall {
            name: name.to_string(),
            arguments: Value::Object(arguments).to_string(),
            form: TextCallForm::QwenXml,
        },
        used,
    ))
}

/// An XML parameter value as JSON: a string for string properties (and unknown ones whose value is
/// not JSON), otherwise the value read as JSON (`42`, `true`, `["a"]`).
fn typed_parameter(tool: &OfferedTool<'_>, key: &str, value: &str) -> Value {
    let declared = tool
        .parameters
        .get("properties")
        .and_then(|p| p.get(key))
        .and_then(|p| p.get("type"));
    let is_string = match declared {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
        _ => false,
    };
    if is_string {
        return Value::String(value.to_string());
    }
    serde_json::from_str(value.trim()).unwrap_or_else(|_| Value::String(value.to_string()))
}

/// `[TOOL_CALLS] [{...}]` or `[TOOL_CALLS]NAME[ARGS]{...}` (repeated), starting at the marker.
fn parse_mistral(text: &str, offered: &[OfferedTool<'_>]) -> Option<Vec<TextCall>> {
    let mut calls = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        rest = strip_trailing_specials(rest);
        if rest.is_empty() {
            break;
        }
        rest = rest
            .strip_prefix(MISTRAL_MARKER)
            .unwrap_or(rest)
            .trim_start();
        if rest.starts_with('[') || rest.starts_with('{') {
            let (value, used) = first_json_value(rest)?;
            calls.extend(calls_from_value(
                &value,
                TextCallForm::MistralJson,
                false,
                offered,
            )?);
            rest = &rest[used..];
        } else {
            let args_at = rest.find(MISTRAL_ARGS)?;
            let name = rest[..args_at].trim();
            let tool = offered.iter().find(|tool| tool.name == name)?;
            let after = rest[args_at + MISTRAL_ARGS.len()..].trim_start();
            let (value, used) = first_json_value(after)?;
            calls.push(TextCall {
                name: tool.name.to_string(),
                arguments: arguments_text(Some(&value))?,
                form: TextCallForm::MistralArgs,
            });
            rest = &after[used..];
        }
    }
    Some(calls)
}

/// One or more call objects separated by whitespace or `;` (Llama's python tag).
fn parse_json_sequence(
    text: &str,
    form: TextCallForm,
    offered: &[OfferedTool<'_>],
) -> Option<Vec<TextCall>> {
    let mut calls = Vec::new();
    let mut rest = text;
    loop {
        rest = strip_trailing_specials(
            rest.trim_start_matches(|c: char| c.is_whitespace() || c == ';'),
        );
        if rest.is_empty() {
            break;
        }
        let (value, used) = first_json_value(rest)?;
        calls.extend(calls_from_value(&value, form, false, offered)?);
        rest = &rest[used..];
    }
    Some(calls)
}

/// A fenced block that is the last element of the reply and holds a call: the text before the
/// fence and the calls (R2-L06).
fn parse_trailing_fence<'t>(
    text: &'t str,
    offered: &[OfferedTool<'_>],
) -> Option<(&'t str, Vec<TextCall>)> {
    let trimmed = text.trim_end();
    let without_close = trimmed.strip_suffix(FENCE)?;
    let open = without_close.rfind(FENCE)?;
    let after_open = &without_close[open + FENCE.len()..];
    let line_end = after_open.find('\n')?;
    let lang = after_open[..line_end].trim();
    if !(lang.is_empty() || lang.eq_ignore_ascii_case("json")) {
        return None;
    }
    let value: Value = serde_json::from_str(after_open[line_end..].trim()).ok()?;
    let calls = calls_from_value(&value, TextCallForm::JsonFence, true, offered)?;
    Some((&text[..open], calls))
}

/// The calls in a JSON value: one call object or an array of them. `strict` (bare and fenced
/// JSON) also requires the `arguments`/`parameters` key, so an object that only has a `name` is
/// not taken for a call.
fn calls_from_value(
    value: &Value,
    form: TextCallForm,
    strict: bool,
    offered: &[OfferedTool<'_>],
) -> Option<Vec<TextCall>> {
    match value {
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|item| call_from_object(item, form, strict, offered))
            .collect(),
        Value::Object(_) => Some(vec![call_from_object(value, form, strict, offered)?]),
        _ => None,
    }
}

fn call_from_object(
    value: &Value,
    form: TextCallForm,
    strict: bool,
    offered: &[OfferedTool<'_>],
) -> Option<TextCall> {
    let object = value.as_object()?;
    // `{"type":"function","function":{...}}` wraps the same object.
    if let Some(inner) = object.get("function").filter(|f| f.is_object()) {
        return call_from_object(inner, form, strict, offered);
    }
    if object.keys().any(|key| {
        !matches!(
            key.as_str(),
            "name" | "arguments" | "parameters" | "id" | "type"
        )
    }) {
        return None;
    }
    let name = object.get("name")?.as_str()?;
    let tool = offered.iter().find(|tool| tool.name == name)?;
    let arguments = object.get("arguments").or_else(|| object.get("parameters"));
    if strict && arguments.is_none() {
        return None;
    }
    Some(TextCall {
        name: tool.name.to_string(),
        arguments: arguments_text(arguments)?,
        form,
    })
}

/// Arguments as compact JSON object text: an object, a string holding an object (R2-L07's
/// escaped form), or nothing / `""` / `null` meaning `{}`.
fn arguments_text(arguments: Option<&Value>) -> Option<String> {
    match arguments {
        None | Some(Value::Null) => Some("{}".into()),
        Some(Value::Object(map)) => Some(Value::Object(map.clone()).to_string()),
        Some(Value::String(text)) if text.trim().is_empty() => Some("{}".into()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text).ok()? {
            Value::Object(map) => Some(Value::Object(map).to_string()),
            _ => None,
        },
        Some(_) => None,
    }
}

/// The first JSON value at the start of `text` and the bytes it used.
fn first_json_value(text: &str) -> Option<(Value, usize)> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let value = stream.next()?.ok()?;
    Some((value, stream.byte_offset()))
}

fn strip_trailing_specials(text: &str) -> &str {
    let mut text = text;
    loop {
        let trimmed = text.trim_end();
        match TRAILING_SPECIALS
            .iter()
            .find_map(|special| trimmed.strip_suffix(special))
        {
            Some(shorter) => text = shorter,
            None => return text,
        }
    }
}

/// The markers after which text may be a written tool call.
const MARKERS: [&str; 5] = [
    TOOL_CALL_OPEN,
    FUNCTION_OPEN,
    MISTRAL_MARKER,
    PYTHON_TAG,
    FENCE,
];

/// Keeps written tool-call markup out of the streamed text.
///
/// Text is passed on as it arrives until something that may start a call: one of the markers
/// (`<tool_call>`, `<function=`, `[TOOL_CALLS]`, `<|python_tag|>`, a ```` ``` ```` fence), the
/// beginning of one at the end of a fragment, or a `{` opening the reply. From there it is held
/// back until it is clear: a fence of another language, a fence followed by more prose, or a JSON
/// reply followed by more text are passed on; the rest waits for [`TextCallFilter::finish`], which
/// either recovers the calls (the markup is never shown) or passes on everything held, so the text
/// shown is then the model's text byte for byte.
#[derive(Debug, Default)]
pub struct TextCallFilter {
    full: String,
    shown: usize,
    /// Inside a fence already judged to be prose: pass on through its closing fence.
    in_prose_fence: bool,
    /// A generic `{"response": "...` reply: where its string starts, and its text shown so far.
    response: Option<(usize, String)>,
}

enum Hold {
    /// Everything from here may be markup: wait.
    At(usize),
    /// Pass on everything up to here, then look again from there.
    ReleaseThrough(usize),
    /// A fence of another language opens here and ends at the given offset: pass it on, and
    /// everything up to its closing fence.
    ProseFence(usize),
}

impl TextCallFilter {
    /// A filter for one reply.
    pub fn new() -> TextCallFilter {
        TextCallFilter::default()
    }

    /// Adds a fragment; returns the text that may be shown now (possibly empty).
    pub fn push(&mut self, fragment: &str) -> String {
        self.full.push_str(fragment);
        if self.response.is_none() && self.full[..self.shown].trim().is_empty() {
            let body = self.full.trim_start();
            if let Some(start) = response_string_start(body) {
                let lead = self.full.len() - body.len();
                self.response = Some((lead + start, String::new()));
            }
        }
        if let Some((start, shown)) = &mut self.response {
            let decoded = decode_json_string_prefix(&self.full[*start..]);
            let new = decoded
                .strip_prefix(shown.as_str())
                .unwrap_or_default()
                .to_string();
            *shown = decoded;
            return new;
        }
        self.release()
    }

    /// The whole text received so far.
    pub fn text(&self) -> &str {
        &self.full
    }

    /// Whether the text held back is the beginning of a written tool call: a call marker
    /// (`<tool_call>`, `<function=`, `[TOOL_CALLS]`, `<|python_tag|>`) or the start of one, a
    /// fence that may hold a call, or unfinished JSON opening the reply (llama.cpp's generic
    /// `{"tool_call": ...}`). A reply that stopped at its token limit while this holds was a call
    /// cut short: it must be neither run nor shown as text. A generic `{"response": ...}` answer
    /// is text, never a call.
    pub fn holds_call(&self) -> bool {
        if self.response.is_some() || self.in_prose_fence {
            return false;
        }
        let held = self.full[self.shown..].trim_start();
        // A marker, or the start of one cut off (two characters at least: `<t`, `[T`, ``` `` ```).
        // The filter holds a fence back only while it may hold a call (a JSON fence, or one
        // whose language line has not come yet).
        if MARKERS
            .iter()
            .any(|marker| held.starts_with(marker) || (held.len() >= 2 && marker.starts_with(held)))
        {
            return true;
        }
        let at_start = self.full[..self.shown].trim().is_empty();
        at_start
            && held.starts_with('{')
            && matches!(
                serde_json::from_str::<Value>(held),
                Err(e) if e.is_eof()
            )
    }

    /// Ends a reply that stopped at its token limit: like [`TextCallFilter::finish`], or `None`
    /// when the limit cut a written call short (see [`TextCallFilter::holds_call`]; also a
    /// Qwen3-Coder XML call whose closing tag never came, which would otherwise be read with its
    /// last value cut). Nothing more is shown then: the held markup is dropped.
    pub fn finish_at_limit(
        self,
        offered: &[OfferedTool<'_>],
    ) -> Option<(Option<RecoveredReply>, String)> {
        if !self.holds_call() {
            return Some(self.finish(offered));
        }
        let end = strip_trailing_specials(&self.full).trim_end();
        let closed = end.ends_with(FUNCTION_CLOSE) || end.ends_with(TOOL_CALL_CLOSE);
        let (reply, tail) = self.finish(offered);
        let whole = reply.as_ref().is_some_and(|r| {
            !r.calls.is_empty()
                && (closed || r.calls.iter().all(|c| c.form != TextCallForm::QwenXml))
        });
        whole.then_some((reply, tail))
    }

    /// Ends the reply: the recovered calls (if any) and the text still to show. With calls, that
    /// is the prose not yet shown; without, everything held back.
    pub fn finish(mut self, offered: &[OfferedTool<'_>]) -> (Option<RecoveredReply>, String) {
        let recovered = recover_tool_calls(&self.full, offered);
        if let Some((_, shown)) = &self.response {
            return match recovered {
                Some(reply) => {
                    let tail = reply
                        .text
                        .strip_prefix(shown.as_str())
                        .unwrap_or_default()
                        .to_string();
                    (Some(reply), tail)
                }
                // Cut short (the token limit): the answer is the text decoded so far.
                None => (
                    Some(RecoveredReply {
                        text: shown.clone(),
                        calls: Vec::new(),
                    }),
                    String::new(),
                ),
            };
        }
        match recovered {
            Some(reply) => {
                let shown = self.full[..self.shown].trim_end();
                let tail = reply
                    .text
                    .strip_prefix(shown)
                    .map(str::to_string)
                    .unwrap_or_default();
                (Some(reply), tail)
            }
            None => {
                self.in_prose_fence = false;
                let tail = self.full[self.shown..].to_string();
                self.shown = self.full.len();
                (None, tail)
            }
        }
    }

    fn release(&mut self) -> String {
        let start = self.shown;
        loop {
            let rest = &self.full[self.shown..];
            if rest.is_empty() {
                break;
            }
            if self.in_prose_fence {
                match rest.find(FENCE) {
                    Some(at) => {
                        self.shown += at + FENCE.len();
                        self.in_prose_fence = false;
                        continue;
                    }
                    None => {
                        self.shown += rest.len() - partial_suffix(rest, &[FENCE]);
                        break;
                    }
                }
            }
            let at_start = self.full[..self.shown].trim().is_empty();
            match hold(rest, at_start) {
                None => {
                    self.shown = self.full.len();
                    break;
                }
                Some(Hold::At(at)) => {
                    self.shown += at;
                    break;
                }
                Some(Hold::ReleaseThrough(end)) => {
                    self.shown += end;
                }
                Some(Hold::ProseFence(end)) => {
                    self.shown += end;
                    self.in_prose_fence = true;
                }
            }
        }
        self.full[start..self.shown].to_string()
    }
}

/// Where `rest` (the text not shown yet) must be held back, if anywhere. `at_start`: nothing but
/// whitespace was shown before it.
fn hold(rest: &str, at_start: bool) -> Option<Hold> {
    {
        if at_start {
            let lead = rest.len() - rest.trim_start().len();
            let body = &rest[lead..];
            if body.starts_with('{') {
                let mut stream = serde_json::Deserializer::from_str(body).into_iter::<Value>();
                return match stream.next() {
                    // A complete value followed by more text is prose after all.
                    Some(Ok(_)) if !body[stream.byte_offset()..].trim().is_empty() => {
                        Some(Hold::ReleaseThrough(lead + stream.byte_offset()))
                    }
                    Some(Err(e)) if !e.is_eof() => Some(Hold::ReleaseThrough(rest.len())),
                    _ => Some(Hold::At(lead)),
                };
            }
        }
        let marker = MARKERS
            .iter()
            .filter_map(|m| rest.find(m).map(|at| (at, *m)))
            .min_by_key(|(at, _)| *at);
        let partial = rest.len() - partial_suffix(rest, &MARKERS);
        match marker {
            Some((at, FENCE)) => {
                let after = &rest[at + FENCE.len()..];
                let Some(line_end) = after.find('\n') else {
                    return Some(Hold::At(at));
                };
                let lang = after[..line_end].trim();
                let content = after[line_end + 1..].trim_start();
                let may_be_call = (lang.is_empty() || lang.eq_ignore_ascii_case("json"))
                    && (content.is_empty() || content.starts_with('{') || content.starts_with('['));
                if !may_be_call {
                    return Some(Hold::ProseFence(at + FENCE.len() + line_end + 1));
                }
                // A fence that may hold a call counts only as the reply's last element.
                let Some(close) = after[line_end..].find(FENCE) else {
                    return Some(Hold::At(at));
                };
                let close_end = at + FENCE.len() + line_end + close + FENCE.len();
                if rest[close_end..].trim().is_empty() {
                    Some(Hold::At(at))
                } else {
                    Some(Hold::ReleaseThrough(close_end))
                }
            }
            Some((at, _)) => Some(Hold::At(at.min(partial))),
            None if partial < rest.len() => Some(Hold::At(partial)),
            None => None,
        }
    }
}

/// Where the string of a generic reply starts: `body` begins `{"response": "` (any spacing).
fn response_string_start(body: &str) -> Option<usize> {
    let rest = body.strip_prefix('{')?;
    let after_brace = rest.trim_start();
    let rest = after_brace.strip_prefix("\"response\"")?.trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    Some(body.len() - rest.len())
}

/// The text of a JSON string's content so far (`text` starts after its opening quote), up to
/// its closing quote or the last complete character or escape.
fn decode_json_string_prefix(text: &str) -> String {
    let hex = |range: std::ops::Range<usize>| {
        text.get(range)
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    let mut out = String::new();
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        match c {
            '"' => break,
            '\\' => {
                let Some(escaped) = text[i + 1..].chars().next() else {
                    break;
                };
                if escaped == 'u' {
                    let Some(code) = hex(i + 2..i + 6) else { break };
                    let (decoded, used) = if (0xD800..0xDC00).contains(&code) {
                        // A surrogate pair: wait for the low half.
                        let low = (text.get(i + 6..i + 8) == Some("\\u"))
                            .then(|| hex(i + 8..i + 12))
                            .flatten();
                        let Some(low) = low else { break };
                        let code = 0x10000 + ((code - 0xD800) << 10) + low.wrapping_sub(0xDC00);
                        (char::from_u32(code), 12)
                    } else {
                        (char::from_u32(code), 6)
                    };
                    out.push(decoded.unwrap_or('\u{fffd}'));
                    i += used;
                } else {
                    out.push(match escaped {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        other => other,
                    });
                    i += 1 + escaped.len_utf8();
                }
            }
            c => {
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

/// The length of the longest suffix of `text` that is a proper prefix of one of `markers`.
fn partial_suffix(text: &str, markers: &[&str]) -> usize {
    let mut best = 0;
    for marker in markers {
        for len in (1..marker.len()).rev() {
            if len <= best {
                break;
            }
            if text.ends_with(&marker[..len]) {
                best = len;
                break;
            }
        }
    }
    best
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn tools() -> Vec<(String, Value)> {
        vec![
            (
                "read_file".to_string(),
                json!({"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}),
            ),
            (
                "calculator".to_string(),
                json!({"type": "object", "properties": {"expression": {"type": "string"}}}),
            ),
        ]
    }

    fn recover(text: &str) -> Option<RecoveredReply> {
        let tools = tools();
        let offered: Vec<OfferedTool<'_>> = tools
            .iter()
            .map(|(name, parameters)| OfferedTool { name, parameters })
            .collect();
        recover_tool_calls(text, &offered)
    }

    fn call(name: &str, arguments: Value, form: TextCallForm) -> TextCall {
        TextCall {
            name: name.into(),
            arguments: arguments.to_string(),
            form,
        }
    }

    fn reply(text: &str, calls: Vec<TextCall>) -> Option<RecoveredReply> {
        Some(RecoveredReply {
            text: text.into(),
            calls,
        })
    }

    const R2_L01: &str = "I need to check the file first.\n\n<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/main.rs\n</parameter>\n</function>\n</tool_call>";
    const R2_L02: &str = "<tool_call>\n<function=read_file>\n<parameter=path>\na.txt</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=read_file>\n<parameter=path>\nb.txt\n</parameter>\n</function>\n</tool_call>";
    const R2_L05_A: &str = r#"{"name": "calculator", "parameters": {"expression": "2+3"}}"#;
    const R2_L05_B: &str =
        r#"[TOOL_CALLS] [{"name": "calculator", "arguments": {"expression": "2+3"}}]"#;
    const R2_L05_C: &str = r#"[TOOL_CALLS]calculator[ARGS]{"expression": "2+3"}"#;
    const R2_L05_D: &str =
        r#"<|python_tag|>{"name": "calculator", "parameters": {"expression": "2+3"}}"#;
    const R2_L06_A: &str = "I'll read it.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```\n";
    const R2_L06_B: &str = "You can call it like this:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```\nand it returns the file's text.";
    const HERMES: &str = "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>";

    #[test]
    fn qwen3_coder_xml_after_prose_keeps_the_prose_and_strips_one_newline_each_side() {
        assert_eq!(
            recover(R2_L01),
            reply(
                "I need to check the file first.",
                vec![call(
                    "read_file",
                    json!({"path": "src/main.rs"}),
                    TextCallForm::QwenXml
                )]
            )
        );
    }

    #[test]
    fn a_missing_newline_before_the_closing_parameter_tag_does_not_swallow_the_next_call() {
        let got = recover(R2_L02).unwrap();
        assert_eq!(
            got,
            RecoveredReply {
                text: String::new(),
                calls: vec![
                    call("read_file", json!({"path": "a.txt"}), TextCallForm::QwenXml),
                    call("read_file", json!({"path": "b.txt"}), TextCallForm::QwenXml),
                ]
            }
        );
        assert!(
            got.calls
                .iter()
                .all(|c| !c.arguments.contains("</parameter>")
                    && !c.arguments.contains("<tool_call>"))
        );
    }

    #[test]
    fn an_xml_parameter_without_any_closing_tag_ends_at_the_next_parameter() {
        let text = "<function=read_file>\n<parameter=path>\na.txt\n<parameter=limit>\n5\n</parameter>\n</function>";
        assert_eq!(
            recover(text),
            reply(
                "",
                vec![call(
                    "read_file",
                    json!({"path": "a.txt", "limit": 5}),
                    TextCallForm::QwenXml
                )]
            )
        );
    }

    #[test]
    fn a_bare_call_object_with_parameters_is_one_call() {
        assert_eq!(
            recover(R2_L05_A),
            reply(
                "",
                vec![call(
                    "calculator",
                    json!({"expression": "2+3"}),
                    TextCallForm::BareJson
                )]
            )
        );
    }

    #[test]
    fn mistral_tool_calls_with_a_json_array_is_one_call() {
        assert_eq!(
            recover(R2_L05_B),
            reply(
                "",
                vec![call(
                    "calculator",
                    json!({"expression": "2+3"}),
                    TextCallForm::MistralJson
                )]
            )
        );
    }

    #[test]
    fn mistral_tool_calls_with_name_and_args_is_one_call() {
        assert_eq!(
            recover(R2_L05_C),
            reply(
                "",
                vec![call(
                    "calculator",
                    json!({"expression": "2+3"}),
                    TextCallForm::MistralArgs
                )]
            )
        );
    }

    #[test]
    fn mistral_name_and_args_calls_may_repeat() {
        let text = r#"[TOOL_CALLS]calculator[ARGS]{"expression": "1"}[TOOL_CALLS]read_file[ARGS]{"path": "x"}</s>"#;
        assert_eq!(
            recover(text),
            reply(
                "",
                vec![
                    call(
                        "calculator",
                        json!({"expression": "1"}),
                        TextCallForm::MistralArgs
                    ),
                    call("read_file", json!({"path": "x"}), TextCallForm::MistralArgs),
                ]
            )
        );
    }

    #[test]
    fn llama_python_tag_with_parameters_is_one_call() {
        assert_eq!(
            recover(R2_L05_D),
            reply(
                "",
                vec![call(
                    "calculator",
                    json!({"expression": "2+3"}),
                    TextCallForm::PythonTag
                )]
            )
        );
    }

    #[test]
    fn llama_python_tag_calls_separated_by_semicolons_and_an_eom_marker() {
        let text = r#"<|python_tag|>{"name": "calculator", "parameters": {"expression": "1"}}; {"name": "read_file", "parameters": {"path": "a"}}<|eom_id|>"#;
        assert_eq!(recover(text).map(|r| r.calls.len()), Some(2));
    }

    #[test]
    fn a_trailing_json_fence_is_a_call_and_the_prose_before_it_stays() {
        assert_eq!(
            recover(R2_L06_A),
            reply(
                "I'll read it.",
                vec![call(
                    "read_file",
                    json!({"path": "a.txt"}),
                    TextCallForm::JsonFence
                )]
            )
        );
    }

    #[test]
    fn a_json_fence_in_the_middle_of_an_answer_stays_text() {
        assert_eq!(recover(R2_L06_B), None);
    }

    #[test]
    fn hermes_tool_call_json_after_prose() {
        assert_eq!(
            recover(HERMES),
            reply(
                "Let me look.",
                vec![call(
                    "read_file",
                    json!({"path": "a.txt"}),
                    TextCallForm::HermesJson
                )]
            )
        );
    }

    #[test]
    fn a_hermes_call_without_its_closing_tag_at_the_end_of_the_reply_is_still_a_call() {
        let text = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n<|im_end|>";
        assert_eq!(
            recover(text),
            reply(
                "",
                vec![call(
                    "read_file",
                    json!({"path": "a.txt"}),
                    TextCallForm::HermesJson
                )]
            )
        );
    }

    #[test]
    fn prose_between_and_after_calls_is_kept() {
        let text = "First.\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call>\nThen.\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}</tool_call>\nDone.";
        let got = recover(text).unwrap();
        assert_eq!(got.text, "First.\n\nThen.\n\nDone.");
        assert_eq!(got.calls.len(), 2);
    }

    #[test]
    fn arguments_as_an_object_or_as_an_escaped_string_decode_the_same() {
        let object =
            recover(r#"<tool_call>{"name": "read_file", "arguments": {"path":"a"}}</tool_call>"#);
        let string = recover(
            r#"<tool_call>{"name": "read_file", "arguments": "{\"path\":\"a\"}"}</tool_call>"#,
        );
        assert_eq!(object, string);
        assert_eq!(object.unwrap().calls[0].arguments, r#"{"path":"a"}"#);
    }

    #[test]
    fn an_unknown_tool_name_leaves_the_reply_as_text() {
        assert_eq!(
            recover(r#"<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>"#),
            None
        );
        assert_eq!(recover(r#"[TOOL_CALLS]launch[ARGS]{"x": 1}"#), None);
        assert_eq!(recover(r#"{"name": "weather", "parameters": {}}"#), None);
    }

    #[test]
    fn one_bad_call_among_good_ones_leaves_the_whole_reply_as_text() {
        let text = "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call><tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>";
        assert_eq!(recover(text), None);
    }

    #[test]
    fn json_that_merely_looks_like_a_call_inside_an_explanation_stays_text() {
        let text = r#"The payload is {"name": "read_file", "arguments": {"path": "a"}} and the server answers with the file."#;
        assert_eq!(recover(text), None);
        assert_eq!(recover(r#"{"name": "read_file"}"#), None);
        assert_eq!(recover("Plain answer with no call."), None);
    }

    #[test]
    fn no_offered_tools_means_no_recovery() {
        assert_eq!(recover_tool_calls(HERMES, &[]), None);
    }

    #[test]
    fn xml_values_of_non_string_properties_are_read_as_json() {
        let text = "<function=read_file><parameter=path>7</parameter><parameter=limit>\n12\n</parameter></function>";
        assert_eq!(
            recover(text).unwrap().calls[0].arguments,
            json!({"path": "7", "limit": 12}).to_string()
        );
    }

    // --- streaming ---

    const MARKUP: [&str; 6] = [
        "<tool_call",
        "<function",
        "[TOOL_CALLS",
        "<|python_tag",
        "```json",
        "\"name\"",
    ];

    fn offered_tools(tools: &[(String, Value)]) -> Vec<OfferedTool<'_>> {
        tools
            .iter()
            .map(|(name, parameters)| OfferedTool { name, parameters })
            .collect()
    }

    /// Streams `fragments` through a filter; returns what was shown and the result.
    fn stream(fragments: &[&str]) -> (String, Option<RecoveredReply>) {
        let tools = tools();
        let offered = offered_tools(&tools);
        let mut filter = TextCallFilter::new();
        let mut shown = String::new();
        for fragment in fragments {
            shown.push_str(&filter.push(fragment));
        }
        let (reply, tail) = filter.finish(&offered);
        shown.push_str(&tail);
        (shown, reply)
    }

    /// Every split of `text` into two fragments at a character boundary, and one character at a
    /// time.
    fn splits(text: &str) -> Vec<Vec<&str>> {
        let mut out = vec![vec![text]];
        for (at, _) in text.char_indices().skip(1) {
            out.push(vec![&text[..at], &text[at..]]);
        }
        let mut singles = Vec::new();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            singles.push(&rest[..c.len_utf8()]);
            rest = &rest[c.len_utf8()..];
        }
        out.push(singles);
        out
    }

    #[test]
    fn streamed_calls_never_show_their_markup_at_any_split() {
        for text in [
            R2_L01, R2_L02, R2_L05_A, R2_L05_B, R2_L05_C, R2_L05_D, R2_L06_A, HERMES,
        ] {
            let expected = recover(text).expect("recoverable");
            for fragments in splits(text) {
                let (shown, got) = stream(&fragments);
                assert_eq!(got.as_ref(), Some(&expected), "{fragments:?}");
                for markup in MARKUP {
                    assert!(
                        !shown.contains(markup),
                        "{markup} shown for {fragments:?}: {shown:?}"
                    );
                }
                assert_eq!(shown.trim_end(), expected.text, "{fragments:?}");
            }
        }
    }

    #[test]
    fn streamed_text_that_is_not_a_call_is_shown_byte_for_byte_at_any_split() {
        let texts = [
            R2_L06_B,
            "Plain answer.",
            r#"{"name": "weather", "parameters": {}}"#,
            r#"The payload is {"name": "read_file", "arguments": {"path": "a"}} here."#,
            "Code:\n```rust\nfn main() {}\n```\nDone <b>bold</b> [x] ```",
            "<tool_call>{\"name\": \"unknown\", \"arguments\": {}}</tool_call>",
            "Ünïcödé ✓ text with < and [ and `",
        ];
        for text in texts {
            for fragments in splits(text) {
                let (shown, got) = stream(&fragments);
                assert_eq!(got, None, "{fragments:?}");
                assert_eq!(shown, text, "{fragments:?}");
            }
        }
    }

    #[test]
    fn prose_before_a_call_streams_before_the_reply_ends() {
        let tools = tools();
        let _offered = offered_tools(&tools);
        let mut filter = TextCallFilter::new();
        assert_eq!(filter.push("I need to check "), "I need to check ");
        assert_eq!(
            filter.push("the file first.\n\n<tool"),
            "the file first.\n\n"
        );
        assert_eq!(filter.push("_call>\n<function=read_file>"), "");
    }

    #[test]
    fn a_generic_tool_call_object_is_a_call_and_a_response_object_is_its_text() {
        assert_eq!(
            recover(r#"{"tool_call": {"name": "read_file", "arguments": {"path": "a.txt"}}}"#),
            reply(
                "",
                vec![call(
                    "read_file",
                    json!({"path": "a.txt"}),
                    TextCallForm::Envelope
                )]
            )
        );
        assert_eq!(
            recover(r#"{"response": "It says \"hi\"."}"#),
            reply("It says \"hi\".", vec![])
        );
        assert_eq!(
            recover(r#"{"tool_call": {"name": "nope", "arguments": {}}}"#),
            None
        );
    }

    #[test]
    fn a_generic_response_streams_its_decoded_text_at_any_split() {
        let text = r#"{"response": "Line one\nsays \"PAPAYA\" \u00e9\ud83d\ude00 done"}"#;
        let expected = "Line one\nsays \"PAPAYA\" é😀 done";
        for fragments in splits(text) {
            let (shown, got) = stream(&fragments);
            assert_eq!(
                got.map(|r| r.text),
                Some(expected.to_string()),
                "{fragments:?}"
            );
            assert_eq!(shown, expected, "{fragments:?}");
        }
    }

    /// Pushes `text` one character at a time and ends it at the token limit: what was shown and
    /// what [`TextCallFilter::finish_at_limit`] gave.
    fn stream_to_limit(text: &str) -> (String, Option<(Option<RecoveredReply>, String)>) {
        let tools = tools();
        let offered = offered_tools(&tools);
        let mut filter = TextCallFilter::new();
        let mut shown = String::new();
        for piece in splits(text).pop().unwrap_or_default() {
            shown.push_str(&filter.push(piece));
        }
        let end = filter.finish_at_limit(&offered);
        if let Some((_, tail)) = &end {
            shown.push_str(tail);
        }
        (shown, end)
    }

    #[test]
    fn a_call_cut_off_by_the_token_limit_at_any_byte_is_never_shown_nor_half_read() {
        let envelope = r#"{"tool_call": {"name": "read_file", "arguments": {"path": "a.txt"}}}"#;
        for text in [
            R2_L01, R2_L02, R2_L05_B, R2_L05_C, R2_L05_D, R2_L06_A, HERMES, envelope,
        ] {
            let expected = recover(text).expect("recoverable");
            let markup_at = MARKUP
                .iter()
                .chain(["{"].iter())
                .filter_map(|m| text.find(m))
                .min()
                .unwrap_or(0);
            let mut cut_calls = 0;
            // From two characters into the markup (a lone `<` or `{` may be prose).
            for (at, _) in text.char_indices().filter(|(at, _)| *at >= markup_at + 2) {
                let prefix = &text[..at];
                let (shown, end) = stream_to_limit(prefix);
                for markup in MARKUP {
                    assert!(
                        !shown.contains(markup),
                        "{markup} shown for {prefix:?}: {shown:?}"
                    );
                }
                match end {
                    // Read as calls only when they are whole calls (those before the cut).
                    Some((Some(reply), _)) => assert!(
                        !reply.calls.is_empty() && expected.calls.starts_with(&reply.calls),
                        "{prefix:?}: {reply:?}"
                    ),
                    Some((None, _)) => panic!("a cut call was shown as text: {prefix:?}"),
                    None => cut_calls += 1,
                }
            }
            assert!(cut_calls > 0, "{text:?}");
        }
    }

    #[test]
    fn a_reply_stopped_by_the_token_limit_outside_a_call_is_kept() {
        let (shown, end) = stream_to_limit("Plain answer cut sho");
        assert_eq!(shown, "Plain answer cut sho");
        assert_eq!(end, Some((None, String::new())));
        let (shown, end) = stream_to_limit(r#"{"response": "Hello wor"#);
        assert_eq!(shown, "Hello wor");
        assert_eq!(end, Some((reply("Hello wor", vec![]), String::new())));
        let (shown, end) = stream_to_limit(R2_L01);
        assert_eq!(shown.trim_end(), "I need to check the file first.");
        assert_eq!(end.and_then(|(r, _)| r), recover(R2_L01));
    }

    #[test]
    fn a_code_fence_of_another_language_streams_as_it_comes() {
        let mut filter = TextCallFilter::new();
        assert_eq!(filter.push("Here:\n```py"), "Here:\n");
        assert_eq!(filter.push("thon\nprint(1)\n"), "```python\nprint(1)\n");
        assert_eq!(filter.push("```\nok"), "```\nok");
    }
}
