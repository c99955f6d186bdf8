//! Snapshot time and size on the 20,000-button page (goal: first page under 300 ms), and the
//! click round trip, on a managed headless Chromium (Debian's `/usr/bin/chromium`).
//! Run: `cargo bench -p suzent-browser --bench snapshot`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};
use suzent_core::BrowserCommand;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut h = common::harness().await;
    h.open("/big.html").await;
    // Warm-up: installs the agent in the frame.
    h.snapshot().await;
    let mut firsts = Vec::new();
    let mut page1 = String::new();
    for _ in 0..7 {
        let t = Instant::now();
        page1 = h
            .session
            .run(&BrowserCommand::Snapshot { page: None }, None)
            .await
            .unwrap()
            .text;
        firsts.push(t.elapsed());
    }
    let pages: usize = page1
        .split("page 1/")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    let mut total_chars = page1.chars().count();
    let mut later = Vec::new();
    for k in 2..=pages {
        let t = Instant::now();
        let p = h
            .session
            .run(
                &BrowserCommand::Snapshot {
                    page: Some(k as u32),
                },
                None,
            )
            .await
            .unwrap()
            .text;
        later.push(t.elapsed());
        total_chars += p.chars().count();
    }
    // Where the time goes: the agent call alone (traversal + transfer), in the same frame.
    let backend = h.session.backend().clone();
    let tabs = backend.tabs().await.unwrap();
    let tab = tabs
        .iter()
        .find(|t| t.url.contains("/big.html"))
        .unwrap()
        .id
        .clone();
    let frames = backend.frames(&tab).await.unwrap();
    let call = suzent_browser::AgentCall::new(
        suzent_browser::AgentFunction::Snapshot,
        &suzent_browser::SnapshotArgs {
            snapshot_id: "bench".into(),
            max_text: 100,
        },
    );
    let mut agent_calls = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let v = backend
            .call_agent(&tab, &frames[0].id, &call)
            .await
            .unwrap();
        agent_calls.push(t.elapsed());
        assert!(v["nodes"].as_array().is_some_and(|n| n.len() > 20_000));
    }
    // The page's refs are stale now (another snapshot id ran last): take a fresh one.
    page1 = h
        .session
        .run(&BrowserCommand::Snapshot { page: None }, None)
        .await
        .unwrap()
        .text;
    let target = common::ref_of(&page1, "\"Item 300\"");
    let mut clicks = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        h.session
            .run(
                &BrowserCommand::Click {
                    target: target.clone(),
                },
                None,
            )
            .await
            .unwrap();
        clicks.push(t.elapsed());
    }
    println!("snapshot of the 20,000-button + 5,000-row page (managed headless Chromium):");
    println!(
        "  first page: median {:?} (min {:?}, max {:?}, 7 runs), {} chars",
        median(firsts.clone()),
        firsts.iter().min().unwrap(),
        firsts.iter().max().unwrap(),
        page1.chars().count()
    );
    println!(
        "  of which the agent call (traversal in the page + transfer): median {:?}",
        median(agent_calls)
    );
    println!(
        "  {pages} pages, {total_chars} chars in all; a later page: median {:?}",
        median(later)
    );
    println!(
        "click round trip (agent point + real mouse input + settle): median {:?} over 20",
        median(clicks)
    );
    h.shutdown().await;
}
