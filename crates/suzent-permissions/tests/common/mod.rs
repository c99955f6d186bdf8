//! Shared set-up of the table-driven corpus (one test file per kind of case).
//!
//! Every row builds a real file tree in a temporary directory:
//! `base/ws` (the workspace) with `src/main.rs`, `.git/hooks/`, `sub/`, `outbox -> ../OUTSIDE`,
//! `notes.md -> base/OUTSIDE/victim.txt`, dangling `draft.txt -> base/OUTSIDE/new.txt`,
//! `escape -> ..` (a link to the parent of the workspace);
//! `base/OUTSIDE/victim.txt`, `base/project-evil/`, `base/etc/secret/key` (an extra root), and
//! the real home directory as an extra root for rows that say so.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;
use std::os::unix::fs::symlink;
use std::path::PathBuf;
pub use suzent_core::{
    ApprovalActionId, Behavior, PermissionMode, Rule, RuleDestination, RuleMatcher,
};
pub use suzent_permissions::{
    PathPolicy, PermissionContext, PermissionEngine, PermissionRequest, ToolAccess,
};

pub const CHAT: &str = "chat-1";

pub struct Fixture {
    pub _dir: tempfile::TempDir,
    pub base: PathBuf,
    pub ws: PathBuf,
}

pub fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
}

pub fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::create_dir_all(base.join("OUTSIDE")).unwrap();
    std::fs::write(base.join("OUTSIDE/victim.txt"), "victim").unwrap();
    std::fs::create_dir_all(base.join("project-evil")).unwrap();
    std::fs::create_dir_all(base.join("etc/secret")).unwrap();
    std::fs::write(base.join("etc/secret/key"), "k").unwrap();
    symlink("../OUTSIDE", ws.join("outbox")).unwrap();
    symlink(base.join("OUTSIDE/victim.txt"), ws.join("notes.md")).unwrap();
    symlink(base.join("OUTSIDE/new.txt"), ws.join("draft.txt")).unwrap();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    symlink("..", ws.join("escape")).unwrap();
    Fixture {
        _dir: dir,
        base,
        ws,
    }
}

impl Fixture {
    pub fn expand(&self, s: &str) -> String {
        s.replace("{ws}", &self.ws.to_string_lossy())
            .replace("{base}", &self.base.to_string_lossy())
    }

    /// A path as a file tool would report it: absolute, relative ones taken in the workspace.
    pub fn path(&self, s: &str) -> PathBuf {
        let s = self.expand(s);
        if let Some(rest) = s.strip_prefix("~/") {
            return home().join(rest);
        }
        let p = PathBuf::from(&s);
        if p.is_absolute() { p } else { self.ws.join(p) }
    }
}

/// `behavior tool(pattern)`, optionally prefixed `session:`. `allow *` is every call of every tool;
/// a pattern `dest:GLOB` is a destination rule, `=TEXT` an exact-input rule.
pub fn rule(i: usize, spec: &str, f: &Fixture) -> Rule {
    let spec = f.expand(spec);
    let (destination, spec) = match spec.strip_prefix("session:") {
        Some(rest) => (RuleDestination::Session, rest.to_string()),
        None => (RuleDestination::Global, spec),
    };
    let (behavior, rest) = spec.split_once(' ').unwrap();
    let behavior: Behavior = behavior.parse().unwrap();
    let (tool, matcher) = match rest.split_once('(') {
        None => (rest.to_string(), RuleMatcher::All),
        Some((tool, pattern)) => {
            let pattern = pattern.strip_suffix(')').unwrap();
            let matcher = if pattern == "*" {
                RuleMatcher::All
            } else if let Some(glob) = pattern.strip_prefix("dest:") {
                RuleMatcher::Destination {
                    pattern: glob.to_string(),
                }
            } else if let Some(exact) = pattern.strip_prefix('=') {
                RuleMatcher::Exact {
                    input: json!({ "content": exact }),
                }
            } else if tool == "run_command" {
                RuleMatcher::Prefix {
                    words: pattern.split_whitespace().map(String::from).collect(),
                }
            } else {
                RuleMatcher::Path {
                    glob: pattern.to_string(),
                }
            };
            (tool.to_string(), matcher)
        }
    };
    Rule {
        id: format!("rule-{i}"),
        tool,
        behavior,
        matcher,
        destination,
        chat_id: (destination == RuleDestination::Session).then(|| CHAT.to_string()),
        created_at: chrono::Utc::now(),
        description: None,
    }
}

