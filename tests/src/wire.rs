//! The frames of each provider's stream, as the real APIs send them.

use serde_json::{Value, json};

use crate::scripted::{Chunking, Item, Turn};

/// Cuts `text` into pieces of `size` characters (`None`: one piece; empty text: no piece).
fn pieces(text: &str, size: Option<usize>) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let Some(size) = size else {
        return vec![text.to_string()];
    };
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn sse_data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

fn sse_event(name: &str, value: &Value) -> String {
    format!("event: {name}\ndata: {value}\n\n")
}

/// The JSON body of a 404.
pub(crate) fn not_found(path: &str) -> String {
    json!({"error": {"message": format!("scripted server: no endpoint {path}"), "type": "not_found"}})
        .to_string()
}

fn tool_calls(turn: &Turn) -> Vec<(&str, &str, &str)> {
    turn.items
        .iter()
        .filter_map(|item| match item {
            Item::ToolCall {
                id,
                name,
                arguments,
            } => Some((id.as_str(), name.as_str(), arguments.as_str())),
            Item::Text(_) => None,
        })
        .collect()
}

/// Round-robin over queues: the first element of each, then the second of each, ...
fn interleave<T>(queues: Vec<Vec<T>>) -> Vec<T> {
    let mut iters: Vec<_> = queues.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    loop {
        let mut any = false;
        for it in iters.iter_mut() {
            if let Some(x) = it.next() {
                out.push(x);
                any = true;
            }
        }
        if !any {
            return out;
        }
    }
}

/// OpenAI chat completions chunks: role chunk, content deltas, tool-call deltas, the finish
/// chunk, the usage chunk (`stream_options.include_usage`) and `data: [DONE]`.
pub(crate) fn openai_frames(turn: &Turn, model: &str) -> Vec<String> {
    let size = turn.chunking.piece_size();
    let chunk = |delta: Value, finish: Value| {
        sse_data(&json!({
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "system_fingerprint": "fp_scripted",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        }))
    };
    let mut frames = vec![chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        Value::Null,
    )];
    for item in &turn.items {
        if let Item::Text(text) = item {
            for piece in pieces(text, size) {
                frames.push(chunk(json!({"content": piece}), Value::Null));
            }
        }
    }
    let calls = tool_calls(turn);
    let shared = turn.chunking == Chunking::SharedIndexDistinctIds;
    let queues: Vec<Vec<String>> = calls
        .iter()
        .enumerate()
        .map(|(n, (id, name, arguments))| {
            let index = if shared { 0 } else { n };
            let mut queue = vec![chunk(
                json!({"tool_calls": [{
                    "index": index, "id": id, "type": "function",
                    "function": {"name": name, "arguments": ""}
                }]}),
                Value::Null,
            )];
            for piece in pieces(arguments, size) {
                queue.push(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                    Value::Null,
                ));
            }
            queue
        })
        .collect();
    if turn.chunking == Chunking::InterleavedParallel {
        frames.extend(interleave(queues));
    } else {
        frames.extend(queues.into_iter().flatten());
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    frames.push(chunk(json!({}), json!(finish)));
    frames.push(sse_data(&json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "system_fingerprint": "fp_scripted",
        "choices": [],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
    })));
    frames.push("data: [DONE]\n\n".to_string());
    frames
}

/// Anthropic messages events: message_start, per block content_block_start / (ping after the
/// first) / content_block_delta... / content_block_stop, message_delta, message_stop.
pub(crate) fn anthropic_frames(turn: &Turn, model: &str) -> Vec<String> {
    let size = turn.chunking.piece_size();
    let mut frames = vec![sse_event(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 12, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": 1}
        }}),
    )];
    let ping = sse_event("ping", &json!({"type": "ping"}));
    let start = |index: usize, block: Value| {
        sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": block}),
        )
    };
    let delta = |index: usize, delta: Value| {
        sse_event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        )
    };
    let stop = |index: usize| {
        sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        )
    };

    let mut index = 0usize;
    let mut pinged = false;
    let mut push_ping = |frames: &mut Vec<String>| {
        if !pinged {
            frames.push(ping.clone());
            pinged = true;
        }
    };
    for item in &turn.items {
        if let Item::Text(text) = item {
            frames.push(start(index, json!({"type": "text", "text": ""})));
            push_ping(&mut frames);
            for piece in pieces(text, size) {
                frames.push(delta(index, json!({"type": "text_delta", "text": piece})));
            }
            frames.push(stop(index));
            index += 1;
        }
    }
    let calls = tool_calls(turn);
    let tool_block = |index: usize, id: &str, name: &str| {
        start(
            index,
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
        )
    };
    let json_deltas = |index: usize, arguments: &str| -> Vec<String> {
        std::iter::once(String::new())
            .chain(pieces(arguments, size))
            .map(|piece| {
                delta(
                    index,
                    json!({"type": "input_json_delta", "partial_json": piece}),
                )
            })
            .collect()
    };
    match turn.chunking {
        Chunking::InterleavedParallel => {
            let first = index;
            for (n, (id, name, _)) in calls.iter().enumerate() {
                frames.push(tool_block(first + n, id, name));
                push_ping(&mut frames);
            }
            frames.extend(interleave(
                calls
                    .iter()
                    .enumerate()
                    .map(|(n, (_, _, args))| json_deltas(first + n, args))
                    .collect(),
            ));
            for n in 0..calls.len() {
                frames.push(stop(first + n));
            }
        }
        Chunking::SharedIndexDistinctIds => {
            for (id, name, args) in &calls {
                frames.push(tool_block(index, id, name));
                push_ping(&mut frames);
                frames.extend(json_deltas(index, args));
                frames.push(stop(index));
            }
        }
        _ => {
            for (id, name, args) in &calls {
                frames.push(tool_block(index, id, name));
                push_ping(&mut frames);
                frames.extend(json_deltas(index, args));
                frames.push(stop(index));
                index += 1;
            }
        }
    }
    let stop_reason = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    frames.push(sse_event(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                "usage": {"output_tokens": 7}}),
    ));
    frames.push(sse_event("message_stop", &json!({"type": "message_stop"})));
    frames
}

