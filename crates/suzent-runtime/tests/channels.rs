//! Channels (issue 20) through the runtime API: a Telegram bot against the Bot API test server
//! on loopback (`suzent_tests::TelegramServer`, long polling), the scripted model server, real
//! SQLite and the durable inbox; and `social_message` on top of them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use suzent_core::{
    ApprovalResponse, Behavior, ChatMessage, Config, PermissionMode, RuleDestination, RuleDraft,
    RuleMatcher, RunOutcome,
};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{
    ChannelConfig, ChannelPlatform, ChannelProfile, ChannelRequestStatus, ChannelState, CreateChat,
    Paths, REFUSAL_TEXT, RunOptions, Runtime, RuntimeOptions,
};
use suzent_tests::{ScriptedServer, SentMessage, TelegramServer, Turn};
use tempfile::TempDir;

const TOKEN: &str = "123456:TEST-SECRET-TOKEN-ab12cd34";
const WAIT: Duration = Duration::from_secs(20);

struct Harness {
    dir: TempDir,
    ws: PathBuf,
    telegram: TelegramServer,
    model: ScriptedServer,
    runtime: Runtime,
}

async fn harness(turns: Vec<Turn>, tweak: impl FnOnce(&mut Config)) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws).unwrap();
    let telegram = TelegramServer::start(TOKEN).await;
    let model = ScriptedServer::start(turns).await;
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        workspace: Some(ws.clone()),
        tools: vec!["SocialMessageTool".into()],
        channels: vec![ChannelConfig {
            name: "telegram".into(),
            platform: ChannelPlatform::Telegram,
            enabled: true,
            allowed_users: vec!["42".into()],
            profile: ChannelProfile::Headless,
            base_url: Some(telegram.base_url()),
        }],
        ..Config::default()
    };
    config.providers.openai.base_url = Some(model.openai_base());
    tweak(&mut config);
    let home = dir.path().join("home");
    let runtime = Runtime::open(RuntimeOptions {
        paths: Paths::under(&home),
        keys: Arc::new(
            StaticKeys::new()
                .with("openai", "sk-test")
                .with("channel:telegram", TOKEN),
        ),
        config: Some(config),
    })
    .await
    .unwrap();
    // The settings file is written as the app would (channel settings, no token).
    runtime
        .channels()
        .set_allowed_users("telegram", vec!["42".into()])
        .unwrap();
    runtime.start_dispatcher();
    runtime.start_channels();
    let status = runtime
        .channels()
        .wait_connected("telegram", WAIT)
        .await
        .unwrap();
    assert_eq!(status.state, ChannelState::Connected, "{status:?}");
    Harness {
        dir,
        ws,
        telegram,
        model,
        runtime,
    }
}

impl Harness {
    async fn transcript(&self, chat: &str) -> Vec<ChatMessage> {
        self.runtime
            .messages(chat)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.message)
            .collect()
    }

    async fn app_chat(&self, mode: PermissionMode) -> String {
        self.runtime
            .create_chat(CreateChat {
                workspace: Some(self.ws.clone()),
                mode: Some(mode),
                tools: Some(vec!["SocialMessageTool".into()]),
                ..CreateChat::default()
            })
            .await
            .unwrap()
            .id
    }

    /// Ada (allowed) writes once and the agent answers: the contact the social tests use.
    async fn ada_says_hello(&self) {
        let before = self.telegram.sent().len();
        self.telegram.push_private(42, "Ada", "hello");
        self.telegram.wait_sent(before + 1, WAIT).await;
    }
}

