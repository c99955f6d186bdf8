#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Integration tests of the SQLite store against real database files.

use chrono::{DateTime, Duration, Utc};
use pretty_assertions::assert_eq;
use serde_json::json;
use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};
use std::path::{Path, PathBuf};
use suzent_core::{
    ApprovalAction, ApprovalActionId, Behavior, ChatMessage, DecisionSource, PermissionDecision,
    PermissionMode, Risk, Rule, RuleDestination, RuleMatcher, ToolCall,
};
use suzent_store::{
    ApprovalStatus, ChatPatch, NewChat, PendingApproval, Store, StoreError, ToolStepStatus,
};
use tempfile::TempDir;

// ---------------------------------------------------------------- helpers

async fn file_store() -> (TempDir, PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data").join("suzent.db");
    let store = Store::open(&path).await.unwrap();
    (dir, path, store)
}

/// A separate connection to the file, as another program would open it.
async fn raw(path: &Path) -> SqlitePool {
    SqlitePool::connect_with(SqliteConnectOptions::new().filename(path))
        .await
        .unwrap()
}

fn new_chat(id: &str) -> NewChat {
    NewChat {
        id: id.to_string(),
        title: format!("Chat {id}"),
        workspace: "/home/u/project".to_string(),
        model: Some("openai/gpt-4.1".to_string()),
        mode: PermissionMode::Auto,
        tools: Some(vec!["read_file".to_string(), "run_command".to_string()]),
    }
}

fn user(text: &str) -> ChatMessage {
    ChatMessage::User {
        text: text.to_string(),
        attachments: Vec::new(),
    }
}

fn assistant_calling(call_id: &str) -> ChatMessage {
    ChatMessage::Assistant {
        text: "Let me look.".to_string(),
        tool_calls: vec![ToolCall {
            id: call_id.to_string(),
            name: "read_file".to_string(),
            arguments: "{\"file_path\":\"a.txt\"}".to_string(),
        }],
    }
}

fn tool_result(call_id: &str, content: &str) -> ChatMessage {
    ChatMessage::Tool {
        tool_call_id: call_id.to_string(),
        tool_name: "read_file".to_string(),
        content: content.to_string(),
        is_error: false,
    }
}

fn ask_decision() -> PermissionDecision {
    let mut decision = PermissionDecision::new(
        Behavior::Ask,
        DecisionSource::ShellPolicy,
        suzent_core::ReasonCode::ShellPolicyAsk,
        "This command is not known to be read-only.",
        Risk::Medium,
    );
    decision.actions = vec![
        ApprovalAction {
            id: ApprovalActionId::AllowOnce,
            label: "Allow once".to_string(),
            description: "Run this command only.".to_string(),
            rule: None,
            accepts_feedback: false,
        },
        ApprovalAction {
            id: ApprovalActionId::Reject,
            label: "Reject".to_string(),
            description: "Do not run it.".to_string(),
            rule: None,
            accepts_feedback: true,
        },
    ];
    decision
}

fn approval(id: &str, chat_id: &str, created_at: DateTime<Utc>) -> PendingApproval {
    PendingApproval {
        id: id.to_string(),
        chat_id: chat_id.to_string(),
        run_id: "run-1".to_string(),
        tool_call_id: format!("call-{id}"),
        tool_name: "run_command".to_string(),
        args: json!({"command": "cargo test", "timeout": 120, "env": {"A": [1, 2.5, null]}}),
        decision: ask_decision(),
        created_at,
    }
}

fn rule(
    id: &str,
    destination: RuleDestination,
    chat_id: Option<&str>,
    created_at: DateTime<Utc>,
) -> Rule {
    Rule {
        id: id.to_string(),
        tool: "run_command".to_string(),
        behavior: Behavior::Allow,
        matcher: RuleMatcher::Prefix {
            words: vec!["git".to_string(), "status".to_string()],
        },
        destination,
        chat_id: chat_id.map(str::to_string),
        created_at,
        description: Some(format!("rule {id}")),
    }
}

fn bodies(messages: &[suzent_store::StoredMessage]) -> Vec<(i64, ChatMessage)> {
    messages
        .iter()
        .map(|m| (m.seq, m.message.clone()))
        .collect()
}

// ---------------------------------------------------------------- opening

#[tokio::test]
async fn opening_creates_the_parent_directory_and_the_database_file() {
    let (_dir, path, _store) = file_store().await;
    assert!(path.is_file(), "{} should exist", path.display());
}

#[tokio::test]
async fn a_file_store_runs_in_wal_mode() {
    let (_dir, path, _store) = file_store().await;
    let other = raw(&path).await;
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&other)
        .await
        .unwrap();
    assert_eq!(mode.to_lowercase(), "wal");
}

#[tokio::test]
async fn opening_an_existing_file_twice_applies_the_migrations_once() {
    let (_dir, path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    let again = Store::open(&path).await.unwrap();
    assert_eq!(again.get_chat("c1").await.unwrap().unwrap().id, "c1");
}

#[tokio::test]
async fn an_in_memory_store_keeps_its_data_between_calls() {
    let store = Store::open_in_memory().await.unwrap();
    store.create_chat(&new_chat("c1")).await.unwrap();
    store.append_message("c1", None, &user("hi")).await.unwrap();
    let clone = store.clone();
    assert_eq!(clone.messages("c1").await.unwrap().len(), 1);
    assert_eq!(clone.list_chats().await.unwrap().len(), 1);
}

// ---------------------------------------------------------------- chats

#[tokio::test]
async fn a_created_chat_round_trips_through_get_and_list() {
    let (_dir, _path, store) = file_store().await;
    let created = store.create_chat(&new_chat("c1")).await.unwrap();
    assert_eq!(created.id, "c1");
    assert_eq!(created.mode, PermissionMode::Auto);
    assert_eq!(
        created.tools,
        Some(vec!["read_file".to_string(), "run_command".to_string()])
    );
    assert_eq!(created.created_at, created.updated_at);
    assert_eq!(store.get_chat("c1").await.unwrap(), Some(created.clone()));
    assert_eq!(store.list_chats().await.unwrap(), vec![created]);
}

#[tokio::test]
async fn a_chat_without_model_or_tools_round_trips_with_nones() {
    let (_dir, _path, store) = file_store().await;
    let chat = NewChat {
        model: None,
        tools: None,
        mode: PermissionMode::FullAccess,
        ..new_chat("c1")
    };
    let created = store.create_chat(&chat).await.unwrap();
    let read = store.get_chat("c1").await.unwrap().unwrap();
    assert_eq!(read, created);
    assert_eq!(
        (read.model, read.tools, read.mode),
        (None, None, PermissionMode::FullAccess)
    );
}

#[tokio::test]
async fn creating_a_chat_with_an_existing_id_is_a_conflict() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    let err = store.create_chat(&new_chat("c1")).await.unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
}

