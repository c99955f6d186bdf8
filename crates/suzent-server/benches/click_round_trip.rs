//! Click round trip through the extension (issue 15's Measure: goal median < 30 ms for `click`
//! on a local page): real Chromium with the unpacked extension, paired through the popup, and
//! browser-core's session sending `click` over the bridge (act → point, mouse move, click, and
//! the tab checks around it). Also the bare bridge round trip (`tabs`).
//!
//! `cargo bench -p suzent-server --bench click_round_trip` (needs the extension built and
//! /usr/bin/chromium).

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};
use support::e2e::E2e;
use suzent_browser::{BrowserBackend, BrowserSession, SessionConfig};
use suzent_core::BrowserCommand;

const CLICKS: usize = 100;

fn summary(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{name}: n={} median {:.2} ms, p90 {:.2} ms, min {:.2} ms, max {:.2} ms",
        samples.len(),
        ms(at(0.5)),
        ms(at(0.9)),
        ms(samples[0]),
        ms(samples[samples.len() - 1])
    );
}

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let e = E2e::start().await?;
        let page = e.chromium.open(&e.fixtures.url("/page.html")).await?;
        page.wait_for("document.readyState === 'complete'").await?;
        let popup = e.popup().await?;
        e.pair(&popup).await?;
        let backend: Arc<dyn BrowserBackend> = Arc::new(e.server.backend());
        let mut session = BrowserSession::new(Arc::clone(&backend), SessionConfig::default());
        let snap = session
            .run(&BrowserCommand::Snapshot { page: None }, None)
            .await?;
        let line = snap
            .text
            .lines()
            .find(|l| l.contains("\"Pay\""))
            .unwrap_or_default();
        let pay = line
            .rsplit("[ref=")
            .next()
            .unwrap_or_default()
            .trim_end_matches(']')
            .to_string();
        let origin = e.fixtures.origin();
        // Warm-up: attaches the debugger and injects the agent.
        for _ in 0..5 {
            session
                .run(
                    &BrowserCommand::Click {
                        target: pay.clone(),
                    },
                    Some(&origin),
                )
                .await?;
        }
        let mut clicks = Vec::with_capacity(CLICKS);
        for _ in 0..CLICKS {
            let start = Instant::now();
            session
                .run(
                    &BrowserCommand::Click {
                        target: pay.clone(),
                    },
                    Some(&origin),
                )
                .await?;
            clicks.push(start.elapsed());
        }
        let mut tabs = Vec::with_capacity(CLICKS);
        for _ in 0..CLICKS {
            let start = Instant::now();
            backend.tabs().await?;
            tabs.push(start.elapsed());
        }
        let hits = e.fixtures.wait_hits(CLICKS + 5).await.len();
        summary("browser_action click through the extension", clicks);
        summary("bridge round trip (tabs)", tabs);
        println!("page saw {hits} clicks (expected {})", CLICKS + 5);
        anyhow::Ok(())
    })
}
