//! What the Anthropic and Gemini request bodies share: their turns must alternate between the
//! user and the model, so consecutive transcript messages of one role (parallel tool results, a
//! user message after them) become one turn. OpenAI-style messages need no merging.

use serde_json::Value;

/// Merges `messages` (each a role and its parts, in transcript order) into alternating turns:
/// messages without parts are left out; a message joining a turn of its role adds its parts at
/// the end, except answers (`is_answer`: tool results), which go after the answers already there
/// and before the other parts, since they answer the previous model turn.
pub(crate) fn merge_turns(
    messages: impl IntoIterator<Item = (&'static str, Vec<Value>)>,
    is_answer: fn(&Value) -> bool,
) -> Vec<(&'static str, Vec<Value>)> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for (role, parts) in messages {
        if parts.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((last_role, last_parts)) if *last_role == role => {
                if parts.iter().any(is_answer) {
                    let at = last_parts.iter().take_while(|p| is_answer(p)).count();
                    for (n, part) in parts.into_iter().enumerate() {
                        last_parts.insert(at + n, part);
                    }
                } else {
                    last_parts.extend(parts);
                }
            }
            _ => out.push((role, parts)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn answer(p: &Value) -> bool {
        p.get("answer").is_some()
    }

    #[test]
    fn answers_join_the_front_of_a_turn_and_empty_messages_vanish() {
        let turns = merge_turns(
            [
                ("model", vec![json!({"call": 1})]),
                ("user", vec![json!({"answer": 1})]),
                ("user", vec![json!({"text": "more"})]),
                ("user", vec![]),
                ("user", vec![json!({"answer": 2})]),
            ],
            answer,
        );
        assert_eq!(
            turns,
            vec![
                ("model", vec![json!({"call": 1})]),
                (
                    "user",
                    vec![
                        json!({"answer": 1}),
                        json!({"answer": 2}),
                        json!({"text": "more"})
                    ]
                ),
            ]
        );
    }
}
