//! Local models through the runtime with a real model on the CPU (SmolLM2-135M-Instruct, a GGUF
//! from PyPI): a fresh install with a model present runs offline; the model calls `read_file`
//! under the grammar and answers from the result; text streams; the same turn through
//! llama.cpp's own server, whose tool calls come back as text, is recovered and runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_core::{AgentEvent, ChatMessage, Config, RunOutcome};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{CreateChat, Paths, RunOptions, Runtime, RuntimeOptions};
use tempfile::TempDir;

const MODEL_ID: &str = "SmolLM2-135M-Instruct.Q4_1";
const QUESTION: &str = "Use the read_file tool to read secret.txt, then tell me the secret word.";

struct Harness {
    _dir: TempDir,
    ws: PathBuf,
    runtime: Runtime,
}

/// A runtime with no keys and no model configured, the GGUF model in its models folder
/// (hard-linked or copied), and a workspace holding secret.txt.
async fn fresh_install(config: Config, with_model: bool) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::under(&dir.path().join("home"));
    if with_model {
        let models = paths.data_dir.join("models").join("gguf");
        std::fs::create_dir_all(&models).unwrap();
        let target = models.join(format!("{MODEL_ID}.gguf"));
        if std::fs::hard_link(suzent_tests::smollm2_gguf(), &target).is_err() {
            std::fs::copy(suzent_tests::smollm2_gguf(), &target).unwrap();
        }
    }
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("secret.txt"), "The secret word is PAPAYA.\n").unwrap();
    let runtime = Runtime::open(RuntimeOptions {
        paths,
        keys: Arc::new(StaticKeys::new()),
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

fn local_config() -> Config {
    let mut config = Config {
        tools: vec!["ReadFileTool".into()],
        max_steps: 4,
        ..Config::default()
    };
    config.providers.local.context_size = Some(4096);
    config.providers.local.threads = Some(2);
    config.providers.local.max_tokens = Some(96);
    config
}

async fn transcript(runtime: &Runtime, chat: &str) -> Vec<ChatMessage> {
    runtime
        .messages(chat)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.message)
        .collect()
}

/// The read_file call of the turn, its result and the final answer.
fn read_file_turn(messages: &[ChatMessage]) -> (String, String, String) {
    let call = messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Assistant { tool_calls, .. } => tool_calls.first().cloned(),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no tool call: {messages:#?}"));
    let result = messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool {
                tool_call_id,
                content,
                ..
            } if *tool_call_id == call.id => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {}: {messages:#?}", call.id));
    let answer = match messages.last() {
        Some(ChatMessage::Assistant { text, tool_calls }) if tool_calls.is_empty() => text.clone(),
        _ => panic!("the turn did not end with an answer: {messages:#?}"),
    };
    assert_eq!(call.name, "read_file");
    let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
    assert!(
        args["file_path"]
            .as_str()
            .unwrap_or_default()
            .ends_with("secret.txt"),
        "{args}"
    );
    (call.id, result, answer)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_install_with_a_model_present_calls_read_file_and_answers_from_it_offline() {
    let h = fresh_install(local_config(), true).await;
    let chat = h
        .runtime
        .create_chat(CreateChat {
            workspace: Some(h.ws.clone()),
            ..CreateChat::default()
        })
        .await
        .unwrap();
    assert_eq!(chat.model.as_deref(), Some(&*format!("local/{MODEL_ID}")));
    let summary = h
        .runtime
        .send_message(&chat.id, QUESTION, RunOptions::default())
        .await
        .unwrap();
    let messages = transcript(&h.runtime, &chat.id).await;
    assert_eq!(summary.outcome, RunOutcome::Completed, "{summary:?}");
    let (_, result, answer) = read_file_turn(&messages);
    assert!(result.contains("PAPAYA"), "{result}");
    assert!(
        answer.to_uppercase().contains("PAPAYA"),
        "{answer}: {messages:#?}"
    );
    assert_eq!(suzent_tests::tool_markup_in(&answer), None, "{answer}");
    assert_eq!(
        suzent_tests::tool_markup_in(&summary.text),
        None,
        "{summary:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_model_streams_its_text_in_pieces() {
    let h = fresh_install(local_config(), true).await;
    let chat = h
        .runtime
        .create_chat(CreateChat {
            workspace: Some(h.ws.clone()),
            tools: Some(Vec::new()),
            ..CreateChat::default()
        })
        .await
        .unwrap();
    let mut events = h.runtime.subscribe();
    let summary = h
        .runtime
        .send_message(&chat.id, "Name three fruits.", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(summary.outcome, RunOutcome::Completed, "{summary:?}");
    let mut deltas = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let AgentEvent::TextDelta { delta, .. } = event {
            deltas.push(delta);
        }
    }
    assert!(deltas.len() > 3, "{deltas:?}");
    assert_eq!(deltas.concat().trim(), summary.text.trim());
    assert_eq!(
        suzent_tests::tool_markup_in(&deltas.concat()),
        None,
        "{deltas:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn no_model_and_no_key_is_a_clear_error_naming_the_ways_out() {
    let h = fresh_install(local_config(), false).await;
    let error = h.runtime.check_model(None).unwrap_err().to_string();
    assert!(error.contains("suzent models pull"), "{error}");
}

/// llama.cpp's server on a free port, stopped when dropped.
struct LlamaServer {
    child: Child,
    port: u16,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_llama_server(model: &Path) -> LlamaServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // No Jinja: the server knows no tool format, so tools must go in the prompt and the calls
    // come back as text (what many local set-ups do).
    let child = Command::new(suzent_tests::llama_server_binary())
        .args([
            "-m",
            &model.display().to_string(),
            "--no-jinja",
            "-c",
            "4096",
            "-t",
            "2",
        ])
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "-np",
            "1",
            "--alias",
            "smollm2",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = LlamaServer { child, port };
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let ready = http_ok(port, "/health");
        if ready {
            break;
        }
        assert!(Instant::now() < deadline, "llama-server did not start");
        std::thread::sleep(Duration::from_millis(200));
    }
    server
}

/// Whether `GET path` on the loopback port answers 200 (a plain TCP request).
fn http_ok(port: u16, path: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    if write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .is_err()
    {
        return false;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.starts_with("HTTP/1.1 200")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_turn_through_llama_cpp_s_server_recovers_the_call_written_as_text() {
    let server = start_llama_server(&suzent_tests::smollm2_gguf());
    let mut config = local_config();
    config.providers.local.base_url = Some(format!("http://127.0.0.1:{}/v1", server.port));
    config.providers.local.context_size = Some(4096);
    config.default_model = Some("local/smollm2".into());
    let h = fresh_install(config, false).await;
    let report = h.runtime.doctor(None).await;
    let checks: Vec<(String, bool)> = report
        .checks
        .iter()
        .filter(|c| c.name == "models" || c.name == "completion")
        .map(|c| (c.name.clone(), c.ok))
        .collect();
    assert_eq!(
        checks,
        [
            ("models".to_string(), true),
            ("completion".to_string(), true)
        ],
        "{report:?}"
    );
    let chat = h
        .runtime
        .create_chat(CreateChat {
            workspace: Some(h.ws.clone()),
            ..CreateChat::default()
        })
        .await
        .unwrap();
    let mut events = h.runtime.subscribe();
    let summary = h
        .runtime
        .send_message(&chat.id, QUESTION, RunOptions::default())
        .await
        .unwrap();
    // What this shows is the call written as text, recovered and run. The 135M model may keep
    // calling tools after the result until max_steps (its own outcome since issue 13).
    assert!(
        matches!(
            summary.outcome,
            RunOutcome::Completed | RunOutcome::MaxSteps
        ),
        "{summary:?}"
    );
    let messages = transcript(&h.runtime, &chat.id).await;
    let (_, result, _) = read_file_turn(&messages);
    assert!(result.contains("PAPAYA"), "{result}");
    let mut shown = String::new();
    while let Ok(event) = events.try_recv() {
        if let AgentEvent::TextDelta { delta, .. } = event {
            shown.push_str(&delta);
        }
    }
    assert_eq!(
        suzent_tests::tool_markup_in(&shown),
        None,
        "markup reached the UI: {shown}"
    );
    assert_eq!(
        suzent_tests::tool_markup_in(&summary.text),
        None,
        "{summary:?}"
    );
}
