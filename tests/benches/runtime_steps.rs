//! Runtime overhead per tool step: 50-step scripted sessions (each step: one streamed model
//! response with a `read_file` call, then the tool) against the local scripted server, ten
//! sessions one after another in one runtime over one home, each in a new chat. After each
//! session the same responses are fetched with a bare HTTP client sending the very request
//! bodies the runtime sent; overhead = median step wall time minus median bare request time (the
//! server's share, which grows with the body it reads), both over all sessions' steps. The home
//! has a `rules.toml` of nine rules.
//!
//! Run: `cargo bench -p suzent-tests --bench runtime_steps` (`BENCH_SESSIONS=n` for another
//! count, `BENCH_VERBOSE=1` for each session's medians).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_core::{AgentEvent, Config, PermissionMode};
use suzent_runtime::provider::resolve::StaticKeys;
use suzent_runtime::{CreateChat, Paths, RunOptions, Runtime, RuntimeOptions};
use suzent_tests::{ScriptedServer, Turn};

const STEPS: usize = 50;
/// Sessions run one after another (a new chat each); the medians are over all steps.
const SESSIONS: usize = 10;

/// One session's responses. Call ids are unique, as OpenAI's are (`call_` and random
/// characters): a server that numbers its calls `call_0`, `call_1` in every session makes each
/// step past the first session's take the taken-id path (`turn/ids.rs`) instead.
fn turns(session: usize) -> Vec<Turn> {
    let mut turns: Vec<Turn> = (0..STEPS)
        .map(|i| {
            Turn::tool_call(
                format!("call_{session}_{i}"),
                "read_file",
                json!({"file_path": format!("src/f{}.rs", i % 5)}).to_string(),
            )
        })
        .collect();
    turns.push(Turn::text("done"));
    turns
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        for i in 0..5 {
            std::fs::write(ws.join(format!("src/f{i}.rs")), "fn main() {}\n".repeat(200)).unwrap();
        }
        // A user's hand-written rules (none of them decides read_file): the gate reads the rules
        // in force on every call.
        let config_dir = dir.path().join("home/config");
        std::fs::create_dir_all(&config_dir).unwrap();
        let mut rules = String::new();
        for word in ["rm", "sudo", "dd", "mkfs", "shutdown", "curl", "wget", "ssh"] {
            rules.push_str(&format!(
                "[[rule]]\ntool = \"run_command\"\nbehavior = \"deny\"\nprefix = \"{word}\"\ndescription = \"no {word}\"\n\n"
            ));
        }
        rules.push_str("[[rule]]\ntool = \"write_file\"\nbehavior = \"ask\"\npath = \"secrets/**\"\n");
        std::fs::write(config_dir.join("rules.toml"), rules).unwrap();
        // A user's file was written long before the run. Its status-change time cannot be set
        // back (setting the modification time moves it to now), and a file changed within the
        // last 2 s is read again on every call until it settles: wait until it has.
        std::thread::sleep(Duration::from_millis(2100));
        let sessions = std::env::var("BENCH_SESSIONS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(SESSIONS);
        let server = ScriptedServer::start((0..sessions).flat_map(turns).collect()).await;
        let runtime = open_runtime(&dir, &server).await;
        let client = reqwest::Client::new();
        let mut steps = Vec::new();
        let mut server_times = Vec::new();
        let mut total = Duration::ZERO;
        for i in 0..sessions {
            let (session, took) = session(&runtime, &ws).await;
            // The server's share, measured right after the session (this machine's speed
            // drifts): the same responses fetched by a bare client that sends the very request
            // bodies the runtime sent (the server reads each whole body, which grows with the
            // transcript). Each session asked STEPS + 1 times (the last: its closing answer).
            let sent = server.requests();
            assert_eq!(sent.len(), (i + 1) * (STEPS + 1), "the server saw {} requests", sent.len());
            let bare = ScriptedServer::start(turns(i)).await;
            let mut bare_times = Vec::new();
            for body in &sent[i * (STEPS + 1)..][..STEPS] {
                let body = serde_json::to_vec(body).unwrap();
                let t = Instant::now();
                let resp = client
                    .post(format!("{}/chat/completions", bare.openai_base()))
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await
                    .unwrap();
                let _ = resp.bytes().await.unwrap();
                bare_times.push(t.elapsed());
            }
            if std::env::var_os("BENCH_VERBOSE").is_some() {
                eprintln!(
                    "session: median step {:?}, bare server {:?}",
                    median(session.clone()),
                    median(bare_times.clone())
                );
            }
            steps.extend(session);
            server_times.extend(bare_times);
            total += took;
        }
        let step = median(steps);
        let server = median(server_times);
        println!("{sessions} sessions of {STEPS} tool steps in {:.1} ms total", total.as_secs_f64() * 1e3);
        println!("median step wall time     {:>8.3} ms", step.as_secs_f64() * 1e3);
        println!("median bare server time   {:>8.3} ms", server.as_secs_f64() * 1e3);
        println!("runtime overhead per step {:>8.3} ms", step.saturating_sub(server).as_secs_f64() * 1e3);
    });
}

/// A runtime over `dir`'s home whose default model is the scripted server's.
async fn open_runtime(dir: &tempfile::TempDir, server: &ScriptedServer) -> Runtime {
    let config = Config {
        default_model: Some("openai/bench-model".into()),
        providers: suzent_core::ProvidersConfig {
            openai: suzent_core::ProviderConfig {
                base_url: Some(server.openai_base()),
                ..Default::default()
            },
            ..Default::default()
        },
        max_steps: 100,
        // The 50 reads (about 30k tokens) fit, so no step compacts: the bench times steps.
        models: [(
            "openai/bench-model".to_string(),
            suzent_core::ModelSettings {
                context_window: Some(1_000_000),
                ..Default::default()
            },
        )]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    Runtime::open(RuntimeOptions {
        paths: Paths::under(&dir.path().join("home")),
        keys: Arc::new(StaticKeys::new().with("openai", "sk-bench")),
        config: Some(config),
    })
    .await
    .unwrap()
}

/// One 50-step session in a new chat: each step's wall time (from one tool call's end to the
/// next) and the session's.
async fn session(runtime: &Runtime, ws: &std::path::Path) -> (Vec<Duration>, Duration) {
    let chat = runtime
        .create_chat(CreateChat {
            workspace: Some(ws.to_path_buf()),
            mode: Some(PermissionMode::Auto),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut events = runtime.subscribe();
    let collector = tokio::spawn(async move {
        let mut stamps = Vec::new();
        while let Ok(ev) = events.recv().await {
            match ev {
                AgentEvent::ToolCallEnd { .. } => stamps.push(Instant::now()),
                AgentEvent::RunFinished { .. } => break,
                _ => {}
            }
        }
        stamps
    });
    let start = Instant::now();
    let summary = runtime
        .send_message(&chat.id, "read the files", RunOptions::default())
        .await
        .unwrap();
    let total = start.elapsed();
    let stamps = collector.await.unwrap();
    assert_eq!(stamps.len(), STEPS, "{summary:?}");
    let mut steps = Vec::new();
    let mut prev = start;
    for s in &stamps {
        steps.push(*s - prev);
        prev = *s;
    }
    (steps, total)
}
