//! Shared set-up of the CLI end-to-end tests: a real workspace, a private SUZENT_HOME and the
//! scripted model server.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use suzent_tests::{ScriptedServer, Turn};
use tempfile::TempDir;

pub struct Env {
    pub dir: TempDir,
    pub home: PathBuf,
    pub ws: PathBuf,
    pub server: ScriptedServer,
}

/// A small real project: a Rust crate with a bug to fix, a README and a .gitignore.
pub fn make_checkout(ws: &Path) {
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(ws.join("target/debug")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"greeter\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("src/lib.rs"),
        "/// Greets someone.\npub fn greet(name: &str) -> String {\n    format!(\"Helo, {name}!\")\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn greets() {\n        assert_eq!(super::greet(\"Ann\"), \"Hello, Ann!\");\n    }\n}\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("src/main.rs"),
        "fn main() {\n    println!(\"{}\", greeter::greet(\"world\"));\n}\n",
    )
    .unwrap();
    std::fs::write(ws.join("README.md"), "# greeter\n\nPrints a greeting.\n").unwrap();
    std::fs::write(ws.join(".gitignore"), "/target\n").unwrap();
    std::fs::write(ws.join("target/debug/junk.rs"), "Helo ignored\n").unwrap();
}

impl Env {
    pub fn new(turns: Vec<Turn>) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let ws = dir.path().join("project");
        make_checkout(&ws);
        let server = ScriptedServer::start_blocking(turns);
        Env {
            dir,
            home,
            ws,
            server,
        }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_suzent"));
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("SUZENT_HOME", &self.home)
            .env("OPENAI_BASE_URL", self.server.openai_base())
            .env("OPENAI_API_KEY", "sk-test-key")
            .env("ANTHROPIC_BASE_URL", self.server.base_url())
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .current_dir(&self.ws)
            .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs `suzent run TASK --json --model openai/gpt-test EXTRA...`, checks the exit code
    /// (stderr in the failure message) and returns the printed events.
    pub fn run_task(&self, task: &str, extra: &[&str], code: i32) -> Vec<Value> {
        let mut args = vec!["run", task, "--json", "--model", "openai/gpt-test"];
        args.extend_from_slice(extra);
        let out = self.run(&args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        events(&out)
    }

    /// Spawns `suzent` with piped stdout/stderr.
    pub fn spawn(&self, args: &[&str], extra_env: &[(&str, &str)]) -> Child {
        let mut cmd = self.command(args);
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.ws.join(rel)).unwrap()
    }

    pub fn write_config(&self, text: &str) {
        std::fs::create_dir_all(self.home.join("config")).unwrap();
        std::fs::write(self.home.join("config/config.toml"), text).unwrap();
    }

    /// The transcript of a chat, read straight from the database.
    pub fn transcript(&self, chat_id: &str) -> Vec<suzent_core::ChatMessage> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let store = suzent_store::Store::open(&self.home.join("data/suzent.db"))
                .await
                .unwrap();
            store
                .messages(chat_id)
                .await
                .unwrap()
                .into_iter()
                .map(|m| m.message)
                .collect()
        })
    }
}

/// Parses `--json` output into events.
pub fn events(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

pub fn named<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["name"] == name).collect()
}

/// The `tool_permission_decision` event for the first call of `tool`.
pub fn decision<'a>(events: &'a [Value], tool: &str) -> &'a Value {
    named(events, "tool_permission_decision")
        .into_iter()
        .find(|d| d["value"]["toolName"] == tool)
        .unwrap_or_else(|| panic!("no tool_permission_decision for {tool}"))
}

pub fn chat_id(events: &[Value]) -> String {
    events
        .iter()
        .find_map(|e| e["value"]["chatId"].as_str())
        .unwrap()
        .to_string()
}

/// Reads stdout lines of a child until one satisfies `stop`; returns the lines read.
pub fn read_until(child: &mut Child, stop: impl Fn(&str) -> bool) -> Vec<String> {
    let stdout = child.stdout.take().unwrap();
    let mut lines = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let done = stop(&line);
        lines.push(line);
        if done {
            break;
        }
    }
    lines
}

pub fn stderr_until(child: &mut Child, needle: &str) -> String {
    let stderr = child.stderr.take().unwrap();
    let mut seen = String::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains(needle) {
            break;
        }
    }
    seen
}

pub fn tool_results(transcript: &[suzent_core::ChatMessage]) -> Vec<(String, bool, String)> {
    transcript
        .iter()
        .filter_map(|m| match m {
            suzent_core::ChatMessage::Tool {
                tool_call_id,
                is_error,
                content,
                ..
            } => Some((tool_call_id.clone(), *is_error, content.clone())),
            _ => None,
        })
        .collect()
}
