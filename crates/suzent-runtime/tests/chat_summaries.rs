//! End-of-chat summaries: an idle chat and a deleted chat are summarized into archival memory,
//! each stretch of conversation exactly once, against the scripted model server (OpenAI wire
//! format) with real SQLite.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_core::Config;
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{CreateChat, Paths, RunOptions, Runtime, RuntimeOptions};
use suzent_tests::{ScriptedServer, Turn};
use tempfile::TempDir;

async fn open(server: &ScriptedServer, idle_secs: u32) -> (TempDir, Runtime) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws).unwrap();
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        workspace: Some(ws),
        tools: Vec::new(),
        chat_summary_idle_secs: idle_secs,
        ..Config::default()
    };
    config.providers.openai.base_url = Some(server.openai_base());
    let runtime = Runtime::open(RuntimeOptions {
        paths: Paths::under(&dir.path().join("home")),
        keys: Arc::new(StaticKeys::new().with("openai", "sk-test")),
        config: Some(config),
    })
    .await
    .unwrap();
    (dir, runtime)
}

/// The stored summaries, oldest first.
async fn summaries(runtime: &Runtime) -> Vec<String> {
    let mut found = runtime
        .search_memory("summary chat", 20)
        .await
        .unwrap()
        .hits;
    found.sort_by_key(|h| h.id);
    found
        .into_iter()
        .map(|h| h.content)
        .filter(|c| c.starts_with("Summary of chat"))
        .collect()
}

async fn wait_for(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn summary_request(request: &Value) -> (String, String) {
    let system = request["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let text = request["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    (system, text)
}

#[tokio::test]
async fn an_idle_chat_is_summarized_once_per_new_stretch_of_conversation() {
    let server = ScriptedServer::start(vec![
        Turn::text("Noted: Friday."),
        Turn::text("Mira ships the release on Friday."),
        Turn::text("Metric it is."),
        Turn::text("Mira wants metric units in the release notes."),
    ])
    .await;
    let (_dir, runtime) = open(&server, 1).await;
    runtime.start_dispatcher();
    let chat = runtime.create_chat(CreateChat::default()).await.unwrap();
    runtime
        .send_message(&chat.id, "Our release ships Friday", RunOptions::default())
        .await
        .unwrap();

    wait_for("the first summary", async || {
        summaries(&runtime).await.len() == 1
    })
    .await;
    let (system, text) = summary_request(&server.requests()[1]);
    assert!(
        system.starts_with("Summarize the following conversation"),
        "{system}"
    );
    assert_eq!(
        text,
        "User: Our release ships Friday\n\nAssistant: Noted: Friday.\n\n"
    );
    // Several sweeps later (idle 1 s: a sweep every 0.5 s) nothing was summarized again.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        server.requests().len(),
        2,
        "one summary request, not one per sweep"
    );
    assert_eq!(
        summaries(&runtime).await,
        vec!["Summary of chat 'New chat': Mira ships the release on Friday.".to_string()]
    );

    // New content makes the chat due again; only the new stretch is summarized.
    runtime
        .send_message(&chat.id, "Use metric units", RunOptions::default())
        .await
        .unwrap();
    wait_for("the second summary", async || {
        summaries(&runtime).await.len() == 2
    })
    .await;
    let (_, text) = summary_request(&server.requests()[3]);
    assert_eq!(
        text,
        "User: Use metric units\n\nAssistant: Metric it is.\n\n"
    );
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(server.requests().len(), 4);
    assert_eq!(
        summaries(&runtime).await,
        vec![
            "Summary of chat 'New chat': Mira ships the release on Friday.".to_string(),
            "Summary of chat 'New chat': Mira wants metric units in the release notes.".to_string(),
        ]
    );
    runtime.shutdown().await;
}

#[tokio::test]
async fn a_deleted_chat_is_summarized_first_unless_already_covered() {
    let server = ScriptedServer::start(vec![
        Turn::text("Noted: Friday."),
        Turn::text("The release ships on Friday."),
        Turn::text("Noted: metric."),
        Turn::text("The user prefers metric units."),
    ])
    .await;
    // The idle sweep is not started: only the deletion summarizes.
    let (_dir, runtime) = open(&server, 1800).await;
    let first = runtime.create_chat(CreateChat::default()).await.unwrap();
    runtime
        .send_message(&first.id, "Our release ships Friday", RunOptions::default())
        .await
        .unwrap();
    runtime.delete_chat(&first.id).await.unwrap();
    assert_eq!(server.requests().len(), 2);
    assert_eq!(
        summaries(&runtime).await,
        vec!["Summary of chat 'New chat': The release ships on Friday.".to_string()]
    );
    assert!(
        runtime.messages(&first.id).await.is_err(),
        "the chat is gone"
    );

    // Summarized on demand, then deleted: nothing new, so no second summary.
    let second = runtime.create_chat(CreateChat::default()).await.unwrap();
    runtime
        .send_message(&second.id, "Use metric units", RunOptions::default())
        .await
        .unwrap();
    let id = runtime.archive_chat_summary(&second.id).await.unwrap();
    assert!(id.is_some());
    assert_eq!(
        runtime.archive_chat_summary(&second.id).await.unwrap(),
        None
    );
    runtime.delete_chat(&second.id).await.unwrap();
    assert_eq!(server.requests().len(), 4, "no summary request at deletion");
    assert_eq!(summaries(&runtime).await.len(), 2);
}

#[tokio::test]
async fn with_summaries_off_a_deleted_chat_is_not_summarized() {
    let server = ScriptedServer::start(vec![Turn::text("Noted.")]).await;
    let (_dir, runtime) = open(&server, 0).await;
    let chat = runtime.create_chat(CreateChat::default()).await.unwrap();
    runtime
        .send_message(&chat.id, "Remember the blue door", RunOptions::default())
        .await
        .unwrap();
    runtime.delete_chat(&chat.id).await.unwrap();
    assert_eq!(server.requests().len(), 1);
    assert_eq!(summaries(&runtime).await, Vec::<String>::new());
}

#[tokio::test]
async fn a_failing_summary_does_not_keep_a_chat_from_being_deleted() {
    let server = ScriptedServer::start(vec![
        Turn::text("Noted."),
        Turn::error(500, "{\"error\":{\"message\":\"overloaded\"}}"),
    ])
    .await;
    let (_dir, runtime) = open(&server, 1800).await;
    let chat = runtime.create_chat(CreateChat::default()).await.unwrap();
    runtime
        .send_message(&chat.id, "Remember the blue door", RunOptions::default())
        .await
        .unwrap();
    runtime.delete_chat(&chat.id).await.unwrap();
    assert!(
        runtime.messages(&chat.id).await.is_err(),
        "the chat is gone"
    );
    assert_eq!(summaries(&runtime).await, Vec::<String>::new());
}

#[test]
fn the_idle_time_is_validated_with_its_field_name() {
    let err = Config::from_toml(
        "chat_summary_idle_secs = 9999999\n",
        std::path::Path::new("config.toml"),
    )
    .unwrap_err();
    assert!(err.to_string().contains("chat_summary_idle_secs"), "{err}");
}
