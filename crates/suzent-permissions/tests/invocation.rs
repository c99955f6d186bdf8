//! Issue #12 item 3: deny and ask rules on a command name match the command however it is
//! invoked (by a path, escaped, through `command`, `exec`, `env`, `builtin`, `busybox`, ...).
//! Allow rules and known-safe names keep matching bare names only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[allow(unused_imports)]
use Call::{Cmd, Other, Read, Write};
use common::*;

const DENY_RM: &[&str] = &["allow run_command(*)", "deny run_command(rm *)"];
const ASK_CURL: &[&str] = &["allow run_command(*)", "ask run_command(curl *)"];
const ALLOW_RM_ONLY: &[&str] = &["allow run_command(rm *)"];

fn rows() -> Vec<Case> {
    vec![
        case!("/bin/rm", D, DENY_RM, Cmd("/bin/rm -rf x") => DENY, "rule_deny"),
        case!("/usr/bin/rm", FULL, DENY_RM, Cmd("/usr/bin/rm x") => DENY, "rule_deny"),
        case!("relative ../bin/rm", D, DENY_RM, Cmd("../bin/rm x") => DENY, "rule_deny"),
        case!("./rm", D, DENY_RM, Cmd("./rm x") => DENY, "rule_deny"),
        case!("escaped \\rm", D, DENY_RM, Cmd("\\rm -rf x") => DENY, "rule_deny"),
        case!("quoted 'rm'", D, DENY_RM, Cmd("'rm' -rf x") => DENY, "rule_deny"),
        case!("split quotes r\"m\"", D, DENY_RM, Cmd("r\"m\" -rf x") => DENY, "rule_deny"),
        case!("command rm", D, DENY_RM, Cmd("command rm x") => DENY, "rule_deny"),
        case!("command -p rm", D, DENY_RM, Cmd("command -p rm x") => DENY, "rule_deny"),
        case!("exec rm", D, DENY_RM, Cmd("exec rm x") => DENY, "rule_deny"),
        case!("exec -a name rm", D, DENY_RM, Cmd("exec -a foo rm x") => DENY, "rule_deny"),
        case!("env rm", D, DENY_RM, Cmd("env rm x") => DENY, "rule_deny"),
        case!("env with a path to rm", D, DENY_RM, Cmd("env -i /bin/rm x") => DENY, "rule_deny"),
        case!("builtin command rm", D, DENY_RM, Cmd("builtin command rm x") => DENY, "rule_deny"),
        case!("busybox rm", D, DENY_RM, Cmd("busybox rm -rf x") => DENY, "rule_deny"),
        case!("busybox by path", D, DENY_RM, Cmd("/bin/busybox rm x") => DENY, "rule_deny"),
        case!("toybox rm", D, DENY_RM, Cmd("toybox rm x") => DENY, "rule_deny"),
        case!("setsid rm", D, DENY_RM, Cmd("setsid rm x") => DENY, "rule_deny"),
        case!("ionice rm", D, DENY_RM, Cmd("ionice -c 3 rm x") => DENY, "rule_deny"),
        case!("xargs /bin/rm", D, DENY_RM, Cmd("ls | xargs /bin/rm") => DENY, "rule_deny"),
        case!("find -exec /bin/rm", D, DENY_RM, Cmd("find . -exec /bin/rm {} +") => DENY, "rule_deny"),
        case!("sh -c /bin/rm", D, DENY_RM, Cmd("sh -c '/bin/rm x'") => DENY, "rule_deny"),
        case!("ask rule by path", D, ASK_CURL, Cmd("/usr/bin/curl https://example.com") => ASK, "rule_ask"),
        case!("ask rule escaped", FULL, ASK_CURL, Cmd("\\curl https://example.com") => ASK, "rule_ask"),
        case!("ask rule through env and a path", AUTO, ASK_CURL, Cmd("env /usr/local/bin/curl x") => ASK, "rule_ask"),
        case!("ask rule through busybox", D, ASK_CURL, Cmd("busybox wget x && busybox curl y") => ASK, "rule_ask"),
        case!("an allow rule matches the bare name only", D, ALLOW_RM_ONLY, Cmd("/tmp/evil/rm x") => ASK, "shell_policy_ask"),
        case!("an allow rule matches through command", D, ALLOW_RM_ONLY, Cmd("command rm x") => ALLOW, "rule_allow"),
        case!("known-safe cat by path is not known-safe", D, NONE, Cmd("/bin/cat f") => ASK, "shell_policy_ask"),
        case!("a different program with the same prefix is not matched", D, DENY_RM, Cmd("rmate x") => ALLOW, "rule_allow"),
    ]
}

#[test]
fn the_table_of_this_kind_has_at_least_25_rows() {
    assert!(rows().len() >= 25, "{} rows", rows().len());
}

#[test]
fn deny_and_ask_rules_match_the_command_however_it_is_invoked() {
    run_table(rows());
}
