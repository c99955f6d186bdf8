//! The canvas through the runtime API (issue 8): `render_ui` stores and announces surfaces, a
//! button press goes back to the owning agent through the durable inbox (a new turn of an idle
//! chat, or in place into a running one), surfaces survive reopening the runtime, and a
//! workspace image is a read for the permission engine. Real SQLite, the scripted model server
//! speaking the OpenAI wire format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use suzent_core::{
    AgentEvent, ChatMessage, Config, PermissionMode, RunOutcome, SurfaceAction, SurfaceChangeKind,
};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{
    CreateChat, InboxStatus, Paths, RunOptions, Runtime, RuntimeOptions, action_text,
};
use suzent_tests::{ScriptedServer, Turn};
use tempfile::TempDir;

struct Harness {
    dir: TempDir,
    ws: PathBuf,
    runtime: Runtime,
}

fn config(server: &ScriptedServer, mode: PermissionMode) -> Config {
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        default_mode: mode,
        tools: vec!["RenderUiTool".into(), "ReadFileTool".into()],
        ..Config::default()
    };
    config.providers.openai.base_url = Some(server.openai_base());
    config
}

async fn open(dir: &TempDir, config: Config) -> Runtime {
    let runtime = Runtime::open(RuntimeOptions {
        paths: Paths::under(&dir.path().join("home")),
        keys: Arc::new(StaticKeys::new().with("openai", "sk-test")),
        config: Some(config),
    })
    .await
    .unwrap();
    runtime.start_dispatcher();
    runtime
}

async fn harness(server: &ScriptedServer, mode: PermissionMode) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws).unwrap();
    let runtime = open(&dir, config(server, mode)).await;
    Harness { dir, ws, runtime }
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

fn render(id: &str, args: Value) -> Turn {
    Turn::tool_call(id, "render_ui", args.to_string())
}

/// The signup form of the scenario: a name field, a checkbox, a progress bar and a button
/// that sends both inputs.
fn signup_form() -> Value {
    json!({
        "action": "render",
        "surface_id": "signup",
        "title": "Sign up",
        "root": "form",
        "components": [
            {"id": "form", "component": {"Column": {"children": {"explicitList": ["name", "agree", "progress", "submit-btn"]}}}},
            {"id": "name", "component": {"TextField": {"label": {"literalString": "Name"}, "text": {"path": "/form/name"}}}},
            {"id": "agree", "component": {"CheckBox": {"label": {"literalString": "I agree"}, "value": {"path": "/form/agree"}}}},
            {"id": "progress", "component": {"Progress": {"value": {"path": "/progress"}, "label": {"literalString": "Setup"}}}},
            {"id": "submit-label", "component": {"Text": {"text": {"literalString": "Submit"}}}},
            {"id": "submit-btn", "component": {"Button": {"child": "submit-label", "primary": true, "action": {"name": "submit", "context": [
                {"key": "name", "value": {"path": "/form/name"}},
                {"key": "agree", "value": {"path": "/form/agree"}}
            ]}}}}
        ],
        "data_model": {"form": {"name": "", "agree": false}, "progress": 0}
    })
}

