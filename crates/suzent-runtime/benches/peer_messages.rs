//! A -> B message latency between two installs in one process on loopback (relays off): from
//! `agent_send`'s queueing (the durable outbox) to A seeing the message delivered (stored in B's
//! durable inbox and acknowledged), over an established connection. Also the pairing time end to
//! end through the runtime API. Run with `cargo bench -p suzent-runtime --bench peer_messages`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_core::Config;
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{Paths, PeerMessageStatus, Runtime, RuntimeOptions};

async fn open(dir: &std::path::Path, name: &str) -> Runtime {
    let mut config = Config::default();
    config.devices.name = Some(name.into());
    config.devices.relay = false;
    config.devices.discovery = false;
    config.devices.bind = vec!["127.0.0.1:0".into()];
    let rt = Runtime::open(RuntimeOptions {
        paths: Paths::under(&dir.join(name)),
        keys: Arc::new(StaticKeys::new()),
        config: Some(config),
    })
    .await
    .unwrap();
    rt.devices().start().await.unwrap();
    rt
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn pct(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let a = open(dir.path(), "a").await;
    let b = open(dir.path(), "b").await;

    let started = Instant::now();
    let offer = a.devices().pair().await.unwrap();
    b.devices().join(&offer.code).await.unwrap();
    a.devices().confirm_pairing(true).unwrap();
    b.devices().finish_join(true).await.unwrap();
    println!(
        "pairing through the runtime (code -> stored on both, users answering at once): {:?}",
        started.elapsed()
    );

    let b_short = b.devices().this_device().await.unwrap().short_id;
    let to = format!("peer:{b_short}");
    // The sending chat need not exist for the outbox; use a fixed sender id.
    // Warm up: the first message also establishes the connection.
    let first = Instant::now();
    a.devices().send("bench", &to, "hello").await.unwrap();
    loop {
        let out = a.devices().outbox(None).await.unwrap();
        if out.iter().all(|m| m.status == PeerMessageStatus::Delivered) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    println!(
        "first message (dial + handshake + delivery): {:?}",
        first.elapsed()
    );

    let mut latencies = Vec::new();
    for i in 0..200 {
        let t = Instant::now();
        let id = a
            .devices()
            .send("bench", &to, &format!("message {i}"))
            .await
            .unwrap();
        loop {
            let out = a.devices().outbox(Some(&b_short)).await.unwrap();
            if out
                .iter()
                .any(|m| m.id == id && m.status == PeerMessageStatus::Delivered)
            {
                break;
            }
            tokio::time::sleep(Duration::from_micros(500)).await;
        }
        latencies.push(t.elapsed());
    }
    println!(
        "agent_send -> delivered on the other install (both sides' SQLite writes included): median {:?}, p95 {:?}, over 200",
        median(latencies.clone()),
        pct(latencies, 0.95)
    );
    a.shutdown().await;
    b.shutdown().await;
}
