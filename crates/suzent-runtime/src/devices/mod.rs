//! The devices service: this install's device identity and endpoint, pairing, the paired-device
//! list, the peer outbox and the receiving side of peer messages.
//!
//! It owns its state and reaches the rest of the runtime only through [`DeviceHost`] (queue an
//! inbox message, create the chat that receives a device's messages, list, read and stop local
//! agents). `Runtime` holds one and delegates.
//!
//! - Outgoing: `agent_send` to `peer:<device>[/<agent>]` queues in the durable peer outbox and
//!   returns; the sender loop ([`send`]) delivers in order, one message at a time per device,
//!   retrying an unreachable device with capped backoff until the retention expires; the
//!   receiver's receipts move a message to delivered, then read or failed with the reason.
//! - Incoming ([`receive`]): a paired device's request is checked against its scope every time;
//!   a message is queued idempotently in the inbox under `peer:<device id>:<message id>` (the
//!   same id with other content is refused as a conflict) and enters the target chat as
//!   untrusted input labelled with the sender; its turn runs under the peer profile.
//! - Revoking closes live connections at once (close code `REVOKED`); the other side fails its
//!   queued messages with "revoked" and stops retrying.

mod address;
mod host;
mod receive;
mod send;

pub use address::{PEER_PREFIX, PeerAddressText, parse_peer_address, peer_address};
pub(crate) use host::RuntimeDeviceHost;

use crate::error::RuntimeError;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};
use suzent_core::{Config, PermissionMode, new_id};
use suzent_devices::wire::{Refusal, RemoteAgent, Request, Response, close};
use suzent_devices::{
    DeviceId, DeviceIdentity, DeviceNode, Disconnect, JoinSession, KeyStorage, KeyStorePreference,
    NodeConfig, NodeEvent, PairingSession, PairingState, PairingTicket, PeerAddress, PeerInfo,
};
use suzent_store::{
    ChatRecord, DeviceRecord, DeviceScope, DeviceState, InboxMessage, NewDevice, NewInboxMessage,
    NewPeerMessage, PeerMessage, PeerMessageStatus, Store,
};
use suzent_tools::AgentSummary;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The inbox kind of messages from paired devices.
pub const PEER_MESSAGE_KIND: &str = "peer_message";

/// The permission mode a paired device's message runs under on this device: the chat's mode,
/// but at most the user's default mode and never full access (the turn is headless too, so
/// what would ask is refused).
pub fn peer_mode(chat_mode: PermissionMode, default_mode: PermissionMode) -> PermissionMode {
    let rank = |m: PermissionMode| match m {
        PermissionMode::Default => 0,
        PermissionMode::Auto => 1,
        PermissionMode::FullAccess => 2,
    };
    let mode = if rank(chat_mode) <= rank(default_mode) {
        chat_mode
    } else {
        default_mode
    };
    if mode == PermissionMode::FullAccess {
        PermissionMode::Auto
    } else {
        mode
    }
}

/// What the devices service needs from the rest of the runtime.
#[async_trait]
pub(crate) trait DeviceHost: Send + Sync + 'static {
    /// The configuration now.
    fn config(&self) -> Config;
    /// Queues an inbox message and wakes the dispatcher.
    async fn enqueue(&self, message: NewInboxMessage) -> Result<InboxMessage, RuntimeError>;
    /// Creates the chat that receives a device's messages.
    async fn create_peer_chat(&self, title: String) -> Result<ChatRecord, RuntimeError>;
    /// A top-level chat (not a sub-agent), if it exists.
    async fn top_level_chat(&self, chat_id: &str) -> Result<Option<ChatRecord>, RuntimeError>;
    /// The local agents a paired device may address.
    async fn agents(&self) -> Result<Vec<RemoteAgent>, RuntimeError>;
    /// An agent's visible transcript within `budget` characters.
    async fn read(&self, chat_id: &str, budget: usize) -> Result<String, RuntimeError>;
    /// Stops an agent's running turn.
    async fn stop(&self, chat_id: &str) -> Result<String, RuntimeError>;
}

/// This install as a device.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThisDevice {
    /// Full device id (the public key).
    pub id: String,
    /// Short id (`peer:<short>` on other devices).
    pub short_id: String,
    /// Name other devices see.
    pub name: String,
    /// Platform.
    pub platform: String,
    /// Key fingerprint to compare.
    pub fingerprint: String,
    /// Where the secret key is, in words.
    pub key_storage: String,
    /// Whether the secret key is in the OS keychain (else in a private file).
    pub key_in_keychain: bool,
    /// Relays on.
    pub relay: bool,
    /// LAN discovery on.
    pub discovery: bool,
    /// Whether the endpoint runs in this process.
    pub running: bool,
    /// Direct addresses (when running).
    pub addrs: Vec<String>,
}

/// A paired device with its live status.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceView {
    /// The pairing.
    pub device: DeviceRecord,
    /// A connection is up now (as seen by this process).
    pub online: bool,
    /// Messages to it not delivered yet.
    pub queued: u32,
    /// Messages to it that failed.
    pub failed: u32,
}

