//! The model provider clients against the scripted model server, which speaks the real wire
//! formats of OpenAI chat completions, Anthropic messages and Gemini.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use suzent_core::{ChatMessage, ProviderConfig, ProvidersConfig, ToolCall, parse_tool_arguments};
use suzent_runtime::provider::{
    ModelProvider, ModelRequest, ModelResponse, ProviderError, ProviderKind, StaticKeys,
    StopReason, ToolDefinition, Usage, build_provider, normalize_schema, parse_model,
};
use suzent_tests::{Chunking, Item, ScriptedServer, Turn};

const MODELS: [&str; 3] = [
    "openai/gpt-4.1",
    "anthropic/claude-sonnet-4-5",
    "gemini/gemini-2.5-pro",
];

fn config(server: &ScriptedServer) -> ProvidersConfig {
    ProvidersConfig {
        openai: ProviderConfig {
            base_url: Some(server.openai_base()),
            ..ProviderConfig::default()
        },
        anthropic: ProviderConfig {
            base_url: Some(server.base_url()),
            ..ProviderConfig::default()
        },
        gemini: ProviderConfig {
            base_url: Some(server.base_url()),
            ..ProviderConfig::default()
        },
        ollama: ProviderConfig {
            base_url: Some(server.base_url()),
            ..ProviderConfig::default()
        },
        ..ProvidersConfig::default()
    }
}

fn keys() -> StaticKeys {
    StaticKeys::new()
        .with("openai", "sk-test-openai")
        .with("anthropic", "sk-ant-test")
        .with("gemini", "gemini-test-key")
}

fn provider(model: &str, server: &ScriptedServer) -> (Box<dyn ModelProvider>, String) {
    build_provider(model, &config(server), &keys()).unwrap()
}