#[tokio::test]
async fn getting_an_unknown_chat_gives_none() {
    let (_dir, _path, store) = file_store().await;
    assert_eq!(store.get_chat("nope").await.unwrap(), None);
}

#[tokio::test]
async fn chats_are_listed_most_recently_updated_first() {
    let (_dir, _path, store) = file_store().await;
    for id in ["a", "b", "c"] {
        store.create_chat(&new_chat(id)).await.unwrap();
    }
    let ids =
        |chats: Vec<suzent_store::ChatRecord>| chats.into_iter().map(|c| c.id).collect::<Vec<_>>();
    assert_eq!(ids(store.list_chats().await.unwrap()), ["c", "b", "a"]);
    store
        .append_message("a", None, &user("bump"))
        .await
        .unwrap();
    assert_eq!(ids(store.list_chats().await.unwrap()), ["a", "c", "b"]);
    store
        .update_chat(
            "b",
            &ChatPatch {
                title: Some("renamed".into()),
                ..ChatPatch::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(ids(store.list_chats().await.unwrap()), ["b", "a", "c"]);
}

#[tokio::test]
async fn updating_a_chat_changes_only_the_patched_fields_and_bumps_updated_at() {
    let (_dir, _path, store) = file_store().await;
    let created = store.create_chat(&new_chat("c1")).await.unwrap();

    let unchanged = store
        .update_chat("c1", &ChatPatch::default())
        .await
        .unwrap();
    assert_eq!(
        ChatRecordWithoutUpdate::from(&unchanged),
        ChatRecordWithoutUpdate::from(&created)
    );
    assert!(unchanged.updated_at > created.updated_at);

    let patch = ChatPatch {
        title: Some("New title".into()),
        model: Some(None),
        mode: Some(PermissionMode::Default),
        tools: Some(Some(vec!["grep".into()])),
    };
    let updated = store.update_chat("c1", &patch).await.unwrap();
    assert_eq!(updated.title, "New title");
    assert_eq!(updated.model, None);
    assert_eq!(updated.mode, PermissionMode::Default);
    assert_eq!(updated.tools, Some(vec!["grep".to_string()]));
    assert_eq!(updated.workspace, created.workspace);
    assert_eq!(updated.created_at, created.created_at);
    assert!(updated.updated_at > unchanged.updated_at);
    assert_eq!(store.get_chat("c1").await.unwrap(), Some(updated.clone()));

    let cleared = store
        .update_chat(
            "c1",
            &ChatPatch {
                tools: Some(None),
                ..ChatPatch::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(cleared.tools, None);
    assert_eq!(cleared.title, "New title");
    let remodeled = store
        .update_chat(
            "c1",
            &ChatPatch {
                model: Some(Some("m2".into())),
                ..ChatPatch::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(remodeled.model.as_deref(), Some("m2"));
}

#[derive(Debug, PartialEq)]
struct ChatRecordWithoutUpdate {
    id: String,
    title: String,
    workspace: String,
    model: Option<String>,
    mode: PermissionMode,
    tools: Option<Vec<String>>,
    created_at: DateTime<Utc>,
}

impl From<&suzent_store::ChatRecord> for ChatRecordWithoutUpdate {
    fn from(c: &suzent_store::ChatRecord) -> Self {
        ChatRecordWithoutUpdate {
            id: c.id.clone(),
            title: c.title.clone(),
            workspace: c.workspace.clone(),
            model: c.model.clone(),
            mode: c.mode,
            tools: c.tools.clone(),
            created_at: c.created_at,
        }
    }
}

#[tokio::test]
async fn updating_or_deleting_an_unknown_chat_is_not_found() {
    let (_dir, _path, store) = file_store().await;
    let err = store
        .update_chat("ghost", &ChatPatch::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound { what: "chat", id } if id == "ghost"),
        "{err:?}"
    );
    let err = store.delete_chat("ghost").await.unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound { what: "chat", id } if id == "ghost"),
        "{err:?}"
    );
}

#[tokio::test]
async fn deleting_a_chat_removes_its_messages_steps_approvals_and_session_rules_only() {
    let (_dir, path, store) = file_store().await;
    let now = Utc::now();
    for id in ["gone", "kept"] {
        store.create_chat(&new_chat(id)).await.unwrap();
        store
            .append_message(id, Some("r1"), &user("hi"))
            .await
            .unwrap();
        store
            .append_message(id, Some("r1"), &assistant_calling(&format!("{id}-call")))
            .await
            .unwrap();
        assert!(
            store
                .begin_tool_step(id, &format!("{id}-call"), "read_file", "{}")
                .await
                .unwrap()
        );
        store
            .finish_tool_step(
                id,
                Some("r1"),
                &format!("{id}-call"),
                &tool_result(&format!("{id}-call"), "ok"),
            )
            .await
            .unwrap();
        assert!(
            store
                .begin_tool_step(id, &format!("{id}-running"), "read_file", "{}")
                .await
                .unwrap()
        );
        store
            .insert_pending_approval(&approval(&format!("{id}-appr"), id, now))
            .await
            .unwrap();
        store
            .add_rule(&rule(
                &format!("{id}-rule"),
                RuleDestination::Session,
                Some(id),
                now,
            ))
            .await
            .unwrap();
    }
    store
        .add_rule(&rule("global", RuleDestination::Global, None, now))
        .await
        .unwrap();

    store.delete_chat("gone").await.unwrap();

    assert_eq!(store.get_chat("gone").await.unwrap(), None);
    assert!(store.messages("gone").await.unwrap().is_empty());
    assert_eq!(store.tool_step_status("gone-call").await.unwrap(), None);
    assert_eq!(store.tool_step_status("gone-running").await.unwrap(), None);
    assert!(!store.has_tool_result("gone", "gone-call").await.unwrap());
    assert_eq!(store.get_approval("gone-appr").await.unwrap(), None);
    let rule_ids: Vec<String> = store
        .list_rules(None)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(rule_ids, ["kept-rule", "global"]);

    assert_eq!(store.messages("kept").await.unwrap().len(), 3);
    assert_eq!(
        store.tool_step_status("kept-call").await.unwrap(),
        Some(ToolStepStatus::Done)
    );
    assert!(store.get_approval("kept-appr").await.unwrap().is_some());

    // No orphan rows anywhere.
    let other = raw(&path).await;
    for table in ["messages", "tool_steps", "approvals", "rules"] {
        let orphans: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM {table} WHERE chat_id = 'gone'"
        ))
        .fetch_one(&other)
        .await
        .unwrap();
        assert_eq!(orphans, 0, "orphans in {table}");
    }
}

// ---------------------------------------------------------------- transcript

#[tokio::test]
async fn messages_get_seq_1_2_3_per_chat_and_come_back_in_order() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("a")).await.unwrap();
    store.create_chat(&new_chat("b")).await.unwrap();
    assert_eq!(
        store
            .append_message("a", Some("r1"), &user("a1"))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store.append_message("b", None, &user("b1")).await.unwrap(),
        1
    );
    assert_eq!(
        store
            .append_message("a", Some("r1"), &assistant_calling("call-1"))
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        store
            .append_message("a", Some("r1"), &tool_result("call-1", "contents"))
            .await
            .unwrap(),
        3
    );
    assert_eq!(
        store.append_message("b", None, &user("b2")).await.unwrap(),
        2
    );

    let a = store.messages("a").await.unwrap();
    assert_eq!(
        bodies(&a),
        vec![
            (1, user("a1")),
            (2, assistant_calling("call-1")),
            (3, tool_result("call-1", "contents"))
        ]
    );
    assert!(a.iter().all(|m| m.run_id.as_deref() == Some("r1")));
    assert!(a.windows(2).all(|w| w[0].created_at < w[1].created_at));
    let b = store.messages("b").await.unwrap();
    assert_eq!(bodies(&b), vec![(1, user("b1")), (2, user("b2"))]);
    assert!(b.iter().all(|m| m.run_id.is_none()));
    assert!(store.messages("unknown").await.unwrap().is_empty());
}

