//! Turns that survive real models and real use (issue 13): tool-call ids that repeat across
//! chats, turns and within one response; failed turns that leave a usable chat; loop guards and
//! stop outcomes. Real SQLite, real files, the scripted model server speaking the OpenAI wire
//! format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use suzent_core::{AgentEvent, ChatMessage, Config, PermissionMode, RunOutcome};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{CreateChat, Paths, RunOptions, Runtime, RuntimeOptions};
use suzent_tests::{Item, ScriptedServer, Turn};
use tempfile::TempDir;

struct Harness {
    _dir: TempDir,
    ws: PathBuf,
    runtime: Runtime,
}

async fn harness(server: &ScriptedServer) -> Harness {
    harness_with(server, |_| {}).await
}

async fn harness_with(server: &ScriptedServer, tune: impl FnOnce(&mut Config)) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws).unwrap();
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        default_mode: PermissionMode::FullAccess,
        tools: vec![
            "WriteFileTool".into(),
            "ReadFileTool".into(),
            "RunCommandTool".into(),
        ],
        ..Config::default()
    };
    config.providers.openai.base_url = Some(server.openai_base());
    tune(&mut config);
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

    async fn transcript(&self, chat: &str) -> Vec<ChatMessage> {
        self.runtime
            .messages(chat)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.message)
            .collect()
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.ws.join(name)).unwrap_or_default()
    }
}

fn write_call(id: &str, path: &str, content: &str) -> Item {
    Item::tool_call(
        id,
        "write_file",
        json!({"file_path": path, "content": content}).to_string(),
    )
}

/// Each tool result of a transcript as (ok, content), in order.
fn results(transcript: &[ChatMessage]) -> Vec<(bool, String)> {
    transcript
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool {
                content, is_error, ..
            } => Some((!is_error, content.clone())),
            _ => None,
        })
        .collect()
}

/// The (call id, result id) pairs the model was sent in one recorded OpenAI request: each
/// assistant call's id and the `tool_call_id` of the tool message answering it.
fn sent_ids(request: &Value) -> (Vec<String>, Vec<String>) {
    let messages = request["messages"].as_array().unwrap();
    let calls = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    let answers = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap().to_string())
        .collect();
    (calls, answers)
}

fn all_distinct(ids: &[String]) -> bool {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted.len() == ids.len()
}

// ---- item 1: tool-call ids are not keys ----

#[tokio::test]
async fn the_same_call_id_in_two_chats_runs_in_each_with_its_own_result() -> anyhow::Result<()> {
    let server = ScriptedServer::start(vec![
        Turn::tool_calls(vec![write_call("call_0", "a.txt", "from chat a")]),
        Turn::text("wrote a"),
        Turn::tool_calls(vec![write_call("call_0", "b.txt", "from chat b")]),
        Turn::text("wrote b"),
    ])
    .await;
    let h = harness(&server).await;
    let (a, b) = (h.chat().await, h.chat().await);
    let first = h.send(&a, "write a").await;
    let second = h.send(&b, "write b").await;
    assert_eq!(
        (first.outcome, second.outcome),
        (RunOutcome::Completed, RunOutcome::Completed)
    );
    assert_eq!(
        (h.read("a.txt"), h.read("b.txt")),
        ("from chat a".to_string(), "from chat b".to_string())
    );
    let (ra, rb) = (
        results(&h.transcript(&a).await),
        results(&h.transcript(&b).await),
    );
    assert_eq!(
        (ra.len(), ra[0].0, rb.len(), rb[0].0),
        (1, true, 1, true),
        "{ra:?} {rb:?}"
    );
    assert!(
        ra[0].1.contains("a.txt") && rb[0].1.contains("b.txt"),
        "{ra:?} {rb:?}"
    );
    Ok(())
}