/// Gemini `streamGenerateContent?alt=sse` chunks (`data: {...}\r\n\r\n`): text pieces, function
/// calls as whole objects; `finishReason` on the last chunk. Arguments that are not a JSON object
/// (a malformed script) are sent as a JSON string, which the real API never does.
pub(crate) fn gemini_frames(turn: &Turn, model: &str) -> Vec<String> {
    let size = turn.chunking.piece_size();
    let mut chunks: Vec<Vec<Value>> = Vec::new();
    for item in &turn.items {
        if let Item::Text(text) = item {
            for piece in pieces(text, size) {
                chunks.push(vec![json!({"text": piece})]);
            }
        }
    }
    let calls: Vec<Value> = tool_calls(turn)
        .iter()
        .map(|(_, name, arguments)| {
            let args = match serde_json::from_str::<Value>(arguments) {
                Ok(Value::Object(map)) => Value::Object(map),
                _ => Value::String((*arguments).to_string()),
            };
            json!({"functionCall": {"name": name, "args": args}})
        })
        .collect();
    if !calls.is_empty() {
        if matches!(turn.chunking, Chunking::Fragments { .. }) {
            chunks.extend(calls.into_iter().map(|c| vec![c]));
        } else {
            chunks.push(calls);
        }
    }
    if chunks.is_empty() {
        chunks.push(vec![json!({"text": ""})]);
    }
    let last = chunks.len() - 1;
    chunks
        .into_iter()
        .enumerate()
        .map(|(n, parts)| {
            let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
            if n == last {
                candidate["finishReason"] = json!("STOP");
            }
            let value = json!({
                "candidates": [candidate],
                "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 7, "totalTokenCount": 19},
                "modelVersion": model,
                "responseId": "scripted",
            });
            format!("data: {value}\r\n\r\n")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_split_on_characters() {
        assert_eq!(pieces("héllo", Some(2)), vec!["hé", "ll", "o"]);
        assert_eq!(pieces("", Some(2)), Vec::<String>::new());
        assert_eq!(pieces("abc", None), vec!["abc"]);
    }

    #[test]
    fn shared_index_frames_reuse_index_zero_with_distinct_ids() {
        let turn = Turn::tool_calls(vec![
            Item::tool_call("call_a", "f", r#"{"a":1}"#),
            Item::tool_call("call_b", "f", r#"{"b":2}"#),
        ])
        .chunked(Chunking::SharedIndexDistinctIds);
        let frames = openai_frames(&turn, "m");
        let headers: Vec<&String> = frames
            .iter()
            .filter(|f| f.contains("\"id\":\"call_"))
            .collect();
        assert_eq!(headers.len(), 2);
        assert!(headers.iter().all(|f| f.contains("\"index\":0")));
        assert!(!frames.iter().any(|f| f.contains("\"index\":1,")));
    }

    #[test]
    fn interleaved_frames_alternate_between_calls() {
        let turn = Turn::tool_calls(vec![
            Item::tool_call("call_a", "f", r#"{"a":111}"#),
            Item::tool_call("call_b", "f", r#"{"b":222}"#),
        ])
        .chunked(Chunking::InterleavedParallel);
        let order: Vec<u64> = openai_frames(&turn, "m")
            .iter()
            .filter_map(|f| serde_json::from_str::<Value>(f.strip_prefix("data: ")?.trim()).ok())
            .filter_map(|v| v["choices"][0]["delta"]["tool_calls"][0]["index"].as_u64())
            .collect();
        assert_eq!(&order[..4], &[0, 1, 0, 1]);
    }

    #[test]
    fn anthropic_frames_follow_the_event_sequence() {
        let frames = anthropic_frames(&Turn::text("hi"), "m");
        let events: Vec<&str> = frames
            .iter()
            .filter_map(|f| f.lines().next()?.strip_prefix("event: "))
            .collect();
        assert_eq!(
            events,
            [
                "message_start",
                "content_block_start",
                "ping",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
    }

    #[test]
    fn openai_ends_with_done() {
        let frames = openai_frames(&Turn::text("hi"), "m");
        assert_eq!(frames.last().map(String::as_str), Some("data: [DONE]\n\n"));
    }
}
