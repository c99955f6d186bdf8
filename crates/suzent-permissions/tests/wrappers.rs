//! Cases 3 and 4 of shared/cases/permissions.md: wrappers are unwrapped the same way for deny,
//! ask and allow rules, and only a bare command name can be known-safe.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[allow(unused_imports)]
use Call::{Cmd, Other, Read, Write};
use common::*;

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
        case!("doas is privilege escalation", FULL, NONE, Cmd("doas ls") => DENY, "dangerous_command"),
        case!("stdbuf wrapper is unwrapped for ask", D, CASE3, Cmd("stdbuf -oL gh api -X DELETE x") => ASK, "rule_ask"),
        case!("builtin wrapper is unwrapped for deny", D, CASE1, Cmd("builtin command rm -rf x") => DENY, "rule_deny"),
        case!("env -i wrapper is unwrapped for deny", D, CASE1, Cmd("env -i PATH=/bin rm -rf x") => DENY, "rule_deny"),
        case!("absolute env path is a wrapper too", D, CASE1, Cmd("/usr/bin/env rm -rf x") => DENY, "rule_deny"),
        case!("nested wrappers are all unwrapped", D, CASE1, Cmd("nohup nice -n 5 timeout 9 rm -rf x") => DENY, "rule_deny"),
        case!("find -execdir is unwrapped for deny", D, CASE1, Cmd("find . -execdir rm -rf {} \\;") => DENY, "rule_deny"),
        case!("find -ok is unwrapped for deny", D, CASE1, Cmd("find . -ok rm {} \\;") => DENY, "rule_deny"),
        case!("xargs with options is unwrapped for deny", D, CASE1, Cmd("ls | xargs -n1 -P4 rm -rf") => DENY, "rule_deny"),
        case!("xargs -I is unwrapped for ask", D, CASE3, Cmd("echo 1 | xargs -I % gh api -X DELETE x/%") => ASK, "rule_ask"),
        case!("env -S splits a string the analyser cannot follow", D, NONE, Cmd("env -S 'rm -rf x'") => ASK, "shell_unparsed"),
        case!("an assignment before the command is seen through for deny", D, CASE1, Cmd("FOO=bar rm -rf x") => DENY, "rule_deny"),
        case!("allow rules are unwrapped too", D, CASE1, Cmd("nice git status") => ALLOW, "rule_allow"),
        case!("sh -c with an allowed command still asks as nested script", D, CASE1, Cmd("sh -c 'git status'") => ASK, "compound_command"),
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
        case!("read-only commands joined are allowed (issue 12 item 9)", D, NONE, Cmd("ls && pwd") => ALLOW, "read_only_command"),
        case!("a read-only command joined with another asks", D, NONE, Cmd("ls && make") => ASK, "compound_command"),
        case!("home-relative cat is not cat", D, NONE, Cmd("~/bin/cat f") => ASK, "shell_policy_ask"),
        case!("quoted command name is still the bare name", D, NONE, Cmd("'ls' -la") => ALLOW, "read_only_command"),
        case!("sed with an e command is not read-only", D, NONE, Cmd("sed -n '1e id' f") => ASK, "shell_policy_ask"),
        case!("find -fprint writes", D, NONE, Cmd("find . -fprint out.txt") => ASK, "shell_policy_ask"),
        case!("npm is never known-safe", AUTO, NONE, Cmd("npm test") => ASK, "shell_policy_ask"),
        case!("make is never known-safe", AUTO, NONE, Cmd("make") => ASK, "shell_policy_ask"),
    ]
}

#[test]
fn the_table_of_this_kind_has_at_least_45_rows() {
    let rows = case3_wrappers().len() + case4_bare_names().len();
    assert!(rows >= 45, "{rows} rows");
}

#[test]
fn wrappers_are_unwrapped_for_deny_ask_and_allow_rules() {
    run_table(case3_wrappers());
}

#[test]
fn a_known_safe_command_is_only_a_bare_name() {
    run_table(case4_bare_names());
}