fn tool_results(transcript: &[ChatMessage]) -> Vec<(String, bool)> {
    transcript
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool {
                content, is_error, ..
            } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_message_from_an_allowed_user_gets_the_agents_reply_in_the_same_telegram_chat()
-> anyhow::Result<()> {
    let h = harness(vec![Turn::text("Hello Ada, how can I help?")], |_| {}).await;
    h.telegram.push_private(42, "Ada", "hello there");
    let sent = h.telegram.wait_sent(1, WAIT).await;
    assert_eq!(
        sent,
        vec![SentMessage {
            chat_id: 42,
            text: "Hello Ada, how can I help?".into()
        }]
    );
    let conversations = h.runtime.channels().conversations().await?;
    assert_eq!(conversations.len(), 1);
    let c = &conversations[0];
    assert_eq!(
        (
            c.channel.as_str(),
            c.conversation.as_str(),
            c.platform.as_str()
        ),
        ("telegram", "42", "telegram")
    );
    let chat = h.runtime.chat(&c.chat_id).await?;
    assert_eq!(chat.title, "Telegram · Ada");
    let transcript = h.transcript(&c.chat_id).await;
    assert_eq!(transcript.len(), 2);
    match &transcript[0] {
        ChatMessage::User { text, .. } => {
            assert!(text.contains("channel:telegram:42"), "{text}");
            assert!(text.ends_with("\nhello there"), "{text}");
        }
        other => panic!("expected the channel message, got {other:?}"),
    }
    // A second message of the same conversation goes to the same chat.
    h.model.push_turns(vec![Turn::text("Still here.")]);
    h.telegram.push_private(42, "Ada", "are you there?");
    let sent = h.telegram.wait_sent(2, WAIT).await;
    assert_eq!(sent[1].text, "Still here.");
    assert_eq!(h.runtime.channels().conversations().await?.len(), 1);
    assert_eq!(h.transcript(&c.chat_id).await.len(), 4);
    Ok(())
}

#[tokio::test]
async fn a_stranger_is_refused_once_recorded_never_reaches_a_turn_and_is_let_in_by_approval()
-> anyhow::Result<()> {
    let h = harness(vec![Turn::text("Welcome, Eve.")], |_| {}).await;
    h.telegram.push_private(7, "Eve", "run rm -rf / for me");
    h.telegram.push_private(7, "Eve", "please?");
    let sent = h.telegram.wait_sent(1, WAIT).await;
    assert_eq!(
        sent,
        vec![SentMessage {
            chat_id: 7,
            text: REFUSAL_TEXT.into()
        }]
    );
    // Both messages were taken (acknowledged), and still only one refusal went out.
    for _ in 0..200 {
        if h.telegram.unconfirmed() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let requests = h.runtime.channels().requests(Some("telegram")).await?;
    assert_eq!(requests.len(), 1);
    assert_eq!(
        (
            requests[0].user_id.as_str(),
            requests[0].name.as_str(),
            requests[0].messages,
            requests[0].status
        ),
        ("7", "Eve", 2, ChannelRequestStatus::Pending)
    );
    assert_eq!(h.telegram.sent().len(), 1);
    // Nothing reached a chat, the inbox or the model.
    assert!(h.runtime.list_chats().await?.is_empty());
    assert!(h.runtime.inbox(None).await?.is_empty());
    assert!(h.model.requests().is_empty());

    let approved = h.runtime.channels().approve("telegram", "7").await?;
    assert_eq!(approved.status, ChannelRequestStatus::Approved);
    assert_eq!(
        h.runtime.channels().get("telegram")?.config.allowed_users,
        vec!["42".to_string(), "7".to_string()]
    );
    let settings = std::fs::read_to_string(h.runtime.paths().config_file())?;
    assert!(settings.contains("\"7\""), "{settings}");
    h.telegram.push_private(7, "Eve", "hello again");
    let sent = h.telegram.wait_sent(2, WAIT).await;
    assert_eq!(
        sent[1],
        SentMessage {
            chat_id: 7,
            text: "Welcome, Eve.".into()
        }
    );
    Ok(())
}

#[tokio::test]
async fn a_9000_character_reply_arrives_in_ordered_parts_within_telegrams_limit()
-> anyhow::Result<()> {
    let reply: String = (0..900).map(|i| format!("line {i:04}\n")).collect();
    assert_eq!(reply.chars().count(), 9000);
    let h = harness(vec![Turn::text(reply.clone())], |_| {}).await;
    h.telegram.push_private(42, "Ada", "write me a long list");
    let sent = h.telegram.wait_sent(3, WAIT).await;
    assert_eq!(sent.len(), 3);
    assert!(sent.iter().all(|m| m.chat_id == 42));
    assert!(sent.iter().all(|m| m.text.encode_utf16().count() <= 4096));
    let joined: String = sent.iter().map(|m| m.text.as_str()).collect();
    // The model's text ends without the last newline (the scripted server sends it whole;
    // the transcript keeps what the model said).
    assert_eq!(joined.trim_end(), reply.trim_end());
    Ok(())
}

#[tokio::test]
async fn no_channel_token_lands_in_the_database_logs_audit_events_or_settings_files()
-> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let log_path = dir.path().join("suzent.log");
    let log_file = std::fs::File::create(&log_path)?;
    // The process-wide subscriber (with `log` records bridged, as the app installs it): every
    // test of this binary logs into the file, at every level.
    tracing_subscriber::fmt()
        .with_writer(std::sync::Mutex::new(log_file))
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .try_init()
        .expect("the only subscriber of this test binary");

    let h = harness(
        vec![
            // Ada's turn calls a tool (audited) and answers.
            Turn::tool_call("c1", "social_message", r#"{"list_contacts": true}"#),
            Turn::text("You are my only contact."),
        ],
        |_| {},
    )
    .await;
    let mut events = h.runtime.subscribe();
    h.telegram.push_private(7, "Eve", "hi");
    h.telegram.push_private(42, "Ada", "who do you know?");
    h.telegram.wait_sent(2, WAIT).await;
    // A channel with a wrong token fails without echoing it.
    let refused = h
        .runtime
        .channels()
        .test_connection(
            ChannelPlatform::Telegram,
            Some(&h.telegram.base_url()),
            "999:WRONG-SECRET-TOKEN",
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(!refused.contains("WRONG-SECRET-TOKEN"), "{refused}");
    let mut seen_events = String::new();
    while let Ok(event) = events.try_recv() {
        seen_events.push_str(&serde_json::to_string(&event)?);
    }
    assert!(!seen_events.is_empty());
    assert!(!seen_events.contains(TOKEN));
    let views = serde_json::to_string(&h.runtime.channels().list())?;
    assert!(!views.contains(TOKEN), "{views}");
    h.runtime.audit_log().flush().await;
    h.runtime.shutdown().await;

    let mut files = vec![log_path.clone()];
    files.extend(suzent_tests::files_under(&h.dir.path().join("home")));
    let names: Vec<String> = files
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    for expected in ["config.toml", "permission-audit.jsonl"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    assert!(
        names
            .iter()
            .any(|n| n.ends_with(".db") || n.ends_with(".sqlite")),
        "{names:?}"
    );
    assert!(std::fs::metadata(&log_path)?.len() > 0);
    for file in &files {
        let bytes = std::fs::read(file)?;
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(TOKEN) && !text.contains("TEST-SECRET-TOKEN"),
            "the token is in {}",
            file.display()
        );
    }
    Ok(())
}

#[tokio::test]
async fn listing_contacts_needs_no_approval_and_gives_structured_pages() -> anyhow::Result<()> {
    let h = harness(
        vec![
            Turn::text("Hi Ada."),
            Turn::tool_call(
                "c1",
                "social_message",
                r#"{"list_contacts": true, "query": "ad", "limit": 5}"#,
            ),
            Turn::text("Ada is your contact."),
        ],
        |_| {},
    )
    .await;
    h.ada_says_hello().await;
    let chat = h.app_chat(PermissionMode::Default).await;
    let summary = h
        .runtime
        .send_message(&chat, "who can I message?", RunOptions::default())
        .await?;
    assert_eq!(summary.outcome, RunOutcome::Completed);
    assert!(summary.pending.is_empty());
    let results = tool_results(&h.transcript(&chat).await);
    assert_eq!(results.len(), 1);
    let page: serde_json::Value = serde_json::from_str(&results[0].0)?;
    let contact = &page["contacts"][0];
    assert_eq!(
        (
            contact["channel"].as_str(),
            contact["recipient"].as_str(),
            contact["name"].as_str(),
            page["total"].as_u64(),
            page["nextOffset"].is_null()
        ),
        (
            Some("telegram"),
            Some("telegram:42"),
            Some("Ada"),
            Some(1),
            true
        )
    );
    assert!(contact["lastSeen"].as_str().is_some_and(|s| s.len() >= 20));
    Ok(())
}

#[tokio::test]
async fn sending_asks_first_and_the_approval_names_channel_and_recipient() -> anyhow::Result<()> {
    let h = harness(
        vec![
            Turn::text("Hi Ada."),
            Turn::tool_call(
                "c1",
                "social_message",
                r#"{"recipient": "telegram:42", "message": "The build is green."}"#,
            ),
            Turn::text("Sent."),
        ],
        |_| {},
    )
    .await;
    h.ada_says_hello().await;
    let chat = h.app_chat(PermissionMode::Default).await;
    let summary = h
        .runtime
        .send_message(&chat, "tell Ada the build is green", RunOptions::default())
        .await?;
    assert_eq!(summary.outcome, RunOutcome::Suspended);
    assert_eq!(summary.pending.len(), 1);
    let pending = &summary.pending[0];
    assert_eq!(pending.tool_name, "social_message");
    assert_eq!(pending.args["recipient"], "telegram:42");
    // Nothing was sent while it waits.
    assert_eq!(h.telegram.sent().len(), 1);
    let resumed = h
        .runtime
        .resume_approvals(
            &chat,
            vec![ApprovalResponse {
                request_id: pending.id.clone(),
                tool_call_id: None,
                action_id: "allow_once".into(),
                feedback: None,
                rule: None,
            }],
            RunOptions::default(),
        )
        .await?;
    assert_eq!(resumed.outcome, RunOutcome::Completed);
    let sent = h.telegram.wait_sent(2, WAIT).await;
    assert_eq!(
        sent[1],
        SentMessage {
            chat_id: 42,
            text: "The build is green.".into()
        }
    );
    Ok(())
}

#[tokio::test]
async fn a_recipient_rule_allows_sending_without_asking_even_to_an_unseen_conversation()
-> anyhow::Result<()> {
    let h = harness(
        vec![
            Turn::tool_call(
                "c1",
                "social_message",
                r#"{"recipient": "telegram:77", "message": "Meeting at 3."}"#,
            ),
            Turn::text("Sent."),
        ],
        |_| {},
    )
    .await;
    h.runtime
        .add_rule(
            RuleDraft {
                tool: "social_message".into(),
                behavior: Behavior::Allow,
                matcher: RuleMatcher::Destination {
                    pattern: "telegram:77".into(),
                },
                destination: RuleDestination::Global,
                description: Some("my team chat".into()),
            },
            None,
        )
        .await?;
    let chat = h.app_chat(PermissionMode::Default).await;
    let summary = h
        .runtime
        .send_message(&chat, "tell the team", RunOptions::default())
        .await?;
    assert_eq!(summary.outcome, RunOutcome::Completed, "{summary:?}");
    assert_eq!(
        h.telegram.wait_sent(1, WAIT).await,
        vec![SentMessage {
            chat_id: 77,
            text: "Meeting at 3.".into()
        }]
    );
    let results = tool_results(&h.transcript(&chat).await);
    assert_eq!(results.len(), 1);
    assert!(!results[0].1, "{results:?}");
    Ok(())
}

#[tokio::test]
async fn sending_to_a_conversation_the_channel_never_saw_is_refused_without_a_rule()
-> anyhow::Result<()> {
    let h = harness(
        vec![
            Turn::tool_call(
                "c1",
                "social_message",
                r#"{"recipient": "telegram:77", "message": "hi"}"#,
            ),
            Turn::text("I cannot reach them."),
        ],
        |_| {},
    )
    .await;
    // Full access: nothing asks, so the refusal is the channel's own check.
    let chat = h.app_chat(PermissionMode::FullAccess).await;
    let summary = h
        .runtime
        .send_message(&chat, "message 77", RunOptions::default())
        .await?;
    assert_eq!(summary.outcome, RunOutcome::Completed);
    let results = tool_results(&h.transcript(&chat).await);
    assert_eq!(results.len(), 1);
    assert!(results[0].1, "{results:?}");
    assert!(
        results[0].0.contains("never seen 'telegram:77'"),
        "{}",
        results[0].0
    );
    assert!(h.telegram.sent().is_empty());
    Ok(())
}

#[tokio::test]
async fn with_the_ask_in_app_profile_a_channel_turn_waits_for_the_apps_approval_then_replies()
-> anyhow::Result<()> {
    let h = harness(ping_turns(), ask_in_app).await;
    h.telegram.push_private(42, "Ada", "ping me");
    let sent = h.telegram.wait_sent(1, WAIT).await;
    // The conversation is told it waits, with the approval's buttons (their presses:
    // `channel_platforms.rs`, `button_tests!`).
    assert!(
        sent[0].text.starts_with(suzent_runtime::WAITING_TEXT),
        "{}",
        sent[0].text
    );
    let chat = h.runtime.channels().conversations().await?[0]
        .chat_id
        .clone();
    let pending = h.runtime.pending_approvals(Some(&chat)).await?;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].tool_name, "social_message");
    let resumed = h
        .runtime
        .resume_approvals(
            &chat,
            vec![ApprovalResponse {
                request_id: pending[0].id.clone(),
                tool_call_id: None,
                action_id: "allow_once".into(),
                feedback: None,
                rule: None,
            }],
            RunOptions::default(),
        )
        .await?;
    assert_eq!(resumed.outcome, RunOutcome::Completed);
    let sent: Vec<String> = h
        .telegram
        .wait_sent(3, WAIT)
        .await
        .into_iter()
        .map(|m| m.text)
        .collect();
    assert_eq!(sent[1..], ["ping".to_string(), "Done.".to_string()]);
    Ok(())
}

/// The model sends "ping" to Ada with `social_message` (asks in the default mode), then says
/// "Done.".
fn ping_turns() -> Vec<Turn> {
    vec![
        Turn::tool_call(
            "c1",
            "social_message",
            r#"{"recipient": "telegram:42", "message": "ping"}"#,
        ),
        Turn::text("Done."),
    ]
}

fn ask_in_app(config: &mut Config) {
    config.channels[0].profile = ChannelProfile::AskInApp;
}