fn request(model_id: &str, messages: Vec<ChatMessage>) -> ModelRequest {
    ModelRequest {
        model: model_id.to_string(),
        system: "You are a test.".into(),
        messages,
        tools: vec![ToolDefinition {
            name: "read_file".into(),
            description: "Reads a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
    }
}

fn hello() -> Vec<ChatMessage> {
    vec![ChatMessage::User {
        text: "hello".into(),
        attachments: Vec::new(),
    }]
}

/// Streams one step, returning the response and every text fragment passed to `on_text`.
async fn step(
    provider: &dyn ModelProvider,
    request: &ModelRequest,
) -> (Result<ModelResponse, ProviderError>, Vec<String>) {
    let seen = Mutex::new(Vec::new());
    let on_text = |t: &str| seen.lock().unwrap().push(t.to_string());
    let result = provider.stream(request, &on_text).await;
    (result, seen.into_inner().unwrap())
}

async fn one_step(model: &str, turn: Turn) -> (ModelResponse, Vec<String>, ScriptedServer) {
    let server = ScriptedServer::start(vec![turn]).await;
    let (p, id) = provider(model, &server);
    let (result, texts) = step(p.as_ref(), &request(&id, hello())).await;
    let response = result.unwrap_or_else(|e| panic!("{model}: {e}"));
    (response, texts, server)
}

fn summary(calls: &[ToolCall]) -> Vec<(String, String)> {
    calls
        .iter()
        .map(|c| (c.name.clone(), c.arguments.clone()))
        .collect()
}

#[tokio::test]
async fn text_streams_to_on_text_in_order_and_in_several_fragments_for_every_provider() {
    let text = "The quick brown fox jumps over the lazy dog.";
    for model in MODELS.iter().chain(["ollama/qwen2.5"].iter()) {
        let (response, texts, _server) = one_step(
            model,
            Turn::text(text).chunked(Chunking::Fragments { size: 5 }),
        )
        .await;
        assert_eq!(response.text, text, "{model}");
        assert!(texts.len() > 1, "{model}: {texts:?}");
        assert_eq!(texts.concat(), text, "{model}");
        assert_eq!(response.stop_reason, StopReason::EndTurn, "{model}");
        assert!(response.tool_calls.is_empty());
    }
}

#[tokio::test]
async fn every_provider_reports_the_tokens_the_server_counted() {
    // The scripted server reports 12 request and 7 generated tokens in each wire format
    // (OpenAI's usage chunk, Anthropic's message_start and message_delta, Gemini's usageMetadata).
    for model in MODELS.iter().chain(["ollama/qwen2.5"].iter()) {
        let (response, _, _server) = one_step(model, Turn::text("counted")).await;
        assert_eq!(
            response.usage,
            Some(Usage {
                input_tokens: 12,
                output_tokens: 7
            }),
            "{model}"
        );
    }
}

#[tokio::test]
async fn a_single_tool_call_arrives_with_its_name_and_raw_arguments() {
    for model in MODELS {
        let turn = Turn::tool_call("call_1", "read_file", r#"{"path":"notes/a.txt"}"#)
            .with_text_first("Let me look.")
            .chunked(Chunking::Fragments { size: 4 });
        let (response, texts, _server) = one_step(model, turn).await;
        assert_eq!(response.text, "Let me look.", "{model}");
        assert_eq!(texts.concat(), "Let me look.");
        assert_eq!(response.stop_reason, StopReason::ToolUse, "{model}");
        assert_eq!(
            summary(&response.tool_calls),
            vec![(
                "read_file".to_string(),
                r#"{"path":"notes/a.txt"}"#.to_string()
            )],
            "{model}"
        );
        let id = &response.tool_calls[0].id;
        if model.starts_with("gemini") {
            assert_eq!(id, "gemini-call-1");
        } else {
            assert_eq!(id, "call_1");
        }
    }
}

fn parallel() -> Vec<Item> {
    vec![
        Item::tool_call("call_a", "read_file", r#"{"path":"first.txt"}"#),
        Item::tool_call("call_b", "glob", r#"{"pattern":"src/**/*.rs"}"#),
    ]
}

fn assert_two_parallel_calls(model: &str, response: &ModelResponse) {
    assert_eq!(
        summary(&response.tool_calls),
        vec![
            (
                "read_file".to_string(),
                r#"{"path":"first.txt"}"#.to_string()
            ),
            (
                "glob".to_string(),
                r#"{"pattern":"src/**/*.rs"}"#.to_string()
            ),
        ],
        "{model}"
    );
    for call in &response.tool_calls {
        assert!(
            parse_tool_arguments(&call.arguments).is_ok(),
            "{model}: {call:?}"
        );
    }
    let ids: Vec<&str> = response.tool_calls.iter().map(|c| c.id.as_str()).collect();
    if model.starts_with("gemini") {
        assert_eq!(ids, ["gemini-call-1", "gemini-call-2"]);
    } else {
        assert_eq!(ids, ["call_a", "call_b"], "{model}");
    }
}

#[tokio::test]
async fn parallel_tool_calls_with_interleaved_fragments_are_two_separate_calls_in_order() {
    for model in MODELS {
        let turn = Turn::tool_calls(parallel()).chunked(Chunking::InterleavedParallel);
        let (response, _, _server) = one_step(model, turn).await;
        assert_two_parallel_calls(model, &response);
    }
}

#[tokio::test]
async fn two_calls_sharing_index_zero_with_distinct_ids_are_two_calls() {
    for model in MODELS {
        let turn = Turn::tool_calls(parallel()).chunked(Chunking::SharedIndexDistinctIds);
        let (response, _, _server) = one_step(model, turn).await;
        assert_two_parallel_calls(model, &response);
    }
}

#[tokio::test]
async fn truncated_arguments_stay_raw_and_the_next_request_replays_them_as_an_empty_object() {
    let truncated = r#"{"path": "notes/a.t"#;
    for model in MODELS {
        let server = ScriptedServer::start(vec![
            Turn::tool_call("call_1", "read_file", truncated)
                .chunked(Chunking::Fragments { size: 3 }),
            Turn::text("Sorry, retrying."),
        ])
        .await;
        let (p, id) = provider(model, &server);
        let (first, _) = step(p.as_ref(), &request(&id, hello())).await;
        let first = first.unwrap();
        assert_eq!(first.tool_calls.len(), 1, "{model}");
        let call = first.tool_calls[0].clone();
        assert_eq!(call.arguments, truncated, "{model}");
        let error = parse_tool_arguments(&call.arguments).unwrap_err();

        let mut history = hello();
        history.push(ChatMessage::Assistant {
            text: first.text.clone(),
            tool_calls: vec![call.clone()],
        });
        history.push(ChatMessage::Tool {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: error,
            is_error: true,
        });
        let (second, _) = step(p.as_ref(), &request(&id, history)).await;
        assert_eq!(second.unwrap().text, "Sorry, retrying.", "{model}");

        let body = &server.requests()[1];
        let replayed = match model.split('/').next().unwrap() {
            "openai" => {
                let args = body["messages"][2]["tool_calls"][0]["function"]["arguments"].clone();
                serde_json::from_str::<Value>(args.as_str().unwrap()).unwrap()
            }
            "anthropic" => body["messages"][1]["content"][0]["input"].clone(),
            _ => body["contents"][1]["parts"][0]["functionCall"]["args"].clone(),
        };
        assert_eq!(replayed, json!({}), "{model}: {body}");
        assert_eq!(server.remaining(), 0);
    }
}

#[tokio::test]
async fn empty_string_arguments_of_a_tool_without_parameters_mean_an_empty_object() {
    for model in MODELS {
        let (response, _, _server) =
            one_step(model, Turn::tool_call("call_1", "list_tools", "")).await;
        assert_eq!(response.tool_calls.len(), 1, "{model}");
        assert_eq!(response.tool_calls[0].arguments, "", "{model}");
        assert_eq!(
            parse_tool_arguments(&response.tool_calls[0].arguments),
            Ok(json!({}))
        );
    }
    // The two-character text `""` as OpenAI sends it for some models.
    let (response, _, _server) = one_step(
        "openai/gpt-4.1",
        Turn::tool_call("call_1", "list_tools", "\"\""),
    )
    .await;
    assert_eq!(response.tool_calls[0].arguments, "\"\"");
    assert_eq!(
        parse_tool_arguments(&response.tool_calls[0].arguments),
        Ok(json!({}))
    );
}

#[tokio::test]
async fn an_http_401_is_an_http_error_with_its_status_and_body() {
    let body =
        r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#;
    for model in MODELS {
        let server = ScriptedServer::start(vec![Turn::error(401, body)]).await;
        let (p, id) = provider(model, &server);
        let (result, texts) = step(p.as_ref(), &request(&id, hello())).await;
        let provider_name = model.split('/').next().unwrap().to_string();
        assert_eq!(
            result,
            Err(ProviderError::Http {
                provider: provider_name,
                status: 401,
                body: body.to_string(),
                retry_after_ms: None
            }),
            "{model}"
        );
        assert!(texts.is_empty());
    }
}

#[tokio::test]
async fn long_error_bodies_are_bounded_and_never_carry_the_key() {
    let server = ScriptedServer::start(vec![Turn::error(500, "x".repeat(10_000))]).await;
    let (p, id) = provider("openai/gpt-4.1", &server);
    let (result, _) = step(p.as_ref(), &request(&id, hello())).await;
    let Err(ProviderError::Http { status, body, .. }) = result else {
        panic!("{result:?}")
    };
    assert_eq!(status, 500);
    assert!(body.len() <= 2048 + 3, "{}", body.len());
    assert!(body.starts_with("xxxx"));
}

#[tokio::test]
async fn a_missing_key_is_missing_api_key_and_ollama_needs_none() {
    let server = ScriptedServer::start(vec![Turn::text("local")]).await;
    let none = StaticKeys::new();
    // OpenAI's own API needs a key; `openai/` at another base URL (a local server) does not.
    let mut openai_itself = config(&server);
    openai_itself.openai.base_url = Some("https://api.openai.com/v1".into());
    assert!(build_provider("openai/gpt-4.1", &config(&server), &none).is_ok());
    for (model, var, providers) in [
        ("openai/gpt-4.1", "OPENAI_API_KEY", &openai_itself),
        (
            "anthropic/claude-sonnet-4-5",
            "ANTHROPIC_API_KEY",
            &config(&server),
        ),
        ("gemini/gemini-2.5-pro", "GEMINI_API_KEY", &config(&server)),
    ] {
        let err = build_provider(model, providers, &none).err();
        let provider = model.split('/').next().unwrap().to_string();
        assert_eq!(
            err,
            Some(ProviderError::MissingApiKey {
                provider,
                env_var: var.to_string()
            })
        );
    }
    let (p, id) = build_provider("ollama/qwen2.5", &config(&server), &none).unwrap();
    assert_eq!(p.name(), "ollama");
    let (result, _) = step(p.as_ref(), &request(&id, hello())).await;
    assert_eq!(result.unwrap().text, "local");
    let recorded = server.recorded();
    assert_eq!(recorded[0].path, "/v1/chat/completions");
    assert_eq!(recorded[0].header("authorization"), None);
    assert_eq!(recorded[0].body["model"], json!("qwen2.5"));
}

#[tokio::test]
async fn each_provider_sends_its_own_path_and_auth_headers() {
    for model in MODELS {
        let (_, _, server) = one_step(model, Turn::text("ok")).await;
        let r = &server.recorded()[0];
        match model.split('/').next().unwrap() {
            "openai" => {
                assert_eq!(r.path, "/v1/chat/completions");
                assert_eq!(r.header("authorization"), Some("Bearer sk-test-openai"));
                assert_eq!(r.body["stream"], json!(true));
                assert_eq!(r.body["stream_options"], json!({"include_usage": true}));
                assert_eq!(r.body["model"], json!("gpt-4.1"));
            }
            "anthropic" => {
                assert_eq!(r.path, "/v1/messages");
                assert_eq!(r.header("x-api-key"), Some("sk-ant-test"));
                assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(r.body["system"], json!("You are a test."));
                assert_eq!(r.body["max_tokens"], json!(8192));
            }
            _ => {
                assert_eq!(
                    r.path,
                    "/v1beta/models/gemini-2.5-pro:streamGenerateContent"
                );
                assert_eq!(r.query.as_deref(), Some("alt=sse"));
                assert_eq!(r.header("x-goog-api-key"), Some("gemini-test-key"));
                assert_eq!(
                    r.body["systemInstruction"],
                    json!({"parts": [{"text": "You are a test."}]})
                );
                assert_eq!(r.header("authorization"), None);
            }
        }
    }
}

fn tool_round_history() -> Vec<ChatMessage> {
    vec![
        ChatMessage::User {
            text: "read both".into(),
            attachments: Vec::new(),
        },
        ChatMessage::Assistant {
            text: "Reading.".into(),
            tool_calls: vec![
                ToolCall {
                    id: "call_a".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a"}"#.into(),
                },
                ToolCall {
                    id: "call_b".into(),
                    name: "glob".into(),
                    arguments: r#"{"pattern":"*"}"#.into(),
                },
            ],
        },
        ChatMessage::Tool {
            tool_call_id: "call_a".into(),
            tool_name: "read_file".into(),
            content: "contents of a".into(),
            is_error: false,
        },
        ChatMessage::Tool {
            tool_call_id: "call_b".into(),
            tool_name: "glob".into(),
            content: "permission denied".into(),
            is_error: true,
        },
    ]
}

#[tokio::test]
async fn tool_results_are_mapped_into_each_providers_history_format() {
    for model in MODELS {
        let server = ScriptedServer::start(vec![Turn::text("done")]).await;
        let (p, id) = provider(model, &server);
        let (result, _) = step(p.as_ref(), &request(&id, tool_round_history())).await;
        assert_eq!(result.unwrap().text, "done");
        let body = &server.requests()[0];
        match model.split('/').next().unwrap() {
            "openai" => {
                let m = &body["messages"];
                assert_eq!(
                    m[0],
                    json!({"role": "system", "content": "You are a test."})
                );
                assert_eq!(m[1], json!({"role": "user", "content": "read both"}));
                assert_eq!(m[2]["role"], json!("assistant"));
                assert_eq!(m[2]["content"], json!("Reading."));
                assert_eq!(
                    m[2]["tool_calls"][1],
                    json!({"id": "call_b", "type": "function",
                           "function": {"name": "glob", "arguments": "{\"pattern\":\"*\"}"}})
                );
                assert_eq!(
                    m[3],
                    json!({"role": "tool", "tool_call_id": "call_a", "content": "contents of a"})
                );
                assert_eq!(
                    m[4],
                    json!({"role": "tool", "tool_call_id": "call_b", "content": "permission denied"})
                );
            }
            "anthropic" => {
                let m = body["messages"].as_array().unwrap();
                assert_eq!(m.len(), 3, "{body}");
                assert_eq!(
                    m[1],
                    json!({"role": "assistant", "content": [
                        {"type": "text", "text": "Reading."},
                        {"type": "tool_use", "id": "call_a", "name": "read_file", "input": {"path": "a"}},
                        {"type": "tool_use", "id": "call_b", "name": "glob", "input": {"pattern": "*"}}
                    ]})
                );
                assert_eq!(
                    m[2],
                    json!({"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "call_a", "content": "contents of a", "is_error": false},
                        {"type": "tool_result", "tool_use_id": "call_b", "content": "permission denied", "is_error": true}
                    ]})
                );
            }
            _ => {
                let c = body["contents"].as_array().unwrap();
                assert_eq!(c.len(), 3, "{body}");
                assert_eq!(
                    c[0],
                    json!({"role": "user", "parts": [{"text": "read both"}]})
                );
                assert_eq!(
                    c[1],
                    json!({"role": "model", "parts": [
                        {"text": "Reading."},
                        {"functionCall": {"name": "read_file", "args": {"path": "a"}}},
                        {"functionCall": {"name": "glob", "args": {"pattern": "*"}}}
                    ]})
                );
                assert_eq!(
                    c[2],
                    json!({"role": "user", "parts": [
                        {"functionResponse": {"name": "read_file", "response": {"content": "contents of a"}}},
                        {"functionResponse": {"name": "glob", "response": {"error": "permission denied"}}}
                    ]})
                );
            }
        }
    }
}

/// A schemars-style schema with `$ref`/`$defs`, `anyOf` with null, `additionalProperties` and
/// `$schema` (public case mcp 1).
fn schemars_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "EditArgs",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "path": {"type": "string", "description": "File to edit"},
            "options": {"anyOf": [{"$ref": "#/$defs/Options"}, {"type": "null"}], "default": null},
            "count": {"type": ["integer", "null"], "format": "uint32"}
        },
        "required": ["path"],
        "$defs": {
            "Options": {
                "type": "object",
                "additionalProperties": false,
                "properties": {"dry_run": {"type": "boolean", "default": false}}
            }
        }
    })
}

