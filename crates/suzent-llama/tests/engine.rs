//! The engine with a real model on the CPU: SmolLM2-135M-Instruct (a GGUF from PyPI, see
//! scripts/setup-tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::time::Duration;
use suzent_core::ChatMessage;
use suzent_llama::{
    EngineOptions, Finish, GenerateRequest, LlamaError, LocalEngine, TemplateTool, ToolChoice,
};

fn engine() -> LocalEngine {
    LocalEngine::new(EngineOptions {
        context_size: Some(2048),
        threads: Some(2),
        ..EngineOptions::default()
    })
}

fn ask(text: &str, max_tokens: u32) -> GenerateRequest {
    GenerateRequest {
        system: "You are a helpful assistant.".into(),
        messages: vec![ChatMessage::User {
            text: text.into(),
            attachments: Vec::new(),
        }],
        tools: Vec::new(),
        tool_choice: ToolChoice::Auto,
        max_tokens,
        temperature: 0.0,
        seed: 0,
    }
}

fn read_file_tool() -> TemplateTool {
    TemplateTool {
        name: "read_file".into(),
        description: "Reads a text file.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "File path."}},
            "required": ["path"],
            "additionalProperties": false
        }),
    }
}

#[test]
fn smollm2_streams_its_answer_in_pieces() -> anyhow::Result<()> {
    let engine = engine();
    let mut pieces = Vec::new();
    let generation = engine.generate(
        &common::smollm2(),
        ask("Name three colours.", 24),
        &mut |piece| pieces.push(piece.to_string()),
    )?;
    assert!(pieces.len() > 3, "{pieces:?}");
    assert_eq!(pieces.concat(), generation.text);
    assert!(!generation.text.trim().is_empty());
    assert!(generation.completion_tokens > 3);
    assert!(generation.prompt_tokens > 10);
    assert!(!generation.constrained);
    Ok(())
}

#[test]
fn a_required_call_under_the_grammar_names_the_tool_with_valid_arguments() -> anyhow::Result<()> {
    let engine = engine();
    let mut request = ask("Show me the file notes.txt.", 64);
    request.tools = vec![read_file_tool()];
    request.tool_choice = ToolChoice::Required;
    let generation = engine.generate(&common::smollm2(), request, &mut |_| {})?;
    assert!(generation.constrained);
    assert_eq!(generation.finish, Finish::Stop, "{:?}", generation.text);
    // SmolLM2's template knows no tools: the generic reply object, enforced by the grammar.
    let reply: Value = serde_json::from_str(generation.text.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", generation.text));
    let body = reply["tool_call"].to_string();
    let call: Value = serde_json::from_str(&body)?;
    assert_eq!(call["name"], "read_file", "{call}");
    assert!(call["arguments"]["path"].is_string(), "{call}");
    assert_eq!(
        call["arguments"].as_object().map(|o| o.len()),
        Some(1),
        "{call}"
    );
    Ok(())
}

#[test]
fn a_read_file_call_under_the_grammar_and_its_result_in_the_next_request_give_the_answer()
-> anyhow::Result<()> {
    let engine = engine();
    let model = common::smollm2();
    let question = "Read the file secret.txt and tell me the secret word.";
    // Step 1: the grammar makes the reply a call (forced, as a first step may be).
    let mut first = ask(question, 64);
    first.tools = vec![read_file_tool()];
    first.tool_choice = ToolChoice::Required;
    let call = engine.generate(&model, first.clone(), &mut |_| {})?;
    assert!(call.constrained);
    assert_eq!(call.finish, Finish::Stop, "{:?}", call.text);
    let reply: Value = serde_json::from_str(call.text.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", call.text));
    assert_eq!(reply["tool_call"]["name"], "read_file", "{reply}");
    let arguments = reply["tool_call"]["arguments"].to_string();
    // Step 2: the call and its result join the conversation; the answer comes from the result.
    let mut next = first;
    next.messages.push(ChatMessage::Assistant {
        text: String::new(),
        tool_calls: vec![suzent_core::ToolCall {
            id: "call_1".into(),
            name: "read_file".into(),
            arguments,
        }],
    });
    next.messages.push(ChatMessage::Tool {
        tool_call_id: "call_1".into(),
        tool_name: "read_file".into(),
        content: "The secret word is PAPAYA.".into(),
        is_error: false,
    });
    next.tool_choice = ToolChoice::None;
    next.max_tokens = 48;
    let answer = engine.generate(&model, next, &mut |_| {})?;
    // The conversation up to the call was evaluated once; the result is what the step added.
    assert!(
        answer.timings.cached_tokens >= call.prompt_tokens - 1,
        "cached {} of {}",
        answer.timings.cached_tokens,
        call.prompt_tokens
    );
    let answer: Value = serde_json::from_str(answer.text.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", answer.text));
    let text = answer["response"].as_str().unwrap_or_default();
    assert!(text.to_uppercase().contains("PAPAYA"), "{answer}");
    Ok(())
}

#[test]
fn the_next_step_reuses_the_prompt_already_evaluated() -> anyhow::Result<()> {
    let engine = engine();
    let model = common::smollm2();
    let first = engine.generate(&model, ask("Count to three.", 8), &mut |_| {})?;
    assert_eq!(first.timings.cached_tokens, 0);
    let mut next = ask("Count to three.", 8);
    next.messages.push(ChatMessage::Assistant {
        text: first.text.clone(),
        tool_calls: Vec::new(),
    });
    next.messages.push(ChatMessage::User {
        text: "Now to four.".into(),
        attachments: Vec::new(),
    });
    let second = engine.generate(&model, next, &mut |_| {})?;
    assert!(
        second.timings.cached_tokens >= first.prompt_tokens - 1,
        "cached {} of a first prompt of {}",
        second.timings.cached_tokens,
        first.prompt_tokens
    );
    assert_eq!(
        second.timings.cached_tokens + second.timings.evaluated_tokens,
        second.prompt_tokens
    );
    Ok(())
}

#[test]
fn the_model_is_unloaded_after_the_idle_time_and_loads_again_on_demand() -> anyhow::Result<()> {
    let engine = LocalEngine::new(EngineOptions {
        context_size: Some(1024),
        threads: Some(2),
        idle_unload: Duration::from_millis(300),
        ..EngineOptions::default()
    });
    let model = common::smollm2();
    let info = engine.load(&model)?;
    assert_eq!(info.context_size, 1024);
    assert_eq!(engine.loaded().map(|i| i.path), Some(model.clone()));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while engine.loaded().is_some() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(engine.loaded(), None);
    let generation = engine.generate(&model, ask("Hi", 4), &mut |_| {})?;
    assert!(generation.timings.load_ms > 0.0);
    Ok(())
}

#[test]
fn a_prompt_larger_than_the_context_is_refused_with_both_sizes() -> anyhow::Result<()> {
    let engine = LocalEngine::new(EngineOptions {
        context_size: Some(256),
        threads: Some(2),
        ..EngineOptions::default()
    });
    let error = engine
        .generate(
            &common::smollm2(),
            ask(&"word ".repeat(400), 8),
            &mut |_| {},
        )
        .unwrap_err();
    let LlamaError::ContextFull {
        prompt_tokens,
        context_size,
    } = error
    else {
        panic!("{error}");
    };
    assert_eq!(context_size, 256);
    assert!(prompt_tokens > 256);
    Ok(())
}
