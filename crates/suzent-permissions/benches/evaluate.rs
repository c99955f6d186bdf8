//! `evaluate()` latency on 1,000 real shell commands (benches/commands.txt, collected from public
//! project documentation; see its header), against a real workspace with a realistic rule set.
//!
//! Prints the per-command median and p99 latency (each command evaluated 21 times, its median
//! taken), then runs criterion on the whole batch and on three single commands.
//!
//! The workspace's policy protects a config and a data directory, as the app's does.
//!
//! Run: `cargo bench -p suzent-permissions --bench evaluate`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use chrono::Utc;
use criterion::{Criterion, black_box};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use suzent_core::{Behavior, PermissionMode, Rule, RuleDestination, RuleMatcher};
use suzent_permissions::{
    PathPolicy, PermissionContext, PermissionEngine, PermissionRequest, ToolAccess,
};

fn commands() -> Vec<String> {
    include_str!("commands.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

fn rules() -> Vec<Rule> {
    let rule = |i: usize, behavior, tool: &str, matcher| Rule {
        id: format!("r{i}"),
        tool: tool.into(),
        behavior,
        matcher,
        destination: RuleDestination::Global,
        chat_id: None,
        created_at: Utc::now(),
        description: None,
    };
    let prefix = |s: &str| RuleMatcher::Prefix {
        words: s.split_whitespace().map(String::from).collect(),
    };
    vec![
        rule(0, Behavior::Allow, "run_command", prefix("git status")),
        rule(1, Behavior::Allow, "run_command", prefix("git log *")),
        rule(2, Behavior::Allow, "run_command", prefix("cargo test")),
        rule(3, Behavior::Allow, "run_command", prefix("cargo build")),
        rule(4, Behavior::Allow, "run_command", prefix("npm run *")),
        rule(5, Behavior::Ask, "run_command", prefix("git push *")),
        rule(6, Behavior::Ask, "run_command", prefix("npm publish")),
        rule(7, Behavior::Deny, "run_command", prefix("rm -rf *")),
        rule(
            8,
            Behavior::Deny,
            "*",
            RuleMatcher::Path {
                glob: "~/.ssh/**".into(),
            },
        ),
        rule(
            9,
            Behavior::Deny,
            "*",
            RuleMatcher::Path {
                glob: "**/.env".into(),
            },
        ),
    ]
}

fn request(command: &str, cwd: &Path) -> PermissionRequest {
    PermissionRequest {
        tool_name: "run_command".into(),
        args: json!({ "content": command }),
        access: ToolAccess::Command {
            command: command.to_string(),
            cwd: cwd.to_path_buf(),
        },
        requires_approval: true,
    }
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    // As in the app: Suzent's own config and data directories are protected (every word of
    // every command is checked against them).
    let policy = PathPolicy::new(&ws, &[])
        .unwrap()
        .protect(&[ws.join("../suzent/config"), ws.join("../suzent/data")]);
    let rules = rules();
    let ctx = PermissionContext {
        mode: PermissionMode::Default,
        paths: &policy,
        rules: &rules,
        chat_id: "bench",
    };
    let engine = PermissionEngine::new();
    let cmds = commands();
    assert_eq!(cmds.len(), 1000, "commands.txt must hold 1,000 commands");
    let requests: Vec<PermissionRequest> = cmds.iter().map(|c| request(c, &ws)).collect();

    // Per-command latency distribution.
    let mut timed: Vec<(Duration, &str)> = requests
        .iter()
        .zip(cmds.iter())
        .map(|(r, c)| {
            let mut samples: Vec<Duration> = (0..21)
                .map(|_| {
                    let t = Instant::now();
                    black_box(engine.evaluate(black_box(r), &ctx));
                    t.elapsed()
                })
                .collect();
            samples.sort();
            (samples[10], c.as_str())
        })
        .collect();
    timed.sort();
    let mut per_command: Vec<Duration> = timed.iter().map(|(d, _)| *d).collect();
    per_command.sort();
    let pct = |p: f64| per_command[((per_command.len() as f64 - 1.0) * p).round() as usize];
    let mut behaviors = [0usize; 3];
    for r in &requests {
        behaviors[engine.evaluate(r, &ctx).decision.behavior as usize] += 1;
    }
    println!(
        "evaluate() over {} commands: median {:?}, p90 {:?}, p99 {:?}, max {:?} (allow {}, ask {}, deny {})",
        per_command.len(),
        pct(0.5),
        pct(0.9),
        pct(0.99),
        per_command[per_command.len() - 1],
        behaviors[0],
        behaviors[1],
        behaviors[2]
    );

    println!("slowest:");
    for (d, c) in timed.iter().rev().take(5) {
        println!("  {d:?}  {c}");
    }

    let mut c = Criterion::default().configure_from_args();
    c.bench_function("evaluate/1000_commands", |b| {
        b.iter(|| {
            for r in &requests {
                black_box(engine.evaluate(black_box(r), &ctx));
            }
        })
    });
    for (name, cmd) in [
        ("evaluate/git_status", "git status"),
        (
            "evaluate/compound",
            "cargo build --release && ./target/release/app > out.log 2>&1",
        ),
        (
            "evaluate/nested",
            "find . -name '*.rs' -exec sh -c 'grep -n foo \"$1\"' _ {} \\;",
        ),
    ] {
        let r = request(cmd, &ws);
        c.bench_function(name, |b| {
            b.iter(|| black_box(engine.evaluate(black_box(&r), &ctx)))
        });
    }
    c.final_summary();
}