#[tokio::test]
async fn tool_schemas_are_normalized_per_provider_in_the_request() {
    for model in MODELS {
        let server = ScriptedServer::start(vec![Turn::text("ok")]).await;
        let (p, id) = provider(model, &server);
        let mut req = request(&id, hello());
        req.tools.push(ToolDefinition {
            name: "edit_file".into(),
            description: "Edits".into(),
            parameters: schemars_schema(),
        });
        req.tools.push(ToolDefinition {
            name: "list_tools".into(),
            description: "Lists tools".into(),
            parameters: json!({}),
        });
        step(p.as_ref(), &req).await.0.unwrap();
        let body = &server.requests()[0];
        let schema = match model.split('/').next().unwrap() {
            "openai" => {
                assert_eq!(
                    body["tools"][2]["function"]["parameters"],
                    json!({"type": "object", "properties": {}})
                );
                body["tools"][1]["function"]["parameters"].clone()
            }
            "anthropic" => {
                assert_eq!(
                    body["tools"][2]["input_schema"],
                    json!({"type": "object", "properties": {}})
                );
                body["tools"][1]["input_schema"].clone()
            }
            _ => {
                let decls = &body["tools"][0]["functionDeclarations"];
                assert_eq!(
                    decls[2],
                    json!({"name": "list_tools", "description": "Lists tools"})
                );
                decls[1]["parameters"].clone()
            }
        };
        let text = schema.to_string();
        for banned in ["$ref", "$defs", "$schema"] {
            assert!(!text.contains(banned), "{model}: {banned} in {text}");
        }
        if model.starts_with("gemini") {
            for banned in ["additionalProperties", "anyOf", "\"default\"", "\"title\""] {
                assert!(!text.contains(banned), "{model}: {banned} in {text}");
            }
            assert_eq!(schema["properties"]["options"]["nullable"], json!(true));
            assert_eq!(
                schema["properties"]["options"]["properties"]["dry_run"]["type"],
                json!("boolean")
            );
            assert_eq!(
                schema["properties"]["count"],
                json!({"type": "integer", "nullable": true})
            );
        } else {
            assert_eq!(
                schema["properties"]["options"]["anyOf"][0]["properties"]["dry_run"]["type"],
                json!("boolean")
            );
        }
    }
}

