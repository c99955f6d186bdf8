//! Transcript messages, provider-neutral.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tool call as the model made it. `arguments` keeps the raw JSON text the model streamed, so a
/// malformed call is stored faithfully; [`parse_tool_arguments`] parses it strictly.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The call's id. In a stored transcript, the step id the runtime claimed for it, unique
    /// across chats (the provider's id when it was free, else `call_` and 32 hex digits: issue 13
    /// item 1); in a provider's response, the provider's id, which may repeat or be empty.
    pub id: String,
    /// Tool runtime name as the model wrote it.
    pub name: String,
    /// Raw JSON text of the arguments.
    pub arguments: String,
}

impl ToolCall {
    /// The arguments as a JSON object for replaying history to a provider: the parsed object, or
    /// `{}` when the model's text was not a valid object (the error already went back as a result).
    pub fn arguments_for_history(&self) -> Value {
        parse_tool_arguments(&self.arguments).unwrap_or_else(|_| Value::Object(Map::new()))
    }
}

/// Parses tool-call arguments strictly: a JSON object, or empty/whitespace-only text or `""`
/// meaning `{}` (public case model-io 2). Anything else is an error message the model can act on.
pub fn parse_tool_arguments(raw: &str) -> Result<Value, String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() || trimmed == "\"\"" || trimmed == "null" {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Object(map)) => Ok(Value::Object(map)),
        Ok(other) => Err(format!(
            "tool arguments must be a JSON object, got {}",
            match other {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "null",
            }
        )),
        Err(e) => Err(format!(
            "tool arguments are not valid JSON ({e}); the call was not run. Send the call again with complete JSON arguments"
        )),
    }
}

/// One message of a chat transcript.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// What the user wrote (or an inbox message addressed to the agent).
    User {
        /// The text.
        text: String,
    },
    /// What the model answered in one step.
    Assistant {
        /// Streamed text (may be empty when the step only calls tools).
        #[serde(default)]
        text: String,
        /// Tool calls in the order the model made them.
        #[serde(default, rename = "toolCalls")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    Tool {
        /// The call this answers.
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        /// The tool's runtime name.
        #[serde(rename = "toolName")]
        tool_name: String,
        /// Output text given to the model.
        content: String,
        /// Whether the call failed, was refused or was rejected.
        #[serde(default, rename = "isError")]
        is_error: bool,
    },
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn empty_string_arguments_mean_an_empty_object() {
        assert_eq!(parse_tool_arguments("\"\""), Ok(serde_json::json!({})));
        assert_eq!(parse_tool_arguments(""), Ok(serde_json::json!({})));
        assert_eq!(parse_tool_arguments("  "), Ok(serde_json::json!({})));
    }

    #[test]
    fn truncated_arguments_are_an_error() {
        let err = parse_tool_arguments("{\"file_path\": \"a.txt\"").unwrap_err();
        assert!(err.contains("not valid JSON"), "{err}");
    }

    #[test]
    fn non_object_arguments_are_an_error() {
        assert!(
            parse_tool_arguments("[1]")
                .unwrap_err()
                .contains("an array")
        );
    }

    #[test]
    fn malformed_history_arguments_replay_as_empty_object() {
        let call = ToolCall {
            id: "c".into(),
            name: "read_file".into(),
            arguments: "{\"a\":".into(),
        };
        assert_eq!(call.arguments_for_history(), serde_json::json!({}));
    }
}
