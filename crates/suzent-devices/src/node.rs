//! The device endpoint: one iroh endpoint with this install's key, serving the peer protocol
//! and pairing, keeping one live connection per paired device, and (optionally) advertising and
//! listening on the LAN.

use crate::error::DeviceError;
use crate::id::DeviceId;
use crate::identity::DeviceIdentity;
use crate::pairing::{self, PairingSession, Window};
use crate::wire::{
    FrameError, PAIR_ALPN, PEER_ALPN, Request, Response, close, read_frame, write_frame,
};
use async_trait::async_trait;
use iroh::endpoint::{Connection, ConnectionError, presets};
use iroh::{Endpoint, EndpointAddr, RelayMode, TransportAddr};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// How long dialing a device may take.
pub const DIAL_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one request may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// The LAN discovery service name (`<id>._suzent._udp.local`).
pub const DISCOVERY_SERVICE: &str = "suzent";

/// How the endpoint is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConfig {
    /// This device's name (shown to paired devices and in LAN adverts).
    pub name: String,
    /// `linux`, `macos`, `windows`...
    pub platform: String,
    /// Use relays (iroh's public relays, and its DNS address lookup) to reach devices on other
    /// networks. Off: direct connections only (LAN, or addresses given).
    pub relay: bool,
    /// Addresses to bind (empty: every interface, IPv4 and IPv6).
    pub bind: Vec<SocketAddr>,
    /// Port for the addresses without one (port 0, or every interface when `bind` is empty);
    /// 0: any. A taken port falls back to any.
    pub port: u16,
    /// Advertise this device and listen for adverts on the LAN (mDNS-like).
    pub discovery: bool,
}

/// Where to reach a device: its pinned key and the addresses last known for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerAddress {
    /// The pinned key.
    pub device: DeviceId,
    /// Direct addresses.
    pub addrs: Vec<SocketAddr>,
    /// Home relay URL.
    pub relay: Option<String>,
}

/// Whether a connecting device is let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Paired (active or paused: a paused device's requests are refused one by one).
    Admit,
    /// Closed at once with this code ([`close`]) and reason.
    Refuse {
        /// A [`close`] code.
        code: u32,
        /// Shown to the other side.
        reason: String,
    },
}

/// What a paired device learns about the other during pairing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerInfo {
    /// The pinned key.
    pub device: DeviceId,
    /// Its name.
    pub name: String,
    /// Its platform.
    pub platform: String,
    /// Its direct addresses.
    pub addrs: Vec<SocketAddr>,
    /// Its relay.
    pub relay: Option<String>,
}

/// The application side of the endpoint (the runtime's devices service).
#[async_trait]
pub trait PeerHandler: Send + Sync + 'static {
    /// Whether `peer` may hold a connection.
    async fn admit(&self, peer: &DeviceId) -> Admission;
    /// Answers one request of `peer` (called for every request; check the scope each time).
    async fn handle(&self, peer: &DeviceId, request: Request) -> Response;
    /// Stores a pairing both users confirmed (the showing side). An error ends the pairing
    /// unconfirmed.
    async fn paired(&self, peer: &PeerInfo) -> Result<(), String>;
}

/// A connection event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeEvent {
    /// A connection to `peer` is up (dialed or accepted).
    Connected {
        /// The device.
        peer: DeviceId,
    },
    /// The last connection to `peer` ended.
    Disconnected {
        /// The device.
        peer: DeviceId,
        /// Why.
        reason: Disconnect,
    },
}

/// Why a connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disconnect {
    /// The other device revoked the pairing.
    RevokedByPeer,
    /// The other device does not know this one.
    NotPairedByPeer,
    /// This side closed it.
    Local,
    /// The other side closed it normally, or it was lost (timeout, reset).
    Lost(String),
}

/// A device seen on the LAN. Only a suggestion: it is a paired device only if its key is the
/// pinned key of a pairing, whatever its name says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearbyDevice {
    /// The key it advertises.
    pub device: DeviceId,
    /// The name it advertises.
    pub name: String,
    /// The platform it advertises.
    pub platform: String,
    /// The addresses it advertises.
    pub addrs: Vec<SocketAddr>,
}

