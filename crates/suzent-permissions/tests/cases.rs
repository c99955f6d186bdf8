//! The cases of shared/cases/permissions.md (1-6) and shared/cases/redaction.md as tables.
//!
//! Every row builds a real file tree in a temporary directory:
//! `base/ws` (the workspace) with `src/main.rs`, `.git/hooks/`, `outbox -> ../OUTSIDE`,
//! `notes.md -> base/OUTSIDE/victim.txt`, dangling `draft.txt -> base/OUTSIDE/new.txt`;
//! `base/OUTSIDE/victim.txt`, `base/project-evil/`, `base/etc/secret/key` (an extra root), and
//! the real home directory as an extra root for rows that say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::os::unix::fs::symlink;
use std::path::PathBuf;
use suzent_core::{ApprovalActionId, Behavior, PermissionMode, Rule, RuleDestination, RuleMatcher};
use suzent_permissions::{
    PathPolicy, PermissionContext, PermissionEngine, PermissionRequest, ToolAccess, redact_text,
    redact_value,
};

const CHAT: &str = "chat-1";

struct Fixture {
    _dir: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
}

fn fixture() -> Fixture {
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
    Fixture {
        _dir: dir,
        base,
        ws,
    }
}

impl Fixture {
    fn expand(&self, s: &str) -> String {
        s.replace("{ws}", &self.ws.to_string_lossy())
            .replace("{base}", &self.base.to_string_lossy())
    }

    /// A path as a file tool would report it: absolute, relative ones taken in the workspace.
    fn path(&self, s: &str) -> PathBuf {
        let s = self.expand(s);
        if let Some(rest) = s.strip_prefix("~/") {
            return home().join(rest);
        }
        let p = PathBuf::from(&s);
        if p.is_absolute() { p } else { self.ws.join(p) }
    }
}

