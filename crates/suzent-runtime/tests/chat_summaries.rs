//! End-of-chat summaries: an idle chat is summarized into archival memory, each stretch of
//! conversation exactly once; deleting a chat never summarizes it and removes its summaries;
//! against the scripted model server (OpenAI wire format) with real SQLite.
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
        vec![
            "Summary of chat 'Our release ships Friday': Mira ships the release on Friday."
                .to_string()
        ]
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
            "Summary of chat 'Our release ships Friday': Mira ships the release on Friday.".to_string(),
            "Summary of chat 'Our release ships Friday': Mira wants metric units in the release notes.".to_string(),
        ]
    );
    runtime.shutdown().await;
}

#[tokio::test]
async fn deleting_a_chat_does_not_summarize_it() {
    let server = ScriptedServer::start(vec![Turn::text("Noted: Friday.")]).await;
    // The idle sweep is not started; with summaries on, the deletion alone asks for nothing.
    let (_dir, runtime) = open(&server, 1800).await;
    let chat = runtime.create_chat(CreateChat::default()).await.unwrap();
    runtime
        .send_message(&chat.id, "The vault code is 4711", RunOptions::default())
        .await
        .unwrap();
    let started = Instant::now();
    runtime.delete_chat(&chat.id).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(server.requests().len(), 1, "no summary request at deletion");
    assert_eq!(summaries(&runtime).await, Vec::<String>::new());
    assert!(
        runtime.messages(&chat.id).await.is_err(),
        "the chat is gone"
    );
}

#[tokio::test]
async fn deleting_a_chat_removes_its_summaries_but_keeps_deliberate_archives() {
    let server = ScriptedServer::start(vec![
        Turn::text("Noted."),
        Turn::text("The vault code is 4711."),
        Turn::text("Noted: metric."),
        Turn::text("The user prefers metric units."),
    ])
    .await;
    let (_dir, runtime) = open(&server, 1800).await;
    let secret = runtime.create_chat(CreateChat::default()).await.unwrap();
    runtime
        .send_message(&secret.id, "The vault code is 4711", RunOptions::default())
        .await
        .unwrap();
    assert!(
        runtime
            .archive_chat_summary(&secret.id)
            .await
            .unwrap()
            .is_some()
    );
    // What the agent archived on purpose from that chat (the memory_archive tool's source).
    runtime
        .archive_memories(
            Some(&secret.id),
            "tool",
            &["The blue door is the office".into()],
        )
        .await
        .unwrap();
    let other = runtime.create_chat(CreateChat::default()).await.unwrap();
    runtime
        .send_message(&other.id, "Use metric units", RunOptions::default())
        .await
        .unwrap();
    assert!(
        runtime
            .archive_chat_summary(&other.id)
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(summaries(&runtime).await.len(), 2);

    runtime.delete_chat(&secret.id).await.unwrap();
    assert_eq!(server.requests().len(), 4, "no summary request at deletion");
    assert_eq!(
        summaries(&runtime).await,
        vec!["Summary of chat 'Use metric units': The user prefers metric units.".to_string()]
    );
    let vault = runtime
        .search_memory("vault code 4711", 10)
        .await
        .unwrap()
        .hits;
    assert!(vault.is_empty(), "{vault:?}");
    let kept = runtime
        .search_memory("blue door office", 10)
        .await
        .unwrap()
        .hits;
    assert_eq!(
        kept.iter().map(|h| h.content.as_str()).collect::<Vec<_>>(),
        ["The blue door is the office"]
    );
}

#[tokio::test]
async fn chats_whose_summary_keeps_failing_do_not_starve_the_others() {
    // Nine chats; the first eight summaries fail (one sweep takes at most eight chats), the
    // ninth request succeeds. It must be the summary of the ninth chat, asked for before any
    // failed chat is retried.
    let mut turns: Vec<Turn> = (1..=9).map(|i| Turn::text(format!("Noted {i}."))).collect();
    turns.extend((0..8).map(|_| Turn::error(500, "{\"error\":{\"message\":\"overloaded\"}}")));
    turns.push(Turn::text("The ninth chat is about lighthouses."));
    let server = ScriptedServer::start(turns).await;
    let (_dir, runtime) = open(&server, 2).await;
    let mut chats = Vec::new();
    for i in 1..=9 {
        let chat = runtime.create_chat(CreateChat::default()).await.unwrap();
        runtime
            .send_message(
                &chat.id,
                &format!("topic of chat {i}"),
                RunOptions::default(),
            )
            .await
            .unwrap();
        chats.push(chat.id);
    }
    runtime.start_dispatcher();
    let summary_requests = || {
        server
            .requests()
            .into_iter()
            .filter(|r| {
                r["messages"][0]["content"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("Summarize"))
            })
            .map(|r| summary_request(&r).1)
            .collect::<Vec<_>>()
    };
    wait_for("nine summary requests", async || {
        summary_requests().len() >= 9
    })
    .await;
    let asked = summary_requests();
    for (i, text) in asked[..8].iter().enumerate() {
        assert!(text.contains(&format!("topic of chat {}", i + 1)), "{text}");
    }
    assert!(asked[8].contains("topic of chat 9"), "{asked:?}");
    wait_for("the ninth chat's summary", async || {
        summaries(&runtime)
            .await
            .iter()
            .any(|s| s.contains("lighthouses"))
    })
    .await;
    runtime.shutdown().await;
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
