//! Background commands, completion wake-ups through the durable inbox, agents messaging agents
//! and sub-agents, through the runtime API with real processes, real SQLite and the scripted
//! model server speaking the real provider wire formats.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use suzent_core::{
    BackgroundTaskKind, BackgroundTaskStatus, ChatMessage, Config, PermissionMode, RunOutcome,
    ToolCall,
};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{
    CreateChat, InboxStatus, Paths, RunOptions, Runtime, RuntimeOptions, StoredMessage,
};
use suzent_tests::{Item, ScriptedServer, Turn};
use tempfile::TempDir;

struct Harness {
    _dir: TempDir,
    ws: PathBuf,
    runtime: Runtime,
}

async fn harness(openai: &ScriptedServer, anthropic: Option<&ScriptedServer>) -> Harness {
    harness_with(openai, anthropic, |_| {}).await
}

async fn harness_with(
    openai: &ScriptedServer,
    anthropic: Option<&ScriptedServer>,
    tweak: impl FnOnce(&mut Config),
) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws).unwrap();
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        default_mode: PermissionMode::FullAccess,
        tools: vec![
            "ShellTool".into(),
            "ReadFileTool".into(),
            "AgentTool".into(),
        ],
        ..Config::default()
    };
    config.providers.openai.base_url = Some(openai.openai_base());
    if let Some(a) = anthropic {
        config.providers.anthropic.base_url = Some(a.base_url());
    }
    tweak(&mut config);
    let runtime = Runtime::open(RuntimeOptions {
        paths: Paths::under(&dir.path().join("home")),
        keys: Arc::new(
            StaticKeys::new()
                .with("openai", "sk-test")
                .with("anthropic", "sk-ant-test")
                .with("gemini", "gm-test"),
        ),
        config: Some(config),
    })
    .await
    .unwrap();
    runtime.start_dispatcher();
    Harness {
        _dir: dir,
        ws,
        runtime,
    }
}

impl Harness {
    async fn chat(&self, model: Option<&str>) -> String {
        self.runtime
            .create_chat(CreateChat {
                workspace: Some(self.ws.clone()),
                model: model.map(str::to_string),
                ..CreateChat::default()
            })
            .await
            .unwrap()
            .id
    }

    async fn transcript(&self, chat: &str) -> Vec<ChatMessage> {
        self.runtime
            .messages(chat)
            .await
            .unwrap()
            .into_iter()
            .map(|m: StoredMessage| m.message)
            .collect()
    }

    async fn inbox_messages(&self, chat: &str) -> Vec<String> {
        self.transcript(chat)
            .await
            .into_iter()
            .filter_map(|m| match m {
                ChatMessage::User { text, .. } if text.starts_with("[inbox message") => Some(text),
                _ => None,
            })
            .collect()
    }
}

fn call(id: &str, name: &str, args: serde_json::Value) -> Turn {
    Turn::tool_call(id, name, args.to_string())
}

/// Polls `cond` every 50 ms for up to 60 s (a deadline against hangs, not a timing assertion).
async fn eventually<F, Fut>(what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..1200 {
        if cond().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for: {what}");
}

/// The id `start_command` returned in a chat's transcript.
/// A chat whose first turn started `command` with `start_command` (the model then answers
/// "started"); returns the server, the harness, the chat id and the command id.
async fn chat_with_started_command(command: &str) -> (ScriptedServer, Harness, String, String) {
    let server = ScriptedServer::start(vec![
        call(
            "c1",
            "start_command",
            serde_json::json!({"content": command}),
        ),
        Turn::text("started"),
    ])
    .await;
    let h = harness(&server, None).await;
    let chat = h.chat(None).await;
    h.runtime
        .send_message(&chat, "start", RunOptions::default())
        .await
        .unwrap();
    let id = started_id(&h.transcript(&chat).await);
    (server, h, chat, id)
}

fn started_id(transcript: &[ChatMessage]) -> String {
    transcript
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool {
                tool_name, content, ..
            } if tool_name == "start_command" => content
                .split_whitespace()
                .find(|w| w.starts_with("cmd-"))
                .map(str::to_string),
            _ => None,
        })
        .expect("a started command")
}