#[test]
fn schema_normalization_always_gives_a_top_level_object_schema() {
    for kind in ProviderKind::ALL {
        let out = normalize_schema(&schemars_schema(), kind);
        assert_eq!(out["type"], json!("object"));
        assert!(out["properties"].is_object());
        assert_eq!(
            normalize_schema(&json!({"type": "object"}), kind),
            json!({"type": "object", "properties": {}})
        );
    }
}

#[test]
fn model_strings_name_a_known_provider_and_keep_the_rest_as_the_model_id() {
    assert_eq!(
        parse_model("openai/gpt-4.1").unwrap(),
        (ProviderKind::OpenAi, "gpt-4.1".to_string())
    );
    assert_eq!(
        parse_model("openai/meta-llama/Llama-3").unwrap(),
        (ProviderKind::OpenAi, "meta-llama/Llama-3".to_string())
    );
    assert_eq!(
        parse_model("anthropic/claude-sonnet-4-5").unwrap().0,
        ProviderKind::Anthropic
    );
    assert_eq!(
        parse_model("gemini/gemini-2.5-pro").unwrap().0,
        ProviderKind::Gemini
    );
    assert_eq!(
        parse_model("ollama/qwen2.5").unwrap(),
        (ProviderKind::Ollama, "qwen2.5".to_string())
    );
    let Err(ProviderError::InvalidModel { message, .. }) = parse_model("cohere/command-r") else {
        panic!("unknown providers are invalid")
    };
    assert!(
        message.contains("openai") && message.contains("ollama"),
        "{message}"
    );
}