struct Live {
    conn: Connection,
}

pub(crate) struct NodeInner {
    pub(crate) endpoint: Endpoint,
    pub(crate) config: NodeConfig,
    pub(crate) handler: Arc<dyn PeerHandler>,
    conns: Mutex<HashMap<DeviceId, Vec<Live>>>,
    events: broadcast::Sender<NodeEvent>,
    pub(crate) pairing: Mutex<Option<Arc<Window>>>,
    nearby: Mutex<HashMap<DeviceId, NearbyDevice>>,
    shutdown: CancellationToken,
    _mdns: Option<iroh_mdns_address_lookup::MdnsAddressLookup>,
}

/// The device endpoint. Cheap to clone.
#[derive(Clone)]
pub struct DeviceNode {
    pub(crate) inner: Arc<NodeInner>,
}

impl std::fmt::Debug for DeviceNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceNode")
            .field("device", &self.device_id())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn unreachable(peer: &DeviceId, message: impl std::fmt::Display) -> DeviceError {
    DeviceError::Unreachable {
        peer: peer.short(),
        message: message.to_string(),
    }
}

/// What a closed connection says about why.
fn disconnect_of(err: &ConnectionError) -> Disconnect {
    match err {
        ConnectionError::ApplicationClosed(c) => match u32::try_from(c.error_code.into_inner()) {
            Ok(close::REVOKED) => Disconnect::RevokedByPeer,
            Ok(close::NOT_PAIRED) => Disconnect::NotPairedByPeer,
            _ => Disconnect::Lost(format!(
                "closed by the other device ({})",
                String::from_utf8_lossy(&c.reason)
            )),
        },
        ConnectionError::LocallyClosed => Disconnect::Local,
        other => Disconnect::Lost(other.to_string()),
    }
}

/// The error of a request on a connection that may have been closed by the other side.
fn request_error(peer: &DeviceId, conn: &Connection, e: impl std::fmt::Display) -> DeviceError {
    match conn.close_reason().as_ref().map(disconnect_of) {
        Some(Disconnect::RevokedByPeer) => DeviceError::Revoked { peer: peer.short() },
        Some(Disconnect::NotPairedByPeer) => DeviceError::NotPaired { peer: peer.short() },
        _ => unreachable(peer, e),
    }
}

impl DeviceNode {
    /// Binds the endpoint and starts serving.
    ///
    /// Errors: [`DeviceError::Bind`] when no socket can be bound.
    pub async fn bind(
        identity: &DeviceIdentity,
        config: NodeConfig,
        handler: Arc<dyn PeerHandler>,
    ) -> Result<DeviceNode, DeviceError> {
        let endpoint = match Self::endpoint(identity, &config, config.port).await {
            Ok(e) => e,
            Err(first) if config.port != 0 => {
                tracing::info!(
                    "device port {} is taken ({first}); binding any port",
                    config.port
                );
                Self::endpoint(identity, &config, 0).await?
            }
            Err(e) => return Err(e),
        };
        let mdns = if config.discovery {
            match Self::discovery(&endpoint, &config) {
                Ok(m) => Some(m),
                Err(e) => {
                    tracing::warn!("LAN discovery is off: {e}");
                    None
                }
            }
        } else {
            None
        };
        let (events, _) = broadcast::channel(256);
        let node = DeviceNode {
            inner: Arc::new(NodeInner {
                endpoint,
                config,
                handler,
                conns: Mutex::new(HashMap::new()),
                events,
                pairing: Mutex::new(None),
                nearby: Mutex::new(HashMap::new()),
                shutdown: CancellationToken::new(),
                _mdns: mdns.clone(),
            }),
        };
        node.spawn_accept_loop();
        if let Some(mdns) = mdns {
            node.spawn_discovery_listener(mdns);
        }
        Ok(node)
    }

