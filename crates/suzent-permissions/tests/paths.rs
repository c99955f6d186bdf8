//! Case 6 of shared/cases/permissions.md and the path policy: symlinks at every component,
//! dangling links, `..`, `~`, repeated slashes, case folding, and Windows path forms.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[allow(unused_imports)]
use Call::{Cmd, Other, Read, Write};
use common::*;
use std::path::Path;
use suzent_permissions::path_contains;
use suzent_permissions::paths_windows::{check_windows_path, parse_windows_path};

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
        case!("write through a link to the parent is outside", FULL, NONE, Write("escape/ws-sibling.txt") => DENY, "outside_workspace"),
        case!("dot dot out and back in is inside", AUTO, NONE, Write("../ws/src/back.rs") => ALLOW, "auto_workspace_write"),
        case!("repeated slashes are collapsed", AUTO, NONE, Write("src//deep///x.rs") => ALLOW, "auto_workspace_write"),
        case!("tilde read outside the roots is denied", D, NONE, Read("~/.bashrc") => DENY, "outside_workspace"),
        case!("tilde read is allowed when home is a root", D, NONE, Read("~/.bashrc"), home => ALLOW, "read_only"),
        case!("absolute write into the workspace is allowed in auto", AUTO, NONE, Write("{ws}/src/abs.rs") => ALLOW, "auto_workspace_write"),
        case!("absolute write outside via dot dot is denied", FULL, NONE, Write("{ws}/src/../../OUTSIDE/x") => DENY, "outside_workspace"),
        case!("uppercase git dir counts as protected", D, NONE, Write(".GIT/hooks/pre-commit") => ASK, "protected_path"),
    ]
}

#[test]
fn the_table_of_this_kind_has_at_least_18_rows() {
    let rows = case6_symlinks().len();
    assert!(rows >= 18, "{rows} rows");
}

#[test]
fn symlinks_and_sibling_prefixes_cannot_escape_the_workspace() {
    run_table(case6_symlinks());
}

#[test]
fn containment_on_a_case_insensitive_volume_folds_case_and_never_matches_a_sibling() {
    let root = Path::new("/Users/Ann/Project");
    assert!(path_contains(
        root,
        Path::new("/users/ann/PROJECT/src"),
        true
    ));
    assert!(!path_contains(
        root,
        Path::new("/users/ann/PROJECT/src"),
        false
    ));
    assert!(!path_contains(
        root,
        Path::new("/Users/Ann/Project-evil/x"),
        true
    ));
    assert!(!path_contains(root, Path::new("/Users/Ann"), true));
}

#[test]
fn a_case_sensitive_workspace_is_detected_as_such() {
    let f = fixture();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    // tmpfs and ext4 are case-sensitive: `WS` is not `ws` here.
    assert!(!policy.case_insensitive());
}

#[test]
fn windows_drive_unc_and_short_name_forms_are_checked_without_the_os() {
    let roots = vec![parse_windows_path(r"C:\Users\Ann\project")];
    assert!(check_windows_path(&roots, r"c:/users/ann/Project/src/x.rs").is_ok());
    assert!(check_windows_path(&roots, r"C:\Users\Ann\project-evil\x").is_err());
    assert!(check_windows_path(&roots, r"\\?\C:\Users\Ann\project\x").is_ok());
    assert!(check_windows_path(&roots, r"\\server\share\x").is_err());
    assert!(check_windows_path(&roots, r"C:\Users\Ann\PROJEC~1\x").is_err());
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
