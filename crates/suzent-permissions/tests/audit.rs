//! The audit log: hash chain, verification, rotation, and a flood that neither blocks the async
//! runtime nor loses entries.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use suzent_core::{Behavior, DecisionSource, PermissionDecision, PermissionMode, Risk};
use suzent_permissions::audit::{
    AuditConfig, AuditLog, AuditRecord, GENESIS_HASH, line_hash, rotated_path, verify,
};

fn record(i: usize) -> AuditRecord {
    let decision = PermissionDecision::new(
        Behavior::Ask,
        DecisionSource::ShellPolicy,
        suzent_core::ReasonCode::ShellPolicyAsk,
        "needs approval",
        Risk::Medium,
    );
    AuditRecord::evaluation(
        "chat-1",
        "run-1",
        &format!("call-{i}"),
        "run_command",
        &json!({"content": format!("echo {i}"), "api_key": "sk-secret"}),
        PermissionMode::Default,
        &decision,
    )
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn every_line_links_to_the_previous_one_and_verify_says_ok() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("permission-audit.jsonl");
    let log = AuditLog::start(path.clone());
    for i in 0..5 {
        log.append(&record(i)).await;
    }
    log.flush().await;
    let lines = lines(&path);
    assert_eq!(lines.len(), 5);
    let first: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(first["prevHash"], json!(GENESIS_HASH));
    assert_eq!(first["seq"], json!(1));
    assert_eq!(first["args"]["api_key"], json!("[redacted]"));
    assert_eq!(first["reasonCode"], json!("shell_policy_ask"));
    assert_eq!(first["mode"], json!("default"));
    let second: Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(second["prevHash"], json!(line_hash(lines[0].as_bytes())));
    let report = verify(&path).unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(report.lines, 5);
}

#[tokio::test]
async fn a_line_edited_by_hand_makes_verify_fail_at_that_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("permission-audit.jsonl");
    let log = AuditLog::start(path.clone());
    for i in 0..6 {
        log.append(&record(i)).await;
    }
    log.flush().await;
    drop(log);
    let mut lines = lines(&path);
    // Line 3 now says the call was allowed.
    lines[2] = lines[2].replace("\"decision\":\"ask\"", "\"decision\":\"allow\"");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let report = verify(&path).unwrap();
    assert!(!report.ok);
    let broken = report.broken.unwrap();
    assert_eq!((broken.file, broken.line), (path.clone(), 3));
    assert!(broken.reason.contains("was changed"), "{}", broken.reason);

    // An editor who also recomputes the line's own hash is caught by the next line's prevHash.
    let mut v: Value = serde_json::from_str(&lines[2]).unwrap();
    let obj = v.as_object_mut().unwrap();
    obj.remove("hash");
    let own = line_hash(Value::Object(obj.clone()).to_string().as_bytes());
    obj.insert("hash".into(), json!(own));
    lines[2] = v.to_string();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let broken = verify(&path).unwrap().broken.unwrap();
    assert_eq!(broken.line, 4);
    assert!(broken.reason.contains("prevHash"), "{}", broken.reason);
}

#[tokio::test]
async fn a_deleted_line_and_a_garbled_line_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("permission-audit.jsonl");
    let log = AuditLog::start(path.clone());
    for i in 0..4 {
        log.append(&record(i)).await;
    }
    log.flush().await;
    drop(log);
    let original = lines(&path);
    let mut removed = original.clone();
    removed.remove(1);
    std::fs::write(&path, removed.join("\n") + "\n").unwrap();
    assert_eq!(verify(&path).unwrap().broken.unwrap().line, 2);

    let mut garbled = original.clone();
    garbled[3] = "{not json".to_string();
    std::fs::write(&path, garbled.join("\n") + "\n").unwrap();
    let broken = verify(&path).unwrap().broken.unwrap();
    assert_eq!(broken.line, 4);
    assert!(broken.reason.starts_with("not JSON"));
}