    async fn endpoint(
        identity: &DeviceIdentity,
        config: &NodeConfig,
        port: u16,
    ) -> Result<Endpoint, DeviceError> {
        let bind_err = |e: &dyn std::fmt::Display| DeviceError::Bind(e.to_string());
        let mut builder = if config.relay {
            Endpoint::builder(presets::N0)
        } else {
            // Direct only: no relays, no DNS publishing, no gateway port mapping.
            Endpoint::builder(presets::Minimal)
                .relay_mode(RelayMode::Disabled)
                .portmapper_config(iroh::endpoint::PortmapperConfig::Disabled)
        };
        builder = builder
            .secret_key(identity.secret_key())
            .alpns(vec![PEER_ALPN.to_vec(), PAIR_ALPN.to_vec()]);
        if !config.bind.is_empty() {
            builder = builder.clear_ip_transports();
            for addr in &config.bind {
                let mut addr = *addr;
                if addr.port() == 0 {
                    addr.set_port(port);
                }
                builder = builder.bind_addr(addr).map_err(|e| bind_err(&e))?;
            }
        } else if port != 0 {
            builder = builder
                .bind_addr(SocketAddr::from(([0, 0, 0, 0], port)))
                .map_err(|e| bind_err(&e))?;
        }
        builder.bind().await.map_err(|e| bind_err(&e))
    }

    fn discovery(
        endpoint: &Endpoint,
        config: &NodeConfig,
    ) -> Result<iroh_mdns_address_lookup::MdnsAddressLookup, DeviceError> {
        let mdns = iroh_mdns_address_lookup::MdnsAddressLookup::builder()
            .service_name(DISCOVERY_SERVICE)
            .build(endpoint.id())
            .map_err(|e| DeviceError::Bind(format!("LAN discovery: {e}")))?;
        endpoint
            .address_lookup()
            .map_err(|e| DeviceError::Bind(format!("LAN discovery: {e}")))?
            .add(mdns.clone());
        let advert = advert_text(&config.platform, &config.name);
        match advert.parse() {
            Ok(data) => endpoint.set_user_data_for_address_lookup(Some(data)),
            Err(e) => tracing::warn!("the device name is not advertised: {e}"),
        }
        Ok(mdns)
    }

    /// This device.
    pub fn device_id(&self) -> DeviceId {
        DeviceId::from_public_key(self.inner.endpoint.id())
    }

    /// The configuration.
    pub fn config(&self) -> &NodeConfig {
        &self.inner.config
    }

    /// This device's direct addresses (bound addresses first, then what iroh found).
    pub fn addrs(&self) -> Vec<SocketAddr> {
        let mut out: Vec<SocketAddr> = self
            .inner
            .endpoint
            .bound_sockets()
            .into_iter()
            .filter(|a| !a.ip().is_unspecified())
            .collect();
        for addr in self.inner.endpoint.addr().ip_addrs() {
            if !out.contains(addr) {
                out.push(*addr);
            }
        }
        out
    }

    /// The bound UDP ports (for remembering the port across restarts).
    pub fn bound_port(&self) -> Option<u16> {
        self.inner
            .endpoint
            .bound_sockets()
            .first()
            .map(|a| a.port())
    }

    /// The home relay, when relays are on and one answered.
    pub fn relay_url(&self) -> Option<String> {
        self.inner
            .endpoint
            .addr()
            .relay_urls()
            .next()
            .map(|u| u.to_string())
    }

    /// Waits (at most `within`) until the endpoint has a home relay; returns whether it has.
    pub async fn wait_online(&self, within: Duration) -> bool {
        if !self.inner.config.relay {
            return true;
        }
        tokio::time::timeout(within, self.inner.endpoint.online())
            .await
            .is_ok()
    }