/// A device seen on the LAN: a suggestion only. `paired` is true only when its key is the
/// pinned key of a pairing, whatever name it advertises.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NearbyView {
    /// The key it advertises.
    pub id: String,
    /// Its short id.
    pub short_id: String,
    /// The name it advertises.
    pub name: String,
    /// The platform it advertises.
    pub platform: String,
    /// Its key fingerprint.
    pub fingerprint: String,
    /// The addresses it advertises.
    pub addrs: Vec<String>,
    /// Its key is paired here.
    pub paired: bool,
}

/// The other device during pairing.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PeerSummary {
    /// Full device id.
    pub id: String,
    /// Short id.
    pub short_id: String,
    /// Name.
    pub name: String,
    /// Platform.
    pub platform: String,
    /// Key fingerprint.
    pub fingerprint: String,
}

/// Where a pairing started here is.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairingStatus {
    /// `waiting`, `confirming`, `paired`, `failed` or `none`.
    pub state: String,
    /// Wrong codes tried (of 5).
    pub wrong_codes: u32,
    /// The joining device (confirming, paired).
    pub peer: Option<PeerSummary>,
    /// The words to compare (confirming).
    pub words: Vec<String>,
    /// Why it failed.
    pub reason: Option<String>,
    /// Seconds the code stays valid.
    pub expires_in_secs: u32,
}

/// A pairing code to show.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairingOffer {
    /// The code to type on the other device.
    pub code: String,
    /// The same as a link (the QR code's content).
    pub link: String,
    /// The QR code as an SVG document.
    pub qr_svg: String,
    /// The QR code drawn with Unicode blocks (for a terminal).
    pub qr_text: String,
    /// Seconds the code stays valid.
    pub expires_in_secs: u32,
    /// This device (what the other side will show).
    pub this_device: PeerSummary,
}

/// A device being joined, waiting for this user's confirmation of the words.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JoinOffer {
    /// The device that showed the code.
    pub peer: PeerSummary,
    /// The words to compare with its screen.
    pub words: Vec<String>,
}

fn summary_of(id: &DeviceId, name: &str, platform: &str) -> PeerSummary {
    PeerSummary {
        id: id.encode(),
        short_id: id.short(),
        name: name.to_string(),
        platform: platform.to_string(),
        fingerprint: id.fingerprint(),
    }
}

