//! One WebSocket connection of the bridge: the hello, the credential or the pairing, then
//! requests and responses. The connection only gets here after the guard checked `Host` and
//! `Origin` (see `guard.rs`); the extension id comes from that `Origin`.

use crate::BridgeEvent;
use crate::pairing::{Decision, PAIRING_TIMEOUT, PairingOutcome, Pairings};
use crate::protocol::{
    AppMessage, BridgeCommand, CommandOutcome, ExtensionMessage, PROTOCOL_VERSION,
};
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures::{SinkExt, StreamExt};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use suzent_store::BrowserPairing;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// How long a new connection may take to say `hello` (and an unpaired one `pairRequest`).
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a command waits for the extension's answer. After that the outcome is unknown:
/// the command is never sent again and a late answer is dropped.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(20);

/// WebSocket close code for policy violations (RFC 6455).
pub const CLOSE_POLICY: u16 = 1008;

/// Why a command over the bridge failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinkError {
    /// No paired extension is connected (or it disconnected while the command waited).
    #[error("no paired browser extension is connected")]
    NotConnected,
    /// No answer within the limit; the command was not sent again.
    #[error("no answer from the extension within {0} s")]
    Timeout(u64),
    /// The extension answered with a failure.
    #[error("{message}")]
    Failed {
        /// Which kind.
        kind: crate::protocol::FailureKind,
        /// Its message.
        message: String,
    },
}

/// A live, authenticated connection to a paired extension.
pub struct ExtensionLink {
    /// The pairing it authenticated with.
    pub pairing: BrowserPairing,
    connection: u64,
    outgoing: mpsc::Sender<AppMessage>,
    pending: Mutex<HashMap<u32, oneshot::Sender<CommandOutcome>>>,
    next_id: AtomicU32,
    closed: CancellationToken,
}

impl std::fmt::Debug for ExtensionLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionLink")
            .field("pairing", &self.pairing.id)
            .field("connection", &self.connection)
            .finish_non_exhaustive()
    }
}

impl ExtensionLink {
    /// Sends `command` and waits up to `timeout` for its answer. Never resends: on timeout
    /// the request id is forgotten, so a late answer is dropped.
    ///
    /// Errors: [`LinkError`].
    pub async fn request(
        &self,
        command: BridgeCommand,
        timeout: Duration,
    ) -> Result<Value, LinkError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        let forget = || {
            lock(&self.pending).remove(&id);
        };
        if self
            .outgoing
            .send(AppMessage::Request { id, command })
            .await
            .is_err()
        {
            forget();
            return Err(LinkError::NotConnected);
        }
        tokio::select! {
            answer = rx => match answer {
                Ok(CommandOutcome::Ok { value }) => Ok(value),
                Ok(CommandOutcome::Error { kind, message }) => Err(LinkError::Failed { kind, message }),
                Err(_) => Err(LinkError::NotConnected),
            },
            () = tokio::time::sleep(timeout) => {
                forget();
                Err(LinkError::Timeout(timeout.as_secs()))
            }
            () = self.closed.cancelled() => {
                forget();
                Err(LinkError::NotConnected)
            }
        }
    }

    /// Hands an answer to the request waiting for it; `false` (and nothing happens) when no
    /// request of that id is waiting (answered, timed out, or never sent).
    fn complete(&self, id: u32, outcome: CommandOutcome) -> bool {
        match lock(&self.pending).remove(&id) {
            Some(tx) => tx.send(outcome).is_ok(),
            None => false,
        }
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Called with the links in connect order whenever the set of live links changes.
pub type LinksChanged = Arc<dyn Fn(&[Arc<ExtensionLink>]) + Send + Sync>;

/// State shared by all connections of one bridge.
pub struct Hub {
    pub(crate) pairings: Arc<Pairings>,
    pub(crate) device_name: String,
    pub(crate) events: broadcast::Sender<BridgeEvent>,
    pub(crate) shutdown: CancellationToken,
    links: Mutex<Vec<Arc<ExtensionLink>>>,
    next_connection: AtomicU64,
    on_change: Mutex<Vec<LinksChanged>>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("device_name", &self.device_name)
            .finish_non_exhaustive()
    }
}

