//! Two real endpoints on loopback (relays off): pairing with matching words, requests over the
//! pinned connection, revocation closing a live connection, wrong and reused codes.

use anyhow::Result;
use async_trait::async_trait;
use pretty_assertions::assert_eq;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use suzent_devices::wire::{Request, Response, close};
use suzent_devices::{
    Admission, DeviceError, DeviceId, DeviceIdentity, DeviceNode, Disconnect, KeyStorePreference,
    NodeConfig, NodeEvent, PairingState, PairingTicket, PeerAddress, PeerHandler, PeerInfo,
};

#[derive(Default)]
struct Memory {
    paired: Mutex<HashMap<DeviceId, &'static str>>,
    received: Mutex<Vec<String>>,
}

#[async_trait]
impl PeerHandler for Memory {
    async fn admit(&self, peer: &DeviceId) -> Admission {
        match self.paired.lock().unwrap().get(peer) {
            Some(&"revoked") => Admission::Refuse {
                code: close::REVOKED,
                reason: "revoked".into(),
            },
            Some(_) => Admission::Admit,
            None => Admission::Refuse {
                code: close::NOT_PAIRED,
                reason: "not paired".into(),
            },
        }
    }
    async fn handle(&self, _peer: &DeviceId, request: Request) -> Response {
        match request {
            Request::Deliver { text, .. } => {
                self.received.lock().unwrap().push(text);
                Response::Accepted { duplicate: false }
            }
            _ => Response::Ok,
        }
    }
    async fn paired(&self, peer: &PeerInfo) -> Result<(), String> {
        self.paired.lock().unwrap().insert(peer.device, "active");
        Ok(())
    }
}

struct Side {
    _dir: tempfile::TempDir,
    node: DeviceNode,
    memory: Arc<Memory>,
}

async fn side(name: &str) -> Result<Side> {
    let dir = tempfile::tempdir()?;
    let identity = DeviceIdentity::load_or_create(dir.path(), KeyStorePreference::File)?;
    let memory = Arc::new(Memory::default());
    let config = NodeConfig {
        name: name.into(),
        platform: "linux".into(),
        relay: false,
        bind: vec!["127.0.0.1:0".parse()?],
        port: 0,
        discovery: false,
    };
    let node = DeviceNode::bind(&identity, config, memory.clone()).await?;
    Ok(Side {
        _dir: dir,
        node,
        memory,
    })
}

fn address(side: &Side) -> PeerAddress {
    PeerAddress {
        device: side.node.device_id(),
        addrs: side.node.addrs(),
        relay: None,
    }
}

async fn pair(a: &Side, b: &Side) -> Result<()> {
    let session = a.node.open_pairing(suzent_devices::CODE_TTL).await?;
    let ticket = PairingTicket::parse(&session.ticket().code())?;
    let join = b.node.join(&ticket).await?;
    let PairingState::Confirming { peer, words } = session.state() else {
        anyhow::bail!("not confirming: {:?}", session.state());
    };
    assert_eq!(words, join.words().to_vec());
    assert_eq!(peer.device, b.node.device_id());
    assert_eq!(join.peer().name, "A");
    session.confirm(true)?;
    let joined = join.finish(true).await?;
    b.memory
        .paired
        .lock()
        .unwrap()
        .insert(joined.device, "active");
    // The showing side announces the outcome once the joiner has read it and closed.
    let mut state = session.state();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !state.is_final() && std::time::Instant::now() < deadline {
        state = session.changed(std::time::Duration::from_secs(1)).await;
    }
    assert!(matches!(state, PairingState::Paired { .. }), "{state:?}");
    Ok(())
}

#[tokio::test]
async fn two_devices_pair_with_the_same_words_and_then_exchange_requests() -> Result<()> {
    let (a, b) = (side("A").await?, side("B").await?);
    pair(&a, &b).await?;
    let answer = b
        .node
        .request(
            &address(&a),
            &Request::Deliver {
                message_id: "m1".into(),
                target: None,
                from_agent: None,
                text: "hello".into(),
            },
        )
        .await?;
    assert_eq!(answer, Response::Accepted { duplicate: false });
    assert_eq!(
        a.memory.received.lock().unwrap().clone(),
        vec!["hello".to_string()]
    );
    Ok(())
}

#[tokio::test]
async fn an_unpaired_device_is_closed_with_not_paired() -> Result<()> {
    let (a, stranger) = (side("A").await?, side("S").await?);
    let err = stranger
        .node
        .request(&address(&a), &Request::ListAgents)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        DeviceError::NotPaired {
            peer: a.node.device_id().short()
        }
    );
    Ok(())
}

