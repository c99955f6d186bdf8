//! The grammar that constrains a tool call: built from the offered tools' JSON Schemas with
//! llama.cpp's own JSON-Schema-to-GBNF converter, wrapped in the model family's call syntax.
//!
//! The grammar is lazy: the model writes free text until it writes the family's trigger
//! (`<tool_call>`, `[TOOL_CALLS]`, `{"name"`), and from there it can only write a call that names
//! an offered tool with arguments valid for that tool's schema, then stop. With `required` the
//! grammar applies from the first token, so the reply is a call and nothing else.

use serde_json::{Map, Value, json};

use crate::template::{TemplateTool, ToolFormat};

/// A grammar for the sampler.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolGrammar {
    /// GBNF text.
    pub grammar: String,
    /// The start rule.
    pub root: String,
    /// Words that switch the grammar on (lazy grammars); empty when it applies from the start.
    pub triggers: Vec<String>,
}

/// The grammar of a generic reply that answers and calls nothing: `{"response": TEXT}` (for
/// [`ToolFormat::Generic`] with tool choice none, when tools are still described).
pub fn response_grammar() -> Result<ToolGrammar, GrammarError> {
    let schema = json!({
        "type": "object",
        "properties": {"response": {"type": "string"}},
        "required": ["response"],
        "additionalProperties": false,
    });
    let grammar = llama_cpp_2::json_schema_to_grammar(&schema.to_string())
        .map_err(|e| GrammarError(e.to_string()))?;
    Ok(ToolGrammar {
        grammar,
        root: "root".into(),
        triggers: Vec::new(),
    })
}

/// A schema llama.cpp's converter refused.
#[derive(Debug, thiserror::Error)]
#[error("cannot build a tool-call grammar: {0}")]
pub struct GrammarError(String);

const ROOT: &str = "suzent-calls";

/// The grammar for calls to `tools` in `format`, or `None` when the format has no grammar
/// (Qwen3-Coder's XML is parsed, not constrained) or no tools are offered. `required`: the reply
/// must be a call.
pub fn tool_grammar(
    tools: &[TemplateTool],
    format: ToolFormat,
    required: bool,
) -> Result<Option<ToolGrammar>, GrammarError> {
    if tools.is_empty() || format == ToolFormat::QwenXml {
        return Ok(None);
    }
    if format == ToolFormat::Generic {
        // The whole reply is one JSON object: a call or an answer, from the first token.
        // Each tool's own definitions move to the root, where its `$ref`s then point.
        let mut defs = Map::new();
        let hoisted: Vec<TemplateTool> = tools
            .iter()
            .enumerate()
            .map(|(i, tool)| TemplateTool {
                parameters: hoist_definitions(&tool.parameters, i, &mut defs),
                ..tool.clone()
            })
            .collect();
        let mut schema = crate::template::generic_reply_schema(&hoisted);
        if !defs.is_empty()
            && let Value::Object(map) = &mut schema
        {
            map.insert("$defs".into(), Value::Object(defs));
        }
        let grammar = llama_cpp_2::json_schema_to_grammar(&schema.to_string())
            .map_err(|e| GrammarError(e.to_string()))?;
        return Ok(Some(ToolGrammar {
            grammar,
            root: "root".into(),
            triggers: Vec::new(),
        }));
    }
    let mut defs = Map::new();
    let mut calls = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let args = format!("suzent-args-{i}");
        let hoisted = hoist_definitions(&tool.parameters, i, &mut defs);
        defs.insert(args.clone(), hoisted);
        let arguments_key = if format == ToolFormat::Llama3 {
            "parameters"
        } else {
            "arguments"
        };
        let mut properties = Map::new();
        properties.insert("name".into(), json!({"const": tool.name}));
        properties.insert(
            arguments_key.into(),
            json!({"$ref": format!("#/$defs/{args}")}),
        );
        calls.push(json!({
            "type": "object",
            "properties": properties,
            "required": ["name", arguments_key],
            "additionalProperties": false,
        }));
    }
    let schema = json!({"$defs": defs, "anyOf": calls});
    let converted = llama_cpp_2::json_schema_to_grammar(&schema.to_string())
        .map_err(|e| GrammarError(e.to_string()))?;
    // `root` is one call object; each tool's arguments are the rule `suzent-args-N`.
    let (wrapper, triggers): (String, Vec<&str>) = match format {
        ToolFormat::Hermes => (
            format!("{ROOT} ::= \"<tool_call>\" \"\\n\"? root \"\\n\"? \"</tool_call>\""),
            vec!["<tool_call>"],
        ),
        ToolFormat::MistralJson => (
            format!("{ROOT} ::= \"[TOOL_CALLS]\" \" \"? \"[\" root \"]\""),
            vec!["[TOOL_CALLS]"],
        ),
        ToolFormat::MistralArgs => {
            let alternatives: Vec<String> = tools
                .iter()
                .enumerate()
                .map(|(i, tool)| {
                    format!(
                        "{} \"[ARGS]\" suzent-args-{i}",
                        Value::String(tool.name.clone())
                    )
                })
                .collect();
            (
                format!("{ROOT} ::= \"[TOOL_CALLS]\" ({})", alternatives.join(" | ")),
                vec!["[TOOL_CALLS]"],
            )
        }
        ToolFormat::Llama3 => (format!("{ROOT} ::= root"), vec!["{\"name\""]),
        ToolFormat::QwenXml | ToolFormat::Generic => return Ok(None),
    };
    Ok(Some(ToolGrammar {
        grammar: format!("{converted}\n{wrapper}\n"),
        root: ROOT.to_string(),
        triggers: if required {
            Vec::new()
        } else {
            triggers.into_iter().map(str::to_string).collect()
        },
    }))
}

