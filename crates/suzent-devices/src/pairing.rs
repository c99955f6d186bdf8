//! Pairing: one device opens a window and shows a code; the other enters it, proves it over a
//! connection pinned to the showing device's key, and both show the same words; the pairing is
//! stored only when both users confirmed.
//!
//! A window lives [`CODE_TTL`] at most and is used once: the first correct proof consumes it,
//! whatever the users answer. Wrong proofs are answered more slowly each time
//! ([`retry_delay`]) and the [`MAX_WRONG_CODES`]th ends the window.

use crate::error::DeviceError;
use crate::id::DeviceId;
use crate::node::{DeviceNode, PeerAddress, PeerInfo};
use crate::ticket::{PairingTicket, fresh_secret, same_bytes};
use crate::wire::{PAIR_ALPN, PairMessage, read_frame, write_frame};
use iroh::endpoint::{Connection, RecvStream, SendStream};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch};

/// How long a pairing code is valid.
pub const CODE_TTL: Duration = Duration::from_secs(600);
/// Wrong codes after which a window is dead.
pub const MAX_WRONG_CODES: u32 = 5;
/// How long both users have to compare the words.
pub const CONFIRM_TIMEOUT: Duration = Duration::from_secs(300);
/// How long the joining device has to say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(30);

/// The wait before the next attempt after `failures` wrong codes: 0.5 s, 1 s, 2 s, 4 s...
pub fn retry_delay(failures: u32) -> Duration {
    Duration::from_millis(500u64.saturating_mul(1u64 << failures.saturating_sub(1).min(10)))
}

/// Where a pairing window is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairingState {
    /// Showing the code; nobody has joined yet.
    Waiting {
        /// Wrong codes tried so far.
        wrong_codes: u32,
    },
    /// A device proved the code; both users compare the words.
    Confirming {
        /// The joining device.
        peer: PeerInfo,
        /// The words this side shows.
        words: Vec<String>,
    },
    /// Both confirmed; the pairing is stored.
    Paired {
        /// The new paired device.
        peer: PeerInfo,
    },
    /// Over without a pairing.
    Failed {
        /// Why.
        reason: String,
    },
}

impl PairingState {
    /// Whether the window is over.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            PairingState::Paired { .. } | PairingState::Failed { .. }
        )
    }
}

struct Gate {
    wrong: u32,
    used: bool,
    not_before: Instant,
}

/// An open pairing window (the showing side).
pub(crate) struct Window {
    ticket: PairingTicket,
    expires: Instant,
    state: watch::Sender<PairingState>,
    gate: tokio::sync::Mutex<Gate>,
    local: Mutex<Option<oneshot::Sender<bool>>>,
}

/// The showing side's handle on a pairing window.
#[derive(Clone)]
pub struct PairingSession {
    window: Arc<Window>,
}

impl std::fmt::Debug for PairingSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PairingSession")
            .field("state", &*self.window.state.borrow())
            .finish_non_exhaustive()
    }
}

impl PairingSession {
    /// The ticket to show (its [`PairingTicket::code`] and [`PairingTicket::link`]).
    pub fn ticket(&self) -> &PairingTicket {
        &self.window.ticket
    }

    /// How long the code stays valid from now.
    pub fn remaining(&self) -> Duration {
        self.window
            .expires
            .saturating_duration_since(Instant::now())
    }

    /// The state now.
    pub fn state(&self) -> PairingState {
        self.window.state.borrow().clone()
    }

    /// Waits for the next change of state (or `within`); returns the state then.
    pub async fn changed(&self, within: Duration) -> PairingState {
        let mut rx = self.window.state.subscribe();
        let _ = tokio::time::timeout(within, rx.changed()).await;
        let now = rx.borrow().clone();
        now
    }

    /// This user's answer to the words. Errors when no device is waiting for it.
    ///
    /// Errors: [`DeviceError::Pairing`].
    pub fn confirm(&self, accept: bool) -> Result<(), DeviceError> {
        let tx = self
            .window
            .local
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .ok_or_else(|| {
                DeviceError::Pairing("no device is waiting for a confirmation".into())
            })?;
        let _ = tx.send(accept);
        Ok(())
    }

