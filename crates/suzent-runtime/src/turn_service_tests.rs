//! Tests of the turn service on its own: a [`TurnService`] opened over the fixture's services
//! (no `Runtime`, dispatcher or scheduler), driven by the scripted model server speaking the
//! OpenAI wire format. Kept beside `turn/` rather than in it so that changes to the loop and
//! its tests do not collide.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::test_services::TestServices;
use crate::turn::{RunOptions, TurnService};
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::Arc;
use suzent_core::{AgentEvent, ApprovalResponse, ChatMessage, Config, PermissionMode, RunOutcome};
use suzent_store::ChatRecord;
use suzent_tests::{ScriptedServer, Turn};

/// The fixture with `openai/gpt-test` on `server`, the shell and file tools, `mode` by default.
async fn services(server: &ScriptedServer, mode: PermissionMode) -> TestServices {
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        default_mode: mode,
        tools: vec!["RunCommandTool".into(), "ReadFileTool".into()],
        ..Config::default()
    };
    config.providers.openai.base_url = Some(server.openai_base());
    TestServices::open(config).await
}

async fn transcript(s: &TestServices, chat: &ChatRecord) -> Vec<ChatMessage> {
    s.store
        .messages(&chat.id)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.message)
        .collect()
}

async fn send(turn: &Arc<TurnService>, chat: &ChatRecord, text: &str) -> crate::RunSummary {
    turn.send_message(&chat.id, text, Vec::new(), RunOptions::default())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_turn_streams_the_models_answer_stores_it_and_ends_completed() -> anyhow::Result<()> {
    let server = ScriptedServer::start(vec![Turn::text("Hello from the model.")]).await;
    let s = services(&server, PermissionMode::Default).await;
    let turn = s.turn();
    let chat = s.chat().await;
    let mut events = s.events.subscribe();
    let summary = send(&turn, &chat, "Say hello").await;
    assert_eq!(
        (
            summary.outcome,
            summary.text.as_str(),
            summary.error,
            summary.pending
        ),
        (
            RunOutcome::Completed,
            "Hello from the model.",
            None,
            Vec::new()
        )
    );
    assert_eq!(
        transcript(&s, &chat).await,
        vec![
            ChatMessage::User {
                text: "Say hello".into(),
                attachments: Vec::new(),
            },
            ChatMessage::Assistant {
                text: "Hello from the model.".into(),
                tool_calls: Vec::new()
            },
        ]
    );
    // The model got the user's message; the answer was announced as it streamed.
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    let last = sent[0]["messages"].as_array().unwrap().last().cloned();
    assert_eq!(last, Some(json!({"role": "user", "content": "Say hello"})));
    let mut streamed = String::new();
    while let Ok(event) = events.try_recv() {
        if let AgentEvent::TextDelta { delta, .. } = event {
            streamed.push_str(&delta);
        }
    }
    assert_eq!(streamed, "Hello from the model.");
    Ok(())
}

#[tokio::test]
async fn a_call_that_needs_approval_suspends_the_turn_and_the_answer_runs_it() -> anyhow::Result<()>
{
    let server = ScriptedServer::start(vec![
        Turn::tool_call(
            "call_1",
            "run_command",
            json!({"content": "touch made.txt"}).to_string(),
        ),
        Turn::text("Made it."),
    ])
    .await;
    let s = services(&server, PermissionMode::Default).await;
    let turn = s.turn();
    let chat = s.chat().await;
    let first = send(&turn, &chat, "Make the file").await;
    assert_eq!(
        (
            first.outcome,
            first
                .pending
                .iter()
                .map(|p| (p.tool_call_id.as_str(), p.tool_name.as_str()))
                .collect::<Vec<_>>()
        ),
        (RunOutcome::Suspended, vec![("call_1", "run_command")])
    );
    assert!(!s.workspace.join("made.txt").exists(), "nothing ran yet");
    let answer = ApprovalResponse {
        request_id: first.pending[0].id.clone(),
        tool_call_id: None,
        action_id: "allow_once".into(),
        feedback: None,
        rule: None,
    };
    let second = turn
        .resume(&chat.id, vec![answer], RunOptions::default())
        .await?;
    assert_eq!(
        (second.outcome, second.text.as_str()),
        (RunOutcome::Completed, "Made it.")
    );
    assert!(s.workspace.join("made.txt").is_file(), "the command ran");
    let shape: Vec<(&str, Option<bool>)> = transcript(&s, &chat)
        .await
        .iter()
        .map(|m| match m {
            ChatMessage::User { .. } => ("user", None),
            ChatMessage::Assistant { .. } => ("assistant", None),
            ChatMessage::Tool { is_error, .. } => ("tool", Some(*is_error)),
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            ("user", None),
            ("assistant", None),
            ("tool", Some(false)),
            ("assistant", None)
        ]
    );
    assert_eq!(s.store.pending_approvals(Some(&chat.id)).await?, Vec::new());
    Ok(())
}

#[tokio::test]
async fn a_provider_error_fails_the_run_and_the_chat_answers_the_next_message() -> anyhow::Result<()>
{
    let server = ScriptedServer::start(vec![
        Turn::error(
            400,
            r#"{"error":{"message":"bad request: model overloaded"}}"#,
        ),
        Turn::text("Back again."),
    ])
    .await;
    let s = services(&server, PermissionMode::Default).await;
    let turn = s.turn();
    let chat = s.chat().await;
    let failed = send(&turn, &chat, "First try").await;
    assert_eq!(failed.outcome, RunOutcome::Failed);
    assert!(
        failed
            .error
            .as_deref()
            .is_some_and(|e| e.contains("model overloaded")),
        "{failed:?}"
    );
    let next = send(&turn, &chat, "Second try").await;
    assert_eq!(
        (next.outcome, next.text.as_str()),
        (RunOutcome::Completed, "Back again.")
    );
    Ok(())
}

#[tokio::test]
async fn an_empty_message_or_an_unknown_chat_is_refused_before_the_model_is_called()
-> anyhow::Result<()> {
    let server = ScriptedServer::start(Vec::new()).await;
    let s = services(&server, PermissionMode::Default).await;
    let turn = s.turn();
    let chat = s.chat().await;
    let empty = turn
        .send_message(&chat.id, "   ", Vec::new(), RunOptions::default())
        .await
        .unwrap_err();
    let unknown = turn
        .send_message("no-such-chat", "hi", Vec::new(), RunOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&empty, crate::RuntimeError::InvalidInput { field, .. } if field == "text"),
        "{empty}"
    );
    assert!(
        matches!(&unknown, crate::RuntimeError::ChatNotFound(id) if id == "no-such-chat"),
        "{unknown}"
    );
    assert_eq!(
        (server.requests().len(), transcript(&s, &chat).await),
        (0, Vec::new())
    );
    Ok(())
}
