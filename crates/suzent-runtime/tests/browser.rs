//! `browser_action` through the runtime (issue 15 items 5, 7; R2-B16): a scripted model turn in
//! default mode on a managed Chromium (Debian's, headless) and fixture pages served by the
//! test: opening asks, reading does not, the first click asks and names the origin, "allow for
//! this chat" stores a rule for the host so later actions there run without asking, another
//! site asks again, and a headless run is refused. Real SQLite; the scripted model server speaks
//! the OpenAI wire format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::Router;
use axum::extract::{Query, State};
use axum::response::Html;
use axum::routing::get;
use pretty_assertions::assert_eq;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use suzent_core::{
    ApprovalResponse, BrowserConfig, BrowserMode, ChatMessage, Config, PermissionMode, RunOutcome,
};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{CreateChat, OnAsk, Paths, RunOptions, Runtime, RuntimeOptions};
use suzent_tests::{ScriptedServer, Turn};

const PAGE: &str = r#"<!doctype html><title>Docs</title>
<button onclick="fetch('/hit?m=pay')">Pay</button>
<input aria-label="Name" onchange="fetch('/hit?m=filled-' + this.value)">"#;

type Hits = Arc<Mutex<Vec<String>>>;

async fn fixture_server() -> (u16, Hits) {
    let hits: Hits = Arc::default();
    async fn hit(State(h): State<Hits>, Query(q): Query<HashMap<String, String>>) -> &'static str {
        h.lock()
            .unwrap()
            .push(q.get("m").cloned().unwrap_or_default());
        "ok"
    }
    let app = Router::new()
        .route("/page", get(|| async { Html(PAGE) }))
        .route("/hit", get(hit))
        .with_state(hits.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (port, hits)
}

fn call(id: &str, args: serde_json::Value) -> Turn {
    Turn::tool_call(id, "browser_action", args.to_string())
}

fn answer(summary: &suzent_runtime::RunSummary, action: &str) -> Vec<ApprovalResponse> {
    vec![ApprovalResponse {
        request_id: summary.pending[0].id.clone(),
        tool_call_id: None,
        action_id: action.into(),
        feedback: None,
        rule: None,
    }]
}