    /// Ends the window now (no device can use the code any more).
    pub fn cancel(&self) {
        self.window.state.send_if_modified(|s| {
            if s.is_final() {
                return false;
            }
            *s = PairingState::Failed {
                reason: "cancelled".into(),
            };
            true
        });
        if let Some(tx) = self
            .window
            .local
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            let _ = tx.send(false);
        }
    }
}

pub(crate) fn open(node: &DeviceNode, ttl: Duration) -> Result<PairingSession, DeviceError> {
    let ticket = PairingTicket {
        device: node.device_id(),
        addrs: node.addrs(),
        relay: node.relay_url(),
        secret: fresh_secret()?,
    };
    let (state, _) = watch::channel(PairingState::Waiting { wrong_codes: 0 });
    let window = Arc::new(Window {
        ticket,
        expires: Instant::now() + ttl.min(CODE_TTL),
        state,
        gate: tokio::sync::Mutex::new(Gate {
            wrong: 0,
            used: false,
            not_before: Instant::now(),
        }),
        local: Mutex::new(None),
    });
    let previous = node
        .inner
        .pairing
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .replace(Arc::clone(&window));
    if let Some(old) = previous {
        PairingSession { window: old }.cancel();
    }
    Ok(PairingSession { window })
}

fn parse_addrs(addrs: &[String]) -> Vec<SocketAddr> {
    addrs
        .iter()
        .filter_map(|a| a.parse().ok())
        .take(8)
        .collect()
}

async fn refuse(send: &mut SendStream, conn: &Connection, reason: String) {
    let _ = write_frame(send, &PairMessage::Refused { reason }).await;
    let _ = send.finish();
    let _ = tokio::time::timeout(Duration::from_secs(2), conn.closed()).await;
}

