//! Channels per platform (issue 20), each against its test server on loopback
//! (`suzent_tests::{DiscordServer, SlackServer, MatrixServer, TelegramServer}`, the platform's
//! documented wire format), with the scripted model server, real SQLite and the durable inbox.
//! The scenarios are written once and run per platform: `platform_tests!` (conversations,
//! strangers, long replies, `social_message`, tokens; Telegram's own are in `channels.rs`),
//! `speech_tests!` (speech clips as audio files, every platform) and `button_tests!` (approval
//! buttons, where the platform has them).
//! Matrix runs also against a real homeserver (`SynapseServer`: Synapse from PyPI, installed by
//! `scripts/setup-tests`; without it the tests fail in CI and are skipped elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use suzent_core::{
    ApprovalResponse, Behavior, ChatMessage, Config, PermissionMode, RuleDestination, RuleDraft,
    RuleMatcher, RunOutcome, SpeechClip,
};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{
    ChannelConfig, ChannelPlatform, ChannelProfile, ChannelRequestStatus, ChannelState, CreateChat,
    PRESS_DECIDED, PRESS_ELSEWHERE, PRESS_INVALID, PRESS_NOT_ALLOWED, Paths, REFUSAL_TEXT,
    RunOptions, Runtime, RuntimeOptions,
};
use suzent_tests::{
    ButtonServer, Delivered, DiscordServer, MatrixServer, PlatformServer, Prompt, ScriptedServer,
    SlackServer, SynapseServer, TelegramServer, Turn,
};
use tempfile::TempDir;

const WAIT: Duration = Duration::from_secs(20);

/// A platform as the scenarios need it.
struct Spec {
    platform: ChannelPlatform,
    /// What the keychain holds for the channel (for Slack both tokens).
    secret: &'static str,
    /// Distinctive parts of the secret that must appear nowhere.
    secret_parts: &'static [&'static str],
    /// A secret of the right shape that the server refuses.
    wrong_secret: &'static str,
    /// Ada's id on the platform (on the allow-list).
    ada: &'static str,
    /// Eve's id (not on it).
    eve: &'static str,
    /// The platform's message limit, in characters.
    limit: usize,
    /// A conversation of the platform that is not Ada's (where a forged press comes from).
    elsewhere: &'static str,
    /// How an audio file goes on the platform (the method or form field the server saw).
    audio_method: &'static str,
    /// The MIME type an audio upload declares on the platform's wire (empty: the upload
    /// carries none; Discord takes the type from the file name).
    audio_mime: &'static str,
}

/// A platform's test server, started for a spec.
trait TestServer: PlatformServer + Sized {
    fn start(spec: &Spec) -> impl Future<Output = Self> + Send;

    /// Whether a test must stop here because the server cannot run (it then says why, or fails
    /// in CI).
    fn skip(_test: &str) -> bool {
        false
    }

    /// What the keychain holds for the channel: the spec's secret, unless the server issued one.
    fn secret(&self, spec: &Spec) -> String {
        spec.secret.to_string()
    }

    /// Distinctive parts of [`TestServer::secret`] that must appear nowhere.
    fn secret_parts(&self, spec: &Spec) -> Vec<String> {
        spec.secret_parts.iter().map(|p| p.to_string()).collect()
    }
}

const DISCORD: Spec = Spec {
    platform: ChannelPlatform::Discord,
    secret: "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.DISCORD-SECRET-ZI2xRm",
    secret_parts: &["DISCORD-SECRET"],
    wrong_secret: "MTk4.Cl2FMQ.WRONG-DISCORD-SECRET",
    ada: "4242",
    eve: "7777",
    elsewhere: "900000000000000123",
    limit: 2000,
    audio_method: "files[0]",
    audio_mime: "",
};

impl TestServer for DiscordServer {
    async fn start(spec: &Spec) -> DiscordServer {
        DiscordServer::start(spec.secret).await
    }
}