impl Hub {
    pub(crate) fn new(
        pairings: Arc<Pairings>,
        device_name: String,
        events: broadcast::Sender<BridgeEvent>,
        shutdown: CancellationToken,
    ) -> Hub {
        Hub {
            pairings,
            device_name,
            events,
            shutdown,
            links: Mutex::new(Vec::new()),
            next_connection: AtomicU64::new(1),
            on_change: Mutex::new(Vec::new()),
        }
    }

    /// The live links, oldest first. The first one serves commands.
    pub fn links(&self) -> Vec<Arc<ExtensionLink>> {
        lock(&self.links).clone()
    }

    /// The link commands go to: the oldest live one.
    pub fn active(&self) -> Option<Arc<ExtensionLink>> {
        lock(&self.links).iter().find(|l| !l.is_closed()).cloned()
    }

    /// Registers a callback run whenever links come or go (the runtime hook).
    pub fn on_links_changed(&self, callback: LinksChanged) {
        lock(&self.on_change).push(callback);
    }

    fn changed(&self) {
        let links = self.links();
        let callbacks = lock(&self.on_change).clone();
        for cb in callbacks {
            cb(&links);
        }
    }

    fn emit(&self, event: BridgeEvent) {
        let _ = self.events.send(event);
    }
}

/// The reason of a policy close, for logs and the extension.
async fn close(socket: &mut WebSocket, code: u16, reason: &str) {
    tracing::info!("browser bridge closed a connection: {reason}");
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: Utf8Bytes::from(reason.to_string()),
        })))
        .await;
}

async fn send(socket: &mut WebSocket, message: &AppMessage) -> bool {
    match serde_json::to_string(message) {
        Ok(text) => socket.send(Message::Text(text.into())).await.is_ok(),
        Err(e) => {
            tracing::error!("cannot encode a bridge message: {e}");
            false
        }
    }
}

/// The next extension message; `Err(reason)` for anything else (binary, bad JSON, closed).
async fn next_message(socket: &mut WebSocket) -> Result<ExtensionMessage, String> {
    loop {
        match socket.recv().await {
            Some(Ok(Message::Text(text))) => match serde_json::from_str(text.as_str()) {
                Ok(ExtensionMessage::Ping {}) => continue,
                Ok(message) => return Ok(message),
                Err(e) => return Err(format!("bad message: {e}")),
            },
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(Message::Binary(_))) => return Err("binary frames are not accepted".into()),
            Some(Ok(Message::Close(_))) | None => return Err("closed".into()),
            Some(Err(e)) => return Err(format!("read failed: {e}")),
        }
    }
}

/// Serves one connection from extension `extension_id` until it closes.
pub(crate) async fn serve_connection(mut socket: WebSocket, extension_id: String, hub: Arc<Hub>) {
    let connection = hub.next_connection.fetch_add(1, Ordering::Relaxed);
    let hello = tokio::time::timeout(HELLO_TIMEOUT, next_message(&mut socket)).await;
    let (browser, browser_version, extension_version, credential) = match hello {
        Ok(Ok(ExtensionMessage::Hello {
            protocol,
            browser,
            browser_version,
            extension_version,
            credential,
        })) => {
            if protocol != PROTOCOL_VERSION {
                let reason = format!(
                    "unsupported protocol version {protocol} (this app speaks {PROTOCOL_VERSION})"
                );
                return close(&mut socket, CLOSE_POLICY, &reason).await;
            }
            (browser, browser_version, extension_version, credential)
        }
        Ok(Ok(_)) => return close(&mut socket, CLOSE_POLICY, "expected hello").await,
        Ok(Err(reason)) => return close(&mut socket, CLOSE_POLICY, &reason).await,
        Err(_) => return close(&mut socket, CLOSE_POLICY, "no hello in time").await,
    };
    let pairing = match credential {
        Some(credential) => match hub.pairings.verify(&extension_id, &credential).await {
            Ok(Some(pairing)) => {
                if let Err(e) = hub
                    .pairings
                    .store()
                    .touch_browser_pairing(&pairing.id, &browser_version, &extension_version)
                    .await
                {
                    tracing::warn!(
                        "cannot record the connection of pairing '{}': {e}",
                        pairing.id
                    );
                }
                Some(pairing)
            }
            Ok(None) => {
                return close(&mut socket, CLOSE_POLICY, "credential refused").await;
            }
            Err(e) => {
                tracing::error!("cannot check a browser credential: {e}");
                return close(&mut socket, 1011, "internal error").await;
            }
        },
        None => None,
    };
    let (pairing, just_paired) = match pairing {
        Some(p) => (p, false),
        None => {
            match pair(
                &mut socket,
                &hub,
                &extension_id,
                &browser,
                &browser_version,
                &extension_version,
            )
            .await
            {
                Some(p) => (p, true),
                None => return,
            }
        }
    };
    live(socket, hub, pairing, connection, just_paired).await;
}

