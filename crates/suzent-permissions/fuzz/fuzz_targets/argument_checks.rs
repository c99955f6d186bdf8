//! The argument checks of issue #12 never panic and cannot be hidden: arbitrary text is
//! evaluated as a command in every mode against a workspace holding Suzent's own state
//! (`SUZENT_HOME` inside the workspace, and a workspace folder linking to it); the same text
//! after a command that writes into that state is always denied; rule text is split and
//! warned about without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;
use suzent_core::{Behavior, PermissionMode, RuleDestination, RuleDraft, RuleMatcher};
use suzent_permissions::{
    PathPolicy, PermissionContext, PermissionEngine, PermissionRequest, ToolAccess, rule_warnings,
    split_rule_words,
};

struct Ws {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    policy: PathPolicy,
}

fn ws() -> &'static Ws {
    static WS: OnceLock<Ws> = OnceLock::new();
    WS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let ws = std::fs::canonicalize(dir.path()).unwrap_or_else(|e| panic!("canonicalize: {e}"));
        let state = ws.join(".suzent");
        std::fs::create_dir_all(state.join("config")).unwrap_or_else(|e| panic!("mkdir: {e}"));
        std::fs::create_dir_all(state.join("data/shared")).unwrap_or_else(|e| panic!("mkdir: {e}"));
        std::os::unix::fs::symlink(".suzent/config", ws.join("cfg"))
            .unwrap_or_else(|e| panic!("symlink: {e}"));
        let policy = PathPolicy::new(&ws, &[state.join("data/shared")])
            .unwrap_or_else(|e| panic!("policy: {e}"))
            .protect(&[state.join("config"), state.join("data")]);
        Ws {
            _dir: dir,
            ws,
            policy,
        }
    })
}

fn request(command: &str, cwd: &PathBuf) -> PermissionRequest {
    PermissionRequest {
        tool_name: "run_command".into(),
        args: serde_json::json!({ "content": command }),
        access: ToolAccess::Command {
            command: command.to_string(),
            cwd: cwd.clone(),
        },
        requires_approval: true,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let w = ws();
    let engine = PermissionEngine::new();
    for mode in [
        PermissionMode::Default,
        PermissionMode::Auto,
        PermissionMode::FullAccess,
    ] {
        let ctx = PermissionContext {
            mode,
            paths: &w.policy,
            rules: &[],
            chat_id: "fuzz",
        };
        let _ = engine.evaluate(&request(text, &w.ws), &ctx);
        for prefix in ["cp evil cfg/rules.toml && ", "echo x >> .suzent/config/rules.toml; "] {
            let script = format!("{prefix}{text}");
            let eval = engine.evaluate(&request(&script, &w.ws), &ctx);
            assert_eq!(
                eval.decision.behavior,
                Behavior::Deny,
                "not denied in {mode}: {script:?} -> {:?}",
                eval.decision
            );
        }
    }
    if let Ok(words) = split_rule_words(text) {
        let _ = rule_warnings(&RuleDraft {
            tool: "run_command".into(),
            behavior: Behavior::Allow,
            matcher: RuleMatcher::Prefix { words },
            destination: RuleDestination::Global,
            description: None,
        });
    }
});
