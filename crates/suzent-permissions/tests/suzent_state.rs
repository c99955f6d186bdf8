//! Issue #12 item 1: Suzent's own state (config and data directories) is off limits to every
//! tool in every mode, by every route: file tools (after symlinks), shell commands naming it
//! directly, through `~`/`$HOME`/known variables, relative after `cd`, through a workspace
//! symlink, as an argument of an interpreter or database client, through globs and
//! here-documents, and Suzent's own CLI; also with `SUZENT_HOME` inside the workspace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use pretty_assertions::assert_eq;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

/// Where Suzent's state lives in a row.
#[derive(Clone, Copy, PartialEq)]
enum Layout {
    /// Under the real home: `~/.config/suzent-state-test/{config,data}` (never created on
    /// disk by these tests, except by `ws/state` links pointing at it).
    Home,
    /// A portable install: `SUZENT_HOME` = `ws/.suzent`.
    InWorkspace,
}

struct Row {
    name: &'static str,
    layout: Layout,
    mode: PermissionMode,
    call: Call,
    behavior: Behavior,
    code: &'static str,
}

const HOME_STATE: &str = ".config/suzent-state-test";

fn row(
    name: &'static str,
    layout: Layout,
    mode: PermissionMode,
    call: Call,
    behavior: Behavior,
    code: &'static str,
) -> Row {
    Row {
        name,
        layout,
        mode,
        call,
        behavior,
        code,
    }
}

fn state_dirs(f: &Fixture, layout: Layout) -> (PathBuf, PathBuf) {
    let root = match layout {
        Layout::Home => home().join(HOME_STATE),
        Layout::InWorkspace => f.ws.join(".suzent"),
    };
    (root.join("config"), root.join("data"))
}

fn evaluate(r: &Row) -> (suzent_permissions::Evaluation, Fixture) {
    let f = fixture();
    let (config, data) = state_dirs(&f, r.layout);
    if r.layout == Layout::InWorkspace {
        std::fs::create_dir_all(config.join("skills/demo")).unwrap();
        std::fs::write(config.join("rules.toml"), "").unwrap();
        std::fs::create_dir_all(data.join("shared")).unwrap();
        std::fs::create_dir_all(data.join("chats/chat-1")).unwrap();
        std::fs::write(data.join("suzent.db"), "").unwrap();
        // A folder in the workspace that links to the state.
        symlink(".suzent/config", f.ws.join("state")).unwrap();
    } else {
        // A workspace folder linking to the (home) state directory.
        symlink(&config, f.ws.join("state")).unwrap();
    }
    let policy = PathPolicy::new(
        &f.ws,
        &[
            f.base.join("etc"),
            data.join("shared"),
            data.join("chats/chat-1"),
        ],
    )
    .unwrap()
    .protect(&[config.clone(), data.clone()])
    .allow_reading(&[config.join("skills")]);
    let rules = vec![rule(0, "allow run_command(sqlite3 *)", &f)];
    let ctx = PermissionContext {
        mode: r.mode,
        paths: &policy,
        rules: &rules,
        chat_id: CHAT,
    };
    let req = request_in(r.call, &f, r.layout);
    (PermissionEngine::new().evaluate(&req, &ctx), f)
}

/// Like `common::request`, with `{state}` standing for the state root of the layout.
fn request_in(call: Call, f: &Fixture, layout: Layout) -> PermissionRequest {
    let (config, _) = state_dirs(f, layout);
    let root = config.parent().unwrap().to_string_lossy().into_owned();
    let fill =
        |s: &str| -> &'static str { Box::leak(s.replace("{state}", &root).into_boxed_str()) };
    let call = match call {
        Call::Cmd(c) => Call::Cmd(fill(c)),
        Call::Read(p) => Call::Read(fill(p)),
        Call::Write(p) => Call::Write(fill(p)),
        other => other,
    };
    request(call, f)
}

