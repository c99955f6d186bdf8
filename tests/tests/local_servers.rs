//! OpenAI-compatible local servers through the scripted model server (real SSE wire format):
//! tool calls written as text are recovered (R2-L01, R2-L06) without their markup reaching the
//! UI, requests carry what local servers need, empty ids become unique ids kept in the next
//! request (R2-L07), an empty completion is an error (R2-L10), and a server that refuses the
//! `tools` field gets them in the prompt.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::sync::Mutex;
use suzent_core::{ChatMessage, ProvidersConfig, ToolCall};
use suzent_runtime::provider::{
    ModelProvider, ModelRequest, ModelResponse, ProviderError, StaticKeys, ToolDefinition,
    build_provider,
};
use suzent_tests::{Chunking, Item, ScriptedServer, Turn};

fn local(server: &ScriptedServer) -> (Box<dyn ModelProvider>, String) {
    let mut providers = ProvidersConfig::default();
    providers.openai_compatible.base_url = Some(server.openai_base());
    providers.openai_compatible.max_tokens = Some(321);
    build_provider(
        "openai-compatible/qwen2.5-coder",
        &providers,
        &StaticKeys::new(),
    )
    .unwrap()
}

fn request(messages: Vec<ChatMessage>) -> ModelRequest {
    ModelRequest {
        model: "qwen2.5-coder".into(),
        system: "You are a test.".into(),
        messages,
        tools: vec![ToolDefinition {
            name: "read_file".into(),
            description: "Reads a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
    }
}

fn ask() -> Vec<ChatMessage> {
    vec![ChatMessage::User {
        text: "read it".into(),
        attachments: Vec::new(),
    }]
}

async fn step(
    provider: &dyn ModelProvider,
    request: &ModelRequest,
) -> (Result<ModelResponse, ProviderError>, String) {
    let seen = Mutex::new(String::new());
    let on_text = |t: &str| seen.lock().unwrap().push_str(t);
    let result = provider.stream(request, &on_text).await;
    (result, seen.into_inner().unwrap())
}

#[tokio::test]
async fn a_qwen3_coder_xml_call_after_prose_becomes_a_call_and_its_markup_is_never_shown() {
    let text = "I need to check the file first.\n\n<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/main.rs\n</parameter>\n</function>\n</tool_call>";
    let server = ScriptedServer::start(vec![
        Turn::text(text).chunked(Chunking::Fragments { size: 3 }),
    ])
    .await;
    let (provider, _) = local(&server);
    let (response, shown) = step(provider.as_ref(), &request(ask())).await;
    let response = response.unwrap();
    assert_eq!(response.text, "I need to check the file first.");
    assert_eq!(
        response
            .tool_calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.as_str()))
            .collect::<Vec<_>>(),
        [("read_file", r#"{"path":"src/main.rs"}"#)]
    );
    assert!(response.tool_calls[0].id.starts_with("call_"));
    assert_eq!(shown.trim_end(), "I need to check the file first.");
}

#[tokio::test]
async fn a_fenced_call_in_the_middle_of_an_answer_stays_text_byte_for_byte() {
    let text = "You can call it like this:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```\nand it returns the file.";
    let server = ScriptedServer::start(vec![
        Turn::text(text).chunked(Chunking::Fragments { size: 4 }),
    ])
    .await;
    let (provider, _) = local(&server);
    let (response, shown) = step(provider.as_ref(), &request(ask())).await;
    let response = response.unwrap();
    assert_eq!(
        (response.text.as_str(), response.tool_calls.len()),
        (text, 0)
    );
    assert_eq!(shown, text);
}

#[tokio::test]
async fn requests_carry_max_tokens_an_explicit_tool_choice_and_no_key() {
    let server = ScriptedServer::start(vec![Turn::text("ok")]).await;
    let (provider, _) = local(&server);
    step(provider.as_ref(), &request(ask())).await.0.unwrap();
    let recorded = server.recorded();
    let body = &server.requests()[0];
    assert_eq!(body["max_tokens"], json!(321));
    assert_eq!(body["tool_choice"], json!("auto"));
    assert_eq!(recorded[0].header("authorization"), None);
}

#[tokio::test]
async fn an_assistant_message_with_tool_calls_is_sent_with_empty_string_content() {
    let server = ScriptedServer::start(vec![Turn::text("done")]).await;
    let (provider, _) = local(&server);
    let mut messages = ask();
    messages.push(ChatMessage::Assistant {
        text: String::new(),
        tool_calls: vec![ToolCall {
            id: "call_1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a"}"#.into(),
        }],
    });
    messages.push(ChatMessage::Tool {
        tool_call_id: "call_1".into(),
        tool_name: "read_file".into(),
        content: "x".into(),
        is_error: false,
    });
    step(provider.as_ref(), &request(messages)).await.0.unwrap();
    assert_eq!(server.requests()[0]["messages"][2]["content"], json!(""));
}

#[tokio::test]
async fn two_parallel_calls_with_empty_ids_get_unique_ids_that_the_next_request_repeats() {
    let server = ScriptedServer::start(vec![
        Turn::tool_calls(vec![
            Item::tool_call("", "read_file", r#"{"path":"a"}"#),
            Item::tool_call("", "read_file", "{\"path\":\"b\"}"),
        ]),
        Turn::text("both read"),
    ])
    .await;
    let (provider, _) = local(&server);
    let first = step(provider.as_ref(), &request(ask())).await.0.unwrap();
    let ids: Vec<String> = first.tool_calls.iter().map(|c| c.id.clone()).collect();
    assert_eq!(ids.len(), 2);
    assert!(
        ids.iter().all(|id| !id.is_empty()) && ids[0] != ids[1],
        "{ids:?}"
    );
    let mut messages = ask();
    messages.push(ChatMessage::Assistant {
        text: first.text.clone(),
        tool_calls: first.tool_calls.clone(),
    });
    for (call, content) in first.tool_calls.iter().zip(["A", "B"]) {
        messages.push(ChatMessage::Tool {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: content.into(),
            is_error: false,
        });
    }
    step(provider.as_ref(), &request(messages)).await.0.unwrap();
    let body = &server.requests()[1];
    let sent: Vec<Value> = body["messages"][2]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].clone())
        .collect();
    assert_eq!(sent, [json!(ids[0]), json!(ids[1])]);
    assert_eq!(body["messages"][3]["tool_call_id"], json!(ids[0]));
    assert_eq!(body["messages"][4]["tool_call_id"], json!(ids[1]));
}

