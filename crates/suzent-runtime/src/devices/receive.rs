//! The receiving side of the peer protocol: what a paired device may ask of this one, checked
//! against its pairing and scope on every request.

use super::{DeviceHost, PEER_MESSAGE_KIND, store_pairing};
use async_trait::async_trait;
use std::sync::Arc;
use suzent_devices::wire::{MAX_MESSAGE_CHARS, Refusal, Request, Response, close};
use suzent_devices::{Admission, DeviceId, PeerHandler, PeerInfo};
use suzent_store::{
    DeviceRecord, DeviceScope, DeviceState, NewInboxMessage, PeerMessageStatus, Store, StoreError,
};

/// The inbox id of a message from a device: per sender, so two devices may use the same id.
pub(crate) fn inbox_id(device: &DeviceId, message_id: &str) -> String {
    format!("peer:{}:{message_id}", device.encode())
}

fn refused(reason: Refusal, message: impl Into<String>) -> Response {
    Response::Refused {
        reason,
        message: message.into(),
    }
}

fn valid_message_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
}

/// Answers paired devices (the [`PeerHandler`] of this install's endpoint).
pub(crate) struct Receiver {
    pub(crate) store: Store,
    pub(crate) host: Arc<dyn DeviceHost>,
    pub(crate) name: String,
    pub(crate) platform: String,
    /// This endpoint listens on loopback (installs on one machine): loopback addresses count.
    pub(crate) loopback_ok: bool,
}

impl Receiver {
    async fn pairing(&self, peer: &DeviceId) -> Option<DeviceRecord> {
        match self.store.device(&peer.encode()).await {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(device = %peer.short(), "reading the pairing failed: {e}");
                None
            }
        }
    }

    fn paused(&self) -> Response {
        refused(
            Refusal::Paused,
            format!(
                "{} has paused this device: its messages and requests are refused",
                self.name
            ),
        )
    }

    /// The chat a request means: the named top-level chat, or the chat that receives this
    /// device's messages (created on the first message when `create`).
    async fn target(
        &self,
        device: &DeviceRecord,
        agent: Option<&str>,
        create: bool,
    ) -> Result<Option<String>, Response> {
        let unavailable = |e: crate::RuntimeError| refused(Refusal::Unavailable, e.to_string());
        if let Some(agent) = agent {
            return match self.host.top_level_chat(agent).await.map_err(unavailable)? {
                Some(chat) => Ok(Some(chat.id)),
                None => Err(refused(
                    Refusal::NotFound,
                    format!("no agent '{agent}' on {}", self.name),
                )),
            };
        }
        if let Some(chat) = &device.inbox_chat
            && self
                .host
                .top_level_chat(chat)
                .await
                .map_err(unavailable)?
                .is_some()
        {
            return Ok(Some(chat.clone()));
        }
        if !create {
            return Ok(None);
        }
        let chat = self
            .host
            .create_peer_chat(format!("Messages from {}", device.name))
            .await
            .map_err(unavailable)?;
        self.store
            .set_device_inbox_chat(&device.id, &chat.id)
            .await
            .map_err(|e| refused(Refusal::Unavailable, e.to_string()))?;
        Ok(Some(chat.id))
    }

    async fn deliver(
        &self,
        peer: &DeviceId,
        device: &DeviceRecord,
        message_id: String,
        target: Option<String>,
        text: String,
    ) -> Response {
        if !valid_message_id(&message_id) {
            return refused(
                Refusal::Invalid,
                "messageId must be 1 to 128 characters of A-Z a-z 0-9 - _ . :",
            );
        }
        if text.trim().is_empty() || text.chars().count() > MAX_MESSAGE_CHARS {
            return refused(
                Refusal::Invalid,
                format!("the text must be 1 to {MAX_MESSAGE_CHARS} characters"),
            );
        }
        let id = inbox_id(peer, &message_id);
        let duplicate = matches!(self.store.inbox_message(&id).await, Ok(Some(_)));
        let chat = match self.target(device, target.as_deref(), true).await {
            Ok(Some(chat)) => chat,
            Ok(None) => return refused(Refusal::Unavailable, "no chat for this device"),
            Err(r) => return r,
        };
        let queued = self
            .host
            .enqueue(NewInboxMessage {
                id: id.clone(),
                target: chat,
                sender: format!("peer:{}", device.short_id),
                kind: PEER_MESSAGE_KIND.into(),
                text,
            })
            .await;
        match queued {
            Ok(_) => {}
            Err(crate::RuntimeError::Store(StoreError::Conflict { .. })) => {
                return Response::Conflict {
                    message: format!(
                        "message id '{message_id}' was already delivered with other content; nothing was stored"
                    ),
                };
            }
            Err(e) => return refused(Refusal::Unavailable, e.to_string()),
        }
        if let Err(e) = self
            .store
            .record_peer_received(&id, &device.id, &message_id)
            .await
        {
            return refused(Refusal::Unavailable, e.to_string());
        }
        tracing::info!(device = %device.short_id, message = %message_id, duplicate, "peer message received");
        Response::Accepted { duplicate }
    }
}

