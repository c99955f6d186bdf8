//! Issue #12 items 1 and 4 at run time: one path policy for every tool that reads. Searches
//! rooted in a refused folder are refused; searches rooted above one skip it and say so, and
//! return no line or file name from inside; `read_file` (documents too) and canvas images are
//! refused by the same rules; Suzent's own state is refused to every file tool.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use chrono::Utc;
use common::Env;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use suzent_core::{Behavior, Rule, RuleDestination, RuleMatcher};
use suzent_permissions::PathPolicy;
use suzent_tools::ToolError;

fn rule(tool: &str, behavior: Behavior, glob: String) -> Rule {
    Rule {
        id: format!("r-{tool}"),
        tool: tool.into(),
        behavior,
        matcher: RuleMatcher::Path { glob },
        destination: RuleDestination::Global,
        chat_id: None,
        created_at: Utc::now(),
        description: None,
    }
}

/// A workspace with `secret/` refused by a deny rule for `read_file`, `drafts/` by an ask rule
/// for `glob_search`, and Suzent's state in `suzent-home/` (a portable install).
fn env() -> Env {
    let mut env = Env::new();
    let ws = env.ws();
    for d in [
        "src",
        "secret/deep",
        "drafts",
        "suzent-home/config",
        "suzent-home/data",
    ] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::write(ws.join("src/main.rs"), "needle in main\n").unwrap();
    std::fs::write(ws.join("secret/keys.rs"), "needle secret key\n").unwrap();
    std::fs::write(ws.join("secret/deep/more.rs"), "needle deeper\n").unwrap();
    std::fs::write(ws.join("drafts/plan.rs"), "needle draft\n").unwrap();
    std::fs::write(ws.join("suzent-home/config/rules.toml"), "# needle rules\n").unwrap();
    std::fs::write(ws.join("suzent-home/data/notes.rs"), "needle data\n").unwrap();
    let rules = vec![
        rule(
            "read_file",
            Behavior::Deny,
            format!("{}/secret/**", ws.display()),
        ),
        rule(
            "glob_search",
            Behavior::Ask,
            format!("{}/drafts/**", ws.display()),
        ),
    ];
    let policy = PathPolicy::new(
        &ws,
        &[env.ctx.persistence_dir.clone(), env.ctx.shared_dir.clone()],
    )
    .unwrap()
    .protect(&[ws.join("suzent-home/config"), ws.join("suzent-home/data")])
    .with_read_rules(&rules, "chat-1");
    env.ctx.paths = Arc::new(policy);
    env
}

fn failed(r: Result<String, ToolError>) -> String {
    match r {
        Err(ToolError::Failed(m)) => m,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_grep_rooted_above_refused_folders_skips_them_and_says_so() {
    let env = env();
    let out = env
        .call("grep_search", json!({"pattern": "needle"}))
        .await
        .unwrap();
    assert_eq!(
        out,
        "src/main.rs:1:needle in main\n[skipped 4 path(s) you may not read: /workspace/drafts (the rule ask glob_search(".to_string()
            + &format!("{}/drafts/**)), /workspace/secret (the rule deny read_file({}/secret/**)), /workspace/suzent-home/config (Suzent's own settings and data), /workspace/suzent-home/data (Suzent's own settings and data)]", env.ws().display(), env.ws().display())
    );
}

#[tokio::test]
async fn a_glob_rooted_above_refused_folders_returns_no_name_from_inside() {
    let env = env();
    let out = env
        .call("glob_search", json!({"pattern": "**/*"}))
        .await
        .unwrap();
    assert!(out.starts_with("src/main.rs\n[skipped 4 path(s)"), "{out}");
    for hidden in ["keys.rs", "more.rs", "plan.rs", "rules.toml", "notes.rs"] {
        assert!(!out.contains(hidden), "{hidden} leaked: {out}");
    }
}

#[tokio::test]
async fn a_search_rooted_in_a_refused_folder_is_refused() {
    let env = env();
    for (tool, path) in [
        ("grep_search", "secret"),
        ("grep_search", "secret/deep"),
        ("glob_search", "drafts"),
        ("grep_search", "suzent-home/config"),
        ("glob_search", "/workspace/suzent-home/data"),
    ] {
        let args = if tool == "grep_search" {
            json!({"pattern": "needle", "path": path})
        } else {
            json!({"pattern": "**/*", "path": path})
        };
        let message = failed(env.call(tool, args).await);
        assert!(message.starts_with("refused: "), "{tool} {path}: {message}");
    }
}

#[tokio::test]
async fn read_file_and_documents_follow_the_same_read_rules() {
    let env = env();
    std::fs::write(env.ws().join("secret/report.docx"), b"PK not really").unwrap();
    for path in [
        "secret/keys.rs",
        "secret/report.docx",
        "drafts/plan.rs",
        "suzent-home/config/rules.toml",
    ] {
        let message = failed(env.call("read_file", json!({"file_path": path})).await);
        assert!(message.starts_with("refused: "), "{path}: {message}");
    }
    assert!(
        env.call("read_file", json!({"file_path": "src/main.rs"}))
            .await
            .unwrap()
            .contains("needle in main")
    );
}

#[tokio::test]
async fn file_tools_never_write_suzent_state_even_through_a_symlink() {
    let env = env();
    std::os::unix::fs::symlink(env.ws().join("suzent-home/config"), env.ws().join("cfg")).unwrap();
    let before = std::fs::read_to_string(env.ws().join("suzent-home/config/rules.toml")).unwrap();
    for path in [
        "suzent-home/config/rules.toml",
        "cfg/rules.toml",
        "cfg/new.toml",
        "suzent-home/data/suzent.db",
    ] {
        let message = failed(
            env.call(
                "write_file",
                json!({"file_path": path, "content": "[[rule]]"}),
            )
            .await,
        );
        assert!(message.starts_with("refused: "), "{path}: {message}");
    }
    assert_eq!(
        std::fs::read_to_string(env.ws().join("suzent-home/config/rules.toml")).unwrap(),
        before
    );
    assert!(!env.ws().join("suzent-home/config/new.toml").exists());
    assert!(!env.ws().join("suzent-home/data/suzent.db").exists());
    let _: PathBuf = env.ws();
}
