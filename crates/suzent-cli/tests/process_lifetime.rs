//! What becomes of the processes tools start (issue 13 items 7, 8 and 3), with the real CLI,
//! real processes and the scripted model server:
//! - `suzent run` waits for the chat's background commands and the agent gets its wake-up turn;
//!   `--no-wait` and the end of `suzent chat` stop them;
//! - Ctrl-C in `suzent chat` stops the turn (the running tool is killed, the text kept) and a
//!   second Ctrl-C at the prompt exits;
//! - SIGKILL of `suzent serve` while `run_command` and `start_command` run: after a restart
//!   nothing of them runs and both are recorded as interrupted.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use std::io::{Read, Write};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::*;
use suzent_core::ChatMessage;
use suzent_store::{ProcessKind, ProcessStatus};
use suzent_tests::{Item, Turn};

/// Pids of live (non-zombie) processes whose command line has the argument `arg`.
fn processes_with_arg(arg: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        // A zombie's command line is empty.
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if cmdline.split(|b| *b == 0).any(|a| a == arg.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

/// Waits up to `secs` for `cond`.
fn wait_for(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    cond()
}

fn sigint(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn start(id: &str, script: &str) -> Item {
    Item::tool_call(id, "start_command", json!({"content": script}).to_string())
}

/// The auto-mode reviewer's answer letting a call run.
fn reviewer_allows() -> Turn {
    Turn::text(
        json!({"should_block": false, "reason": "a harmless sleep", "confidence": "high", "riskCategories": []})
            .to_string(),
    )
}

fn records(env: &Env, chat: &str) -> Vec<suzent_store::ProcessRecord> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = suzent_store::Store::open(&env.home.join("data/suzent.db"))
            .await
            .unwrap();
        store.processes(Some(chat)).await.unwrap()
    })
}

