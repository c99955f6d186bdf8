//! Long chats fit the model (issue 13 item 4): a 200-turn chat with large tool outputs against
//! an 8k-token window is compacted, every request fits by the runtime's own estimate, and a fact
//! of turn 3 survives into the last answer; a context-overflow error is answered by compaction
//! and one retry; a failed compaction is its own outcome. Real SQLite, real files, the scripted
//! model server speaking the OpenAI wire format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use suzent_core::{
    AgentEvent, ChatMessage, Config, ModelSettings, PermissionMode, RunOutcome, ToolCall,
};
use suzent_runtime::provider::{ModelRequest, StaticKeys, ToolDefinition, tokens};
use suzent_runtime::{CreateChat, Paths, RunOptions, Runtime, RuntimeOptions};
use suzent_tests::{ScriptedServer, Turn};
use tempfile::TempDir;

const WINDOW: u32 = 8_192;
const MAX_TOKENS: u32 = 1_024;
const FACT: &str = "the launch code is AMBER-7731";

struct Harness {
    _dir: TempDir,
    ws: PathBuf,
    runtime: Runtime,
}

async fn harness(server: &ScriptedServer, window: Option<u32>) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws).unwrap();
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        default_mode: PermissionMode::FullAccess,
        tools: vec!["ReadFileTool".into()],
        ..Config::default()
    };
    config.providers.openai.base_url = Some(server.openai_base());
    config.providers.openai.max_tokens = Some(MAX_TOKENS);
    if let Some(w) = window {
        config.models.insert(
            "openai/gpt-test".into(),
            ModelSettings {
                context_window: Some(w),
                ..Default::default()
            },
        );
    }
    let runtime = Runtime::open(RuntimeOptions {
        paths: Paths::under(&dir.path().join("home")),
        keys: Arc::new(StaticKeys::new().with("openai", "sk-test")),
        config: Some(config),
    })
    .await
    .unwrap();
    Harness {
        _dir: dir,
        ws,
        runtime,
    }
}

impl Harness {
    async fn chat(&self) -> String {
        self.runtime
            .create_chat(CreateChat {
                workspace: Some(self.ws.clone()),
                ..CreateChat::default()
            })
            .await
            .unwrap()
            .id
    }

    async fn send(&self, chat: &str, text: &str) -> suzent_runtime::RunSummary {
        self.runtime
            .send_message(chat, text, RunOptions::default())
            .await
            .unwrap()
    }

    /// A file of about `bytes` bytes named after `n`.
    fn big_file(&self, n: usize, bytes: usize) {
        let line = format!("file {n}: some build log output that the model does not need again\n");
        std::fs::write(
            self.ws.join(format!("file_{n}.txt")),
            line.repeat(bytes / line.len() + 1),
        )
        .unwrap();
    }
}

/// The request as the runtime's estimate sees it, rebuilt from the OpenAI wire body.
fn estimate(body: &Value) -> usize {
    let mut request = ModelRequest {
        model: String::new(),
        system: String::new(),
        messages: Vec::new(),
        tools: Vec::new(),
    };
    let text = |m: &Value| m["content"].as_str().unwrap_or_default().to_string();
    for m in body["messages"].as_array().into_iter().flatten() {
        match m["role"].as_str() {
            Some("system") => request.system = text(m),
            Some("user") => request.messages.push(ChatMessage::User {
                text: text(m),
                attachments: Vec::new(),
            }),
            Some("assistant") => request.messages.push(ChatMessage::Assistant {
                text: text(m),
                tool_calls: m["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| ToolCall {
                        id: c["id"].as_str().unwrap_or_default().into(),
                        name: c["function"]["name"].as_str().unwrap_or_default().into(),
                        arguments: c["function"]["arguments"]
                            .as_str()
                            .unwrap_or_default()
                            .into(),
                    })
                    .collect(),
            }),
            _ => request.messages.push(ChatMessage::Tool {
                tool_call_id: m["tool_call_id"].as_str().unwrap_or_default().into(),
                tool_name: String::new(),
                content: text(m),
                is_error: false,
            }),
        }
    }
    for t in body["tools"].as_array().into_iter().flatten() {
        request.tools.push(ToolDefinition {
            name: t["function"]["name"].as_str().unwrap_or_default().into(),
            description: t["function"]["description"]
                .as_str()
                .unwrap_or_default()
                .into(),
            parameters: t["function"]["parameters"].clone(),
        });
    }
    tokens::request_tokens(&request)
}

fn system_of(body: &Value) -> &str {
    body["messages"][0]["content"].as_str().unwrap_or_default()
}

fn is_summary_request(body: &Value) -> bool {
    system_of(body).starts_with("You summarize a conversation")
}

/// The summarizer's answer: a summary that keeps the fact when the request holds it.
fn summary_turn(body: &Value) -> Turn {
    let mut summary =
        String::from("Task: the user has the agent read log files one by one. Decisions: none.");
    if body.to_string().contains(FACT) {
        summary.push_str(&format!(" The user said {FACT}."));
    }
    summary.push_str(" Files touched: file_N.txt (read). Open items: keep reading files.");
    Turn::text(summary)
}

