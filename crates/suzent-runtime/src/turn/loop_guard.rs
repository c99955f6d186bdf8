//! The loop guard (issue #13 item 6, public case R2-L09): small models repeat the same call
//! forever. A call is fingerprinted with its result (tool name, arguments as JSON, result text
//! and error flag), so a polling call whose output changes is never flagged. After the
//! [`WARN_AT`]th identical (call, result) in a row the model is warned in the request (the warning
//! is not stored); the [`STOP_AT`]th identical call is not run, and the turn ends with the outcome
//! `loop_detected`. A same failing call repeats the same (call, error) pair and is caught the
//! same way. The streak counts only this turn's calls: a new user message starts afresh.

use serde_json::Value;
use suzent_core::{ChatMessage, ToolCall, parse_tool_arguments};
use suzent_store::StoredMessage;

/// Identical (call, result) pairs in a row after which the model is warned.
pub const WARN_AT: usize = 3;
/// The identical call that is not run: the turn stops as `loop_detected`.
pub const STOP_AT: usize = 5;

/// A run of identical (call, result) pairs at the end of the current turn.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Streak {
    /// The tool name.
    pub(super) tool: String,
    /// The arguments (parsed JSON; the raw text as a string when they do not parse).
    pub(super) args: Value,
    /// How many identical pairs in a row.
    pub(super) count: usize,
}

fn args_of(call: &ToolCall) -> Value {
    parse_tool_arguments(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()))
}

/// The streak of identical (call, result) pairs that ends the transcript's current turn (after
/// its last user message), in the order the results were stored. `None` without answered calls.
pub(super) fn streak(messages: &[StoredMessage]) -> Option<Streak> {
    let start = messages
        .iter()
        .rposition(|m| matches!(m.message, ChatMessage::User { .. }))
        .map_or(0, |i| i + 1);
    let mut calls: Vec<&ToolCall> = Vec::new();
    // Each result with its call; arguments are parsed only for the results the streak reaches.
    let mut pairs: Vec<(&ToolCall, &str, bool)> = Vec::new();
    for m in &messages[start..] {
        match &m.message {
            ChatMessage::Assistant { tool_calls, .. } => calls.extend(tool_calls.iter()),
            ChatMessage::Tool {
                tool_call_id,
                content,
                is_error,
                ..
            } => {
                if let Some(call) = calls.iter().find(|c| &c.id == tool_call_id) {
                    pairs.push((call, content, *is_error));
                }
            }
            ChatMessage::User { .. } => {}
        }
    }
    let &(last_call, last_content, last_error) = pairs.last()?;
    let last_args = args_of(last_call);
    let count = pairs
        .iter()
        .rev()
        .take_while(|(call, content, is_error)| {
            call.name == last_call.name
                && *content == last_content
                && *is_error == last_error
                && args_of(call) == last_args
        })
        .count();
    Some(Streak {
        tool: last_call.name.clone(),
        args: last_args,
        count,
    })
}

impl Streak {
    /// Whether `call` is the same call (tool and arguments) as the streak's.
    pub(super) fn matches(&self, call: &ToolCall) -> bool {
        call.name == self.tool && args_of(call) == self.args
    }
}

/// The reason `call` must not run: it would be the [`STOP_AT`]th identical call in a row.
pub(super) fn blocks(messages: &[StoredMessage], call: &ToolCall) -> Option<String> {
    let streak = streak(messages)?;
    (streak.count + 1 >= STOP_AT && streak.matches(call)).then(|| {
        format!(
            "loop detected: {} was called {} times in a row with the same arguments and got the same result each time; this call did not run and the turn was stopped. Try a different approach.",
            call.name, streak.count
        )
    })
}

