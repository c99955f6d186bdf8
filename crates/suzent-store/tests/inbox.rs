#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The durable inbox against a real database file: idempotent ids, leases, one message in
//! flight per target, backoff, and delivery records that make redelivery harmless.

use pretty_assertions::assert_eq;
use std::time::Duration;
use suzent_core::{ChatMessage, PermissionMode};
use suzent_store::{InboxStatus, NewChat, NewInboxMessage, Store, StoreError, backoff};
use tempfile::TempDir;

async fn store_with_chats(ids: &[&str]) -> (TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("suzent.db")).await.unwrap();
    for id in ids {
        store
            .create_chat(&NewChat {
                id: id.to_string(),
                title: id.to_string(),
                workspace: "/w".into(),
                model: None,
                mode: PermissionMode::Default,
                tools: None,
            })
            .await
            .unwrap();
    }
    (dir, store)
}

fn msg(id: &str, target: &str, text: &str) -> NewInboxMessage {
    NewInboxMessage {
        id: id.into(),
        target: target.into(),
        sender: "tester".into(),
        kind: "agent_message".into(),
        text: text.into(),
    }
}

const LEASE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn the_same_id_and_payload_is_the_existing_message_and_other_payload_is_an_error() {
    let (_d, store) = store_with_chats(&["a"]).await;
    let first = store.enqueue_inbox(&msg("m1", "a", "hello")).await.unwrap();
    let again = store.enqueue_inbox(&msg("m1", "a", "hello")).await.unwrap();
    assert_eq!(first, again);
    assert_eq!(store.list_inbox(Some("a")).await.unwrap().len(), 1);
    let err = store
        .enqueue_inbox(&msg("m1", "a", "something else"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    let err = store
        .enqueue_inbox(&msg("m2", "nope", "x"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
}

#[tokio::test]
async fn only_one_message_per_target_is_in_flight() {
    let (_d, store) = store_with_chats(&["a", "b"]).await;
    store.enqueue_inbox(&msg("a1", "a", "1")).await.unwrap();
    store.enqueue_inbox(&msg("a2", "a", "2")).await.unwrap();
    store.enqueue_inbox(&msg("b1", "b", "3")).await.unwrap();
    let first = store
        .claim_inbox("d1", LEASE, None, &[])
        .await
        .unwrap()
        .unwrap();
    assert_eq!((first.id.as_str(), first.attempts), ("a1", 1));
    // a2 waits for a1; b1 is free.
    let second = store
        .claim_inbox("d2", LEASE, None, &[])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.id, "b1");
    assert_eq!(
        store.claim_inbox("d2", LEASE, None, &[]).await.unwrap(),
        None
    );
    assert!(store.complete_inbox("a1", "d1").await.unwrap());
    let third = store
        .claim_inbox("d2", LEASE, None, &[])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(third.id, "a2");
    // Busy targets are skipped on request.
    store.enqueue_inbox(&msg("b2", "b", "4")).await.unwrap();
    assert!(store.complete_inbox("b1", "d2").await.unwrap());
    assert_eq!(
        store
            .claim_inbox("d3", LEASE, None, &["b".to_string()])
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn an_expired_lease_is_claimed_again_and_a_stale_owner_cannot_complete() {
    let (_d, store) = store_with_chats(&["a"]).await;
    store.enqueue_inbox(&msg("m", "a", "x")).await.unwrap();
    let short = Duration::from_millis(50);
    store
        .claim_inbox("dead", short, None, &[])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.claim_inbox("live", LEASE, None, &[]).await.unwrap(),
        None
    );
    tokio::time::sleep(Duration::from_millis(120)).await;
    let again = store
        .claim_inbox("live", LEASE, None, &[])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (again.attempts, again.lease_owner.as_deref()),
        (2, Some("live"))
    );
    assert!(!store.complete_inbox("m", "dead").await.unwrap());
    assert!(store.complete_inbox("m", "live").await.unwrap());
    let done = store.inbox_message("m").await.unwrap().unwrap();
    assert_eq!(done.status, InboxStatus::Delivered);
}

#[tokio::test]
async fn a_failed_attempt_waits_with_capped_exponential_backoff_then_gives_up() {
    assert_eq!(backoff(1), Duration::from_secs(2));
    assert_eq!(backoff(2), Duration::from_secs(4));
    assert_eq!(backoff(5), Duration::from_secs(32));
    assert_eq!(backoff(30), Duration::from_secs(300));
    let (_d, store) = store_with_chats(&["a"]).await;
    store.enqueue_inbox(&msg("m", "a", "x")).await.unwrap();
    store
        .claim_inbox("d", LEASE, None, &[])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.fail_inbox("m", "d", "boom").await.unwrap(),
        InboxStatus::Pending
    );
    let m = store.inbox_message("m").await.unwrap().unwrap();
    assert_eq!(m.last_error.as_deref(), Some("boom"));
    assert!(m.next_attempt_at > m.created_at + chrono::TimeDelta::seconds(1));
    // Not due yet.
    assert_eq!(
        store.claim_inbox("d", LEASE, None, &[]).await.unwrap(),
        None
    );
    assert_eq!(
        store.next_inbox_wakeup().await.unwrap(),
        Some(m.next_attempt_at)
    );
}

#[tokio::test]
async fn a_released_message_is_queued_again_without_using_up_an_attempt() {
    let (_d, store) = store_with_chats(&["a"]).await;
    store.enqueue_inbox(&msg("m", "a", "x")).await.unwrap();
    for _ in 0..20 {
        let claimed = store
            .claim_inbox("d", LEASE, None, &[])
            .await
            .unwrap()
            .unwrap();
        assert_eq!(claimed.attempts, 1);
        // Only the lease holder can release it.
        assert!(!store.release_inbox("m", "other").await.unwrap());
        assert!(store.release_inbox("m", "d").await.unwrap());
        let m = store.inbox_message("m").await.unwrap().unwrap();
        assert_eq!(
            (m.status, m.attempts, m.lease_owner, m.last_error),
            (InboxStatus::Pending, 0, None, None)
        );
    }
    // Still due at once, and never failed however often it waited.
    assert!(store.has_due_inbox("a").await.unwrap());
    assert!(!store.release_inbox("m", "d").await.unwrap());
}

#[tokio::test]
async fn a_delivery_is_recorded_in_the_transcript_once() {
    let (_d, store) = store_with_chats(&["a"]).await;
    let text = ChatMessage::User {
        text: "[inbox from x] hi".into(),
        attachments: Vec::new(),
    };
    let seq = store
        .record_inbox_delivery("m", "a", None, &text)
        .await
        .unwrap();
    assert_eq!(seq, Some(1));
    let again = store
        .record_inbox_delivery("m", "a", None, &text)
        .await
        .unwrap();
    assert_eq!(again, None);
    assert_eq!(store.messages("a").await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_pending_message_can_be_withdrawn_but_not_one_in_flight() {
    let (_d, store) = store_with_chats(&["a"]).await;
    store.enqueue_inbox(&msg("m1", "a", "x")).await.unwrap();
    store.enqueue_inbox(&msg("m2", "a", "y")).await.unwrap();
    assert!(store.has_due_inbox("a").await.unwrap());
    assert!(store.cancel_inbox("m2").await.unwrap());
    store
        .claim_inbox("d", LEASE, None, &[])
        .await
        .unwrap()
        .unwrap();
    assert!(!store.cancel_inbox("m1").await.unwrap());
    assert!(store.complete_inbox("m1", "d").await.unwrap());
    assert_eq!(
        store.claim_inbox("d", LEASE, None, &[]).await.unwrap(),
        None
    );
    assert!(!store.has_due_inbox("a").await.unwrap());
    assert_eq!(
        store.inbox_message("m2").await.unwrap().unwrap().status,
        InboxStatus::Cancelled
    );
}
