//! The scheduler in real processes: two `suzent serve` on one data directory (one schedules, the
//! other says so), and `suzent serve` killed with SIGKILL in the middle of a run and started
//! again. The processes read their time from a clock file the test moves
//! (`SUZENT_TEST_CLOCK_FILE`), so minutes pass in milliseconds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;
use support::Env;
use suzent_tests::Turn;

struct Clock(PathBuf);

impl Clock {
    fn new(env: &Env, at: &str) -> Clock {
        let clock = Clock(env.dir.path().join("clock.txt"));
        clock.set(at);
        clock
    }

    /// Writes the time atomically (a reader never sees half a line).
    fn set(&self, at: &str) {
        let tmp = self.0.with_extension("tmp");
        std::fs::write(&tmp, at).unwrap();
        std::fs::rename(&tmp, &self.0).unwrap();
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

fn serve(env: &Env, clock: &Clock) -> Child {
    env.spawn(&["serve"], &[("SUZENT_TEST_CLOCK_FILE", clock.path())])
}

/// Reads the child's stderr until a line contains `needle` (bounded: against hangs).
fn stderr_line(child: &mut Child, needle: &str) -> String {
    let stderr = child.stderr.as_mut().unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 256];
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        let n = stderr.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        if let Some(line) = seen.lines().find(|l| l.contains(needle)) {
            return line.to_string();
        }
    }
    panic!("no line with '{needle}' in stderr: {seen}");
}