#[tokio::test]
async fn revoking_closes_the_live_connection_at_once_and_later_dials_are_refused() -> Result<()> {
    let (a, b) = (side("A").await?, side("B").await?);
    pair(&a, &b).await?;
    b.node.request(&address(&a), &Request::ListAgents).await?;
    let mut events = b.node.subscribe();
    let started = Instant::now();
    a.memory
        .paired
        .lock()
        .unwrap()
        .insert(b.node.device_id(), "revoked");
    a.node
        .disconnect(&b.node.device_id(), close::REVOKED, "revoked");
    let reason = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Ok(NodeEvent::Disconnected { reason, .. }) = events.recv().await {
                return reason;
            }
        }
    })
    .await?;
    assert_eq!(reason, Disconnect::RevokedByPeer);
    eprintln!("revocation seen after {:?}", started.elapsed());
    let err = b
        .node
        .request(&address(&a), &Request::ListAgents)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        DeviceError::Revoked {
            peer: a.node.device_id().short()
        }
    );
    Ok(())
}

#[tokio::test]
async fn a_code_used_once_does_not_work_twice() -> Result<()> {
    let (a, b, c) = (side("A").await?, side("B").await?, side("C").await?);
    let session = a.node.open_pairing(suzent_devices::CODE_TTL).await?;
    let ticket = session.ticket().clone();
    let join = b.node.join(&ticket).await?;
    session.confirm(true)?;
    join.finish(true).await?;
    let err = c.node.join(&ticket).await.unwrap_err();
    assert_eq!(
        err,
        DeviceError::Pairing("the pairing code was already used; start a new pairing".into())
    );
    Ok(())
}

#[tokio::test]
async fn wrong_codes_lock_the_window_after_five_tries() -> Result<()> {
    let (a, b) = (side("A").await?, side("B").await?);
    let session = a.node.open_pairing(suzent_devices::CODE_TTL).await?;
    let mut wrong = session.ticket().clone();
    wrong.secret[0] ^= 0xff;
    let mut reasons = Vec::new();
    for _ in 0..5 {
        reasons.push(b.node.join(&wrong).await.unwrap_err().to_string());
    }
    assert_eq!(
        reasons,
        vec![
            "pairing failed: wrong pairing code (1 of 5 tries used)",
            "pairing failed: wrong pairing code (2 of 5 tries used)",
            "pairing failed: wrong pairing code (3 of 5 tries used)",
            "pairing failed: wrong pairing code (4 of 5 tries used)",
            "pairing failed: wrong pairing code; the code is now locked after 5 wrong codes",
        ]
    );
    // Even the right code is refused now.
    let err = b.node.join(session.ticket()).await.unwrap_err();
    assert_eq!(
        err,
        DeviceError::Pairing(
            "the pairing code is locked after 5 wrong codes; start a new pairing".into()
        )
    );
    assert_eq!(
        session.state(),
        PairingState::Failed {
            reason: "locked after 5 wrong codes".into()
        }
    );
    Ok(())
}

#[tokio::test]
async fn words_not_confirmed_on_the_showing_side_store_nothing() -> Result<()> {
    let (a, b) = (side("A").await?, side("B").await?);
    let session = a.node.open_pairing(suzent_devices::CODE_TTL).await?;
    let join = b.node.join(session.ticket()).await?;
    session.confirm(false)?;
    let err = join.finish(true).await.unwrap_err();
    assert_eq!(
        err,
        DeviceError::Pairing("the words were not confirmed on this device".into())
    );
    assert!(a.memory.paired.lock().unwrap().is_empty());
    Ok(())
}

#[tokio::test]
async fn a_code_pointing_at_this_machine_or_a_metadata_address_sends_nothing_there() -> Result<()> {
    // A device listening on every interface (not on loopback) gets a code whose addresses are a
    // local service and the cloud metadata address: it dials neither.
    let dir = tempfile::tempdir()?;
    let identity = DeviceIdentity::load_or_create(dir.path(), KeyStorePreference::File)?;
    let joiner = DeviceNode::bind(
        &identity,
        NodeConfig {
            name: "J".into(),
            platform: "linux".into(),
            relay: false,
            bind: vec!["0.0.0.0:0".parse()?],
            port: 0,
            discovery: false,
        },
        Arc::new(Memory::default()),
    )
    .await?;
    let local_service = std::net::UdpSocket::bind("127.0.0.1:0")?;
    local_service.set_read_timeout(Some(Duration::from_millis(500)))?;
    let ticket = PairingTicket {
        device: DeviceId::from_public_key(iroh::SecretKey::generate().public()),
        addrs: vec![local_service.local_addr()?, "169.254.169.254:80".parse()?],
        relay: Some("https://169.254.169.254/".into()),
        secret: suzent_devices::fresh_secret()?,
    };
    let err = joiner.join(&ticket).await.unwrap_err();
    assert!(err.to_string().contains("no usable address"), "{err}");
    let mut buf = [0u8; 64];
    assert!(
        local_service.recv_from(&mut buf).is_err(),
        "the local service received a packet"
    );
    Ok(())
}