#[test]
fn the_blocking_server_works_from_a_plain_test_and_reports_an_exhausted_script() {
    let server = ScriptedServer::start_blocking(vec![Turn::text("first")]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (p, id) = provider("openai/gpt-4.1", &server);
    let first = runtime
        .block_on(step(p.as_ref(), &request(&id, hello())))
        .0
        .unwrap();
    assert_eq!(first.text, "first");
    let second = runtime
        .block_on(step(p.as_ref(), &request(&id, hello())))
        .0
        .unwrap();
    assert_eq!(second.text, "script exhausted");
    assert_eq!(server.requests().len(), 2);
    assert!(server.recorded()[1].exhausted);
    server.push_turns(vec![Turn::text("more")]);
    assert_eq!(server.remaining(), 1);
    let third = runtime
        .block_on(step(p.as_ref(), &request(&id, hello())))
        .0
        .unwrap();
    assert_eq!(third.text, "more");
}

/// Serves one canned HTTP response on a fresh port and returns its base URL.
async fn raw_server(response: &'static str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 65536];
        let mut seen = Vec::new();
        // Read the headers and the Content-Length body.
        loop {
            let n = socket.read(&mut buf).await.unwrap();
            seen.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&seen).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let len = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                if seen.len() >= end + 4 + len {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            response.len()
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(response.as_bytes()).await.unwrap();
        socket.shutdown().await.ok();
    });
    format!("http://{addr}")
}