fn cli(env: &Env, clock: &Clock, args: &[&str]) -> String {
    let out = env
        .command(args)
        .env("SUZENT_TEST_CLOCK_FILE", clock.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn history(env: &Env, clock: &Clock, job: &str) -> Vec<Value> {
    let out = cli(
        env,
        clock,
        &["schedule", "history", job, "--json", "--limit", "100"],
    );
    let mut runs: Vec<Value> = serde_json::from_str(&out).unwrap();
    runs.reverse();
    runs
}

fn wait_runs(env: &Env, clock: &Clock, job: &str, f: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    for _ in 0..600 {
        let runs = history(env, clock, job);
        if f(&runs) {
            return runs;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!(
        "runs of {job} never got there: {:#?}",
        history(env, clock, job)
    );
}

fn ended(runs: &[Value]) -> bool {
    runs.iter().all(|r| {
        !matches!(
            r["status"].as_str(),
            Some("requested" | "queued" | "running")
        )
    })
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn two_processes_on_one_data_directory_run_a_minutely_job_exactly_once_a_minute() {
    let env = Env::new(
        (1..=5)
            .map(|i| Turn::text(format!("run {i} done")))
            .collect(),
    );
    let clock = Clock::new(&env, "2026-06-01T09:00:30Z");
    // The desktop app's place: the first process schedules.
    let mut first = serve(&env, &clock);
    stderr_line(&mut first, "scheduler running");
    // A second process on the same SUZENT_HOME finds the lease held and says so.
    let mut second = serve(&env, &clock);
    let said = stderr_line(&mut second, "schedules the jobs of this data directory");
    assert!(
        said.contains(&format!("pid {}", first.id()))
            && said.contains("this one does not schedule"),
        "{said}"
    );
    let ws = env.ws.display().to_string();
    let job = cli(
        &env,
        &clock,
        &[
            "schedule",
            "add",
            "--name",
            "Minutely",
            "--schedule",
            "*/1 * * * *",
            "--tz",
            "UTC",
            "--prompt",
            "Say done.",
            "--workspace",
            &ws,
            "--model",
            "openai/gpt-test",
        ],
    );
    for minute in 1..=5 {
        clock.set(&format!("2026-06-01T09:0{minute}:10Z"));
        wait_runs(&env, &clock, &job, |r| r.len() == minute && ended(r));
    }
    let runs = history(&env, &clock, &job);
    let slots: Vec<&str> = runs.iter().map(|r| r["slot"].as_str().unwrap()).collect();
    assert_eq!(
        slots,
        [
            "2026-06-01T09:01:00Z",
            "2026-06-01T09:02:00Z",
            "2026-06-01T09:03:00Z",
            "2026-06-01T09:04:00Z",
            "2026-06-01T09:05:00Z"
        ]
    );
    for run in &runs {
        assert_eq!(run["status"], "completed");
        assert_eq!(run["pid"].as_u64(), Some(u64::from(first.id())), "{run}");
    }
    assert_eq!(env.server.remaining(), 0);
    stop(second);
    stop(first);
}

/// Processes whose working directory is inside `dir` (from /proc).
fn processes_in(dir: &Path) -> Vec<(i32, String)> {
    let dir = std::fs::canonicalize(dir).unwrap();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|c| c.starts_with(&dir)) {
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd)
                .replace('\0', " ")
                .trim()
                .to_string();
            if !cmd.is_empty() {
                found.push((pid, cmd));
            }
        }
    }
    found
}

#[test]
fn a_run_cut_by_sigkill_is_recorded_interrupted_and_recovered_once_after_the_restart() {
    let review = Turn::text(
        serde_json::json!({"should_block": false, "reason": "waits", "confidence": "high", "riskCategories": []}).to_string(),
    );
    let env = Env::new(vec![
        Turn::tool_call(
            "call_sleep",
            "run_command",
            r#"{"content":"sleep 60","timeout":120}"#,
        ),
        review,
        Turn::text("Recovered: nothing was left to do."),
    ]);
    let clock = Clock::new(&env, "2026-06-01T08:59:50Z");
    let ws = env.ws.display().to_string();
    let job = cli(
        &env,
        &clock,
        &[
            "schedule",
            "add",
            "--name",
            "Nine",
            "--schedule",
            "0 9 * * *",
            "--tz",
            "UTC",
            "--prompt",
            "Wait a minute.",
            "--workspace",
            &ws,
            "--model",
            "openai/gpt-test",
        ],
    );
    let mut app = serve(&env, &clock);
    stderr_line(&mut app, "scheduler running");
    clock.set("2026-06-01T09:00:00Z");
    // The run is in its command when the process dies.
    let mut sleeper = None;
    for _ in 0..600 {
        sleeper = processes_in(&env.ws)
            .into_iter()
            .find(|(_, c)| c.contains("sleep 60"));
        if sleeper.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let (orphan, _) = sleeper.expect("the run's command started");
    clock.set("2026-06-01T09:00:30Z");
    stop(app);
    // What a SIGKILL leaves behind (a killed process cannot stop its children) is ours to end.
    let _ = std::process::Command::new("kill")
        .args(["-9", &orphan.to_string()])
        .status();
    let runs = history(&env, &clock, &job);
    assert_eq!(runs.len(), 1);
    assert_eq!(
        runs[0]["status"], "running",
        "the row was written before the run started"
    );
    // The restart at 09:01 records the interruption and runs the occurrence again, once.
    clock.set("2026-06-01T09:01:00Z");
    let mut again = serve(&env, &clock);
    stderr_line(&mut again, "scheduler running");
    let runs = wait_runs(&env, &clock, &job, |r| r.len() == 2 && ended(r));
    let summary: Vec<(String, u64, String, bool)> = runs
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap().to_string(),
                r["attempt"].as_u64().unwrap(),
                r["trigger"].as_str().unwrap().to_string(),
                r["catchUp"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("interrupted".to_string(), 1, "schedule".to_string(), false),
            ("completed".to_string(), 2, "recovery".to_string(), true),
        ]
    );
    assert!(
        runs[0]["detail"]
            .as_str()
            .unwrap()
            .contains("stopped before it ended")
    );
    // The next day's occurrence is unaffected, and no second restart was needed.
    stop(again);
    assert_eq!(env.server.remaining(), 0);
}