#[tokio::test]
async fn the_same_call_id_in_two_turns_of_one_chat_runs_twice() -> anyhow::Result<()> {
    let server = ScriptedServer::start(vec![
        Turn::tool_calls(vec![write_call("call_0", "one.txt", "1")]),
        Turn::text("first done"),
        Turn::tool_calls(vec![write_call("call_0", "two.txt", "2")]),
        Turn::text("second done"),
    ])
    .await;
    let h = harness(&server).await;
    let chat = h.chat().await;
    h.send(&chat, "write one").await;
    let second = h.send(&chat, "write two").await;
    assert_eq!(second.outcome, RunOutcome::Completed);
    assert_eq!(
        (h.read("one.txt"), h.read("two.txt")),
        ("1".into(), "2".into())
    );
    let res = results(&h.transcript(&chat).await);
    assert_eq!(
        res.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![true, true]
    );
    // The last request names every call by an id of its own, each answered once.
    let requests = server.requests();
    let (calls, answers) = sent_ids(requests.last().unwrap());
    assert_eq!(calls.len(), 2);
    assert!(all_distinct(&calls), "{calls:?}");
    assert_eq!(calls, answers);
    Ok(())
}

#[tokio::test]
async fn two_calls_of_one_response_with_the_same_id_each_run_once() -> anyhow::Result<()> {
    let server = ScriptedServer::start(vec![
        Turn::tool_calls(vec![
            write_call("call_0", "x.txt", "x"),
            write_call("call_0", "y.txt", "y"),
        ]),
        Turn::text("both written"),
    ])
    .await;
    let h = harness(&server).await;
    let chat = h.chat().await;
    let run = h.send(&chat, "write both").await;
    assert_eq!(
        (run.outcome, run.text.as_str()),
        (RunOutcome::Completed, "both written")
    );
    assert_eq!((h.read("x.txt"), h.read("y.txt")), ("x".into(), "y".into()));
    let res = results(&h.transcript(&chat).await);
    assert_eq!(res.len(), 2);
    assert!(
        res[0].1.contains("x.txt") && res[1].1.contains("y.txt"),
        "{res:?}"
    );
    let requests = server.requests();
    let (calls, answers) = sent_ids(&requests[1]);
    assert!(all_distinct(&calls), "{calls:?}");
    assert_eq!(calls, answers);
    Ok(())
}

#[tokio::test]
async fn calls_with_empty_ids_get_generated_ids_sent_back_consistently() -> anyhow::Result<()> {
    // R2-L07: two parallel calls, both with `"id": ""`.
    let server = ScriptedServer::start(vec![
        Turn::tool_calls(vec![
            write_call("", "p.txt", "p"),
            write_call("", "q.txt", "q"),
        ]),
        Turn::text("done"),
    ])
    .await;
    let h = harness(&server).await;
    let chat = h.chat().await;
    let run = h.send(&chat, "write p and q").await;
    assert_eq!(run.outcome, RunOutcome::Completed);
    assert_eq!((h.read("p.txt"), h.read("q.txt")), ("p".into(), "q".into()));
    let requests = server.requests();
    let (calls, answers) = sent_ids(&requests[1]);
    assert!(
        calls.iter().all(|id| !id.is_empty()) && all_distinct(&calls),
        "{calls:?}"
    );
    assert_eq!(calls, answers);
    // The stored transcript holds the same ids the server was sent.
    let stored: Vec<String> = h
        .transcript(&chat)
        .await
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(stored, answers);
    Ok(())
}

// ---- item 6: no doom loops, no silent stops ----

fn command(id: &str, line: &str) -> Turn {
    Turn::tool_call(
        id,
        "run_command",
        json!({"content": line, "timeout": 30}).to_string(),
    )
}

/// Whether the last tool message of a recorded OpenAI request carries the loop guard's warning.
fn warned(request: &Value) -> bool {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .is_some_and(|c| c.contains("[Suzent loop guard]"))
}

#[tokio::test]
async fn a_call_repeated_with_the_same_result_is_warned_at_three_and_stopped_at_five()
-> anyhow::Result<()> {
    // R2-L09: the same call six times in a row, the same result each time.
    let server = ScriptedServer::start(
        (0..6)
            .map(|_| command("call_0", "echo ran >> count.txt"))
            .chain([Turn::text("never reached")])
            .collect(),
    )
    .await;
    let h = harness(&server).await;
    let chat = h.chat().await;
    let run = h.send(&chat, "append a line").await;
    assert_eq!(run.outcome, RunOutcome::LoopDetected);
    assert!(
        run.error
            .as_deref()
            .unwrap_or("")
            .starts_with("loop detected: run_command was called 4 times"),
        "{run:?}"
    );
    // Run four times; the fifth was not run.
    assert_eq!(h.read("count.txt"), "ran\nran\nran\nran\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(
        requests.iter().map(warned).collect::<Vec<_>>(),
        vec![false, false, false, true, true]
    );
    let res = results(&h.transcript(&chat).await);
    assert_eq!(
        res.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![true, true, true, true, false]
    );
    assert!(res[4].1.contains("this call did not run"), "{res:?}");
    // The warning was only shown to the model, never stored.
    assert!(res.iter().all(|r| !r.1.contains("[Suzent loop guard]")));
    // The chat takes the next message.
    server.push_turns(vec![Turn::text("ok, stopping")]);
    assert_eq!(
        h.send(&chat, "stop that").await.outcome,
        RunOutcome::Completed
    );
    Ok(())
}