/// Serves one incoming pairing connection (the showing side).
pub(crate) async fn serve(node: &DeviceNode, conn: Connection) {
    let joiner = DeviceId::from_public_key(conn.remote_id());
    let Ok(Ok((mut send, mut recv))) = tokio::time::timeout(HELLO_TIMEOUT, conn.accept_bi()).await
    else {
        return;
    };
    let hello =
        match tokio::time::timeout(HELLO_TIMEOUT, read_frame::<PairMessage>(&mut recv)).await {
            Ok(Ok(PairMessage::Hello {
                proof,
                name,
                platform,
                addrs,
            })) => (proof, name, platform, addrs),
            _ => {
                refuse(&mut send, &conn, "expected a pairing hello".into()).await;
                return;
            }
        };
    let window = node
        .inner
        .pairing
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let Some(window) = window else {
        refuse(
            &mut send,
            &conn,
            "no pairing code is open on this device".into(),
        )
        .await;
        return;
    };
    let (proof, name, platform, addrs) = hello;
    {
        let mut gate = window.gate.lock().await;
        let refused = if window.state.borrow().is_final()
            && !gate.used
            && gate.wrong < MAX_WRONG_CODES
        {
            Some("this pairing was cancelled; start a new pairing".to_string())
        } else if Instant::now() >= window.expires {
            window.state.send_if_modified(|s| {
                let open = !s.is_final();
                if open {
                    *s = PairingState::Failed {
                        reason: "the pairing code expired".into(),
                    };
                }
                open
            });
            Some("the pairing code expired; start a new pairing".to_string())
        } else if gate.used {
            Some("the pairing code was already used; start a new pairing".to_string())
        } else if gate.wrong >= MAX_WRONG_CODES {
            Some(format!(
                "the pairing code is locked after {MAX_WRONG_CODES} wrong codes; start a new pairing"
            ))
        } else {
            None
        };
        if let Some(reason) = refused {
            drop(gate);
            refuse(&mut send, &conn, reason).await;
            return;
        }
        // Rate limit: attempts are taken one at a time, each later than the last failure allows.
        let wait = gate.not_before.saturating_duration_since(Instant::now());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        let expected = window.ticket.proof(&joiner);
        let given = data_encoding::HEXLOWER
            .decode(proof.as_bytes())
            .unwrap_or_default();
        if !same_bytes(&given, &expected) {
            gate.wrong += 1;
            gate.not_before = Instant::now() + retry_delay(gate.wrong);
            let wrong = gate.wrong;
            tracing::info!(device = %joiner.short(), "wrong pairing code ({wrong} of {MAX_WRONG_CODES})");
            window.state.send_modify(|s| {
                *s = if wrong >= MAX_WRONG_CODES {
                    PairingState::Failed {
                        reason: format!("locked after {MAX_WRONG_CODES} wrong codes"),
                    }
                } else {
                    PairingState::Waiting { wrong_codes: wrong }
                };
            });
            let reason = if wrong >= MAX_WRONG_CODES {
                format!(
                    "wrong pairing code; the code is now locked after {MAX_WRONG_CODES} wrong codes"
                )
            } else {
                format!("wrong pairing code ({wrong} of {MAX_WRONG_CODES} tries used)")
            };
            drop(gate);
            refuse(&mut send, &conn, reason).await;
            return;
        }
        gate.used = true;
    }
    let peer = PeerInfo {
        device: joiner,
        name: clean_name(&name),
        platform: clean_name(&platform),
        addrs: parse_addrs(&addrs),
        relay: None,
    };
    let (tx, local) = oneshot::channel();
    *window.local.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
    window.state.send_modify(|s| {
        *s = PairingState::Confirming {
            peer: peer.clone(),
            words: window.ticket.words(&joiner),
        }
    });
    let accepted = PairMessage::Accepted {
        name: node.config().name.clone(),
        platform: node.config().platform.clone(),
    };
    if write_frame(&mut send, &accepted).await.is_err() {
        fail(&window, "the joining device went away");
        return;
    }
    let outcome = tokio::time::timeout(CONFIRM_TIMEOUT, both_confirm(&mut recv, local)).await;
    let (accept, reason) = match outcome {
        Err(_) => (false, "the words were not confirmed in time".to_string()),
        Ok(Err(reason)) => (false, reason),
        Ok(Ok(())) => match node.inner.handler.paired(&peer).await {
            Ok(()) => (true, String::new()),
            Err(e) => (false, format!("the pairing could not be stored: {e}")),
        },
    };
    let done = PairMessage::Done {
        accept,
        reason: (!accept).then(|| reason.clone()),
    };
    let _ = write_frame(&mut send, &done).await;
    let _ = send.finish();
    // The joiner closes the connection once it read the answer: only then is the outcome
    // announced here (a CLI may exit right after, which must not cut the answer off).
    let _ = tokio::time::timeout(Duration::from_secs(2), conn.closed()).await;
    if accept {
        window
            .state
            .send_modify(|s| *s = PairingState::Paired { peer });
    } else {
        fail(&window, &reason);
    }
}

/// Waits for the joiner's and this user's answers; `Err(reason)` when either says no.
async fn both_confirm(recv: &mut RecvStream, local: oneshot::Receiver<bool>) -> Result<(), String> {
    let remote = async {
        match read_frame::<PairMessage>(recv).await {
            Ok(PairMessage::Confirm { accept: true }) => Ok(()),
            Ok(PairMessage::Confirm { accept: false }) => {
                Err("the other device did not confirm the words".to_string())
            }
            _ => Err("the joining device went away".to_string()),
        }
    };
    let mine = async {
        match local.await {
            Ok(true) => Ok(()),
            Ok(false) => Err("the words were not confirmed on this device".to_string()),
            Err(_) => Err("the pairing was cancelled".to_string()),
        }
    };
    let (r, m) = tokio::join!(remote, mine);
    m?;
    r
}

fn fail(window: &Window, reason: &str) {
    window.state.send_modify(|s| {
        *s = PairingState::Failed {
            reason: reason.to_string(),
        }
    });
}

/// A name from another device, cut and cleaned of control characters.
pub(crate) fn clean_name(name: &str) -> String {
    let cleaned: String = name.chars().filter(|c| !c.is_control()).take(64).collect();
    let cleaned = cleaned.trim().to_string();
    if cleaned.is_empty() {
        "unnamed device".to_string()
    } else {
        cleaned
    }
}

/// The joining side of a pairing, between the code check and the users' confirmation.
pub struct JoinSession {
    conn: Connection,
    send: SendStream,
    recv: RecvStream,
    peer: PeerInfo,
    words: Vec<String>,
}

