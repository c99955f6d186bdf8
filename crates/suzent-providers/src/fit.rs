//! Fitting a request to a model's context: compact tool schemas, the small-model tool set, and
//! old tool results shortened first.
//!
//! - A tool schema larger than its budget keeps its top-level properties, their types and
//!   descriptions; a property whose own schema is large (render_ui's A2UI component catalog,
//!   23 KB) becomes its plain type plus a one-line summary of the shapes it accepts
//!   (`Text(text, usageHint?)`), described once instead of inlined at every `$ref`. The tool still
//!   validates its arguments fully when it runs, so nothing invalid gets through — the model gets
//!   the error with the JSON path and can correct itself.
//! - Below [`SMALL_CONTEXT`] tokens only the file, search and shell tools are offered (plus any
//!   the chat activated by name), so the tool list does not fill a small model's context.
//! - When the estimated prompt still does not fit, the oldest tool results are shortened first
//!   (head kept, a note says how much was left out); the newest result and every user message stay
//!   whole.

use serde_json::{Map, Value};
use suzent_core::ChatMessage;

use super::{ModelRequest, ToolDefinition};

/// Context sizes below this many tokens get the small-model treatment.
pub const SMALL_CONTEXT: u32 = 16_384;

/// The tools a small model gets: files, search and the shell.
pub const SMALL_MODEL_TOOLS: [&str; 10] = [
    "read_file",
    "write_file",
    "edit_file",
    "glob_search",
    "grep_search",
    "run_command",
    "start_command",
    "check_command",
    "stop_command",
    "tool_search",
];

/// Bytes a tool schema may take before it is compacted, for a small model and otherwise.
pub const SMALL_SCHEMA_BUDGET: usize = 2_048;
/// See [`SMALL_SCHEMA_BUDGET`].
pub const SCHEMA_BUDGET: usize = 8_192;
/// A property schema larger than this is summarised when its tool is compacted.
const PROPERTY_BUDGET: usize = 600;
/// Characters kept at the head of a shortened tool result.
const KEPT_RESULT_CHARS: usize = 400;

/// What [`fit_request`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FitReport {
    /// Tools left out of the request (small-model tool set).
    pub tools_left_out: Vec<String>,
    /// Tools whose schema was compacted.
    pub compacted: Vec<String>,
    /// Tool results shortened, counted.
    pub results_shortened: usize,
    /// The estimated prompt tokens after fitting.
    pub estimated_tokens: usize,
}

/// A conservative token estimate: one token per 3.5 bytes (English and code run nearer 4).
pub fn estimate_tokens(text: &str) -> usize {
    tokens_of_bytes(text.len())
}

/// [`estimate_tokens`] of a text `bytes` long.
fn tokens_of_bytes(bytes: usize) -> usize {
    (bytes * 2).div_ceil(7)
}

fn request_tokens(request: &ModelRequest) -> usize {
    let mut total = estimate_tokens(&request.system) + 8;
    for tool in &request.tools {
        total += estimate_tokens(&tool.name)
            + estimate_tokens(&tool.description)
            + tokens_of_bytes(crate::tokens::json_len(&tool.parameters))
            + 8;
    }
    for message in &request.messages {
        total += 6 + match message {
            ChatMessage::User { .. } => {
                estimate_tokens(&message.user_text_for_model().unwrap_or_default())
                    + crate::tokens::IMAGE_TOKENS * message.inline_images().len()
            }
            ChatMessage::Assistant { text, tool_calls } => {
                estimate_tokens(text)
                    + tool_calls
                        .iter()
                        .map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments) + 8)
                        .sum::<usize>()
            }
            ChatMessage::Tool { content, .. } => estimate_tokens(content),
        };
    }
    total
}

