//! Case 2 of shared/cases/permissions.md and its relatives: redirect targets and `tee` files are
//! writes under the path policy, also after `cd` in the same script.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[allow(unused_imports)]
use Call::{Cmd, Other, Read, Write};
use common::*;

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
        case!("redirect after cd into a symlink escapes", FULL, NONE, Cmd("cd outbox && echo x > escaped.txt") => DENY, "outside_workspace"),
        case!("redirect after cd .. is outside", FULL, NONE, Cmd("cd .. ; echo x > outside.txt") => DENY, "outside_workspace"),
        case!("redirect after cd into a linked parent is outside", FULL, NONE, Cmd("cd escape && echo x > pwn.txt") => DENY, "outside_workspace"),
        case!("redirect after cd into a subdirectory stays inside", FULL, NONE, Cmd("cd sub && echo x > ok.txt") => ALLOW, "full_access"),
        case!("redirect after cd into git dir is protected", D, NONE, Cmd("cd .git/hooks; echo x > pre-commit") => ASK, "protected_path"),
        case!("redirect after cd home is outside", FULL, NONE, Cmd("cd; echo x > .bashrc") => DENY, "outside_workspace"),
        case!("cd to a computed directory is unparsed", D, NONE, Cmd("cd \"$DIR\" && echo x > f") => ASK, "shell_unparsed"),
        case!("cd - is unparsed", D, NONE, Cmd("cd - && echo x > f") => ASK, "shell_unparsed"),
        case!("tee to an outside file is denied", FULL, NONE, Cmd("echo key | tee ~/.ssh/authorized_keys") => DENY, "outside_workspace"),
        case!("tee -a into git config asks", D, NONE, Cmd("echo x | tee -a .git/config") => ASK, "protected_path"),
        case!("tee to dev null is not a write", FULL, NONE, Cmd("echo x | tee /dev/null") => ALLOW, "full_access"),
        case!("append redirect outside is denied", FULL, NONE, Cmd("echo x >> /etc/profile") => DENY, "outside_workspace"),
        case!("clobber redirect outside is denied", FULL, NONE, Cmd("echo x >| /tmp/../etc/x") => DENY, "outside_workspace"),
        case!("both-streams redirect outside is denied", FULL, NONE, Cmd("make &> ~/log.txt") => DENY, "outside_workspace"),
        case!("read-write redirect with a descriptor is not understood", D, NONE, Cmd("cat 1<> /etc/hosts") => ASK, "shell_unparsed"),
        case!("redirect with repeated slashes is resolved", FULL, NONE, Cmd("echo x > .//.git//hooks//post-merge") => ALLOW, "full_access"),
        case!("redirect through the dangling link is outside", FULL, NONE, Cmd("echo x > draft.txt") => DENY, "outside_workspace"),
        case!("redirect into the extra root is allowed in full access", FULL, NONE, Cmd("echo x > {base}/etc/new") => ALLOW, "full_access"),
    ]
}

#[test]
fn the_table_of_this_kind_has_at_least_28_rows() {
    let rows = case2_redirects().len();
    assert!(rows >= 28, "{rows} rows");
}

#[test]
fn redirects_are_writes_checked_against_rules_and_paths() {
    run_table(case2_redirects());
}
