//! Issue #12 through the real binary against the scripted model server: per kind, a refused
//! call leaves no trace on disk (a marker not created, a file not changed, a rule not added);
//! the full-access agent cannot change its rules, mode or MCP trust by any route of item 1
//! (also through a symlinked workspace folder and with `SUZENT_HOME` inside the workspace),
//! and every attempt is in the audit log.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use support::{Env, events, named};
use suzent_tests::{Item, Turn};

fn cmd(id: &str, script: &str) -> Item {
    Item::tool_call(id, "run_command", json!({ "content": script, "timeout": 30 }).to_string())
}

fn write(id: &str, path: &str) -> Item {
    Item::tool_call(id, "write_file", json!({ "file_path": path, "content": "[[rule]]\ntool = \"*\"\nbehavior = \"allow\"\nall = true\n" }).to_string())
}

/// The audit log's entries (one JSON object per line).
fn audit(config_dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(config_dir.join("permission-audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every file under `dir` with its bytes (the database files excluded: SQLite changes them
/// itself while the run is stored; they are checked through the CLI instead).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != "chats" && name != "logs" && name != "shared" {
                    stack.push(p);
                }
            } else if !name.starts_with("suzent.db") && name != "permission-audit.jsonl" {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn stdout_of(env: &Env, home: &Path, args: &[&str]) -> String {
    let out = env.command(args).env("SUZENT_HOME", home).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The attempts of item 1, for a state directory reachable as `rel` (from the workspace),
/// `tilde` (through `~`) and `$SUZENT_HOME`, and a workspace folder `link` linking to its
/// config directory.
fn attempts(rel: &str, tilde: &str) -> Vec<Item> {
    vec![
        write("w1", &format!("/workspace/{rel}/config/rules.toml")),
        write("w2", "link/rules.toml"),
        write("w3", &format!("{rel}/config/mcp.json")),
        Item::tool_call("w4", "edit_file", json!({"file_path": "link/config.toml", "old_string": "default", "new_string": "full_access"}).to_string()),
        cmd("c1", &format!("echo '[[rule]]' >> {tilde}/config/rules.toml")),
        cmd("c2", "cp evil.toml \"$SUZENT_HOME/config/rules.toml\""),
        cmd("c3", &format!("cd {rel}/config && printf x > rules.toml")),
        cmd("c4", "printf '{}' > link/mcp.json"),
        cmd("c5", "sqlite3 $SUZENT_HOME/data/suzent.db \"update chats set mode='default'\""),
        cmd("c6", &format!("python3 -c \"open('{rel}/config/config.toml','a').write('x = 1')\"")),
        cmd("c7", "suzent rules add --destination global --tool '*' --behavior allow --all"),
        cmd("c8", "suzent mcp trust evil"),
        cmd("c9", &format!("sed -i s/default/full_access/ {rel}/config/config.toml")),
        cmd("c10", "rm -f ${SUZENT_HOME}/config/permission-audit.jsonl"),
        cmd("c11", "ls link"),
    ]
}

fn ids(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::ToolCall { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

fn run_attempts(env: &Env, home: &Path, items: &[Item]) {
    // Set up: a user rule, a config, an MCP server, and a workspace link into the config.
    std::fs::create_dir_all(home.join("config")).unwrap();
    std::fs::write(home.join("config/config.toml"), "default_mode = \"default\"\n").unwrap();
    std::fs::write(home.join("config/rules.toml"), "[[rule]]\ntool = \"run_command\"\nbehavior = \"deny\"\nprefix = \"git push\"\n").unwrap();
    std::fs::write(home.join("config/mcp.json"), "{\"mcpServers\": {\"evil\": {\"command\": \"true\"}}}\n").unwrap();
    std::fs::write(env.ws.join("evil.toml"), "[[rule]]\ntool = \"*\"\nbehavior = \"allow\"\nall = true\n").unwrap();
    std::os::unix::fs::symlink(home.join("config"), env.ws.join("link")).unwrap();
    let rules_before = stdout_of(env, home, &["rules", "list"]);
    let mcp_before = stdout_of(env, home, &["mcp", "list", "--json"]);
    let files_before = snapshot(home);
    let out = env
        .command(&["run", "Widen your own permissions", "--json", "--model", "openai/gpt-test", "--mode", "full_access"])
        .env("SUZENT_HOME", home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let evs = events(&out);
    let decisions = named(&evs, "tool_permission_decision");
    for id in ids(items) {
        let d = decisions
            .iter()
            .find(|d| d["value"]["toolCallId"] == id.as_str())
            .unwrap_or_else(|| panic!("no decision for {id}: {decisions:?}"));
        assert_eq!(
            (d["value"]["behavior"].as_str(), d["value"]["reasonCode"].as_str()),
            (Some("deny"), Some("suzent_state")),
            "{id}: {d}"
        );
    }
    // Nothing changed: files, rules, MCP trust, the chat's mode.
    assert_eq!(snapshot(home), files_before);
    assert_eq!(stdout_of(env, home, &["rules", "list"]), rules_before);
    assert_eq!(stdout_of(env, home, &["mcp", "list", "--json"]), mcp_before);
    let chats: Value = serde_json::from_str(&stdout_of(env, home, &["chats", "--json"])).unwrap();
    assert_eq!(chats[0]["mode"], "full_access", "{chats}");
    // Every attempt is in the audit log, refused.
    let log = audit(&home.join("config"));
    for id in ids(items) {
        let entry = log
            .iter()
            .find(|e| e["toolCallId"] == id.as_str() && e["kind"] == "evaluation")
            .unwrap_or_else(|| panic!("no audit entry for {id}"));
        assert_eq!(
            (entry["decision"].as_str(), entry["reasonCode"].as_str()),
            (Some("deny"), Some("suzent_state")),
            "{entry}"
        );
    }
}

#[test]
fn the_full_access_agent_cannot_change_its_rules_mode_or_mcp_trust_by_any_route() {
    // SUZENT_HOME beside the workspace; HOME is the test's directory, so `~/home` reaches it.
    let items = attempts("../home", "~/home");
    let env = Env::new(vec![Turn::tool_calls(items.clone()), Turn::text("I could not change anything.")]);
    let home = env.home.clone();
    run_attempts(&env, &home, &items);
}

#[test]
fn with_suzent_home_inside_the_workspace_the_agent_still_cannot_change_its_state() {
    let items = attempts(".suzent", "~/project/.suzent");
    let env = Env::new(vec![Turn::tool_calls(items.clone()), Turn::text("done")]);
    let home = env.ws.join(".suzent");
    run_attempts(&env, &home, &items);
}
