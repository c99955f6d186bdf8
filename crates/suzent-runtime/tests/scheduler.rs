//! The scheduler service on a real SQLite file with a hand-moved clock and a runner whose runs
//! take as long as each test says: restarts, daylight saving days, sleeps, overlaps, timeouts.

use anyhow::{Result, bail};
use async_trait::async_trait;
use chrono::{DateTime, TimeZone, Utc};
use pretty_assertions::assert_eq;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use suzent_core::{CatchUpPolicy, Delivery, JobKind, OverlapPolicy, RunStatus, RunTrigger};
use suzent_runtime::scheduler::{
    Clock, JobRunner, ManualClock, RunReport, Scheduler, SchedulerOptions,
};
use suzent_store::{JobDraft, JobRecord, RunRecord, Store};
use tokio_util::sync::CancellationToken;

// ---------------------------------------------------------------- the fake runner

/// How runs of a job behave.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// Ends at once.
    Instant,
    /// Takes this long on the scheduler's clock (stops early when cancelled).
    Takes(Duration),
    /// Runs until cancelled.
    UntilCancelled,
    /// Never ends, not even when cancelled.
    Stuck,
}

#[derive(Debug, Default)]
struct Log {
    /// (job, slot, attempt, trigger, started at) of each run started.
    started: Vec<(String, DateTime<Utc>, u32, RunTrigger, DateTime<Utc>)>,
    /// (job, attempt, ended at).
    ended: Vec<(String, u32, DateTime<Utc>)>,
    /// Runs in progress that end by themselves, and when.
    ends_by: Vec<(String, DateTime<Utc>)>,
    /// Runs whose runner returned.
    returned: Vec<String>,
    in_flight: HashMap<String, u32>,
    most_in_flight: HashMap<String, u32>,
}

#[derive(Debug)]
struct FakeRunner {
    clock: ManualClock,
    modes: Mutex<HashMap<String, Mode>>,
    log: Mutex<Log>,
}

impl FakeRunner {
    fn new(clock: &ManualClock) -> Arc<FakeRunner> {
        Arc::new(FakeRunner {
            clock: clock.clone(),
            modes: Mutex::new(HashMap::new()),
            log: Mutex::new(Log::default()),
        })
    }

    fn set(&self, job: &str, mode: Mode) {
        self.modes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(job.into(), mode);
    }

    fn log<T>(&self, f: impl FnOnce(&mut Log) -> T) -> T {
        f(&mut self.log.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

#[async_trait]
impl JobRunner for FakeRunner {
    async fn run(&self, job: &JobRecord, run: &RunRecord, cancel: CancellationToken) -> RunReport {
        let id = job.draft.id.clone();
        let now = self.clock.now();
        self.log(|l| {
            l.started
                .push((id.clone(), run.slot, run.attempt, run.trigger, now));
            let n = l.in_flight.entry(id.clone()).or_default();
            *n += 1;
            let n = *n;
            let most = l.most_in_flight.entry(id.clone()).or_default();
            *most = (*most).max(n);
        });
        let mode = self
            .modes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .copied()
            .unwrap_or(Mode::Instant);
        match mode {
            Mode::Instant => {}
            Mode::Takes(d) => {
                let until = now + chrono::TimeDelta::from_std(d).unwrap_or_default();
                self.log(|l| l.ends_by.push((run.id.clone(), until)));
                tokio::select! {
                    () = self.clock.sleep_until(until) => {}
                    () = cancel.cancelled() => {}
                }
            }
            Mode::UntilCancelled => cancel.cancelled().await,
            Mode::Stuck => futures::future::pending::<()>().await,
        }
        let end = self.clock.now();
        let run_id = run.id.clone();
        self.log(|l| {
            l.ends_by.retain(|(id, _)| *id != run_id);
            l.returned.push(run_id.clone());
            l.ended.push((id.clone(), run.attempt, end));
            if let Some(n) = l.in_flight.get_mut(&id) {
                *n -= 1;
            }
        });
        RunReport {
            steps: 1,
            detail: Some("done".into()),
            ..RunReport::default()
        }
    }
}

// ---------------------------------------------------------------- helpers

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s)
        .single()
        .unwrap_or_default()
}

fn job(id: &str, schedule: &str, tz: &str) -> JobDraft {
    JobDraft {
        id: id.to_string(),
        name: id.to_string(),
        kind: JobKind::Prompt,
        schedule: schedule.to_string(),
        timezone: tz.to_string(),
        prompt: "do the thing".to_string(),
        workspace: None,
        model: None,
        chat_id: None,
        delivery: Delivery::Silent,
        overlap: OverlapPolicy::Skip,
        catch_up: CatchUpPolicy::RunOnce,
        timeout_secs: 3600,
        max_retries: 0,
        enabled: true,
    }
}

struct Bed {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    store: Store,
    clock: ManualClock,
    runner: Arc<FakeRunner>,
}

impl Bed {
    async fn new(start: DateTime<Utc>) -> Result<Bed> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("suzent.db");
        let store = Store::open(&path).await?;
        let clock = ManualClock::new(start);
        let runner = FakeRunner::new(&clock);
        Ok(Bed {
            _dir: dir,
            path,
            store,
            clock,
            runner,
        })
    }