#[tokio::test]
async fn appending_bumps_the_chat_updated_at() {
    let (_dir, _path, store) = file_store().await;
    let created = store.create_chat(&new_chat("c1")).await.unwrap();
    store.append_message("c1", None, &user("hi")).await.unwrap();
    let after = store.get_chat("c1").await.unwrap().unwrap();
    assert!(after.updated_at > created.updated_at);
    assert_eq!(after.created_at, created.created_at);
}

#[tokio::test]
async fn appending_to_an_unknown_chat_is_not_found_and_stores_nothing() {
    let (_dir, _path, store) = file_store().await;
    let err = store
        .append_message("ghost", None, &user("hi"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound { what: "chat", id } if id == "ghost"),
        "{err:?}"
    );
    assert!(store.messages("ghost").await.unwrap().is_empty());
}

// ---------------------------------------------------------------- tool steps

#[tokio::test]
async fn a_tool_call_id_is_claimed_once_across_chats_and_freed_with_its_chat() {
    let (_dir, _path, store) = file_store().await;
    for id in ["a", "b"] {
        store.create_chat(&new_chat(id)).await.unwrap();
    }
    let claims = vec![
        store.claim_tool_call_id("a", "call_0").await.unwrap(),
        store.claim_tool_call_id("a", "call_0").await.unwrap(),
        store.claim_tool_call_id("b", "call_0").await.unwrap(),
        store.claim_tool_call_id("b", "").await.unwrap(),
        store.claim_tool_call_id("b", "call_1").await.unwrap(),
    ];
    assert_eq!(claims, vec![true, false, false, false, true]);
    store.delete_chat("a").await.unwrap();
    assert!(store.claim_tool_call_id("b", "call_0").await.unwrap());
    let err = store
        .claim_tool_call_id("ghost", "call_9")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound { what: "chat", id } if id == "ghost"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_model_step_is_stored_with_its_claims_or_not_at_all() {
    let (_dir, _path, store) = file_store().await;
    for id in ["a", "b"] {
        store.create_chat(&new_chat(id)).await.unwrap();
    }
    let two = |x: &str, y: &str| ChatMessage::Assistant {
        text: String::new(),
        tool_calls: [x, y]
            .iter()
            .map(|id| ToolCall {
                id: id.to_string(),
                name: "read_file".to_string(),
                arguments: "{}".to_string(),
            })
            .collect(),
    };
    // Free ids: stored, and claimed (a second claim of either is refused).
    let seq = store
        .append_claiming("a", Some("r1"), &two("call_0", "call_1"))
        .await
        .unwrap();
    assert_eq!(seq, Some(1));
    assert!(!store.claim_tool_call_id("b", "call_0").await.unwrap());
    assert!(!store.claim_tool_call_id("b", "call_1").await.unwrap());
    // One id taken (by another chat's step): nothing stored, the free id not claimed either.
    assert_eq!(
        store
            .append_claiming("b", Some("r2"), &two("call_2", "call_0"))
            .await
            .unwrap(),
        None
    );
    assert!(store.messages("b").await.unwrap().is_empty());
    assert!(store.claim_tool_call_id("b", "call_2").await.unwrap());
    // Two calls of one step with one id: refused the same way.
    assert_eq!(
        store
            .append_claiming("b", None, &two("call_3", "call_3"))
            .await
            .unwrap(),
        None
    );
    assert!(store.messages("b").await.unwrap().is_empty());
    // A step without calls is a plain message; the chat's updated_at moves with each.
    let text_only = ChatMessage::Assistant {
        text: "done".to_string(),
        tool_calls: Vec::new(),
    };
    assert_eq!(
        store.append_claiming("a", None, &text_only).await.unwrap(),
        Some(2)
    );
    // Bad input and a missing chat are errors by name.
    let err = store
        .append_claiming("a", None, &two("", "call_9"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
    let err = store
        .append_claiming("a", None, &ChatMessage::user("hi"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
    let err = store
        .append_claiming("ghost", None, &two("call_7", "call_8"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound { what: "chat", id } if id == "ghost"),
        "{err:?}"
    );
    assert!(store.claim_tool_call_id("a", "call_7").await.unwrap());
    let kept = store.messages("a").await.unwrap();
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[0].message, two("call_0", "call_1"));
    assert_eq!(kept[0].run_id.as_deref(), Some("r1"));
}

#[tokio::test]
async fn the_taken_ids_of_a_model_step_are_told_apart_from_the_free_ones() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("a")).await.unwrap();
    assert!(store.taken_tool_call_ids(&[]).await.unwrap().is_empty());
    assert!(store.claim_tool_call_id("a", "call_0").await.unwrap());
    assert!(store.claim_tool_call_id("a", "call_2").await.unwrap());
    let taken = store
        .taken_tool_call_ids(&["call_0", "call_1", "call_2", "call_0"])
        .await
        .unwrap();
    let mut taken: Vec<String> = taken.into_iter().collect();
    taken.sort();
    assert_eq!(taken, ["call_0", "call_2"]);
    // Freed with their chat.
    store.delete_chat("a").await.unwrap();
    assert!(
        store
            .taken_tool_call_ids(&["call_0", "call_2"])
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn ids_of_a_transcript_stored_before_claims_existed_count_as_claimed() {
    let (_dir, path, store) = file_store().await;
    store.create_chat(&new_chat("old")).await.unwrap();
    store
        .append_message("old", Some("r1"), &assistant_calling("call_old"))
        .await
        .unwrap();
    // As a database migrated from before 0013 would be: the claim table emptied, then the
    // backfill statements of 0013 run again.
    let pool = raw(&path).await;
    sqlx::query("DELETE FROM tool_call_ids")
        .execute(&pool)
        .await
        .unwrap();
    let backfill = include_str!("../migrations/0013_tool_call_ids.sql");
    let inserts = &backfill[backfill.find("INSERT OR IGNORE").unwrap()..];
    sqlx::raw_sql(inserts).execute(&pool).await.unwrap();
    assert!(!store.claim_tool_call_id("old", "call_old").await.unwrap());
}

#[tokio::test]
async fn a_tool_step_begins_once_and_is_never_begun_again() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    assert_eq!(store.tool_step_status("call-1").await.unwrap(), None);
    assert!(
        store
            .begin_tool_step("c1", "call-1", "read_file", "{\"file_path\":\"a\"}")
            .await
            .unwrap()
    );
    assert_eq!(
        store.tool_step_status("call-1").await.unwrap(),
        Some(ToolStepStatus::Running)
    );
    assert!(
        !store
            .begin_tool_step("c1", "call-1", "read_file", "{}")
            .await
            .unwrap()
    );
    assert_eq!(
        store.tool_step_status("call-1").await.unwrap(),
        Some(ToolStepStatus::Running)
    );

    store
        .finish_tool_step("c1", Some("r1"), "call-1", &tool_result("call-1", "done"))
        .await
        .unwrap();
    assert_eq!(
        store.tool_step_status("call-1").await.unwrap(),
        Some(ToolStepStatus::Done)
    );
    assert!(
        !store
            .begin_tool_step("c1", "call-1", "read_file", "{}")
            .await
            .unwrap()
    );
    assert_eq!(
        store.tool_step_status("call-1").await.unwrap(),
        Some(ToolStepStatus::Done)
    );
}

#[tokio::test]
async fn beginning_a_tool_step_in_an_unknown_chat_is_not_found() {
    let (_dir, _path, store) = file_store().await;
    let err = store
        .begin_tool_step("ghost", "call-1", "read_file", "{}")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound { what: "chat", .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn finishing_a_tool_step_appends_the_result_and_marks_it_done() {
    let (_dir, _path, store) = file_store().await;
    let created = store.create_chat(&new_chat("c1")).await.unwrap();
    store
        .append_message("c1", Some("r1"), &assistant_calling("call-1"))
        .await
        .unwrap();
    store
        .begin_tool_step("c1", "call-1", "read_file", "{}")
        .await
        .unwrap();
    assert!(!store.has_tool_result("c1", "call-1").await.unwrap());

    let seq = store
        .finish_tool_step("c1", Some("r1"), "call-1", &tool_result("call-1", "hello"))
        .await
        .unwrap();
    assert_eq!(seq, 2);
    assert_eq!(
        store.tool_step_status("call-1").await.unwrap(),
        Some(ToolStepStatus::Done)
    );
    assert!(store.has_tool_result("c1", "call-1").await.unwrap());
    assert!(!store.has_tool_result("other-chat", "call-1").await.unwrap());
    let messages = store.messages("c1").await.unwrap();
    assert_eq!(messages[1].message, tool_result("call-1", "hello"));
    assert_eq!(messages[1].run_id.as_deref(), Some("r1"));
    assert!(store.get_chat("c1").await.unwrap().unwrap().updated_at > created.updated_at);
}

#[tokio::test]
async fn a_tool_result_appended_as_a_message_marks_its_step_done_too() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    store
        .append_message("c1", Some("r1"), &assistant_calling("call-1"))
        .await
        .unwrap();
    store
        .begin_tool_step("c1", "call-1", "read_file", "{}")
        .await
        .unwrap();
    assert_eq!(
        store.tool_step_status("call-1").await.unwrap(),
        Some(ToolStepStatus::Running)
    );
    store
        .append_message("c1", Some("r1"), &tool_result("call-1", "hello"))
        .await
        .unwrap();
    assert_eq!(
        store.tool_step_status("call-1").await.unwrap(),
        Some(ToolStepStatus::Done)
    );
    // A user message touches no step.
    store
        .append_message("c1", None, &ChatMessage::user("thanks"))
        .await
        .unwrap();
    assert_eq!(store.tool_step_status("thanks").await.unwrap(), None);
}

#[tokio::test]
async fn finishing_a_step_that_never_began_records_it_as_done() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    let refused = ChatMessage::Tool {
        tool_call_id: "call-refused".into(),
        tool_name: "run_command".into(),
        content: "Denied by rule".into(),
        is_error: true,
    };
    assert_eq!(
        store
            .finish_tool_step("c1", None, "call-refused", &refused)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store.tool_step_status("call-refused").await.unwrap(),
        Some(ToolStepStatus::Done)
    );
    assert!(
        !store
            .begin_tool_step("c1", "call-refused", "run_command", "{}")
            .await
            .unwrap()
    );
    assert_eq!(
        bodies(&store.messages("c1").await.unwrap()),
        vec![(1, refused)]
    );
}

#[tokio::test]
async fn a_second_result_for_one_tool_call_is_a_conflict_and_the_transcript_is_unchanged() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    store
        .append_message("c1", Some("r1"), &assistant_calling("call-1"))
        .await
        .unwrap();
    store
        .begin_tool_step("c1", "call-1", "read_file", "{}")
        .await
        .unwrap();
    store
        .finish_tool_step("c1", Some("r1"), "call-1", &tool_result("call-1", "first"))
        .await
        .unwrap();
    let before = store.messages("c1").await.unwrap();
    let chat_before = store.get_chat("c1").await.unwrap().unwrap();

    let err = store
        .finish_tool_step("c1", Some("r2"), "call-1", &tool_result("call-1", "second"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::Conflict { message } if message.contains("call-1")),
        "{err:?}"
    );
    let err = store
        .append_message("c1", Some("r2"), &tool_result("call-1", "third"))
        .await
        .unwrap_err();
    assert!(matches!(&err, StoreError::Conflict { .. }), "{err:?}");

    assert_eq!(store.messages("c1").await.unwrap(), before);
    assert_eq!(store.get_chat("c1").await.unwrap().unwrap(), chat_before);
    assert_eq!(
        store.tool_step_status("call-1").await.unwrap(),
        Some(ToolStepStatus::Done)
    );
    // The next message still gets the next seq.
    assert_eq!(
        store
            .append_message("c1", None, &user("next"))
            .await
            .unwrap(),
        3
    );
}

#[tokio::test]
async fn finishing_with_a_result_for_another_call_or_a_non_tool_message_is_refused() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    let err = store
        .finish_tool_step("c1", None, "call-1", &tool_result("call-2", "x"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
    let err = store
        .finish_tool_step("c1", None, "call-1", &user("x"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
    assert!(store.messages("c1").await.unwrap().is_empty());
    assert_eq!(store.tool_step_status("call-1").await.unwrap(), None);
}

#[tokio::test]
async fn finishing_a_step_in_an_unknown_chat_is_not_found_and_leaves_the_step_running() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    store
        .begin_tool_step("c1", "call-1", "read_file", "{}")
        .await
        .unwrap();
    let err = store
        .finish_tool_step("ghost", None, "call-1", &tool_result("call-1", "x"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound { what: "chat", .. }),
        "{err:?}"
    );
    assert_eq!(
        store.tool_step_status("call-1").await.unwrap(),
        Some(ToolStepStatus::Running)
    );
}

// ---------------------------------------------------------------- approvals

#[tokio::test]
async fn a_pending_approval_round_trips_and_storing_it_again_is_a_no_op() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    let pending = approval("a1", "c1", Utc::now());
    store.insert_pending_approval(&pending).await.unwrap();
    store.insert_pending_approval(&pending).await.unwrap();

    assert_eq!(
        store.pending_approvals(None).await.unwrap(),
        vec![pending.clone()]
    );
    let record = store.get_approval("a1").await.unwrap().unwrap();
    assert_eq!(record.approval, pending);
    assert_eq!(record.status, ApprovalStatus::Pending);
    assert_eq!(
        (record.action, record.feedback, record.resolved_at),
        (None, None, None)
    );
    assert_eq!(store.get_approval("nope").await.unwrap(), None);
}

#[tokio::test]
async fn storing_different_content_under_an_existing_approval_id_is_a_conflict() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    let pending = approval("a1", "c1", Utc::now());
    store.insert_pending_approval(&pending).await.unwrap();
    let changed = PendingApproval {
        args: json!({"command": "rm -rf /"}),
        ..pending.clone()
    };
    let err = store.insert_pending_approval(&changed).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Conflict { message } if message.contains("a1")),
        "{err:?}"
    );
    assert_eq!(
        store.get_approval("a1").await.unwrap().unwrap().approval,
        pending
    );
}

