//! The shipped security configuration: a strict CSP and a main-window capability that grants the
//! app's own commands and event listening, nothing else.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::Path;

fn json(path: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_csp_allows_only_the_app_itself() {
    let conf = json("../tauri.conf.json");
    let csp = conf["app"]["security"]["csp"]
        .as_object()
        .expect("a CSP is configured");
    assert_eq!(csp["default-src"], "'self'");
    assert_eq!(csp["script-src"], "'self'");
    assert_eq!(csp["object-src"], "'none'");
    for (directive, value) in csp {
        let value = value.as_str().expect("directives are strings");
        for source in value.split_whitespace() {
            assert!(
                !source.contains("unsafe-eval") && !source.contains("unsafe-inline"),
                "{directive} allows {source}"
            );
            let remote = source.starts_with("https:")
                || source.starts_with("http:") && source != "http://ipc.localhost"
                || source.starts_with("ws")
                || source == "*";
            assert!(!remote, "{directive} allows the remote origin {source}");
        }
    }
    assert_eq!(
        conf["app"]["security"]["capabilities"],
        serde_json::json!(["main"])
    );
    assert_eq!(conf["app"]["windows"][0]["title"], "Suzent");
}

#[test]
fn the_main_window_may_call_only_the_app_commands_and_listen_to_events() {
    let cap = json("capabilities/main.json");
    assert_eq!(cap["windows"], serde_json::json!(["main"]));
    let mut granted: Vec<String> = cap["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().expect("plain permission ids").to_string())
        .collect();
    granted.sort();
    let mut expected: Vec<String> = [
        "list_chats",
        "create_chat",
        "rename_chat",
        "delete_chat",
        "get_messages",
        "send_message",
        "resume_approvals",
        "pending_approvals",
        "cancel_run",
        "set_chat_mode",
        "set_chat_tools",
        "get_catalog",
        "get_settings",
        "save_settings",
        "set_api_key",
        "delete_api_key",
        "list_rules",
        "add_rule",
        "delete_rule",
        "read_audit_log",
        "pick_workspace",
        "background_tasks",
        "stop_background_task",
    ]
    .iter()
    .map(|c| format!("allow-{}", c.replace('_', "-")))
    .chain([
        "core:event:allow-listen".into(),
        "core:event:allow-unlisten".into(),
    ])
    .collect();
    expected.sort();
    pretty_assertions::assert_eq!(granted, expected);
}
