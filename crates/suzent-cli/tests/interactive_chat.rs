//! `suzent chat` in a terminal: approval prompts show the decision, risk and actions, and the
//! user's choice resumes the turn.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use std::io::Write;
use std::process::Stdio;
use support::*;
use suzent_tests::Turn;

#[test]
fn chat_prompts_for_approval_and_the_chosen_action_resumes_the_turn() {
    let env = Env::new(vec![
        Turn::tool_call(
            "w1",
            "write_file",
            json!({"file_path": "hello.txt", "content": "hi"}).to_string(),
        ),
        Turn::text("Wrote hello.txt."),
    ]);
    let mut child = env
        .command(&["chat", "--model", "openai/gpt-test"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let stdin = child.stdin.as_mut().unwrap();
        // The message, then action 1 (allow once), then quit.
        stdin
            .write_all(b"please write hello.txt\n1\n/quit\n")
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("approval w1"), "{stdout}");
    assert!(
        stdout.contains("write_requires_approval"),
        "the reason code is shown: {stdout}"
    );
    assert!(stdout.contains("risk"), "{stdout}");
    assert!(
        stdout.contains("[1] ") && stdout.contains("[4] "),
        "actions are listed: {stdout}"
    );
    assert!(stdout.contains("Wrote hello.txt."), "{stdout}");
    assert_eq!(env.read("hello.txt"), "hi");
}

#[test]
fn chat_shows_pending_approvals_from_an_earlier_session_first() {
    let env = Env::new(vec![
        Turn::tool_call(
            "w1",
            "write_file",
            json!({"file_path": "later.txt", "content": "x"}).to_string(),
        ),
        Turn::text("ok"),
    ]);
    let out = env.run(&[
        "run",
        "write later.txt",
        "--json",
        "--model",
        "openai/gpt-test",
        "--on-ask",
        "suspend",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let chat = chat_id(&events(&out));
    let mut child = env
        .command(&["chat", "--chat", &chat])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Action 4 is reject; then feedback; then quit.
    child
        .stdin
        .as_mut()
        .unwrap()
        .write_all(b"4\nnot now\n/quit\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!env.ws.join("later.txt").exists());
    let results = tool_results(&env.transcript(&chat));
    assert_eq!(results.len(), 1);
    assert!(results[0].2.contains("not now"), "{results:?}");
}

#[test]
fn slash_compact_in_chat_summarizes_the_older_turns_and_says_what_it_did() {
    let env = Env::new(vec![
        Turn::tool_call(
            "r1",
            "read_file",
            json!({"file_path": "README.md"}).to_string(),
        ),
        Turn::text("It is a greeter."),
        Turn::text("Noted."),
        Turn::text("The code is AMBER-7731."),
    ]);
    // The summarizing request is answered by rule, whenever it comes.
    env.server.set_responder(|body| {
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        system
            .starts_with("You summarize a conversation")
            .then(|| Turn::text("Task: explain the project. The user said the code is AMBER-7731."))
    });
    let mut child = env
        .command(&["chat", "--model", "openai/gpt-test"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .as_mut()
        .unwrap()
        .write_all(b"what is this project?\nremember: the code is AMBER-7731\n/compact\nwhat is the code?\n/quit\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(
            "conversation compacted (manual): 0 tool output(s) cut, 4 message(s) summarized"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("The code is AMBER-7731."), "{stdout}");
    let requests = env.server.requests();
    let last = requests.last().unwrap().to_string();
    assert!(
        last.contains("Conversation compacted") && last.contains("what is the code?"),
        "{last}"
    );
    // The request after /compact no longer carries the first turn's tool call.
    assert!(!last.contains("README.md"), "{last}");
}

#[test]
fn slash_compact_in_a_new_chat_says_there_is_nothing_to_compact() {
    let env = Env::new(vec![]);
    let mut child = env
        .command(&["chat", "--model", "openai/gpt-test"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .as_mut()
        .unwrap()
        .write_all(b"/compact\n/quit\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("nothing to compact"), "{stdout}");
    assert!(env.server.requests().is_empty());
}