#[async_trait]
impl PeerHandler for Receiver {
    async fn admit(&self, peer: &DeviceId) -> Admission {
        match self.pairing(peer).await {
            Some(d) if d.state == DeviceState::Active => Admission::Admit,
            Some(d) if d.state == DeviceState::Revoked => Admission::Refuse {
                code: close::REVOKED,
                reason: format!("revoked by {}", self.name),
            },
            _ => Admission::Refuse {
                code: close::NOT_PAIRED,
                reason: "not paired".into(),
            },
        }
    }

    async fn handle(&self, peer: &DeviceId, request: Request) -> Response {
        let Some(device) = self
            .pairing(peer)
            .await
            .filter(|d| d.state == DeviceState::Active)
        else {
            return refused(Refusal::Scope, "this device is not paired (or was revoked)");
        };
        match request {
            Request::Hello {
                platform, addrs, ..
            } => {
                // Only addresses this device would dial are kept (never metadata, broadcast or,
                // off loopback, this machine's own services).
                let addrs: Vec<String> = addrs
                    .into_iter()
                    .filter(|a| {
                        a.parse::<std::net::SocketAddr>()
                            .is_ok_and(|s| suzent_devices::dialable(&s, self.loopback_ok))
                    })
                    .take(8)
                    .collect();
                let _ = platform;
                if let Err(e) = self.store.device_seen(&device.id, Some(&addrs)).await {
                    tracing::debug!("device {}: {e}", device.short_id);
                }
                if device.scope == DeviceScope::Paused {
                    return self.paused();
                }
                Response::Hello {
                    name: self.name.clone(),
                    platform: self.platform.clone(),
                }
            }
            Request::Status {
                message_id,
                status,
                note,
            } => {
                // About this device's own messages: answered whatever the scope.
                let status = match status {
                    suzent_devices::wire::RemoteStatus::Read => PeerMessageStatus::Read,
                    suzent_devices::wire::RemoteStatus::Failed => PeerMessageStatus::Failed,
                };
                let note: Option<String> = note.map(|n| n.chars().take(2000).collect());
                match self
                    .store
                    .peer_message_outcome(&device.id, &message_id, status, note.as_deref())
                    .await
                {
                    Ok(_) => Response::Ok,
                    Err(e) => refused(Refusal::Unavailable, e.to_string()),
                }
            }
            _ if device.scope == DeviceScope::Paused => self.paused(),
            Request::Deliver {
                message_id,
                target,
                text,
                ..
            } => self.deliver(peer, &device, message_id, target, text).await,
            Request::ListAgents => match self.host.agents().await {
                Ok(agents) => Response::Agents { agents },
                Err(e) => refused(Refusal::Unavailable, e.to_string()),
            },
            Request::ReadAgent { .. } | Request::StopAgent { .. }
                if device.scope != DeviceScope::Read =>
            {
                refused(
                    Refusal::Scope,
                    format!(
                        "{} lets this device send messages only; reading transcripts and stopping agents needs the 'read' scope",
                        self.name
                    ),
                )
            }
            Request::ReadAgent {
                agent,
                budget_chars,
            } => match self.target(&device, agent.as_deref(), false).await {
                Ok(Some(chat)) => match self.host.read(&chat, budget_chars.min(50_000)).await {
                    Ok(text) => Response::Text { text },
                    Err(e) => refused(Refusal::Unavailable, e.to_string()),
                },
                Ok(None) => Response::Text {
                    text: format!("{} has no messages from this device yet", self.name),
                },
                Err(r) => r,
            },
            Request::StopAgent { agent } => {
                match self.target(&device, agent.as_deref(), false).await {
                    Ok(Some(chat)) => match self.host.stop(&chat).await {
                        Ok(text) => Response::Text { text },
                        Err(e) => refused(Refusal::Unavailable, e.to_string()),
                    },
                    Ok(None) => Response::Text {
                        text: "nothing to stop".into(),
                    },
                    Err(r) => r,
                }
            }
        }
    }

    async fn paired(&self, peer: &PeerInfo) -> Result<(), String> {
        store_pairing(&self.store, peer)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
