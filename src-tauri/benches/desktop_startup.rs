//! Cold start to first painted chat, and idle memory of the whole app (the app process plus the
//! WebKit web and network processes), under Xvfb. Each run starts the app with a fresh
//! `SUZENT_HOME` and fresh XDG directories (no WebKit caches) through tauri-driver, times the
//! WebDriver session request (which launches the app) until the chat list is displayed, then
//! waits 20 s idle (`SUZENT_BENCH_IDLE_SECS`) and sums the memory of the process tree from `/proc`.
//!
//! `cargo bench -p suzent-desktop --features custom-protocol --bench desktop_startup`
//! (build the UI first; `SUZENT_BENCH_RUNS` sets the number of runs, default 5;
//! `SUZENT_BENCH_APP=/usr/bin/suzent-desktop` times an installed build instead). Prints each run
//! and the medians, and writes them to `$CARGO_TARGET_DIR/desktop-startup.json`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::time::Duration;
use suzent_tests::ScriptedServer;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    if let Some(reason) = support::missing_prerequisites() {
        eprintln!("desktop_startup: cannot run: {reason}");
        std::process::exit(if support::in_ci() { 1 } else { 0 });
    }
    let runs: usize = std::env::var("SUZENT_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let idle_secs: u64 = std::env::var("SUZENT_BENCH_IDLE_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    // SUZENT_BENCH_APP=/usr/bin/suzent-desktop times an installed build (a .deb, the
    // AppImage) instead of the one cargo built beside this bench.
    let installed = std::env::var_os("SUZENT_BENCH_APP").map(std::path::PathBuf::from);
    if let Some(path) = &installed {
        if !path.is_file() {
            eprintln!(
                "desktop_startup: SUZENT_BENCH_APP={} is not a file",
                path.display()
            );
            std::process::exit(2);
        }
        *support::APP_BINARY
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(path.clone());
    }
    let app = installed
        .as_deref()
        .unwrap_or(Path::new(env!("CARGO_BIN_EXE_suzent-desktop")));
    let profile = if installed.is_some() {
        "installed"
    } else if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "desktop_startup: {runs} runs of {} ({profile})",
        app.display()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (mut paints, mut rss, mut pss, mut procs) = (Vec::new(), Vec::new(), Vec::new(), 0);
    let mut app_rss = Vec::new();
    for run in 1..=runs {
        let server = ScriptedServer::start_blocking(Vec::new());
        let (paint, memory) = runtime.block_on(async {
            let mut desktop = support::Desktop::start("bench-startup", server, None)
                .await
                .unwrap_or_else(|e| panic!("starting the app: {e:#}"));
            let paint = desktop.first_paint;
            tokio::time::sleep(Duration::from_secs(idle_secs)).await;
            let memory = support::tree_memory(desktop.driver.child.id(), app);
            desktop.stop().await;
            (paint, memory)
        });
        let memory = memory.expect("the app's process tree is visible in /proc");
        let each: Vec<String> = memory
            .each
            .iter()
            .map(|(name, kib)| format!("{name} {:.1} MiB", *kib as f64 / 1024.0))
            .collect();
        println!(
            "run {run}: first painted chat {:.0} ms; idle memory of {} processes: RSS {:.1} MiB, PSS {:.1} MiB ({})",
            paint.as_secs_f64() * 1000.0,
            memory.processes,
            memory.rss_kib as f64 / 1024.0,
            memory.pss_kib as f64 / 1024.0,
            each.join(", ")
        );
        let app_kib: u64 = memory
            .each
            .iter()
            .filter(|(name, _)| name == "suzent-desktop")
            .map(|(_, kib)| *kib)
            .sum();
        app_rss.push(app_kib as f64 / 1024.0);
        paints.push(paint.as_secs_f64() * 1000.0);
        rss.push(memory.rss_kib as f64 / 1024.0);
        pss.push(memory.pss_kib as f64 / 1024.0);
        procs = memory.processes;
    }
    let summary = serde_json::json!({
        "runs": runs,
        "profile": profile,
        "firstPaintMsMedian": median(paints.clone()),
        "idleRssMibMedian": median(rss.clone()),
        "idleSecs": idle_secs,
        "appRssMibMedian": median(app_rss.clone()),
        "idlePssMibMedian": median(pss.clone()),
        "processes": procs,
        "firstPaintMs": paints,
        "idleRssMib": rss,
        "idlePssMib": pss,
    });
    println!(
        "median of {runs}: first painted chat {:.0} ms; after {idle_secs} s idle: app process RSS {:.1} MiB, all processes RSS {:.1} MiB, PSS {:.1} MiB ({procs} processes)",
        summary["firstPaintMsMedian"].as_f64().unwrap_or_default(),
        summary["appRssMibMedian"].as_f64().unwrap_or_default(),
        summary["idleRssMibMedian"].as_f64().unwrap_or_default(),
        summary["idlePssMibMedian"].as_f64().unwrap_or_default(),
    );
    let out = support::screenshot_root()
        .parent()
        .map(|p| p.join("desktop-startup.json"));
    if let Some(out) = out
        && std::fs::write(&out, summary.to_string()).is_ok()
    {
        println!("wrote {}", out.display());
    }
}