/// The pairing dialogue of a connection that came without a credential. `Some` once the user
/// approved (the credential was sent over this socket); `None` after closing it.
async fn pair(
    socket: &mut WebSocket,
    hub: &Hub,
    extension_id: &str,
    browser: &str,
    browser_version: &str,
    extension_version: &str,
) -> Option<BrowserPairing> {
    match tokio::time::timeout(HELLO_TIMEOUT, next_message(socket)).await {
        Ok(Ok(ExtensionMessage::PairRequest {})) => {}
        Ok(Ok(_)) => {
            close(
                socket,
                CLOSE_POLICY,
                "not paired: send pairRequest and wait for approval in Suzent",
            )
            .await;
            return None;
        }
        Ok(Err(reason)) => {
            close(socket, CLOSE_POLICY, &reason).await;
            return None;
        }
        Err(_) => {
            close(socket, CLOSE_POLICY, "no pairRequest in time").await;
            return None;
        }
    }
    let (request, decision) =
        match hub
            .pairings
            .request(extension_id, browser, browser_version, extension_version)
        {
            Ok(r) => r,
            Err(e) => {
                let _ = send(
                    socket,
                    &AppMessage::PairRejected {
                        reason: e.to_string(),
                    },
                )
                .await;
                close(socket, CLOSE_POLICY, &e.to_string()).await;
                return None;
            }
        };
    let pending = AppMessage::PairPending {
        request_id: request.id.clone(),
        code: request.code.clone(),
    };
    if !send(socket, &pending).await {
        hub.pairings.abandon(&request.id, PairingOutcome::Cancelled);
        return None;
    }
    // While waiting, anything the extension sends (or its close) cancels the request.
    let outcome = tokio::select! {
        d = decision => d.ok(),
        _ = next_message(socket) => {
            hub.pairings.abandon(&request.id, PairingOutcome::Cancelled);
            return None;
        }
        () = tokio::time::sleep(PAIRING_TIMEOUT) => {
            hub.pairings.abandon(&request.id, PairingOutcome::Expired);
            Some(Decision::Rejected("the pairing request expired".into()))
        }
        () = hub.shutdown.cancelled() => {
            hub.pairings.abandon(&request.id, PairingOutcome::Cancelled);
            close(socket, 1001, "suzent is shutting down").await;
            return None;
        }
    };
    match outcome {
        Some(Decision::Approved {
            pairing,
            credential,
        }) => {
            let paired = AppMessage::Paired {
                credential,
                pairing_id: pairing.id.clone(),
                device_name: hub.device_name.clone(),
            };
            if send(socket, &paired).await {
                Some(pairing)
            } else {
                // The credential may not have arrived: it must not stay valid.
                if let Err(e) = hub.pairings.revoke(&pairing.id).await {
                    tracing::error!("cannot revoke undelivered pairing '{}': {e}", pairing.id);
                }
                None
            }
        }
        Some(Decision::Rejected(reason)) => {
            let _ = send(
                socket,
                &AppMessage::PairRejected {
                    reason: reason.clone(),
                },
            )
            .await;
            close(socket, CLOSE_POLICY, &reason).await;
            None
        }
        None => {
            close(socket, CLOSE_POLICY, "the pairing request ended").await;
            None
        }
    }
}