#[tokio::test]
async fn an_empty_completion_is_an_error_not_an_answer() {
    let server = ScriptedServer::start(vec![Turn::text("")]).await;
    let (provider, _) = local(&server);
    let (response, _) = step(provider.as_ref(), &request(ask())).await;
    let Err(ProviderError::EmptyCompletion { provider, .. }) = response else {
        panic!("{response:?}");
    };
    assert_eq!(provider, "openai-compatible");
}

#[tokio::test]
async fn a_server_that_refuses_tools_gets_them_in_the_prompt_and_its_written_call_is_recovered() {
    let server = ScriptedServer::start(vec![
        Turn::error(
            500,
            r#"{"error":{"code":500,"message":"tools param requires --jinja flag"}}"#,
        ),
        Turn::text(r#"{"tool_call": {"name": "read_file", "arguments": {"path": "a.txt"}}}"#),
        Turn::text(r#"{"response": "It says hi."}"#),
    ])
    .await;
    let (provider, _) = local(&server);
    let (first, shown) = step(provider.as_ref(), &request(ask())).await;
    let first = first.unwrap();
    assert_eq!(first.tool_calls[0].arguments, r#"{"path":"a.txt"}"#);
    assert_eq!(shown, "");
    let retried = &server.requests()[1];
    assert_eq!(retried.get("tools"), None);
    assert_eq!(retried["response_format"]["type"], json!("json_schema"));
    let system = retried["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("read_file") && system.contains("\"tool_call\""),
        "{system}"
    );
    // The next request goes straight to the prompt form.
    let (second, shown) = step(provider.as_ref(), &request(ask())).await;
    assert_eq!(second.unwrap().text, "It says hi.");
    assert_eq!(shown, "It says hi.");
    assert_eq!(server.requests().len(), 3);
}
