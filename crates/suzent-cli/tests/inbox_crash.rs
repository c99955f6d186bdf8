//! The durable inbox across a crash: `suzent serve` is killed with SIGKILL in the middle of
//! delivering a message; a new `suzent serve` delivers it once (the turn runs once, the message
//! is in the transcript once). Also: sandbox mode is refused where no sandbox exists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use std::time::Duration;
use support::{Env, chat_id, events, stderr_until};
use suzent_core::ChatMessage;
use suzent_tests::Turn;

fn inbox(env: &Env, chat: &str) -> serde_json::Value {
    let out = env.run(&["inbox", "list", "--chat", chat, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn inbox_user_messages(transcript: &[ChatMessage]) -> Vec<String> {
    transcript
        .iter()
        .filter_map(|m| match m {
            ChatMessage::User { text, .. } if text.starts_with("[inbox message") => {
                Some(text.clone())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_delivery_interrupted_by_sigkill_is_completed_once_after_a_restart() {
    let env = Env::new(vec![
        Turn::text("first answer"),
        Turn::text("report received"),
    ]);
    let out = env.run(&["run", "hello", "--model", "openai/gpt-test", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let chat = chat_id(&events(&out));
    let sent = env.run(&[
        "inbox",
        "send",
        "--to",
        &chat,
        "--id",
        "msg-1",
        "--from",
        "tester",
        "please report",
    ]);
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    // Sending the same message again is the same message.
    let again = env.run(&[
        "inbox",
        "send",
        "--to",
        &chat,
        "--id",
        "msg-1",
        "--from",
        "tester",
        "please report",
    ]);
    assert!(again.status.success());
    let other = env.run(&[
        "inbox",
        "send",
        "--to",
        &chat,
        "--id",
        "msg-1",
        "--from",
        "tester",
        "something else",
    ]);
    assert!(!other.status.success());
    assert!(String::from_utf8_lossy(&other.stderr).contains("already used"));

    // First server: holds right after recording the delivery, and is killed there.
    let lease = [("SUZENT_INBOX_LEASE_MS", "1500")];
    let mut first = env.spawn(
        &["serve"],
        &[lease[0], ("SUZENT_TEST_HOLD_AT", "inbox_recorded")],
    );
    let seen = stderr_until(&mut first, "holding at inbox_recorded");
    assert!(seen.contains("holding at inbox_recorded"), "{seen}");
    first.kill().unwrap();
    first.wait().unwrap();
    let state = inbox(&env, &chat);
    assert_eq!(state[0]["status"], "processing");
    assert_eq!(inbox_user_messages(&env.transcript(&chat)).len(), 1);
    assert_eq!(env.server.requests().len(), 1);

    // Second server: the lease expires, the message is claimed again and completed.
    let mut second = env.spawn(&["serve"], &lease);
    let mut delivered = false;
    for _ in 0..600 {
        if inbox(&env, &chat)[0]["status"] == "delivered" {
            delivered = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    #[cfg(unix)]
    {
        // Graceful stop (SIGTERM).
        let _ = std::process::Command::new("kill")
            .arg(second.id().to_string())
            .status();
    }
    let status = second.wait().unwrap();
    assert!(delivered, "the message was not delivered after the restart");
    assert!(status.success() || cfg!(not(unix)));
    let state = inbox(&env, &chat);
    assert_eq!(state[0]["attempts"], 2);
    let transcript = env.transcript(&chat);
    let inboxed = inbox_user_messages(&transcript);
    assert_eq!(inboxed.len(), 1, "{transcript:?}");
    assert!(inboxed[0].contains("please report"));
    let answers: Vec<&ChatMessage> = transcript
        .iter()
        .filter(|m| matches!(m, ChatMessage::Assistant { text, .. } if text == "report received"))
        .collect();
    assert_eq!(answers.len(), 1);
    // One model call for the first run, one for the delivered message.
    assert_eq!(env.server.requests().len(), 2);
}

#[test]
fn sandbox_mode_is_refused_with_a_clear_error_where_no_sandbox_exists() {
    let env = Env::new(vec![]);
    env.write_config("sandbox = true\n");
    // A PATH without bubblewrap.
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let out = env
        .command(&["run", "hi", "--model", "openai/gpt-test"])
        .env("PATH", &bin)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no sandbox is available"), "{err}");
    assert!(err.contains("bubblewrap"), "{err}");
    assert_eq!(env.server.requests().len(), 0);
}

#[test]
fn the_docker_sandbox_backend_without_an_engine_is_refused_before_anything_runs() {
    let engine = std::process::Command::new("docker").arg("info").output();
    let reason = match &engine {
        Ok(o) if o.status.success() => {
            eprintln!("a Docker engine answers here; the refusal is shown where none does");
            return;
        }
        Ok(_) => "the Docker engine does not answer",
        Err(_) => "the docker CLI is not installed",
    };
    let env = Env::new(vec![]);
    env.write_config("sandbox = true\nsandbox_backend = \"docker\"\n");
    let out = env.run(&["run", "hi", "--model", "openai/gpt-test"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no sandbox is available"), "{err}");
    assert!(err.contains("sandbox_backend = \"docker\""), "{err}");
    assert!(err.contains(reason), "{err}");
    assert!(err.contains("not run on the host"), "{err}");
    assert_eq!(env.server.requests().len(), 0);
}

#[test]
fn doctor_says_whether_a_sandbox_can_be_created() {
    let env = Env::new(vec![]);
    let out = env.run(&["doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let line = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "sandbox")
        .cloned()
        .unwrap();
    assert_eq!(line["ok"], true);
    assert!(
        line["detail"]
            .as_str()
            .unwrap()
            .contains("bubblewrap works here"),
        "{line}"
    );
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let out = env
        .command(&["doctor", "--json"])
        .env("PATH", &bin)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let line = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "sandbox")
        .cloned()
        .unwrap();
    // Sandbox mode is off, so a missing sandbox is reported but not an error.
    assert_eq!(line["ok"], true);
    assert!(
        line["detail"]
            .as_str()
            .unwrap()
            .contains("no sandbox is available"),
        "{line}"
    );
}

#[test]
fn a_message_to_a_chat_killed_mid_tool_call_is_delivered_after_the_call_is_settled() {
    let env = Env::new(vec![
        Turn::tool_call(
            "call_append",
            "run_command",
            serde_json::json!({"content": "echo ran >> count.txt", "timeout": 30}).to_string(),
        ),
        Turn::text("report received"),
    ]);
    // Killed after the tool ran, before its result was stored.
    let mut run = env.spawn(
        &[
            "run",
            "append a line",
            "--json",
            "--model",
            "openai/gpt-test",
            "--mode",
            "full_access",
        ],
        &[("SUZENT_TEST_HOLD_AT", "after_tool_ran")],
    );
    let seen = stderr_until(&mut run, "holding at after_tool_ran");
    assert!(seen.contains("holding"), "{seen}");
    run.kill().unwrap();
    run.wait().unwrap();
    let chats = env.run(&["chats", "--json"]);
    let chats: serde_json::Value = serde_json::from_slice(&chats.stdout).unwrap();
    let chat = chats[0]["id"].as_str().unwrap().to_string();
    let sent = env.run(&["inbox", "send", "--to", &chat, "--id", "m-1", "status?"]);
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let mut serve = env.spawn(&["serve"], &[]);
    let mut delivered = false;
    for _ in 0..600 {
        if inbox(&env, &chat)[0]["status"] == "delivered" {
            delivered = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    #[cfg(unix)]
    {
        let _ = std::process::Command::new("kill")
            .arg(serve.id().to_string())
            .status();
    }
    serve.wait().unwrap();
    assert!(delivered, "the message was not delivered");
    assert_eq!(
        env.read("count.txt"),
        "ran\n",
        "the interrupted call ran again"
    );
    // The model request of the delivery: the call's (interrupted) result, then the message.
    let requests = env.server.requests();
    assert_eq!(requests.len(), 2);
    let roles: Vec<String> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match m["tool_call_id"].as_str() {
            Some(id) => format!("tool:{id}"),
            None => m["role"].as_str().unwrap().to_string(),
        })
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool:call_append", "user"]
    );
    let transcript = env.transcript(&chat);
    let results = support::tool_results(&transcript);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].1 && results[0].2.contains("interrupted"),
        "{results:?}"
    );
    assert_eq!(inbox_user_messages(&transcript).len(), 1);
}