fn submit(name: &str, agree: bool) -> SurfaceAction {
    SurfaceAction {
        surface_id: "signup".into(),
        name: "submit".into(),
        source_component_id: "submit-btn".into(),
        context: json!({"name": name, "agree": agree})
            .as_object()
            .cloned()
            .unwrap(),
    }
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

fn canvas_messages(transcript: &[ChatMessage]) -> Vec<(usize, String)> {
    transcript
        .iter()
        .enumerate()
        .filter_map(|(i, m)| match m {
            ChatMessage::User { text, .. } if text.contains("[canvas] action") => {
                Some((i, text.clone()))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submitted_form_reaches_the_idle_agent_which_then_updates_the_progress() {
    let server = ScriptedServer::start(vec![
        render("r1", signup_form()),
        Turn::text("Please fill in the form."),
    ])
    .await;
    let h = harness(&server, PermissionMode::Default).await;
    let chat = h.chat().await;
    let mut events = h.runtime.subscribe();
    let summary = h
        .runtime
        .send_message(&chat, "sign me up", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(summary.outcome, RunOutcome::Completed);
    let surfaces = h.runtime.surfaces(&chat).await.unwrap();
    assert_eq!(surfaces.len(), 1);
    assert_eq!(
        (surfaces[0].version, surfaces[0].tool_call_id.as_deref()),
        (1, Some("r1"))
    );
    let results: Vec<String> = h
        .transcript(&chat)
        .await
        .into_iter()
        .filter_map(|m| match m {
            ChatMessage::Tool { content, .. } => Some(content),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        ["rendered surface \"signup\" v1 on the canvas (6 components)"]
    );

    // The user fills the form and presses the button; the agent's next turn updates the bar.
    server.push_turns(vec![
        render(
            "r2",
            json!({"action": "update_data", "surface_id": "signup",
                   "data_updates": [{"path": "/progress", "value": 1}]}),
        ),
        Turn::text("Thanks Ada, you are signed up."),
    ]);
    let queued = h
        .runtime
        .submit_surface_action(&chat, submit("Ada", true))
        .await
        .unwrap();
    assert_eq!(
        (
            queued.sender.as_str(),
            queued.kind.as_str(),
            queued.text.as_str()
        ),
        (
            "canvas",
            "canvas_action",
            "[canvas] action \"submit\" on surface \"signup\" (button \"submit-btn\"): {\"agree\":true,\"name\":\"Ada\"}"
        )
    );
    assert_eq!(queued.text, action_text(&submit("Ada", true)));
    eventually("the agent's turn after the action", || async {
        h.runtime.surfaces(&chat).await.unwrap()[0].version == 3
            && h.runtime.inbox(Some(&chat)).await.unwrap()[0].status == InboxStatus::Delivered
    })
    .await;
    // The model's request of that turn carried the submitted values.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(
        requests[2].to_string().contains(
            "[canvas] action \\\"submit\\\" on surface \\\"signup\\\" (button \\\"submit-btn\\\"): {\\\"agree\\\":true,\\\"name\\\":\\\"Ada\\\"}"
        ),
        "{}",
        requests[2]
    );
    // The form kept the values (written by the action), the agent moved the bar.
    let surface = h.runtime.surfaces(&chat).await.unwrap().remove(0);
    assert_eq!(
        Value::Object(surface.data_model.clone()),
        json!({"form": {"name": "Ada", "agree": true}, "progress": 1})
    );
    assert_eq!(surface.tool_call_id.as_deref(), Some("r2"));
    let history = h.runtime.surface_history(&chat, "signup").await.unwrap();
    let kinds: Vec<(u32, SurfaceChangeKind)> =
        history.iter().map(|e| (e.version, e.kind)).collect();
    assert_eq!(
        kinds,
        [
            (1, SurfaceChangeKind::Render),
            (2, SurfaceChangeKind::UserAction),
            (3, SurfaceChangeKind::UpdateData)
        ]
    );
    assert_eq!(
        history[1].payload["context"],
        json!({"name": "Ada", "agree": true})
    );
    // The user's action did not render: it is recorded without a tool call.
    let calls: Vec<Option<&str>> = history.iter().map(|e| e.tool_call_id.as_deref()).collect();
    assert_eq!(calls, [Some("r1"), None, Some("r2")]);
    // Every change was announced, in order, after it was stored; the surface announced after the
    // user's action still names the call that last rendered it (an inline surface stays after
    // that call in the transcript).
    let mut announced = Vec::new();
    while let Ok(ev) = events.try_recv() {
        if let AgentEvent::SurfaceUpdated { chat_id, surface } = ev {
            assert_eq!(chat_id, chat);
            announced.push((surface.version, surface.tool_call_id));
        }
    }
    let r = |id: &str| Some(id.to_string());
    assert_eq!(announced, [(1, r("r1")), (2, r("r1")), (3, r("r2"))]);
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_turn_receives_the_action_in_place_before_its_next_step() {
    let server = ScriptedServer::start(vec![
        render("r1", signup_form()),
        // The user presses the button while this step is in flight.
        render(
            "r2",
            json!({"action": "update_data", "surface_id": "signup",
                   "data_updates": [{"path": "/progress", "value": 0.5}]}),
        )
        .delayed(1500),
        Turn::text("Got it."),
    ])
    .await;
    let h = harness(&server, PermissionMode::Default).await;
    let chat = h.chat().await;
    let run = {
        let runtime = h.runtime.clone();
        let chat = chat.clone();
        tokio::spawn(async move {
            runtime
                .send_message(&chat, "sign me up", RunOptions::default())
                .await
        })
    };
    eventually("the form on the canvas", || async {
        !h.runtime.surfaces(&chat).await.unwrap().is_empty()
    })
    .await;
    h.runtime
        .submit_surface_action(&chat, submit("Grace", false))
        .await
        .unwrap();
    let summary = run.await.unwrap().unwrap();
    assert_eq!(summary.text, "Got it.");
    // Delivered into the running turn: after the second call's result, seen by the last step.
    let transcript = h.transcript(&chat).await;
    let delivered = canvas_messages(&transcript);
    assert_eq!(delivered.len(), 1, "{transcript:?}");
    assert_eq!(delivered[0].0, transcript.len() - 2, "{transcript:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        requests[2]
            .to_string()
            .contains("\\\"name\\\":\\\"Grace\\\"")
    );
    assert!(!requests[1].to_string().contains("Grace"));
    // No second turn follows.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(server.requests().len(), 3);
    assert_eq!(
        h.runtime.inbox(Some(&chat)).await.unwrap()[0].status,
        InboxStatus::Delivered
    );
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_surface_survives_closing_and_reopening_the_runtime() {
    let server = ScriptedServer::start(vec![render("r1", signup_form()), Turn::text("ok")]).await;
    let h = harness(&server, PermissionMode::Default).await;
    let chat = h.chat().await;
    h.runtime
        .send_message(&chat, "form please", RunOptions::default())
        .await
        .unwrap();
    let before = h.runtime.surfaces(&chat).await.unwrap();
    assert_eq!(before.len(), 1);
    h.runtime.shutdown().await;
    drop(h.runtime);

    let runtime = open(&h.dir, config(&server, PermissionMode::Default)).await;
    assert_eq!(runtime.surfaces(&chat).await.unwrap(), before);
    // Still usable: the button works after the restart.
    runtime
        .submit_surface_action(&chat, submit("Ada", true))
        .await
        .unwrap();
    assert_eq!(runtime.surfaces(&chat).await.unwrap()[0].version, 2);
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_that_do_not_match_the_surface_are_refused_and_the_user_can_close_it() {
    let server = ScriptedServer::start(vec![render("r1", signup_form()), Turn::text("ok")]).await;
    let h = harness(&server, PermissionMode::Default).await;
    let chat = h.chat().await;
    h.runtime
        .send_message(&chat, "form please", RunOptions::default())
        .await
        .unwrap();
    let err = |a: SurfaceAction| {
        let runtime = h.runtime.clone();
        let chat = chat.clone();
        async move {
            runtime
                .submit_surface_action(&chat, a)
                .await
                .unwrap_err()
                .to_string()
        }
    };
    let mut a = submit("x", true);
    a.source_component_id = "name".into();
    assert_eq!(
        err(a).await,
        "invalid action.sourceComponentId: component 'name' of surface 'signup' is a TextField, not a Button"
    );
    let mut a = submit("x", true);
    a.name = "cancel".into();
    assert_eq!(
        err(a).await,
        "invalid action.name: button 'submit-btn' sends the action 'submit', not 'cancel'"
    );
    let mut a = submit("x", true);
    a.context.insert("admin".into(), json!(true));
    assert_eq!(
        err(a).await,
        "invalid action.context: key 'admin' is not in the context of button 'submit-btn' (its keys: name, agree)"
    );
    let mut a = submit("x", true);
    a.context.insert("name".into(), json!("x".repeat(70_000)));
    assert_eq!(
        err(a).await,
        "invalid action.context: the submitted values are 70024 bytes of JSON; the limit is 65536"
    );
    // Nothing was stored or queued by the refused actions.
    assert_eq!(h.runtime.surfaces(&chat).await.unwrap()[0].version, 1);
    assert!(h.runtime.inbox(Some(&chat)).await.unwrap().is_empty());

    let mut events = h.runtime.subscribe();
    assert!(h.runtime.delete_surface(&chat, "signup").await.unwrap());
    assert!(!h.runtime.delete_surface(&chat, "signup").await.unwrap());
    assert!(matches!(
        events.try_recv(),
        Ok(AgentEvent::SurfaceDeleted { surface_id, .. }) if surface_id == "signup"
    ));
    assert!(h.runtime.surfaces(&chat).await.unwrap().is_empty());
    assert_eq!(
        err(submit("x", true)).await,
        format!(
            "invalid action.surfaceId: chat '{chat}' has no surface 'signup' (it may have been deleted)"
        )
    );
    let kinds: Vec<SurfaceChangeKind> = h
        .runtime
        .surface_history(&chat, "signup")
        .await
        .unwrap()
        .iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [SurfaceChangeKind::Render, SurfaceChangeKind::Delete]
    );
    assert_eq!(
        h.runtime
            .surfaces("no-such-chat")
            .await
            .unwrap_err()
            .to_string(),
        "unknown chat 'no-such-chat'"
    );
    h.runtime.shutdown().await;
}

/// A 1x1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_image_is_a_read_and_one_outside_the_workspace_is_denied() {
    let image = |id: &str, url: &str| {
        render(
            id,
            json!({"action": "render", "surface_id": id, "root": "i",
                   "components": [{"id": "i", "component": {"Image": {"url": {"literalString": url}}}}]}),
        )
    };
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.png"), PNG).unwrap();
    let outside_path = outside.path().join("x.png").display().to_string();
    let server = ScriptedServer::start(vec![
        image("inside", "logo.png"),
        image("outside", &outside_path),
        Turn::text("ok"),
    ])
    .await;
    let h = harness(&server, PermissionMode::Default).await;
    std::fs::write(h.ws.join("logo.png"), PNG).unwrap();
    let chat = h.chat().await;
    let mut events = h.runtime.subscribe();
    let summary = h
        .runtime
        .send_message(&chat, "show pictures", RunOptions::default())
        .await
        .unwrap();
    // No approval was asked in default mode: a read inside the workspace is allowed, one
    // outside every allowed root is denied.
    assert_eq!(summary.outcome, RunOutcome::Completed);
    let mut decisions = Vec::new();
    while let Ok(ev) = events.try_recv() {
        if let AgentEvent::ToolPermissionDecision(d) = ev {
            decisions.push((d.tool_call_id, d.decision.reason_code.to_string()));
        }
    }
    assert_eq!(
        decisions,
        [
            ("inside".to_string(), "read_only".to_string()),
            ("outside".to_string(), "outside_workspace".to_string())
        ]
    );
    let surfaces = h.runtime.surfaces(&chat).await.unwrap();
    assert_eq!(surfaces.len(), 1);
    let url = serde_json::to_value(&surfaces[0].components[0].component).unwrap()["Image"]["url"]
        ["literalString"]
        .clone();
    assert_eq!(url, json!("data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="));
    h.runtime.shutdown().await;
}

/// The `render_ui` schema as each provider receives it (references inlined) stays bounded:
/// it is in every request of a chat that has the tool (it is in the default selection).
#[test]
fn the_render_ui_schema_sent_to_each_provider_is_bounded() {
    use suzent_runtime::provider::ProviderKind;
    use suzent_runtime::provider::schema::normalize_schema;
    let registry = suzent_tools::default_registry();
    let tool = registry.get("render_ui").unwrap();
    let raw = serde_json::to_string(&tool.spec().parameters)
        .unwrap()
        .len();
    let mut sizes = vec![("declared", raw)];
    for (name, kind) in [
        ("openai", ProviderKind::OpenAi),
        ("anthropic", ProviderKind::Anthropic),
        ("gemini", ProviderKind::Gemini),
    ] {
        let schema = normalize_schema(&tool.spec().parameters, kind);
        let text = serde_json::to_string(&schema).unwrap();
        assert!(!text.contains("$ref"), "{name}: {text}");
        sizes.push((name, text.len()));
    }
    eprintln!("render_ui schema bytes: {sizes:?}");
    for (name, size) in sizes {
        // About 21 KB for OpenAI and Anthropic, 18 KB for Gemini, 16 KB declared.
        assert!(size < 24 * 1024, "{name}: {size} bytes");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submitted_values_that_would_break_the_surface_are_refused() {
    // An image whose url is bound to a path a text field also writes.
    let form = json!({
        "action": "render", "surface_id": "pic", "root": "col",
        "components": [
            {"id": "col", "component": {"Column": {"children": {"explicitList": ["img", "url", "btn"]}}}},
            {"id": "img", "component": {"Image": {"url": {"path": "/pic"}}}},
            {"id": "url", "component": {"TextField": {"label": {"literalString": "Picture"}, "text": {"path": "/pic"}}}},
            {"id": "lbl", "component": {"Text": {"text": {"literalString": "Use it"}}}},
            {"id": "btn", "component": {"Button": {"child": "lbl", "action": {"name": "use", "context": [
                {"key": "pic", "value": {"path": "/pic"}}
            ]}}}}
        ],
        "data_model": {"pic": "data:image/png;base64,iVBORw0KGgo="}
    });
    let server = ScriptedServer::start(vec![render("r1", form), Turn::text("ok")]).await;
    let h = harness(&server, PermissionMode::Default).await;
    let chat = h.chat().await;
    h.runtime
        .send_message(&chat, "picture form", RunOptions::default())
        .await
        .unwrap();
    let action = SurfaceAction {
        surface_id: "pic".into(),
        name: "use".into(),
        source_component_id: "btn".into(),
        context: json!({"pic": "https://example.com/x.png"})
            .as_object()
            .cloned()
            .unwrap(),
    };
    assert_eq!(
        h.runtime
            .submit_surface_action(&chat, action)
            .await
            .unwrap_err()
            .to_string(),
        "invalid action.context: the submitted values would make the surface invalid: component \"img\".component.Image.url.path: the data model value at \"/pic\": \"https://example.com/x.png\" is a remote URL; no remote fetches: give a data: URL or a workspace file path"
    );
    assert_eq!(h.runtime.surfaces(&chat).await.unwrap()[0].version, 1);
    assert!(h.runtime.inbox(Some(&chat)).await.unwrap().is_empty());
    h.runtime.shutdown().await;
}
