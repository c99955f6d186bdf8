//! Case 1 of shared/cases/permissions.md and its relatives: every command of a script, in every
//! nesting, is found and checked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[allow(unused_imports)]
use Call::{Cmd, Other, Read, Write};
use common::*;

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
        case!("two allowed commands are allowed (issue 12 item 9)", D, CASE1, Cmd("git status && git log") => ALLOW, "rule_allow"),
        case!("git prefix does not match gitk", D, CASE1, Cmd("gitk --all") => ASK, "shell_policy_ask"),
        case!("process substitution hides rm", D, CASE1, Cmd("diff <(rm -rf x) y") => DENY, "rule_deny"),
        case!("here-doc substitution hides rm", D, CASE1, Cmd("cat <<EOF\n$(rm -rf x)\nEOF") => DENY, "rule_deny"),
        case!("while loop body hides rm", D, CASE1, Cmd("while true; do rm -rf x; done") => DENY, "rule_deny"),
        case!("for loop body hides rm", D, CASE1, Cmd("for f in a b; do rm -rf $f; done") => DENY, "rule_deny"),
        case!("case arm hides rm", D, CASE1, Cmd("case x in x) rm -rf y;; esac") => DENY, "rule_deny"),
        case!("function body hides rm", D, CASE1, Cmd("f() { rm -rf x; }; f") => DENY, "rule_deny"),
        case!("substitution in an assignment hides rm", D, CASE1, Cmd("X=$(rm -rf x) git status") => DENY, "rule_deny"),
        case!("substitution in export hides rm", D, CASE1, Cmd("export A=$(rm -rf x)") => DENY, "rule_deny"),
        case!("nested sh -c in bash -c hides rm", D, CASE1, Cmd("bash -c \"sh -c 'rm -rf x'\"") => DENY, "rule_deny"),
        case!("negated pipeline hides rm", D, CASE1, Cmd("! rm -rf x") => DENY, "rule_deny"),
        case!("substitution in a redirect target hides rm", D, CASE1, Cmd("echo hi > \"$(rm -rf x)\"") => DENY, "rule_deny"),
        case!("crlf line ending splits commands", D, CASE1, Cmd("git status\r\nrm -rf x") => DENY, "rule_deny"),
        case!("a comment does not hide a command after a newline", D, CASE1, Cmd("git status # fine\nrm -rf x") => DENY, "rule_deny"),
        case!("arithmetic substitution is checked", D, CASE1, Cmd("echo $(( $(rm -rf x) ))") => DENY, "rule_deny"),
        case!("a pipeline of read-only commands is allowed (issue 12 item 9)", D, NONE, Cmd("cat src/main.rs | grep main") => ALLOW, "read_only_command"),
        case!("compound allowed in full access", FULL, NONE, Cmd("ls && pwd") => ALLOW, "full_access"),
    ]
}

#[test]
fn the_table_of_this_kind_has_at_least_36_rows() {
    let rows = case1_compound_commands().len();
    assert!(rows >= 36, "{rows} rows");
}

#[test]
fn every_segment_of_a_compound_command_is_checked() {
    run_table(case1_compound_commands());
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