    async fn add(&self, draft: JobDraft) -> Result<()> {
        self.store.upsert_job(&draft, self.clock.now()).await?;
        Ok(())
    }

    /// A scheduler on this bed's store (as a process restart would open it).
    async fn scheduler(&self) -> Result<Scheduler> {
        let store = Store::open(&self.path).await?;
        let clock: Arc<dyn Clock> = Arc::new(self.clock.clone());
        let options = SchedulerOptions {
            lease_clock: Some(Arc::clone(&clock)),
            kill_grace: Duration::from_secs(15),
            ..SchedulerOptions::default()
        };
        let runner: Arc<dyn JobRunner> = self.runner.clone();
        let scheduler = Scheduler::new(store, clock, runner, options);
        scheduler.start().await;
        Ok(scheduler)
    }

    /// Moves the clock to `t` in steps of `step`, letting `scheduler` handle each moment: the
    /// occurrences due, the runs that end by then, and the queued runs that start.
    async fn walk(&self, scheduler: &Scheduler, t: DateTime<Utc>, step: Duration) -> Result<()> {
        while self.clock.now() < t {
            let next = (self.clock.now() + chrono::TimeDelta::from_std(step)?).min(t);
            self.clock.set(next);
            settle(scheduler, next).await?;
            for _ in 0..500 {
                let runs = self.store.list_runs(None, 1000).await?;
                let overdue = self.runner.log(|l| {
                    l.ends_by.iter().any(|(_, end)| *end <= next)
                        || runs
                            .iter()
                            .any(|r| r.status == Running && l.returned.contains(&r.id))
                });
                let stalled = runs.iter().any(|r| r.status == Queued)
                    && !runs.iter().any(|r| r.status == Running);
                if !overdue && !stalled {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
                settle(scheduler, next).await?;
            }
        }
        Ok(())
    }

    async fn runs(&self, job: &str) -> Result<Vec<RunRecord>> {
        let mut runs = self.store.list_runs(Some(job), 1000).await?;
        runs.reverse();
        Ok(runs)
    }

    /// (slot, attempt, trigger, status) of each run of `job`, oldest first.
    async fn rows(&self, job: &str) -> Result<Vec<(DateTime<Utc>, u32, RunTrigger, RunStatus)>> {
        Ok(self
            .runs(job)
            .await?
            .into_iter()
            .map(|r| (r.slot, r.attempt, r.trigger, r.status))
            .collect())
    }

    /// Waits (real time, bounded) until `f` holds for the runs of `job`.
    async fn until(&self, job: &str, f: impl Fn(&[RunRecord]) -> bool) -> Result<()> {
        for _ in 0..500 {
            if f(&self.runs(job).await?) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        bail!(
            "runs of '{job}' never got there: {:#?}",
            self.rows(job).await?
        )
    }
}

async fn settle(scheduler: &Scheduler, t: DateTime<Utc>) -> Result<()> {
    tokio::time::timeout(Duration::from_secs(10), scheduler.settled(t)).await?;
    // Runs started in that pass get to record themselves.
    tokio::task::yield_now().await;
    Ok(())
}

fn open(status: RunStatus) -> bool {
    !status.is_final()
}

use RunStatus::{Completed, Interrupted, Missed, Queued, Running, Skipped, TimedOut, Unknown};
use RunTrigger::{CatchUp, Recovery, Retry, Schedule as Sched};

// ---------------------------------------------------------------- restarts (R2-S02)

#[tokio::test]
async fn a_job_every_minute_runs_each_occurrence_once_across_a_restart_in_the_middle_of_one()
-> Result<()> {
    let bed = Bed::new(utc(2026, 6, 1, 8, 59, 30)).await?;
    bed.add(job("minutely", "* * * * *", "UTC")).await?;
    bed.runner.set("minutely", Mode::UntilCancelled);
    let first = bed.scheduler().await?;
    bed.walk(&first, utc(2026, 6, 1, 9, 0, 30), Duration::from_secs(10))
        .await?;
    bed.until("minutely", |r| r.len() == 1 && r[0].status == Running)
        .await?;
    // The process dies at 09:00:30, mid-run; a new one starts at 09:00:45.
    first.abandon();
    bed.clock.set(utc(2026, 6, 1, 9, 0, 45));
    bed.runner.set("minutely", Mode::Instant);
    let second = bed.scheduler().await?;
    bed.walk(&second, utc(2026, 6, 1, 9, 3, 0), Duration::from_secs(5))
        .await?;
    bed.until("minutely", |r| r.iter().all(|r| !open(r.status)))
        .await?;
    // The new process takes the lease of the dead one at once: 09:00 is recorded as
    // interrupted and, by `run_once`, run again once (no later occurrence was due yet); every
    // later occurrence runs once.
    assert_eq!(
        bed.rows("minutely").await?,
        vec![
            (utc(2026, 6, 1, 9, 0, 0), 1, Sched, Interrupted),
            (utc(2026, 6, 1, 9, 0, 0), 2, Recovery, Completed),
            (utc(2026, 6, 1, 9, 1, 0), 1, Sched, Completed),
            (utc(2026, 6, 1, 9, 2, 0), 1, Sched, Completed),
            (utc(2026, 6, 1, 9, 3, 0), 1, Sched, Completed),
        ]
    );
    let interrupted = &bed.runs("minutely").await?[0];
    assert!(
        interrupted
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("stopped before it ended")),
        "{interrupted:?}"
    );
    second.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_daily_run_interrupted_by_a_crash_is_recovered_once_and_never_by_a_second_restart()
-> Result<()> {
    let bed = Bed::new(utc(2026, 6, 1, 8, 59, 0)).await?;
    bed.add(job("daily", "0 9 * * *", "UTC")).await?;
    bed.runner.set("daily", Mode::UntilCancelled);
    let first = bed.scheduler().await?;
    bed.walk(&first, utc(2026, 6, 1, 9, 0, 30), Duration::from_secs(10))
        .await?;
    bed.until("daily", |r| r.len() == 1 && r[0].status == Running)
        .await?;
    first.abandon();
    // Restart at 09:01: the run is interrupted and, by `run_once`, run again once.
    bed.clock.set(utc(2026, 6, 1, 9, 1, 0));
    let second = bed.scheduler().await?;
    bed.until("daily", |r| r.len() == 2 && r[1].status == Running)
        .await?;
    // That recovery dies too; a third process does not run the occurrence a third time.
    second.abandon();
    bed.clock.set(utc(2026, 6, 1, 9, 2, 0));
    bed.runner.set("daily", Mode::Instant);
    let third = bed.scheduler().await?;
    bed.until("daily", |r| {
        r.len() == 2 && r.iter().all(|r| !open(r.status))
    })
    .await?;
    // The next day's occurrence is unaffected.
    bed.walk(&third, utc(2026, 6, 2, 9, 0, 30), Duration::from_secs(600))
        .await?;
    bed.until("daily", |r| r.len() == 3 && !open(r[2].status))
        .await?;
    let day = utc(2026, 6, 1, 9, 0, 0);
    assert_eq!(
        bed.rows("daily").await?,
        vec![
            (day, 1, Sched, Interrupted),
            (day, 2, Recovery, Interrupted),
            (utc(2026, 6, 2, 9, 0, 0), 1, Sched, Completed),
        ]
    );
    assert!(bed.runs("daily").await?[1].catch_up);
    third.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn with_catch_up_skip_an_interrupted_run_stays_visibly_interrupted() -> Result<()> {
    let bed = Bed::new(utc(2026, 6, 1, 8, 59, 0)).await?;
    bed.add(JobDraft {
        catch_up: CatchUpPolicy::Skip,
        ..job("daily", "0 9 * * *", "UTC")
    })
    .await?;
    bed.runner.set("daily", Mode::UntilCancelled);
    let first = bed.scheduler().await?;
    bed.walk(&first, utc(2026, 6, 1, 9, 0, 30), Duration::from_secs(10))
        .await?;
    bed.until("daily", |r| r.len() == 1 && r[0].status == Running)
        .await?;
    first.abandon();
    bed.clock.set(utc(2026, 6, 1, 9, 1, 0));
    let second = bed.scheduler().await?;
    settle(&second, utc(2026, 6, 1, 9, 1, 0)).await?;
    bed.until("daily", |r| r.iter().all(|r| !open(r.status)))
        .await?;
    assert_eq!(
        bed.rows("daily").await?,
        vec![(utc(2026, 6, 1, 9, 0, 0), 1, Sched, Interrupted)]
    );
    second.shutdown().await;
    Ok(())
}

// ---------------------------------------------------------------- daylight saving time

#[tokio::test]
async fn half_past_two_in_berlin_runs_once_on_the_spring_and_once_on_the_autumn_change_day()
-> Result<()> {
    for (start, end, expected) in [
        (
            utc(2026, 3, 27, 22, 0, 0),
            utc(2026, 3, 30, 4, 0, 0),
            // 02:30 CET; 03:00 CEST (02:30 does not exist on the 29th); 02:30 CEST.
            [
                utc(2026, 3, 28, 1, 30, 0),
                utc(2026, 3, 29, 1, 0, 0),
                utc(2026, 3, 30, 0, 30, 0),
            ],
        ),
        (
            utc(2026, 10, 23, 22, 0, 0),
            utc(2026, 10, 26, 4, 0, 0),
            // 02:30 CEST; the first of the two 02:30s on the 25th (CEST); 02:30 CET.
            [
                utc(2026, 10, 24, 0, 30, 0),
                utc(2026, 10, 25, 0, 30, 0),
                utc(2026, 10, 26, 1, 30, 0),
            ],
        ),
    ] {
        let bed = Bed::new(start).await?;
        bed.add(job("nightly", "30 2 * * *", "Europe/Berlin"))
            .await?;
        let scheduler = bed.scheduler().await?;
        bed.walk(&scheduler, end, Duration::from_secs(300)).await?;
        bed.until("nightly", |r| r.iter().all(|r| !open(r.status)))
            .await?;
        let rows = bed.rows("nightly").await?;
        assert_eq!(
            rows,
            expected
                .iter()
                .map(|s| (*s, 1, Sched, Completed))
                .collect::<Vec<_>>()
        );
        scheduler.shutdown().await;
    }
    Ok(())
}

// ---------------------------------------------------------------- sleep and catch-up (R2-S04)

#[tokio::test]
async fn after_the_machine_slept_each_job_runs_once_to_catch_up_or_not_at_all_with_skip()
-> Result<()> {
    for policy in [CatchUpPolicy::RunOnce, CatchUpPolicy::Skip] {
        let bed = Bed::new(utc(2026, 6, 1, 1, 58, 0)).await?;
        bed.add(JobDraft {
            catch_up: policy,
            ..job("daily", "0 3 * * *", "UTC")
        })
        .await?;
        bed.add(JobDraft {
            catch_up: policy,
            ..job("five", "*/5 * * * *", "UTC")
        })
        .await?;
        let scheduler = bed.scheduler().await?;
        bed.walk(
            &scheduler,
            utc(2026, 6, 1, 2, 0, 0),
            Duration::from_secs(60),
        )
        .await?;
        // Asleep from 02:00 to 09:12: the wall clock jumps.
        bed.clock.set(utc(2026, 6, 1, 9, 12, 0));
        settle(&scheduler, utc(2026, 6, 1, 9, 12, 0)).await?;
        bed.until("five", |r| r.iter().all(|r| !open(r.status)))
            .await?;
        bed.until("daily", |r| r.iter().all(|r| !open(r.status)))
            .await?;
        let summary = |runs: Vec<RunRecord>| {
            runs.into_iter()
                .map(|r| (r.slot, r.trigger, r.status, r.catch_up, r.missed))
                .collect::<Vec<_>>()
        };
        let (daily, five) = (
            summary(bed.runs("daily").await?),
            summary(bed.runs("five").await?),
        );
        match policy {
            CatchUpPolicy::RunOnce => {
                assert_eq!(
                    daily,
                    vec![(utc(2026, 6, 1, 3, 0, 0), CatchUp, Completed, true, 0)]
                );
                assert_eq!(
                    five,
                    vec![
                        (utc(2026, 6, 1, 2, 0, 0), Sched, Completed, false, 0),
                        (utc(2026, 6, 1, 9, 10, 0), CatchUp, Completed, true, 85),
                    ]
                );
            }
            CatchUpPolicy::Skip => {
                assert_eq!(
                    daily,
                    vec![(utc(2026, 6, 1, 3, 0, 0), CatchUp, Missed, false, 0)]
                );
                assert_eq!(
                    five,
                    vec![
                        (utc(2026, 6, 1, 2, 0, 0), Sched, Completed, false, 0),
                        (utc(2026, 6, 1, 9, 10, 0), CatchUp, Missed, false, 85),
                    ]
                );
            }
        }
        // Both stay enabled and run at their next occurrence.
        for job in bed.store.list_jobs().await? {
            assert!(job.draft.enabled, "{} was disabled", job.draft.id);
        }
        bed.walk(
            &scheduler,
            utc(2026, 6, 1, 9, 15, 0),
            Duration::from_secs(60),
        )
        .await?;
        bed.until("five", |r| {
            r.last()
                .is_some_and(|r| r.slot == utc(2026, 6, 1, 9, 15, 0) && r.status == Completed)
        })
        .await?;
        scheduler.shutdown().await;
    }
    Ok(())
}

#[tokio::test]
async fn a_fresh_install_never_fires_slots_from_before_its_jobs_existed() -> Result<()> {
    let bed = Bed::new(utc(2026, 6, 1, 9, 12, 0)).await?;
    bed.add(job("daily", "0 3 * * *", "UTC")).await?;
    bed.add(job("five", "*/5 * * * *", "UTC")).await?;
    let scheduler = bed.scheduler().await?;
    settle(&scheduler, utc(2026, 6, 1, 9, 12, 0)).await?;
    bed.walk(
        &scheduler,
        utc(2026, 6, 1, 9, 14, 59),
        Duration::from_secs(60),
    )
    .await?;
    assert_eq!(
        bed.runs("daily").await?.len() + bed.runs("five").await?.len(),
        0
    );
    scheduler.shutdown().await;
    Ok(())
}

// ---------------------------------------------------------------- overlap (R2-S09)

#[tokio::test]
async fn a_run_longer_than_its_interval_is_skipped_queued_or_doubled_by_the_overlap_policy()
-> Result<()> {
    let mut seen = Vec::new();
    for overlap in [
        OverlapPolicy::Skip,
        OverlapPolicy::QueueOne,
        OverlapPolicy::Allow,
    ] {
        let bed = Bed::new(utc(2026, 6, 1, 8, 59, 50)).await?;
        bed.add(JobDraft {
            overlap,
            ..job("slow", "* * * * *", "UTC")
        })
        .await?;
        bed.runner.set("slow", Mode::Takes(Duration::from_secs(95)));
        let scheduler = bed.scheduler().await?;
        bed.walk(
            &scheduler,
            utc(2026, 6, 1, 9, 4, 30),
            Duration::from_secs(5),
        )
        .await?;
        let rows: Vec<(u32, RunStatus)> = bed
            .runs("slow")
            .await?
            .into_iter()
            .map(|r| {
                (
                    r.slot.format("%M").to_string().parse().unwrap_or(99),
                    r.status,
                )
            })
            .collect();
        let most = bed
            .runner
            .log(|l| l.most_in_flight.get("slow").copied().unwrap_or(0));
        seen.push((overlap, rows, most));
        scheduler.shutdown().await;
    }
    assert_eq!(
        seen,
        vec![
            // Started 09:00 (to 09:01:35), 09:02 (to 09:03:35), 09:04.
            (
                OverlapPolicy::Skip,
                vec![
                    (0, Completed),
                    (1, Skipped),
                    (2, Completed),
                    (3, Skipped),
                    (4, Running)
                ],
                1
            ),
            // 09:01 waits and starts at 09:01:35 (to 09:03:10); 09:02 waits; 09:03 finds one
            // waiting and is skipped; 09:02 starts at 09:03:10; 09:04 waits.
            (
                OverlapPolicy::QueueOne,
                vec![
                    (0, Completed),
                    (1, Completed),
                    (2, Running),
                    (3, Skipped),
                    (4, Queued)
                ],
                1
            ),
            (
                OverlapPolicy::Allow,
                vec![
                    (0, Completed),
                    (1, Completed),
                    (2, Completed),
                    (3, Running),
                    (4, Running)
                ],
                2
            ),
        ]
    );
    Ok(())
}

// ---------------------------------------------------------------- timeouts (R2-S07)

#[tokio::test]
async fn a_timed_out_run_is_stopped_before_its_retry_starts_and_a_stuck_one_is_not_retried()
-> Result<()> {
    let bed = Bed::new(utc(2026, 6, 1, 8, 59, 50)).await?;
    let timing = |id: &str| JobDraft {
        timeout_secs: 5,
        max_retries: 1,
        ..job(id, "0 9 * * *", "UTC")
    };
    bed.add(timing("hangs")).await?;
    bed.add(timing("stuck")).await?;
    bed.runner.set("hangs", Mode::UntilCancelled);
    bed.runner.set("stuck", Mode::Stuck);
    let scheduler = bed.scheduler().await?;
    bed.walk(
        &scheduler,
        utc(2026, 6, 1, 9, 0, 40),
        Duration::from_secs(1),
    )
    .await?;
    bed.until("hangs", |r| {
        r.len() == 2 && r.iter().all(|r| !open(r.status))
    })
    .await?;
    bed.until("stuck", |r| r.len() == 1 && !open(r[0].status))
        .await?;
    let slot = utc(2026, 6, 1, 9, 0, 0);
    assert_eq!(
        bed.rows("hangs").await?,
        vec![(slot, 1, Sched, TimedOut), (slot, 2, Retry, TimedOut)]
    );
    assert_eq!(bed.rows("stuck").await?, vec![(slot, 1, Sched, Unknown)]);
    let (first_end, retry_start) = bed.runner.log(|l| {
        let end = l
            .ended
            .iter()
            .find(|e| e.0 == "hangs" && e.1 == 1)
            .map(|e| e.2);
        let start = l
            .started
            .iter()
            .find(|s| s.0 == "hangs" && s.2 == 2)
            .map(|s| s.4);
        (end, start)
    });
    assert!(
        first_end.is_some() && first_end <= retry_start,
        "{first_end:?} {retry_start:?}"
    );
    assert_eq!(
        bed.runner.log(|l| l.most_in_flight.get("hangs").copied()),
        Some(1)
    );
    let runs = bed.runs("stuck").await?;
    assert_eq!(
        runs[0].detail.as_deref(),
        Some(
            "timed out after 5 s and did not stop within 15 s: it may still have effects, so it is not retried"
        )
    );
    scheduler.abandon();
    Ok(())
}

// ---------------------------------------------------------------- ownership and Run now

#[tokio::test]
async fn a_second_scheduler_on_the_same_data_directory_stands_by_and_takes_over_when_the_first_stops()
-> Result<()> {
    let bed = Bed::new(utc(2026, 6, 1, 9, 0, 0)).await?;
    let first = bed.scheduler().await?;
    let second = bed.scheduler().await?;
    assert!(first.status().scheduling);
    let status = second.status();
    assert_eq!(
        (status.scheduling, status.holder.map(|h| h.owner)),
        (false, Some(first.instance_id().to_string()))
    );
    first.shutdown().await;
    bed.clock.advance(Duration::from_secs(10));
    let taken = tokio::time::timeout(
        Duration::from_secs(10),
        second.wait_status(|s| s.scheduling),
    )
    .await?;
    assert!(taken.scheduling);
    second.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn run_now_starts_a_run_and_a_second_one_while_it_runs_is_skipped() -> Result<()> {
    let bed = Bed::new(utc(2026, 6, 1, 9, 0, 0)).await?;
    bed.add(job("manual", "0 3 * * *", "UTC")).await?;
    bed.runner.set("manual", Mode::UntilCancelled);
    let scheduler = bed.scheduler().await?;
    scheduler.run_now("manual").await?;
    bed.until("manual", |r| r.len() == 1 && r[0].status == Running)
        .await?;
    scheduler.run_now("manual").await?;
    bed.until("manual", |r| r.len() == 2 && r[1].status == Skipped)
        .await?;
    assert!(scheduler.run_now("nope").await.is_err());
    scheduler.shutdown().await;
    let rows = bed.runs("manual").await?;
    assert_eq!(
        rows.iter()
            .map(|r| (r.trigger, r.status))
            .collect::<Vec<_>>(),
        vec![
            (RunTrigger::Manual, Interrupted),
            (RunTrigger::Manual, Skipped)
        ]
    );
    Ok(())
}
