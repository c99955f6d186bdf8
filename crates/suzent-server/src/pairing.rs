//! Pairing: an extension asks over its connection, the app shows a dialog (extension id,
//! browser, a short code the popup shows too), the user approves or declines. On approval the
//! app makes a credential bound to that extension id, stores only its SHA-256, and hands the
//! credential to the connection that asked — nothing else ever sees it. Revoking (app, CLI or
//! popup) marks the pairing revoked and closes its live connection at once.

use crate::BridgeEvent;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use suzent_runtime::AuditLog;
use suzent_store::{BrowserPairing, NewBrowserPairing, Store, StoreError};
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

/// How long a pairing request waits for the user before it expires.
pub const PAIRING_TIMEOUT: Duration = Duration::from_secs(300);

/// Pairing requests waiting at once (one per extension id).
pub const MAX_PENDING: usize = 4;

/// Prefix of every credential (so a leaked one is recognisable in a grep).
pub const CREDENTIAL_PREFIX: &str = "szb1_";

/// A pairing request waiting for the user, as the app's dialog shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct PairingRequest {
    /// The request id (approve/reject name it).
    pub id: String,
    /// The extension id, from the connection's `Origin`.
    pub extension_id: String,
    /// Whether that id is the extension shipped with this app (its manifest key).
    pub shipped_extension: bool,
    /// Browser name as the extension reported it.
    pub browser: String,
    /// Browser version as reported.
    pub browser_version: String,
    /// Extension version as reported.
    pub extension_version: String,
    /// The code the popup shows; the user compares it before approving.
    pub code: String,
    /// When the extension asked.
    pub requested_at: DateTime<Utc>,
}

/// How a pairing request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum PairingOutcome {
    /// The user approved; the extension got its credential.
    Approved,
    /// The user declined.
    Rejected,
    /// The extension disconnected first.
    Cancelled,
    /// Nobody answered within [`PAIRING_TIMEOUT`].
    Expired,
}

/// Why a pairing call failed.
#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    /// No pending request has this id (answered, cancelled or expired).
    #[error("no pairing request '{0}' is waiting (it was answered, cancelled or expired)")]
    UnknownRequest(String),
    /// The extension went away before the approval reached it; nothing was stored.
    #[error("the extension of pairing request '{0}' disconnected before the approval")]
    Disconnected(String),
    /// Too many requests are waiting, or this extension already has one.
    #[error("{0}")]
    Busy(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What the connection that asked learns of the user's decision.
#[derive(Debug)]
pub(crate) enum Decision {
    /// Approved: the new pairing and its credential (the only copy outside the extension).
    Approved {
        pairing: BrowserPairing,
        credential: String,
    },
    /// Declined (or expired), with the reason for the popup.
    Rejected(String),
}

struct Pending {
    request: PairingRequest,
    decide: oneshot::Sender<Decision>,
}

/// A live, authenticated connection of a pairing.
struct Live {
    connection: u64,
    close: CancellationToken,
    since: DateTime<Utc>,
}

/// A pairing's live connection, as status shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct LiveConnection {
    /// The pairing.
    pub pairing_id: String,
    /// Since when it is connected.
    pub since: DateTime<Utc>,
}

/// The pairing service of one bridge: pending requests in memory, pairings in the store, live
/// connections by pairing. Cheap to share (`Arc`).
pub struct Pairings {
    store: Store,
    audit: Option<AuditLog>,
    shipped_extension_id: String,
    events: broadcast::Sender<BridgeEvent>,
    pending: Mutex<HashMap<String, Pending>>,
    live: Mutex<HashMap<String, Live>>,
}

impl std::fmt::Debug for Pairings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pairings")
            .field("shipped_extension_id", &self.shipped_extension_id)
            .finish_non_exhaustive()
    }
}