#[tokio::test]
async fn a_restarted_writer_continues_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("permission-audit.jsonl");
    for round in 0..2 {
        let log = AuditLog::start(path.clone());
        for i in 0..3 {
            log.append(&record(round * 10 + i)).await;
        }
        log.flush().await;
    }
    let report = verify(&path).unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(report.lines, 6);
    let last: Value = serde_json::from_str(lines(&path).last().unwrap()).unwrap();
    assert_eq!(last["seq"], json!(6));
}

#[tokio::test]
async fn rotation_by_size_keeps_the_chain_across_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("permission-audit.jsonl");
    let log = AuditLog::start_with(AuditConfig {
        max_bytes: 4096,
        keep: 50,
        ..AuditConfig::new(path.clone())
    });
    for i in 0..100 {
        log.append(&record(i)).await;
    }
    log.flush().await;
    drop(log);
    let rotated = rotated_path(&path, 1);
    assert!(rotated.exists(), "no rotation happened");
    for file in std::iter::once(path.clone()).chain(
        (1..)
            .map(|n| rotated_path(&path, n))
            .take_while(|p| p.exists()),
    ) {
        assert!(
            std::fs::metadata(&file).unwrap().len() <= 4096,
            "{}",
            file.display()
        );
    }
    // The first line of the current file carries the hash of the last line of `.1`.
    let prev_last = lines(&rotated).last().unwrap().clone();
    let first: Value = serde_json::from_str(&lines(&path)[0]).unwrap();
    assert_eq!(first["prevHash"], json!(line_hash(prev_last.as_bytes())));
    let report = verify(&path).unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(report.lines, 100);
    assert!(report.files.len() > 2);

    // Tampering in a rotated file is found there.
    let mut old = lines(&rotated);
    old[0] = old[0].replace("run_command", "read_file");
    std::fs::write(&rotated, old.join("\n") + "\n").unwrap();
    let broken = verify(&path).unwrap().broken.unwrap();
    assert_eq!((broken.file, broken.line), (rotated, 1));
}

#[tokio::test]
async fn old_rotated_files_beyond_keep_are_removed_and_the_rest_still_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("permission-audit.jsonl");
    let log = AuditLog::start_with(AuditConfig {
        max_bytes: 2048,
        keep: 2,
        ..AuditConfig::new(path.clone())
    });
    for i in 0..100 {
        log.append(&record(i)).await;
    }
    log.flush().await;
    assert!(rotated_path(&path, 2).exists());
    assert!(!rotated_path(&path, 3).exists());
    let report = verify(&path).unwrap();
    assert!(report.ok, "{report:?}");
    assert!(report.lines < 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_100000_decisions_from_many_tasks_blocks_nothing_and_loses_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("permission-audit.jsonl");
    // A small queue, so that senders really wait for the writer.
    let log = AuditLog::start_with(AuditConfig {
        max_bytes: u64::MAX,
        queue: 256,
        ..AuditConfig::new(path.clone())
    });
    let ticks = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ticker = {
        let ticks = ticks.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                ticks.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let before = ticks.load(Ordering::Relaxed);
    let mut tasks = Vec::new();
    for t in 0..100 {
        let log = log.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..1000 {
                log.append(&record(t * 1000 + i)).await;
            }
        }));
    }
    // While the flood is queued, the ticker keeps running on the same runtime.
    let mut observed = Vec::new();
    for task in tasks {
        task.await.unwrap();
        observed.push(ticks.load(Ordering::Relaxed));
    }
    log.flush().await;
    stop.store(true, Ordering::Relaxed);
    ticker.await.unwrap();
    assert!(
        ticks.load(Ordering::Relaxed) > before,
        "the ticker never ran during the flood"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 100_000);
    let mut calls: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["toolCallId"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    calls.sort();
    calls.dedup();
    assert_eq!(calls.len(), 100_000);
    let report = verify(&path).unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(report.lines, 100_000);
}
