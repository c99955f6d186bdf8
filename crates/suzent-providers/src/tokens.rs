//! Token counting for fitting requests to a context window: a conservative estimate, since the
//! providers' tokenizers are not all public (Anthropic's and Gemini's are not) and a local one
//! would need its vocabulary at run time.
//!
//! The estimate is an upper bound for common text: one token per [`BYTES_PER_TOKEN`] bytes of
//! UTF-8 (English prose runs near 4 bytes a token, code near 3.5, CJK 3 bytes a character and
//! about a token each), plus a fixed overhead per message, per tool call and per tool
//! definition for the wire format's structure (roles, ids, JSON keys). It costs one length
//! read per string, so a whole transcript is counted in microseconds; a tool's schema is
//! serialized once to measure it.

use crate::{ModelRequest, ToolDefinition};
use suzent_core::ChatMessage;

/// Bytes counted as one token.
pub const BYTES_PER_TOKEN: usize = 3;
/// Tokens added for each message (role, separators, the JSON around the content).
pub const MESSAGE_OVERHEAD: usize = 16;
/// Tokens added for each tool call (its id, type and the JSON around name and arguments).
pub const CALL_OVERHEAD: usize = 24;
/// Tokens added for each tool definition.
pub const TOOL_OVERHEAD: usize = 12;
/// Tokens added once per request (system prompt framing, reply priming).
pub const REQUEST_OVERHEAD: usize = 16;

/// The tokens one image is counted as: about what OpenAI, Anthropic and Gemini charge for an
/// image of 1–1.5 megapixels (Anthropic's `width * height / 750` for 1092×1092 is 1,590).
pub const IMAGE_TOKENS: usize = 1_600;

/// The length in bytes of `value` serialized as compact JSON (what `value.to_string().len()`
/// gives), counted without building the string.
pub fn json_len(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a Value to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// The estimated tokens of `text`: its UTF-8 bytes divided by [`BYTES_PER_TOKEN`], rounded up.
pub fn text_tokens(text: &str) -> usize {
    text.len().div_ceil(BYTES_PER_TOKEN)
}

/// The estimated tokens of one transcript message, with its overhead.
pub fn message_tokens(message: &ChatMessage) -> usize {
    MESSAGE_OVERHEAD
        + match message {
            ChatMessage::User { .. } => {
                text_tokens(&message.user_text_for_model().unwrap_or_default())
                    + IMAGE_TOKENS * message.inline_images().len()
            }
            ChatMessage::Assistant { text, tool_calls } => {
                text_tokens(text)
                    + tool_calls
                        .iter()
                        .map(|c| {
                            CALL_OVERHEAD
                                + text_tokens(&c.id)
                                + text_tokens(&c.name)
                                + text_tokens(&c.arguments)
                        })
                        .sum::<usize>()
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
                ..
            } => text_tokens(tool_call_id) + text_tokens(content),
        }
}

/// The estimated tokens of one tool definition (its schema serialized once).
pub fn tool_tokens(tool: &ToolDefinition) -> usize {
    TOOL_OVERHEAD
        + text_tokens(&tool.name)
        + text_tokens(&tool.description)
        + json_len(&tool.parameters).div_ceil(BYTES_PER_TOKEN)
}

/// The estimated tokens of what every request of a step repeats: the system prompt and the
/// tool definitions.
pub fn fixed_tokens(system: &str, tools: &[ToolDefinition]) -> usize {
    fixed_tokens_with(system, tools_tokens(tools))
}

/// [`fixed_tokens`] with the tool definitions already counted (`tools_tokens`, from
/// [`tools_tokens`]): a run that offers the same definitions again counts them once.
pub fn fixed_tokens_with(system: &str, tools_tokens: usize) -> usize {
    REQUEST_OVERHEAD + text_tokens(system) + tools_tokens
}

/// The estimated tokens of `tools`' definitions ([`tool_tokens`] summed).
pub fn tools_tokens(tools: &[ToolDefinition]) -> usize {
    tools.iter().map(tool_tokens).sum()
}

/// The estimated prompt tokens of a whole request.
pub fn request_tokens(request: &ModelRequest) -> usize {
    fixed_tokens(&request.system, &request.tools)
        + request.messages.iter().map(message_tokens).sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use suzent_core::ToolCall;

    #[test]
    fn json_len_is_the_length_of_the_serialized_value() {
        for value in [
            serde_json::json!({"type": "object", "properties": {"path": {"type": "string", "description": "a \"quoted\" é path"}}}),
            serde_json::json!([1, 2.5, null, true, "x"]),
            serde_json::json!("plain"),
        ] {
            assert_eq!(json_len(&value), value.to_string().len());
        }
    }

    #[test]
    fn the_estimate_counts_bytes_by_three_plus_each_messages_overhead() {
        let messages = [
            ChatMessage::User {
                text: "a".repeat(30),
                attachments: Vec::new(),
            },
            ChatMessage::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: "{\"path\":\"a\"}".into(),
                }],
            },
            ChatMessage::Tool {
                tool_call_id: "call_1".into(),
                tool_name: "read_file".into(),
                content: "é".repeat(3),
                is_error: false,
            },
        ];
        let counts: Vec<usize> = messages.iter().map(message_tokens).collect();
        assert_eq!(counts, vec![16 + 10, 16 + 24 + 2 + 3 + 4, 16 + 2 + 2]);
    }

    #[test]
    fn english_and_code_estimate_above_their_real_token_counts() {
        // "The quick brown fox jumps over the lazy dog." is 10 tokens in cl100k and o200k.
        assert!(text_tokens("The quick brown fox jumps over the lazy dog.") >= 10);
        // `fn main() { println!("hello"); }` is 10 tokens in cl100k.
        assert!(text_tokens("fn main() { println!(\"hello\"); }") >= 10);
    }
}