/// Fits `request` to a context of `context_tokens` with `max_output_tokens` reserved for the
/// reply. `activated` names tools the chat turned on by name (kept in the small-model set).
pub fn fit_request(
    request: &mut ModelRequest,
    context_tokens: u32,
    max_output_tokens: u32,
    activated: &[String],
) -> FitReport {
    let mut report = FitReport::default();
    let small = context_tokens < SMALL_CONTEXT;
    if small {
        let (kept, left): (Vec<ToolDefinition>, Vec<ToolDefinition>) =
            std::mem::take(&mut request.tools)
                .into_iter()
                .partition(|tool| {
                    SMALL_MODEL_TOOLS.contains(&tool.name.as_str())
                        || activated.iter().any(|a| a == &tool.name)
                });
        // A chat with none of the small set keeps what it chose.
        if kept.is_empty() {
            request.tools = left;
        } else {
            report.tools_left_out = left.into_iter().map(|t| t.name).collect();
            request.tools = kept;
        }
    }
    if small {
        for tool in &mut request.tools {
            tool.description = short_description(&tool.description);
        }
    }
    let budget = if small {
        SMALL_SCHEMA_BUDGET
    } else {
        SCHEMA_BUDGET
    };
    for tool in &mut request.tools {
        if crate::tokens::json_len(&tool.parameters) > budget {
            tool.parameters = compact_schema(&tool.parameters);
            report.compacted.push(tool.name.clone());
        }
    }
    let room = (context_tokens as usize)
        .saturating_sub(max_output_tokens as usize)
        .saturating_sub(64);
    let mut estimate = request_tokens(request);
    if estimate > room {
        let last_tool = request
            .messages
            .iter()
            .rposition(|m| matches!(m, ChatMessage::Tool { .. }));
        for (index, message) in request.messages.iter_mut().enumerate() {
            if estimate <= room {
                break;
            }
            if Some(index) == last_tool {
                continue;
            }
            if let ChatMessage::Tool { content, .. } = message
                && let Some(shortened) = shorten(content)
            {
                estimate -= estimate_tokens(content) - estimate_tokens(&shortened);
                *content = shortened;
                report.results_shortened += 1;
            }
        }
    }
    report.estimated_tokens = estimate;
    report
}

/// The system prompt of small models: short, concrete, with an example that fits any language,
/// and explicit that the workspace is the user's project (small models otherwise take the
/// agent's own persona for the subject of the files).
pub fn small_model_system_prompt(workspace: &str, mode: &str) -> String {
    format!(
        "You are a coding assistant. You work in the user's project folder {workspace}; the files there are the user's, not about you.\n\
         Use a tool only for information you do not have. As soon as a tool result contains the answer, reply to the user with it; do not call the same tool again.\n\
         Example: asked what a file says, call read_file with {{\"path\": \"NAME\"}}, then answer from the result in the user's language.\n\
         Permission mode: {mode}. A refused call returns an error saying why; do something else instead of repeating it.\n\
         Keep answers short."
    )
}

/// The first sentence of a tool description (at most 200 characters), for small models.
fn short_description(description: &str) -> String {
    let end = description
        .char_indices()
        .find(|(i, c)| *c == '.' && description[i + 1..].starts_with([' ', '\n']))
        .map(|(i, _)| i + 1)
        .unwrap_or(description.len());
    let mut short: String = description[..end].chars().take(200).collect();
    if short.len() < end {
        short.push('…');
    }
    short
}

/// The head of a long tool result and a note of what was left out; `None` when it is short.
fn shorten(content: &str) -> Option<String> {
    if content.len() <= KEPT_RESULT_CHARS + 120 {
        return None;
    }
    let mut end = KEPT_RESULT_CHARS;
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    Some(format!(
        "{}\n[... {} more characters of this older result were left out to fit the model's context; call the tool again if you need them]",
        &content[..end],
        content.len() - end
    ))
}