/// A fresh credential (`szb1_` and 64 hex digits from the OS's random source) and its hash.
pub(crate) fn new_credential() -> Result<(String, String), PairingError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| PairingError::Busy(format!("the system random source failed: {e}")))?;
    let credential = format!("{CREDENTIAL_PREFIX}{}", hex(&bytes));
    let hash = credential_hash(&credential);
    Ok((credential, hash))
}

/// SHA-256 of a credential, 64 lower-case hex digits (what the store keeps).
pub fn credential_hash(credential: &str) -> String {
    hex(&Sha256::digest(credential.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A six-digit code shown as `482-913`.
fn new_code() -> Result<String, PairingError> {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes)
        .map_err(|e| PairingError::Busy(format!("the system random source failed: {e}")))?;
    let n = u32::from_le_bytes(bytes) % 1_000_000;
    Ok(format!("{:03}-{:03}", n / 1000, n % 1000))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pairings {
    /// A pairing service over `store`; pairing decisions are appended to `audit` when given
    /// (never a credential, only ids).
    pub fn new(
        store: Store,
        audit: Option<AuditLog>,
        shipped_extension_id: String,
        events: broadcast::Sender<BridgeEvent>,
    ) -> Pairings {
        Pairings {
            store,
            audit,
            shipped_extension_id,
            events,
            pending: Mutex::new(HashMap::new()),
            live: Mutex::new(HashMap::new()),
        }
    }

    /// The store the pairings live in.
    pub fn store(&self) -> &Store {
        &self.store
    }

    fn emit(&self, event: BridgeEvent) {
        // Nobody listening is fine.
        let _ = self.events.send(event);
    }

    async fn audit(&self, what: &str, fields: serde_json::Value) {
        if let Some(audit) = &self.audit {
            let mut entry = serde_json::json!({
                "ts": Utc::now().to_rfc3339(),
                "kind": "browser_pairing",
                "event": what,
            });
            if let (Some(obj), Some(extra)) = (entry.as_object_mut(), fields.as_object()) {
                obj.extend(extra.clone());
            }
            audit.append_value(entry).await;
        }
    }

    /// Registers a request from a connection whose `Origin` was `extension_id`; returns it and
    /// the receiver of the user's decision. It shows in [`Pairings::pending`] and as a
    /// [`BridgeEvent::PairingRequested`].
    ///
    /// Errors: [`PairingError::Busy`] when this extension already has a request waiting or
    /// [`MAX_PENDING`] are waiting.
    pub(crate) fn request(
        &self,
        extension_id: &str,
        browser: &str,
        browser_version: &str,
        extension_version: &str,
    ) -> Result<(PairingRequest, oneshot::Receiver<Decision>), PairingError> {
        let request = PairingRequest {
            id: suzent_core::new_id(),
            extension_id: extension_id.to_string(),
            shipped_extension: extension_id == self.shipped_extension_id,
            browser: bounded(browser, 40),
            browser_version: bounded(browser_version, 40),
            extension_version: bounded(extension_version, 40),
            code: new_code()?,
            requested_at: Utc::now(),
        };
        let (decide, decision) = oneshot::channel();
        {
            let mut pending = lock(&self.pending);
            pending.retain(|_, p| !p.decide.is_closed());
            if pending
                .values()
                .any(|p| p.request.extension_id == extension_id)
            {
                return Err(PairingError::Busy(format!(
                    "extension '{extension_id}' already has a pairing request waiting"
                )));
            }
            if pending.len() >= MAX_PENDING {
                return Err(PairingError::Busy(format!(
                    "{MAX_PENDING} pairing requests are already waiting"
                )));
            }
            pending.insert(
                request.id.clone(),
                Pending {
                    request: request.clone(),
                    decide,
                },
            );
        }
        self.emit(BridgeEvent::PairingRequested {
            request: request.clone(),
        });
        Ok((request, decision))
    }

    /// Ends a request that did not get an answer (its connection closed, or it expired).
    pub(crate) fn abandon(&self, request_id: &str, outcome: PairingOutcome) {
        if lock(&self.pending).remove(request_id).is_some() {
            self.emit(BridgeEvent::PairingResolved {
                request_id: request_id.to_string(),
                outcome,
            });
        }
    }

    /// The requests waiting for the user, oldest first.
    pub fn pending(&self) -> Vec<PairingRequest> {
        let mut list: Vec<PairingRequest> = lock(&self.pending)
            .values()
            .filter(|p| !p.decide.is_closed())
            .map(|p| p.request.clone())
            .collect();
        list.sort_by(|a, b| a.requested_at.cmp(&b.requested_at));
        list
    }

    /// The user approved request `request_id`: stores the pairing (credential hash only) and
    /// hands the credential to the connection that asked.
    ///
    /// Errors: [`PairingError::UnknownRequest`], [`PairingError::Disconnected`] (nothing is
    /// kept), [`PairingError::Store`].
    pub async fn approve(&self, request_id: &str) -> Result<BrowserPairing, PairingError> {
        let pending = lock(&self.pending)
            .remove(request_id)
            .ok_or_else(|| PairingError::UnknownRequest(request_id.to_string()))?;
        if pending.decide.is_closed() {
            self.emit(BridgeEvent::PairingResolved {
                request_id: request_id.to_string(),
                outcome: PairingOutcome::Cancelled,
            });
            return Err(PairingError::Disconnected(request_id.to_string()));
        }
        let (credential, credential_hash) = new_credential()?;
        let request = &pending.request;
        let pairing = self
            .store
            .add_browser_pairing(&NewBrowserPairing {
                id: suzent_core::new_id(),
                extension_id: request.extension_id.clone(),
                browser: request.browser.clone(),
                browser_version: request.browser_version.clone(),
                extension_version: request.extension_version.clone(),
                credential_hash,
            })
            .await?;
        let sent = pending.decide.send(Decision::Approved {
            pairing: pairing.clone(),
            credential,
        });
        if sent.is_err() {
            // The connection closed meanwhile: the credential reached nobody; revoke it.
            self.store.revoke_browser_pairing(&pairing.id).await?;
            self.emit(BridgeEvent::PairingResolved {
                request_id: request_id.to_string(),
                outcome: PairingOutcome::Cancelled,
            });
            return Err(PairingError::Disconnected(request_id.to_string()));
        }
        self.audit(
            "approved",
            serde_json::json!({
                "pairingId": pairing.id,
                "extensionId": pairing.extension_id,
                "browser": pairing.browser,
            }),
        )
        .await;
        self.emit(BridgeEvent::PairingResolved {
            request_id: request_id.to_string(),
            outcome: PairingOutcome::Approved,
        });
        Ok(pairing)
    }

    /// The user declined request `request_id`; the extension is told and disconnected.
    ///
    /// Errors: [`PairingError::UnknownRequest`].
    pub async fn reject(&self, request_id: &str) -> Result<(), PairingError> {
        let pending = lock(&self.pending)
            .remove(request_id)
            .ok_or_else(|| PairingError::UnknownRequest(request_id.to_string()))?;
        let _ = pending.decide.send(Decision::Rejected(
            "the pairing was declined in Suzent".into(),
        ));
        self.audit(
            "rejected",
            serde_json::json!({"extensionId": pending.request.extension_id}),
        )
        .await;
        self.emit(BridgeEvent::PairingResolved {
            request_id: request_id.to_string(),
            outcome: PairingOutcome::Rejected,
        });
        Ok(())
    }

    /// The active pairing of `extension_id` whose credential is `credential`, if any.
    ///
    /// Errors: [`PairingError::Store`].
    pub(crate) async fn verify(
        &self,
        extension_id: &str,
        credential: &str,
    ) -> Result<Option<BrowserPairing>, PairingError> {
        if !credential.starts_with(CREDENTIAL_PREFIX) || credential.len() != 69 {
            return Ok(None);
        }
        Ok(self
            .store
            .find_browser_pairing(extension_id, &credential_hash(credential))
            .await?)
    }

    /// Marks `pairing_id` live on connection `connection`, whose task stops when `close` is
    /// cancelled. `false` when the pairing already has a live connection (a reused credential).
    pub(crate) fn go_live(
        &self,
        pairing_id: &str,
        connection: u64,
        close: CancellationToken,
    ) -> bool {
        let mut live = lock(&self.live);
        if live.contains_key(pairing_id) {
            return false;
        }
        live.insert(
            pairing_id.to_string(),
            Live {
                connection,
                close,
                since: Utc::now(),
            },
        );
        true
    }

    /// Connection `connection` of `pairing_id` ended.
    pub(crate) fn gone(&self, pairing_id: &str, connection: u64) {
        let mut live = lock(&self.live);
        if live
            .get(pairing_id)
            .is_some_and(|l| l.connection == connection)
        {
            live.remove(pairing_id);
        }
    }

    /// The live connections.
    pub fn live(&self) -> Vec<LiveConnection> {
        let mut list: Vec<LiveConnection> = lock(&self.live)
            .iter()
            .map(|(id, l)| LiveConnection {
                pairing_id: id.clone(),
                since: l.since,
            })
            .collect();
        list.sort_by(|a, b| a.since.cmp(&b.since));
        list
    }

    /// Revokes `pairing_id`: its credential never works again and its live connection (if
    /// any) is closed now. Returns `false` when it was already revoked.
    ///
    /// Errors: [`PairingError::Store`] (also when no such pairing exists).
    pub async fn revoke(&self, pairing_id: &str) -> Result<bool, PairingError> {
        let changed = self.store.revoke_browser_pairing(pairing_id).await?;
        self.close_live(pairing_id);
        if changed {
            self.audit("revoked", serde_json::json!({"pairingId": pairing_id}))
                .await;
            self.emit(BridgeEvent::Revoked {
                pairing_id: pairing_id.to_string(),
            });
        }
        Ok(changed)
    }

    fn close_live(&self, pairing_id: &str) {
        if let Some(l) = lock(&self.live).get(pairing_id) {
            l.close.cancel();
        }
    }

    /// Closes live connections whose pairing is no longer active in the store (revoked by
    /// another process, e.g. `suzent browser revoke`).
    ///
    /// Errors: [`PairingError::Store`].
    pub(crate) async fn close_revoked_elsewhere(&self) -> Result<(), PairingError> {
        let active = self.store.active_browser_pairing_ids().await?;
        let stale: Vec<String> = lock(&self.live)
            .keys()
            .filter(|id| !active.contains(id))
            .cloned()
            .collect();
        for id in stale {
            self.close_live(&id);
            self.emit(BridgeEvent::Revoked { pairing_id: id });
        }
        Ok(())
    }

    /// Every pairing (revoked ones too when `include_revoked`), newest first.
    ///
    /// Errors: [`PairingError::Store`].
    pub async fn list(&self, include_revoked: bool) -> Result<Vec<BrowserPairing>, PairingError> {
        Ok(self.store.list_browser_pairings(include_revoked).await?)
    }
}

/// `text` cut to `max` characters (reported fields are shown in the app's dialog).
fn bounded(text: &str, max: usize) -> String {
    text.chars().filter(|c| !c.is_control()).take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_credential_is_prefixed_random_hex_and_its_hash_is_sha256() -> anyhow::Result<()> {
        let (a, hash_a) = new_credential()?;
        let (b, _) = new_credential()?;
        assert!(a.starts_with(CREDENTIAL_PREFIX));
        assert_eq!(a.len(), 69);
        assert!(a != b);
        assert_eq!(hash_a, credential_hash(&a));
        assert_eq!(
            credential_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        Ok(())
    }

    #[test]
    fn pairing_codes_have_six_digits() -> anyhow::Result<()> {
        let code = new_code()?;
        assert_eq!(code.len(), 7);
        assert!(code.chars().enumerate().all(|(i, c)| if i == 3 {
            c == '-'
        } else {
            c.is_ascii_digit()
        }));
        Ok(())
    }
}
