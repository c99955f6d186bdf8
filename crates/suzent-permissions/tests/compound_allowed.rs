//! Issue #12 item 9: a compound command whose every part is allowed (by a rule or as known
//! read-only) is allowed; any part that asks or is denied still decides.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[allow(unused_imports)]
use Call::{Cmd, Other, Read, Write};
use common::*;

const GIT_ECHO: &[&str] = &["allow run_command(git status)", "allow run_command(echo *)"];
const GIT_CARGO: &[&str] = &[
    "allow run_command(git *)",
    "allow run_command(cargo test *)",
];
const WITH_DENY: &[&str] = &["allow run_command(git *)", "deny run_command(rm *)"];
const WITH_ASK: &[&str] = &["allow run_command(git *)", "ask run_command(git push *)"];
const REDIRECT_OK: &[&str] = &["allow run_command(git *)", "allow *({ws}/out/**)"];

fn rows() -> Vec<Case> {
    vec![
        case!("both parts allowed by rules", D, GIT_ECHO, Cmd("git status && echo ok") => ALLOW, "rule_allow"),
        case!("a rule and a read-only command", D, GIT_CARGO, Cmd("git diff | grep foo") => ALLOW, "rule_allow"),
        case!("three parts with ; and ||", D, GIT_CARGO, Cmd("git fetch; cargo test -p core || echo failed") => ALLOW, "rule_allow"),
        case!("cd then an allowed command", D, GIT_CARGO, Cmd("cd sub && cargo test") => ALLOW, "rule_allow"),
        case!("only read-only commands", D, NONE, Cmd("ls && pwd") => ALLOW, "read_only_command"),
        case!("a read-only pipeline", AUTO, NONE, Cmd("cat src/main.rs | grep fn | wc -l") => ALLOW, "read_only_command"),
        case!("newline-separated allowed commands", D, GIT_CARGO, Cmd("git status\ncargo test") => ALLOW, "rule_allow"),
        case!("a substitution of an allowed command", D, GIT_CARGO, Cmd("echo $(git rev-parse HEAD)") => ALLOW, "rule_allow"),
        case!("one part not allowed asks", D, GIT_ECHO, Cmd("git status && make") => ASK, "compound_command"),
        case!("a rule for git status does not cover git push", D, GIT_ECHO, Cmd("git status && git push") => ASK, "compound_command"),
        case!("deny on any part still denies", D, WITH_DENY, Cmd("git status && rm -rf x") => DENY, "rule_deny"),
        case!("ask on any part still asks", D, WITH_ASK, Cmd("git status && git push origin main") => ASK, "rule_ask"),
        case!("a write redirect needs a path rule", D, GIT_CARGO, Cmd("git log > log.txt && echo done") => ASK, "compound_command"),
        case!("a write redirect covered by a path rule", D, REDIRECT_OK, Cmd("git log > out/log.txt && git status") => ALLOW, "rule_allow"),
        case!("sh -c of an allowed command still asks (sh is not allowed)", D, GIT_CARGO, Cmd("sh -c 'git status'") => ASK, "compound_command"),
        case!("a control structure of allowed commands", D, GIT_CARGO, Cmd("for b in a c; do git log $b; done") => ALLOW, "rule_allow"),
        case!("a function definition runs nothing known", D, GIT_CARGO, Cmd("f() { git status; }; f") => ASK, "compound_command"),
        case!("git -c in a compound still asks", D, GIT_CARGO, Cmd("git -c core.pager=sh status && echo") => ASK, "code_execution_option"),
        case!("a risky variable in a compound still asks", D, GIT_CARGO, Cmd("PATH=/tmp git status && ls") => ASK, "risky_environment"),
        case!("unparsed scripts still ask", D, GIT_CARGO, Cmd("git status && echo \"unbalanced") => ASK, "shell_unparsed"),
        case!("auto mode allows an allowed compound too", AUTO, GIT_CARGO, Cmd("git add -A && git commit -m wip") => ALLOW, "rule_allow"),
    ]
}

#[test]
fn the_table_of_this_kind_has_at_least_20_rows() {
    assert!(rows().len() >= 20, "{} rows", rows().len());
}

#[test]
fn a_compound_command_whose_every_part_is_allowed_is_allowed() {
    run_table(rows());
}