#[tokio::test]
async fn an_approval_for_an_unknown_chat_is_not_found() {
    let (_dir, _path, store) = file_store().await;
    let err = store
        .insert_pending_approval(&approval("a1", "ghost", Utc::now()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound { what: "chat", id } if id == "ghost"),
        "{err:?}"
    );
}

#[tokio::test]
async fn pending_approvals_are_filtered_by_chat_and_come_oldest_first() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("a")).await.unwrap();
    store.create_chat(&new_chat("b")).await.unwrap();
    let t0 = Utc::now();
    // Inserted out of order on purpose.
    let a2 = approval("a2", "a", t0 + Duration::seconds(2));
    let b1 = approval("b1", "b", t0 + Duration::seconds(1));
    let a0 = approval("a0", "a", t0);
    for p in [&a2, &b1, &a0] {
        store.insert_pending_approval(p).await.unwrap();
    }
    assert_eq!(
        store.pending_approvals(None).await.unwrap(),
        vec![a0.clone(), b1.clone(), a2.clone()]
    );
    assert_eq!(
        store.pending_approvals(Some("a")).await.unwrap(),
        vec![a0.clone(), a2.clone()]
    );
    assert_eq!(
        store.pending_approvals(Some("b")).await.unwrap(),
        vec![b1.clone()]
    );
    assert!(
        store
            .pending_approvals(Some("none"))
            .await
            .unwrap()
            .is_empty()
    );

    assert!(
        store
            .resolve_approval("a0", ApprovalActionId::AllowOnce, None)
            .await
            .unwrap()
    );
    assert_eq!(store.pending_approvals(Some("a")).await.unwrap(), vec![a2]);
}

