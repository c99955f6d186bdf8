//! Issue #12 item 2: every path argument of a command that creates, changes or deletes files is
//! checked like a redirect target. Outside the allowed roots (or unknowable): denied in full
//! access, asked in default and auto, never covered by a rule and never remembered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[allow(unused_imports)]
use Call::{Cmd, Other, Read, Write};
use common::*;
use pretty_assertions::assert_eq;

const OUT: &str = "write_outside_workspace";
const ALLOW_ALL_CMDS: &[&str] = &["allow run_command(*)"];
const ALLOW_RM: &[&str] = &[
    "allow run_command(rm *)",
    "allow run_command(cp *)",
    "allow run_command(mv *)",
    "allow run_command(tar *)",
    "allow run_command(git clone *)",
];

fn rows() -> Vec<Case> {
    vec![
        case!("rm of an absolute outside path asks", D, NONE, Cmd("rm -f /tmp/victim") => ASK, OUT),
        case!("rm outside is denied in full access", FULL, NONE, Cmd("rm -rf /tmp/victim") => DENY, "outside_workspace"),
        case!("rm outside asks in auto", AUTO, NONE, Cmd("rm /tmp/victim") => ASK, OUT),
        case!("an allow rule does not cover rm outside", D, ALLOW_RM, Cmd("rm -rf ../OUTSIDE") => ASK, OUT),
        case!("allow everything does not cover an outside operand", AUTO, ALLOW_ALL_CMDS, Cmd("touch ~/.bashrc") => ASK, OUT),
        case!("rm by tilde", FULL, NONE, Cmd("rm ~/notes.txt") => DENY, "outside_workspace"),
        case!("rm by $HOME", FULL, NONE, Cmd("rm $HOME/notes.txt") => DENY, "outside_workspace"),
        case!("rm by ${HOME}", FULL, NONE, Cmd("rm -r ${HOME}/proj") => DENY, "outside_workspace"),
        case!("rm of an unknown variable counts as outside", D, ALLOW_RM, Cmd("rm -rf $TARGET/build") => ASK, OUT),
        case!("rm of an unknown variable is denied in full access", FULL, NONE, Cmd("rm -rf \"$DIR\"") => DENY, "outside_workspace"),
        case!("a glob starting outside counts as outside", FULL, NONE, Cmd("rm -f /tmp/*.log") => DENY, "outside_workspace"),
        case!("a glob inside stays inside", FULL, NONE, Cmd("rm -f build/*.o") => ALLOW, "full_access"),
        case!("rm relative after cd out", FULL, NONE, Cmd("cd .. && rm -rf OUTSIDE") => DENY, "outside_workspace"),
        case!("rm relative after cd inside stays inside", FULL, NONE, Cmd("cd src && rm main.rs") => ALLOW, "full_access"),
        case!("rm through a symlinked folder", FULL, NONE, Cmd("rm outbox/victim.txt") => DENY, "outside_workspace"),
        case!("rm of a link to the parent", FULL, NONE, Cmd("rm -rf escape/OUTSIDE") => DENY, "outside_workspace"),
        case!("rmdir outside", FULL, NONE, Cmd("rmdir /tmp/d") => DENY, "outside_workspace"),
        case!("mv into outside", FULL, NONE, Cmd("mv src/main.rs /tmp/") => DENY, "outside_workspace"),
        case!("mv from outside (the source is deleted)", FULL, NONE, Cmd("mv ../OUTSIDE/victim.txt .") => DENY, "outside_workspace"),
        case!("mv -t outside", D, ALLOW_RM, Cmd("mv -t /tmp src/main.rs") => ASK, OUT),
        case!("cp into outside", FULL, NONE, Cmd("cp -r src ../project-evil/") => DENY, "outside_workspace"),
        case!("cp from outside into the workspace is fine", FULL, NONE, Cmd("cp /etc/hostname src/") => ALLOW, "full_access"),
        case!("cp --target-directory outside", FULL, NONE, Cmd("cp --target-directory=/tmp a") => DENY, "outside_workspace"),
        case!("ln creating a link outside", FULL, NONE, Cmd("ln -s src/main.rs /tmp/l") => DENY, "outside_workspace"),
        case!("touch outside", AUTO, NONE, Cmd("touch /tmp/flag") => ASK, OUT),
        case!("mkdir outside", FULL, NONE, Cmd("mkdir -p ~/evil") => DENY, "outside_workspace"),
        case!("chmod outside", FULL, NONE, Cmd("chmod 777 /tmp/x") => DENY, "outside_workspace"),
        case!("chown outside", FULL, NONE, Cmd("chown me /tmp/x") => DENY, "outside_workspace"),
        case!("truncate outside", FULL, NONE, Cmd("truncate -s 0 /var/log/syslog") => DENY, "outside_workspace"),
        case!("install outside", FULL, NONE, Cmd("install -m 755 tool /usr/local/bin/tool") => DENY, "outside_workspace"),
        case!("rsync outside", FULL, NONE, Cmd("rsync -a src/ /tmp/copy/") => DENY, "outside_workspace"),
        case!("rsync to a remote host is not a local write", FULL, NONE, Cmd("rsync -a src/ host:/srv/x") => ALLOW, "full_access"),
        case!("dd of= outside", FULL, NONE, Cmd("dd if=/dev/zero of=/tmp/big bs=1M count=1") => DENY, "outside_workspace"),
        case!("tar -x -C outside", FULL, NONE, Cmd("tar -xzf a.tgz -C /tmp") => DENY, "outside_workspace"),
        case!("tar -x into the workspace", FULL, NONE, Cmd("tar -xzf a.tgz -C sub") => ALLOW, "full_access"),
        case!("old-style tar creating an archive outside", FULL, NONE, Cmd("tar czf /tmp/a.tgz src") => DENY, "outside_workspace"),
        case!("unzip -d outside", FULL, NONE, Cmd("unzip -o a.zip -d ../OUTSIDE") => DENY, "outside_workspace"),
        case!("git clone into outside", D, ALLOW_RM, Cmd("git clone https://example.com/r.git /tmp/r") => ASK, OUT),
        case!("git clone into the workspace", D, ALLOW_RM, Cmd("git clone https://example.com/r.git vendor/r") => ALLOW, "rule_allow"),
        case!("sed -i outside", FULL, NONE, Cmd("sed -i s/a/b/ /etc/hosts") => DENY, "outside_workspace"),
        case!("perl -pi outside", FULL, NONE, Cmd("perl -pi -e 's/a/b/' ~/.profile") => DENY, "outside_workspace"),
        case!("sort -o outside", FULL, NONE, Cmd("sort -o /tmp/sorted src/main.rs") => DENY, "outside_workspace"),
        case!("curl -o outside", FULL, NONE, Cmd("curl -fsSL -o ~/.local/bin/x https://example.com/x") => DENY, "outside_workspace"),
        case!("wget -O outside", FULL, NONE, Cmd("wget -O /tmp/x https://example.com/x") => DENY, "outside_workspace"),
        case!("find -delete outside", FULL, NONE, Cmd("find /tmp/x -name '*.o' -delete") => DENY, "outside_workspace"),
        case!("find -exec rm outside", FULL, NONE, Cmd("find /tmp/x -exec rm {} +") => DENY, "outside_workspace"),
        case!("a wrapper does not hide the operand", FULL, NONE, Cmd("nice -n 5 timeout 9 rm -rf /tmp/x") => DENY, "outside_workspace"),
        case!("an operand inside a pipeline", FULL, NONE, Cmd("ls | xargs rm /tmp/x") => DENY, "outside_workspace"),
        case!("an operand inside sh -c", FULL, NONE, Cmd("sh -c 'rm -rf /tmp/x'") => DENY, "outside_workspace"),
        case!("an operand in an extra root is inside", FULL, NONE, Cmd("rm -f {base}/etc/secret/key") => ALLOW, "full_access"),
        case!("rm inside .git asks as protected", D, ALLOW_RM, Cmd("rm .git/hooks/pre-commit") => ASK, "protected_path"),
        case!("deny rules still decide first", D, CASE1, Cmd("rm -rf /tmp/x") => DENY, "rule_deny"),
    ]
}

#[test]
fn the_table_of_this_kind_has_at_least_40_rows() {
    assert!(rows().len() >= 40, "{} rows", rows().len());
}

#[test]
fn path_operands_outside_the_roots_are_hard_path_checks() {
    run_table(rows());
}

#[test]
fn an_outside_operand_offers_no_remembered_rule() {
    let eval = eval_simple(D, NONE, Cmd("cp build/app /usr/local/bin/app"));
    assert_eq!(eval.decision.reason_code, OUT);
    assert_eq!(
        action_ids(&eval),
        vec![ApprovalActionId::AllowOnce, ApprovalActionId::Reject]
    );
}
