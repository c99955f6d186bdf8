//! The scheduler's cost (issue 18 "Measure").
//!
//! `cargo bench -p suzent-runtime --bench scheduler` registers 1,000 jobs (daily, weekday,
//! hourly and `every N minutes` patterns, none due in the next minutes) plus 5 jobs due every
//! minute, on a real SQLite file with the system clock, and lets the scheduler run for one
//! whole minute boundary. It prints:
//! - wake-ups per minute while idle (scheduler passes: lease renewals, due occurrences),
//! - CPU time used by the process per minute while idle, and its RSS,
//! - the delay from each scheduled time to the start of its run (goal: under 1 s),
//! - the time to load and plan 1,000 jobs once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use async_trait::async_trait;
use chrono::{DateTime, Timelike, Utc};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use suzent_core::{CatchUpPolicy, Delivery, JobKind, OverlapPolicy};
use suzent_runtime::scheduler::{
    Clock, JobRunner, RunReport, Schedule, Scheduler, SchedulerOptions, SystemClock,
};
use suzent_store::{JobDraft, JobRecord, RunRecord, Store};
use tokio_util::sync::CancellationToken;

const JOBS: usize = 1_000;

#[derive(Default)]
struct Recorder {
    delays: Mutex<Vec<Duration>>,
}

#[async_trait]
impl JobRunner for Recorder {
    async fn run(
        &self,
        _job: &JobRecord,
        run: &RunRecord,
        _cancel: CancellationToken,
    ) -> RunReport {
        let late = (Utc::now() - run.slot).to_std().unwrap_or_default();
        self.delays.lock().unwrap().push(late);
        RunReport::default()
    }
}

fn cpu_secs() -> f64 {
    // utime + stime of this process, in clock ticks (fields 14 and 15 of /proc/self/stat).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or_default();
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn job(i: usize, schedule: String) -> JobDraft {
    JobDraft {
        id: format!("job-{i:04}"),
        name: format!("job {i}"),
        kind: JobKind::Prompt,
        schedule,
        timezone: ["UTC", "Europe/Berlin", "America/New_York", "Asia/Shanghai"][i % 4].to_string(),
        prompt: "noop".into(),
        workspace: None,
        model: None,
        chat_id: None,
        delivery: Delivery::Silent,
        overlap: OverlapPolicy::Skip,
        catch_up: CatchUpPolicy::RunOnce,
        timeout_secs: 60,
        max_retries: 0,
        enabled: true,
    }
}

/// A pattern for job `i` with no occurrence in the next `quiet` minutes after `now`.
fn idle_pattern(i: usize, now: DateTime<Utc>, quiet: i64) -> String {
    let start = now.minute() as usize;
    let minute = (start + 10 + i % 40) % 60;
    let hour = (now.hour() as usize + 2 + i % 20) % 24;
    let candidates = [
        format!("{minute} {hour} * * *"),
        format!("{minute} {hour} * * 1-5"),
        format!("{minute} * * * *"),
        format!("every {} minutes", 120 + i % 600),
    ];
    let tz = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Shanghai"][i % 4];
    for c in candidates.iter().cycle().skip(i % 4).take(4) {
        let s = Schedule::parse(c, tz).unwrap();
        if s.next_after(now)
            .is_some_and(|n| (n - now).num_minutes() >= quiet)
        {
            return c.clone();
        }
    }
    format!("{minute} {hour} 1 1 *")
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("suzent.db")).await.unwrap();
    let now = Utc::now();
    for i in 0..JOBS {
        store
            .upsert_job(&job(i, idle_pattern(i, now, 3)), now)
            .await
            .unwrap();
    }
    for i in 0..5 {
        store
            .upsert_job(&job(JOBS + i, "* * * * *".into()), now)
            .await
            .unwrap();
    }

    // Load and plan 1,000 jobs once (what a pass does after a change).
    let t = Instant::now();
    let jobs = store.list_jobs().await.unwrap();
    let mut next = 0usize;
    for j in &jobs {
        let s = Schedule::parse(&j.draft.schedule, &j.draft.timezone).unwrap();
        next += usize::from(s.next_after(j.cursor).is_some());
    }
    let plan = t.elapsed();
    assert_eq!(next, JOBS + 5);

    let recorder = Arc::new(Recorder::default());
    let runner: Arc<dyn JobRunner> = recorder.clone();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let scheduler = Scheduler::new(store.clone(), clock, runner, SchedulerOptions::default());
    let rss_before = rss_mib();
    assert!(scheduler.start().await.scheduling);
    // Let the start-up pass settle, then measure one minute.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (passes0, cpu0, t0) = (scheduler.passes(), cpu_secs(), Instant::now());
    tokio::time::sleep(Duration::from_secs(60)).await;
    let (passes1, cpu1, elapsed) = (scheduler.passes(), cpu_secs(), t0.elapsed());
    let minutes = elapsed.as_secs_f64() / 60.0;
    let mut delays = recorder.delays.lock().unwrap().clone();
    delays.sort();
    scheduler.shutdown().await;

    println!("scheduler with {JOBS} jobs (+5 due every minute), one minute on the system clock");
    println!(
        "  load and plan {} jobs once: {:.1} ms",
        JOBS + 5,
        plan.as_secs_f64() * 1e3
    );
    println!(
        "  wake-ups: {:.1} per minute (lease renewals every 10 s, and the minute's occurrences)",
        (passes1 - passes0) as f64 / minutes
    );
    println!(
        "  CPU: {:.3} s per minute ({:.2} % of one core); RSS {:.1} MiB (before start {:.1} MiB)",
        (cpu1 - cpu0) / minutes,
        (cpu1 - cpu0) / elapsed.as_secs_f64() * 100.0,
        rss_mib(),
        rss_before
    );
    if delays.is_empty() {
        println!("  delay: no run started (no minute boundary?)");
    } else {
        let at = |p: f64| delays[((delays.len() as f64 - 1.0) * p).round() as usize];
        println!(
            "  delay from scheduled time to run start: p50 {:.1} ms, max {:.1} ms (n={})",
            at(0.5).as_secs_f64() * 1e3,
            at(1.0).as_secs_f64() * 1e3,
            delays.len()
        );
    }
}