/// The schema with large property schemas replaced by their type and a summary of their shapes
/// (see the module documentation). The top level keeps `type`, `properties` (names, types,
/// descriptions), `required` and `additionalProperties`.
pub fn compact_schema(schema: &Value) -> Value {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object);
    let mut out = Map::new();
    out.insert("type".into(), Value::String("object".into()));
    let mut properties = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in props {
            let resolved = resolve(property, defs);
            let size = inline_size(property, defs, 0);
            let compact = if size <= PROPERTY_BUDGET {
                inline(property, defs, 0)
            } else {
                summarise(resolved, defs)
            };
            properties.insert(name.clone(), compact);
        }
    }
    out.insert("properties".into(), Value::Object(properties));
    for key in ["required", "additionalProperties"] {
        if let Some(value) = schema.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    Value::Object(out)
}

fn resolve<'a>(schema: &'a Value, defs: Option<&'a Map<String, Value>>) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next())
        .and_then(|name| defs?.get(name))
        .unwrap_or(schema)
}

/// The schema with its `$ref`s inlined (to a small depth).
fn inline(schema: &Value, defs: Option<&Map<String, Value>>, depth: usize) -> Value {
    let resolved = resolve(schema, defs);
    match resolved {
        Value::Object(map) if depth < 6 => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), inline(v, defs, depth + 1)))
                .collect(),
        ),
        Value::Array(items) if depth < 6 => {
            Value::Array(items.iter().map(|v| inline(v, defs, depth + 1)).collect())
        }
        other => other.clone(),
    }
}

fn inline_size(schema: &Value, defs: Option<&Map<String, Value>>, depth: usize) -> usize {
    if depth > 6 {
        return PROPERTY_BUDGET + 1;
    }
    let resolved = resolve(schema, defs);
    match resolved {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| k.len() + 4 + inline_size(v, defs, depth + 1))
            .sum(),
        Value::Array(items) => items.iter().map(|v| inline_size(v, defs, depth + 1)).sum(),
        other => crate::tokens::json_len(other),
    }
}

/// The property's type, its description, and the shapes it accepts listed once.
fn summarise(schema: &Value, defs: Option<&Map<String, Value>>) -> Value {
    let mut out = Map::new();
    let kind = json_type(schema, defs);
    out.insert("type".into(), Value::String(kind.to_string()));
    if kind == "array" {
        let items = schema.get("items").map(|i| resolve(i, defs));
        let item_kind = items.map(|i| json_type(i, defs)).unwrap_or("object");
        out.insert("items".into(), serde_json::json!({"type": item_kind}));
    }
    let mut description = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let shapes = shapes(schema, defs);
    if !shapes.is_empty() {
        if !description.is_empty() {
            description.push(' ');
        }
        description.push_str("Accepted: ");
        description.push_str(&shapes.join("; "));
        description.push_str(". (Checked in full when the tool runs.)");
    }
    if !description.is_empty() {
        out.insert("description".into(), Value::String(description));
    }
    Value::Object(out)
}

fn json_type(schema: &Value, defs: Option<&Map<String, Value>>) -> &'static str {
    let schema = resolve(schema, defs);
    match schema.get("type") {
        Some(Value::String(t)) => match t.as_str() {
            "array" => "array",
            "string" => "string",
            "number" => "number",
            "integer" => "integer",
            "boolean" => "boolean",
            _ => "object",
        },
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .map(|t| match t {
                "array" => "array",
                "string" => "string",
                _ => "object",
            })
            .unwrap_or("object"),
        _ if schema.get("items").is_some() => "array",
        _ => "object",
    }
}

/// `Name(field, optional?)` for each object shape reachable through items, `oneOf`/`anyOf` and
/// single-key wrappers (A2UI's `{"component": {"Text": {...}}}`).
fn shapes(schema: &Value, defs: Option<&Map<String, Value>>) -> Vec<String> {
    let mut out = Vec::new();
    collect_shapes(schema, defs, None, &mut out, 0);
    out.dedup();
    out
}