fn process_exists(marker: &str) -> bool {
    let out = std::process::Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .unwrap();
    !String::from_utf8_lossy(&out.stdout).trim().is_empty()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_agent_is_woken_exactly_once_by_a_finishing_command() {
    let server = ScriptedServer::start(vec![
        call(
            "c1",
            "start_command",
            serde_json::json!({"content": "sleep 1; echo wake-marker-1; exit 3"}),
        ),
        Turn::text("started it"),
        Turn::text("the command ended with 3"),
    ])
    .await;
    let h = harness(&server, None).await;
    let chat = h.chat(None).await;
    let summary = h
        .runtime
        .send_message(&chat, "start the job", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(summary.outcome, RunOutcome::Completed);
    assert_eq!(summary.text, "started it");
    eventually("the wake-up turn", || async {
        h.runtime
            .inbox(Some(&chat))
            .await
            .unwrap()
            .iter()
            .any(|m| m.status == InboxStatus::Delivered)
            && h.transcript(&chat).await.last()
                == Some(&ChatMessage::Assistant {
                    text: "the command ended with 3".into(),
                    tool_calls: vec![],
                })
    })
    .await;
    // Give a second wake-up every chance to happen: none does.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(server.requests().len(), 3);
    let woken = h.inbox_messages(&chat).await;
    assert_eq!(woken.len(), 1, "{woken:?}");
    assert!(woken[0].contains("exited with code 3"), "{}", woken[0]);
    assert!(woken[0].contains("wake-marker-1"), "{}", woken[0]);
    // The model saw the report as a user message.
    let last = server.requests().last().cloned().unwrap();
    assert!(last.to_string().contains("wake-marker-1"));
    // The sidebar knows the command.
    let tasks = h.runtime.background_tasks();
    assert_eq!(tasks.len(), 1);
    assert_eq!(
        (tasks[0].kind, tasks[0].status, tasks[0].exit_code),
        (
            BackgroundTaskKind::Command,
            BackgroundTaskStatus::Finished,
            Some(3)
        )
    );
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_wake_up_follows_when_check_command_already_read_the_end() {
    let (server, h, chat, id) = chat_with_started_command("sleep 4; echo read-marker").await;
    server.push_turns(vec![
        call(
            "c2",
            "check_command",
            serde_json::json!({"command_id": id, "wait_seconds": 30}),
        ),
        Turn::text("it printed read-marker"),
    ]);
    let summary = h
        .runtime
        .send_message(&chat, "wait for it", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(summary.text, "it printed read-marker");
    let checked = h.transcript(&chat).await;
    assert!(
        checked.iter().any(|m| matches!(m, ChatMessage::Tool { tool_name, content, .. }
            if tool_name == "check_command" && content.contains("exited with code 0") && content.contains("read-marker"))),
        "{checked:?}"
    );
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert_eq!(server.requests().len(), 4);
    assert_eq!(h.inbox_messages(&chat).await, Vec::<String>::new());
    let inbox = h.runtime.inbox(Some(&chat)).await.unwrap();
    assert!(
        inbox.iter().all(|m| m.status == InboxStatus::Cancelled),
        "{inbox:?}"
    );
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_wake_up_follows_stop_command_and_no_process_of_the_tree_is_left() {
    let marker = format!("sleep 3{}", std::process::id() % 100 + 100);
    let script = format!("sh -c '{marker} & {marker} & wait'");
    let (server, h, chat, id) = chat_with_started_command(&script).await;
    eventually("the tree to start", || async { process_exists(&marker) }).await;
    server.push_turns(vec![
        call("c2", "stop_command", serde_json::json!({"command_id": id})),
        Turn::text("stopped"),
    ]);
    h.runtime
        .send_message(&chat, "stop it", RunOptions::default())
        .await
        .unwrap();
    assert!(!process_exists(&marker), "a process of the tree survived");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(server.requests().len(), 4);
    assert_eq!(h.runtime.inbox(Some(&chat)).await.unwrap(), vec![]);
    let tasks = h.runtime.background_tasks();
    assert_eq!(tasks[0].status, BackgroundTaskStatus::Stopped);
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_ends_during_a_turn_is_reported_in_place_before_the_next_step() {
    let server = ScriptedServer::start(vec![
        call(
            "c1",
            "start_command",
            serde_json::json!({"content": "sleep 1; echo inplace-marker"}),
        ),
        call(
            "c2",
            "run_command",
            serde_json::json!({"content": "sleep 3"}),
        ),
        Turn::text("done"),
    ])
    .await;
    let h = harness(&server, None).await;
    let chat = h.chat(None).await;
    let summary = h
        .runtime
        .send_message(&chat, "go", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(summary.text, "done");
    let transcript = h.transcript(&chat).await;
    // The report joined the running turn: after the command started, before the final answer,
    // once; and the model saw it in its next step.
    let at: Vec<usize> = transcript
        .iter()
        .enumerate()
        .filter(
            |(_, m)| matches!(m, ChatMessage::User { text, .. } if text.contains("inplace-marker")),
        )
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 1, "{transcript:?}");
    assert!(at[0] > 2 && at[0] < transcript.len() - 1, "{transcript:?}");
    assert!(server.requests()[2].to_string().contains("inplace-marker"));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(server.requests().len(), 3);
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_of_another_chat_cannot_be_checked_or_stopped() {
    let (server, h, _owner, id) = chat_with_started_command("sleep 30").await;
    let b = h.chat(None).await;
    server.push_turns(vec![
        Turn::tool_calls(vec![
            Item::tool_call(
                "c2",
                "check_command",
                serde_json::json!({"command_id": id}).to_string(),
            ),
            Item::tool_call(
                "c3",
                "stop_command",
                serde_json::json!({"command_id": id}).to_string(),
            ),
        ]),
        Turn::text("no luck"),
    ]);
    h.runtime
        .send_message(&b, "peek", RunOptions::default())
        .await
        .unwrap();
    let results: Vec<(bool, String)> = h
        .transcript(&b)
        .await
        .into_iter()
        .filter_map(|m| match m {
            ChatMessage::Tool {
                is_error, content, ..
            } => Some((is_error, content)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2);
    for (is_error, content) in results {
        assert!(is_error);
        assert!(content.contains("belongs to another chat"), "{content}");
    }
    assert_eq!(
        h.runtime.background_tasks()[0].status,
        BackgroundTaskStatus::Running
    );
    h.runtime.shutdown().await;
    assert_eq!(
        h.runtime.background_tasks()[0].status,
        BackgroundTaskStatus::Stopped
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_chat_messages_another_which_answers_and_the_answer_is_readable() {
    // Chat A talks to the OpenAI-format server, chat B to the Anthropic-format one, so the two
    // scripts do not interleave.
    let a_server = ScriptedServer::start(vec![]).await;
    let b_server = ScriptedServer::start(vec![Turn::text("hello from B, 42")]).await;
    let h = harness(&a_server, Some(&b_server)).await;
    let a = h.chat(Some("openai/gpt-test")).await;
    let b = h.chat(Some("anthropic/claude-test")).await;
    a_server.push_turns(vec![
        call(
            "s1",
            "agent_send",
            serde_json::json!({"agent_id": b, "message": "what is the answer?"}),
        ),
        Turn::text("sent"),
    ]);
    let summary = h
        .runtime
        .send_message(&a, "ask B", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(summary.text, "sent");
    eventually("B's answer", || async {
        matches!(h.transcript(&b).await.last(), Some(ChatMessage::Assistant { text, .. }) if text == "hello from B, 42")
    })
    .await;
    let received = h.inbox_messages(&b).await;
    assert_eq!(received.len(), 1);
    assert!(received[0].contains("what is the answer?"));
    assert!(received[0].contains(&a));
    a_server.push_turns(vec![
        Turn::tool_calls(vec![
            Item::tool_call(
                "r1",
                "agent_read",
                serde_json::json!({"agent_id": b}).to_string(),
            ),
            Item::tool_call(
                "l1",
                "agent_list",
                serde_json::json!({"recent": true}).to_string(),
            ),
        ]),
        Turn::text("B says 42"),
    ]);
    h.runtime
        .send_message(&a, "what did B say?", RunOptions::default())
        .await
        .unwrap();
    let read = h
        .transcript(&a)
        .await
        .into_iter()
        .find_map(|m| match m {
            ChatMessage::Tool {
                tool_name,
                content,
                is_error: false,
                ..
            } if tool_name == "agent_read" => Some(content),
            _ => None,
        })
        .unwrap();
    assert!(read.contains("assistant: hello from B, 42"), "{read}");
    let listed = h
        .transcript(&a)
        .await
        .into_iter()
        .find_map(|m| match m {
            ChatMessage::Tool {
                tool_call_id,
                content,
                ..
            } if tool_call_id == "l1" => Some(content),
            _ => None,
        })
        .unwrap();
    let agents: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let b_entry = agents
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == b.as_str())
        .unwrap();
    assert_eq!(b_entry["kind"], "chat");
    assert_eq!(b_entry["status"], "idle");
    // A peer: address that names no paired device is refused with the reason.
    a_server.push_turns(vec![
        call(
            "p1",
            "agent_send",
            serde_json::json!({"agent_id": "peer:laptop", "message": "hi"}),
        ),
        Turn::text("ok"),
    ]);
    h.runtime
        .send_message(&a, "ping the laptop", RunOptions::default())
        .await
        .unwrap();
    let refused = h.transcript(&a).await.into_iter().any(|m| {
        matches!(m,
        ChatMessage::Tool { tool_call_id, is_error: true, content, .. }
            if tool_call_id == "p1" && content.contains("no paired device 'laptop'"))
    });
    assert!(refused);
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_reports_back_and_cannot_use_agent_send() {
    // The parent uses the Anthropic-format server, sub-agents the OpenAI-format one.
    let sub_server = ScriptedServer::start(vec![
        Turn::tool_calls(vec![
            Item::tool_call(
                "x1",
                "agent_send",
                serde_json::json!({"agent_id": "whoever", "message": "escape"}).to_string(),
            ),
            Item::tool_call(
                "x2",
                "spawn_agent",
                serde_json::json!({"task": "go deeper", "profile": "explore"}).to_string(),
            ),
        ]),
        Turn::text("found 3 files"),
    ])
    .await;
    let parent_server = ScriptedServer::start(vec![
        call(
            "d1",
            "spawn_agent",
            serde_json::json!({"task": "count the files", "profile": "explore"}),
        ),
        Turn::text("delegated"),
        Turn::text("the sub-agent found 3 files"),
    ])
    .await;
    let h = harness_with(&sub_server, Some(&parent_server), |c| {
        c.subagent_model = Some("openai/gpt-sub".into());
    })
    .await;
    let parent = h.chat(Some("anthropic/claude-test")).await;
    let summary = h
        .runtime
        .send_message(&parent, "delegate it", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(summary.text, "delegated");
    eventually("the parent to read the report", || async {
        matches!(h.transcript(&parent).await.last(), Some(ChatMessage::Assistant { text, .. }) if text == "the sub-agent found 3 files")
    })
    .await;
    let reports = h.inbox_messages(&parent).await;
    assert_eq!(reports.len(), 1);
    assert!(reports[0].contains("subagent_report"), "{}", reports[0]);
    assert!(reports[0].contains("found 3 files"), "{}", reports[0]);
    let tasks = h.runtime.background_tasks();
    let sub = tasks
        .iter()
        .find(|t| t.kind == BackgroundTaskKind::Agent)
        .unwrap();
    assert_eq!(sub.status, BackgroundTaskStatus::Finished);
    assert_eq!(sub.chat_id, parent);
    // The sub-agent's agent_send was refused, and it never had the lifecycle tools.
    let child = h.transcript(&sub.id).await;
    let refused = child.iter().any(|m| {
        matches!(m,
        ChatMessage::Tool { tool_name, is_error: true, content, .. }
            if tool_name == "agent_send" && content.contains("not enabled"))
    });
    assert!(refused, "{child:?}");
    // Depth 1: a sub-agent cannot start a sub-agent of its own.
    let deeper = child.iter().any(|m| {
        matches!(m,
        ChatMessage::Tool { tool_call_id, is_error: true, content, .. }
            if tool_call_id == "x2" && content.contains("not enabled"))
    });
    assert!(deeper, "{child:?}");
    assert_eq!(h.runtime.list_chats().await.unwrap().len(), 2);
    assert_eq!(
        h.runtime
            .background_tasks()
            .iter()
            .filter(|t| t.kind == BackgroundTaskKind::Agent)
            .count(),
        1
    );
    let offered = sub_server.requests()[0].to_string();
    assert!(offered.contains("read_file"));
    assert!(!offered.contains("agent_send"));
    assert!(!offered.contains("\"spawn_agent\""));
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_in_sandbox_mode_cannot_write_outside_its_workspace() {
    let server = ScriptedServer::start(vec![]).await;
    let h = harness(&server, None).await;
    let chat = h.chat(None).await;
    h.runtime.set_sandbox(&chat, Some(true)).await.unwrap();
    assert!(h.runtime.sandbox_enabled(&chat).await.unwrap());
    let outside = h.ws.parent().unwrap().join("outside.txt");
    // The permission engine cannot see where `$D` points; the sandbox stops the write anyway.
    let script = "D=$(dirname \"$PWD\"); echo ok > inside.txt; echo \"ws:$?\"; echo no > \"$D/outside.txt\"; echo \"out:$?\"";
    server.push_turns(vec![
        call("c1", "run_command", serde_json::json!({"content": script})),
        Turn::text("done"),
    ]);
    h.runtime
        .send_message(&chat, "write", RunOptions::default())
        .await
        .unwrap();
    let result = h
        .transcript(&chat)
        .await
        .into_iter()
        .find_map(|m| match m {
            ChatMessage::Tool { content, .. } => Some(content),
            _ => None,
        })
        .unwrap();
    assert!(
        result.contains("ws:0") && result.contains("out:1"),
        "{result}"
    );
    assert!(h.ws.join("inside.txt").exists());
    assert!(!outside.exists());
    // Off again: the host runs it.
    h.runtime.set_sandbox(&chat, Some(false)).await.unwrap();
    assert!(!h.runtime.sandbox_enabled(&chat).await.unwrap());
    h.runtime.shutdown().await;
}

/// Asserts that in an OpenAI-format request every tool call of an assistant message is answered
/// by `tool` messages before any other message follows (providers refuse anything else).
fn assert_every_call_answered_before_the_next_message(request: &serde_json::Value) {
    let messages = request["messages"].as_array().unwrap();
    let mut open: Vec<String> = Vec::new();
    for m in messages {
        if m["role"] == "tool" {
            let id = m["tool_call_id"].as_str().unwrap().to_string();
            assert!(
                open.contains(&id),
                "result for a call that is not open: {m}"
            );
            open.retain(|o| o != &id);
            continue;
        }
        assert!(
            open.is_empty(),
            "calls {open:?} have no result before {m}\nrequest: {request}"
        );
        if let Some(calls) = m["tool_calls"].as_array() {
            open.extend(calls.iter().map(|c| c["id"].as_str().unwrap().to_string()));
        }
    }
    assert!(open.is_empty(), "calls {open:?} have no result at the end");
}

/// The roles (and for tool results the call id) of an OpenAI-format request, in order.
fn shape(request: &serde_json::Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match m["tool_call_id"].as_str() {
            Some(id) => format!("tool:{id}"),
            None => m["role"].as_str().unwrap().to_string(),
        })
        .collect()
}

fn inbox_message(id: &str, target: &str, text: &str) -> suzent_runtime::NewInboxMessage {
    suzent_runtime::NewInboxMessage {
        id: id.into(),
        target: target.into(),
        sender: "tester".into(),
        kind: "agent_message".into(),
        text: text.into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inbox_message_to_a_chat_killed_mid_turn_comes_after_a_result_for_every_open_call() {
    let server = ScriptedServer::start(vec![Turn::text("noted")]).await;
    let h = harness(&server, None).await;
    let chat = h.chat(None).await;
    std::fs::write(h.ws.join("notes.txt"), "note-content-7").unwrap();
    // The transcript a process leaves when it is killed while the first of two calls runs: the
    // assistant message with both calls is stored, the first call's step is recorded as
    // running, no result exists.
    let store = suzent_store::Store::open(&h.runtime.paths().database())
        .await
        .unwrap();
    let running_args = serde_json::json!({"content": "echo ran >> count.txt"}).to_string();
    store
        .append_message(
            &chat,
            Some("run-dead"),
            &ChatMessage::User {
                text: "do two things".into(),
                attachments: Vec::new(),
            },
        )
        .await
        .unwrap();
    store
        .append_message(
            &chat,
            Some("run-dead"),
            &ChatMessage::Assistant {
                text: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "c_running".into(),
                        name: "run_command".into(),
                        arguments: running_args.clone(),
                    },
                    ToolCall {
                        id: "c_open".into(),
                        name: "read_file".into(),
                        arguments: serde_json::json!({"file_path": "notes.txt"}).to_string(),
                    },
                ],
            },
        )
        .await
        .unwrap();
    assert!(
        store
            .begin_tool_step(&chat, "c_running", "run_command", &running_args)
            .await
            .unwrap()
    );
    h.runtime
        .enqueue_inbox(inbox_message("m-open", &chat, "status please"))
        .await
        .unwrap();
    eventually("the delivery turn", || async {
        h.runtime.inbox(Some(&chat)).await.unwrap()[0].status == InboxStatus::Delivered
    })
    .await;
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_every_call_answered_before_the_next_message(&requests[0]);
    assert_eq!(
        shape(&requests[0]),
        [
            "system",
            "user",
            "assistant",
            "tool:c_running",
            "tool:c_open",
            "user"
        ]
    );
    let transcript = h.transcript(&chat).await;
    let result = |id: &str| {
        transcript
            .iter()
            .find_map(|m| match m {
                ChatMessage::Tool {
                    tool_call_id,
                    content,
                    is_error,
                    ..
                } if tool_call_id == id => Some((*is_error, content.clone())),
                _ => None,
            })
            .unwrap()
    };
    // The call that was running is reported as interrupted and never runs again; the call that
    // never started is decided and runs now.
    let (interrupted_error, interrupted) = result("c_running");
    assert!(
        interrupted_error && interrupted.contains("interrupted"),
        "{interrupted}"
    );
    assert!(
        !h.ws.join("count.txt").exists(),
        "the interrupted call ran again"
    );
    let (open_error, opened) = result("c_open");
    assert!(!open_error && opened.contains("note-content-7"), "{opened}");
    assert_eq!(h.inbox_messages(&chat).await.len(), 1);
    assert!(
        matches!(transcript.last(), Some(ChatMessage::Assistant { text, .. }) if text == "noted")
    );
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inbox_message_waits_for_a_pending_approval_and_is_delivered_once_after_it() {
    let server = ScriptedServer::start(vec![call(
        "w1",
        "run_command",
        serde_json::json!({"content": "printf approved > out.txt"}),
    )])
    .await;
    let h = harness(&server, None).await;
    let chat = h
        .runtime
        .create_chat(CreateChat {
            workspace: Some(h.ws.clone()),
            mode: Some(PermissionMode::Default),
            ..CreateChat::default()
        })
        .await
        .unwrap()
        .id;
    let summary = h
        .runtime
        .send_message(&chat, "write it", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(summary.outcome, RunOutcome::Suspended);
    h.runtime
        .enqueue_inbox(inbox_message("m-wait", &chat, "while you wait"))
        .await
        .unwrap();
    // The dispatcher's slow poll is 2 s: give it two rounds. The message stays queued, no
    // attempt is used up, nothing is written into the transcript, the model is not asked.
    tokio::time::sleep(Duration::from_millis(4500)).await;
    let queued = h.runtime.inbox(Some(&chat)).await.unwrap();
    assert_eq!(
        (queued[0].status, queued[0].attempts),
        (InboxStatus::Pending, 0)
    );
    assert_eq!(h.inbox_messages(&chat).await, Vec::<String>::new());
    assert_eq!(server.requests().len(), 1);
    // A user message would come between the call and its result: refused, nothing stored.
    let refused = h
        .runtime
        .send_message(&chat, "and another thing", RunOptions::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("waiting for the user's approval") && refused.contains("run_command"),
        "{refused}"
    );
    // Answering the approval continues the turn: the call runs, then the message joins the
    // turn in place (after the call's result, before the next model step), once.
    server.push_turns(vec![Turn::text("written, and got your message")]);
    let resumed = h
        .runtime
        .resume_approvals(
            &chat,
            vec![suzent_core::ApprovalResponse {
                request_id: summary.pending[0].id.clone(),
                action_id: "allow_once".into(),
                tool_call_id: None,
                feedback: None,
                rule: None,
            }],
            RunOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(resumed.text, "written, and got your message");
    let delivered = h.runtime.inbox(Some(&chat)).await.unwrap();
    assert_eq!(
        (delivered[0].status, delivered[0].attempts),
        (InboxStatus::Delivered, 1)
    );
    assert_eq!(
        std::fs::read_to_string(h.ws.join("out.txt")).unwrap(),
        "approved"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_every_call_answered_before_the_next_message(r);
    }
    assert_eq!(
        shape(&requests[1]),
        ["system", "user", "assistant", "tool:w1", "user"]
    );
    assert!(requests[1].to_string().contains("while you wait"));
    // Nothing more follows: no second delivery, no extra turn.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(h.inbox_messages(&chat).await.len(), 1);
    assert_eq!(server.requests().len(), 2);
    h.runtime.shutdown().await;
}

/// The content of the tool result answering call `id`.
fn result_of(transcript: &[ChatMessage], id: &str) -> (bool, String) {
    transcript
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool {
                tool_call_id,
                content,
                is_error,
                ..
            } if tool_call_id == id => Some((*is_error, content.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id} in {transcript:?}"))
}

fn spawn_call(id: &str, task: &str) -> Item {
    Item::tool_call(
        id,
        "spawn_agent",
        serde_json::json!({"task": task, "profile": "explore"}).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawning_beyond_the_sub_agent_limits_is_refused_with_the_limit_named() {
    // Sub-agents answer slowly (about 1 s per stream frame), so they are all still running
    // while the parents spawn.
    let slow = || Turn::text("sub done").delayed(1000);
    let sub_server = ScriptedServer::start(vec![slow(), slow(), slow()]).await;
    let a_server = ScriptedServer::start(vec![
        Turn::tool_calls(vec![
            spawn_call("a1", "task a1"),
            spawn_call("a2", "task a2"),
            spawn_call("a3", "task a3"),
        ]),
        Turn::text("a delegated"),
    ])
    .await;
    let b_server = ScriptedServer::start(vec![
        Turn::tool_calls(vec![
            spawn_call("b1", "task b1"),
            spawn_call("b2", "task b2"),
        ]),
        Turn::text("b delegated"),
    ])
    .await;
    let h = harness_with(&sub_server, Some(&a_server), |c| {
        c.subagent_model = Some("openai/gpt-sub".into());
        c.subagent_max_per_chat = 2;
        c.subagent_max_running = 3;
        c.providers.gemini.base_url = Some(b_server.base_url());
    })
    .await;
    let a = h.chat(Some("anthropic/claude-test")).await;
    let b = h.chat(Some("gemini/gemini-test")).await;
    h.runtime
        .send_message(&a, "delegate three", RunOptions::default())
        .await
        .unwrap();
    h.runtime
        .send_message(&b, "delegate two", RunOptions::default())
        .await
        .unwrap();
    let ta = h.transcript(&a).await;
    // The Gemini wire format has no call ids: the runtime numbers them.
    let tb = h.transcript(&b).await;
    for (t, id) in [(&ta, "a1"), (&ta, "a2"), (&tb, "gemini-call-1")] {
        let (error, text) = result_of(t, id);
        assert!(
            !error && text.starts_with("started sub-agent"),
            "{id}: {text}"
        );
    }
    let (error, per_chat) = result_of(&ta, "a3");
    assert!(error, "{per_chat}");
    assert!(
        per_chat.contains("sub-agent limit reached")
            && per_chat.contains("subagent_max_per_chat = 2")
            && per_chat.contains("not started"),
        "{per_chat}"
    );
    let (error, global) = result_of(&tb, "gemini-call-2");
    assert!(error, "{global}");
    assert!(
        global.contains("sub-agent limit reached")
            && global.contains("3 sub-agents are running")
            && global.contains("subagent_max_running = 3"),
        "{global}"
    );
    // The refused tasks left nothing behind: no chat, no sidebar entry.
    let agents = |h: &Harness| {
        h.runtime
            .background_tasks()
            .into_iter()
            .filter(|t| t.kind == BackgroundTaskKind::Agent)
            .collect::<Vec<_>>()
    };
    assert_eq!(agents(&h).len(), 3);
    assert!(
        agents(&h)
            .iter()
            .all(|t| t.status == BackgroundTaskStatus::Running)
    );
    assert_eq!(h.runtime.list_chats().await.unwrap().len(), 5);
    // Once they have reported back, the slots are free again.
    eventually("the sub-agents to finish", || async {
        agents(&h)
            .iter()
            .all(|t| t.status == BackgroundTaskStatus::Finished)
    })
    .await;
    sub_server.push_turns(vec![Turn::text("sub done again")]);
    // A's reports may still be in delivery (each starts a turn): wait for A to be idle.
    eventually("A's report turns", || async {
        h.runtime
            .inbox(Some(&a))
            .await
            .unwrap()
            .iter()
            .all(|m| m.status == InboxStatus::Delivered)
            && h.runtime.inbox(Some(&a)).await.unwrap().len() == 2
    })
    .await;
    a_server.push_turns(vec![
        Turn::tool_calls(vec![spawn_call("a4", "task a4")]),
        Turn::text("a delegated again"),
    ]);
    h.runtime
        .send_message(&a, "delegate once more", RunOptions::default())
        .await
        .unwrap();
    let (error, text) = result_of(&h.transcript(&a).await, "a4");
    assert!(!error && text.starts_with("started sub-agent"), "{text}");
    h.runtime.shutdown().await;
}