const SLACK: Spec = Spec {
    platform: ChannelPlatform::Slack,
    secret: "xoxb-1111-2222-SLACK-BOT-SECRET xapp-1-A0SUZENT-3333-SLACK-APP-SECRET",
    secret_parts: &["SLACK-BOT-SECRET", "SLACK-APP-SECRET"],
    wrong_secret: "xoxb-1111-WRONG-SLACK-BOT xapp-1-A0SUZENT-WRONG-SLACK-APP",
    ada: "U0ADA42",
    eve: "U0EVE77",
    elsewhere: "C0ELSEWHERE",
    limit: 4000,
    audio_method: "files.completeUploadExternal",
    audio_mime: "audio/wav",
};

impl TestServer for SlackServer {
    async fn start(spec: &Spec) -> SlackServer {
        let (bot, app) = spec.secret.split_once(' ').unwrap();
        SlackServer::start(bot, app).await
    }
}

const MATRIX: Spec = Spec {
    platform: ChannelPlatform::Matrix,
    secret: "syt_c3V6ZW50_MATRIX-SECRET-TOKEN_0a1b2c",
    secret_parts: &["MATRIX-SECRET-TOKEN"],
    wrong_secret: "syt_c3V6ZW50_WRONG-MATRIX-TOKEN_9z8y7x",
    ada: "@ada:suzent.test",
    eve: "@eve:suzent.test",
    elsewhere: "!elsewhere:suzent.test",
    // 30,000 bytes of text: a 9,000-character reply is one event.
    limit: 30_000,
    audio_method: "m.audio",
    audio_mime: "audio/wav",
};

impl TestServer for MatrixServer {
    async fn start(spec: &Spec) -> MatrixServer {
        MatrixServer::start(spec.secret).await
    }
}

const TELEGRAM: Spec = Spec {
    platform: ChannelPlatform::Telegram,
    secret: "123456:TELEGRAM-SECRET-TOKEN-ab12cd34",
    secret_parts: &["TELEGRAM-SECRET-TOKEN"],
    wrong_secret: "123456:WRONG-TELEGRAM-TOKEN",
    ada: "42",
    eve: "77",
    elsewhere: "-100200",
    limit: 4096,
    // WAV is neither a voice message (OGG/Opus) nor sendAudio's MP3/M4A: a document.
    audio_method: "sendDocument",
    audio_mime: "",
};

impl TestServer for TelegramServer {
    async fn start(spec: &Spec) -> TelegramServer {
        TelegramServer::start(spec.secret).await
    }
}

/// Matrix on a real homeserver: the bot's token is the one Synapse issued at its login.
const SYNAPSE: Spec = Spec {
    platform: ChannelPlatform::Matrix,
    secret: "",
    secret_parts: &[],
    wrong_secret: "syt_c3V6ZW50_WRONG-MATRIX-TOKEN_9z8y7x",
    ada: "@ada:suzent.test",
    eve: "@eve:suzent.test",
    elsewhere: "!elsewhere:suzent.test",
    limit: 30_000,
    audio_method: "m.audio",
    audio_mime: "audio/wav",
};

impl TestServer for SynapseServer {
    async fn start(_spec: &Spec) -> SynapseServer {
        SynapseServer::start().await
    }

    fn skip(test: &str) -> bool {
        suzent_tests::synapse::skip_without_synapse(test)
    }

    fn secret(&self, _spec: &Spec) -> String {
        self.bot().token.clone()
    }

    /// The random part of Synapse's token (`syt_<user>_<random>_<check>`).
    fn secret_parts(&self, _spec: &Spec) -> Vec<String> {
        self.bot()
            .token
            .split('_')
            .nth(2)
            .map(str::to_string)
            .into_iter()
            .collect()
    }
}

struct Harness<S> {
    dir: TempDir,
    ws: PathBuf,
    server: S,
    /// What the keychain holds for the channel.
    secret: String,
    model: ScriptedServer,
    runtime: Runtime,
    name: &'static str,
}

async fn harness<S: TestServer>(spec: &Spec, turns: Vec<Turn>) -> Harness<S> {
    harness_with(spec, turns, |_| {}).await
}

/// `speak` selected, synthesizing with the scripted server's OpenAI `/audio/speech` route.
fn speaking(config: &mut Config) {
    config.tools.push("SpeakTool".into());
    config.speech.model = "openai/gpt-4o-mini-tts".into();
}