#[derive(Clone, Copy)]
pub enum Call {
    Cmd(&'static str),
    Read(&'static str),
    Write(&'static str),
    Other {
        requires_approval: bool,
    },
    /// Any tool with these JSON arguments and no paths or commands (MCP tools, `agent_send`,
    /// `webpage_fetch`).
    Tool {
        tool: &'static str,
        args: &'static str,
        requires_approval: bool,
    },
}

pub fn request(call: Call, f: &Fixture) -> PermissionRequest {
    let (tool, args, access) = match call {
        Call::Cmd(c) => (
            "run_command",
            json!({"content": c}),
            ToolAccess::Command {
                command: c.to_string(),
                cwd: f.ws.clone(),
            },
        ),
        Call::Read(p) => (
            "read_file",
            json!({"path": p}),
            ToolAccess::Read(vec![f.path(p)]),
        ),
        Call::Write(p) => (
            "write_file",
            json!({"path": p, "content": "x"}),
            ToolAccess::Write(vec![f.path(p)]),
        ),
        Call::Other { .. } => ("web_search", json!({"query": "rust"}), ToolAccess::Other),
        Call::Tool { tool, args, .. } => (
            tool,
            serde_json::from_str(args).unwrap_or_else(|e| panic!("bad args {args}: {e}")),
            ToolAccess::Other,
        ),
    };
    let requires_approval = match call {
        Call::Other { requires_approval }
        | Call::Tool {
            requires_approval, ..
        } => requires_approval,
        Call::Write(_) | Call::Cmd(_) => true,
        Call::Read(_) => false,
    };
    PermissionRequest {
        tool_name: tool.to_string(),
        args,
        access,
        requires_approval,
    }
}

pub struct Case {
    pub name: &'static str,
    pub mode: PermissionMode,
    pub rules: &'static [&'static str],
    pub call: Call,
    /// Extra roots beyond the workspace: `{base}/etc` always; the home directory when true.
    pub home_root: bool,
    pub behavior: Behavior,
    pub code: &'static str,
}

pub const D: PermissionMode = PermissionMode::Default;
pub const AUTO: PermissionMode = PermissionMode::Auto;
pub const FULL: PermissionMode = PermissionMode::FullAccess;
pub const ALLOW: Behavior = Behavior::Allow;
pub const ASK: Behavior = Behavior::Ask;
pub const DENY: Behavior = Behavior::Deny;

pub const CASE1: &[&str] = &["allow run_command(git *)", "deny run_command(rm *)"];
pub const CASE2: &[&str] = &["allow run_command(git show)"];
pub const CASE3: &[&str] = &["allow *", "ask run_command(gh api * -X DELETE *)"];
pub const NONE: &[&str] = &[];

#[macro_export]
macro_rules! case {
    ($name:expr, $mode:expr, $rules:expr, $call:expr => $behavior:expr, $code:expr) => {
        $crate::common::Case {
            name: $name,
            mode: $mode,
            rules: $rules,
            call: $call,
            home_root: false,
            behavior: $behavior,
            code: $code,
        }
    };
    ($name:expr, $mode:expr, $rules:expr, $call:expr, home => $behavior:expr, $code:expr) => {
        $crate::common::Case {
            name: $name,
            mode: $mode,
            rules: $rules,
            call: $call,
            home_root: true,
            behavior: $behavior,
            code: $code,
        }
    };
}

pub fn evaluate_case(case: &Case) -> (suzent_permissions::Evaluation, Fixture) {
    let f = fixture();
    let mut extra = vec![f.base.join("etc")];
    if case.home_root {
        extra.push(home());
    }
    let policy = PathPolicy::new(&f.ws, &extra).unwrap();
    let rules: Vec<Rule> = case
        .rules
        .iter()
        .enumerate()
        .map(|(i, s)| rule(i, s, &f))
        .collect();
    let ctx = PermissionContext {
        mode: case.mode,
        paths: &policy,
        rules: &rules,
        chat_id: CHAT,
    };
    let req = request(case.call, &f);
    (PermissionEngine::new().evaluate(&req, &ctx), f)
}

pub fn run_table(rows: Vec<Case>) {
    let mut failures = Vec::new();
    for case in &rows {
        let (eval, _f) = evaluate_case(case);
        let d = &eval.decision;
        if d.behavior != case.behavior || d.reason_code != case.code {
            failures.push(format!(
                "{} [{}]: expected {} {}, got {} {} ({})",
                case.name, case.mode, case.behavior, case.code, d.behavior, d.reason_code, d.reason
            ));
        }
        assert!(!d.reason.trim().is_empty(), "{}: empty reason", case.name);
        assert_eq!(
            d.actions.is_empty(),
            d.behavior != Behavior::Ask,
            "{}: actions only when asking",
            case.name
        );
    }
    assert_eq!(failures, Vec::<String>::new());
}

pub fn eval_simple(
    mode: PermissionMode,
    rules: &'static [&'static str],
    call: Call,
) -> suzent_permissions::Evaluation {
    let case = Case {
        name: "",
        mode,
        rules,
        call,
        home_root: false,
        behavior: ALLOW,
        code: "",
    };
    evaluate_case(&case).0
}

pub fn action_ids(eval: &suzent_permissions::Evaluation) -> Vec<ApprovalActionId> {
    eval.decision.actions.iter().map(|a| a.id).collect()
}