#[tokio::test]
async fn a_polling_call_whose_output_changes_is_never_flagged() -> anyhow::Result<()> {
    let server = ScriptedServer::start(
        (0..10)
            .map(|_| command("call_0", "echo tick >> poll.txt; wc -l < poll.txt"))
            .chain([Turn::text("finished polling")])
            .collect(),
    )
    .await;
    let h = harness(&server).await;
    let chat = h.chat().await;
    let run = h.send(&chat, "poll until done").await;
    assert_eq!(
        (run.outcome, run.text.as_str()),
        (RunOutcome::Completed, "finished polling")
    );
    assert_eq!(h.read("poll.txt").lines().count(), 10);
    assert!(server.requests().iter().all(|r| !warned(r)));
    Ok(())
}

#[tokio::test]
async fn a_turn_stopped_by_max_steps_has_its_own_outcome() -> anyhow::Result<()> {
    let server = ScriptedServer::start(vec![
        command("c1", "echo one"),
        command("c2", "echo two"),
        command("c3", "echo three"),
    ])
    .await;
    let h = harness_with(&server, |c| c.max_steps = 2).await;
    let chat = h.chat().await;
    let run = h.send(&chat, "count").await;
    assert_eq!(run.outcome, RunOutcome::MaxSteps);
    assert!(
        run.error
            .as_deref()
            .unwrap_or("")
            .starts_with("Stopped after 2 model steps"),
        "{run:?}"
    );
    assert_eq!(server.requests().len(), 2);
    Ok(())
}

#[tokio::test]
async fn a_context_overflow_names_itself_with_the_servers_message_and_the_chat_goes_on()
-> anyhow::Result<()> {
    let body = json!({"error": {
        "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9013 tokens.",
        "type": "invalid_request_error",
        "code": "context_length_exceeded"
    }})
    .to_string();
    let server =
        ScriptedServer::start(vec![Turn::error(400, body), Turn::text("short answer")]).await;
    let h = harness(&server).await;
    let chat = h.chat().await;
    let run = h.send(&chat, "a very long question").await;
    assert_eq!(run.outcome, RunOutcome::ContextOverflow);
    let error = run.error.unwrap_or_default();
    assert!(
        error.starts_with("context overflow:")
            && error.contains("maximum context length is 8192 tokens"),
        "{error}"
    );
    assert_eq!(
        h.send(&chat, "shorter").await.outcome,
        RunOutcome::Completed
    );
    Ok(())
}

// ---- item 5: providers fail gracefully ----

/// Every `provider_retry` event received so far, as (attempt, max attempts, wait in ms).
fn retries(rx: &mut tokio::sync::broadcast::Receiver<AgentEvent>) -> Vec<(u32, u32, u64)> {
    let mut out = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let AgentEvent::ProviderRetry {
            attempt,
            max_attempts,
            wait_ms,
            ..
        } = ev
        {
            out.push((attempt, max_attempts, wait_ms));
        }
    }
    out
}

#[tokio::test]
async fn a_429_with_retry_after_2_is_waited_out_visibly_and_the_turn_completes()
-> anyhow::Result<()> {
    let server = ScriptedServer::start(vec![
        Turn::error(
            429,
            json!({"error": {"message": "Rate limit reached for gpt-test", "type": "requests"}})
                .to_string(),
        )
        .with_header("Retry-After", "2"),
        Turn::text("answered after the wait"),
    ])
    .await;
    let h = harness(&server).await;
    let chat = h.chat().await;
    let mut rx = h.runtime.subscribe();
    let run = h.send(&chat, "hello").await;
    assert_eq!(
        (run.outcome, run.text.as_str()),
        (RunOutcome::Completed, "answered after the wait")
    );
    assert_eq!(retries(&mut rx), vec![(1, 3, 2_000)]);
    assert_eq!(server.requests().len(), 2);
    Ok(())
}