fn collect_shapes(
    schema: &Value,
    defs: Option<&Map<String, Value>>,
    label: Option<&str>,
    out: &mut Vec<String>,
    depth: usize,
) {
    if depth > 5 || out.len() > 60 {
        return;
    }
    let name = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next());
    let resolved = resolve(schema, defs);
    let label = label.or(name);
    if let Some(items) = resolved.get("items") {
        collect_shapes(items, defs, None, out, depth + 1);
        return;
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(variants) = resolved.get(key).and_then(Value::as_array) {
            for variant in variants {
                collect_shapes(variant, defs, None, out, depth + 1);
            }
            return;
        }
    }
    let Some(props) = resolved.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = resolved
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // A wrapper with one required key per variant (`{"Text": {...}}`) names its content.
    if props.len() == 1
        && let Some((key, inner)) = props.iter().next()
        && resolve(inner, defs).get("properties").is_some()
    {
        collect_shapes(inner, defs, Some(key), out, depth + 1);
        return;
    }
    let fields: Vec<String> = props
        .keys()
        .map(|k| {
            if required.contains(&k.as_str()) {
                k.clone()
            } else {
                format!("{k}?")
            }
        })
        .collect();
    let mut nested = Vec::new();
    for (key, inner) in props {
        let inner_resolved = resolve(inner, defs);
        let branches = inner_resolved
            .get("oneOf")
            .or_else(|| inner_resolved.get("anyOf"))
            .and_then(Value::as_array)
            .map(|v| v.len())
            .unwrap_or(0);
        if branches > 1 || inner_resolved.get("items").is_some() && key == "component" {
            nested.push(inner);
        }
    }
    match label {
        Some(label) => out.push(format!("{label}({})", fields.join(", "))),
        None => out.push(format!("{{{}}}", fields.join(", "))),
    }
    for inner in nested {
        collect_shapes(inner, defs, None, out, depth + 1);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use suzent_core::ToolCall;

    fn tool(name: &str, parameters: Value) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: format!("{name} does things."),
            parameters,
        }
    }

    fn big_schema() -> Value {
        let mut components = Vec::new();
        for name in ["Text", "Button", "Row", "Column", "Card", "Table"] {
            components.push(json!({
                "type": "object",
                "properties": {name: {"$ref": format!("#/$defs/{name}")}},
                "required": [name]
            }));
        }
        let mut defs = Map::new();
        for name in ["Text", "Button", "Row", "Column", "Card", "Table"] {
            defs.insert(
                name.into(),
                json!({"type": "object", "description": "x".repeat(400), "properties": {
                    "text": {"$ref": "#/$defs/Bound"}, "label": {"$ref": "#/$defs/Bound"}
                }, "required": ["text"]}),
            );
        }
        defs.insert("Bound".into(), json!({"type": "object", "description": "y".repeat(300), "properties": {"literalString": {"type": "string"}, "path": {"type": "string"}}}));
        defs.insert(
            "Entry".into(),
            json!({"type": "object", "properties": {"id": {"type": "string"}, "component": {"oneOf": components}}, "required": ["id", "component"]}),
        );
        json!({
            "type": "object",
            "properties": {
                "surface_id": {"type": "string", "description": "Id of the surface."},
                "components": {"description": "Components to add.", "type": ["array", "null"], "items": {"$ref": "#/$defs/Entry"}}
            },
            "required": ["surface_id"],
            "$defs": defs
        })
    }

    #[test]
    fn a_large_property_becomes_its_type_and_one_summary_of_its_shapes() {
        let compact = compact_schema(&big_schema());
        assert_eq!(
            compact,
            json!({
                "type": "object",
                "properties": {
                    "surface_id": {"type": "string", "description": "Id of the surface."},
                    "components": {
                        "type": "array",
                        "items": {"type": "object"},
                        "description": "Components to add. Accepted: Entry(id, component); Text(text, label?); Button(text, label?); Row(text, label?); Column(text, label?); Card(text, label?); Table(text, label?). (Checked in full when the tool runs.)"
                    }
                },
                "required": ["surface_id"]
            })
        );
        assert!(compact.to_string().len() * 4 < big_schema().to_string().len());
    }

    #[test]
    fn the_real_render_ui_schema_shrinks_below_the_small_model_budget() {
        let spec = suzent_tools::default_registry()
            .get("render_ui")
            .map(|t| t.spec().parameters.clone())
            .unwrap();
        let full = spec.to_string().len();
        let compact = compact_schema(&spec).to_string();
        assert!(full > 15_000, "{full}");
        assert!(compact.len() < 3_000, "{} bytes: {compact}", compact.len());
        assert!(compact.contains("Text("), "{compact}");
        assert!(compact.contains("Button("), "{compact}");
    }

    #[test]
    fn a_small_context_gets_the_file_search_and_shell_tools_only() {
        let mut request = ModelRequest {
            model: "m".into(),
            system: "s".into(),
            messages: vec![ChatMessage::User {
                text: "hi".into(),
                attachments: Vec::new(),
            }],
            tools: [
                "read_file",
                "web_search",
                "run_command",
                "render_ui",
                "memory_search",
            ]
            .iter()
            .map(|n| tool(n, json!({"type": "object", "properties": {}})))
            .collect(),
        };
        let report = fit_request(&mut request, 8192, 1024, &["memory_search".to_string()]);
        assert_eq!(
            request
                .tools
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>(),
            ["read_file", "run_command", "memory_search"]
        );
        assert_eq!(report.tools_left_out, ["web_search", "render_ui"]);
    }

    #[test]
    fn small_models_get_the_first_sentence_of_each_description() {
        assert_eq!(
            short_description("Reads a file. Offsets are lines."),
            "Reads a file."
        );
        assert_eq!(short_description("No full stop"), "No full stop");
        assert_eq!(
            short_description("Version 1.2 is read. Then more."),
            "Version 1.2 is read."
        );
    }

    #[test]
    fn a_large_context_keeps_every_tool() {
        let mut request = ModelRequest {
            model: "m".into(),
            system: String::new(),
            messages: Vec::new(),
            tools: vec![tool("web_search", json!({"type": "object"}))],
        };
        let report = fit_request(&mut request, 128_000, 4096, &[]);
        assert_eq!(request.tools.len(), 1);
        assert_eq!(report.tools_left_out, Vec::<String>::new());
    }

    #[test]
    fn old_tool_results_are_shortened_first_and_the_newest_stays_whole() {
        let result = |id: &str, size: usize| ChatMessage::Tool {
            tool_call_id: id.into(),
            tool_name: "read_file".into(),
            content: "z".repeat(size),
            is_error: false,
        };
        let call = |id: &str| ChatMessage::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: "read_file".into(),
                arguments: "{}".into(),
            }],
        };
        let mut request = ModelRequest {
            model: "m".into(),
            system: "s".into(),
            messages: vec![
                ChatMessage::User {
                    text: "u".repeat(2000),
                    attachments: Vec::new(),
                },
                call("a"),
                result("a", 20_000),
                call("b"),
                result("b", 20_000),
                call("c"),
                result("c", 6_000),
            ],
            tools: Vec::new(),
        };
        let report = fit_request(&mut request, 8192, 1024, &[]);
        assert_eq!(report.results_shortened, 2);
        let sizes: Vec<usize> = request
            .messages
            .iter()
            .map(|m| match m {
                ChatMessage::Tool { content, .. } => content.len(),
                ChatMessage::User { text, .. } => text.len(),
                _ => 0,
            })
            .collect();
        assert!(sizes[2] < 700 && sizes[4] < 700, "{sizes:?}");
        assert_eq!((sizes[0], sizes[6]), (2000, 6000));
        assert!(report.estimated_tokens <= 8192 - 1024);
    }
}
