//! `suzent run --json` on a real checkout against the scripted model server: grep, read, edit,
//! run a command; approvals in `default`, none in `auto`, a deny rule in `full_access`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::*;
use suzent_tests::Turn;

fn edit_session_turns() -> Vec<Turn> {
    vec![
        Turn::tool_call("call_grep", "grep_search", json!({"pattern": "Helo", "path": "."}).to_string()),
        Turn::tool_call("call_read", "read_file", json!({"file_path": "src/lib.rs"}).to_string()),
        Turn::tool_call(
            "call_edit",
            "edit_file",
            json!({"file_path": "src/lib.rs", "old_string": "Helo, {name}!", "new_string": "Hello, {name}!"}).to_string(),
        ),
        Turn::tool_call("call_run", "run_command", json!({"content": "grep -c Hello src/lib.rs", "timeout": 30}).to_string()),
        Turn::text("Fixed the typo in greet()."),
    ]
}

#[test]
fn default_mode_asks_for_the_edit_and_the_approved_edit_changes_the_file() {
    let env = Env::new(edit_session_turns());
    let evs = env.run_task("Fix the greeting typo", &["--on-ask", "suspend"], 3);
    let chat = chat_id(&evs);

    // grep found the typo but skipped the gitignored target/ dir; read ran without asking.
    let ends = named(&evs, "tool_call_end");
    assert_eq!(ends.len(), 2);
    let grep_out = ends[0]["value"]["output"].as_str().unwrap();
    assert!(grep_out.contains("src/lib.rs"), "{grep_out}");
    assert!(
        !grep_out.contains("junk.rs"),
        "gitignored file searched: {grep_out}"
    );
    assert!(
        ends[1]["value"]["output"]
            .as_str()
            .unwrap()
            .contains("Helo, {name}!")
    );

    let asks = named(&evs, "tool_approval_request");
    assert_eq!(asks.len(), 1);
    let ask = &asks[0]["value"];
    assert_eq!(ask["toolName"], "edit_file");
    assert_eq!(ask["approvalId"], "call_edit");
    assert_eq!(ask["decision"]["behavior"], "ask");
    let actions: Vec<&str> = ask["decision"]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        vec!["allow_once", "allow_session", "allow_global", "reject"]
    );
    assert!(
        env.read("src/lib.rs").contains("Helo,"),
        "file changed before approval"
    );

    // A new process lists the approval and grants it.
    let listed = env.run(&["approvals", "list", "--json", "--chat", &chat]);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["id"], "call_edit");

    let out = env.run(&[
        "resume",
        "--chat",
        &chat,
        "--approve",
        "call_edit=allow_once",
        "--json",
    ]);
    let evs2 = events(&out);
    // run_command `grep -c` is read-only and allowed; the run completes.
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        env.read("src/lib.rs")
            .contains("format!(\"Hello, {name}!\")")
    );
    let resolution = named(&evs2, "tool_permission_resolution");
    assert_eq!(resolution[0]["value"]["actionId"], "allow_once");
    let run_end = named(&evs2, "tool_call_end")
        .into_iter()
        .find(|e| e["value"]["toolName"] == "run_command")
        .unwrap();
    assert!(
        run_end["value"]["output"]
            .as_str()
            .unwrap()
            .contains("exit code: 0"),
        "{run_end}"
    );
    let finished = named(&evs2, "run_finished");
    assert_eq!(finished.last().unwrap()["value"]["outcome"], "completed");

    // The model saw every tool result, in order, and the final text is stored.
    let transcript = env.transcript(&chat);
    let ids: Vec<String> = tool_results(&transcript)
        .into_iter()
        .map(|(id, _, _)| id)
        .collect();
    assert_eq!(ids, vec!["call_grep", "call_read", "call_edit", "call_run"]);
    assert!(
        matches!(transcript.last(), Some(suzent_core::ChatMessage::Assistant { text, .. }) if text == "Fixed the typo in greet().")
    );
}

#[test]
fn auto_mode_runs_the_same_edit_without_asking() {
    let env = Env::new(edit_session_turns());
    let evs = env.run_task("Fix the greeting typo", &["--mode", "auto"], 0);
    assert!(named(&evs, "tool_approval_request").is_empty());
    let edit = decision(&evs, "edit_file");
    assert_eq!(edit["value"]["behavior"], "allow");
    assert!(env.read("src/lib.rs").contains("Hello, {name}!"));
}

