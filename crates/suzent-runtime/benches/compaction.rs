//! What fitting long chats to the model costs (issue 13 item 4).
//!
//! `cargo bench -p suzent-runtime --bench compaction` measures:
//! - per step, on a 100,000-token history (600 messages, a third of them 1.5 KB tool outputs),
//!   the work the turn loop adds to each model step: counting the request's tokens from the
//!   per-message cache (one new message since the last step), building the compacted view, and
//!   counting the definitions of every built-in tool (criterion; goal: under 2 ms);
//! - a 200-turn chat with 3 KB tool outputs, stored through real turns against the scripted
//!   model server, compacted into an 8,192-token window with `compact_chat`: the time, the
//!   summarizing requests it made and the tokens they carried (the runtime's estimate), and the
//!   request's tokens before and after.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, black_box};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_core::{ChatMessage, Config, ModelSettings, PermissionMode, ToolCall};
use suzent_runtime::compaction::{TokenCache, apply};
use suzent_runtime::provider::{ModelRequest, StaticKeys, ToolDefinition, tokens};
use suzent_runtime::{CreateChat, Paths, RunOptions, Runtime, RuntimeOptions};
use suzent_store::StoredMessage;
use suzent_tests::{ScriptedServer, Turn};

fn history(target_tokens: usize) -> Vec<StoredMessage> {
    let mut out = Vec::new();
    let mut total = 0;
    let mut seq = 0;
    let output = "build log line with a path /src/lib.rs:42 and a number 12345\n".repeat(24);
    while total < target_tokens {
        let turn = seq / 3;
        let messages = [
            ChatMessage::User {
                text: format!("Step {turn}: look at the next file and tell me what it does."),
                attachments: Vec::new(),
            },
            ChatMessage::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: format!("call_{turn}"),
                    name: "read_file".into(),
                    arguments: json!({"file_path": format!("src/file_{turn}.rs")}).to_string(),
                }],
            },
            ChatMessage::Tool {
                tool_call_id: format!("call_{turn}"),
                tool_name: "read_file".into(),
                content: output.clone(),
                is_error: false,
            },
        ];
        for message in messages {
            seq += 1;
            total += tokens::message_tokens(&message);
            out.push(StoredMessage {
                seq,
                run_id: None,
                message,
                created_at: chrono::Utc::now(),
            });
        }
    }
    out
}

fn default_tools() -> Vec<ToolDefinition> {
    let registry = suzent_tools::default_registry();
    registry
        .list()
        .iter()
        .map(|tool| {
            let spec = tool.spec();
            ToolDefinition {
                name: spec.runtime_name.to_string(),
                description: spec.description.to_string(),
                parameters: spec.parameters.clone(),
            }
        })
        .collect()
}

fn per_step(c: &mut Criterion) {
    let mut messages = history(100_000);
    let tools = default_tools();
    let system = "You are Suzent, a desktop AI agent. ".repeat(20);
    let cache = TokenCache::default();
    let history_tokens = cache.count("bench", &messages, None);
    println!(
        "history: {} messages, {history_tokens} tokens (estimate); {} tool definitions, {} tokens",
        messages.len(),
        tools.len(),
        tokens::fixed_tokens(&system, &tools)
    );
    let cold = Instant::now();
    let fresh = TokenCache::default();
    black_box(fresh.count("cold", &messages, None));
    println!(
        "first count of the whole history (cold cache): {:?}",
        cold.elapsed()
    );
    let mut next_seq = messages.last().map(|m| m.seq).unwrap_or(0);
    c.bench_function(
        "per step on a 100k-token history: count + view + tools",
        |b| {
            b.iter(|| {
                // One message joined since the last step.
                next_seq += 1;
                messages.push(StoredMessage {
                    seq: next_seq,
                    run_id: None,
                    message: ChatMessage::User {
                        text: "and the next one".into(),
                        attachments: Vec::new(),
                    },
                    created_at: chrono::Utc::now(),
                });
                let counted = cache.count("bench", &messages, None);
                let view = apply(&messages, None);
                let fixed = tokens::fixed_tokens(&system, &tools);
                messages.pop();
                next_seq -= 1;
                black_box((counted, view.len(), fixed))
            })
        },
    );
    c.bench_function("full recount of a 100k-token request (no cache)", |b| {
        let request = ModelRequest {
            model: "m".into(),
            system: system.clone(),
            messages: messages.iter().map(|m| m.message.clone()).collect(),
            tools: tools.clone(),
        };
        b.iter(|| black_box(tokens::request_tokens(&request)))
    });
}

