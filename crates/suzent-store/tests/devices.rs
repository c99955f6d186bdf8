//! The devices tables: pairings, the peer outbox (order, leases, retries, outcomes) and the
//! received-message reports, against a real database file.

use anyhow::Result;
use pretty_assertions::assert_eq;
use std::time::Duration;
use suzent_core::PermissionMode;
use suzent_store::{
    DeviceScope, DeviceState, InboxStatus, NewChat, NewDevice, NewInboxMessage, NewPeerMessage,
    PeerMessageStatus, Store, StoreError,
};

async fn store() -> Result<(tempfile::TempDir, Store)> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("suzent.db")).await?;
    Ok((dir, store))
}

fn device(id: &str) -> NewDevice {
    NewDevice {
        id: format!("{id}-full-key"),
        short_id: id.to_string(),
        name: format!("Device {id}"),
        platform: "linux".into(),
        fingerprint: "1A2B 3C4D 5E6F 7081".into(),
        addrs: vec!["127.0.0.1:4000".into()],
        relay: None,
    }
}

fn message(id: &str, device: &str, text: &str) -> NewPeerMessage {
    NewPeerMessage {
        id: id.into(),
        device_id: format!("{device}-full-key"),
        target: None,
        sender: "chat-1".into(),
        text: text.into(),
    }
}

const LEASE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn pairing_again_reactivates_a_revoked_device_with_the_default_scope() -> Result<()> {
    let (_d, store) = store().await?;
    let first = store.pair_device(&device("b")).await?;
    assert_eq!(
        (first.scope, first.state),
        (DeviceScope::Send, DeviceState::Active)
    );
    store
        .set_device_scope(&first.id, DeviceScope::Paused)
        .await?;
    store
        .set_device_state(&first.id, DeviceState::Revoked, None)
        .await?;
    let again = store.pair_device(&device("b")).await?;
    assert_eq!(
        (again.scope, again.state),
        (DeviceScope::Send, DeviceState::Active)
    );
    assert_eq!(
        store.device("b").await?.map(|d| d.id),
        Some("b-full-key".to_string())
    );
    assert_eq!(store.devices().await?.len(), 1);
    Ok(())
}

#[tokio::test]
async fn messages_to_one_device_are_claimed_in_order_one_at_a_time() -> Result<()> {
    let (_d, store) = store().await?;
    store.pair_device(&device("b")).await?;
    store.pair_device(&device("c")).await?;
    for (id, dev) in [("m1", "b"), ("m2", "b"), ("m3", "c")] {
        store.queue_peer_message(&message(id, dev, id)).await?;
    }
    let first = store
        .claim_peer_message("p", LEASE, &[])
        .await?
        .map(|m| m.id);
    let second = store
        .claim_peer_message("p", LEASE, &[])
        .await?
        .map(|m| m.id);
    // m2 waits behind m1 (same device), m3 goes.
    assert_eq!((first, second), (Some("m1".into()), Some("m3".into())));
    assert_eq!(store.claim_peer_message("p", LEASE, &[]).await?, None);
    // A transport error puts m1 back after a backoff; m2 still waits behind it.
    assert!(store.peer_message_retry("m1", "p", "offline").await?);
    assert_eq!(store.claim_peer_message("p", LEASE, &[]).await?, None);
    assert!(store.wake_device_messages("b-full-key").await? == 1);
    let again = store.claim_peer_message("p", LEASE, &[]).await?.unwrap();
    assert_eq!((again.id.as_str(), again.attempts), ("m1", 2));
    assert!(store.peer_message_delivered("m1", "p").await?);
    assert_eq!(
        store
            .claim_peer_message("p", LEASE, &[])
            .await?
            .map(|m| m.id),
        Some("m2".into())
    );
    Ok(())
}