fn config_at(base: &str) -> ProvidersConfig {
    ProvidersConfig {
        openai: ProviderConfig {
            base_url: Some(format!("{base}/v1")),
            ..ProviderConfig::default()
        },
        anthropic: ProviderConfig {
            base_url: Some(base.to_string()),
            ..ProviderConfig::default()
        },
        gemini: ProviderConfig {
            base_url: Some(base.to_string()),
            ..ProviderConfig::default()
        },
        ollama: ProviderConfig {
            base_url: Some(base.to_string()),
            ..ProviderConfig::default()
        },
        ..ProvidersConfig::default()
    }
}

#[tokio::test]
async fn an_error_object_inside_the_stream_is_a_protocol_error() {
    let base = raw_server(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n\
         data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}\n\n",
    )
    .await;
    let (p, id) = build_provider("openai/gpt-4.1", &config_at(&base), &keys()).unwrap();
    let (result, _) = step(p.as_ref(), &request(&id, hello())).await;
    let Err(ProviderError::Protocol { message, .. }) = result else {
        panic!("{result:?}")
    };
    assert!(message.contains("The server had an error"), "{message}");

    let base = raw_server(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n\
         event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
    )
    .await;
    let (p, id) =
        build_provider("anthropic/claude-sonnet-4-5", &config_at(&base), &keys()).unwrap();
    let (result, _) = step(p.as_ref(), &request(&id, hello())).await;
    let Err(ProviderError::Protocol { message, .. }) = result else {
        panic!("{result:?}")
    };
    assert!(
        message.contains("overloaded_error") && message.contains("Overloaded"),
        "{message}"
    );
}

#[tokio::test]
async fn an_openai_stream_ending_without_done_after_content_is_complete() {
    let base = raw_server(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n\
         data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"length\"}]}\n\n",
    )
    .await;
    let (p, id) = build_provider("openai/gpt-4.1", &config_at(&base), &keys()).unwrap();
    let (result, texts) = step(p.as_ref(), &request(&id, hello())).await;
    let response = result.unwrap();
    assert_eq!(response.text, "Hello");
    assert_eq!(texts, vec!["Hel", "lo"]);
    assert_eq!(response.stop_reason, StopReason::MaxTokens);
}

#[tokio::test]
async fn a_refused_connection_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let (p, id) =
        build_provider("anthropic/claude-sonnet-4-5", &config_at(&base), &keys()).unwrap();
    let (result, _) = step(p.as_ref(), &request(&id, hello())).await;
    let Err(ProviderError::Transport { provider, message }) = result else {
        panic!("{result:?}")
    };
    assert_eq!(provider, "anthropic");
    assert!(!message.contains("sk-ant-test"), "{message}");
}