fn last_message(body: &Value) -> &Value {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .unwrap_or(&Value::Null)
}

#[tokio::test]
async fn a_200_turn_chat_with_large_tool_outputs_fits_an_8k_window_and_keeps_a_fact_of_turn_3()
-> anyhow::Result<()> {
    let server = ScriptedServer::start(Vec::new()).await;
    // The model by rule: a summary for summarizing requests; for "Turn N" read file_N.txt, then
    // say it was read; the last question is answered from what the request holds.
    server.set_responder(|body| {
        if is_summary_request(body) {
            return Some(summary_turn(body));
        }
        let last = last_message(body);
        let content = last["content"].as_str().unwrap_or_default();
        if last["role"] == "tool" {
            return Some(Turn::text("Read it."));
        }
        if content.ends_with("What is the launch code?") {
            let answer = if body.to_string().contains("AMBER-7731") {
                "The launch code is AMBER-7731."
            } else {
                "I do not know the launch code."
            };
            return Some(Turn::text(answer));
        }
        let n: usize = content
            .rsplit("Turn ")
            .next()
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|d| d.parse().ok())
            .unwrap_or(0);
        Some(Turn::tool_call(
            "call_0",
            "read_file",
            json!({ "file_path": format!("file_{n}.txt") }).to_string(),
        ))
    });
    let h = harness(&server, Some(WINDOW)).await;
    let mut events = h.runtime.subscribe();
    let chat = h.chat().await;
    for n in 1..=200 {
        h.big_file(n, 3_000);
        let text = if n == 3 {
            format!("Turn {n}. Please remember: {FACT}.")
        } else {
            format!("Turn {n}.")
        };
        let run = h.send(&chat, &text).await;
        assert_eq!(
            (n, run.outcome, run.error),
            (n, RunOutcome::Completed, None)
        );
    }
    let last = h.send(&chat, "What is the launch code?").await;
    assert_eq!(last.text, "The launch code is AMBER-7731.");

    // Every request fits the window with the reply's max_tokens, by the runtime's estimate.
    let requests = server.requests();
    let too_big: Vec<(usize, usize)> = requests
        .iter()
        .enumerate()
        .map(|(i, body)| (i, estimate(body)))
        .filter(|(_, tokens)| *tokens + MAX_TOKENS as usize > WINDOW as usize)
        .collect();
    assert_eq!(too_big, Vec::<(usize, usize)>::new());
    assert!(
        requests
            .iter()
            .all(|b| b["max_tokens"] == json!(MAX_TOKENS))
    );
    // The last answer's request held the fact of turn 3 through the summary.
    let final_request = requests.last().unwrap().to_string();
    assert!(
        final_request.contains("AMBER-7731") && final_request.contains("Conversation compacted")
    );

    // Compacted, recorded and announced; the transcript is whole.
    let compactions = h.runtime.compactions(&chat).await?;
    assert!(compactions.iter().any(|c| c.summary_through_seq > 0));
    assert!(compactions.iter().all(|c| c.trigger == "auto"));
    let mut announced = 0;
    while let Ok(ev) = events.try_recv() {
        if let AgentEvent::ChatCompacted { compaction, .. } = ev {
            assert!(compactions.contains(&compaction));
            announced += 1;
        }
    }
    assert_eq!(announced, compactions.len());
    let transcript = h.runtime.messages(&chat).await?;
    assert_eq!(transcript.len(), 200 * 4 + 2);
    let full_outputs = transcript
        .iter()
        .filter(|m| matches!(&m.message, ChatMessage::Tool { content, .. } if content.len() >= 3_000 && !content.contains("cut by compaction")))
        .count();
    assert_eq!(full_outputs, 200);
    let summaries = requests.iter().filter(|b| is_summary_request(b)).count();
    println!(
        "200 turns: {} requests, {} summarizing, {} compactions",
        requests.len(),
        summaries,
        compactions.len()
    );
    Ok(())
}

/// Two turns that each read a large file, then a third message.
async fn long_chat(h: &Harness, server: &ScriptedServer) -> String {
    let chat = h.chat().await;
    for n in 1..=2 {
        h.big_file(n, 6_000);
        server.push_turns(vec![
            Turn::tool_call(
                format!("call_{n}"),
                "read_file",
                json!({ "file_path": format!("file_{n}.txt") }).to_string(),
            ),
            Turn::text(format!("Read file {n}.")),
        ]);
        let text = if n == 1 {
            format!("Please remember: {FACT}. Read file_1.txt.")
        } else {
            "Read file_2.txt.".to_string()
        };
        assert_eq!(h.send(&chat, &text).await.outcome, RunOutcome::Completed);
    }
    chat
}

fn overflow_error() -> Turn {
    Turn::error(
        400,
        json!({"error": {
            "message": "This model's maximum context length is 4096 tokens. However, your messages resulted in 5013 tokens.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded"
        }})
        .to_string(),
    )
}