fn runtime(server: &ScriptedServer, home: &std::path::Path, window: u32) -> Runtime {
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        default_mode: PermissionMode::FullAccess,
        tools: vec!["ReadFileTool".into()],
        ..Config::default()
    };
    config.providers.openai.base_url = Some(server.openai_base());
    config.providers.openai.max_tokens = Some(1_024);
    config.models.insert(
        "openai/gpt-test".into(),
        ModelSettings {
            context_window: Some(window),
            ..Default::default()
        },
    );
    let rt = tokio::runtime::Handle::current();
    tokio::task::block_in_place(|| {
        rt.block_on(Runtime::open(RuntimeOptions {
            paths: Paths::under(home),
            keys: Arc::new(StaticKeys::new().with("openai", "sk-test")),
            config: Some(config),
        }))
    })
    .unwrap()
}

async fn compact_200_turns() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws).unwrap();
    let server = ScriptedServer::start(Vec::new()).await;
    server.set_responder(|body| {
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        if system.starts_with("You summarize a conversation") {
            return Some(Turn::text(
                "Task: read the log files one by one. Decisions: none. Files touched: file_N.txt. Open items: keep reading.",
            ));
        }
        let last = body["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
        if last["role"] == "tool" {
            return Some(Turn::text("Read it."));
        }
        let content = last["content"].as_str().unwrap_or_default().to_string();
        let n = content.trim_start_matches("Turn ").trim_end_matches('.').to_string();
        Some(Turn::tool_call(
            "call_0",
            "read_file",
            json!({"file_path": format!("file_{n}.txt")}).to_string(),
        ))
    });
    // The chat is built with a large window (no compaction), then compacted into 8k.
    let home = dir.path().join("home");
    let big = runtime(&server, &home, 2_000_000);
    let chat = big
        .create_chat(CreateChat {
            workspace: Some(ws.clone()),
            ..CreateChat::default()
        })
        .await
        .unwrap()
        .id;
    let line = "some build log output that the model does not need again\n";
    for n in 1..=200 {
        std::fs::write(
            ws.join(format!("file_{n}.txt")),
            line.repeat(3_000 / line.len() + 1),
        )
        .unwrap();
        big.send_message(&chat, &format!("Turn {n}."), RunOptions::default())
            .await
            .unwrap();
    }
    drop(big);
    let small = runtime(&server, &home, 8_192);
    let before = server.requests().len();
    let started = Instant::now();
    let info = small.compact_chat(&chat).await.unwrap().expect("compacted");
    let took = started.elapsed();
    let summarizing = &server.requests()[before..];
    let sent: usize = summarizing
        .iter()
        .map(|b| {
            b["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    tokens::text_tokens(m["content"].as_str().unwrap_or_default())
                        + tokens::MESSAGE_OVERHEAD
                })
                .sum::<usize>()
        })
        .sum();
    println!(
        "compacting a 200-turn chat (800 messages, 3 KB tool outputs) into an 8,192-token window: {took:?}, \
         {} summarizing requests carrying {sent} tokens (estimate) with {} reply tokens allowed each; \
         {} tool outputs cut, {} messages summarized; request {} -> {} tokens",
        summarizing.len(),
        1_024,
        info.tool_outputs_cut,
        info.messages_summarized,
        info.tokens_before,
        info.tokens_after
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(compact_200_turns());
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    per_step(&mut c);
    c.final_summary();
}