#[tokio::test]
async fn the_same_message_id_with_other_content_is_a_conflict() -> Result<()> {
    let (_d, store) = store().await?;
    store.pair_device(&device("b")).await?;
    store
        .queue_peer_message(&message("m1", "b", "run report"))
        .await?;
    let same = store
        .queue_peer_message(&message("m1", "b", "run report"))
        .await?;
    assert_eq!(same.status, PeerMessageStatus::Queued);
    let err = store
        .queue_peer_message(&message("m1", "b", "rm -rf ~"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    Ok(())
}

#[tokio::test]
async fn a_revoked_device_s_messages_fail_and_are_never_claimed() -> Result<()> {
    let (_d, store) = store().await?;
    store.pair_device(&device("b")).await?;
    store.queue_peer_message(&message("m1", "b", "one")).await?;
    store.queue_peer_message(&message("m2", "b", "two")).await?;
    store.claim_peer_message("p", LEASE, &[]).await?;
    store
        .set_device_state(
            "b-full-key",
            DeviceState::RevokedByPeer,
            Some("revoked by B"),
        )
        .await?;
    assert_eq!(
        store.fail_device_messages("b-full-key", "revoked").await?,
        2
    );
    let outbox = store.peer_outbox(Some("b-full-key")).await?;
    assert_eq!(
        outbox
            .iter()
            .map(|m| (m.status, m.reason.clone()))
            .collect::<Vec<_>>(),
        vec![
            (PeerMessageStatus::Failed, Some("revoked".to_string())),
            (PeerMessageStatus::Failed, Some("revoked".to_string()))
        ]
    );
    // The sender's late acknowledgement does not resurrect it.
    assert!(!store.peer_message_delivered("m1", "p").await?);
    Ok(())
}

#[tokio::test]
async fn only_the_receiving_device_can_mark_its_message_read() -> Result<()> {
    let (_d, store) = store().await?;
    store.pair_device(&device("b")).await?;
    store.pair_device(&device("c")).await?;
    store.queue_peer_message(&message("m1", "b", "one")).await?;
    store.claim_peer_message("p", LEASE, &[]).await?;
    store.peer_message_delivered("m1", "p").await?;
    assert!(
        !store
            .peer_message_outcome("c-full-key", "m1", PeerMessageStatus::Read, None)
            .await?
    );
    assert!(
        store
            .peer_message_outcome("b-full-key", "m1", PeerMessageStatus::Read, Some("ok"))
            .await?
    );
    let m = store.peer_message("m1").await?.unwrap();
    assert_eq!(
        (m.status, m.reason.as_deref(), m.read_at.is_some()),
        (PeerMessageStatus::Read, Some("ok"), true)
    );
    Ok(())
}

#[tokio::test]
async fn a_received_message_is_reported_once_after_the_inbox_finished_it() -> Result<()> {
    let (_d, store) = store().await?;
    store
        .create_chat(&NewChat {
            id: "inbox-chat".into(),
            title: "Messages from B".into(),
            workspace: "/w".into(),
            model: None,
            mode: PermissionMode::Default,
            tools: None,
        })
        .await?;
    let inbox_id = "peer:b-full-key:m1";
    store
        .enqueue_inbox(&NewInboxMessage {
            id: inbox_id.into(),
            target: "inbox-chat".into(),
            sender: "peer:b".into(),
            kind: "peer_message".into(),
            text: "hello".into(),
        })
        .await?;
    store
        .record_peer_received(inbox_id, "b-full-key", "m1")
        .await?;
    store
        .record_peer_received(inbox_id, "b-full-key", "m1")
        .await?;
    assert_eq!(store.unreported_peer_messages().await?, vec![]);
    let claimed = store.claim_inbox("d", LEASE, None, &[]).await?.unwrap();
    store.complete_inbox(&claimed.id, "d").await?;
    let due = store.unreported_peer_messages().await?;
    assert_eq!(due.len(), 1);
    assert_eq!(
        (due[0].message_id.as_str(), due[0].status),
        ("m1", InboxStatus::Delivered)
    );
    store
        .peer_received_reported(inbox_id, PeerMessageStatus::Read)
        .await?;
    assert_eq!(store.unreported_peer_messages().await?, vec![]);
    Ok(())
}