#[tokio::test]
async fn an_empty_completion_is_retried_once_then_fails_the_turn_with_an_error()
-> anyhow::Result<()> {
    // R2-L10: no text, no calls, finish_reason "stop".
    let server = ScriptedServer::start(vec![Turn::items(vec![]), Turn::items(vec![])]).await;
    let h = harness(&server).await;
    let chat = h.chat().await;
    let mut rx = h.runtime.subscribe();
    let run = h.send(&chat, "hello").await;
    assert_eq!(run.outcome, RunOutcome::Failed);
    let error = run.error.unwrap_or_default();
    assert!(
        error.contains("empty completion") && error.contains("What to do"),
        "{error}"
    );
    assert_eq!(retries(&mut rx), vec![(1, 1, 0)]);
    assert_eq!(server.requests().len(), 2);
    // Not stored as an answer: the transcript holds only the user's message.
    assert_eq!(h.transcript(&chat).await.len(), 1);
    Ok(())
}

#[tokio::test]
async fn an_empty_completion_followed_by_an_answer_completes() -> anyhow::Result<()> {
    let server = ScriptedServer::start(vec![Turn::items(vec![]), Turn::text("here it is")]).await;
    let h = harness(&server).await;
    let chat = h.chat().await;
    let run = h.send(&chat, "hello").await;
    assert_eq!(
        (run.outcome, run.text.as_str()),
        (RunOutcome::Completed, "here it is")
    );
    Ok(())
}

// ---- item 3: Stop keeps what was said ----

/// Waits (up to 60 s, a deadline against hangs) for an event that `pick` accepts.
async fn wait_for(
    rx: &mut tokio::sync::broadcast::Receiver<AgentEvent>,
    pick: impl Fn(&AgentEvent) -> bool,
) {
    let found = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        loop {
            match rx.recv().await {
                Ok(ev) if pick(&ev) => return,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    })
    .await;
    assert!(found.is_ok(), "the event never came");
}

/// Whether a process whose command line contains `needle` is running.
fn process_running(needle: &str) -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .any(|c| c.contains(needle))
}

#[tokio::test]
async fn stopping_while_the_model_streams_keeps_the_text_shown_marked_as_stopped()
-> anyhow::Result<()> {
    let server = ScriptedServer::start(vec![
        Turn::text("The first part arrives, then much more that never does.")
            .chunked(suzent_tests::Chunking::Fragments { size: 5 })
            .delayed(150),
        Turn::text("next answer"),
    ])
    .await;
    let h = harness(&server).await;
    let chat = h.chat().await;
    let mut rx = h.runtime.subscribe();
    let (run, ()) = tokio::join!(h.send(&chat, "tell me"), async {
        wait_for(&mut rx, |e| matches!(e, AgentEvent::TextDelta { .. })).await;
        h.runtime.cancel(&chat);
    });
    assert_eq!(run.outcome, RunOutcome::Cancelled);
    let Some(ChatMessage::Assistant { text, tool_calls }) = h.transcript(&chat).await.pop() else {
        panic!("no assistant message kept");
    };
    assert!(tool_calls.is_empty());
    assert!(
        text.starts_with("The f") && text.ends_with("[stopped by the user]"),
        "{text}"
    );
    assert!(!text.contains("never does"), "{text}");
    assert_eq!(run.text, text);
    // The chat goes on.
    assert_eq!(h.send(&chat, "go on").await.outcome, RunOutcome::Completed);
    Ok(())
}

