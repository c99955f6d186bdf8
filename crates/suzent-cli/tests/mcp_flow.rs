//! `suzent mcp ...` and an agent turn that finds, activates and uses an MCP tool, end to end: the
//! real binary, the scripted model server, and `@modelcontextprotocol/server-everything` from npm
//! (installed under tests/mcp-servers by `.ci/run`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::PathBuf;
use support::{Env, events, named};
use suzent_tests::Turn;

fn everything_script() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.is_file(),
        "the npm MCP servers are not installed: run `npm ci` in tests/mcp-servers (.ci/run does)"
    );
    path.display().to_string()
}

fn ok(out: &std::process::Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_model_finds_activates_and_uses_an_mcp_tool_and_the_cli_sees_tool_activated() {
    let env = Env::new(vec![
        Turn::tool_call(
            "t1",
            "tool_search",
            json!({"query": "echo a message"}).to_string(),
        ),
        Turn::tool_call(
            "t2",
            "tool_search",
            json!({"query": "mcp__everything__echo"}).to_string(),
        ),
        Turn::tool_call(
            "t3",
            "mcp__everything__echo",
            json!({"message": "hello from MCP"}).to_string(),
        ),
        Turn::text("The server echoed it."),
    ]);
    let script = everything_script();
    ok(&env.run(&[
        "mcp",
        "add",
        "everything",
        "--trusted",
        "--",
        "node",
        &script,
        "stdio",
    ]));

    let out = env.run(&[
        "run",
        "Echo hello through MCP",
        "--json",
        "--model",
        "openai/gpt-test",
    ]);
    let stdout = ok(&out);
    let evs = events(&out);
    let activated = named(&evs, "tool_activated");
    assert_eq!(activated.len(), 1, "{stdout}");
    assert_eq!(activated[0]["value"]["toolName"], "mcp__everything__echo");
    assert_eq!(activated[0]["value"]["capability"], "mcp:everything");
    let ends = named(&evs, "tool_call_end");
    assert_eq!(ends.len(), 3);
    let found = ends[0]["value"]["output"].as_str().unwrap();
    assert!(found.contains("mcp__everything__echo"), "{found}");
    let echoed = &ends[2]["value"];
    assert_eq!(echoed["toolName"], "mcp__everything__echo");
    assert_eq!(echoed["ok"], true, "{echoed}");
    assert!(
        echoed["output"]
            .as_str()
            .unwrap()
            .contains("hello from MCP"),
        "{echoed}"
    );

    // The tool joined the request after its activation, not before.
    let requests = env.server.requests();
    let names = |r: &Value| -> Vec<String> {
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!names(&requests[1]).contains(&"mcp__everything__echo".to_string()));
    assert!(names(&requests[2]).contains(&"mcp__everything__echo".to_string()));
    assert!(names(&requests[0]).contains(&"tool_search".to_string()));
}

#[test]
fn mcp_commands_add_list_test_import_and_remove_servers() {
    let env = Env::new(vec![]);
    let script = everything_script();
    let added = ok(&env.run(&[
        "mcp",
        "add",
        "everything",
        "--env",
        "A=1",
        "--",
        "node",
        &script,
        "stdio",
    ]));
    assert!(
        added.contains("added MCP server 'everything' (stdio)"),
        "{added}"
    );

    let tested = ok(&env.run(&["mcp", "test", "everything", "--json"]));
    let result: Value = serde_json::from_str(&tested).unwrap();
    let names: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["qualifiedName"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"mcp__everything__echo"), "{names:?}");

    let listed: Value = serde_json::from_str(&ok(&env.run(&["mcp", "list", "--json"]))).unwrap();
    assert_eq!(listed[0]["name"], "everything");
    assert_eq!(
        listed[0]["config"]["env"]["A"], "***",
        "values are redacted"
    );

    let claude = env.dir.path().join("claude_desktop_config.json");
    std::fs::write(
        &claude,
        json!({"mcpServers": {
            "everything": {"command": "node", "args": [script, "stdio"]},
            "remote": {"url": "https://mcp.example.com/mcp"}
        }})
        .to_string(),
    )
    .unwrap();
    let imported = ok(&env.run(&["mcp", "import", claude.to_str().unwrap()]));
    assert!(
        imported.contains("imported: remote")
            && imported.contains("skipped (a server with that name exists): everything"),
        "{imported}"
    );

    let text = std::fs::read_to_string(env.home.join("config/mcp.json")).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        file["mcpServers"]["remote"]["url"],
        "https://mcp.example.com/mcp"
    );
    assert_eq!(file["mcpServers"]["everything"]["env"]["A"], "1");

    ok(&env.run(&["mcp", "rm", "remote"]));
    let bad = env.run(&["mcp", "rm", "remote"]);
    assert_ne!(bad.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no MCP server named 'remote'"));
    let usage = env.run(&["mcp", "add", "nothing"]);
    assert_ne!(usage.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&usage.stderr).contains("--url URL"));
}

#[test]
fn explain_decides_an_mcp_tool_like_a_real_call_and_names_rules_that_match_it() {
    let env = Env::new(vec![]);
    let script = everything_script();
    ok(&env.run(&["mcp", "add", "everything", "--", "node", &script, "stdio"]));
    let explain = |extra: &[&str]| -> Value {
        let mut args = vec![
            "permissions",
            "explain",
            "--tool",
            "mcp__everything__echo",
            "--args",
            "{\"message\": \"hi\"}",
            "--json",
        ];
        args.extend_from_slice(extra);
        serde_json::from_str(&ok(&env.run(&args))).unwrap()
    };
    // An untrusted server's tool asks in default mode (issue #12 item 12).
    let e = explain(&[]);
    assert_eq!(
        (
            e["tool"].as_str(),
            e["behavior"].as_str(),
            e["reasonCode"].as_str()
        ),
        (
            Some("mcp__everything__echo"),
            Some("ask"),
            Some("tool_requires_approval")
        ),
        "{e}"
    );
    ok(&env.run(&[
        "rules",
        "add",
        "--destination",
        "global",
        "--tool",
        "mcp__everything__echo",
        "--behavior",
        "deny",
        "--all",
    ]));
    let e = explain(&["--mode", "full_access"]);
    assert_eq!(e["behavior"], "deny", "{e}");
    assert_eq!(e["matchedRules"][0]["decisive"], true, "{e}");
}
