//! Attachments through the runtime API (issue 19 item 4): a file the user attaches is copied
//! into the chat's workspace, the model is told its path and reads it with `read_file`, an image
//! goes to a model that takes images as an image part of the request (OpenAI's wire format) and
//! to one that does not only as a path, and a forged path is refused. Real SQLite, the scripted
//! model server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::sync::Arc;
use suzent_core::{Attachment, ChatMessage, Config, PermissionMode, RunOutcome};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{CreateChat, Paths, RunOptions, Runtime, RuntimeError, RuntimeOptions};
use suzent_tests::{ScriptedServer, Turn};
use tempfile::TempDir;

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

async fn open(dir: &TempDir, server: &ScriptedServer, model: &str) -> (Runtime, String) {
    let mut config = Config {
        default_model: Some(model.into()),
        default_mode: PermissionMode::Default,
        tools: vec!["ReadFileTool".into()],
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
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws).unwrap();
    let chat = runtime
        .create_chat(CreateChat {
            workspace: Some(ws),
            ..CreateChat::default()
        })
        .await
        .unwrap()
        .id;
    (runtime, chat)
}

/// The `content` of the last user message of a recorded Chat Completions request.
fn last_user_content(request: &Value) -> Value {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .clone()
}

#[tokio::test]
async fn an_attached_file_is_named_to_the_model_which_reads_it() -> anyhow::Result<()> {
    let server = ScriptedServer::start(vec![]).await;
    let dir = tempfile::tempdir()?;
    let (runtime, chat) = open(&dir, &server, "openai/gpt-test").await;
    let a = runtime
        .add_attachment(&chat, "notes.txt", b"The secret word is pumpernickel.\n")
        .await?;
    assert_eq!(a.path, format!(".attachments/{chat}/notes.txt"));
    server.push_turns(vec![
        Turn::tool_call("c1", "read_file", json!({"file_path": a.path}).to_string()),
        Turn::text("The word is pumpernickel."),
    ]);
    let summary = runtime
        .send_with_attachments(
            &chat,
            "What does it say?",
            vec![a.clone()],
            RunOptions::default(),
        )
        .await?;
    assert_eq!(
        (summary.outcome, summary.text.as_str()),
        (RunOutcome::Completed, "The word is pumpernickel.")
    );
    let requests = server.requests();
    assert_eq!(
        last_user_content(&requests[0]),
        json!(format!(
            "What does it say?\n[attached: .attachments/{chat}/notes.txt (text/plain, 33 B)]"
        ))
    );
    // Reading an attachment inside the workspace needs no approval in the default mode.
    let tool_result = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(tool_result.contains("pumpernickel"), "{tool_result}");
    // The transcript keeps the attachment with the message.
    let first = &runtime.messages(&chat).await?[0].message;
    assert_eq!(
        first,
        &ChatMessage::User {
            text: "What does it say?".into(),
            attachments: vec![a],
        }
    );
    Ok(())
}

#[tokio::test]
async fn an_image_goes_to_a_vision_model_as_an_image_part_and_to_others_as_a_path()
-> anyhow::Result<()> {
    for (model, inline) in [("openai/gpt-4.1", true), ("openai/gpt-test", false)] {
        let server =
            ScriptedServer::start(vec![Turn::text("A dot."), Turn::text("Still a dot.")]).await;
        let dir = tempfile::tempdir()?;
        let (runtime, chat) = open(&dir, &server, model).await;
        let image = runtime.add_attachment(&chat, "dot.png", PNG).await?;
        assert_eq!(image.mime, "image/png");
        runtime
            .send_with_attachments(&chat, "", vec![image.clone()], RunOptions::default())
            .await?;
        // A later turn sends the image again with the history.
        runtime
            .send_message(&chat, "And now?", RunOptions::default())
            .await?;
        let reference = format!("[attached: .attachments/{chat}/dot.png (image/png, 70 B)]");
        use base64::Engine as _;
        let data = base64::engine::general_purpose::STANDARD.encode(PNG);
        let expected = if inline {
            json!([
                {"type": "text", "text": reference},
                {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}}
            ])
        } else {
            json!(reference)
        };
        for request in server.requests() {
            let first_user = request["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "user")
                .unwrap()["content"]
                .clone();
            assert_eq!(first_user, expected, "{model}");
        }
        // The bytes are never stored in the transcript.
        let stored = serde_json::to_string(&runtime.messages(&chat).await?)?;
        assert!(!stored.contains(&data[..20]), "{model}");
    }
    Ok(())
}

#[tokio::test]
async fn a_path_that_was_not_attached_to_this_chat_is_refused_and_nothing_is_stored()
-> anyhow::Result<()> {
    let server = ScriptedServer::start(vec![Turn::text("never")]).await;
    let dir = tempfile::tempdir()?;
    let (runtime, chat) = open(&dir, &server, "openai/gpt-test").await;
    std::fs::write(dir.path().join("project/.env"), "OPENAI_API_KEY=sk-live")?;
    let forged = Attachment {
        path: ".env".into(),
        name: ".env".into(),
        mime: "text/plain".into(),
        bytes: 1,
        data: None,
    };
    let err = runtime
        .send_with_attachments(&chat, "read this", vec![forged], RunOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RuntimeError::InvalidInput { message, .. } if message.contains("'.env' is not a file attached to this chat")),
        "{err}"
    );
    assert_eq!(runtime.messages(&chat).await?.len(), 0);
    assert_eq!(server.requests().len(), 0);
    Ok(())
}