impl std::fmt::Debug for JoinSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinSession")
            .field("peer", &self.peer)
            .field("words", &self.words)
            .finish_non_exhaustive()
    }
}

impl JoinSession {
    /// The device being joined.
    pub fn peer(&self) -> &PeerInfo {
        &self.peer
    }

    /// The words to compare with the other screen.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Sends this user's answer and waits for the other device's. `Ok` when both confirmed and
    /// the other device stored the pairing: store it on this side then.
    ///
    /// Errors: [`DeviceError::Pairing`] with the reason (not confirmed here or there, timed out).
    pub async fn finish(mut self, accept: bool) -> Result<PeerInfo, DeviceError> {
        let lost = |_| DeviceError::Pairing("the other device went away".into());
        write_frame(&mut self.send, &PairMessage::Confirm { accept })
            .await
            .map_err(lost)?;
        if !accept {
            let _ = self.send.finish();
            self.conn.close(0u32.into(), b"not confirmed");
            return Err(DeviceError::Pairing(
                "the words were not confirmed on this device".into(),
            ));
        }
        let done =
            tokio::time::timeout(CONFIRM_TIMEOUT, read_frame::<PairMessage>(&mut self.recv)).await;
        let _ = self.send.finish();
        let result = match done {
            Ok(Ok(PairMessage::Done { accept: true, .. })) => Ok(self.peer.clone()),
            Ok(Ok(PairMessage::Done { reason, .. })) => {
                Err(DeviceError::Pairing(reason.unwrap_or_else(|| {
                    "the other device did not confirm".into()
                })))
            }
            Ok(_) => Err(DeviceError::Pairing("the other device went away".into())),
            Err(_) => Err(DeviceError::Pairing(
                "the other device did not answer in time".into(),
            )),
        };
        self.conn.close(0u32.into(), b"done");
        result
    }
}

pub(crate) async fn join(
    node: &DeviceNode,
    ticket: &PairingTicket,
) -> Result<JoinSession, DeviceError> {
    if ticket.device == node.device_id() {
        return Err(DeviceError::Pairing(
            "this is this device's own code; enter it on the other device".into(),
        ));
    }
    let address = PeerAddress {
        device: ticket.device,
        addrs: ticket.addrs.clone(),
        relay: ticket.relay.clone(),
    };
    let conn = node.dial(&address, PAIR_ALPN).await?;
    let lost = |e: crate::wire::FrameError| {
        DeviceError::Pairing(format!("the other device went away: {e}"))
    };
    let (mut send, mut recv) = conn
        .open_bi()
        .await
        .map_err(|e| DeviceError::Pairing(format!("the other device went away: {e}")))?;
    let me = node.device_id();
    let hello = PairMessage::Hello {
        proof: data_encoding::HEXLOWER.encode(&ticket.proof(&me)),
        name: node.config().name.clone(),
        platform: node.config().platform.clone(),
        addrs: node.addrs().iter().map(|a| a.to_string()).collect(),
    };
    write_frame(&mut send, &hello).await.map_err(lost)?;
    // Wrong codes are answered slowly on purpose (up to a few seconds).
    let answer = tokio::time::timeout(
        Duration::from_secs(60),
        read_frame::<PairMessage>(&mut recv),
    )
    .await
    .map_err(|_| DeviceError::Pairing("the other device did not answer".into()))?
    .map_err(lost)?;
    match answer {
        PairMessage::Accepted { name, platform } => Ok(JoinSession {
            peer: PeerInfo {
                device: ticket.device,
                name: clean_name(&name),
                platform: clean_name(&platform),
                addrs: ticket.addrs.clone(),
                relay: ticket.relay.clone(),
            },
            words: ticket.words(&me),
            conn,
            send,
            recv,
        }),
        PairMessage::Refused { reason } => {
            conn.close(0u32.into(), b"refused");
            Err(DeviceError::Pairing(reason))
        }
        other => {
            conn.close(0u32.into(), b"protocol");
            Err(DeviceError::Pairing(format!("unexpected answer {other:?}")))
        }
    }
}