/// The warning added to what the model sees of the last result when the streak is at least
/// [`WARN_AT`] long, or `None`.
pub(super) fn warning(messages: &[StoredMessage]) -> Option<String> {
    let streak = streak(messages)?;
    (streak.count >= WARN_AT).then(|| {
        format!(
            "[Suzent loop guard] You called {} {} times in a row with the same arguments and got the same result each time. Repeating it will not change the result: do something different or give your answer. A {} identical call will not run and ends the turn.",
            streak.tool,
            streak.count,
            ordinal(STOP_AT)
        )
    })
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Adds `warning` to the last tool result of the request's messages (what the model sees).
pub(super) fn inject(messages: &mut [ChatMessage], warning: &str) {
    if let Some(ChatMessage::Tool { content, .. }) = messages
        .iter_mut()
        .rev()
        .find(|m| matches!(m, ChatMessage::Tool { .. }))
    {
        content.push_str("\n\n");
        content.push_str(warning);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn stored(messages: Vec<ChatMessage>) -> Vec<StoredMessage> {
        messages
            .into_iter()
            .enumerate()
            .map(|(i, message)| StoredMessage {
                seq: i as i64 + 1,
                run_id: None,
                message,
                created_at: chrono::Utc::now(),
            })
            .collect()
    }

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        }
    }

    /// A turn of `n` steps, each one call of `name` with `args` answered by `result(i)`.
    fn turn(
        n: usize,
        name: &str,
        args: &str,
        result: impl Fn(usize) -> String,
    ) -> Vec<ChatMessage> {
        let mut out = vec![ChatMessage::User {
            text: "go".into(),
            attachments: Vec::new(),
        }];
        for i in 0..n {
            let id = format!("c{i}");
            out.push(ChatMessage::Assistant {
                text: String::new(),
                tool_calls: vec![call(&id, name, args)],
            });
            out.push(ChatMessage::Tool {
                tool_call_id: id,
                tool_name: name.into(),
                content: result(i),
                is_error: false,
            });
        }
        out
    }

    #[test]
    fn four_identical_pairs_make_a_streak_of_four_that_blocks_the_fifth() {
        let args = r##"{"path":"store.md","content":"# Tutorials"}"##;
        let messages = stored(turn(4, "write_file", args, |_| "wrote store.md".into()));
        assert_eq!(
            streak(&messages),
            Some(Streak {
                tool: "write_file".into(),
                args: serde_json::json!({"path": "store.md", "content": "# Tutorials"}),
                count: 4
            })
        );
        // Key order does not make a different call.
        let same = call(
            "c9",
            "write_file",
            r##"{"content":"# Tutorials","path":"store.md"}"##,
        );
        assert!(blocks(&messages, &same).is_some());
        assert!(
            blocks(
                &messages,
                &call("c9", "write_file", r#"{"path":"other.md"}"#)
            )
            .is_none()
        );
    }

    #[test]
    fn the_warning_starts_at_the_third_identical_pair() {
        let at = |n| warning(&stored(turn(n, "read_file", "{}", |_| "same".into()))).is_some();
        assert_eq!((at(2), at(3), at(4)), (false, true, true));
    }

    #[test]
    fn a_polling_call_with_changing_output_is_never_flagged() {
        let messages = stored(turn(10, "check_command", r#"{"id":"bg1"}"#, |i| {
            format!("running, {i} lines of output")
        }));
        assert_eq!(streak(&messages).map(|s| s.count), Some(1));
        assert!(warning(&messages).is_none());
        assert!(blocks(&messages, &call("c", "check_command", r#"{"id":"bg1"}"#)).is_none());
    }

    #[test]
    fn a_new_user_message_starts_the_streak_afresh() {
        let mut messages = turn(4, "read_file", "{}", |_| "same".into());
        messages.extend(turn(1, "read_file", "{}", |_| "same".into()));
        assert_eq!(streak(&stored(messages)).map(|s| s.count), Some(1));
    }

    #[test]
    fn the_warning_is_added_to_the_last_tool_result_only() {
        let mut messages = turn(2, "read_file", "{}", |i| format!("r{i}"));
        inject(&mut messages, "careful");
        let contents: Vec<String> = messages
            .iter()
            .filter_map(|m| match m {
                ChatMessage::Tool { content, .. } => Some(content.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            contents,
            vec!["r0".to_string(), "r1\n\ncareful".to_string()]
        );
    }
}
