//! Channel latency (issue 20 "Measure"): from a Telegram message arriving at the Bot API test
//! server on loopback to the start of its agent turn (`run_started`), through long polling, the
//! allow-list, the durable inbox and the dispatcher. Goal: under 200 ms.
//!
//! `cargo bench -p suzent-runtime --bench channel_latency` (SUZENT_BENCH_ROUNDS, default 50).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;
use suzent_core::{AgentEvent, Config};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{
    ChannelConfig, ChannelPlatform, ChannelProfile, Paths, Runtime, RuntimeOptions,
};
use suzent_tests::{ScriptedServer, TelegramServer, Turn};

const TOKEN: &str = "123456:BENCH-TOKEN";

fn main() {
    let rounds: usize = std::env::var("SUZENT_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(rounds));
}

async fn run(rounds: usize) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let telegram = TelegramServer::start(TOKEN).await;
    let model =
        ScriptedServer::start((0..rounds).map(|i| Turn::text(format!("ok {i}"))).collect()).await;
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        workspace: Some(ws),
        channels: vec![ChannelConfig {
            name: "telegram".into(),
            platform: ChannelPlatform::Telegram,
            enabled: true,
            allowed_users: vec!["42".into()],
            profile: ChannelProfile::Headless,
            base_url: Some(telegram.base_url()),
        }],
        ..Config::default()
    };
    config.providers.openai.base_url = Some(model.openai_base());
    let runtime = Runtime::open(RuntimeOptions {
        paths: Paths::under(&dir.path().join("home")),
        keys: Arc::new(
            StaticKeys::new()
                .with("openai", "sk-test")
                .with("channel:telegram", TOKEN),
        ),
        config: Some(config),
    })
    .await
    .unwrap();
    runtime.start_dispatcher();
    runtime.start_channels();
    runtime
        .channels()
        .wait_connected("telegram", Duration::from_secs(10))
        .await
        .unwrap();
    let mut samples = Vec::with_capacity(rounds);
    for i in 0..rounds {
        let mut events = runtime.subscribe();
        let update = telegram.push_private(42, "Ada", &format!("message {i}"));
        let pushed = telegram.pushed_at(update).unwrap();
        loop {
            match tokio::time::timeout(Duration::from_secs(20), events.recv()).await {
                Ok(Ok(AgentEvent::RunStarted { .. })) => {
                    samples.push(pushed.elapsed());
                    break;
                }
                Ok(Ok(_)) | Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
                other => panic!("no run started: {other:?}"),
            }
        }
        // The reply goes out before the next round.
        telegram.wait_sent(i + 1, Duration::from_secs(20)).await;
    }
    runtime.shutdown().await;
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = samples[samples.len() / 2];
    let p95 = samples[(samples.len() * 95 / 100).min(samples.len() - 1)];
    let max = samples[samples.len() - 1];
    println!(
        "channel message -> turn start over {} rounds: median {:.1} ms, p95 {:.1} ms, max {:.1} ms (goal < 200 ms)",
        samples.len(),
        ms(median),
        ms(p95),
        ms(max)
    );
}
