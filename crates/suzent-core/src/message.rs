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

/// A file attached to a user message (issue 19 item 4): copied into the chat's workspace under
/// [`ATTACHMENTS_DIR`] and referenced by path. Images also go to models that take images.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    /// The file's path relative to the chat's workspace, `/`-separated
    /// (e.g. `.attachments/3f2a9c1d/report.pdf`).
    pub path: String,
    /// The name the file had when the user attached it.
    pub name: String,
    /// Its media type, from the file's extension (`application/octet-stream` when unknown).
    pub mime: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// An image's bytes in base64 (standard alphabet, padded), set by the runtime just before a
    /// request to a model that takes images; never stored or sent to the UI.
    #[serde(skip)]
    pub data: Option<std::sync::Arc<str>>,
}

/// The folder inside a workspace where attachments are kept, one subfolder per chat.
pub const ATTACHMENTS_DIR: &str = ".attachments";

impl Attachment {
    /// Whether this is an image a model may be shown (PNG, JPEG, GIF or WebP: the formats the
    /// OpenAI, Anthropic and Gemini APIs all take).
    pub fn is_image(&self) -> bool {
        matches!(
            self.mime.as_str(),
            "image/png" | "image/jpeg" | "image/gif" | "image/webp"
        )
    }

    /// The line that tells the model about the file, e.g.
    /// `[attached: .attachments/3f2a9c1d/notes.txt (text/plain, 1.2 kB)]`.
    pub fn reference(&self) -> String {
        format!(
            "[attached: {} ({}, {})]",
            self.path,
            self.mime,
            crate::text::human_bytes(self.bytes)
        )
    }
}

impl ChatMessage {
    /// A user message without attachments.
    pub fn user(text: impl Into<String>) -> Self {
        ChatMessage::User {
            text: text.into(),
            attachments: Vec::new(),
        }
    }

    /// The images of a user message that carry their bytes (see [`Attachment::data`]), as
    /// `(media type, base64)`, in attachment order. Empty for other roles.
    pub fn inline_images(&self) -> Vec<(&str, &str)> {
        match self {
            ChatMessage::User { attachments, .. } => attachments
                .iter()
                .filter_map(|a| a.data.as_deref().map(|d| (a.mime.as_str(), d)))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The text a model is given for a user message: the text, then one
    /// [`Attachment::reference`] line per attachment. `None` for other roles.
    pub fn user_text_for_model(&self) -> Option<String> {
        match self {
            ChatMessage::User { text, attachments } if attachments.is_empty() => Some(text.clone()),
            ChatMessage::User { text, attachments } => {
                let mut out = text.clone();
                for a in attachments {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(&a.reference());
                }
                Some(out)
            }
            _ => None,
        }
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
        /// Files the user attached (dropped or pasted), already copied into the chat's
        /// workspace. Older transcripts have none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<Attachment>,
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
    fn a_user_message_tells_the_model_where_each_attachment_is() {
        let m = ChatMessage::User {
            text: "Summarize these".into(),
            attachments: vec![
                Attachment {
                    path: ".attachments/c1/notes.txt".into(),
                    name: "notes.txt".into(),
                    mime: "text/plain".into(),
                    bytes: 1200,
                    data: None,
                },
                Attachment {
                    path: ".attachments/c1/shot.png".into(),
                    name: "shot.png".into(),
                    mime: "image/png".into(),
                    bytes: 3 * 1024 * 1024,
                    data: None,
                },
            ],
        };
        assert_eq!(
            m.user_text_for_model().unwrap(),
            "Summarize these\n[attached: .attachments/c1/notes.txt (text/plain, 1.2 kB)]\n[attached: .attachments/c1/shot.png (image/png, 3.1 MB)]"
        );
        // Stored transcripts without the field still read, and none is written when empty.
        let old: ChatMessage = serde_json::from_str(r#"{"role":"user","text":"hi"}"#).unwrap();
        assert_eq!(old, ChatMessage::user("hi"));
        assert_eq!(
            serde_json::to_string(&ChatMessage::user("hi")).unwrap(),
            r#"{"role":"user","text":"hi"}"#
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
