//! Built-in dangerous commands (denied in every mode), options that run hidden code and variables
//! that change what runs (asked, never covered by allow rules).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[allow(unused_imports)]
use Call::{Cmd, Other, Read, Write};
use common::*;

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
        case!("rm -rf home with a trailing slash is denied", FULL, NONE, Cmd("rm -rf ~/") => DENY, "dangerous_command"),
        case!("rm -fr usr is denied", FULL, NONE, Cmd("rm -fr /usr/") => DENY, "dangerous_command"),
        case!("rm --recursive home dir is denied", FULL, NONE, Cmd("rm --recursive --force /home") => DENY, "dangerous_command"),
        case!("rm -rf star in the workspace root is denied", FULL, NONE, Cmd("rm -rf *") => DENY, "dangerous_command"),
        case!("rm -rf of the workspace through dot dot is denied", FULL, NONE, Cmd("rm -rf ../ws") => DENY, "dangerous_command"),
        case!("rm -rf after double dash is denied", FULL, NONE, Cmd("rm -rf -- /") => DENY, "dangerous_command"),
        case!("find / -delete is denied", FULL, NONE, Cmd("find / -name '*.log' -delete") => DENY, "dangerous_command"),
        case!("chmod -R on etc is denied", FULL, NONE, Cmd("chmod -R 777 /etc") => DENY, "dangerous_command"),
        case!("pkexec is denied", FULL, NONE, Cmd("pkexec bash") => DENY, "dangerous_command"),
        case!("su is denied", FULL, NONE, Cmd("su -c id root") => DENY, "dangerous_command"),
        case!("poweroff via systemctl is denied", FULL, NONE, Cmd("systemctl poweroff") => DENY, "dangerous_command"),
        case!("wipefs is denied", FULL, NONE, Cmd("wipefs -a /dev/sdb") => DENY, "dangerous_command"),
        case!("sudo inside xargs is denied", FULL, NONE, Cmd("echo x | xargs sudo rm") => DENY, "dangerous_command"),
        case!("git -c asks", D, NONE, Cmd("git -c alias.st='!sh -c id' st") => ASK, "code_execution_option"),
        case!("git --config-env asks", D, NONE, Cmd("git --config-env=core.pager=EVIL log") => ASK, "code_execution_option"),
        case!("git -p pager asks", D, NONE, Cmd("git -p log") => ASK, "code_execution_option"),
        case!("git diff --ext-diff asks", D, CASE1, Cmd("git diff --ext-diff") => ASK, "code_execution_option"),
        case!("git fetch --upload-pack asks", D, CASE1, Cmd("git fetch --upload-pack='touch /tmp/pwn' origin") => ASK, "code_execution_option"),
        case!("git rebase --exec asks", D, CASE1, Cmd("git rebase --exec 'make test' main") => ASK, "code_execution_option"),
        case!("git config asks even when git is allowed", D, CASE1, Cmd("git config core.hooksPath /tmp/h") => ASK, "code_execution_option"),
        case!("GIT_SSH_COMMAND asks even when git is allowed", D, CASE1, Cmd("GIT_SSH_COMMAND='sh -c id' git fetch") => ASK, "risky_environment"),
        case!("PYTHONPATH asks", D, &["allow run_command(python3 *)"], Cmd("PYTHONPATH=/tmp/evil python3 -m pytest") => ASK, "risky_environment"),
        case!("env LD_PRELOAD asks", D, &["allow run_command(ls *)"], Cmd("env LD_PRELOAD=/tmp/x.so ls") => ASK, "risky_environment"),
        case!("export of a risky variable asks", D, &["allow run_command(export *)"], Cmd("export BASH_ENV=/tmp/x") => ASK, "risky_environment"),
        case!("NODE_ENV stays harmless", D, &["allow run_command(npm run *)"], Cmd("NODE_ENV=production npm run build") => ALLOW, "rule_allow"),
    ]
}

#[test]
fn the_table_of_this_kind_has_at_least_37_rows() {
    let rows = dangerous_commands().len();
    assert!(rows >= 37, "{rows} rows");
}

#[test]
fn dangerous_commands_are_denied_and_hidden_code_asks() {
    run_table(dangerous_commands());
}