async fn harness_with<S: TestServer>(
    spec: &Spec,
    turns: Vec<Turn>,
    tweak: impl FnOnce(&mut Config),
) -> Harness<S> {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws).unwrap();
    let server = S::start(spec).await;
    let secret = server.secret(spec);
    let model = ScriptedServer::start(turns).await;
    let name = spec.platform.as_str();
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        workspace: Some(ws.clone()),
        tools: vec!["SocialMessageTool".into()],
        channels: vec![ChannelConfig {
            name: name.into(),
            platform: spec.platform,
            enabled: true,
            allowed_users: vec![spec.ada.into()],
            profile: ChannelProfile::Headless,
            base_url: Some(server.base_url()),
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
                .with(&format!("channel:{name}"), &secret),
        ),
        config: Some(config),
    })
    .await
    .unwrap();
    // The settings file is written as the app would (channel settings, no token).
    runtime
        .channels()
        .set_allowed_users(name, vec![spec.ada.into()])
        .unwrap();
    runtime.start_dispatcher();
    runtime.start_channels();
    let status = runtime.channels().wait_connected(name, WAIT).await.unwrap();
    assert_eq!(status.state, ChannelState::Connected, "{status:?}");
    Harness {
        dir,
        ws,
        server,
        secret,
        model,
        runtime,
        name,
    }
}