#[tokio::test]
async fn stopping_during_a_tool_kills_it_records_it_cancelled_and_runs_nothing_after()
-> anyhow::Result<()> {
    let server = ScriptedServer::start(vec![Turn::tool_calls(vec![
        Item::tool_call(
            "s1",
            "run_command",
            json!({"content": "sleep 613", "timeout": 120}).to_string(),
        ),
        Item::tool_call(
            "s2",
            "run_command",
            json!({"content": "echo ran > second.txt", "timeout": 30}).to_string(),
        ),
    ])])
    .await;
    let h = harness(&server).await;
    let chat = h.chat().await;
    let mut rx = h.runtime.subscribe();
    let (run, ()) = tokio::join!(h.send(&chat, "sleep"), async {
        wait_for(&mut rx, |e| matches!(e, AgentEvent::ToolCallStart { .. })).await;
        // The command is running once its process exists.
        for _ in 0..600 {
            if process_running("sleep 613") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        h.runtime.cancel(&chat);
    });
    assert_eq!(run.outcome, RunOutcome::Cancelled);
    let res = results(&h.transcript(&chat).await);
    assert_eq!(
        res.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![false, false]
    );
    assert!(res[0].1.contains("cancelled by the user"), "{res:?}");
    assert!(
        res[1].1.contains("did not run: the user stopped the turn"),
        "{res:?}"
    );
    assert!(!h.ws.join("second.txt").exists());
    assert!(!process_running("sleep 613"));
    Ok(())
}

/// Issue 19 (token counts and cost per turn): each model step's usage is announced with its list
/// price, and the run's total is kept with the chat (read back after a restart).
#[tokio::test]
async fn each_steps_tokens_and_price_are_announced_and_the_runs_total_is_kept() -> anyhow::Result<()>
{
    let server = ScriptedServer::start(vec![
        Turn::tool_call(
            "call_r",
            "read_file",
            json!({"file_path": "a.txt"}).to_string(),
        ),
        Turn::text("Read it."),
    ])
    .await;
    let h = harness_with(&server, |c| c.default_model = Some("openai/gpt-4.1".into())).await;
    std::fs::write(h.ws.join("a.txt"), "hello")?;
    let chat = h.chat().await;
    let mut rx = h.runtime.subscribe();
    let summary = h.send(&chat, "read a.txt").await;
    assert_eq!(summary.outcome, RunOutcome::Completed);
    let mut steps = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let AgentEvent::ModelUsage {
            model,
            input_tokens,
            output_tokens,
            cost_usd,
            ..
        } = ev
        {
            steps.push((model, input_tokens, output_tokens, cost_usd));
        }
    }
    // The scripted server counts 12 request and 7 generated tokens per step; gpt-4.1 lists
    // $2 and $8 per million.
    let price = (12.0 * 2.0 + 7.0 * 8.0) / 1_000_000.0;
    assert_eq!(steps, vec![("gpt-4.1".to_string(), 12, 7, Some(price)); 2]);
    // The notes are written from the bus: wait for the second step.
    let mut usage = Vec::new();
    for _ in 0..200 {
        usage = h.runtime.chat_notes(&chat).await?.usage;
        if usage.first().is_some_and(|u| u.steps == 2) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(usage.len(), 1);
    assert_eq!(
        (
            usage[0].run_id.as_str(),
            usage[0].input_tokens,
            usage[0].output_tokens,
            usage[0].steps
        ),
        (summary.run_id.as_str(), 24, 14, 2)
    );
    assert!((usage[0].cost_usd.unwrap_or(0.0) - 2.0 * price).abs() < 1e-12);
    Ok(())
}

/// A model's own prices (`[models."…"] input_price`, `output_price`) price the turn of a model
/// the built-in table does not know.
#[tokio::test]
async fn a_models_configured_price_prices_its_turns() -> anyhow::Result<()> {
    let server = ScriptedServer::start(vec![Turn::text("Hi.")]).await;
    let h = harness_with(&server, |c| {
        c.default_model = Some("openai/house-model".into());
        c.models.insert(
            "openai/house-model".into(),
            suzent_core::ModelSettings {
                input_price: Some(1.0),
                output_price: Some(3.0),
                ..Default::default()
            },
        );
    })
    .await;
    let chat = h.chat().await;
    let mut rx = h.runtime.subscribe();
    h.send(&chat, "hello").await;
    let mut costs = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let AgentEvent::ModelUsage { cost_usd, .. } = ev {
            costs.push(cost_usd);
        }
    }
    assert_eq!(costs, vec![Some((12.0 * 1.0 + 7.0 * 3.0) / 1_000_000.0)]);
    Ok(())
}