use Call::{Cmd, Read, Write};
use Layout::{Home as H, InWorkspace as W};

const STATE: &str = "suzent_state";
/// Removing the workspace root (or `/`) is a built-in dangerous command, cited before the state
/// it contains.
const DANGEROUS: &str = "dangerous_command";

fn rows() -> Vec<Row> {
    vec![
        // File tools, after symlinks, in every mode.
        row(
            "write_file into the config dir",
            H,
            FULL,
            Write("{state}/config/rules.toml"),
            DENY,
            STATE,
        ),
        row(
            "write_file through a workspace symlink",
            H,
            FULL,
            Write("state/rules.toml"),
            DENY,
            STATE,
        ),
        row(
            "read_file of config.toml through a symlink",
            H,
            FULL,
            Read("state/config.toml"),
            DENY,
            STATE,
        ),
        row(
            "write_file of the database in a portable install",
            W,
            FULL,
            Write(".suzent/data/suzent.db"),
            DENY,
            STATE,
        ),
        row(
            "write_file of the WAL in a portable install",
            W,
            AUTO,
            Write(".suzent/data/suzent.db-wal"),
            DENY,
            STATE,
        ),
        row(
            "write_file of mcp.json via the link in a portable install",
            W,
            D,
            Write("state/mcp.json"),
            DENY,
            STATE,
        ),
        row(
            "write_file via dot dot from a subfolder",
            W,
            FULL,
            Write("src/../.suzent/config/rules.toml"),
            DENY,
            STATE,
        ),
        row(
            "read_file of the audit log in a portable install",
            W,
            FULL,
            Read(".suzent/config/permission-audit.jsonl"),
            DENY,
            STATE,
        ),
        row(
            "read_file of a skill stays allowed",
            W,
            D,
            Read(".suzent/config/skills/demo/SKILL.md"),
            ALLOW,
            "read_only",
        ),
        row(
            "write_file of a skill is refused",
            W,
            FULL,
            Write(".suzent/config/skills/demo/SKILL.md"),
            DENY,
            STATE,
        ),
        row(
            "write_file into the chat's own persistence stays allowed",
            W,
            FULL,
            Write(".suzent/data/chats/chat-1/notes.md"),
            ALLOW,
            "full_access",
        ),
        row(
            "write_file into another chat's persistence is refused",
            W,
            FULL,
            Write(".suzent/data/chats/chat-2/notes.md"),
            DENY,
            STATE,
        ),
        // Shell: directly, by `~`, `$HOME`, `${HOME}`, XDG variables.
        row(
            "shell redirect into the config dir by tilde",
            H,
            FULL,
            Cmd("echo '[[rule]]' >> ~/.config/suzent-state-test/config/rules.toml"),
            DENY,
            STATE,
        ),
        row(
            "shell cp over rules.toml by $HOME",
            H,
            FULL,
            Cmd("cp evil.toml $HOME/.config/suzent-state-test/config/rules.toml"),
            DENY,
            STATE,
        ),
        row(
            "shell cat of config by ${HOME}",
            H,
            FULL,
            Cmd("cat ${HOME}/.config/suzent-state-test/config/config.toml"),
            DENY,
            STATE,
        ),
        row(
            "shell sed -i by XDG_CONFIG_HOME",
            H,
            FULL,
            Cmd(
                "sed -i s/default/full_access/ $XDG_CONFIG_HOME/suzent-state-test/config/config.toml",
            ),
            DENY,
            STATE,
        ),
        row(
            "shell rm of the audit log by absolute path",
            H,
            FULL,
            Cmd("rm -f {state}/config/permission-audit.jsonl"),
            DENY,
            STATE,
        ),
        // Relative after cd, through the workspace symlink.
        row(
            "shell relative write after cd into the state",
            H,
            FULL,
            Cmd("cd ~/.config/suzent-state-test && echo x > config/rules.toml"),
            DENY,
            STATE,
        ),
        row(
            "shell relative write after cd to the parent",
            H,
            FULL,
            Cmd("cd ~/.config && cp x suzent-state-test/config/mcp.json"),
            DENY,
            STATE,
        ),
        row(
            "shell write through the workspace symlink",
            H,
            FULL,
            Cmd("printf x > state/rules.toml"),
            DENY,
            STATE,
        ),
        row(
            "shell copy into the symlinked folder",
            H,
            FULL,
            Cmd("cp evil.toml state"),
            DENY,
            STATE,
        ),
        row(
            "shell cd into the symlink then write",
            H,
            FULL,
            Cmd("cd state; tee rules.toml < evil"),
            DENY,
            STATE,
        ),
        row(
            "shell ln -s to the state",
            H,
            FULL,
            Cmd("ln -s ~/.config/suzent-state-test/config cfg"),
            DENY,
            STATE,
        ),
        // Interpreters and database clients.
        row(
            "python -c opening rules.toml",
            H,
            FULL,
            Cmd("python3 -c \"open('{state}/config/rules.toml','a').write('x')\""),
            DENY,
            STATE,
        ),
        row(
            "python joining HOME with the folder name",
            H,
            FULL,
            Cmd(
                "python3 -c \"import os; open(os.environ['HOME']+'/.config/suzent-state-test/config/mcp.json','w')\"",
            ),
            DENY,
            STATE,
        ),
        row(
            "node -e with expanduser-like tilde",
            H,
            FULL,
            Cmd(
                "node -e \"require('fs').writeFileSync(require('os').homedir()+'/.config/suzent-state-test/data/suzent.db','')\"",
            ),
            DENY,
            STATE,
        ),
        row(
            "sqlite3 on the database",
            H,
            FULL,
            Cmd("sqlite3 {state}/data/suzent.db \"insert into rules values('x')\""),
            DENY,
            STATE,
        ),
        row(
            "sqlite3 through the symlinked folder in a portable install",
            W,
            FULL,
            Cmd("sqlite3 .suzent/data/suzent.db .dump"),
            DENY,
            STATE,
        ),
        row(
            "python heredoc naming the state",
            H,
            FULL,
            Cmd("python3 <<'EOF'\nopen('/x/.config/suzent-state-test/config/rules.toml','w')\nEOF"),
            DENY,
            STATE,
        ),
        row(
            "perl -pi on config.toml",
            H,
            FULL,
            Cmd(
                "perl -pi -e 's/default/full_access/' ~/.config/suzent-state-test/config/config.toml",
            ),
            DENY,
            STATE,
        ),
        // Globs, substitutions, wrappers, nesting.
        row(
            "glob into the state",
            H,
            FULL,
            Cmd("cat ~/.config/suzent-state-te*/config/rules.toml"),
            DENY,
            STATE,
        ),
        row(
            "recursive delete of a folder holding the state",
            H,
            FULL,
            Cmd("rm -rf ~/.config"),
            DENY,
            STATE,
        ),
        row(
            "tar extracting into a folder holding the state",
            H,
            FULL,
            Cmd("tar -xf evil.tar -C ~/.config"),
            DENY,
            STATE,
        ),
        row(
            "a command substitution naming the state",
            H,
            FULL,
            Cmd("echo $(cat ~/.config/suzent-state-test/config/rules.toml)"),
            DENY,
            STATE,
        ),
        row(
            "sh -c naming the state",
            H,
            FULL,
            Cmd("sh -c 'echo x >> ~/.config/suzent-state-test/config/rules.toml'"),
            DENY,
            STATE,
        ),
        row(
            "find -exec on the state",
            H,
            FULL,
            Cmd("find ~/.config/suzent-state-test -name '*.toml' -exec sed -i s/a/b/ {} +"),
            DENY,
            STATE,
        ),
        row(
            "an option value naming the state",
            H,
            FULL,
            Cmd("dd if=evil of={state}/data/suzent.db"),
            DENY,
            STATE,
        ),
        row(
            "an --opt=path naming the state",
            H,
            FULL,
            Cmd("git --git-dir={state}/config status"),
            DENY,
            STATE,
        ),
        // Suzent's own CLI.
        row(
            "suzent rules add",
            H,
            FULL,
            Cmd("suzent rules add --destination global --tool '*' --behavior allow --all"),
            DENY,
            STATE,
        ),
        row(
            "suzent mcp trust by path",
            H,
            FULL,
            Cmd("/usr/local/bin/suzent mcp trust evil"),
            DENY,
            STATE,
        ),
        row(
            "suzent through env",
            H,
            FULL,
            Cmd("env SUZENT_LOG=debug suzent approvals resolve --chat x"),
            DENY,
            STATE,
        ),
        // SUZENT_HOME inside the workspace: naming it from the workspace.
        row(
            "portable: echo into rules.toml",
            W,
            FULL,
            Cmd("echo '[[rule]]' >> .suzent/config/rules.toml"),
            DENY,
            STATE,
        ),
        row(
            "portable: rm -rf of the workspace itself",
            W,
            FULL,
            Cmd("rm -rf ."),
            DENY,
            DANGEROUS,
        ),
        row(
            "portable: rm -rf * from the workspace",
            W,
            FULL,
            Cmd("rm -rf -- *"),
            DENY,
            DANGEROUS,
        ),
        row(
            "portable: mv the state away",
            W,
            FULL,
            Cmd("mv .suzent /tmp/x"),
            DENY,
            STATE,
        ),
        row(
            "portable: cd into it",
            W,
            FULL,
            Cmd("cd .suzent/config && cat config.toml"),
            DENY,
            STATE,
        ),
        row(
            "portable: through the link",
            W,
            FULL,
            Cmd("cat state/rules.toml"),
            DENY,
            STATE,
        ),
        row(
            "portable: unrelated commands still run",
            W,
            FULL,
            Cmd("cargo test && ls src"),
            ALLOW,
            "full_access",
        ),
        row(
            "portable: a skill's script runs",
            W,
            FULL,
            Cmd("bash .suzent/config/skills/demo/run.sh"),
            ALLOW,
            "full_access",
        ),
        row(
            "portable: a write into the shared folder runs",
            W,
            FULL,
            Cmd("echo x > .suzent/data/shared/out.txt"),
            ALLOW,
            "full_access",
        ),
        row(
            "home: unrelated command runs",
            H,
            FULL,
            Cmd("git status && cat src/main.rs"),
            ALLOW,
            "full_access",
        ),
        row(
            "home: default mode still denies",
            H,
            D,
            Cmd("cat ~/.config/suzent-state-test/config/rules.toml"),
            DENY,
            STATE,
        ),
        row(
            "home: auto mode still denies",
            H,
            AUTO,
            Cmd("ls ~/.config/suzent-state-test/data"),
            DENY,
            STATE,
        ),
    ]
}

#[test]
fn every_route_to_suzent_state_is_refused_in_every_mode() {
    let rows = rows();
    assert!(rows.len() >= 50, "{} rows", rows.len());
    let mut failures = Vec::new();
    for r in &rows {
        let (eval, _f) = evaluate(r);
        let d = &eval.decision;
        if d.behavior != r.behavior || d.reason_code != r.code {
            failures.push(format!(
                "{} [{}]: expected {} {}, got {} {} ({})",
                r.name, r.mode, r.behavior, r.code, d.behavior, d.reason_code, d.reason
            ));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}

#[test]
fn an_allow_rule_never_covers_suzent_state() {
    let r = row(
        "allow sqlite3",
        H,
        D,
        Cmd("sqlite3 {state}/data/suzent.db .tables"),
        DENY,
        STATE,
    );
    let (eval, _f) = evaluate(&r);
    assert_eq!(eval.decision.behavior, Behavior::Deny);
    assert_eq!(eval.decision.actions, vec![]);
}