fn assistant_texts(transcript: &[ChatMessage]) -> Vec<String> {
    transcript
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Assistant { text, .. } if !text.is_empty() => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn suzent_run_waits_for_a_background_command_and_the_agent_gets_its_wake_up_turn() {
    let env = Env::new(vec![
        Turn::tool_calls(vec![start("s1", "sleep 1; echo finished-7781")]),
        Turn::text("Started it."),
        Turn::text("It printed finished-7781."),
    ]);
    let evs = env.run_task("start the job", &["--mode", "full_access"], 0);
    let chat = chat_id(&evs);
    let transcript = env.transcript(&chat);
    let results = tool_results(&transcript);
    assert_eq!(results.len(), 1, "{transcript:?}");
    assert!(
        results[0]
            .2
            .contains("this `suzent run` waits for this chat's background commands"),
        "the result says what this process does: {}",
        results[0].2
    );
    let wake_up = transcript
        .iter()
        .find_map(|m| match m {
            ChatMessage::User { text, .. } if text.starts_with("[inbox message command:") => {
                Some(text.clone())
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no wake-up message: {transcript:?}"));
    assert!(wake_up.contains("exited with code 0"), "{wake_up}");
    assert!(wake_up.contains("finished-7781"), "{wake_up}");
    assert_eq!(
        assistant_texts(&transcript),
        vec![
            "Started it.".to_string(),
            "It printed finished-7781.".to_string()
        ]
    );
    assert_eq!(env.server.remaining(), 0);
    assert_eq!(
        records(&env, &chat),
        vec![],
        "an ended command leaves no record"
    );
}

#[test]
fn suzent_run_no_wait_stops_the_background_command_at_exit() {
    let env = Env::new(vec![
        Turn::tool_calls(vec![start("s1", "sleep 600.41; true")]),
        Turn::text("Started it."),
    ]);
    let evs = env.run_task("start the job", &["--mode", "full_access", "--no-wait"], 0);
    let chat = chat_id(&evs);
    assert_eq!(processes_with_arg("600.41"), Vec::<u32>::new());
    let results = tool_results(&env.transcript(&chat));
    assert!(
        results[0]
            .2
            .contains("It is stopped when this `suzent run --no-wait` exits"),
        "{}",
        results[0].2
    );
    assert_eq!(records(&env, &chat), vec![]);
}

#[test]
fn leaving_suzent_chat_stops_its_background_commands() {
    let env = Env::new(vec![
        Turn::tool_calls(vec![start("s1", "sleep 600.42; true")]),
        Turn::text("Started it."),
    ]);
    let out = env
        .command(&[
            "chat",
            "--model",
            "openai/gpt-test",
            "--mode",
            "full_access",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child
                .stdin
                .as_mut()
                .unwrap()
                .write_all(b"start the job\n/quit\n")?;
            child.wait_with_output()
        })
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("stopping 1 background command(s)"),
        "{stderr}"
    );
    assert_eq!(processes_with_arg("600.42"), Vec::<u32>::new());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Started it."),
        "the turn ran to its end: {stdout}"
    );
}

#[test]
fn ctrl_c_in_suzent_chat_stops_the_turn_and_a_second_ctrl_c_at_the_prompt_exits() {
    let env = Env::new(vec![Turn::items(vec![
        Item::text("Waiting for it."),
        Item::tool_call(
            "r1",
            "run_command",
            json!({"content": "sleep 614.25; true"}).to_string(),
        ),
    ])]);
    let mut child = env
        .command(&[
            "chat",
            "--model",
            "openai/gpt-test",
            "--mode",
            "full_access",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Stdout as it comes (prompts have no newline).
    let seen = Arc::new(Mutex::new(String::new()));
    {
        let seen = Arc::clone(&seen);
        let mut stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
    }
    let prompts = || seen.lock().unwrap().matches("> ").count();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"please wait\n").unwrap();
    assert!(
        wait_for(30, || !processes_with_arg("614.25").is_empty()),
        "the command never started"
    );
    sigint(child.id());
    assert!(
        wait_for(10, || processes_with_arg("614.25").is_empty()),
        "Ctrl-C did not kill the running tool"
    );
    // Back at the prompt (the second one), a second Ctrl-C exits.
    assert!(wait_for(10, || prompts() >= 2), "{}", seen.lock().unwrap());
    sigint(child.id());
    let exited = wait_for(10, || child.try_wait().unwrap().is_some());
    if !exited {
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(exited, "a second Ctrl-C did not exit: {stderr}");
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("[stopping the turn: Ctrl-C]"), "{stderr}");
    let out = seen.lock().unwrap().clone();
    assert!(!out.contains("press Ctrl-C again"), "{out}");
    drop(stdin);
    let chats = env.run(&["chats", "--json"]);
    let chats: serde_json::Value = serde_json::from_slice(&chats.stdout).unwrap();
    let chat = chats[0]["id"].as_str().unwrap().to_string();
    let transcript = env.transcript(&chat);
    let texts = assistant_texts(&transcript);
    assert!(
        texts.iter().any(|t| t.starts_with("Waiting for it.")),
        "the streamed text is kept: {transcript:?}"
    );
    let results = tool_results(&transcript);
    assert_eq!(results.len(), 1, "{transcript:?}");
    assert!(results[0].1, "{results:?}");
    assert!(
        results[0].2.contains("cancelled by the user"),
        "{results:?}"
    );
}

#[test]
fn sigkill_of_serve_leaves_no_tool_process_after_a_restart_and_both_are_recorded_interrupted() {
    let env = Env::new(vec![
        // `suzent run` creates the chat.
        Turn::text("ready"),
        // The inbox message's turn in the first serve: a background command, then a command
        // that blocks the turn. `; true` keeps bash as the leader, so `sleep` is a child
        // that the parent-death signal does not reach: the sweep must stop it.
        // (The inbox turn runs in auto mode: the reviewer is asked about each command.)
        Turn::tool_calls(vec![start("s1", "sleep 600.123; true")]),
        reviewer_allows(),
        Turn::tool_call(
            "r1",
            "run_command",
            json!({"content": "sleep 600.124; true"}).to_string(),
        ),
        reviewer_allows(),
        // After the restart: the interrupted turn goes on, and the agent hears about the
        // background command (in either order).
        Turn::text("carried on"),
        Turn::text("carried on"),
    ]);
    let evs = env.run_task("hello", &[], 0);
    let chat = chat_id(&evs);
    let sent = env.run(&[
        "inbox", "send", "--to", &chat, "--id", "m1", "--from", "tester", "go",
    ]);
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let lease = ("SUZENT_INBOX_LEASE_MS", "1500");
    let mut first = env.spawn(&["serve"], &[lease]);
    let started = wait_for(60, || {
        !processes_with_arg("600.123").is_empty() && !processes_with_arg("600.124").is_empty()
    });
    if !started {
        first.kill().unwrap();
        let out = first.wait_with_output().unwrap();
        panic!(
            "the commands never started: {}\n{:?}",
            String::from_utf8_lossy(&out.stderr),
            env.transcript(&chat)
        );
    }
    let running = records(&env, &chat);
    assert_eq!(running.len(), 2, "{running:?}");
    assert!(running.iter().all(|r| r.status == ProcessStatus::Running));
    first.kill().unwrap();
    first.wait().unwrap();

    let mut second = env.spawn(&["serve"], &[lease]);
    let gone = wait_for(30, || {
        processes_with_arg("600.123").is_empty() && processes_with_arg("600.124").is_empty()
    });
    let swept = wait_for(30, || {
        records(&env, &chat)
            .iter()
            .all(|r| r.status == ProcessStatus::Interrupted)
    });
    let delivered = wait_for(60, || {
        let transcript = env.transcript(&chat);
        let told = transcript.iter().any(
            |m| matches!(m, ChatMessage::User { text, .. } if text.contains("(command_interrupted)")),
        );
        let answered = matches!(
            transcript.last(),
            Some(ChatMessage::Assistant { text, .. }) if text == "carried on"
        );
        told && answered
    });
    let _ = std::process::Command::new("kill")
        .arg(second.id().to_string())
        .status();
    second.wait().unwrap();
    assert!(gone, "a sleep survived the restart");
    assert!(swept, "{:?}", records(&env, &chat));
    let mut rows: Vec<(ProcessKind, ProcessStatus, bool)> = records(&env, &chat)
        .into_iter()
        .map(|r| {
            (
                r.process.kind,
                r.status,
                r.note.unwrap_or_default().contains("were killed"),
            )
        })
        .collect();
    rows.sort_by_key(|r| format!("{:?}", r.0));
    assert_eq!(
        rows,
        vec![
            (
                ProcessKind::BackgroundCommand,
                ProcessStatus::Interrupted,
                true
            ),
            (ProcessKind::RunCommand, ProcessStatus::Interrupted, true),
        ]
    );
    assert!(delivered, "{:?}", env.transcript(&chat));
    let transcript = env.transcript(&chat);
    let results = tool_results(&transcript);
    let run_result = results
        .iter()
        .find(|r| r.2.contains("run_command call was interrupted"))
        .unwrap_or_else(|| panic!("{results:?}"));
    assert!(run_result.1);
    assert!(
        transcript
            .iter()
            .any(|m| matches!(m, ChatMessage::User { text, .. }
            if text.contains("(command_interrupted)") && text.contains("sleep 600.123"))),
        "{transcript:?}"
    );
}

#[test]
fn a_command_leader_dies_with_a_runtime_killed_by_sigkill_before_any_restart() {
    // `exec` makes `sleep` the group leader itself: the parent-death signal reaches it.
    let env = Env::new(vec![Turn::tool_call(
        "r1",
        "run_command",
        json!({"content": "exec sleep 600.77"}).to_string(),
    )]);
    let mut run = env.spawn(
        &[
            "run",
            "wait",
            "--json",
            "--model",
            "openai/gpt-test",
            "--mode",
            "full_access",
        ],
        &[],
    );
    let started = wait_for(30, || !processes_with_arg("600.77").is_empty());
    run.kill().unwrap();
    run.wait().unwrap();
    assert!(started, "the command never started");
    assert!(
        wait_for(10, || processes_with_arg("600.77").is_empty()),
        "the leader outlived its runtime"
    );
}
