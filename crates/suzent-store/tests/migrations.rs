#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Upgrades of a database written by an earlier version: the migrations after it apply to its
//! data as the product expects.

use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use std::str::FromStr;
use suzent_store::Store;

/// Writes a database as a version that had migrations up to `last` would have, with one chat of
/// `messages` user messages.
async fn database_at(path: &std::path::Path, last: i64, messages: i64) {
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
        .unwrap()
        .create_if_missing(true)
        .foreign_keys(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .unwrap();
    let mut migrator = sqlx::migrate!("./migrations");
    migrator.migrations = migrator
        .migrations
        .iter()
        .filter(|m| m.version <= last)
        .cloned()
        .collect::<Vec<_>>()
        .into();
    migrator.run(&pool).await.unwrap();
    let at = "2026-01-05T10:00:00.000000000Z";
    sqlx::query(
        "INSERT INTO chats (id, title, workspace, model, mode, tools, created_at, updated_at)
         VALUES ('old', 'Old chat', '/tmp', NULL, 'default', NULL, ?, ?)",
    )
    .bind(at)
    .bind(at)
    .execute(&pool)
    .await
    .unwrap();
    for seq in 1..=messages {
        let body = serde_json::json!({"role": "user", "content": format!("message {seq}")});
        sqlx::query(
            "INSERT INTO messages (chat_id, seq, run_id, role, tool_call_id, body, created_at)
             VALUES ('old', ?, NULL, 'user', NULL, ?, ?)",
        )
        .bind(seq)
        .bind(body.to_string())
        .bind(at)
        .execute(&pool)
        .await
        .unwrap();
    }
    pool.close().await;
}

#[tokio::test]
async fn chats_from_before_summaries_are_not_summarized_retroactively() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("suzent.db");
    database_at(&path, 5, 3).await;

    let store = Store::open(&path).await.unwrap();
    assert_eq!(store.summarized_through("old").await.unwrap(), 3);
    let due = store
        .chats_due_for_summary(chrono::Utc::now(), 8, &[])
        .await
        .unwrap();
    assert!(due.is_empty(), "old chats are not due: {due:?}");
}

#[tokio::test]
async fn a_database_that_already_had_summaries_keeps_its_due_chats_due() {
    // Written after 0006 and 0007: a chat with new messages since then stays due.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("suzent.db");
    database_at(&path, 7, 2).await;

    let store = Store::open(&path).await.unwrap();
    assert_eq!(store.summarized_through("old").await.unwrap(), 0);
    let due = store
        .chats_due_for_summary(chrono::Utc::now(), 8, &[])
        .await
        .unwrap();
    assert_eq!(due.len(), 1);
}