/// The live phase: requests out, responses in, until either side closes, the pairing is
/// revoked, or the bridge shuts down.
async fn live(
    mut socket: WebSocket,
    hub: Arc<Hub>,
    pairing: BrowserPairing,
    connection: u64,
    just_paired: bool,
) {
    let revoked = CancellationToken::new();
    if !hub
        .pairings
        .go_live(&pairing.id, connection, revoked.clone())
    {
        return close(
            &mut socket,
            CLOSE_POLICY,
            "credential already in use by another connection",
        )
        .await;
    }
    if !just_paired {
        let welcome = AppMessage::Welcome {
            device_name: hub.device_name.clone(),
            pairing_id: pairing.id.clone(),
        };
        if !send(&mut socket, &welcome).await {
            hub.pairings.gone(&pairing.id, connection);
            return;
        }
    }
    let (outgoing, mut queue) = mpsc::channel::<AppMessage>(64);
    let link = Arc::new(ExtensionLink {
        pairing: pairing.clone(),
        connection,
        outgoing,
        pending: Mutex::new(HashMap::new()),
        next_id: AtomicU32::new(1),
        closed: CancellationToken::new(),
    });
    lock(&hub.links).push(Arc::clone(&link));
    hub.emit(BridgeEvent::Connected {
        pairing_id: pairing.id.clone(),
        browser: pairing.browser.clone(),
    });
    hub.changed();
    let (mut sink, mut stream) = socket.split();
    let end: Option<(u16, &str)> = loop {
        tokio::select! {
            frame = stream.next() => match frame {
                Some(Ok(Message::Text(text))) => match serde_json::from_str::<ExtensionMessage>(text.as_str()) {
                    Ok(ExtensionMessage::Response { id, outcome }) => {
                        if !link.complete(id, outcome) {
                            tracing::debug!("dropped a late or unknown bridge response {id}");
                        }
                    }
                    Ok(ExtensionMessage::TabsChanged { shared }) => hub.emit(BridgeEvent::TabsChanged {
                        pairing_id: pairing.id.clone(),
                        shared,
                    }),
                    Ok(ExtensionMessage::Revoke {}) => {
                        if let Err(e) = hub.pairings.revoke(&pairing.id).await {
                            tracing::error!("cannot revoke pairing '{}': {e}", pairing.id);
                        }
                    }
                    Ok(ExtensionMessage::Ping {}) => {}
                    Ok(ExtensionMessage::Hello { .. } | ExtensionMessage::PairRequest {}) => {
                        break Some((CLOSE_POLICY, "unexpected hello or pairRequest"));
                    }
                    Err(e) => {
                        tracing::warn!("bad bridge message from pairing '{}': {e}", pairing.id);
                        break Some((CLOSE_POLICY, "bad message"));
                    }
                },
                Some(Ok(Message::Binary(_))) => break Some((1003, "binary frames are not accepted")),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break None,
            },
            next = queue.recv() => {
                let Some(message) = next else { break None };
                let Ok(text) = serde_json::to_string(&message) else { continue };
                if sink.send(Message::Text(text.into())).await.is_err() {
                    break None;
                }
            }
            () = revoked.cancelled() => {
                if let Ok(text) = serde_json::to_string(&AppMessage::Revoked {}) {
                    let _ = sink.send(Message::Text(text.into())).await;
                }
                break Some((CLOSE_POLICY, "revoked"));
            }
            () = hub.shutdown.cancelled() => break Some((1001, "suzent is shutting down")),
        }
    };
    link.closed.cancel();
    lock(&hub.links).retain(|l| !Arc::ptr_eq(l, &link));
    hub.pairings.gone(&pairing.id, connection);
    if let Some((code, reason)) = end {
        tracing::info!("browser bridge closed pairing '{}': {reason}", pairing.id);
        let _ = sink
            .send(Message::Close(Some(CloseFrame {
                code,
                reason: Utf8Bytes::from(reason.to_string()),
            })))
            .await;
    }
    hub.emit(BridgeEvent::Disconnected {
        pairing_id: pairing.id.clone(),
    });
    hub.changed();
}
