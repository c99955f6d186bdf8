//! Background commands and the inbox dispatcher under load (issue 5 "Measure").
//!
//! `cargo bench -p suzent-runtime --bench background` prints:
//! - start latency of 100 concurrent background commands (`start_command` until the id is back),
//! - dispatcher latency from a command's exit to the wake-up turn of its idle agent, for 100
//!   agents whose commands end together (100 chats, scripted model server),
//! - output throughput: bytes/s a command writes into its bounded spool, and bytes/s read back
//!   through `check_command` pages,
//! - RSS of this process before and after.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_core::{AgentEvent, BackgroundTaskStatus, Config, PermissionMode};
use suzent_permissions::PathPolicy;
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{CreateChat, Paths, RunOptions, Runtime, RuntimeOptions};
use suzent_tests::{ScriptedServer, Turn};
use suzent_tools::{BackgroundCommands, CommandLimits, ToolContext};

const N: usize = 100;

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn percentiles(mut v: Vec<Duration>) -> String {
    v.sort();
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    format!(
        "p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms (n={})",
        at(0.5).as_secs_f64() * 1e3,
        at(0.95).as_secs_f64() * 1e3,
        at(1.0).as_secs_f64() * 1e3,
        v.len()
    )
}

fn context(root: &std::path::Path) -> ToolContext {
    let ws = root.join("ws");
    let persist = root.join("persist");
    let shared = root.join("shared");
    for d in [&ws, &persist, &shared] {
        std::fs::create_dir_all(d).unwrap();
    }
    let policy = PathPolicy::new(&ws, &[persist.clone(), shared.clone()]).unwrap();
    ToolContext::new("bench", "bench", ws, persist, shared, Arc::new(policy))
}

/// A script in the context's workspace, on the host.
fn shell<'a>(ctx: &'a ToolContext, script: &'a str) -> suzent_tools::exec::ShellRequest<'a> {
    suzent_tools::exec::ShellRequest {
        script,
        cwd: &ctx.workspace_root,
        sandbox: None,
    }
}

async fn start_latency_and_throughput() {
    let dir = tempfile::tempdir().unwrap();
    let commands =
        BackgroundCommands::new(dir.path().join("out"), CommandLimits::default()).unwrap();
    let ctx = context(dir.path());
    let rss0 = rss_mib();
    let mut latencies = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..N {
        let t = Instant::now();
        let id = commands
            .start(
                &ctx.chat_id,
                None,
                &shell(&ctx, "sleep 2; echo done"),
                Duration::from_secs(60),
            )
            .unwrap();
        latencies.push(t.elapsed());
        ids.push(id);
    }
    let rss_running = rss_mib();
    println!(
        "start latency, {N} concurrent commands: {}",
        percentiles(latencies)
    );
    for id in &ids {
        commands
            .check(id, None, 0, 1000, Duration::from_secs(30))
            .await
            .unwrap();
    }
    println!(
        "RSS: {rss0:.1} MiB before, {rss_running:.1} MiB with {N} commands running, {:.1} MiB after they ended",
        rss_mib()
    );

    // Throughput: 1 GiB into the spool.
    let t = Instant::now();
    let id = commands
        .start(
            &ctx.chat_id,
            None,
            &shell(&ctx, "head -c 1073741824 /dev/zero | tr '\\0' 'x'"),
            Duration::from_secs(600),
        )
        .unwrap();
    let (snap, _) = commands
        .check(&id, None, 0, 1, Duration::from_secs(600))
        .await
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "spool write: {} bytes in {secs:.2} s = {:.0} MiB/s; RSS after: {:.1} MiB",
        snap.task.output_bytes,
        snap.task.output_bytes as f64 / secs / 1048576.0,
        rss_mib()
    );
    // Read back the retained tail through check pages (64,000 bytes each), 20 times over.
    let t = Instant::now();
    let mut read = 0u64;
    for _ in 0..20 {
        let (_, first) = commands
            .check(&id, None, 0, 64_000, Duration::ZERO)
            .await
            .unwrap();
        let mut offset = first.start;
        while offset < first.total {
            let (_, page) = commands
                .check(&id, None, offset, 64_000, Duration::ZERO)
                .await
                .unwrap();
            read += page.text.len() as u64;
            offset = page.next_offset;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "check_command read: {read} bytes in {secs:.2} s = {:.0} MiB/s (64,000-byte pages)",
        read as f64 / secs / 1048576.0
    );
}

async fn dispatcher_latency() {
    let server = ScriptedServer::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut config = Config {
        default_model: Some("openai/gpt-bench".into()),
        default_mode: PermissionMode::FullAccess,
        tools: vec!["ShellTool".into()],
        ..Config::default()
    };
    config.providers.openai.base_url = Some(server.openai_base());
    let rt = Runtime::open(RuntimeOptions {
        paths: Paths::under(&dir.path().join("home")),
        keys: Arc::new(StaticKeys::new().with("openai", "sk-bench")),
        config: Some(config),
    })
    .await
    .unwrap();
    rt.start_dispatcher();
    let mut events = rt.subscribe();
    let mut chats = Vec::new();
    // Every command ends at the same wall-clock second, after all are started.
    let end_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 15;
    for i in 0..N {
        let chat = rt
            .create_chat(CreateChat {
                workspace: Some(ws.clone()),
                ..CreateChat::default()
            })
            .await
            .unwrap()
            .id;
        let script =
            format!("while [ $(date +%s) -lt {end_at} ]; do sleep 0.05; done; echo done-{i}");
        server.push_turns(vec![
            Turn::tool_call(
                format!("call-{i}"),
                "start_command",
                serde_json::json!({"content": script}).to_string(),
            ),
            Turn::text("started"),
        ]);
        rt.send_message(&chat, "start", RunOptions::default())
            .await
            .unwrap();
        chats.push(chat);
    }
    let mut finished: HashMap<String, Instant> = HashMap::new();
    let mut latencies = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while latencies.len() < N && Instant::now() < deadline {
        let Ok(Ok(event)) = tokio::time::timeout(Duration::from_secs(5), events.recv()).await
        else {
            continue;
        };
        match event {
            AgentEvent::BackgroundTaskUpdate { chat_id, task }
                if task.status == BackgroundTaskStatus::Finished =>
            {
                finished.insert(chat_id, Instant::now());
            }
            AgentEvent::RunStarted { chat_id, .. } => {
                if let Some(t) = finished.remove(&chat_id) {
                    latencies.push(t.elapsed());
                }
            }
            _ => {}
        }
    }
    println!(
        "dispatcher latency, exit -> wake-up turn start, {N} agents at once: {}",
        percentiles(latencies)
    );
    rt.shutdown().await;
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        start_latency_and_throughput().await;
        dispatcher_latency().await;
    });
}
