//! Issue #12 item 4: one path policy for every tool that reads. A deny or ask path rule written
//! for one reading tool applies to every call that reads; a search rooted in a refused folder
//! is refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use pretty_assertions::assert_eq;
use serde_json::json;

fn read_call(tool: &str, path: &str, f: &Fixture) -> PermissionRequest {
    PermissionRequest {
        tool_name: tool.to_string(),
        args: json!({ "path": path }),
        access: ToolAccess::Read(vec![f.path(path)]),
        requires_approval: false,
    }
}

fn decide(rules: &[&str], tool: &str, path: &str) -> (Behavior, String) {
    let f = fixture();
    std::fs::create_dir_all(f.ws.join("secret/deep")).unwrap();
    std::fs::write(f.ws.join("secret/deep/k.txt"), "k").unwrap();
    std::fs::write(f.ws.join(".env"), "K=v").unwrap();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    let rules: Vec<Rule> = rules
        .iter()
        .enumerate()
        .map(|(i, s)| rule(i, s, &f))
        .collect();
    let ctx = PermissionContext {
        mode: PermissionMode::Default,
        paths: &policy,
        rules: &rules,
        chat_id: CHAT,
    };
    let d = PermissionEngine::new()
        .evaluate(&read_call(tool, path, &f), &ctx)
        .decision;
    (d.behavior, d.reason_code.to_string())
}

#[test]
fn a_read_rule_for_one_reading_tool_is_a_rule_for_every_reading_tool() {
    let rows: &[(&[&str], &str, &str, Behavior, &str)] = &[
        (
            &["deny read_file({ws}/secret/**)"],
            "glob_search",
            "secret",
            DENY,
            "rule_deny",
        ),
        (
            &["deny read_file({ws}/secret/**)"],
            "grep_search",
            "secret",
            DENY,
            "rule_deny",
        ),
        (
            &["deny read_file({ws}/secret/**)"],
            "grep_search",
            "secret/deep",
            DENY,
            "rule_deny",
        ),
        (
            &["deny read_file({ws}/secret/**)"],
            "grep_search",
            "secret/deep/k.txt",
            DENY,
            "rule_deny",
        ),
        (
            &["deny glob_search({ws}/secret/**)"],
            "read_file",
            "secret/deep/k.txt",
            DENY,
            "rule_deny",
        ),
        (
            &["deny grep_search(**/.env)"],
            "read_file",
            ".env",
            DENY,
            "rule_deny",
        ),
        (
            &["deny read_file(**/.env)"],
            "render_ui",
            ".env",
            DENY,
            "rule_deny",
        ),
        (
            &["deny read_file(**/.env)"],
            "mcp__docs__convert",
            ".env",
            DENY,
            "rule_deny",
        ),
        (
            &["ask read_file({ws}/secret/**)"],
            "glob_search",
            "secret",
            ASK,
            "rule_ask",
        ),
        (
            &["ask read_file({ws}/secret/**)"],
            "read_file",
            "secret/deep/k.txt",
            ASK,
            "rule_ask",
        ),
        // A search rooted above the folder is not refused (it skips the folder instead).
        (
            &["deny read_file({ws}/secret/**)"],
            "grep_search",
            "src",
            ALLOW,
            "read_only",
        ),
        (
            &["deny read_file({ws}/secret/**)"],
            "grep_search",
            ".",
            ALLOW,
            "read_only",
        ),
        // A rule for files of a kind does not refuse a search of a folder holding one.
        (
            &["deny read_file(**/.env)"],
            "grep_search",
            ".",
            ALLOW,
            "read_only",
        ),
        // Allow rules stay per tool; write rules are not read rules.
        (
            &["deny write_file({ws}/secret/**)"],
            "read_file",
            "secret/deep/k.txt",
            ALLOW,
            "read_only",
        ),
    ];
    let mut failures = Vec::new();
    for (rules, tool, path, behavior, code) in rows {
        let got = decide(rules, tool, path);
        if got != (*behavior, code.to_string()) {
            failures.push(format!("{rules:?} {tool} {path}: got {got:?}"));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}

#[test]
fn the_policy_tells_tools_which_paths_a_search_must_leave_out() {
    let f = fixture();
    let rules = vec![
        rule(0, "deny read_file({ws}/secret/**)", &f),
        rule(1, "ask grep_search(**/.env)", &f),
        rule(2, "allow read_file({ws}/src/**)", &f),
        rule(3, "deny write_file({ws}/src/**)", &f),
    ];
    let policy = PathPolicy::new(&f.ws, &[])
        .unwrap()
        .with_read_rules(&rules, CHAT);
    let refused = |p: &str| policy.read_refusal(&f.ws.join(p)).map(|r| r.to_string());
    assert_eq!(
        refused("secret/deep/k.txt"),
        Some(format!(
            "the rule deny read_file({}/secret/**)",
            f.ws.display()
        ))
    );
    assert_eq!(
        refused(".env"),
        Some("the rule ask grep_search(**/.env)".to_string())
    );
    assert_eq!(refused("src/main.rs"), None);
}
