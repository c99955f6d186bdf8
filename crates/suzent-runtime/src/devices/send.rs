//! The sending side: the peer outbox loop and the receipts this device owes its senders.

use super::{Devices, address_of, lock};
use std::sync::Arc;
use std::time::Duration;
use suzent_devices::wire::{Refusal, RemoteStatus, Request, Response};
use suzent_devices::{DeviceError, DeviceId, DeviceNode};
use suzent_store::{DeviceState, InboxStatus, PeerMessage, PeerMessageStatus};

/// The slow poll of the outbox, for messages queued by other processes (a CLI run).
const POLL: Duration = Duration::from_millis(500);
/// How long a process owns a message it sends (a request takes at most 25 s).
const DEFAULT_LEASE: Duration = Duration::from_secs(60);
/// Environment variable overriding the lease in milliseconds (crash tests use a short one).
const LEASE_ENV: &str = "SUZENT_PEER_LEASE_MS";

fn lease() -> Duration {
    std::env::var(LEASE_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_LEASE)
}

impl Devices {
    pub(super) async fn send_loop(self: Arc<Self>) {
        loop {
            if self.shutdown.is_cancelled() {
                return;
            }
            let Some(node) = self.node.lock().await.clone() else {
                return;
            };
            let busy: Vec<String> = lock(&self.in_flight).iter().cloned().collect();
            match self
                .store
                .claim_peer_message(&self.owner, lease(), &busy)
                .await
            {
                Ok(Some(message)) => {
                    lock(&self.in_flight).insert(message.device_id.clone());
                    let me = Arc::clone(&self);
                    tokio::spawn(async move {
                        let device = message.device_id.clone();
                        me.send_one(&node, message).await;
                        lock(&me.in_flight).remove(&device);
                        me.wake.notify_one();
                    });
                    continue;
                }
                Ok(None) => {}
                Err(e) => tracing::warn!("peer outbox: {e}"),
            }
            let wait = match self.store.next_peer_wakeup().await {
                Ok(Some(at)) => (at - chrono::Utc::now())
                    .to_std()
                    .map(|d| d.clamp(Duration::from_millis(5), POLL))
                    .unwrap_or(Duration::from_millis(5)),
                _ => POLL,
            };
            tokio::select! {
                () = self.wake.notified() => {}
                () = tokio::time::sleep(wait) => {}
                () = self.shutdown.cancelled() => return,
            }
        }
    }

    async fn send_one(&self, node: &DeviceNode, message: PeerMessage) {
        let store = &self.store;
        let owner = &self.owner;
        let record = match store.device(&message.device_id).await {
            Ok(Some(d)) if d.state == DeviceState::Active => d,
            Ok(_) => {
                let _ = store
                    .peer_message_failed(&message.id, Some(owner), "the device is no longer paired")
                    .await;
                return;
            }
            Err(e) => {
                let _ = store
                    .peer_message_retry(&message.id, owner, &e.to_string())
                    .await;
                return;
            }
        };
        let Ok(device) = DeviceId::parse(&record.id) else {
            let _ = store
                .peer_message_failed(&message.id, Some(owner), "the stored device key is invalid")
                .await;
            return;
        };
        let request = Request::Deliver {
            message_id: message.id.clone(),
            target: message.target.clone(),
            from_agent: Some(message.sender.clone()),
            text: message.text.clone(),
        };
        let outcome = node.request(&address_of(&record, device), &request).await;
        // Crash tests kill the process here: sent, the answer not recorded yet.
        crate::turn::hold_point("peer_sent").await;
        let result = match outcome {
            Ok(Response::Accepted { .. }) => store
                .peer_message_delivered(&message.id, owner)
                .await
                .map(|_| ()),
            Ok(Response::Conflict { message: why }) => store
                .peer_message_failed(&message.id, Some(owner), &format!("conflict: {why}"))
                .await
                .map(|_| ()),
            Ok(Response::Refused {
                reason: Refusal::Unavailable,
                message: why,
            }) => store
                .peer_message_retry(&message.id, owner, &why)
                .await
                .map(|_| ()),
            Ok(Response::Refused {
                reason,
                message: why,
            }) => {
                if reason == Refusal::Paused {
                    let _ = store.set_device_note(&record.id, Some(&why)).await;
                }
                store
                    .peer_message_failed(&message.id, Some(owner), &format!("refused: {why}"))
                    .await
                    .map(|_| ())
            }
            Ok(other) => store
                .peer_message_failed(
                    &message.id,
                    Some(owner),
                    &format!("unexpected answer {other:?}"),
                )
                .await
                .map(|_| ()),
            Err(DeviceError::Revoked { .. }) => {
                self.peer_revoked(&device, "revoked by the device").await;
                Ok(())
            }
            Err(DeviceError::NotPaired { .. }) => {
                self.peer_revoked(&device, "the device no longer knows this device")
                    .await;
                Ok(())
            }
            Err(e) => store
                .peer_message_retry(&message.id, owner, &e.to_string())
                .await
                .map(|_| ()),
        };
        if let Err(e) = result {
            tracing::warn!(message = %message.id, "peer outbox update failed: {e}");
        }
    }

    /// Tells senders what became of the messages they delivered here: read (with the refused
    /// tool calls of its turn, if any) or failed.
    pub(super) async fn report_outcomes(&self, node: &DeviceNode) {
        let due = match self.store.unreported_peer_messages().await {
            Ok(d) => d,
            Err(e) => {
                tracing::debug!("peer receipts: {e}");
                return;
            }
        };
        for item in due {
            let Ok(Some(record)) = self.store.device(&item.device_id).await else {
                continue;
            };
            let Ok(device) = DeviceId::parse(&record.id) else {
                continue;
            };
            if record.state != DeviceState::Active || !node.is_connected(&device) {
                // Told when it connects again (it dials us, or we dial it).
                continue;
            }
            let (status, outcome, note) = match item.status {
                InboxStatus::Failed => (
                    RemoteStatus::Failed,
                    PeerMessageStatus::Failed,
                    item.last_error.clone(),
                ),
                _ => (
                    RemoteStatus::Read,
                    PeerMessageStatus::Read,
                    self.refusals_of(&item.chat_id, &item.inbox_id).await,
                ),
            };
            let request = Request::Status {
                message_id: item.message_id.clone(),
                status,
                note,
            };
            match node.request(&address_of(&record, device), &request).await {
                Ok(_) => {
                    let _ = self
                        .store
                        .peer_received_reported(&item.inbox_id, outcome)
                        .await;
                }
                Err(e) => tracing::debug!(device = %record.short_id, "receipt not sent: {e}"),
            }
        }
    }

    /// The tool calls refused in the turn a peer message started, as a note for its sender.
    async fn refusals_of(&self, chat_id: &str, inbox_id: &str) -> Option<String> {
        let seq = self.store.inbox_delivery_seq(inbox_id).await.ok()??;
        let messages = self.store.messages(chat_id).await.ok()?;
        let mut refused = Vec::new();
        for m in messages.iter().filter(|m| m.seq > seq) {
            match &m.message {
                suzent_core::ChatMessage::User { .. } => break,
                suzent_core::ChatMessage::Tool {
                    tool_name,
                    content,
                    is_error: true,
                    ..
                } if content.starts_with("Permission denied") => {
                    let short: String = content.chars().take(300).collect();
                    refused.push(format!("{tool_name}: {short}"));
                }
                _ => {}
            }
        }
        (!refused.is_empty()).then(|| {
            format!(
                "{} tool call(s) were refused on the receiving device: {}",
                refused.len(),
                refused.join(" | ")
            )
        })
    }
}