impl<S: TestServer> Harness<S> {
    async fn transcript(&self, chat: &str) -> Vec<ChatMessage> {
        self.runtime
            .messages(chat)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.message)
            .collect()
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

async fn allowed_user_is_answered_in_the_same_conversation<S: TestServer>(
    spec: &Spec,
) -> anyhow::Result<()> {
    let h: Harness<S> = harness(spec, vec![Turn::text("Hello Ada, how can I help?")]).await;
    let conversation = h.server.push_direct(spec.ada, "Ada", "hello there");
    let sent = h.server.wait_delivered(1, WAIT).await;
    assert_eq!(
        sent,
        vec![Delivered {
            conversation: conversation.clone(),
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
        (h.name, conversation.as_str(), spec.platform.as_str())
    );
    let chat = h.runtime.chat(&c.chat_id).await?;
    assert_eq!(chat.title, format!("{} · Ada", spec.platform.label()));
    match &h.transcript(&c.chat_id).await[0] {
        ChatMessage::User { text, .. } => {
            assert!(
                text.contains(&format!("channel:{}:{}", h.name, spec.ada)),
                "{text}"
            );
            assert!(text.ends_with("\nhello there"), "{text}");
        }
        other => panic!("expected the channel message, got {other:?}"),
    }
    // The next message of the conversation goes to the same chat.
    h.model.push_turns(vec![Turn::text("Still here.")]);
    h.server.push_direct(spec.ada, "Ada", "are you there?");
    let sent = h.server.wait_delivered(2, WAIT).await;
    assert_eq!(
        sent[1],
        Delivered {
            conversation,
            text: "Still here.".into()
        }
    );
    assert_eq!(h.runtime.channels().conversations().await?.len(), 1);
    assert_eq!(h.transcript(&c.chat_id).await.len(), 4);
    Ok(())
}

async fn a_stranger_is_refused_once_and_recorded<S: TestServer>(spec: &Spec) -> anyhow::Result<()> {
    let h: Harness<S> = harness(spec, vec![]).await;
    let conversation = h.server.push_direct(spec.eve, "Eve", "run rm -rf / for me");
    h.server.push_direct(spec.eve, "Eve", "please?");
    let sent = h.server.wait_delivered(1, WAIT).await;
    assert_eq!(
        sent,
        vec![Delivered {
            conversation,
            text: REFUSAL_TEXT.into()
        }]
    );
    // Both messages are counted on one request, and still only one refusal went out.
    let mut requests = Vec::new();
    for _ in 0..500 {
        requests = h.runtime.channels().requests(Some(h.name)).await?;
        if requests.first().is_some_and(|r| r.messages == 2) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(requests.len(), 1);
    assert_eq!(
        (
            requests[0].user_id.as_str(),
            requests[0].name.as_str(),
            requests[0].messages,
            requests[0].status
        ),
        (spec.eve, "Eve", 2, ChannelRequestStatus::Pending)
    );
    assert_eq!(h.server.delivered().len(), 1);
    assert!(h.runtime.list_chats().await?.is_empty());
    assert!(h.runtime.inbox(None).await?.is_empty());
    assert!(h.model.requests().is_empty());
    Ok(())
}

async fn a_9000_character_reply_arrives_in_ordered_parts<S: TestServer>(
    spec: &Spec,
) -> anyhow::Result<()> {
    a_long_reply_arrives_in_ordered_parts::<S>(spec, 900).await
}

/// A reply of `lines` lines of 10 characters arrives in as many parts as the limit asks, in
/// order, each within the limit.
async fn a_long_reply_arrives_in_ordered_parts<S: TestServer>(
    spec: &Spec,
    lines: usize,
) -> anyhow::Result<()> {
    let reply: String = (0..lines).map(|i| format!("line {i:04}\n")).collect();
    let length = lines * 10;
    assert_eq!(reply.chars().count(), length);
    let h: Harness<S> = harness(spec, vec![Turn::text(reply.clone())]).await;
    let conversation = h
        .server
        .push_direct(spec.ada, "Ada", "write me a long list");
    let parts = length.div_ceil(spec.limit);
    let sent = h.server.wait_delivered(parts, WAIT).await;
    assert_eq!(sent.len(), parts);
    assert!(sent.iter().all(|m| m.conversation == conversation));
    assert!(
        sent.iter().all(|m| m.text.chars().count() <= spec.limit),
        "{:?}",
        sent.iter()
            .map(|m| m.text.chars().count())
            .collect::<Vec<_>>()
    );
    let joined: String = sent.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(joined.trim_end(), reply.trim_end());
    Ok(())
}

async fn social_message_lists_the_contact_and_sends_to_it<S: TestServer>(
    spec: &Spec,
) -> anyhow::Result<()> {
    let h: Harness<S> = harness(spec, vec![Turn::text("Hi Ada.")]).await;
    let conversation = h.server.push_direct(spec.ada, "Ada", "hello");
    h.server.wait_delivered(1, WAIT).await;
    let recipient = format!("{}:{conversation}", h.name);
    h.model.push_turns(vec![
        Turn::tool_call(
            "c1",
            "social_message",
            r#"{"list_contacts": true, "query": "ada"}"#,
        ),
        Turn::tool_call(
            "c2",
            "social_message",
            &serde_json::json!({"recipient": recipient, "message": "The build is green."})
                .to_string(),
        ),
        Turn::text("Told her."),
    ]);
    // Sending asks in the default mode; a rule for this recipient allows it.
    h.runtime
        .add_rule(
            RuleDraft {
                tool: "social_message".into(),
                behavior: Behavior::Allow,
                matcher: RuleMatcher::Destination {
                    pattern: recipient.clone(),
                },
                destination: RuleDestination::Global,
                description: Some("Ada".into()),
            },
            None,
        )
        .await?;
    let chat = h
        .runtime
        .create_chat(CreateChat {
            workspace: Some(h.ws.clone()),
            mode: Some(PermissionMode::Default),
            tools: Some(vec!["SocialMessageTool".into()]),
            ..CreateChat::default()
        })
        .await?
        .id;
    let summary = h
        .runtime
        .send_message(&chat, "tell Ada the build is green", RunOptions::default())
        .await?;
    assert_eq!(summary.outcome, RunOutcome::Completed, "{summary:?}");
    assert!(summary.pending.is_empty());
    let results = tool_results(&h.transcript(&chat).await);
    assert_eq!(results.len(), 2, "{results:?}");
    let page: serde_json::Value = serde_json::from_str(&results[0].0)?;
    assert_eq!(
        (
            page["contacts"][0]["channel"].as_str(),
            page["contacts"][0]["recipient"].as_str(),
            page["contacts"][0]["name"].as_str(),
            page["total"].as_u64()
        ),
        (Some(h.name), Some(recipient.as_str()), Some("Ada"), Some(1))
    );
    assert!(!results[1].1, "{results:?}");
    let sent = h.server.wait_delivered(2, WAIT).await;
    assert_eq!(
        sent[1],
        Delivered {
            conversation,
            text: "The build is green.".into()
        }
    );
    Ok(())
}

/// A step that says "Here it is:" and speaks, then a step that asks "Anything else?".
fn speaking_turns() -> Vec<Turn> {
    vec![
        Turn::tool_call("s1", "speak", r#"{"text": "The build is green."}"#)
            .with_text_first("Here it is:"),
        Turn::text("Anything else?"),
    ]
}

async fn a_speech_clip_reaches_the_conversation_as_audio_in_order<S: TestServer>(
    spec: &Spec,
) -> anyhow::Result<()> {
    let h: Harness<S> = harness_with(spec, speaking_turns(), speaking).await;
    let conversation = h.server.push_direct(spec.ada, "Ada", "read me the status");
    let sent = h.server.wait_delivered(2, WAIT).await;
    let uploads = h.server.wait_uploaded(1, WAIT).await;
    let texts: Vec<(&str, &str)> = sent
        .iter()
        .map(|m| (m.conversation.as_str(), m.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        vec![
            (conversation.as_str(), "Here it is:"),
            (conversation.as_str(), "Anything else?")
        ]
    );
    assert_eq!(uploads.len(), 1, "{uploads:?}");
    let chat = h.runtime.channels().conversations().await?[0]
        .chat_id
        .clone();
    let clip = tool_results(&h.transcript(&chat).await)
        .into_iter()
        .find_map(|(content, _)| serde_json::from_str::<SpeechClip>(&content).ok())
        .expect("the speak result");
    let stored = std::fs::read(h.runtime.speech_clip_path(&chat, &clip.file)?)?;
    let upload = &uploads[0];
    assert_eq!(
        (
            upload.conversation.as_str(),
            upload.file_name.as_str(),
            upload.method.as_str(),
            upload.mime_type.as_str(),
            upload.bytes.len(),
            // After the text of its own step, before the next step's.
            upload.after_texts
        ),
        (
            conversation.as_str(),
            clip.file.as_str(),
            spec.audio_method,
            spec.audio_mime,
            stored.len(),
            1
        )
    );
    assert!(
        upload.bytes == stored,
        "the bytes that arrived are the clip's"
    );
    assert!(stored.starts_with(b"RIFF"), "a WAV file");
    Ok(())
}

async fn a_clip_larger_than_the_platform_takes_becomes_a_text_note<S: TestServer>(
    spec: &Spec,
) -> anyhow::Result<()> {
    let h: Harness<S> = harness_with(spec, speaking_turns(), speaking).await;
    h.server.limit_uploads(1_000);
    let conversation = h.server.push_direct(spec.ada, "Ada", "read me the status");
    let sent = h.server.wait_delivered(3, WAIT).await;
    let texts: Vec<&str> = sent.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert_eq!((texts[0], texts[2]), ("Here it is:", "Anything else?"));
    assert!(
        texts[1].contains("too large to send")
            && texts[1].contains(spec.platform.label())
            && texts[1].contains("Suzent app"),
        "{}",
        texts[1]
    );
    assert!(sent.iter().all(|m| m.conversation == conversation));
    assert!(h.server.uploads().is_empty());
    Ok(())
}

/// Ada says hello (answered), then asks for a ping: the model sends "ping" to her with
/// `social_message` (which asks under `ask_in_app`), then says "Done.". Returns the approval
/// prompt with its buttons, the conversation's chat and the conversation.
async fn approval_prompt<S: TestServer + ButtonServer>(
    h: &Harness<S>,
    spec: &Spec,
) -> (Prompt, String, String) {
    let conversation = h.server.push_direct(spec.ada, "Ada", "hello");
    h.server.wait_delivered(1, WAIT).await;
    let recipient = format!("{}:{conversation}", h.name);
    h.model.push_turns(vec![
        Turn::tool_call(
            "c1",
            "social_message",
            &serde_json::json!({"recipient": recipient, "message": "ping"}).to_string(),
        ),
        Turn::text("Done."),
    ]);
    h.server.push_direct(spec.ada, "Ada", "ping me");
    let prompts = h.server.prompts().wait(1, WAIT).await;
    assert_eq!(prompts.len(), 1, "an approval prompt with buttons");
    let chat = h.runtime.channels().conversations().await.unwrap()[0]
        .chat_id
        .clone();
    (prompts[0].clone(), chat, conversation)
}

fn ask_in_app(config: &mut Config) {
    config.channels[0].profile = ChannelProfile::AskInApp;
}

async fn press_answers<S: ButtonServer>(server: &S, n: usize) -> Vec<String> {
    server
        .press_answers()
        .wait(n, WAIT)
        .await
        .into_iter()
        .map(|a| a.text)
        .collect()
}

async fn an_allowed_press_answers_the_approval_and_the_turn_goes_on<
    S: TestServer + ButtonServer,
>(
    spec: &Spec,
) -> anyhow::Result<()> {
    let h: Harness<S> = harness_with(spec, vec![Turn::text("Hi Ada.")], ask_in_app).await;
    let (prompt, chat, conversation) = approval_prompt(&h, spec).await;
    let pending = h.runtime.pending_approvals(Some(&chat)).await?;
    assert_eq!(pending.len(), 1);
    assert_eq!(prompt.conversation, conversation);
    assert!(prompt.text.contains("social_message"), "{}", prompt.text);
    let labels: Vec<&str> = prompt.buttons.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["Allow once", "Reject"]);
    for (_, data) in &prompt.buttons {
        assert!(data.len() >= 32 && *data != pending[0].id, "{data}");
    }
    let allow = prompt.buttons[0].1.clone();
    let press = h.server.push_press(spec.ada, "Ada", &conversation, &allow);
    let answers = h.server.press_answers().wait(1, WAIT).await;
    assert_eq!(
        (answers[0].press.as_str(), answers[0].text.as_str()),
        (press.as_str(), "Allowed once. Continuing…")
    );
    let sent: Vec<String> = h
        .server
        .wait_delivered(4, WAIT)
        .await
        .into_iter()
        .map(|m| m.text)
        .collect();
    assert_eq!(sent[2..], ["ping".to_string(), "Done.".to_string()]);
    assert!(h.runtime.pending_approvals(Some(&chat)).await?.is_empty());
    // The same press again (a replay) decides nothing.
    h.server.push_press(spec.ada, "Ada", &conversation, &allow);
    assert_eq!(press_answers(&h.server, 2).await[1], PRESS_INVALID);
    Ok(())
}

async fn strangers_forged_and_misplaced_presses_decide_nothing<S: TestServer + ButtonServer>(
    spec: &Spec,
) -> anyhow::Result<()> {
    let h: Harness<S> = harness_with(spec, vec![Turn::text("Hi Ada.")], ask_in_app).await;
    let (prompt, chat, conversation) = approval_prompt(&h, spec).await;
    let pending = h.runtime.pending_approvals(Some(&chat)).await?;
    let allow = prompt.buttons[0].1.clone();
    let requests = h.model.requests().len();
    h.server.push_press(spec.eve, "Eve", &conversation, &allow);
    h.server.push_press(spec.ada, "Ada", spec.elsewhere, &allow);
    h.server
        .push_press(spec.ada, "Ada", &conversation, &pending[0].id);
    h.server.push_press(
        spec.ada,
        "Ada",
        &conversation,
        "0123456789abcdef0123456789abcdef",
    );
    assert_eq!(
        press_answers(&h.server, 4).await,
        [
            PRESS_NOT_ALLOWED,
            PRESS_ELSEWHERE,
            PRESS_INVALID,
            PRESS_INVALID
        ]
    );
    let still = h.runtime.pending_approvals(Some(&chat)).await?;
    assert_eq!(still.len(), 1);
    assert_eq!(still[0].id, pending[0].id);
    assert_eq!(h.server.delivered().len(), 2);
    assert_eq!(h.model.requests().len(), requests);
    h.runtime
        .resume_approvals(
            &chat,
            vec![ApprovalResponse {
                request_id: pending[0].id.clone(),
                tool_call_id: None,
                action_id: "reject".into(),
                feedback: None,
                rule: None,
            }],
            RunOptions::default(),
        )
        .await?;
    h.server.push_press(spec.ada, "Ada", &conversation, &allow);
    assert_eq!(press_answers(&h.server, 5).await[4], PRESS_DECIDED);
    let sent = h.server.wait_delivered(3, WAIT).await;
    assert_eq!(sent.last().map(|m| m.text.as_str()), Some("Done."));
    assert!(!sent.iter().any(|m| m.text == "ping"), "{sent:?}");
    Ok(())
}

/// The button scenarios for a platform whose client shows buttons.
macro_rules! button_tests {
    ($module:ident, $server:ty, $spec:expr) => {
        mod $module {
            use super::*;

            #[tokio::test]
            async fn an_allowed_users_press_of_allow_once_answers_the_approval_and_the_turn_goes_on()
            -> anyhow::Result<()> {
                an_allowed_press_answers_the_approval_and_the_turn_goes_on::<$server>(&$spec).await
            }

            #[tokio::test]
            async fn a_strangers_press_a_forged_token_and_a_press_elsewhere_decide_nothing()
            -> anyhow::Result<()> {
                strangers_forged_and_misplaced_presses_decide_nothing::<$server>(&$spec).await
            }
        }
    };
}

button_tests!(telegram_buttons, TelegramServer, TELEGRAM);
button_tests!(discord_buttons, DiscordServer, DISCORD);
button_tests!(slack_buttons, SlackServer, SLACK);

/// The speech scenarios for one platform.
macro_rules! speech_tests {
    ($module:ident, $server:ty, $spec:expr) => {
        mod $module {
            use super::*;

            #[tokio::test]
            async fn a_speech_clip_reaches_the_conversation_as_audio_after_the_text_of_its_step()
            -> anyhow::Result<()> {
                a_speech_clip_reaches_the_conversation_as_audio_in_order::<$server>(&$spec).await
            }

            #[tokio::test]
            async fn a_clip_larger_than_the_platform_takes_becomes_a_clear_text_note()
            -> anyhow::Result<()> {
                a_clip_larger_than_the_platform_takes_becomes_a_text_note::<$server>(&$spec).await
            }
        }
    };
}

speech_tests!(telegram_speech, TelegramServer, TELEGRAM);
speech_tests!(discord_speech, DiscordServer, DISCORD);
speech_tests!(slack_speech, SlackServer, SLACK);
speech_tests!(matrix_speech, MatrixServer, MATRIX);

/// The log file every test of this binary writes to from the first call on (the process-wide
/// subscriber, at every level).
fn log_file() -> &'static Path {
    static LOG: OnceLock<PathBuf> = OnceLock::new();
    LOG.get_or_init(|| {
        let dir = Box::leak(Box::new(tempfile::tempdir().unwrap()));
        let path = dir.path().join("suzent.log");
        let file = std::fs::File::create(&path).unwrap();
        tracing_subscriber::fmt()
            .with_writer(std::sync::Mutex::new(file))
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .try_init()
            .expect("the only subscriber of this test binary");
        path
    })
}

async fn no_token_lands_in_the_database_logs_audit_events_or_settings<S: TestServer>(
    spec: &Spec,
) -> anyhow::Result<()> {
    let log = log_file();
    let h: Harness<S> = harness(
        spec,
        vec![
            Turn::tool_call("c1", "social_message", r#"{"list_contacts": true}"#),
            Turn::text("You are my only contact."),
        ],
    )
    .await;
    let mut events = h.runtime.subscribe();
    h.server.push_direct(spec.eve, "Eve", "hi");
    h.server.push_direct(spec.ada, "Ada", "who do you know?");
    h.server.wait_delivered(2, WAIT).await;
    let refused = h
        .runtime
        .channels()
        .test_connection(spec.platform, Some(&h.server.base_url()), spec.wrong_secret)
        .await
        .unwrap_err()
        .to_string();
    assert!(!refused.contains(spec.wrong_secret), "{refused}");
    let mut seen_events = String::new();
    while let Ok(event) = events.try_recv() {
        seen_events.push_str(&serde_json::to_string(&event)?);
    }
    assert!(!seen_events.is_empty());
    let views = serde_json::to_string(&h.runtime.channels().list())?;
    h.runtime.audit_log().flush().await;
    h.runtime.shutdown().await;

    let mut files = vec![log.to_path_buf()];
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
    assert!(std::fs::metadata(log)?.len() > 0);
    let mut texts: Vec<(String, String)> = vec![
        ("events".into(), seen_events),
        ("channel views".into(), views),
    ];
    for file in &files {
        let bytes = std::fs::read(file)?;
        texts.push((
            file.display().to_string(),
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
    }
    let secrets: Vec<String> = std::iter::once(h.secret.clone())
        .chain(h.server.secret_parts(spec))
        .collect();
    assert!(secrets.iter().all(|s| s.len() >= 8), "{}", secrets.len());
    for (what, text) in &texts {
        for secret in &secrets {
            assert!(!text.contains(secret.as_str()), "the token is in {what}");
        }
    }
    Ok(())
}

/// The scenarios for one platform: its module, server type and spec.
macro_rules! platform_tests {
    ($module:ident, $server:ty, $spec:expr) => {
        mod $module {
            use super::*;

            #[tokio::test]
            async fn a_message_from_an_allowed_user_is_answered_in_the_same_conversation()
            -> anyhow::Result<()> {
                if <$server as TestServer>::skip(module_path!()) {
                    return Ok(());
                }
                allowed_user_is_answered_in_the_same_conversation::<$server>(&$spec).await
            }

            #[tokio::test]
            async fn a_stranger_is_refused_once_politely_and_recorded_as_a_pending_request()
            -> anyhow::Result<()> {
                if <$server as TestServer>::skip(module_path!()) {
                    return Ok(());
                }
                a_stranger_is_refused_once_and_recorded::<$server>(&$spec).await
            }

            #[tokio::test]
            async fn a_9000_character_reply_arrives_in_ordered_parts_within_the_limit()
            -> anyhow::Result<()> {
                if <$server as TestServer>::skip(module_path!()) {
                    return Ok(());
                }
                a_9000_character_reply_arrives_in_ordered_parts::<$server>(&$spec).await
            }

            #[tokio::test]
            async fn social_message_lists_the_contact_and_sends_to_it_when_a_rule_allows()
            -> anyhow::Result<()> {
                if <$server as TestServer>::skip(module_path!()) {
                    return Ok(());
                }
                social_message_lists_the_contact_and_sends_to_it::<$server>(&$spec).await
            }

            #[tokio::test]
            async fn no_token_lands_in_the_database_logs_audit_events_or_settings_files()
            -> anyhow::Result<()> {
                if <$server as TestServer>::skip(module_path!()) {
                    return Ok(());
                }
                no_token_lands_in_the_database_logs_audit_events_or_settings::<$server>(&$spec)
                    .await
            }
        }
    };
}

platform_tests!(discord, DiscordServer, DISCORD);
platform_tests!(slack, SlackServer, SLACK);
platform_tests!(matrix, MatrixServer, MATRIX);
platform_tests!(matrix_synapse, SynapseServer, SYNAPSE);

/// On Synapse a reply of 70,000 characters (Matrix's limit is 30,000 bytes a message) arrives
/// in three parts, in order.
#[tokio::test]
async fn matrix_synapse_a_reply_of_three_parts_arrives_in_order() -> anyhow::Result<()> {
    if SynapseServer::skip(module_path!()) {
        return Ok(());
    }
    a_long_reply_arrives_in_ordered_parts::<SynapseServer>(&SYNAPSE, 7000).await
}

#[tokio::test]
async fn a_reply_that_failed_midway_is_resumed_with_only_the_parts_not_yet_delivered()
-> anyhow::Result<()> {
    let reply: String = (0..900).map(|i| format!("line {i:04}\n")).collect();
    let h: Harness<DiscordServer> = harness(&DISCORD, vec![Turn::text(reply.clone())]).await;
    // Parts 1 and 2 of 5 go out, part 3 fails.
    h.server.fail_create(3);
    let conversation = h
        .server
        .push_direct(DISCORD.ada, "Ada", "write me a long list");
    h.server.wait_delivered(2, WAIT).await;
    let chat = h.runtime.channels().conversations().await?[0]
        .chat_id
        .clone();
    // The next flush (after Ada's next turn) sends parts 3 to 5, then the new reply.
    h.model.push_turns(vec![Turn::text("Done now.")]);
    h.server
        .push_direct(DISCORD.ada, "Ada", "did it all arrive?");
    let sent = h.server.wait_delivered(6, WAIT).await;
    let texts: Vec<&str> = sent.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts.len(), 6, "{texts:?}");
    assert_eq!(texts[5], "Done now.");
    let joined: String = texts[..5].concat();
    assert_eq!(joined.trim_end(), reply.trim_end());
    assert!(sent.iter().all(|m| m.conversation == conversation));
    assert_eq!(h.transcript(&chat).await.len(), 4);
    Ok(())
}