fn invalid(field: &str, message: impl Into<String>) -> RuntimeError {
    RuntimeError::InvalidInput {
        field: field.into(),
        message: message.into(),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The host name, as the default device name.
fn host_name() -> String {
    let from_env = std::env::var("COMPUTERNAME").ok();
    let from_file = || {
        ["/proc/sys/kernel/hostname", "/etc/hostname"]
            .iter()
            .find_map(|p| std::fs::read_to_string(p).ok())
    };
    let from_cmd = || {
        std::process::Command::new("hostname")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    from_env
        .or_else(from_file)
        .or_else(from_cmd)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "Suzent device".to_string())
}

/// The platform name other devices see.
fn platform() -> String {
    std::env::consts::OS.to_string()
}

/// The devices service.
pub struct Devices {
    store: Store,
    dir: PathBuf,
    host: OnceLock<Arc<dyn DeviceHost>>,
    identity: Mutex<Option<DeviceIdentity>>,
    node: tokio::sync::Mutex<Option<DeviceNode>>,
    started: AtomicBool,
    /// This process as a lease owner of the peer outbox.
    owner: String,
    /// Wakes the sender loop: a message was queued or a device came online.
    wake: Arc<Notify>,
    /// Devices a send is in flight to, in this process.
    in_flight: Mutex<std::collections::HashSet<String>>,
    pairing: Mutex<Option<PairingSession>>,
    joining: tokio::sync::Mutex<Option<JoinSession>>,
    /// When each device was last dialed by the keep-connected loop, and the wait before the next.
    dials: Mutex<HashMap<String, (Instant, Duration)>>,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for Devices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Devices")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Devices {
    /// The service over `store`, keeping its files under `data_dir/devices`.
    pub(crate) fn new(store: Store, data_dir: &Path) -> Devices {
        Devices {
            store,
            dir: data_dir.join("devices"),
            host: OnceLock::new(),
            identity: Mutex::new(None),
            node: tokio::sync::Mutex::new(None),
            started: AtomicBool::new(false),
            owner: format!("devices-{}", new_id()),
            wake: Arc::new(Notify::new()),
            in_flight: Mutex::new(std::collections::HashSet::new()),
            pairing: Mutex::new(None),
            joining: tokio::sync::Mutex::new(None),
            dials: Mutex::new(HashMap::new()),
            shutdown: CancellationToken::new(),
        }
    }

    /// Connects the service to the runtime (once, at open).
    pub(crate) fn set_host(&self, host: Arc<dyn DeviceHost>) {
        let _ = self.host.set(host);
    }

    fn host(&self) -> Result<&Arc<dyn DeviceHost>, RuntimeError> {
        self.host.get().ok_or_else(|| {
            invalid(
                "devices",
                "the devices service is not connected to a runtime",
            )
        })
    }

    fn identity(&self) -> Result<DeviceIdentity, RuntimeError> {
        let mut slot = lock(&self.identity);
        if let Some(id) = slot.as_ref() {
            return Ok(id.clone());
        }
        let id = DeviceIdentity::load_or_create(&self.dir, KeyStorePreference::Auto)?;
        *slot = Some(id.clone());
        Ok(id)
    }

    fn name(&self, config: &Config) -> String {
        config.devices.name.clone().unwrap_or_else(host_name)
    }

    /// This install as a device (creating its key the first time).
    ///
    /// Errors: [`RuntimeError::Device`] when the key cannot be created or read.
    pub async fn this_device(&self) -> Result<ThisDevice, RuntimeError> {
        let identity = self.identity()?;
        let config = self.host()?.config();
        let id = identity.device_id();
        let node = self.node.lock().await.clone();
        Ok(ThisDevice {
            id: id.encode(),
            short_id: id.short(),
            name: self.name(&config),
            platform: platform(),
            fingerprint: id.fingerprint(),
            key_storage: identity.storage().describe(),
            key_in_keychain: matches!(identity.storage(), KeyStorage::Keychain { .. }),
            relay: config.devices.relay,
            discovery: config.devices.discovery,
            running: node.is_some(),
            addrs: node
                .map(|n| n.addrs().iter().map(|a| a.to_string()).collect())
                .unwrap_or_default(),
        })
    }

    /// The endpoint, bound on first use.
    async fn node(&self) -> Result<DeviceNode, RuntimeError> {
        let mut slot = self.node.lock().await;
        if let Some(node) = slot.as_ref() {
            return Ok(node.clone());
        }
        let identity = self.identity()?;
        let host = Arc::clone(self.host()?);
        let config = host.config();
        let bind = config
            .devices
            .bind
            .iter()
            .map(|a| a.parse::<SocketAddr>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| invalid("devices.bind", e.to_string()))?;
        let remembered = std::fs::read_to_string(self.dir.join("port"))
            .ok()
            .and_then(|p| p.trim().parse::<u16>().ok())
            .unwrap_or(0);
        let node_config = NodeConfig {
            name: self.name(&config),
            platform: platform(),
            relay: config.devices.relay,
            bind,
            port: remembered,
            discovery: config.devices.discovery,
        };
        let handler = Arc::new(receive::Receiver {
            store: self.store.clone(),
            host,
            name: node_config.name.clone(),
            platform: node_config.platform.clone(),
            loopback_ok: node_config.bind.iter().any(|a| a.ip().is_loopback()),
        });
        let node = DeviceNode::bind(&identity, node_config, handler).await?;
        if let Some(port) = node.bound_port()
            && port != remembered
        {
            let _ = std::fs::create_dir_all(&self.dir);
            if let Err(e) = std::fs::write(self.dir.join("port"), port.to_string()) {
                tracing::debug!("the device port is not remembered: {e}");
            }
        }
        tracing::info!(device = %identity.device_id().short(), "device endpoint up");
        *slot = Some(node.clone());
        Ok(node)
    }

    /// Starts the endpoint and the service's loops (sending, receipts, staying connected to
    /// paired devices, closing revoked ones). Once per service; later calls do nothing.
    ///
    /// Errors: [`RuntimeError::Device`] when the key or the endpoint cannot be set up.
    pub async fn start(self: &Arc<Self>) -> Result<(), RuntimeError> {
        let node = self.node().await?;
        if self.started.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let me = Arc::clone(self);
        let events = node.subscribe();
        tokio::spawn(async move { me.event_loop(events).await });
        let me = Arc::clone(self);
        tokio::spawn(async move { me.send_loop().await });
        let me = Arc::clone(self);
        tokio::spawn(async move { me.tick_loop().await });
        Ok(())
    }

    /// Starts the endpoint and its loops when a pairing is active: what the
    /// app does at launch. An install that never paired opens no endpoint, publishes nothing
    /// and holds no relay connection until the user pairs (`pair`, `join`) or looks for nearby
    /// devices (`discover`). Returns whether it started.
    ///
    /// Errors: [`RuntimeError::Store`]; [`RuntimeError::Device`] as for [`Devices::start`].
    pub async fn start_if_paired(self: &Arc<Self>) -> Result<bool, RuntimeError> {
        let paired = self
            .store
            .devices()
            .await?
            .iter()
            .any(|d| d.state == DeviceState::Active);
        if paired {
            self.start().await?;
        }
        Ok(paired)
    }

    /// Closes every device connection and stops the loops.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        self.wake.notify_waiters();
        if let Some(node) = self.node.lock().await.take() {
            node.close().await;
        }
    }

    /// Every pairing with its live status.
    ///
    /// Errors: [`RuntimeError::Store`].
    pub async fn list(&self) -> Result<Vec<DeviceView>, RuntimeError> {
        let node = self.node.lock().await.clone();
        let outbox = self.store.peer_outbox(None).await?;
        let mut out = Vec::new();
        for device in self.store.devices().await? {
            let mine = outbox.iter().filter(|m| m.device_id == device.id);
            let (mut queued, mut failed) = (0u32, 0u32);
            for m in mine {
                match m.status {
                    PeerMessageStatus::Queued | PeerMessageStatus::Sending => queued += 1,
                    PeerMessageStatus::Failed => failed += 1,
                    _ => {}
                }
            }
            let online = match (&node, DeviceId::parse(&device.id)) {
                (Some(n), Ok(id)) => n.is_connected(&id),
                _ => false,
            };
            out.push(DeviceView {
                device,
                online,
                queued,
                failed,
            });
        }
        Ok(out)
    }

    /// Devices seen on the LAN (empty when discovery is off or the endpoint is not running).
    ///
    /// Errors: [`RuntimeError::Store`].
    pub async fn nearby(&self) -> Result<Vec<NearbyView>, RuntimeError> {
        let Some(node) = self.node.lock().await.clone() else {
            return Ok(Vec::new());
        };
        let paired: Vec<String> = self
            .store
            .devices()
            .await?
            .into_iter()
            .filter(|d| d.state == DeviceState::Active)
            .map(|d| d.id)
            .collect();
        Ok(node
            .nearby()
            .into_iter()
            .map(|n| NearbyView {
                id: n.device.encode(),
                short_id: n.device.short(),
                paired: paired.contains(&n.device.encode()),
                name: n.name,
                platform: n.platform,
                fingerprint: n.device.fingerprint(),
                addrs: n.addrs.iter().map(|a| a.to_string()).collect(),
            })
            .collect())
    }

    /// Listens `wait` for devices advertised on the LAN (starting the endpoint in this process
    /// if it is not running), then lists them as [`Devices::nearby`] does.
    ///
    /// Errors: [`RuntimeError::Device`] when the endpoint cannot start.
    pub async fn discover(&self, wait: Duration) -> Result<Vec<NearbyView>, RuntimeError> {
        self.node().await?;
        tokio::time::sleep(wait).await;
        self.nearby().await
    }

    async fn record(&self, id_or_short: &str) -> Result<DeviceRecord, RuntimeError> {
        self.store.device(id_or_short.trim()).await?.ok_or_else(|| {
            invalid(
                "device",
                format!("no paired device '{id_or_short}' (see `suzent devices list`)"),
            )
        })
    }

    /// Renames a paired device (here only).
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for an unknown device or a bad name.
    pub async fn rename(&self, device: &str, name: &str) -> Result<DeviceRecord, RuntimeError> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 64 || name.chars().any(char::is_control) {
            return Err(invalid(
                "name",
                format!("'{name}' must be 1 to 64 characters without control characters"),
            ));
        }
        let record = self.record(device).await?;
        Ok(self.store.rename_device(&record.id, name).await?)
    }

    /// Sets what a paired device may do here (`paused`: nothing).
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for an unknown or revoked device.
    pub async fn set_scope(
        &self,
        device: &str,
        scope: DeviceScope,
    ) -> Result<DeviceRecord, RuntimeError> {
        let record = self.record(device).await?;
        if record.state == DeviceState::Revoked {
            return Err(invalid(
                "device",
                format!("device '{}' is revoked; pair it again first", record.name),
            ));
        }
        Ok(self.store.set_device_scope(&record.id, scope).await?)
    }

    /// Revokes a pairing: closes live connections at once (the other device sees "revoked"),
    /// fails the messages queued for it, refuses it from now on. Pairing again is needed to talk.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for an unknown device.
    pub async fn revoke(&self, device: &str) -> Result<DeviceRecord, RuntimeError> {
        let record = self.record(device).await?;
        let updated = self
            .store
            .set_device_state(&record.id, DeviceState::Revoked, None)
            .await?;
        self.store
            .fail_device_messages(&record.id, "revoked: you revoked this device")
            .await?;
        if let (Some(node), Ok(id)) = (self.node.lock().await.clone(), DeviceId::parse(&record.id))
        {
            node.disconnect(&id, close::REVOKED, "revoked");
        }
        tracing::info!(device = %record.short_id, "pairing revoked");
        Ok(updated)
    }

    /// Opens a pairing window: a code and QR valid 10 minutes, for one device.
    ///
    /// Errors: [`RuntimeError::Device`] when the endpoint cannot start.
    pub async fn pair(&self) -> Result<PairingOffer, RuntimeError> {
        let node = self.node().await?;
        let session = node.open_pairing(suzent_devices::CODE_TTL).await?;
        let ticket = session.ticket().clone();
        let me = node.device_id();
        let offer = PairingOffer {
            code: ticket.code(),
            link: ticket.link(),
            qr_svg: ticket.qr_svg()?,
            qr_text: ticket.qr_text()?,
            expires_in_secs: u32::try_from(session.remaining().as_secs()).unwrap_or(u32::MAX),
            this_device: summary_of(&me, &node.config().name, &node.config().platform),
        };
        *lock(&self.pairing) = Some(session);
        Ok(offer)
    }

    /// The state of the pairing window opened here, waiting up to `wait` for a change.
    pub async fn pairing_status(&self, wait: Duration) -> PairingStatus {
        let Some(session) = lock(&self.pairing).clone() else {
            return PairingStatus {
                state: "none".into(),
                wrong_codes: 0,
                peer: None,
                words: Vec::new(),
                reason: None,
                expires_in_secs: 0,
            };
        };
        let state = if wait.is_zero() {
            session.state()
        } else {
            let now = session.state();
            if now.is_final() {
                now
            } else {
                session.changed(wait).await
            }
        };
        let expires = u32::try_from(session.remaining().as_secs()).unwrap_or(u32::MAX);
        let peer = |p: &PeerInfo| summary_of(&p.device, &p.name, &p.platform);
        match state {
            PairingState::Waiting { wrong_codes } => PairingStatus {
                state: "waiting".into(),
                wrong_codes,
                peer: None,
                words: Vec::new(),
                reason: None,
                expires_in_secs: expires,
            },
            PairingState::Confirming { peer: p, words } => PairingStatus {
                state: "confirming".into(),
                wrong_codes: 0,
                peer: Some(peer(&p)),
                words,
                reason: None,
                expires_in_secs: expires,
            },
            PairingState::Paired { peer: p } => PairingStatus {
                state: "paired".into(),
                wrong_codes: 0,
                peer: Some(peer(&p)),
                words: Vec::new(),
                reason: None,
                expires_in_secs: 0,
            },
            PairingState::Failed { reason } => PairingStatus {
                state: "failed".into(),
                wrong_codes: 0,
                peer: None,
                words: Vec::new(),
                reason: Some(reason),
                expires_in_secs: 0,
            },
        }
    }

    /// This user's answer to the words shown for the device joining the pairing opened here.
    ///
    /// Errors: [`RuntimeError::Device`] when no device is waiting for it.
    pub fn confirm_pairing(&self, accept: bool) -> Result<(), RuntimeError> {
        let session = lock(&self.pairing)
            .clone()
            .ok_or_else(|| invalid("pairing", "no pairing is open on this device"))?;
        Ok(session.confirm(accept)?)
    }

    /// Ends the pairing window opened here.
    pub fn cancel_pairing(&self) {
        if let Some(session) = lock(&self.pairing).take() {
            session.cancel();
        }
    }

    /// Starts joining the device that shows `code` (a code or a `suzent://pair` link): checks
    /// the code with it over a connection pinned to its key and returns the words to compare.
    ///
    /// Errors: [`RuntimeError::Device`]: a malformed code or link, an unreachable device, a
    /// wrong, expired, used or locked code.
    pub async fn join(&self, code: &str) -> Result<JoinOffer, RuntimeError> {
        let ticket = PairingTicket::parse(code)?;
        let node = self.node().await?;
        let session = node.join(&ticket).await?;
        let offer = JoinOffer {
            peer: summary_of(
                &session.peer().device,
                &session.peer().name,
                &session.peer().platform,
            ),
            words: session.words().to_vec(),
        };
        *self.joining.lock().await = Some(session);
        Ok(offer)
    }

    /// This user's answer to the words of the device being joined. When both users confirmed,
    /// the pairing is stored here too and returned.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] when no join is in progress,
    /// [`RuntimeError::Device`] when either side did not confirm.
    pub async fn finish_join(&self, accept: bool) -> Result<Option<DeviceRecord>, RuntimeError> {
        let session =
            self.joining.lock().await.take().ok_or_else(|| {
                invalid("pairing", "no device is being joined; enter a code first")
            })?;
        let result = session.finish(accept).await;
        if !accept {
            return Ok(None);
        }
        let peer = result?;
        Ok(Some(store_pairing(&self.store, &peer).await?))
    }

    /// The messages sent to a device (or all), oldest first.
    ///
    /// Errors: [`RuntimeError::Store`].
    pub async fn outbox(&self, device: Option<&str>) -> Result<Vec<PeerMessage>, RuntimeError> {
        let id = match device {
            Some(d) => Some(self.record(d).await?.id),
            None => None,
        };
        Ok(self.store.peer_outbox(id.as_deref()).await?)
    }

    // ---- the agent side: peer:<device>[/<agent>] ----

    async fn resolve(&self, address: &str) -> Result<(DeviceRecord, Option<String>), String> {
        let parsed = parse_peer_address(address)
            .ok_or_else(|| format!("'{address}' is not a peer address"))??;
        let record = self
            .store
            .device(&parsed.device)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| {
                format!(
                    "no paired device '{}'; agent_list shows paired devices as peer:<device>",
                    parsed.device
                )
            })?;
        match record.state {
            DeviceState::Active => Ok((record, parsed.agent)),
            DeviceState::Revoked => Err(format!(
                "device {} ({}) is revoked here; the user must pair it again before agents can talk to it",
                record.name, record.short_id
            )),
            DeviceState::RevokedByPeer => Err(format!(
                "device {} ({}) revoked its pairing with this device: messages to it are refused; the user must pair the devices again",
                record.name, record.short_id
            )),
        }
    }

    /// Queues `text` from chat `caller` for `address` (`peer:<device>[/<agent>]`) in the
    /// durable outbox and returns the message id at once.
    pub async fn send(&self, caller: &str, address: &str, text: &str) -> Result<String, String> {
        let (record, agent) = self.resolve(address).await?;
        if text.chars().count() > suzent_devices::wire::MAX_MESSAGE_CHARS {
            return Err(format!(
                "the message is longer than {} characters",
                suzent_devices::wire::MAX_MESSAGE_CHARS
            ));
        }
        let message = self
            .store
            .queue_peer_message(&NewPeerMessage {
                id: new_id(),
                device_id: record.id,
                target: agent,
                sender: caller.to_string(),
                text: text.to_string(),
            })
            .await
            .map_err(|e| e.to_string())?;
        self.wake.notify_one();
        Ok(message.id)
    }

    async fn peer_address_of(
        &self,
        record: &DeviceRecord,
    ) -> Result<(DeviceNode, PeerAddress), String> {
        let node = self.node.lock().await.clone().ok_or_else(|| {
            "the device endpoint is not running in this process (it runs in the app or `suzent serve`)".to_string()
        })?;
        let device = DeviceId::parse(&record.id).map_err(|e| e.to_string())?;
        Ok((node, address_of(record, device)))
    }

    /// The status lines of the messages sent to a device, for agents.
    async fn outbox_lines(&self, record: &DeviceRecord) -> String {
        let Ok(messages) = self.store.peer_outbox(Some(&record.id)).await else {
            return String::new();
        };
        let recent: Vec<&PeerMessage> = messages.iter().rev().take(10).collect();
        if recent.is_empty() {
            return String::new();
        }
        let mut out = format!("Messages sent to {} (newest first):\n", record.name);
        for m in recent {
            let preview: String = m.text.chars().take(60).collect();
            let status = match (&m.status, &m.reason, &m.last_error) {
                (PeerMessageStatus::Failed, Some(r), _) => format!("failed: {r}"),
                (PeerMessageStatus::Read, Some(n), _) => format!("read ({n})"),
                (PeerMessageStatus::Queued, _, Some(e)) => format!("queued (last try: {e})"),
                (s, _, _) => s.as_str().to_string(),
            };
            out.push_str(&format!("- {} \"{preview}\": {status}\n", m.id));
        }
        out
    }

    /// `agent_read` of a peer address: the remote transcript when the device's scope allows,
    /// and the status of the messages sent to it.
    pub async fn read(&self, address: &str, budget: usize) -> Result<String, String> {
        let (record, agent) = self.resolve(address).await?;
        let status = self.outbox_lines(&record).await;
        let (node, peer) = self.peer_address_of(&record).await?;
        let answer = node
            .request(
                &peer,
                &Request::ReadAgent {
                    agent,
                    budget_chars: budget,
                },
            )
            .await;
        let remote = match answer {
            Ok(Response::Text { text }) => text,
            Ok(Response::Refused { message, .. }) => format!("{} refused: {message}", record.name),
            Ok(other) => format!("unexpected answer from {}: {other:?}", record.name),
            Err(e) => format!(
                "{} cannot be read now: {e} (last seen {})",
                record.name,
                record
                    .last_seen
                    .map(|t| t.to_rfc3339())
                    .unwrap_or_else(|| "never".into())
            ),
        };
        Ok(if status.is_empty() {
            remote
        } else {
            format!("{status}\n{remote}")
        })
    }

    /// `agent_stop` of a peer address (needs the `read` scope there).
    pub async fn stop(&self, address: &str) -> Result<String, String> {
        let (record, agent) = self.resolve(address).await?;
        let (node, peer) = self.peer_address_of(&record).await?;
        match node.request(&peer, &Request::StopAgent { agent }).await {
            Ok(Response::Text { text }) => Ok(text),
            Ok(Response::Refused { message, .. }) => {
                Err(format!("{} refused: {message}", record.name))
            }
            Ok(other) => Err(format!("unexpected answer from {}: {other:?}", record.name)),
            Err(e) => Err(format!("{} cannot be reached: {e}", record.name)),
        }
    }

    /// What `agent_list` shows of paired devices: `peer:<device>` for each (status online,
    /// offline, paused by it, revoked), and when `recent` and online, its agents as
    /// `peer:<device>/<agent>`.
    pub async fn agents_for_list(&self, recent: bool) -> Vec<AgentSummary> {
        let Ok(views) = self.list().await else {
            return Vec::new();
        };
        let node = self.node.lock().await.clone();
        let mut out = Vec::new();
        for view in views {
            let d = &view.device;
            if d.state == DeviceState::Revoked {
                continue;
            }
            let mut status = match (d.state, view.online) {
                (DeviceState::RevokedByPeer, _) => "revoked by the device".to_string(),
                (_, true) => "online".to_string(),
                (_, false) if node.is_none() => {
                    "unknown (device endpoint not running here)".to_string()
                }
                (_, false) => "offline".to_string(),
            };
            if let Some(note) = &d.remote_note {
                status.push_str(&format!("; {note}"));
            }
            if view.queued > 0 {
                status.push_str(&format!("; {} message(s) queued", view.queued));
            }
            out.push(AgentSummary {
                id: peer_address(&d.short_id, None),
                title: format!("{} (paired {} device)", d.name, d.platform),
                kind: "peer".into(),
                status,
                parent: None,
                updated: d.last_seen.unwrap_or(d.paired_at),
            });
            if recent
                && view.online
                && d.state == DeviceState::Active
                && let Some(node) = &node
                && let Ok(id) = DeviceId::parse(&d.id)
                && let Ok(Ok(Response::Agents { agents })) = tokio::time::timeout(
                    Duration::from_secs(3),
                    node.request(&address_of(d, id), &Request::ListAgents),
                )
                .await
            {
                for a in agents
                    .into_iter()
                    .take(suzent_tools::agent_tools::MAX_RECENT_LISTED)
                {
                    out.push(AgentSummary {
                        id: peer_address(&d.short_id, Some(&a.id)),
                        title: format!("{} on {}", a.title, d.name),
                        kind: "peer_agent".into(),
                        status: a.status,
                        parent: None,
                        updated: chrono::DateTime::parse_from_rfc3339(&a.updated)
                            .map(|t| t.with_timezone(&chrono::Utc))
                            .unwrap_or_else(|_| chrono::Utc::now()),
                    });
                }
            }
        }
        out
    }

    // ---- loops ----

    async fn event_loop(self: Arc<Self>, mut events: tokio::sync::broadcast::Receiver<NodeEvent>) {
        loop {
            let event = tokio::select! {
                e = events.recv() => e,
                () = self.shutdown.cancelled() => return,
            };
            match event {
                Ok(NodeEvent::Connected { peer }) => {
                    let id = peer.encode();
                    lock(&self.dials).remove(&id);
                    if let Err(e) = self.store.device_seen(&id, None).await {
                        tracing::debug!("device {}: {e}", peer.short());
                    }
                    let _ = self.store.wake_device_messages(&id).await;
                    self.wake.notify_one();
                    let me = Arc::clone(&self);
                    tokio::spawn(async move { me.say_hello(peer).await });
                }
                Ok(NodeEvent::Disconnected { peer, reason }) => {
                    let note = match reason {
                        Disconnect::RevokedByPeer => "revoked by the device",
                        Disconnect::NotPairedByPeer => "the device no longer knows this device",
                        _ => continue,
                    };
                    self.peer_revoked(&peer, note).await;
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => return,
            }
        }
    }

    /// The other device revoked us (or forgot us): stop talking to it, fail what waits.
    async fn peer_revoked(&self, peer: &DeviceId, note: &str) {
        let id = peer.encode();
        match self.store.device(&id).await {
            Ok(Some(d)) if d.state == DeviceState::Active => {
                tracing::info!(device = %peer.short(), "{note}");
                let _ = self
                    .store
                    .set_device_state(&id, DeviceState::RevokedByPeer, Some(note))
                    .await;
                let _ = self.store.fail_device_messages(&id, "revoked").await;
            }
            _ => {}
        }
    }

    async fn say_hello(&self, peer: DeviceId) {
        let Ok(Some(record)) = self.store.device(&peer.encode()).await else {
            return;
        };
        let Some(node) = self.node.lock().await.clone() else {
            return;
        };
        let hello = Request::Hello {
            name: node.config().name.clone(),
            platform: node.config().platform.clone(),
            addrs: node.addrs().iter().map(|a| a.to_string()).collect(),
        };
        match node.request(&address_of(&record, peer), &hello).await {
            Ok(Response::Refused {
                reason: Refusal::Paused,
                message,
            }) => {
                let _ = self.store.set_device_note(&record.id, Some(&message)).await;
            }
            Ok(_) => {
                if record.remote_note.is_some() {
                    let _ = self.store.set_device_note(&record.id, None).await;
                }
            }
            Err(suzent_devices::DeviceError::Revoked { .. }) => {
                self.peer_revoked(&peer, "revoked by the device").await;
            }
            Err(e) => tracing::debug!(device = %peer.short(), "hello failed: {e}"),
        }
    }

    /// Every 250 ms: close connections of devices revoked (also by another process, e.g. the
    /// CLI); every second: receipts, and dial paired devices that are not connected.
    async fn tick_loop(self: Arc<Self>) {
        let mut tick: u64 = 0;
        let mut interval = tokio::time::interval(Duration::from_millis(250));
        loop {
            tokio::select! {
                _ = interval.tick() => {}
                () = self.shutdown.cancelled() => return,
            }
            tick += 1;
            let Some(node) = self.node.lock().await.clone() else {
                continue;
            };
            let devices = match self.store.devices().await {
                Ok(d) => d,
                Err(e) => {
                    tracing::debug!("devices tick: {e}");
                    continue;
                }
            };
            for d in &devices {
                if let Ok(id) = DeviceId::parse(&d.id)
                    && d.state != DeviceState::Active
                    && node.is_connected(&id)
                {
                    node.disconnect(&id, close::REVOKED, "revoked");
                }
            }
            if tick % 4 == 0 {
                self.report_outcomes(&node).await;
                self.keep_connected(&node, &devices).await;
            }
            if tick % 240 == 0 {
                self.expire().await;
            }
        }
    }

    async fn keep_connected(self: &Arc<Self>, node: &DeviceNode, devices: &[DeviceRecord]) {
        for d in devices.iter().filter(|d| d.state == DeviceState::Active) {
            let Ok(id) = DeviceId::parse(&d.id) else {
                continue;
            };
            if node.is_connected(&id) {
                continue;
            }
            let due = {
                let mut dials = lock(&self.dials);
                let entry = dials.entry(d.id.clone()).or_insert((
                    Instant::now() - Duration::from_secs(3600),
                    Duration::from_secs(1),
                ));
                if entry.0.elapsed() < entry.1 {
                    false
                } else {
                    entry.0 = Instant::now();
                    entry.1 = (entry.1 * 2).min(Duration::from_secs(30));
                    true
                }
            };
            if due {
                let node = node.clone();
                let peer = address_of(d, id);
                let me = Arc::clone(self);
                tokio::spawn(async move {
                    if let Err(suzent_devices::DeviceError::Revoked { .. }) =
                        node.connect(&peer).await
                    {
                        me.peer_revoked(&peer.device, "revoked by the device").await;
                    }
                });
            }
        }
    }

    async fn expire(&self) {
        let Ok(host) = self.host() else {
            return;
        };
        let hours = host.config().devices.retention_hours;
        let before = chrono::Utc::now() - chrono::TimeDelta::hours(i64::from(hours));
        match self
            .store
            .expire_peer_messages(
                before,
                &format!("expired: not delivered within {hours} hours"),
            )
            .await
        {
            Ok(0) => {}
            Ok(n) => tracing::info!("{n} peer message(s) expired undelivered"),
            Err(e) => tracing::debug!("expiring peer messages: {e}"),
        }
    }
}

