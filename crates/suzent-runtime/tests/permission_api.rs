//! The permission calls of the runtime API that the CLI and the desktop share: mode per chat,
//! the permission state (stored and hand-written rules), and the decision simulator.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::Arc;
use suzent_core::{Behavior, Config, PermissionMode, RuleDestination, RuleDraft, RuleMatcher};
use suzent_runtime::provider::resolve::StaticKeys;
use suzent_runtime::{CreateChat, Paths, Runtime, RuntimeError, RuntimeOptions};

async fn runtime(dir: &std::path::Path) -> Runtime {
    std::fs::create_dir_all(dir.join("project")).unwrap();
    Runtime::open(RuntimeOptions {
        paths: Paths::under(&dir.join("home")),
        keys: Arc::new(StaticKeys::new().with("openai", "sk-test")),
        config: Some(Config {
            default_model: Some("openai/gpt-test".into()),
            workspace: Some(dir.join("project")),
            ..Config::default()
        }),
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn mode_and_rules_per_chat_round_trip_through_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path()).await;
    let chat = rt.create_chat(CreateChat::default()).await.unwrap();
    assert_eq!(
        rt.get_mode(&chat.id).await.unwrap(),
        PermissionMode::Default
    );
    rt.set_mode(&chat.id, PermissionMode::Auto).await.unwrap();
    assert_eq!(rt.get_mode(&chat.id).await.unwrap(), PermissionMode::Auto);

    std::fs::create_dir_all(dir.path().join("home/config")).unwrap();
    std::fs::write(
        dir.path().join("home/config/rules.toml"),
        "[[rule]]\ntool = \"run_command\"\nbehavior = \"deny\"\nprefix = \"rm\"\n\n[[rule]]\ntool = \"run_command\"\nbehavior = \"allow\"\n",
    )
    .unwrap();
    let session = rt
        .add_rule(
            RuleDraft {
                tool: "run_command".into(),
                behavior: Behavior::Allow,
                matcher: RuleMatcher::Prefix {
                    words: vec!["cargo".into(), "test".into()],
                },
                destination: RuleDestination::Session,
                description: None,
            },
            Some(&chat.id),
        )
        .await
        .unwrap();
    let state = rt.permission_state(&chat.id).await.unwrap();
    assert_eq!(state.mode, PermissionMode::Auto);
    let ids: Vec<&str> = state.rules.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, vec![session.id.as_str(), "rules.toml:1"]);
    assert_eq!(state.rule_file_problems.len(), 1);
    assert_eq!(state.rule_file_problems[0].line, 6);

    // The hand-written deny rule applies in the simulator, for this chat and without one.
    let e = rt
        .explain_permission(
            "run_command",
            json!({"content": "rm -f x"}),
            None,
            Some(&chat.id),
        )
        .await
        .unwrap();
    assert_eq!(
        (e.behavior, e.reason_code.as_str()),
        (Behavior::Deny, "rule_deny")
    );
    assert_eq!(e.matched_rules[0].rule.id, "rules.toml:1");
    let e = rt
        .explain_permission("run_command", json!({"content": "cargo test"}), None, None)
        .await
        .unwrap();
    // Without the chat its session rule does not apply.
    assert_eq!(e.reason_code, "shell_policy_ask");
    let e = rt
        .explain_permission(
            "run_command",
            json!({"content": "cargo test"}),
            None,
            Some(&chat.id),
        )
        .await
        .unwrap();
    assert_eq!(e.reason_code, "rule_allow");
}

#[tokio::test]
async fn validation_errors_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path()).await;
    let field = |e: RuntimeError| match e {
        RuntimeError::InvalidInput { field, .. } => field,
        other => panic!("{other}"),
    };
    let e = rt
        .explain_permission("nope", json!({}), None, None)
        .await
        .unwrap_err();
    assert_eq!(field(e), "tool");
    let e = rt
        .explain_permission("run_command", json!("ls"), None, None)
        .await
        .unwrap_err();
    assert_eq!(field(e), "args");
    let e = rt
        .add_rule(
            RuleDraft {
                tool: "run_command".into(),
                behavior: Behavior::Allow,
                matcher: RuleMatcher::Prefix { words: vec![] },
                destination: RuleDestination::Global,
                description: None,
            },
            None,
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("matcher.words"), "{e}");
    let e = rt
        .add_rule(
            RuleDraft {
                tool: "agent_send".into(),
                behavior: Behavior::Deny,
                matcher: RuleMatcher::Destination {
                    pattern: " ".into(),
                },
                destination: RuleDestination::Global,
                description: None,
            },
            None,
        )
        .await
        .unwrap_err();
    match &e {
        RuntimeError::InvalidInput { field, message } => {
            assert_eq!(
                (field.as_str(), message.as_str()),
                ("rule", "matcher.pattern: empty")
            );
        }
        other => panic!("{other}"),
    }
    assert!(matches!(
        rt.get_mode("no-such-chat").await,
        Err(RuntimeError::ChatNotFound(_))
    ));
}

#[tokio::test]
async fn a_stored_destination_rule_applies_to_the_agent_a_call_addresses() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path()).await;
    let chat = rt.create_chat(CreateChat::default()).await.unwrap();
    let rule = rt
        .add_rule(
            RuleDraft {
                tool: "agent_send".into(),
                behavior: Behavior::Deny,
                matcher: RuleMatcher::Destination {
                    pattern: "reviewer-*".into(),
                },
                destination: RuleDestination::Session,
                description: Some("never message the reviewers".into()),
            },
            Some(&chat.id),
        )
        .await
        .unwrap();
    // The matcher survives the store.
    let listed = rt.list_rules(Some(&chat.id)).await.unwrap();
    assert_eq!(listed, vec![rule.clone()]);
    let explain = |agent: &str| {
        let rt = rt.clone();
        let chat = chat.id.clone();
        let args = json!({"agent_id": agent, "message": "hi"});
        async move {
            rt.explain_permission("agent_send", args, None, Some(&chat))
                .await
                .unwrap()
        }
    };
    let e = explain("Reviewer-2").await;
    assert_eq!(
        (e.behavior, e.reason_code.as_str()),
        (Behavior::Deny, "rule_deny")
    );
    assert_eq!(e.destinations, vec!["Reviewer-2".to_string()]);
    assert_eq!(e.matched_rules[0].rule.id, rule.id);
    let e = explain("writer-1").await;
    assert_eq!(e.behavior, Behavior::Allow);
    assert!(e.matched_rules.is_empty());
}