#[test]
fn a_deny_rule_blocks_the_edit_in_full_access() {
    let env = Env::new(edit_session_turns());
    let out = env.run(&[
        "rules",
        "add",
        "--destination",
        "global",
        "--tool",
        "edit_file",
        "--behavior",
        "deny",
        "--all",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let evs = env.run_task("Fix the greeting typo", &["--mode", "full_access"], 0);
    let edit = decision(&evs, "edit_file");
    assert_eq!(edit["value"]["behavior"], "deny");
    assert_eq!(edit["value"]["reasonCode"], "rule_deny");
    assert!(
        env.read("src/lib.rs").contains("Helo, {name}!"),
        "denied edit changed the file"
    );
    // The model was told why.
    let end = named(&evs, "tool_call_end")
        .into_iter()
        .find(|e| e["value"]["toolName"] == "edit_file")
        .unwrap();
    assert_eq!(end["value"]["ok"], false);
    assert!(
        end["value"]["output"]
            .as_str()
            .unwrap()
            .contains("rule_deny")
    );
}

#[test]
fn headless_deny_refuses_what_would_ask_with_a_clear_reason() {
    let env = Env::new(edit_session_turns());
    let evs = env.run_task("Fix the greeting typo", &[], 0);
    assert!(named(&evs, "tool_approval_request").is_empty());
    let edit = decision(&evs, "edit_file");
    assert_eq!(edit["value"]["behavior"], "deny");
    assert_eq!(edit["value"]["source"], "headless");
    assert!(env.read("src/lib.rs").contains("Helo,"));
}

#[test]
fn allow_session_adds_a_rule_so_the_second_write_does_not_ask() {
    let env = Env::new(vec![
        Turn::tool_call(
            "w1",
            "write_file",
            json!({"file_path": "notes/a.md", "content": "one"}).to_string(),
        ),
        Turn::tool_call(
            "w2",
            "write_file",
            json!({"file_path": "notes/b.md", "content": "two"}).to_string(),
        ),
        Turn::text("done"),
    ]);
    let out = env.run(&[
        "run",
        "write notes",
        "--json",
        "--model",
        "openai/gpt-test",
        "--on-ask",
        "suspend",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let chat = chat_id(&events(&out));
    let out = env.run(&[
        "resume",
        "--chat",
        &chat,
        "--approve",
        "w1=allow_session",
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let evs = events(&out);
    assert!(
        named(&evs, "tool_approval_request").is_empty(),
        "second write asked again"
    );
    assert_eq!(env.read("notes/a.md"), "one");
    assert_eq!(env.read("notes/b.md"), "two");
    let res = named(&evs, "tool_permission_resolution");
    assert_eq!(res[0]["value"]["scope"], "session");
    let rules = env.run(&["rules", "list", "--json", "--chat", &chat]);
    let rules: serde_json::Value = serde_json::from_slice(&rules.stdout).unwrap();
    assert_eq!(rules.as_array().unwrap().len(), 1);
    assert_eq!(rules[0]["destination"], "session");
}

#[test]
fn reject_with_feedback_reaches_the_model_and_nothing_is_written() {
    let env = Env::new(vec![
        Turn::tool_call(
            "w1",
            "write_file",
            json!({"file_path": "x.txt", "content": "x"}).to_string(),
        ),
        Turn::text("ok, I will not write it"),
    ]);
    let out = env.run(&[
        "run",
        "write x",
        "--json",
        "--model",
        "openai/gpt-test",
        "--on-ask",
        "suspend",
    ]);
    let chat = chat_id(&events(&out));
    let out = env.run(&[
        "resume",
        "--chat",
        &chat,
        "--approve",
        "w1=reject",
        "--feedback",
        "use y.txt instead",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!env.ws.join("x.txt").exists());
    let results = tool_results(&env.transcript(&chat));
    assert_eq!(results.len(), 1);
    assert!(results[0].1);
    assert!(
        results[0].2.contains("use y.txt instead"),
        "{}",
        results[0].2
    );
    // The next request carried the rejection to the model.
    let last_request = env.server.requests().last().cloned().unwrap();
    assert!(last_request.to_string().contains("use y.txt instead"));
}

#[test]
fn the_same_session_works_through_the_anthropic_wire_format() {
    let env = Env::new(edit_session_turns());
    let out = env.run(&[
        "run",
        "Fix the greeting typo",
        "--json",
        "--model",
        "anthropic/claude-test",
        "--mode",
        "auto",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(env.read("src/lib.rs").contains("Hello, {name}!"));
    let recorded = env.server.recorded();
    assert!(
        recorded.iter().all(|r| r.path.contains("/v1/messages")),
        "{:?}",
        recorded.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    // The tool results went back as tool_result blocks.
    assert!(
        recorded
            .last()
            .unwrap()
            .body
            .to_string()
            .contains("tool_result")
    );
}
