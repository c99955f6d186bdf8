//! The bridge's status for Settings → Browser and `suzent browser status`, and the state file a
//! running bridge keeps (`<data>/browser/bridge.json`: port, live connections, refreshed every
//! second) so another process can tell whether the bridge runs and who is connected. The file
//! holds no secret.

use crate::package::{SHIPPED_EXTENSION_ID, extension_version};
use crate::pairing::{LiveConnection, PairingError, PairingRequest};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use suzent_store::{BrowserPairing, Store};

/// A state file older than this means the bridge that wrote it is gone.
const STALE_AFTER_SECS: i64 = 10;

/// The overall state, as Settings → Browser names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum BridgeState {
    /// No pairing yet (the extension is probably not installed).
    NotInstalled,
    /// Paired, but no extension is connected now.
    Paired,
    /// A paired extension is connected.
    Connected,
}

/// One pairing with its connection state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct BrowserPairingStatus {
    /// The stored pairing.
    pub pairing: BrowserPairing,
    /// Whether it is connected now.
    pub connected: bool,
    /// Since when, if connected.
    pub connected_since: Option<DateTime<Utc>>,
}

/// Everything Settings → Browser shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct BrowserStatus {
    /// Not installed, paired or connected.
    pub state: BridgeState,
    /// The bridge's port when it runs.
    pub port: Option<u16>,
    /// The shipped extension's version (`None` when this build does not include it).
    pub extension_version: Option<String>,
    /// The shipped extension's id.
    pub shipped_extension_id: String,
    /// Active pairings first (newest first), then revoked ones.
    pub pairings: Vec<BrowserPairingStatus>,
    /// Pairing requests waiting for the user.
    pub pending: Vec<PairingRequest>,
    /// Browsers the native messaging host is installed for.
    pub native_hosts: Vec<String>,
}

/// What the state file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StateFile {
    pub port: u16,
    pub updated_at: DateTime<Utc>,
    pub running: bool,
    pub live: Vec<LiveConnection>,
}

/// `<data>/browser/bridge.json`.
pub fn bridge_state_file(data_dir: &Path) -> PathBuf {
    data_dir.join("browser").join("bridge.json")
}

pub(crate) fn read_state(path: &Path) -> Option<StateFile> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

fn write(path: &Path, state: &StateFile) {
    let Ok(text) = serde_json::to_string_pretty(state) else {
        return;
    };
    let Some(dir) = path.parent() else { return };
    if let Err(e) = std::fs::create_dir_all(dir) {
        tracing::warn!("cannot create {}: {e}", dir.display());
        return;
    }
    let tmp = dir.join(".bridge.json.tmp");
    if let Err(e) = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path)) {
        tracing::warn!("cannot write {}: {e}", path.display());
    }
}

pub(crate) fn write_state(data_dir: &Path, port: u16, live: &[LiveConnection]) {
    write(
        &bridge_state_file(data_dir),
        &StateFile {
            port,
            updated_at: Utc::now(),
            running: true,
            live: live.to_vec(),
        },
    );
}

/// Marks the bridge stopped, keeping the port (the next start tries it first).
pub(crate) fn clear_state(data_dir: &Path, port: u16) {
    write(
        &bridge_state_file(data_dir),
        &StateFile {
            port,
            updated_at: Utc::now(),
            running: false,
            live: Vec::new(),
        },
    );
}

pub(crate) fn build(
    port: Option<u16>,
    pairings: &[BrowserPairing],
    live: &[LiveConnection],
    pending: Vec<PairingRequest>,
    native_hosts: Vec<String>,
) -> Result<BrowserStatus, PairingError> {
    let mut list: Vec<BrowserPairingStatus> = pairings
        .iter()
        .map(|p| {
            let since = live.iter().find(|l| l.pairing_id == p.id).map(|l| l.since);
            BrowserPairingStatus {
                pairing: p.clone(),
                connected: since.is_some(),
                connected_since: since,
            }
        })
        .collect();
    list.sort_by_key(|p| p.pairing.revoked_at.is_some());
    let state = if list.iter().any(|p| p.connected) {
        BridgeState::Connected
    } else if list.iter().any(|p| p.pairing.revoked_at.is_none()) {
        BridgeState::Paired
    } else {
        BridgeState::NotInstalled
    };
    Ok(BrowserStatus {
        state,
        port,
        extension_version: extension_version().ok(),
        shipped_extension_id: SHIPPED_EXTENSION_ID.to_string(),
        pairings: list,
        pending,
        native_hosts,
    })
}

/// Status from another process (the CLI): the store's pairings and the running bridge's state
/// file, if it was refreshed within the last 10 s.
///
/// Errors: [`PairingError::Store`].
pub async fn offline_status(data_dir: &Path, store: &Store) -> Result<BrowserStatus, PairingError> {
    let state = read_state(&bridge_state_file(data_dir))
        .filter(|s| s.running && (Utc::now() - s.updated_at).num_seconds() < STALE_AFTER_SECS);
    let pairings = store.list_browser_pairings(true).await?;
    let (port, live) = match state {
        Some(s) => (Some(s.port), s.live),
        None => (None, Vec::new()),
    };
    build(port, &pairings, &live, Vec::new(), Vec::new())
}