#[tokio::test]
async fn resolving_an_approval_twice_returns_false_the_second_time_and_keeps_the_first_answer() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    store
        .insert_pending_approval(&approval("a1", "c1", Utc::now()))
        .await
        .unwrap();

    assert!(
        store
            .resolve_approval("a1", ApprovalActionId::Reject, Some("use cargo check"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .resolve_approval("a1", ApprovalActionId::AllowOnce, None)
            .await
            .unwrap()
    );

    let record = store.get_approval("a1").await.unwrap().unwrap();
    assert_eq!(record.status, ApprovalStatus::Resolved);
    assert_eq!(record.action, Some(ApprovalActionId::Reject));
    assert_eq!(record.feedback.as_deref(), Some("use cargo check"));
    assert!(
        record
            .resolved_at
            .is_some_and(|t| t >= record.approval.created_at)
    );
    assert!(store.pending_approvals(None).await.unwrap().is_empty());
    // Storing the same request again (a replay after a crash) does not reopen it.
    store
        .insert_pending_approval(&record.approval)
        .await
        .unwrap();
    assert_eq!(
        store.get_approval("a1").await.unwrap().unwrap().status,
        ApprovalStatus::Resolved
    );
}

#[tokio::test]
async fn resolving_an_unknown_approval_returns_false() {
    let (_dir, _path, store) = file_store().await;
    assert!(
        !store
            .resolve_approval("nope", ApprovalActionId::AllowOnce, None)
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn concurrent_answers_to_one_approval_resolve_it_exactly_once() {
    let (_dir, path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    store
        .insert_pending_approval(&approval("a1", "c1", Utc::now()))
        .await
        .unwrap();
    let other = Store::open(&path).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..8 {
        let s = if i % 2 == 0 {
            store.clone()
        } else {
            other.clone()
        };
        tasks.push(tokio::spawn(async move {
            s.resolve_approval("a1", ApprovalActionId::AllowOnce, None)
                .await
                .unwrap()
        }));
    }
    let mut wins = 0;
    for t in tasks {
        wins += usize::from(t.await.unwrap());
    }
    assert_eq!(wins, 1);
}

// ---------------------------------------------------------------- rules

#[tokio::test]
async fn rules_round_trip_and_a_chat_sees_global_rules_plus_its_own_session_rules() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("a")).await.unwrap();
    store.create_chat(&new_chat("b")).await.unwrap();
    let t0 = Utc::now();
    let session_b = rule(
        "s-b",
        RuleDestination::Session,
        Some("b"),
        t0 + Duration::seconds(3),
    );
    let global = Rule {
        tool: "*".into(),
        behavior: Behavior::Deny,
        matcher: RuleMatcher::Path {
            glob: "~/.ssh/**".into(),
        },
        description: None,
        ..rule(
            "g",
            RuleDestination::Global,
            None,
            t0 + Duration::seconds(1),
        )
    };
    let session_a = Rule {
        matcher: RuleMatcher::Exact {
            input: json!({"file_path": "a.txt"}),
        },
        behavior: Behavior::Ask,
        ..rule(
            "s-a",
            RuleDestination::Session,
            Some("a"),
            t0 + Duration::seconds(2),
        )
    };
    let all = Rule {
        matcher: RuleMatcher::All,
        ..rule("g-all", RuleDestination::Global, None, t0)
    };
    for r in [&session_b, &global, &session_a, &all] {
        store.add_rule(r).await.unwrap();
    }
    assert_eq!(
        store.list_rules(None).await.unwrap(),
        vec![
            all.clone(),
            global.clone(),
            session_a.clone(),
            session_b.clone()
        ]
    );
    assert_eq!(
        store.list_rules(Some("a")).await.unwrap(),
        vec![all.clone(), global.clone(), session_a]
    );
    assert_eq!(
        store.list_rules(Some("b")).await.unwrap(),
        vec![all.clone(), global.clone(), session_b]
    );
    assert_eq!(
        store.list_rules(Some("other")).await.unwrap(),
        vec![all, global]
    );
}

#[tokio::test]
async fn deleting_a_rule_reports_whether_it_existed() {
    let (_dir, _path, store) = file_store().await;
    store
        .add_rule(&rule("g", RuleDestination::Global, None, Utc::now()))
        .await
        .unwrap();
    assert!(store.delete_rule("g").await.unwrap());
    assert!(!store.delete_rule("g").await.unwrap());
    assert!(store.list_rules(None).await.unwrap().is_empty());
}

#[tokio::test]
async fn inconsistent_or_duplicate_rules_are_refused() {
    let (_dir, _path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    let now = Utc::now();
    let err = store
        .add_rule(&rule("s", RuleDestination::Session, None, now))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
    let err = store
        .add_rule(&rule("g", RuleDestination::Global, Some("c1"), now))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
    let err = store
        .add_rule(&rule("s", RuleDestination::Session, Some("ghost"), now))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound { what: "chat", id } if id == "ghost"),
        "{err:?}"
    );
    store
        .add_rule(&rule("g", RuleDestination::Global, None, now))
        .await
        .unwrap();
    let err = store
        .add_rule(&rule("g", RuleDestination::Global, None, now))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
    assert_eq!(store.list_rules(None).await.unwrap().len(), 1);
}

// ---------------------------------------------------------------- settings

#[tokio::test]
async fn settings_round_trip_and_a_second_set_replaces_the_value() {
    let (_dir, _path, store) = file_store().await;
    assert_eq!(store.get_setting("theme").await.unwrap(), None);
    store.set_setting("theme", &json!("dark")).await.unwrap();
    store
        .set_setting(
            "limits",
            &json!({"maxSteps": 40, "tools": ["a", "b"], "ratio": 0.5}),
        )
        .await
        .unwrap();
    assert_eq!(
        store.get_setting("theme").await.unwrap(),
        Some(json!("dark"))
    );
    store
        .set_setting("theme", &json!({"name": "light"}))
        .await
        .unwrap();
    assert_eq!(
        store.get_setting("theme").await.unwrap(),
        Some(json!({"name": "light"}))
    );
    assert_eq!(
        store.get_setting("limits").await.unwrap(),
        Some(json!({"maxSteps": 40, "tools": ["a", "b"], "ratio": 0.5}))
    );
    store.set_setting("nothing", &json!(null)).await.unwrap();
    assert_eq!(
        store.get_setting("nothing").await.unwrap(),
        Some(json!(null))
    );
}

// ---------------------------------------------------------------- durability and sharing

#[tokio::test]
async fn everything_survives_dropping_and_reopening_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("suzent.db");
    let now = Utc::now();
    let (chat, messages, pending, resolved, rules) = {
        let store = Store::open(&path).await.unwrap();
        store.create_chat(&new_chat("c1")).await.unwrap();
        store
            .update_chat(
                "c1",
                &ChatPatch {
                    title: Some("kept".into()),
                    ..ChatPatch::default()
                },
            )
            .await
            .unwrap();
        store
            .append_message("c1", Some("r1"), &user("hi"))
            .await
            .unwrap();
        store
            .append_message("c1", Some("r1"), &assistant_calling("call-1"))
            .await
            .unwrap();
        store
            .begin_tool_step("c1", "call-1", "read_file", "{}")
            .await
            .unwrap();
        store
            .finish_tool_step("c1", Some("r1"), "call-1", &tool_result("call-1", "ok"))
            .await
            .unwrap();
        store
            .begin_tool_step("c1", "call-2", "read_file", "{}")
            .await
            .unwrap();
        store
            .insert_pending_approval(&approval("p1", "c1", now))
            .await
            .unwrap();
        store
            .insert_pending_approval(&approval("p2", "c1", now + Duration::seconds(1)))
            .await
            .unwrap();
        store
            .resolve_approval("p2", ApprovalActionId::AllowSession, Some("fine"))
            .await
            .unwrap();
        store
            .add_rule(&rule("s1", RuleDestination::Session, Some("c1"), now))
            .await
            .unwrap();
        store
            .add_rule(&rule("g1", RuleDestination::Global, None, now))
            .await
            .unwrap();
        store.set_setting("k", &json!({"v": 1})).await.unwrap();
        let chat = store.get_chat("c1").await.unwrap().unwrap();
        assert_eq!(chat.title, "kept");
        (
            chat,
            store.messages("c1").await.unwrap(),
            store.pending_approvals(None).await.unwrap(),
            store.get_approval("p2").await.unwrap().unwrap(),
            store.list_rules(None).await.unwrap(),
        )
        // `store` is dropped here without `close`.
    };

    let store = Store::open(&path).await.unwrap();
    assert_eq!(store.get_chat("c1").await.unwrap(), Some(chat));
    assert_eq!(store.messages("c1").await.unwrap(), messages);
    assert_eq!(messages.len(), 3);
    assert_eq!(
        store.tool_step_status("call-1").await.unwrap(),
        Some(ToolStepStatus::Done)
    );
    assert_eq!(
        store.tool_step_status("call-2").await.unwrap(),
        Some(ToolStepStatus::Running)
    );
    assert!(
        !store
            .begin_tool_step("c1", "call-2", "read_file", "{}")
            .await
            .unwrap()
    );
    assert!(store.has_tool_result("c1", "call-1").await.unwrap());
    assert_eq!(store.pending_approvals(None).await.unwrap(), pending);
    assert_eq!(pending.len(), 1);
    assert_eq!(store.get_approval("p2").await.unwrap(), Some(resolved));
    assert_eq!(store.list_rules(None).await.unwrap(), rules);
    assert_eq!(store.get_setting("k").await.unwrap(), Some(json!({"v": 1})));
    // Seq numbering continues after the reopen.
    assert_eq!(
        store
            .append_message("c1", None, &user("again"))
            .await
            .unwrap(),
        4
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_on_one_file_see_each_others_writes() {
    let (_dir, path, first) = file_store().await;
    let second = Store::open(&path).await.unwrap();

    first.create_chat(&new_chat("c1")).await.unwrap();
    assert_eq!(second.get_chat("c1").await.unwrap().unwrap().id, "c1");
    second
        .append_message("c1", None, &user("from second"))
        .await
        .unwrap();
    assert_eq!(
        bodies(&first.messages("c1").await.unwrap()),
        vec![(1, user("from second"))]
    );

    assert!(
        first
            .begin_tool_step("c1", "call-1", "read_file", "{}")
            .await
            .unwrap()
    );
    assert!(
        !second
            .begin_tool_step("c1", "call-1", "read_file", "{}")
            .await
            .unwrap()
    );
    second
        .finish_tool_step("c1", None, "call-1", &tool_result("call-1", "x"))
        .await
        .unwrap();
    let err = first
        .finish_tool_step("c1", None, "call-1", &tool_result("call-1", "y"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");

    second.set_setting("k", &json!(1)).await.unwrap();
    assert_eq!(first.get_setting("k").await.unwrap(), Some(json!(1)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_appends_from_two_stores_get_distinct_consecutive_seqs() {
    let (_dir, path, first) = file_store().await;
    let second = Store::open(&path).await.unwrap();
    first.create_chat(&new_chat("c1")).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let s = if i % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        tasks.push(tokio::spawn(async move {
            s.append_message("c1", None, &user(&format!("m{i}")))
                .await
                .unwrap()
        }));
    }
    let mut seqs = Vec::new();
    for t in tasks {
        seqs.push(t.await.unwrap());
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=40).collect::<Vec<i64>>());
    let stored = first.messages("c1").await.unwrap();
    assert_eq!(
        stored.iter().map(|m| m.seq).collect::<Vec<_>>(),
        (1..=40).collect::<Vec<i64>>()
    );
}

// ---------------------------------------------------------------- corruption

#[tokio::test]
async fn a_corrupted_message_body_is_reported_as_corrupt_not_a_panic() {
    let (_dir, path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    store
        .append_message("c1", None, &user("fine"))
        .await
        .unwrap();
    store
        .append_message("c1", None, &user("to be broken"))
        .await
        .unwrap();
    let other = raw(&path).await;
    sqlx::query(
        "UPDATE messages SET body = '{\"role\": \"user\", \"te' WHERE chat_id = 'c1' AND seq = 2",
    )
    .execute(&other)
    .await
    .unwrap();
    let err = store.messages("c1").await.unwrap_err();
    match &err {
        StoreError::Corrupt { what, .. } => {
            assert!(
                what.contains("messages") && what.contains("seq 2") && what.contains("c1"),
                "{what}"
            );
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(err.to_string().contains("corrupt"), "{err}");
}

#[tokio::test]
async fn bad_json_or_names_in_any_table_are_corrupt_errors_naming_the_row() {
    let (_dir, path, store) = file_store().await;
    store.create_chat(&new_chat("c1")).await.unwrap();
    store
        .insert_pending_approval(&approval("a1", "c1", Utc::now()))
        .await
        .unwrap();
    store
        .add_rule(&rule("r1", RuleDestination::Global, None, Utc::now()))
        .await
        .unwrap();
    store.set_setting("s1", &json!(1)).await.unwrap();
    let other = raw(&path).await;
    for sql in [
        "UPDATE chats SET tools = '[1, 2' WHERE id = 'c1'",
        "UPDATE approvals SET decision = '{}' WHERE id = 'a1'",
        "UPDATE rules SET matcher = '{\"kind\": \"nope\"}' WHERE id = 'r1'",
        "UPDATE settings SET value = 'not json' WHERE key = 's1'",
    ] {
        sqlx::query(sql).execute(&other).await.unwrap();
    }
    let corrupt = |err: StoreError, table: &str, id: &str| match err {
        StoreError::Corrupt { what, .. } => {
            assert!(what.contains(table) && what.contains(id), "{what}")
        }
        other => panic!("expected Corrupt for {table}, got {other:?}"),
    };
    corrupt(store.get_chat("c1").await.unwrap_err(), "chats", "c1");
    corrupt(store.list_chats().await.unwrap_err(), "chats", "c1");
    corrupt(
        store.get_approval("a1").await.unwrap_err(),
        "approvals",
        "a1",
    );
    corrupt(
        store.pending_approvals(None).await.unwrap_err(),
        "approvals",
        "a1",
    );
    corrupt(store.list_rules(None).await.unwrap_err(), "rules", "r1");
    corrupt(store.get_setting("s1").await.unwrap_err(), "settings", "s1");
}

#[tokio::test]
async fn timestamps_are_stored_as_rfc3339_text() {
    let (_dir, path, store) = file_store().await;
    let created = store.create_chat(&new_chat("c1")).await.unwrap();
    let other = raw(&path).await;
    let row = sqlx::query("SELECT created_at, typeof(created_at) AS t FROM chats WHERE id = 'c1'")
        .fetch_one(&other)
        .await
        .unwrap();
    let text: String = row.get("created_at");
    let kind: String = row.get("t");
    assert_eq!(kind, "text");
    assert_eq!(
        DateTime::parse_from_rfc3339(&text)
            .unwrap()
            .with_timezone(&Utc),
        created.created_at
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_opening_a_new_file_at_once_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fresh.db");
    let (a, b) = tokio::join!(Store::open(&path), Store::open(&path));
    let (a, b) = (a.unwrap(), b.unwrap());
    a.create_chat(&new_chat("c1")).await.unwrap();
    assert!(b.get_chat("c1").await.unwrap().is_some());
}
