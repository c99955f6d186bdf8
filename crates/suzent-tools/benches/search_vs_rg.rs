//! `grep_search` and `glob_search` against the `rg` and `fd` command-line tools on the same
//! generated tree (20,000 files). Prints medians of 7 runs and the ratios.
//!
//! Run: `cargo bench -p suzent-tools --bench search_vs_rg` (needs `rg` and `fdfind`/`fd`, Debian
//! packages ripgrep and fd-find).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_permissions::PathPolicy;
use suzent_tools::{ToolContext, default_registry};

const DIRS: usize = 200;
const FILES_PER_DIR: usize = 100;
const RUNS: usize = 7;

fn make_tree(root: &Path) {
    let filler = "fn helper(x: u32) -> u32 { x.wrapping_mul(31).rotate_left(7) }\n".repeat(30);
    for d in 0..DIRS {
        let dir = root.join(format!("mod_{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES_PER_DIR {
            let ext = if f % 4 == 0 { "md" } else { "rs" };
            // One file in 50 holds the needle, so matches stay below the tool's output cap.
            let needle = if (d * FILES_PER_DIR + f).is_multiple_of(50) {
                "// NEEDLE_marker here\n"
            } else {
                ""
            };
            std::fs::write(
                dir.join(format!("file_{f:03}.{ext}")),
                format!("{filler}{needle}"),
            )
            .unwrap();
        }
    }
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("target/ignored.rs"), "NEEDLE_marker").unwrap();
    std::fs::write(root.join(".gitignore"), "/target\n").unwrap();
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time_cmd(program: &str, args: &[&str], cwd: &Path) -> Option<Duration> {
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let out = Command::new(program)
            .args(args)
            .current_dir(cwd)
            .output()
            .ok()?;
        times.push(start.elapsed());
        assert!(
            out.status.success() || out.status.code() == Some(1),
            "{program} failed"
        );
    }
    Some(median(times))
}

fn which(names: &[&'static str]) -> Option<&'static str> {
    names
        .iter()
        .copied()
        .find(|n| Command::new(n).arg("--version").output().is_ok())
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    make_tree(&root);
    let root = std::fs::canonicalize(&root).unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    let policy = Arc::new(PathPolicy::new(&root, std::slice::from_ref(&store)).unwrap());
    let ctx = ToolContext::new(
        "bench",
        "bench",
        root.clone(),
        store.join("p"),
        store.join("s"),
        policy,
    );
    let registry = default_registry();
    let grep = registry.get("grep_search").unwrap();
    let glob = registry.get("glob_search").unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();

    let mut grep_times = Vec::new();
    let mut glob_times = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let out = rt
            .block_on(grep.call(json!({"pattern": "NEEDLE_marker", "path": "."}), &ctx))
            .unwrap();
        grep_times.push(start.elapsed());
        assert!(out.contains("NEEDLE_marker") && !out.contains("ignored.rs"));
        let start = Instant::now();
        let out = rt
            .block_on(glob.call(json!({"pattern": "**/*.md"}), &ctx))
            .unwrap();
        glob_times.push(start.elapsed());
        assert!(out.contains(".md"));
    }
    let grep_ours = median(grep_times);
    let glob_ours = median(glob_times);
    println!("tree: {} files", DIRS * FILES_PER_DIR);
    println!(
        "grep_search  median {:>8.2} ms",
        grep_ours.as_secs_f64() * 1e3
    );
    if let Some(rg) = time_cmd("rg", &["-n", "NEEDLE_marker", "."], &root) {
        println!(
            "rg           median {:>8.2} ms   ratio grep_search/rg = {:.2}",
            rg.as_secs_f64() * 1e3,
            grep_ours.as_secs_f64() / rg.as_secs_f64()
        );
    } else {
        println!("rg not installed (Debian package ripgrep)");
    }
    println!(
        "glob_search  median {:>8.2} ms",
        glob_ours.as_secs_f64() * 1e3
    );
    match which(&["fdfind", "fd"]) {
        Some(fd) => {
            let t = time_cmd(fd, &["-g", "*.md", "."], &root).unwrap();
            println!(
                "{fd:<12} median {:>8.2} ms   ratio glob_search/fd = {:.2}",
                t.as_secs_f64() * 1e3,
                glob_ours.as_secs_f64() / t.as_secs_f64()
            );
        }
        None => println!("fd not installed (Debian package fd-find)"),
    }
}
