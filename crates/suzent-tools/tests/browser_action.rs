//! `browser_action`'s arguments and what it tells the permission engine (the browser itself is
//! tested on real Chromium in suzent-browser and suzent-runtime).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Env;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::{Arc, Mutex};
use suzent_core::BrowserCommand;
use suzent_permissions::{BrowserAccess, BrowserAccessKind, ToolAccess};
use suzent_tools::{BrowserHost, Tool, ToolError, default_registry};

/// Records the commands it is given; the current URL is what the test sets.
#[derive(Debug, Default)]
struct Recorder {
    url: Mutex<Option<String>>,
    calls: Mutex<Vec<(BrowserCommand, Option<String>)>>,
}

#[async_trait::async_trait]
impl BrowserHost for Recorder {
    fn current_url(&self, _chat: &str) -> Option<String> {
        self.url.lock().unwrap().clone()
    }
    async fn run(
        &self,
        _chat: &str,
        command: &BrowserCommand,
        expected_origin: Option<&str>,
    ) -> Result<String, String> {
        self.calls
            .lock()
            .unwrap()
            .push((command.clone(), expected_origin.map(str::to_string)));
        Ok("value sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX123456 shown".to_string())
    }
}

fn tool() -> Arc<dyn Tool> {
    default_registry().get("browser_action").unwrap()
}

#[test]
fn every_command_has_its_own_typed_arguments_in_the_schema() {
    let schema = tool().spec().parameters.clone();
    let variants = schema["oneOf"].as_array().unwrap();
    let mut names: Vec<String> = variants
        .iter()
        .map(|v| {
            let c = &v["properties"]["command"];
            c["const"]
                .as_str()
                .or_else(|| c["enum"][0].as_str())
                .unwrap()
                .to_string()
        })
        .collect();
    names.sort();
    let mut expected = vec![
        "tabs",
        "select_tab",
        "open",
        "snapshot",
        "click",
        "dblclick",
        "hover",
        "fill",
        "type",
        "scroll",
        "back",
        "forward",
        "reload",
        "refresh",
        "press",
        "click_coords",
    ];
    expected.sort();
    assert_eq!(names, expected);
    let fill = variants
        .iter()
        .find(|v| v["properties"]["command"].to_string().contains("\"fill\""))
        .unwrap();
    let mut required: Vec<&str> = fill["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    required.sort();
    assert_eq!(required, vec!["command", "ref", "value"]);
}

#[test]
fn bad_arguments_name_the_field() {
    let env = Env::new();
    let t = tool();
    for (args, needle) in [
        (json!({"command": "click"}), "ref"),
        (json!({"command": "click", "ref": "s1e0", "x": 1}), "x"),
        (json!({"command": "teleport"}), "teleport"),
        (
            json!({"command": "scroll", "direction": "sideways"}),
            "sideways",
        ),
    ] {
        let err = t.access(&args, &env.ctx).unwrap_err();
        let ToolError::InvalidArguments(m) = err else {
            panic!("{args}: not invalid arguments")
        };
        assert!(m.contains(needle), "{args}: {m}");
    }
}

#[tokio::test]
async fn the_engine_sees_the_origin_and_acting_runs_only_on_a_known_page() {
    let mut env = Env::new();
    let host = Arc::new(Recorder::default());
    env.ctx.browser = Some(host.clone());
    let t = tool();
    let access = |args: serde_json::Value, env: &Env| t.access(&args, &env.ctx).unwrap();
    assert_eq!(
        access(
            json!({"command": "open", "url": "https://docs.test/a"}),
            &env
        ),
        ToolAccess::Browser(BrowserAccess {
            kind: BrowserAccessKind::Navigate,
            command: "open".into(),
            url: Some("https://docs.test/a".into()),
        })
    );
    assert_eq!(
        access(json!({"command": "click", "ref": "s1e0"}), &env),
        ToolAccess::Browser(BrowserAccess {
            kind: BrowserAccessKind::Act,
            command: "click".into(),
            url: None,
        })
    );
    let err = t
        .call(json!({"command": "click", "ref": "s1e0"}), &env.ctx)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ToolError::Failed(
            "no page is open in this chat's browser yet: open one or take a snapshot first".into()
        )
    );
    *host.url.lock().unwrap() = Some("http://docs.test:8080/page?q=1".into());
    assert_eq!(
        access(json!({"command": "snapshot"}), &env),
        ToolAccess::Browser(BrowserAccess {
            kind: BrowserAccessKind::Read,
            command: "snapshot".into(),
            url: Some("http://docs.test:8080/page?q=1".into()),
        })
    );
    let out = t
        .call(json!({"command": "click", "ref": "s1e0"}), &env.ctx)
        .await
        .unwrap();
    assert!(!out.contains("ABCDEFGHIJ"), "secrets are redacted: {out}");
    let calls = host.calls.lock().unwrap().clone();
    assert_eq!(
        calls,
        vec![(
            BrowserCommand::Click {
                target: "s1e0".into()
            },
            Some("http://docs.test:8080".into())
        )]
    );
}