/// `behavior tool(pattern)`, optionally prefixed `session:`. `allow *` is every call of every tool.
fn rule(i: usize, spec: &str, f: &Fixture) -> Rule {
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
enum Call {
    Cmd(&'static str),
    Read(&'static str),
    Write(&'static str),
    Other { requires_approval: bool },
}

fn request(call: Call, f: &Fixture) -> PermissionRequest {
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
    };
    let requires_approval = match call {
        Call::Other { requires_approval } => requires_approval,
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

struct Case {
    name: &'static str,
    mode: PermissionMode,
    rules: &'static [&'static str],
    call: Call,
    /// Extra roots beyond the workspace: `{base}/etc` always; the home directory when true.
    home_root: bool,
    behavior: Behavior,
    code: &'static str,
}

const D: PermissionMode = PermissionMode::Default;
const AUTO: PermissionMode = PermissionMode::Auto;
const FULL: PermissionMode = PermissionMode::FullAccess;
const ALLOW: Behavior = Behavior::Allow;
const ASK: Behavior = Behavior::Ask;
const DENY: Behavior = Behavior::Deny;

const CASE1: &[&str] = &["allow run_command(git *)", "deny run_command(rm *)"];
const CASE2: &[&str] = &["allow run_command(git show)"];
const CASE3: &[&str] = &["allow *", "ask run_command(gh api * -X DELETE *)"];
const NONE: &[&str] = &[];

macro_rules! case {
    ($name:expr, $mode:expr, $rules:expr, $call:expr => $behavior:expr, $code:expr) => {
        Case {
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
        Case {
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

use Call::{Cmd, Other, Read, Write};

fn case1_compound_commands() -> Vec<Case> {
    vec![
        // 1. Compound commands: every segment, in every nesting, is checked.
        case!("and-list hides rm", D, CASE1, Cmd("git status && rm -rf /important/dir") => DENY, "rule_deny"),
        case!("semicolon hides rm", D, CASE1, Cmd("git status; rm -rf x") => DENY, "rule_deny"),
        case!("pipe hides rm", D, CASE1, Cmd("git log | rm -rf x") => DENY, "rule_deny"),
        case!("background hides rm", D, CASE1, Cmd("ls & rm -rf x") => DENY, "rule_deny"),
        case!("subshell hides rm", D, CASE1, Cmd("(rm -rf x)") => DENY, "rule_deny"),
        case!("group hides rm", D, CASE1, Cmd("{ rm -rf x; }") => DENY, "rule_deny"),
        case!("command substitution hides rm", D, CASE1, Cmd("echo $(rm -rf x)") => DENY, "rule_deny"),
        case!("backticks hide rm", D, CASE1, Cmd("echo `rm -rf x`") => DENY, "rule_deny"),
        case!("newline hides rm", D, CASE1, Cmd("echo ok\nrm -rf x") => DENY, "rule_deny"),
        case!("or-list hides rm", D, CASE1, Cmd("git pull || rm -rf x") => DENY, "rule_deny"),
        case!("sh -c hides rm", D, CASE1, Cmd("sh -c 'rm -rf x'") => DENY, "rule_deny"),
        case!("timeout hides rm", D, CASE1, Cmd("timeout 5 rm -rf x") => DENY, "rule_deny"),
        case!("env hides rm", D, CASE1, Cmd("env A=1 rm -rf x") => DENY, "rule_deny"),
        case!("nohup in background hides rm", D, CASE1, Cmd("nohup rm -rf x &") => DENY, "rule_deny"),
        case!("find -exec hides rm", D, CASE1, Cmd("find . -exec rm -rf {} \\;") => DENY, "rule_deny"),
        case!("xargs hides rm", D, CASE1, Cmd("echo x | xargs rm -rf") => DENY, "rule_deny"),
        case!("if statement hides rm", D, CASE1, Cmd("if true; then rm -rf x; fi") => DENY, "rule_deny"),
        case!("deny wins in full access", FULL, CASE1, Cmd("git status; rm -rf x") => DENY, "rule_deny"),
        case!("deny wins in auto", AUTO, CASE1, Cmd("git status; rm -rf x") => DENY, "rule_deny"),
        case!("allowed git alone runs", D, CASE1, Cmd("git status") => ALLOW, "rule_allow"),
        case!("two allowed commands still ask", D, CASE1, Cmd("git status && git log") => ASK, "compound_command"),
        case!("git prefix does not match gitk", D, CASE1, Cmd("gitk --all") => ASK, "shell_policy_ask"),
    ]
}

fn case2_redirects() -> Vec<Case> {
    vec![
        // 2. Redirects are writes.
        case!("redirect to ssh key is outside", D, CASE2, Cmd("git show > ~/.ssh/id_rsa") => DENY, "outside_workspace"),
        case!("redirect via $HOME is outside", D, CASE2, Cmd("git show > $HOME/.bashrc") => DENY, "outside_workspace"),
        case!("redirect into git hooks asks", D, CASE2, Cmd("git show > .git/hooks/pre-commit") => ASK, "protected_path"),
        case!("redirect into git hooks asks in auto", AUTO, CASE2, Cmd("git show > .git/hooks/pre-commit") => ASK, "protected_path"),
        case!("redirect into git hooks runs in full access", FULL, CASE2, Cmd("git show > .git/hooks/pre-commit") => ALLOW, "full_access"),
        case!("redirect to a workspace file is not covered", D, CASE2, Cmd("git show > out.txt") => ASK, "shell_policy_ask"),
        case!("redirect through a symlinked dir is outside", D, CASE2, Cmd("git show > outbox/escaped.txt") => DENY, "outside_workspace"),
        case!("stderr to stdout stays allowed", D, CASE2, Cmd("git show 2>&1") => ALLOW, "rule_allow"),
        case!("dev null stays allowed", D, CASE2, Cmd("git show >/dev/null") => ALLOW, "rule_allow"),
        case!("stdout to stderr stays allowed", D, CASE2, Cmd("git show >&2") => ALLOW, "rule_allow"),
        case!("read-only command with redirect asks", AUTO, NONE, Cmd("cat src/main.rs > copy.rs") => ASK, "shell_policy_ask"),
    ]
}

fn case3_wrappers() -> Vec<Case> {
    vec![
        // 3. Wrappers hide commands.
        case!("xargs delete hits the ask rule", D, CASE3, Cmd("gh api repos/o/r/x -q '.[]|.id' | xargs -I{} gh api -X DELETE repos/o/r/x/{}") => ASK, "rule_ask"),
        case!("find exec sh -c asks despite allow all", D, CASE3, Cmd("find . -name '*.py' -exec sh -c 'curl https://example.com' \\;") => ASK, "compound_command"),
        case!("find exec grep stays allowed", D, CASE3, Cmd("find . -name '*.rs' -exec grep -n foo {} +") => ALLOW, "rule_allow"),
        case!("find exec grep is read-only without rules", D, NONE, Cmd("find . -name '*.rs' -exec grep -n foo {} +") => ALLOW, "read_only_command"),
        case!("find exec sh -c asks without rules", D, NONE, Cmd("find . -name '*.py' -exec sh -c 'curl https://example.com' \\;") => ASK, "compound_command"),
        case!("find exec rm asks without rules", AUTO, NONE, Cmd("find . -name '*.rs' -exec rm {} +") => ASK, "shell_policy_ask"),
        case!("xargs grep is read-only", AUTO, NONE, Cmd("xargs -0 grep -n foo") => ALLOW, "read_only_command"),
        case!("timeout wrapper is unwrapped for ask", D, CASE3, Cmd("timeout 10 gh api -X DELETE x") => ASK, "rule_ask"),
        case!("env wrapper is unwrapped for ask", D, CASE3, Cmd("env GH_HOST=x gh api -X DELETE x") => ASK, "rule_ask"),
        case!("nice wrapper is unwrapped for ask", D, CASE3, Cmd("nice -n 5 gh api -X DELETE x") => ASK, "rule_ask"),
        case!("nohup wrapper is unwrapped for ask", D, CASE3, Cmd("nohup gh api -X DELETE x") => ASK, "rule_ask"),
        case!("command wrapper is unwrapped for ask", D, CASE3, Cmd("command gh api -X DELETE x") => ASK, "rule_ask"),
        case!("time wrapper is unwrapped for ask", D, CASE3, Cmd("time gh api -X DELETE x") => ASK, "rule_ask"),
        case!("sudo wrapper is privilege escalation", D, CASE3, Cmd("sudo gh api -X DELETE x") => DENY, "dangerous_command"),
        case!("timeout wrapper is unwrapped for allow", D, CASE1, Cmd("timeout 60 git status") => ALLOW, "rule_allow"),
        case!("ask rule applies in full access", FULL, CASE3, Cmd("gh api -X DELETE x") => ASK, "rule_ask"),
    ]
}

fn case4_bare_names() -> Vec<Case> {
    vec![
        // 4. A known-safe command is a bare name.
        case!("dot slash sed is not sed", D, NONE, Cmd("./sed -n 1p f") => ASK, "shell_policy_ask"),
        case!("absolute cat is not cat", D, NONE, Cmd("/tmp/x/cat f") => ASK, "shell_policy_ask"),
        case!("relative grep is not grep", D, NONE, Cmd("bin/grep x") => ASK, "shell_policy_ask"),
        case!("bare sed -n is read-only", D, NONE, Cmd("sed -n 1p f") => ALLOW, "read_only_command"),
        case!("bare grep is read-only", D, NONE, Cmd("grep -rn foo src") => ALLOW, "read_only_command"),
        case!("bare ls is read-only in auto", AUTO, NONE, Cmd("ls -la") => ALLOW, "read_only_command"),
        case!("git is not known-safe", D, NONE, Cmd("git status") => ASK, "shell_policy_ask"),
        case!("interpreters are not known-safe", AUTO, NONE, Cmd("python3 script.py") => ASK, "shell_policy_ask"),
        case!("read-only commands joined still ask", D, NONE, Cmd("ls && pwd") => ASK, "compound_command"),
    ]
}

fn case5_deny_wins() -> Vec<Case> {
    vec![
        // 5. Deny always wins.
        case!("deny secrets beats allow all reads", D, &["allow read_file(**)", "deny read_file(**/.secrets*)"], Read("~/.secrets"), home => DENY, "rule_deny"),
        case!("allow all reads covers other files", D, &["allow read_file(**)", "deny read_file(**/.secrets*)"], Read("src/main.rs") => ALLOW, "rule_allow"),
        case!("deny ls beats ask all", D, &["deny run_command(ls *)", "ask run_command(*)"], Cmd("ls -d /x/*/") => DENY, "rule_deny"),
        case!("global deny beats session allow", D, &["session:allow read_file({base}/etc/**)", "deny read_file({base}/etc/secret/**)"], Read("{base}/etc/secret/key") => DENY, "rule_deny"),
        case!("global deny beats session allow in full access", FULL, &["session:allow read_file({base}/etc/**)", "deny read_file({base}/etc/secret/**)"], Read("{base}/etc/secret/key") => DENY, "rule_deny"),
        case!("deny rule checked first in auto", AUTO, &["deny run_command(ls *)"], Cmd("ls") => DENY, "rule_deny"),
        case!("deny write rule checked first in full access", FULL, &["deny write_file(**/.env)"], Write(".env") => DENY, "rule_deny"),
        case!("ask beats allow", D, &["allow run_command(npm *)", "ask run_command(npm publish)"], Cmd("npm publish") => ASK, "rule_ask"),
    ]
}

fn case6_symlinks() -> Vec<Case> {
    vec![
        // 6. Symlinks and containment.
        case!("write through symlinked dir is outside", D, NONE, Write("outbox/escaped.txt") => DENY, "outside_workspace"),
        case!("write through file symlink is outside", FULL, NONE, Write("notes.md") => DENY, "outside_workspace"),
        case!("write through dangling symlink is outside", AUTO, NONE, Write("draft.txt") => DENY, "outside_workspace"),
        case!("sibling with common prefix is outside", FULL, NONE, Write("../project-evil/x") => DENY, "outside_workspace"),
        case!("read through symlinked dir is outside", FULL, NONE, Read("outbox/victim.txt") => DENY, "outside_workspace"),
        case!("read of absolute outside path is denied", D, NONE, Read("/etc/passwd") => DENY, "outside_workspace"),
        case!("write in extra root needs approval in auto", AUTO, NONE, Write("{base}/etc/new") => ASK, "write_requires_approval"),
        case!("write of git config asks", D, NONE, Write(".git/config") => ASK, "protected_path"),
        case!("write of git config asks in auto", AUTO, NONE, Write(".git/config") => ASK, "protected_path"),
        case!("write of git config runs in full access", FULL, NONE, Write(".git/config") => ALLOW, "full_access"),
    ]
}

fn mode_defaults() -> Vec<Case> {
    vec![
        // 1-6 context: mode defaults.
        case!("workspace write asks in default", D, NONE, Write("src/new.rs") => ASK, "write_requires_approval"),
        case!("workspace write is allowed in auto", AUTO, NONE, Write("src/new.rs") => ALLOW, "auto_workspace_write"),
        case!("workspace write is allowed in full access", FULL, NONE, Write("src/new.rs") => ALLOW, "full_access"),
        case!("workspace read is allowed", D, NONE, Read("src/main.rs") => ALLOW, "read_only"),
        case!("tool requiring approval asks", D, NONE, Other { requires_approval: true } => ASK, "tool_requires_approval"),
        case!("tool requiring approval asks in auto", AUTO, NONE, Other { requires_approval: true } => ASK, "tool_requires_approval"),
        case!("tool without approval runs", D, NONE, Other { requires_approval: false } => ALLOW, "tool_default_allow"),
        case!("tool requiring approval runs in full access", FULL, NONE, Other { requires_approval: true } => ALLOW, "full_access"),
        case!("unbalanced quote is unparsed", D, NONE, Cmd("echo \"unbalanced") => ASK, "shell_unparsed"),
        case!("eval is unparsed", AUTO, NONE, Cmd("eval \"$X\"") => ASK, "shell_unparsed"),
        case!("computed command name is unparsed", AUTO, CASE3, Cmd("$CMD -rf x") => ASK, "shell_unparsed"),
        case!("computed redirect target is unparsed", D, NONE, Cmd("echo x > $OUT") => ASK, "shell_unparsed"),
        case!("unparsed runs in full access", FULL, NONE, Cmd("eval \"$X\"") => ALLOW, "full_access"),
        case!("ordinary command runs in full access", FULL, NONE, Cmd("cargo build") => ALLOW, "full_access"),
    ]
}

fn dangerous_commands() -> Vec<Case> {
    vec![
        // Dangerous commands: denied in every mode.
        case!("sudo is denied in full access", FULL, NONE, Cmd("sudo ls") => DENY, "dangerous_command"),
        case!("rm -rf root is denied in full access", FULL, CASE3, Cmd("rm -rf /") => DENY, "dangerous_command"),
        case!("rm -rf root glob is denied", FULL, NONE, Cmd("rm -rf /*") => DENY, "dangerous_command"),
        case!("rm -rf home is denied", AUTO, NONE, Cmd("rm -rf ~") => DENY, "dangerous_command"),
        case!("rm -rf $HOME is denied", FULL, NONE, Cmd("rm -rf \"$HOME\"") => DENY, "dangerous_command"),
        case!("rm -rf workspace root is denied", FULL, NONE, Cmd("rm -rf .") => DENY, "dangerous_command"),
        case!("rm -rf etc is denied", FULL, NONE, Cmd("rm -r -f /etc") => DENY, "dangerous_command"),
        case!("mkfs is denied", FULL, NONE, Cmd("mkfs.ext4 /dev/sda1") => DENY, "dangerous_command"),
        case!("dd to a device is denied", FULL, NONE, Cmd("dd if=/dev/zero of=/dev/sda bs=1M") => DENY, "dangerous_command"),
        case!("shutdown is denied", FULL, NONE, Cmd("shutdown -h now") => DENY, "dangerous_command"),
        case!("reboot inside bash -c is denied", FULL, NONE, Cmd("bash -c 'sleep 1; reboot'") => DENY, "dangerous_command"),
        case!("rm -rf of a build dir just asks", D, NONE, Cmd("rm -rf build") => ASK, "shell_policy_ask"),
    ]
}

fn cases() -> Vec<Case> {
    [
        case1_compound_commands(),
        case2_redirects(),
        case3_wrappers(),
        case4_bare_names(),
        case5_deny_wins(),
        case6_symlinks(),
        mode_defaults(),
        dangerous_commands(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn evaluate_case(case: &Case) -> (suzent_permissions::Evaluation, Fixture) {
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

fn run_table(rows: Vec<Case>) {
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

#[test]
fn the_table_covers_at_least_sixty_cases() {
    assert!(cases().len() >= 60, "table has {} rows", cases().len());
}

#[test]
fn every_segment_of_a_compound_command_is_checked() {
    run_table(case1_compound_commands());
}

#[test]
fn redirects_are_writes_checked_against_rules_and_paths() {
    run_table(case2_redirects());
}

#[test]
fn wrappers_are_unwrapped_for_deny_ask_and_allow_rules() {
    run_table(case3_wrappers());
}

#[test]
fn a_known_safe_command_is_only_a_bare_name() {
    run_table(case4_bare_names());
}

#[test]
fn deny_always_wins_in_every_mode_and_scope() {
    run_table(case5_deny_wins());
}

#[test]
fn symlinks_and_sibling_prefixes_cannot_escape_the_workspace() {
    run_table(case6_symlinks());
}

#[test]
fn each_mode_applies_its_defaults_when_no_rule_decides() {
    run_table(mode_defaults());
}

#[test]
fn dangerous_commands_are_denied_in_every_mode() {
    run_table(dangerous_commands());
}

fn eval_simple(
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

fn action_ids(eval: &suzent_permissions::Evaluation) -> Vec<ApprovalActionId> {
    eval.decision.actions.iter().map(|a| a.id).collect()
}

#[test]
fn an_ordinary_ask_offers_once_session_global_and_reject_in_order() {
    let eval = eval_simple(D, &[], Cmd("git status -s"));
    assert_eq!(
        action_ids(&eval),
        vec![
            ApprovalActionId::AllowOnce,
            ApprovalActionId::AllowSession,
            ApprovalActionId::AllowGlobal,
            ApprovalActionId::Reject
        ]
    );
    let session = &eval.decision.actions[1];
    let rule = session.rule.as_ref().unwrap();
    assert_eq!(
        rule.matcher,
        RuleMatcher::Prefix {
            words: vec!["git".into(), "status".into()]
        }
    );
    assert_eq!(rule.behavior, Behavior::Allow);
    assert_eq!(rule.destination, RuleDestination::Session);
    assert_eq!(
        eval.decision.actions[2].rule.as_ref().unwrap().destination,
        RuleDestination::Global
    );
    assert!(session.description.contains("git status"));
    assert!(eval.decision.actions[3].accepts_feedback);
}

#[test]
fn a_compound_or_multiline_command_offers_only_once_and_reject() {
    for cmd in [
        "git status && git log",
        "git status\ngit log",
        "echo $(date)",
        "echo `date`",
    ] {
        let eval = eval_simple(D, &[], Cmd(cmd));
        assert_eq!(
            action_ids(&eval),
            vec![ApprovalActionId::AllowOnce, ApprovalActionId::Reject],
            "{cmd}"
        );
    }
}

#[test]
fn a_write_suggests_a_glob_of_the_parent_directory() {
    let f = fixture();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    let ctx = PermissionContext {
        mode: D,
        paths: &policy,
        rules: &[],
        chat_id: CHAT,
    };
    let eval = PermissionEngine::new().evaluate(&request(Write("src/new.rs"), &f), &ctx);
    let rule = eval.decision.actions[1].rule.clone().unwrap();
    assert_eq!(
        rule.matcher,
        RuleMatcher::Path {
            glob: format!("{}/src/**", f.ws.display())
        }
    );
    // The suggested rule really allows the call when remembered.
    let stored = Rule {
        id: "new".into(),
        tool: rule.tool,
        behavior: rule.behavior,
        matcher: rule.matcher,
        destination: rule.destination,
        chat_id: Some(CHAT.into()),
        created_at: chrono::Utc::now(),
        description: rule.description,
    };
    let rules = [stored];
    let ctx = PermissionContext {
        rules: &rules,
        ..ctx
    };
    let eval = PermissionEngine::new().evaluate(&request(Write("src/new.rs"), &f), &ctx);
    assert_eq!(
        (eval.decision.behavior, eval.decision.reason_code.as_str()),
        (ALLOW, "rule_allow")
    );
}

#[test]
fn a_session_rule_of_another_chat_does_not_apply() {
    let f = fixture();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    let mut r = rule(0, "session:allow run_command(cargo test)", &f);
    r.chat_id = Some("other-chat".into());
    let rules = [r];
    let ctx = PermissionContext {
        mode: D,
        paths: &policy,
        rules: &rules,
        chat_id: CHAT,
    };
    let eval = PermissionEngine::new().evaluate(&request(Cmd("cargo test"), &f), &ctx);
    assert_eq!(eval.decision.reason_code, "shell_policy_ask");
    assert!(eval.matched.is_empty());
}

#[test]
fn every_matching_rule_is_listed_whatever_its_behavior() {
    let eval = eval_simple(D, CASE1, Cmd("git status && rm -rf x"));
    let ids: Vec<&str> = eval.matched.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, vec!["rule-0", "rule-1"]);
    assert_eq!(
        eval.decision.matched_rules,
        vec!["rule-0".to_string(), "rule-1".to_string()]
    );
}

#[test]
fn a_dangling_symlink_write_is_denied_and_creates_nothing() {
    let f = fixture();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    let ctx = PermissionContext {
        mode: FULL,
        paths: &policy,
        rules: &[],
        chat_id: CHAT,
    };
    let eval = PermissionEngine::new().evaluate(&request(Write("draft.txt"), &f), &ctx);
    assert_eq!(eval.decision.behavior, DENY);
    assert!(!f.base.join("OUTSIDE/new.txt").exists());
    assert!(eval.decision.reason.contains("OUTSIDE"));
}

#[test]
fn rule_matches_reports_any_segment_for_deny_rules() {
    let f = fixture();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    let ctx = PermissionContext {
        mode: D,
        paths: &policy,
        rules: &[],
        chat_id: CHAT,
    };
    let deny = rule(0, "deny run_command(rm *)", &f);
    assert!(suzent_permissions::rule_matches(
        &deny,
        &request(Cmd("ls; (cd x && rm -f y)"), &f),
        &ctx
    ));
    assert!(!suzent_permissions::rule_matches(
        &deny,
        &request(Cmd("rmdir y"), &f),
        &ctx
    ));
}

// ---------------- redaction.md ----------------

#[test]
fn every_redaction_text_case_masks_secrets_and_keeps_the_rest() {
    let rows: &[(&str, &str)] = &[
        (
            "Authorization: Bearer sk-test-ABC123:SUFFIX456",
            "Authorization: Bearer [redacted]",
        ),
        (
            "curl -H 'Authorization: Basic dXNlcjpwYXNz' x",
            "curl -H 'Authorization: Basic [redacted]' x",
        ),
        ("key is sk-ws-H.EEP.pFau... ok", "key is [redacted] ok"),
        (
            "OPENAI_API_KEY=sk-proj-abcdefghijklmnop",
            "OPENAI_API_KEY=[redacted]",
        ),
        ("x sk-ant-api03-abcdefghijklmnopqrstuv y", "x [redacted] y"),
        ("AIzaSyA1234567890abcdefghijklmnopqrstu", "[redacted]"),
        ("aws AKIAIOSFODNN7EXAMPLE", "aws [redacted]"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[redacted]"),
        (
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "[redacted]",
        ),
        ("slack xoxb-1234567890-abcdefghij", "slack [redacted]"),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
            "jwt [redacted] end",
        ),
        (
            "git clone https://alice:s3cr3t@example.com/r.git",
            "git clone https://alice:[redacted]@example.com/r.git",
        ),
        (
            "GET /api?token=abc123&page=2",
            "GET /api?token=[redacted]&page=2",
        ),
        (
            "https://x.io/v1?a=1&key=AbC",
            "https://x.io/v1?a=1&key=[redacted]",
        ),
        ("token=inline-secret npm test", "token=[redacted] npm test"),
        (
            "//registry.npmjs.org/:_authToken=npm_abcdef",
            "//registry.npmjs.org/:_authToken=[redacted]",
        ),
        (
            "export GITHUB_TOKEN=abc123",
            "export GITHUB_TOKEN=[redacted]",
        ),
        (
            "mysql --password hunter2 db",
            "mysql --password [redacted] db",
        ),
        ("{\"api_key\": \"abc\"}", "{\"api_key\": \"[redacted]\"}"),
        ("authorType=x", "authorType=x"),
        ("tokens=1500", "tokens=1500"),
        ("max_tokens: 2048", "max_tokens: 2048"),
        (
            "plain text with no secrets: 42",
            "plain text with no secrets: 42",
        ),
    ];
    let mut failures = Vec::new();
    for (input, expected) in rows {
        let got = redact_text(input);
        if got != *expected {
            failures.push(format!("{input:?}: expected {expected:?}, got {got:?}"));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}

#[test]
fn a_pem_private_key_block_is_masked_entirely() {
    let pem = "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----\nafter";
    let got = redact_text(pem);
    assert!(!got.contains("MIIEow") && !got.contains("IBAAKC"), "{got}");
    assert!(
        got.starts_with("before\n") && got.ends_with("\nafter"),
        "{got}"
    );
}

#[test]
fn sensitive_keys_are_masked_at_any_depth() {
    let v = json!({
        "api_key": "a", "apiKey": 7, "x-api-key": "b", "Authorization": "Bearer z", "password": "p",
        "secret": "s", "token": "t", "access_token": "at", "refresh_token": "rt", "client_secret": "cs",
        "private_key": "pk", "cookie": "c",
        "nested": [{"deeper": {"apiKey": {"even": "an object"}}}],
        "tokens": 1500, "max_tokens": 2048, "authorType": "x"
    });
    let r = redact_value(&v);
    for key in [
        "api_key",
        "apiKey",
        "x-api-key",
        "Authorization",
        "password",
        "secret",
        "token",
        "access_token",
        "refresh_token",
        "client_secret",
        "private_key",
        "cookie",
    ] {
        assert_eq!(r[key], json!("[redacted]"), "{key}");
    }
    assert_eq!(r["nested"][0]["deeper"]["apiKey"], json!("[redacted]"));
    assert_eq!(
        (&r["tokens"], &r["max_tokens"], &r["authorType"]),
        (&json!(1500), &json!(2048), &json!("x"))
    );
}

#[test]
fn inline_secrets_inside_values_are_masked() {
    let v =
        json!({"args": {"content": "curl -H 'Authorization: Bearer sk-test-ABC123:SUFFIX456' x"}});
    let r = redact_value(&v).to_string();
    assert!(!r.contains("ABC123") && !r.contains("SUFFIX456"), "{r}");
}

#[test]
fn nesting_beyond_eight_levels_is_cut_visibly() {
    let mut v = json!("leaf");
    for _ in 0..12 {
        v = json!({"a": v});
    }
    let r = redact_value(&v);
    let mut cur = &r;
    let mut depth = 0;
    while let Some(next) = cur.get("a") {
        cur = next;
        depth += 1;
    }
    assert_eq!(depth, 8);
    assert_eq!(cur, &json!("[truncated]"));
}

#[test]
fn arrays_and_objects_keep_fifty_items_and_say_so() {
    let arr: Vec<Value> = (0..60).map(|i| json!(i)).collect();
    let r = redact_value(&Value::Array(arr));
    let items = r.as_array().unwrap();
    assert_eq!(items.len(), 51);
    assert_eq!(items[50], json!("[truncated] 10 more items"));

    let obj: serde_json::Map<String, Value> =
        (0..60).map(|i| (format!("k{i:02}"), json!(i))).collect();
    let r = redact_value(&Value::Object(obj));
    let map = r.as_object().unwrap();
    assert_eq!(map.len(), 51);
    assert_eq!(map["[truncated]"], json!("10 more keys"));
}

#[test]
fn long_strings_keep_two_thousand_chars_and_end_with_an_ellipsis() {
    let r = redact_value(&json!("é".repeat(3000)));
    let s = r.as_str().unwrap();
    assert!(s.ends_with("…[truncated]"));
    assert_eq!(s.chars().filter(|c| *c == 'é').count(), 2000);
    assert_eq!(redact_value(&json!("short")), json!("short"));
}
