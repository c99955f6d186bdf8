//! `suzent permissions explain`, `suzent audit verify` and hand-written `rules.toml`, through the
//! real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::Value;
use support::Env;
use suzent_tests::Turn;

fn json_out(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn explain_shows_the_decision_every_matching_rule_and_the_segments_and_runs_nothing() {
    let env = Env::new(vec![]);
    for (behavior, prefix) in [("allow", "git"), ("deny", "rm")] {
        let out = env.run(&[
            "rules",
            "add",
            "--destination",
            "global",
            "--tool",
            "run_command",
            "--behavior",
            behavior,
            "--prefix",
            prefix,
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let script = "git status && rm -rf victim";
    std::fs::create_dir_all(env.ws.join("victim")).unwrap();
    let args = serde_json::json!({ "content": script }).to_string();
    let out = env.run(&[
        "permissions",
        "explain",
        "--tool",
        "run_command",
        "--args",
        &args,
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let e = json_out(&out);
    assert_eq!(e["behavior"], "deny");
    assert_eq!(e["reasonCode"], "rule_deny");
    assert_eq!(e["risk"], "high");
    let rules = e["matchedRules"].as_array().unwrap();
    assert_eq!(rules.len(), 2);
    let deny = rules
        .iter()
        .find(|r| r["rule"]["behavior"] == "deny")
        .unwrap();
    assert_eq!(deny["decisive"], true);
    assert!(
        deny["why"]
            .as_str()
            .unwrap()
            .contains("segment 2: rm -rf victim"),
        "{deny}"
    );
    let segments: Vec<Value> = e["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["words"].clone())
        .collect();
    assert_eq!(
        segments,
        vec![
            serde_json::json!(["git", "status"]),
            serde_json::json!(["rm", "-rf", "victim"])
        ]
    );
    assert!(env.ws.join("victim").exists(), "explain ran the command");
    // Nothing is stored: no chat, no audit line.
    assert!(!env.home.join("config/permission-audit.jsonl").exists());

    // The mode changes the answer for what no rule decides.
    let args = serde_json::json!({ "content": "touch new.txt" }).to_string();
    let ask = json_out(&env.run(&[
        "permissions",
        "explain",
        "--tool",
        "run_command",
        "--args",
        &args,
        "--json",
    ]));
    assert_eq!(
        (
            ask["behavior"].as_str(),
            ask["reviewerWouldDecide"].as_bool()
        ),
        (Some("ask"), Some(false))
    );
    let auto = json_out(&env.run(&[
        "permissions",
        "explain",
        "--tool",
        "run_command",
        "--args",
        &args,
        "--mode",
        "auto",
        "--json",
    ]));
    assert_eq!(auto["reviewerWouldDecide"], true);
    let full = json_out(&env.run(&[
        "permissions",
        "explain",
        "--tool",
        "run_command",
        "--args",
        &args,
        "--mode",
        "full_access",
        "--json",
    ]));
    assert_eq!(
        (full["behavior"].as_str(), full["reasonCode"].as_str()),
        (Some("allow"), Some("full_access"))
    );

    // Plain text names the rule and the segments.
    let args = serde_json::json!({ "content": script }).to_string();
    let text = env.run(&[
        "permissions",
        "explain",
        "--tool",
        "run_command",
        "--args",
        &args,
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.starts_with("deny (rule_deny)"), "{text}");
    assert!(text.contains("segment 2: rm -rf victim"), "{text}");
}

#[test]
fn a_recipient_rule_added_from_the_cli_denies_calls_to_that_destination_only() {
    let env = Env::new(vec![]);
    let add = |pattern: &str| {
        env.run(&[
            "rules",
            "add",
            "--destination",
            "global",
            "--tool",
            "webpage_fetch",
            "--behavior",
            "deny",
            "--recipient",
            pattern,
        ])
    };
    let out = add("*.evil.com");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let added = json_out(&out);
    assert_eq!(
        added["rule"]["matcher"],
        serde_json::json!({"kind": "destination", "pattern": "*.evil.com"})
    );
    // A pattern no destination can match is refused, naming the field.
    let out = add("a b");
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("matcher.pattern"), "{stderr}");

    let explain = |url: &str| {
        let args = serde_json::json!({ "url": url }).to_string();
        json_out(&env.run(&[
            "permissions",
            "explain",
            "--tool",
            "webpage_fetch",
            "--args",
            &args,
            "--json",
        ]))
    };
    let e = explain("https://docs.example.com@WWW.Evil.com/page");
    assert_eq!(
        (e["behavior"].as_str(), e["reasonCode"].as_str()),
        (Some("deny"), Some("rule_deny"))
    );
    assert_eq!(e["destinations"], serde_json::json!(["www.evil.com"]));
    assert_eq!(
        e["matchedRules"][0]["why"],
        "deny global rule: destination '*.evil.com' matches www.evil.com"
    );
    let e = explain("https://evil.com.example.org/");
    assert_eq!(e["behavior"], "allow");
    assert_eq!(e["matchedRules"], serde_json::json!([]));

    let args = serde_json::json!({ "url": "https://a.evil.com/" }).to_string();
    let text = env.run(&[
        "permissions",
        "explain",
        "--tool",
        "webpage_fetch",
        "--args",
        &args,
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("destinations: a.evil.com"), "{text}");
}

#[test]
fn explain_rejects_bad_input_naming_the_field() {
    let env = Env::new(vec![]);
    let out = env.run(&[
        "permissions",
        "explain",
        "--tool",
        "no_such_tool",
        "--args",
        "{}",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("tool"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = env.run(&[
        "permissions",
        "explain",
        "--tool",
        "run_command",
        "--args",
        "[1]",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("args"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn audit_verify_is_ok_after_a_run_and_names_the_line_edited_by_hand() {
    let env = Env::new(vec![
        Turn::tool_call("call_1", "read_file", r#"{"file_path":"README.md"}"#),
        Turn::tool_call("call_2", "run_command", r#"{"content":"touch x"}"#),
        Turn::tool_call("call_3", "read_file", r#"{"file_path":"Cargo.toml"}"#),
        Turn::text("done"),
    ]);
    let out = env.run(&["run", "look", "--json", "--model", "openai/gpt-test"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = env.home.join("config/permission-audit.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");

    let out = env.run(&["audit", "verify"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("OK: 3 lines"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let edited: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 1 {
                l.replace("\"deny\"", "\"allow\"")
            } else {
                l.to_string()
            }
        })
        .collect();
    assert_ne!(
        edited.join("\n") + "\n",
        text,
        "the second line had no deny to edit"
    );
    std::fs::write(&path, edited.join("\n") + "\n").unwrap();
    let out = env.run(&["audit", "verify", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report = json_out(&out);
    assert_eq!(report["ok"], false);
    assert_eq!(report["broken"]["line"], 2);
    assert_eq!(report["broken"]["file"], path.display().to_string());
    let out = env.run(&["audit", "verify"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("line 2"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn rules_written_by_hand_in_rules_toml_apply_and_invalid_ones_are_ignored() {
    let env = Env::new(vec![
        Turn::tool_call("call_1", "run_command", r#"{"content":"touch made.txt"}"#),
        Turn::text("done"),
    ]);
    std::fs::create_dir_all(env.home.join("config")).unwrap();
    std::fs::write(
        env.home.join("config/rules.toml"),
        "[[rule]]\ntool = \"run_command\"\nbehavior = \"allow\"\nprefix = \"touch\"\n\n[[rule]]\ntool = \"run_command\"\nbehavior = \"allow\"\nall = true\npath = \"**\"\n",
    )
    .unwrap();
    let out = env.run(&["rules", "list", "--json"]);
    let rules = json_out(&out);
    let ids: Vec<&str> = rules
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["rules.toml:1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 6") && stderr.contains("more than one"),
        "{stderr}"
    );

    let out = env.run(&["run", "make it", "--json", "--model", "openai/gpt-test"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        env.ws.join("made.txt").exists(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let evs = support::events(&out);
    let d = &support::named(&evs, "tool_permission_decision")[0]["value"];
    assert_eq!(
        (d["behavior"].as_str(), d["reasonCode"].as_str()),
        (Some("allow"), Some("rule_allow"))
    );
}
