//! MCP call overhead: one pooled connection reused by every call vs a new connection (process
//! start + handshake) per call, against `@modelcontextprotocol/server-everything` (`echo`).
//! Run: `cargo bench -p suzent-mcp --bench pool` (needs `npm ci` in tests/mcp-servers).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_mcp::{McpConnection, McpOptions, McpRegistry, McpServerConfig, SecretLookup};

fn config() -> McpServerConfig {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(script.is_file(), "run `npm ci` in tests/mcp-servers first");
    McpServerConfig::stdio("node", vec![script.display().to_string(), "stdio".into()])
}

fn stats(name: &str, mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    let mean = samples.iter().sum::<Duration>().as_secs_f64() / samples.len() as f64;
    let p50 = samples[samples.len() / 2];
    let p95 = samples[(samples.len() * 95 / 100).min(samples.len() - 1)];
    println!(
        "{name:<34} n={:<4} mean {:>9.3} ms  p50 {:>9.3} ms  p95 {:>9.3} ms",
        samples.len(),
        mean * 1e3,
        p50.as_secs_f64() * 1e3,
        p95.as_secs_f64() * 1e3
    );
    mean
}

#[tokio::main]
async fn main() {
    let pooled_n = 200;
    let fresh_n = 20;
    let dir = tempfile::tempdir().unwrap();
    let registry = McpRegistry::open(McpOptions::new(dir.path().join("mcp.json"))).unwrap();
    registry.add_server("everything", config()).unwrap();
    // Warm-up: the first call starts the server.
    registry
        .call("everything", "echo", json!({"message": "warm"}))
        .await
        .unwrap();
    let mut pooled = Vec::new();
    for i in 0..pooled_n {
        let t = Instant::now();
        registry
            .call("everything", "echo", json!({"message": format!("m{i}")}))
            .await
            .unwrap();
        pooled.push(t.elapsed());
    }
    registry.shutdown().await;

    let secrets: SecretLookup = Arc::new(|_| None);
    let cfg = config();
    let mut fresh = Vec::new();
    for i in 0..fresh_n {
        let t = Instant::now();
        let conn = McpConnection::connect("everything", &cfg, &secrets, None)
            .await
            .unwrap();
        conn.call_tool(
            "echo",
            json!({"message": format!("m{i}")}),
            Duration::from_secs(30),
        )
        .await
        .unwrap();
        fresh.push(t.elapsed());
        conn.close().await;
    }
    println!("MCP call overhead (server-everything echo over stdio):");
    let p = stats("pooled connection (reused)", pooled);
    let f = stats("new connection per call", fresh);
    println!("ratio new/pooled: {:.0}x", f / p);
}