#[tokio::test]
async fn a_context_overflow_error_compacts_the_chat_and_the_one_retry_succeeds()
-> anyhow::Result<()> {
    let server = ScriptedServer::start(Vec::new()).await;
    server.set_responder(|body| is_summary_request(body).then(|| summary_turn(body)));
    let h = harness(&server, None).await;
    let chat = long_chat(&h, &server).await;
    let mut events = h.runtime.subscribe();
    server.push_turns(vec![
        overflow_error(),
        Turn::text("Answered after compaction."),
    ]);
    let before = server.requests().len();
    let run = h.send(&chat, "And now?").await;
    assert_eq!(
        (run.outcome, run.error, run.text.as_str()),
        (RunOutcome::Completed, None, "Answered after compaction.")
    );
    let requests = server.requests()[before..].to_vec();
    // The refused request, the summary, the retry.
    assert_eq!(
        requests.iter().map(is_summary_request).collect::<Vec<_>>(),
        vec![false, true, false]
    );
    assert!(estimate(&requests[2]) < estimate(&requests[0]));
    let retry = requests[2].to_string();
    assert!(retry.contains("Conversation compacted") && retry.contains("AMBER-7731"));
    assert!(retry.contains("And now?"));
    let compactions = h.runtime.compactions(&chat).await?;
    assert_eq!(compactions.len(), 1);
    assert_eq!(compactions[0].trigger, "overflow");
    let announced: Vec<String> = std::iter::from_fn(|| events.try_recv().ok())
        .filter_map(|ev| match ev {
            AgentEvent::ChatCompacted { compaction, .. } => Some(compaction.id),
            _ => None,
        })
        .collect();
    assert_eq!(announced, vec![compactions[0].id.clone()]);
    Ok(())
}

#[tokio::test]
async fn a_second_overflow_after_compaction_is_not_retried_again_and_names_itself()
-> anyhow::Result<()> {
    let server = ScriptedServer::start(Vec::new()).await;
    server.set_responder(|body| is_summary_request(body).then(|| summary_turn(body)));
    let h = harness(&server, None).await;
    let chat = long_chat(&h, &server).await;
    server.push_turns(vec![
        overflow_error(),
        overflow_error(),
        Turn::text("unused"),
    ]);
    let before = server.requests().len();
    let run = h.send(&chat, "And now?").await;
    assert_eq!(run.outcome, RunOutcome::ContextOverflow);
    assert!(
        run.error
            .unwrap_or_default()
            .starts_with("context overflow:")
    );
    // The refused request, the summary, one retry; nothing more.
    assert_eq!(server.requests().len() - before, 3);
    assert_eq!(server.remaining(), 1);
    Ok(())
}

#[tokio::test]
async fn a_failed_summary_ends_the_turn_as_compaction_failed_and_the_chat_goes_on()
-> anyhow::Result<()> {
    let server = ScriptedServer::start(Vec::new()).await;
    server.set_responder(|body| {
        is_summary_request(body).then(|| {
            Turn::error(
                400,
                json!({"error": {"message": "model not available for this request", "type": "invalid_request_error"}}).to_string(),
            )
        })
    });
    let h = harness(&server, None).await;
    let chat = long_chat(&h, &server).await;
    let messages_before = h.runtime.messages(&chat).await?;
    server.push_turns(vec![overflow_error()]);
    let run = h.send(&chat, "And now?").await;
    assert_eq!(run.outcome, RunOutcome::CompactionFailed);
    let error = run.error.unwrap_or_default();
    assert!(
        error.starts_with("compaction failed: the model could not summarize")
            && error.contains("model not available"),
        "{error}"
    );
    assert_eq!(h.runtime.compactions(&chat).await?, Vec::new());
    // The transcript kept everything, with the new message; the chat answers the next one.
    let messages_after = h.runtime.messages(&chat).await?;
    assert_eq!(messages_after[..messages_before.len()], messages_before[..]);
    server.push_turns(vec![Turn::text("fine")]);
    assert_eq!(h.send(&chat, "again").await.outcome, RunOutcome::Completed);
    Ok(())
}

#[tokio::test]
async fn compact_chat_summarizes_older_turns_now_and_later_requests_use_the_summary()
-> anyhow::Result<()> {
    let server = ScriptedServer::start(Vec::new()).await;
    server.set_responder(|body| is_summary_request(body).then(|| summary_turn(body)));
    let h = harness(&server, None).await;
    let chat = long_chat(&h, &server).await;
    let info = h.runtime.compact_chat(&chat).await?.expect("compacted");
    assert_eq!(
        (
            info.trigger.as_str(),
            info.tool_outputs_cut >= 1,
            info.messages_summarized >= 1
        ),
        ("manual", true, true)
    );
    assert!(info.tokens_after < info.tokens_before);
    server.push_turns(vec![Turn::text("ok")]);
    h.send(&chat, "Next.").await;
    let next = server.requests().last().unwrap().to_string();
    assert!(next.contains("Conversation compacted") && next.contains("AMBER-7731"));
    // The app shows it where it happened.
    assert_eq!(h.runtime.compactions(&chat).await?, vec![info]);
    // A chat with nothing older than its newest turn has nothing to compact.
    let empty = h.chat().await;
    assert_eq!(h.runtime.compact_chat(&empty).await?, None);
    Ok(())
}