fn address_of(record: &DeviceRecord, device: DeviceId) -> PeerAddress {
    PeerAddress {
        device,
        addrs: record.addrs.iter().filter_map(|a| a.parse().ok()).collect(),
        relay: record.relay.clone(),
    }
}

/// Stores a confirmed pairing.
pub(crate) async fn store_pairing(
    store: &Store,
    peer: &PeerInfo,
) -> Result<DeviceRecord, RuntimeError> {
    Ok(store
        .pair_device(&NewDevice {
            id: peer.device.encode(),
            short_id: peer.device.short(),
            name: peer.name.clone(),
            platform: peer.platform.clone(),
            fingerprint: peer.device.fingerprint(),
            addrs: peer.addrs.iter().map(|a| a.to_string()).collect(),
            relay: peer.relay.clone(),
        })
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_peer_turn_is_never_full_access_and_never_above_the_default_mode() {
        use PermissionMode::*;
        let cases = [
            ((FullAccess, FullAccess), Auto),
            ((FullAccess, Default), Default),
            ((Auto, Default), Default),
            ((Default, FullAccess), Default),
            ((Auto, Auto), Auto),
        ];
        for ((chat, default), expected) in cases {
            assert_eq!(peer_mode(chat, default), expected, "{chat:?} {default:?}");
        }
    }
}

/// The devices service over a store with one paired device, its endpoint never started: what
/// the device list, the outbox, renaming and revoking do without the network.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod service_tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;

    /// The fixture, the service, and a device paired with a real key made for the test.
    async fn paired() -> (TestServices, Devices, DeviceRecord) {
        let s = TestServices::open(Config::default()).await;
        let devices = Devices::new(s.store.clone(), &s.paths.data_dir);
        let key_dir = s.paths.data_dir.join("laptop-key");
        let laptop = DeviceIdentity::load_or_create(&key_dir, KeyStorePreference::File).unwrap();
        let id = laptop.device_id();
        let record = s
            .store
            .pair_device(&NewDevice {
                id: id.encode(),
                short_id: id.short(),
                name: "Laptop".into(),
                platform: "linux".into(),
                fingerprint: id.fingerprint(),
                addrs: Vec::new(),
                relay: None,
            })
            .await
            .unwrap();
        (s, devices, record)
    }

    #[tokio::test]
    async fn a_message_to_a_paired_device_is_queued_and_counted_in_the_list() -> anyhow::Result<()>
    {
        let (s, devices, laptop) = paired().await;
        let chat = s.chat().await;
        let address = format!("{PEER_PREFIX}{}", laptop.short_id);
        let id = devices
            .send(&chat.id, &address, "the build is green")
            .await
            .unwrap();
        let outbox: Vec<(String, String, String, PeerMessageStatus)> = devices
            .outbox(None)
            .await?
            .into_iter()
            .map(|m| (m.id, m.device_id, m.text, m.status))
            .collect();
        assert_eq!(
            outbox,
            vec![(
                id,
                laptop.id.clone(),
                "the build is green".to_string(),
                PeerMessageStatus::Queued
            )]
        );
        let listed: Vec<(String, bool, u32, u32)> = devices
            .list()
            .await?
            .into_iter()
            .map(|v| (v.device.id, v.online, v.queued, v.failed))
            .collect();
        assert_eq!(listed, vec![(laptop.id.clone(), false, 1, 0)]);
        Ok(())
    }

    #[tokio::test]
    async fn a_revoked_device_fails_its_queued_messages_and_is_refused_from_then_on()
    -> anyhow::Result<()> {
        let (s, devices, laptop) = paired().await;
        let chat = s.chat().await;
        let address = format!("{PEER_PREFIX}{}", laptop.short_id);
        devices.send(&chat.id, &address, "first").await.unwrap();
        let revoked = devices.revoke(&laptop.short_id).await?;
        assert_eq!(revoked.state, DeviceState::Revoked);
        let listed: Vec<(u32, u32)> = devices
            .list()
            .await?
            .into_iter()
            .map(|v| (v.queued, v.failed))
            .collect();
        assert_eq!(listed, vec![(0, 1)]);
        assert_eq!(
            devices.send(&chat.id, &address, "second").await,
            Err(format!(
                "device Laptop ({}) is revoked here; the user must pair it again before agents can talk to it",
                laptop.short_id
            ))
        );
        let err = devices
            .set_scope(&laptop.short_id, DeviceScope::Read)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, RuntimeError::InvalidInput { field, .. } if field == "device"),
            "{err}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_rename_is_stored_and_a_bad_name_or_unknown_device_is_refused() -> anyhow::Result<()>
    {
        let (_s, devices, laptop) = paired().await;
        let renamed = devices.rename(&laptop.short_id, "  Work laptop ").await?;
        assert_eq!(renamed.name, "Work laptop");
        let field = |e: RuntimeError| match e {
            RuntimeError::InvalidInput { field, .. } => field,
            other => panic!("{other}"),
        };
        assert_eq!(
            (
                field(
                    devices
                        .rename(&laptop.short_id, "\u{7}bell")
                        .await
                        .unwrap_err()
                ),
                field(devices.rename("nope", "Desk").await.unwrap_err())
            ),
            ("name".to_string(), "device".to_string())
        );
        assert_eq!(devices.list().await?[0].device.name, "Work laptop");
        Ok(())
    }
}