async fn tool_results(runtime: &Runtime, chat: &str) -> Vec<String> {
    runtime
        .messages(chat)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|m| match m.message {
            ChatMessage::Tool { content, .. } => Some(content),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_mode_asks_before_the_first_click_and_allows_the_site_after_allow_in_this_chat()
-> anyhow::Result<()> {
    let (port, hits) = fixture_server().await;
    let docs = format!("http://docs.test:{port}/page");
    let bank = format!("http://bank.test:{port}/page");
    let server = ScriptedServer::start(vec![
        call("c1", serde_json::json!({"command": "open", "url": docs})),
        call("c2", serde_json::json!({"command": "snapshot"})),
        call("c3", serde_json::json!({"command": "click", "ref": "s1e0"})),
        call(
            "c4",
            serde_json::json!({"command": "fill", "ref": "s1e1", "value": "ann"}),
        ),
        call("c5", serde_json::json!({"command": "click", "ref": "s1e0"})),
        call("c6", serde_json::json!({"command": "open", "url": bank})),
        Turn::text("done"),
        // The headless chat.
        call("h1", serde_json::json!({"command": "open", "url": docs})),
        Turn::text("refused"),
    ])
    .await;
    let dir = tempfile::tempdir()?;
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws)?;
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        default_mode: PermissionMode::Default,
        tools: vec!["BrowserTool".into()],
        browser: BrowserConfig {
            mode: BrowserMode::Managed,
            headless: true,
            binary: std::env::var_os("SUZENT_TEST_CHROMIUM").map(Into::into),
            extra_args: vec!["--host-resolver-rules=MAP *.test 127.0.0.1".into()],
            ..BrowserConfig::default()
        },
        ..Config::default()
    };
    config.providers.openai.base_url = Some(server.openai_base());
    let runtime = Runtime::open(RuntimeOptions {
        paths: Paths::under(&dir.path().join("home")),
        keys: Arc::new(StaticKeys::new().with("openai", "sk-test")),
        config: Some(config),
    })
    .await?;
    let chat = runtime
        .create_chat(CreateChat {
            workspace: Some(ws.clone()),
            ..CreateChat::default()
        })
        .await?
        .id;

    // Opening a site asks, naming it.
    let s = runtime
        .send_message(&chat, "pay the bill", RunOptions::default())
        .await?;
    assert_eq!(s.outcome, RunOutcome::Suspended);
    assert_eq!(
        s.pending[0].decision.reason,
        format!("Opening http://docs.test:{port} in the browser needs your approval.")
    );
    // Allowed once; the snapshot runs without asking; the click asks, naming the origin.
    let s = runtime
        .resume_approvals(&chat, answer(&s, "allow_once"), RunOptions::default())
        .await?;
    assert_eq!(s.outcome, RunOutcome::Suspended);
    assert_eq!(s.pending[0].tool_call_id, "c3");
    assert_eq!(
        s.pending[0].decision.reason,
        format!("browser_action click on http://docs.test:{port} needs your approval.")
    );
    let offered: Vec<String> = s.pending[0]
        .decision
        .actions
        .iter()
        .map(|a| format!("{}: {}", a.label, a.description))
        .collect();
    assert!(
        offered.contains(&format!(
            "Allow for this chat: Allow browser actions on http://docs.test:{port} in this chat."
        )),
        "{offered:?}"
    );
    assert!(
        hits.lock().unwrap().is_empty(),
        "nothing clicked before approval"
    );
    // "Allow in this chat": the fill and the second click run without asking; bank.test asks.
    let s = runtime
        .resume_approvals(&chat, answer(&s, "allow_session"), RunOptions::default())
        .await?;
    assert_eq!(s.outcome, RunOutcome::Suspended);
    assert_eq!(s.pending[0].tool_call_id, "c6");
    assert_eq!(
        s.pending[0].decision.reason,
        format!("Opening http://bank.test:{port} in the browser needs your approval.")
    );
    let s = runtime
        .resume_approvals(&chat, answer(&s, "reject"), RunOptions::default())
        .await?;
    assert_eq!(s.outcome, RunOutcome::Completed);
    assert_eq!(*hits.lock().unwrap(), vec!["pay", "filled-ann", "pay"]);
    let results = tool_results(&runtime, &chat).await;
    assert!(
        results[1].contains("[ref=s1e0]") && results[1].contains("untrusted data"),
        "{}",
        results[1]
    );
    assert!(
        results[2].starts_with("clicked button \"Pay\" in tab "),
        "{}",
        results[2]
    );
    assert!(
        results[5].starts_with("The user rejected this browser_action call"),
        "{}",
        results[5]
    );
    let rules = runtime.list_rules(Some(&chat)).await?;
    let grants: Vec<(&str, Option<&str>)> = rules
        .iter()
        .map(|r| (r.tool.as_str(), r.description.as_deref()))
        .collect();
    assert_eq!(
        grants,
        vec![(
            "browser_action",
            Some(
                format!("Allow browser actions on http://docs.test:{port} in this chat.").as_str()
            )
        )]
    );

    // A headless run (another chat, no grant) is refused instead of asking.
    let other = runtime
        .create_chat(CreateChat {
            workspace: Some(ws),
            ..CreateChat::default()
        })
        .await?
        .id;
    let s = runtime
        .send_message(
            &other,
            "open docs",
            RunOptions {
                on_ask: OnAsk::Deny,
                ..RunOptions::default()
            },
        )
        .await?;
    assert_eq!(s.outcome, RunOutcome::Completed);
    let results = tool_results(&runtime, &other).await;
    assert!(
        results[0].starts_with("Permission denied (headless_ask_denied)"),
        "{}",
        results[0]
    );
    runtime.browser().shutdown().await;
    Ok(())
}