    /// Connection events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<NodeEvent> {
        self.inner.events.subscribe()
    }

    /// Whether a connection to `peer` is up.
    pub fn is_connected(&self, peer: &DeviceId) -> bool {
        lock(&self.inner.conns)
            .get(peer)
            .is_some_and(|c| c.iter().any(|l| l.conn.close_reason().is_none()))
    }

    /// Devices seen on the LAN now.
    pub fn nearby(&self) -> Vec<NearbyDevice> {
        let mut out: Vec<NearbyDevice> = lock(&self.inner.nearby).values().cloned().collect();
        out.sort_by(|a, b| a.name.cmp(&b.name).then(a.device.cmp(&b.device)));
        out
    }

    /// A live connection to `peer`, dialing it if there is none.
    ///
    /// Errors: [`DeviceError::Unreachable`], [`DeviceError::Revoked`],
    /// [`DeviceError::NotPaired`].
    pub async fn connect(&self, peer: &PeerAddress) -> Result<Connection, DeviceError> {
        if let Some(conn) = self.live(&peer.device) {
            return Ok(conn);
        }
        let conn = self.dial(peer, PEER_ALPN).await?;
        self.register(peer.device, conn.clone());
        Ok(conn)
    }

    /// Whether this endpoint listens on loopback itself (then loopback addresses of other
    /// devices on this machine may be dialed).
    pub fn loopback_ok(&self) -> bool {
        self.inner.config.bind.iter().any(|a| a.ip().is_loopback())
    }

    pub(crate) async fn dial(
        &self,
        peer: &PeerAddress,
        alpn: &[u8],
    ) -> Result<Connection, DeviceError> {
        // Addresses and relays come from the other side: only harmless destinations are used.
        let loopback_ok = self.loopback_ok();
        let mut addrs: Vec<TransportAddr> = Vec::new();
        for a in &peer.addrs {
            if crate::addrs::dialable(a, loopback_ok) {
                addrs.push(TransportAddr::Ip(*a));
            } else {
                tracing::debug!("not dialing {a} given for {}", peer.device.short());
            }
        }
        if self.inner.config.relay
            && let Some(relay) = &peer.relay
        {
            match crate::addrs::known_relay(relay) {
                Some(url) => addrs.push(TransportAddr::Relay(url)),
                None => tracing::debug!(
                    "ignoring an unknown relay given for {}",
                    peer.device.short()
                ),
            }
        }
        if addrs.is_empty() && !self.inner.config.relay && !self.inner.config.discovery {
            return Err(unreachable(
                &peer.device,
                "no usable address (relays and LAN discovery are off)",
            ));
        }
        let addr = EndpointAddr::from_parts(peer.device.public_key(), addrs);
        match tokio::time::timeout(DIAL_TIMEOUT, self.inner.endpoint.connect(addr, alpn)).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(unreachable(&peer.device, e)),
            Err(_) => Err(unreachable(
                &peer.device,
                format!("no answer within {} s", DIAL_TIMEOUT.as_secs()),
            )),
        }
    }

    fn live(&self, peer: &DeviceId) -> Option<Connection> {
        let mut conns = lock(&self.inner.conns);
        let list = conns.get_mut(peer)?;
        list.retain(|l| l.conn.close_reason().is_none());
        list.last().map(|l| l.conn.clone())
    }

    /// Sends one request to `peer` and waits for the answer.
    ///
    /// Errors: [`DeviceError::Unreachable`] (offline, timed out, connection lost),
    /// [`DeviceError::Revoked`] and [`DeviceError::NotPaired`] (the other side closed the
    /// connection saying so), [`DeviceError::Protocol`].
    pub async fn request(
        &self,
        peer: &PeerAddress,
        request: &Request,
    ) -> Result<Response, DeviceError> {
        let conn = self.connect(peer).await?;
        let id = &peer.device;
        let exchange = async {
            let (mut send, mut recv) = conn
                .open_bi()
                .await
                .map_err(|e| request_error(id, &conn, e))?;
            write_frame(&mut send, request)
                .await
                .map_err(|e| request_error(id, &conn, e))?;
            send.finish().map_err(|e| request_error(id, &conn, e))?;
            match read_frame::<Response>(&mut recv).await {
                Ok(r) => Ok(r),
                Err(FrameError::Malformed(m)) => Err(DeviceError::Protocol {
                    peer: id.short(),
                    message: m,
                }),
                Err(e) => Err(request_error(id, &conn, e)),
            }
        };
        match tokio::time::timeout(REQUEST_TIMEOUT, exchange).await {
            Ok(r) => r,
            Err(_) => Err(unreachable(
                id,
                format!("no answer within {} s", REQUEST_TIMEOUT.as_secs()),
            )),
        }
    }

    /// Closes every connection to `peer` with `code` ([`close`]) and `reason`.
    pub fn disconnect(&self, peer: &DeviceId, code: u32, reason: &str) {
        let list = lock(&self.inner.conns).remove(peer).unwrap_or_default();
        for live in list {
            live.conn.close(code.into(), reason.as_bytes());
        }
    }

    /// Opens a pairing window (replacing any open one): a fresh code valid for `ttl`, one use.
    ///
    /// Errors: [`DeviceError::Key`] when the OS gives no randomness.
    pub async fn open_pairing(&self, ttl: Duration) -> Result<PairingSession, DeviceError> {
        self.wait_online(Duration::from_secs(5)).await;
        pairing::open(self, ttl)
    }

    /// Starts joining the device that showed `ticket`: dials its pinned key, proves the code
    /// and gets its answer. Show [`pairing::JoinSession::words`], then call
    /// [`pairing::JoinSession::finish`].
    ///
    /// Errors: [`DeviceError::Unreachable`], [`DeviceError::Pairing`] (wrong, expired, used or
    /// locked code).
    pub async fn join(
        &self,
        ticket: &crate::PairingTicket,
    ) -> Result<pairing::JoinSession, DeviceError> {
        pairing::join(self, ticket).await
    }

    /// Closes every connection and the endpoint.
    pub async fn close(&self) {
        self.inner.shutdown.cancel();
        let all: Vec<Live> = lock(&self.inner.conns)
            .drain()
            .flat_map(|(_, v)| v)
            .collect();
        for live in all {
            live.conn.close(close::NORMAL.into(), b"shutting down");
        }
        self.inner.endpoint.close().await;
    }

    /// Records a connection, serves the other side's requests on it, and watches it close.
    fn register(&self, peer: DeviceId, conn: Connection) {
        lock(&self.inner.conns)
            .entry(peer)
            .or_default()
            .push(Live { conn: conn.clone() });
        let _ = self.inner.events.send(NodeEvent::Connected { peer });
        let node = self.clone();
        tokio::spawn(async move {
            let served = node.serve_streams(peer, conn.clone());
            let reason = tokio::select! {
                err = conn.closed() => disconnect_of(&err),
                () = served => conn.close_reason().map(|e| disconnect_of(&e)).unwrap_or(Disconnect::Local),
            };
            let last = {
                let mut conns = lock(&node.inner.conns);
                match conns.get_mut(&peer) {
                    Some(list) => {
                        list.retain(|l| {
                            l.conn.stable_id() != conn.stable_id()
                                && l.conn.close_reason().is_none()
                        });
                        let empty = list.is_empty();
                        if empty {
                            conns.remove(&peer);
                        }
                        empty
                    }
                    None => true,
                }
            };
            if last {
                let _ = node
                    .inner
                    .events
                    .send(NodeEvent::Disconnected { peer, reason });
            }
        });
    }

    async fn serve_streams(&self, peer: DeviceId, conn: Connection) {
        loop {
            let (mut send, mut recv) = tokio::select! {
                r = conn.accept_bi() => match r {
                    Ok(pair) => pair,
                    Err(_) => return,
                },
                () = self.inner.shutdown.cancelled() => return,
            };
            let handler = Arc::clone(&self.inner.handler);
            let conn = conn.clone();
            tokio::spawn(async move {
                let request = match read_frame::<Request>(&mut recv).await {
                    Ok(r) => r,
                    Err(FrameError::Malformed(m)) => {
                        let _ = write_frame(
                            &mut send,
                            &Response::Refused {
                                reason: crate::wire::Refusal::Invalid,
                                message: format!("malformed request: {m}"),
                            },
                        )
                        .await;
                        let _ = send.finish();
                        return;
                    }
                    Err(FrameError::TooLarge(n)) => {
                        conn.close(
                            close::PROTOCOL.into(),
                            format!("frame of {n} bytes").as_bytes(),
                        );
                        return;
                    }
                    Err(_) => return,
                };
                let response = handler.handle(&peer, request).await;
                if write_frame(&mut send, &response).await.is_ok() {
                    let _ = send.finish();
                }
            });
        }
    }

    fn spawn_accept_loop(&self) {
        let node = self.clone();
        tokio::spawn(async move {
            loop {
                let incoming = tokio::select! {
                    i = node.inner.endpoint.accept() => match i {
                        Some(i) => i,
                        None => return,
                    },
                    () = node.inner.shutdown.cancelled() => return,
                };
                let node = node.clone();
                tokio::spawn(async move {
                    let mut accepting = match incoming.accept() {
                        Ok(a) => a,
                        Err(e) => {
                            tracing::debug!("incoming device connection failed: {e}");
                            return;
                        }
                    };
                    let alpn = match accepting.alpn().await {
                        Ok(a) => a,
                        Err(e) => {
                            tracing::debug!("incoming device connection without ALPN: {e}");
                            return;
                        }
                    };
                    let conn = match accepting.await {
                        Ok(c) => c,
                        Err(e) => {
                            tracing::debug!("incoming device handshake failed: {e}");
                            return;
                        }
                    };
                    if alpn == PAIR_ALPN {
                        pairing::serve(&node, conn).await;
                    } else if alpn == PEER_ALPN {
                        let peer = DeviceId::from_public_key(conn.remote_id());
                        match node.inner.handler.admit(&peer).await {
                            Admission::Admit => node.register(peer, conn),
                            Admission::Refuse { code, reason } => {
                                tracing::info!(device = %peer.short(), "refused a connection: {reason}");
                                conn.close(code.into(), reason.as_bytes());
                                // Give the close frame a moment to leave.
                                let _ = tokio::time::timeout(Duration::from_secs(1), conn.closed())
                                    .await;
                            }
                        }
                    } else {
                        conn.close(close::PROTOCOL.into(), b"unknown protocol");
                    }
                });
            }
        });
    }

    fn spawn_discovery_listener(&self, mdns: iroh_mdns_address_lookup::MdnsAddressLookup) {
        use n0_future::StreamExt;
        let node = self.clone();
        tokio::spawn(async move {
            let mut events = mdns.subscribe().await;
            loop {
                let event = tokio::select! {
                    e = events.next() => match e {
                        Some(e) => e,
                        None => return,
                    },
                    () = node.inner.shutdown.cancelled() => return,
                };
                match event {
                    iroh_mdns_address_lookup::DiscoveryEvent::Discovered {
                        endpoint_info, ..
                    } => {
                        let device = DeviceId::from_public_key(endpoint_info.endpoint_id);
                        if device == node.device_id() {
                            continue;
                        }
                        let (platform, name) = endpoint_info
                            .data
                            .user_data()
                            .map(|u| parse_advert(u.as_ref()))
                            .unwrap_or_else(|| (String::new(), String::new()));
                        let addrs = endpoint_info.data.ip_addrs().copied().collect();
                        lock(&node.inner.nearby).insert(
                            device,
                            NearbyDevice {
                                device,
                                name,
                                platform,
                                addrs,
                            },
                        );
                    }
                    iroh_mdns_address_lookup::DiscoveryEvent::Expired { endpoint_id } => {
                        lock(&node.inner.nearby).remove(&DeviceId::from_public_key(endpoint_id));
                    }
                    _ => {}
                }
            }
        });
    }
}

/// The text of a LAN advert: `platform:name`, cut to what an advert holds.
fn advert_text(platform: &str, name: &str) -> String {
    let mut text = format!("{platform}:{name}");
    while text.len() > 240 {
        text.pop();
    }
    text
}

fn parse_advert(text: &str) -> (String, String) {
    match text.split_once(':') {
        Some((platform, name)) => (platform.to_string(), name.to_string()),
        None => (String::new(), text.to_string()),
    }
}
