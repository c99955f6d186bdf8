//! Mode defaults when no rule decides, and deny kept in every mode.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[allow(unused_imports)]
use Call::{Cmd, Other, Read, Write};
use common::*;

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
        case!("read-only command allowed in full access", FULL, NONE, Cmd("ls") => ALLOW, "full_access"),
        case!("write outside asks nothing in full access but is denied", FULL, NONE, Write("/etc/x") => DENY, "outside_workspace"),
        case!("git options ask in auto", AUTO, NONE, Cmd("git --exec-path=/tmp/evil status") => ASK, "code_execution_option"),
        case!("git options run in full access", FULL, NONE, Cmd("git -c core.pager=cat log") => ALLOW, "full_access"),
        case!("risky variables ask in auto", AUTO, NONE, Cmd("NODE_OPTIONS='--require /tmp/x.js' ls") => ASK, "risky_environment"),
        case!("harmless variables keep a read-only command read-only", AUTO, NONE, Cmd("LC_ALL=C ls") => ALLOW, "read_only_command"),
        case!("an empty script asks", D, NONE, Cmd("") => ASK, "shell_policy_ask"),
        case!("unparsed with a deny rule asks even in full access", FULL, CASE1, Cmd("eval \"rm -rf x\"") => ASK, "shell_unparsed"),
    ]
}

#[test]
fn the_table_of_this_kind_has_at_least_20_rows() {
    let rows = mode_defaults().len();
    assert!(rows >= 20, "{rows} rows");
}

#[test]
fn each_mode_applies_its_defaults_when_no_rule_decides() {
    run_table(mode_defaults());
}

#[test]
fn every_mode_keeps_a_deny_rule() {
    for mode in [D, AUTO, FULL] {
        for call in [Cmd("rm -rf x"), Cmd("ls; rm -rf x")] {
            let eval = eval_simple(mode, CASE1, call);
            assert_eq!(eval.decision.behavior, DENY, "{mode}");
        }
    }
}