/// The tool's schema with its own `$defs`/`definitions` moved to the shared root as
/// `suzent-N-NAME` and its `$ref`s rewritten to match, so schemas of different tools cannot
/// collide.
fn hoist_definitions(schema: &Value, tool: usize, root: &mut Map<String, Value>) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(map) = &mut schema {
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = map.remove(key) {
                for (name, def) in defs {
                    let mut def = def;
                    rewrite_refs(&mut def, tool);
                    root.insert(format!("suzent-{tool}-{name}"), def);
                }
            }
        }
        map.remove("$schema");
    }
    rewrite_refs(&mut schema, tool);
    schema
}

fn rewrite_refs(value: &mut Value, tool: usize) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get_mut("$ref") {
                for prefix in ["#/$defs/", "#/definitions/"] {
                    if let Some(name) = reference.strip_prefix(prefix) {
                        *reference = format!("#/$defs/suzent-{tool}-{name}");
                        break;
                    }
                }
            }
            for item in map.values_mut() {
                rewrite_refs(item, tool);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rewrite_refs(item, tool)),
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn read_file() -> TemplateTool {
        TemplateTool {
            name: "read_file".into(),
            description: "Reads a file.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "range": {"$ref": "#/$defs/Range"}},
                "required": ["path"],
                "$defs": {"Range": {"type": "object", "properties": {"start": {"type": "integer"}}}}
            }),
        }
    }

    #[test]
    fn definitions_of_each_tool_move_to_the_root_under_their_own_names() {
        let mut root = Map::new();
        let moved = hoist_definitions(&read_file().parameters, 3, &mut root);
        assert_eq!(
            moved["properties"]["range"],
            json!({"$ref": "#/$defs/suzent-3-Range"})
        );
        assert_eq!(root.keys().collect::<Vec<_>>(), ["suzent-3-Range"]);
    }

    #[test]
    fn the_hermes_grammar_is_lazy_on_the_tool_call_tag_and_names_the_tool() {
        let grammar = tool_grammar(&[read_file()], ToolFormat::Hermes, false)
            .unwrap()
            .unwrap();
        assert_eq!(grammar.triggers, ["<tool_call>"]);
        assert_eq!(grammar.root, "suzent-calls");
        assert!(
            grammar.grammar.contains("suzent-args-0"),
            "{}",
            grammar.grammar
        );
        assert!(grammar.grammar.contains("read_file"), "{}", grammar.grammar);
    }

    #[test]
    fn a_required_call_applies_the_grammar_from_the_first_token() {
        let grammar = tool_grammar(&[read_file()], ToolFormat::MistralArgs, true)
            .unwrap()
            .unwrap();
        assert!(grammar.triggers.is_empty());
        assert!(
            grammar
                .grammar
                .contains("\"[TOOL_CALLS]\" (\"read_file\" \"[ARGS]\" suzent-args-0)"),
            "{}",
            grammar.grammar
        );
    }

    #[test]
    fn the_generic_grammar_applies_from_the_first_token() {
        let grammar = tool_grammar(&[read_file()], ToolFormat::Generic, false)
            .unwrap()
            .unwrap();
        assert!(grammar.triggers.is_empty());
        assert!(
            grammar.grammar.contains("tool_call") && grammar.grammar.contains("response"),
            "{}",
            grammar.grammar
        );
    }

    #[test]
    fn qwen_xml_and_no_tools_have_no_grammar() {
        assert_eq!(
            tool_grammar(&[read_file()], ToolFormat::QwenXml, false).unwrap(),
            None
        );
        assert_eq!(tool_grammar(&[], ToolFormat::Hermes, false).unwrap(), None);
    }
}
