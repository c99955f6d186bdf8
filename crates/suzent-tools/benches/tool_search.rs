//! `tool_search` over 5,000 registered tools: building the token index, free-text search, exact
//! lookup, and a whole `tool_search` call (catalog view, search, formatting).
//! Run: `cargo bench -p suzent-tools --bench tool_search`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use async_trait::async_trait;
use serde_json::json;
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_permissions::PathPolicy;
use suzent_tools::{
    SearchEntry, Tool, ToolCatalogView, ToolContext, ToolError, ToolIndex, ToolSearchHost,
    ToolSearchTool,
};

const TOOLS: usize = 5_000;

const VERBS: &[&str] = &[
    "get", "list", "create", "update", "delete", "search", "send", "read", "write", "sync",
    "export", "import", "archive", "query", "render", "schedule",
];
const NOUNS: &[&str] = &[
    "email",
    "invoice",
    "calendar_event",
    "issue",
    "pull_request",
    "file",
    "message",
    "contact",
    "ticket",
    "report",
    "dashboard",
    "channel",
    "repository",
    "page",
    "record",
    "deployment",
    "bucket",
    "table",
    "user",
    "order",
    "payment",
    "shipment",
    "document",
    "spreadsheet",
];
const SERVERS: &[&str] = &[
    "gmail",
    "slack",
    "github",
    "jira",
    "notion",
    "stripe",
    "aws",
    "gcal",
    "drive",
    "linear",
    "salesforce",
    "shopify",
    "zendesk",
    "hubspot",
    "airtable",
    "figma",
    "sentry",
    "datadog",
];

fn entries() -> Vec<SearchEntry> {
    (0..TOOLS)
        .map(|i| {
            let verb = VERBS[i % VERBS.len()];
            let noun = NOUNS[(i / VERBS.len()) % NOUNS.len()];
            let server = SERVERS[(i / (VERBS.len() * NOUNS.len()) + i) % SERVERS.len()];
            let name = format!("mcp__{server}__{verb}_{noun}_{i}");
            SearchEntry {
                runtime_name: name.clone(),
                class_name: name,
                display_name: format!("{verb} {noun}"),
                description: format!(
                    "{verb} a {noun} in {server}. Returns the {noun} with its id, owner and timestamps; supports paging and filters (variant {i})."
                ),
                capability: format!("mcp:{server}"),
            }
        })
        .collect()
}

struct Host(Arc<ToolIndex>);

#[async_trait]
impl ToolSearchHost for Host {
    async fn catalog(&self, _: &str) -> Result<ToolCatalogView, ToolError> {
        Ok(ToolCatalogView {
            enabled: vec!["read_file".into()],
            active: vec![],
            index: Arc::clone(&self.0),
            blocked: HashMap::new(),
        })
    }
    async fn activate(&self, _: &str, _: &str) -> Result<bool, ToolError> {
        Ok(true)
    }
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let mean = samples.iter().sum::<Duration>().as_secs_f64() / samples.len() as f64;
    let p = |q: usize| samples[(samples.len() * q / 100).min(samples.len() - 1)].as_secs_f64();
    println!(
        "{name:<44} n={:<6} mean {:>8.1} µs  p50 {:>8.1} µs  p99 {:>8.1} µs",
        samples.len(),
        mean * 1e6,
        p(50) * 1e6,
        p(99) * 1e6
    );
}

fn main() {
    let queries = [
        "send an email",
        "create invoice stripe",
        "list pull requests on github",
        "calendar event",
        "delete bucket aws",
        "export spreadsheet",
        "pay",
        "search slack messages in a channel",
    ];
    let mut build = Vec::new();
    let mut index = None;
    for _ in 0..20 {
        let e = entries();
        let t = Instant::now();
        index = Some(ToolIndex::build(e));
        build.push(t.elapsed());
    }
    let index = Arc::new(index.unwrap());
    let mut search = Vec::new();
    for round in 0..500 {
        let q = queries[round % queries.len()];
        let t = Instant::now();
        black_box(index.search(black_box(q), 10));
        search.push(t.elapsed());
    }
    let mut exact = Vec::new();
    for i in 0..2000 {
        let name = &index.entries()[(i * 7) % TOOLS].runtime_name;
        let t = Instant::now();
        black_box(index.find_exact(black_box(name)));
        exact.push(t.elapsed());
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tool = ToolSearchTool::new(Arc::new(Host(Arc::clone(&index))));
    let dir = tempfile::tempdir().unwrap();
    let policy = Arc::new(PathPolicy::new(dir.path(), &[]).unwrap());
    let ctx = ToolContext::new(
        "c",
        "u",
        dir.path().into(),
        dir.path().into(),
        dir.path().into(),
        policy,
    );
    let mut calls = Vec::new();
    for round in 0..300 {
        let args = json!({"query": queries[round % queries.len()]});
        let t = Instant::now();
        black_box(rt.block_on(tool.call(args, &ctx)).unwrap());
        calls.push(t.elapsed());
    }
    let mut listings = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        black_box(rt.block_on(tool.call(json!({}), &ctx)).unwrap());
        listings.push(t.elapsed());
    }
    println!("tool_search over {TOOLS} tools:");
    report("build the token index", build);
    report("free-text search (top 10)", search);
    report("exact name lookup", exact);
    report("tool_search call with a query (top 10)", calls);
    report("tool_search call without a query (listing)", listings);
}
