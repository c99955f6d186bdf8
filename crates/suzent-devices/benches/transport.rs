//! The device transport on loopback (relays off): pairing time end to end (code opened ->
//! both confirmed), the round trip of one `deliver` request on an established connection, and
//! the memory an idle connection costs. Prints medians; run with
//! `cargo bench -p suzent-devices --bench transport`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use async_trait::async_trait;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use suzent_devices::wire::{Request, Response, close};
use suzent_devices::{
    Admission, DeviceId, DeviceIdentity, DeviceNode, KeyStorePreference, NodeConfig, PeerAddress,
    PeerHandler, PeerInfo,
};

#[derive(Default)]
struct Open {
    paired: Mutex<HashSet<DeviceId>>,
}

#[async_trait]
impl PeerHandler for Open {
    async fn admit(&self, peer: &DeviceId) -> Admission {
        if self.paired.lock().unwrap().contains(peer) {
            Admission::Admit
        } else {
            Admission::Refuse {
                code: close::NOT_PAIRED,
                reason: "not paired".into(),
            }
        }
    }
    async fn handle(&self, _: &DeviceId, _: Request) -> Response {
        Response::Accepted { duplicate: false }
    }
    async fn paired(&self, peer: &PeerInfo) -> Result<(), String> {
        self.paired.lock().unwrap().insert(peer.device);
        Ok(())
    }
}

async fn node(dir: &std::path::Path, name: &str, handler: Arc<Open>) -> DeviceNode {
    let identity =
        DeviceIdentity::load_or_create(&dir.join(name), KeyStorePreference::File).unwrap();
    DeviceNode::bind(
        &identity,
        NodeConfig {
            name: name.into(),
            platform: "linux".into(),
            relay: false,
            bind: vec!["127.0.0.1:0".parse().unwrap()],
            port: 0,
            discovery: false,
        },
        handler,
    )
    .await
    .unwrap()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn pct(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().unwrap();

    // Pairing end to end.
    let mut pairing = Vec::new();
    for i in 0..10 {
        let (ha, hb) = (Arc::new(Open::default()), Arc::new(Open::default()));
        let a = node(dir.path(), &format!("pa{i}"), ha).await;
        let b = node(dir.path(), &format!("pb{i}"), hb).await;
        let started = Instant::now();
        let session = a.open_pairing(suzent_devices::CODE_TTL).await.unwrap();
        let ticket = suzent_devices::PairingTicket::parse(&session.ticket().code()).unwrap();
        let join = b.join(&ticket).await.unwrap();
        session.confirm(true).unwrap();
        join.finish(true).await.unwrap();
        pairing.push(started.elapsed());
        a.close().await;
        b.close().await;
    }
    println!(
        "pairing end to end (code -> both confirmed, users answering at once): median {:?} over {} runs",
        median(pairing),
        10
    );

    // Request round trip on an established connection.
    let (ha, hb) = (Arc::new(Open::default()), Arc::new(Open::default()));
    let a = node(dir.path(), "a", ha.clone()).await;
    let b = node(dir.path(), "b", hb.clone()).await;
    ha.paired.lock().unwrap().insert(b.device_id());
    hb.paired.lock().unwrap().insert(a.device_id());
    let to_b = PeerAddress {
        device: b.device_id(),
        addrs: b.addrs(),
        relay: None,
    };
    let connect = Instant::now();
    a.connect(&to_b).await.unwrap();
    println!(
        "first connection (QUIC + TLS handshake on loopback): {:?}",
        connect.elapsed()
    );
    let text = "x".repeat(200);
    let mut rtts = Vec::new();
    for i in 0..1000 {
        let req = Request::Deliver {
            message_id: format!("m{i}"),
            target: None,
            from_agent: None,
            text: text.clone(),
        };
        let t = Instant::now();
        let r = a.request(&to_b, &req).await.unwrap();
        rtts.push(t.elapsed());
        assert_eq!(r, Response::Accepted { duplicate: false });
    }
    println!(
        "deliver request round trip (200-byte message, one stream per request): median {:?}, p95 {:?}, over 1000",
        median(rtts.clone()),
        pct(rtts, 0.95)
    );

    // Memory of idle connections: 20 client endpoints, then each connected to `b`.
    let server = Arc::new(Open::default());
    let hub = node(dir.path(), "hub", server.clone()).await;
    let hub_addr = PeerAddress {
        device: hub.device_id(),
        addrs: hub.addrs(),
        relay: None,
    };
    let mut clients = Vec::new();
    for i in 0..20 {
        let c = node(dir.path(), &format!("c{i}"), Arc::new(Open::default())).await;
        server.paired.lock().unwrap().insert(c.device_id());
        clients.push(c);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = rss_kib();
    for c in &clients {
        c.connect(&hub_addr).await.unwrap();
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    let after = rss_kib();
    println!(
        "idle connection: {} KiB of RSS per connection (both ends, 20 connections idle 5 s; process RSS {} -> {} KiB)",
        after.saturating_sub(before) / 20,
        before,
        after
    );
}
