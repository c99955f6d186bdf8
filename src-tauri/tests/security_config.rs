//! The shipped security configuration: a strict CSP and a main-window capability that grants the
//! app's own commands and event listening, nothing else.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::Path;

fn text(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The app's commands as `build.rs` declares them (the source of the `allow-<command>`
/// permissions), checked against the commands the UI bindings can invoke.
fn app_commands() -> Vec<String> {
    let build = text("build.rs");
    let list = build
        .split_once("const COMMANDS: &[&str] = &[")
        .and_then(|(_, rest)| rest.split_once("];"))
        .expect("build.rs declares COMMANDS")
        .0;
    let mut commands: Vec<String> = list
        .split(',')
        .map(|item| item.trim().trim_matches('"').to_string())
        .filter(|item| !item.is_empty())
        .collect();
    let bindings = text("../ui/src/bindings.ts");
    // `__TAURI_INVOKE("name"` or, for commands that cannot fail, `__TAURI_INVOKE<T>("name"`.
    let mut invoked: Vec<String> = bindings
        .split("__TAURI_INVOKE")
        .skip(1)
        .filter_map(|rest| {
            let rest = match rest.strip_prefix('<') {
                Some(generic) => generic.split_once(">(\"")?.1,
                None => rest.strip_prefix("(\"")?,
            };
            rest.split('"').next().map(str::to_string)
        })
        .collect();
    commands.sort();
    invoked.sort();
    pretty_assertions::assert_eq!(
        commands,
        invoked,
        "build.rs COMMANDS and the commands registered in specta_builder differ"
    );
    commands
}

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
    // Canvas HtmlFrame documents come only from the app's own `suzent-frame:` scheme (served
    // with their own CSP, see src/frames.rs); `http://suzent-frame.localhost` is the form Tauri
    // gives custom schemes on Windows and Android, not a remote origin.
    assert_eq!(
        csp["frame-src"], "suzent-frame: http://suzent-frame.localhost",
        "frames may load only the app's frame scheme"
    );
    // Speech clips are read from the app's own `suzent-audio:` scheme (which answers only the
    // app's origin, see src/audio.rs) and played from `blob:` URLs: WebKitGTK cannot play media
    // from a custom scheme.
    assert_eq!(
        csp["media-src"], "'self' blob:",
        "media may load only from the app and its own blobs"
    );
    assert_eq!(
        csp["connect-src"], "ipc: http://ipc.localhost suzent-audio: http://suzent-audio.localhost",
        "scripts may reach only the IPC and the audio scheme"
    );
    for (directive, value) in csp {
        let value = value.as_str().expect("directives are strings");
        for source in value.split_whitespace() {
            assert!(
                !source.contains("unsafe-eval") && !source.contains("unsafe-inline"),
                "{directive} allows {source}"
            );
            let remote = source.starts_with("https:")
                || source.starts_with("http:")
                    && source != "http://ipc.localhost"
                    && !(directive == "frame-src" && source == "http://suzent-frame.localhost")
                    && !(directive == "connect-src" && source == "http://suzent-audio.localhost")
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
    let commands = app_commands();
    let mut expected: Vec<String> = commands
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

#[test]
fn no_capability_reaches_remote_urls_and_the_global_ipc_object_stays_off() {
    let conf = json("../tauri.conf.json");
    // Off by default; never turned on (it would give page scripts `window.__TAURI__`).
    assert_ne!(conf["app"]["withGlobalTauri"], serde_json::json!(true));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("capabilities");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let cap: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(
            cap.get("remote").is_none(),
            "{} grants remote URLs: {}",
            path.display(),
            cap["remote"]
        );
        let windows = cap["windows"].as_array().cloned().unwrap_or_default();
        assert_eq!(
            windows,
            vec![serde_json::json!("main")],
            "{}",
            path.display()
        );
        for p in cap["permissions"].as_array().unwrap() {
            let id = p.as_str().unwrap_or_default();
            assert!(
                !id.starts_with("opener:")
                    && !id.starts_with("shell:")
                    && !id.starts_with("fs:")
                    && !id.starts_with("http:"),
                "{} grants the webview {id}",
                path.display()
            );
        }
    }
}
