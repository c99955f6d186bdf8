//! read_file, write_file and edit_file on real files (shared/cases/tools.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Env;
use pretty_assertions::assert_eq;
use serde_json::json;
use suzent_tools::{ToolError, default_registry};

fn failed_message(r: Result<String, ToolError>) -> String {
    match r {
        Err(ToolError::Failed(m)) | Err(ToolError::InvalidArguments(m)) => m,
        other => panic!("expected an error, got {other:?}"),
    }
}

// Case 1: CRLF and BOM.

#[tokio::test]
async fn an_lf_old_string_matches_a_crlf_file_and_the_new_text_gets_crlf() {
    for replace_all in [false, true] {
        let env = Env::new();
        let file = env.ws().join("crlf.txt");
        std::fs::write(&file, b"alpha\r\nbeta\r\ngamma").unwrap();
        let out = env
            .call(
                "edit_file",
                json!({"file_path": "crlf.txt", "old_string": "alpha\nbeta",
                       "new_string": "ALPHA\nBETA", "replace_all": replace_all}),
            )
            .await
            .unwrap();
        assert!(out.contains("1 replacement"), "{out}");
        assert_eq!(std::fs::read(&file).unwrap(), b"ALPHA\r\nBETA\r\ngamma");
    }
}

#[tokio::test]
async fn a_utf8_bom_survives_an_edit() {
    let env = Env::new();
    let file = env.ws().join("bom.txt");
    std::fs::write(&file, b"\xEF\xBB\xBFalpha\r\nbeta\r\ngamma").unwrap();
    env.call(
        "edit_file",
        json!({"file_path": "/workspace/bom.txt", "old_string": "alpha\nbeta", "new_string": "ALPHA\nBETA"}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"\xEF\xBB\xBFALPHA\r\nBETA\r\ngamma"
    );
}

// Case 2: non-unique match.

#[tokio::test]
async fn a_non_unique_match_without_replace_all_names_the_count_and_leaves_the_file() {
    let env = Env::new();
    let file = env.ws().join("dup.txt");
    std::fs::write(&file, "x=1\ny=2\nx=1\n").unwrap();
    let msg = failed_message(
        env.call(
            "edit_file",
            json!({"file_path": "dup.txt", "old_string": "x=1", "new_string": "x=3"}),
        )
        .await,
    );
    assert!(msg.contains("found 2 occurrences"), "{msg}");
    assert!(msg.contains("replace_all"), "{msg}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x=1\ny=2\nx=1\n");
}

#[tokio::test]
async fn replace_all_replaces_every_occurrence() {
    let env = Env::new();
    let file = env.ws().join("dup.txt");
    std::fs::write(&file, "x=1\ny=2\nx=1\n").unwrap();
    let out = env
        .call(
            "edit_file",
            json!({"file_path": "dup.txt", "old_string": "x=1", "new_string": "x=3", "replace_all": true}),
        )
        .await
        .unwrap();
    assert!(out.contains("2 replacements"), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x=3\ny=2\nx=3\n");
}

// Case 3: empty old_string, and the other refusals.

#[tokio::test]
async fn an_empty_old_string_is_refused_and_the_file_is_unchanged() {
    let env = Env::new();
    let file = env.ws().join("a.txt");
    std::fs::write(&file, "content\n").unwrap();
    let r = env
        .call(
            "edit_file",
            json!({"file_path": "a.txt", "old_string": "", "new_string": "new"}),
        )
        .await;
    assert!(matches!(r, Err(ToolError::InvalidArguments(_))), "{r:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "content\n");
}

#[tokio::test]
async fn identical_old_and_new_strings_are_refused() {
    let env = Env::new();
    std::fs::write(env.ws().join("a.txt"), "same\n").unwrap();
    let msg = failed_message(
        env.call(
            "edit_file",
            json!({"file_path": "a.txt", "old_string": "same", "new_string": "same"}),
        )
        .await,
    );
    assert!(msg.contains("the same"), "{msg}");
}

#[tokio::test]
async fn a_missing_old_string_is_an_error_that_says_so() {
    let env = Env::new();
    std::fs::write(env.ws().join("a.txt"), "hello\n").unwrap();
    let msg = failed_message(
        env.call(
            "edit_file",
            json!({"file_path": "a.txt", "old_string": "bye", "new_string": "x"}),
        )
        .await,
    );
    assert!(msg.contains("not found"), "{msg}");
}

#[tokio::test]
async fn an_edit_is_refused_when_the_file_changed_since_it_was_read() {
    let env = Env::new();
    let file = env.ws().join("a.txt");
    std::fs::write(&file, "first\n").unwrap();
    env.call("read_file", json!({"file_path": "a.txt"}))
        .await
        .unwrap();
    std::fs::write(&file, "first\nsecond, written by someone else\n").unwrap();
    let msg = failed_message(
        env.call(
            "edit_file",
            json!({"file_path": "a.txt", "old_string": "first", "new_string": "1"}),
        )
        .await,
    );
    assert!(msg.contains("changed on disk"), "{msg}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "first\nsecond, written by someone else\n"
    );
    // After reading it again the edit goes through, and consecutive edits stay allowed.
    env.call("read_file", json!({"file_path": "a.txt"}))
        .await
        .unwrap();
    env.call(
        "edit_file",
        json!({"file_path": "a.txt", "old_string": "first", "new_string": "1"}),
    )
    .await
    .unwrap();
    env.call(
        "edit_file",
        json!({"file_path": "a.txt", "old_string": "second", "new_string": "2"}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "1\n2, written by someone else\n"
    );
}

// Case 4: write_file.

#[tokio::test]
async fn write_file_creates_missing_parent_directories() {
    let env = Env::new();
    let out = env
        .call(
            "write_file",
            json!({"file_path": "deep/er/new.txt", "content": "hi\n"}),
        )
        .await
        .unwrap();
    assert_eq!(out, "created /workspace/deep/er/new.txt (3 bytes written)");
    assert_eq!(
        std::fs::read_to_string(env.ws().join("deep/er/new.txt")).unwrap(),
        "hi\n"
    );
    let out = env
        .call(
            "write_file",
            json!({"file_path": "/workspace/deep/er/new.txt", "content": "bye\n"}),
        )
        .await
        .unwrap();
    assert!(out.starts_with("overwrote"), "{out}");
}

#[tokio::test]
async fn write_file_leaves_no_temp_file_behind_and_refuses_a_directory() {
    let env = Env::new();
    env.call("write_file", json!({"file_path": "a.txt", "content": "x"}))
        .await
        .unwrap();
    let names: Vec<_> = std::fs::read_dir(env.ws())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["a.txt"]);
    std::fs::create_dir(env.ws().join("dir")).unwrap();
    let msg = failed_message(
        env.call("write_file", json!({"file_path": "dir", "content": "x"}))
            .await,
    );
    assert!(msg.contains("is a directory"), "{msg}");
}

#[cfg(unix)]
#[tokio::test]
async fn overwriting_keeps_the_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let file = env.ws().join("run.sh");
    std::fs::write(&file, "echo a\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.call(
        "edit_file",
        json!({"file_path": "run.sh", "old_string": "a", "new_string": "b"}),
    )
    .await
    .unwrap();
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
}

// Case 5: read_file.

#[tokio::test]
async fn read_file_shows_a_header_and_numbered_lines() {
    let env = Env::new();
    std::fs::write(env.ws().join("f.txt"), "one\ntwo\nthree\n").unwrap();
    let out = env
        .call("read_file", json!({"file_path": "f.txt"}))
        .await
        .unwrap();
    assert_eq!(
        out,
        "[lines 1-3 of 3] /workspace/f.txt\n     1\tone\n     2\ttwo\n     3\tthree"
    );
    let out = env
        .call(
            "read_file",
            json!({"file_path": "f.txt", "offset": 1, "limit": 1}),
        )
        .await
        .unwrap();
    assert!(
        out.starts_with("[lines 2-2 of 3] /workspace/f.txt\n     2\ttwo"),
        "{out}"
    );
}

#[tokio::test]
async fn read_file_on_a_binary_file_is_a_clear_error_without_its_bytes() {
    let env = Env::new();
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend([0xffu8; 100]);
    std::fs::write(env.ws().join("firmware.bin"), &bytes).unwrap();
    let msg = failed_message(
        env.call("read_file", json!({"file_path": "firmware.bin"}))
            .await,
    );
    assert_eq!(
        msg,
        format!(
            "binary file /workspace/firmware.bin ({} bytes); reading it as text is not supported yet",
            bytes.len()
        )
    );
    // Invalid UTF-8 without NUL bytes is binary too.
    std::fs::write(env.ws().join("latin1.txt"), b"caf\xe9\n").unwrap();
    let msg = failed_message(
        env.call("read_file", json!({"file_path": "latin1.txt"}))
            .await,
    );
    assert!(msg.starts_with("binary file"), "{msg}");
}

#[tokio::test]
async fn read_file_past_the_end_gives_an_empty_range_with_the_line_count() {
    let env = Env::new();
    std::fs::write(env.ws().join("f.txt"), "a\nb\nc\n").unwrap();
    let out = env
        .call(
            "read_file",
            json!({"file_path": "f.txt", "offset": 500, "limit": 10}),
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        "[no lines: offset 500 is past the end; the file has 3 lines] /workspace/f.txt"
    );
}

#[tokio::test]
async fn read_file_refuses_files_over_the_size_limit() {
    let env = Env::new();
    let file = std::fs::File::create(env.ws().join("big.log")).unwrap();
    file.set_len(11 * 1024 * 1024).unwrap();
    let msg = failed_message(env.call("read_file", json!({"file_path": "big.log"})).await);
    assert!(msg.contains("too large"), "{msg}");
}

#[tokio::test]
async fn read_file_on_a_missing_file_names_it() {
    let env = Env::new();
    let msg = failed_message(
        env.call("read_file", json!({"file_path": "nope.txt"}))
            .await,
    );
    assert!(msg.contains("/workspace/nope.txt"), "{msg}");
}

#[tokio::test]
async fn virtual_roots_map_to_the_shared_and_persistence_dirs() {
    let env = Env::new();
    env.call(
        "write_file",
        json!({"file_path": "/shared/s.txt", "content": "shared"}),
    )
    .await
    .unwrap();
    env.call(
        "write_file",
        json!({"file_path": "/persistence/p.txt", "content": "private"}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(env.ctx.shared_dir.join("s.txt")).unwrap(),
        "shared"
    );
    assert_eq!(
        std::fs::read_to_string(env.ctx.persistence_dir.join("p.txt")).unwrap(),
        "private"
    );
}

// Path checks at run time.

#[tokio::test]
async fn paths_outside_the_roots_are_refused_at_run_time() {
    let env = Env::new();
    std::fs::write(env.outside.join("secret.txt"), "secret").unwrap();
    let outside = env.outside.join("secret.txt").display().to_string();
    let msg = failed_message(env.call("read_file", json!({"file_path": outside})).await);
    assert!(msg.contains("refused"), "{msg}");
    let msg = failed_message(
        env.call(
            "read_file",
            json!({"file_path": "/workspace/../outside/secret.txt"}),
        )
        .await,
    );
    assert!(msg.contains("refused"), "{msg}");
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_swapped_to_point_outside_is_refused_at_run_time() {
    let env = Env::new();
    std::fs::write(env.outside.join("secret.txt"), "secret").unwrap();
    std::fs::write(env.ws().join("real.txt"), "fine").unwrap();
    let link = env.ws().join("link.txt");
    std::os::unix::fs::symlink(env.ws().join("real.txt"), &link).unwrap();
    let registry = default_registry();
    let read = registry.get("read_file").unwrap();
    let args = json!({"file_path": "link.txt"});
    // The engine was asked about the link, which pointed inside...
    assert!(read.access(&args, &env.ctx).is_ok());
    // ...then it was swapped before the call ran.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(env.outside.join("secret.txt"), &link).unwrap();
    let msg = failed_message(read.call(args, &env.ctx).await);
    assert!(msg.contains("refused") && msg.contains("link.txt"), "{msg}");
    assert!(!msg.contains("secret\n"));
    // Writing through a dangling link that points outside is refused too.
    let dangling = env.ws().join("dangling.txt");
    std::os::unix::fs::symlink(env.outside.join("new.txt"), &dangling).unwrap();
    let msg = failed_message(
        env.call(
            "write_file",
            json!({"file_path": "dangling.txt", "content": "x"}),
        )
        .await,
    );
    assert!(msg.contains("refused"), "{msg}");
    assert!(!env.outside.join("new.txt").exists());
    // And a symlinked directory leading out.
    std::os::unix::fs::symlink(&env.outside, env.ws().join("out")).unwrap();
    let msg = failed_message(
        env.call(
            "edit_file",
            json!({"file_path": "out/secret.txt", "old_string": "secret", "new_string": "x"}),
        )
        .await,
    );
    assert!(msg.contains("refused"), "{msg}");
    assert_eq!(
        std::fs::read_to_string(env.outside.join("secret.txt")).unwrap(),
        "secret"
    );
}

#[tokio::test]
async fn unknown_and_mistyped_arguments_name_the_field() {
    let env = Env::new();
    let r = env
        .call("read_file", json!({"file_path": "a", "offest": 3}))
        .await;
    let Err(ToolError::InvalidArguments(m)) = r else {
        panic!("{r:?}")
    };
    assert!(m.contains("offest"), "{m}");
    let r = env
        .call("read_file", json!({"file_path": "a", "limit": "ten"}))
        .await;
    let Err(ToolError::InvalidArguments(m)) = r else {
        panic!("{r:?}")
    };
    assert!(m.contains("limit"), "{m}");
    let r = env.call("write_file", json!({"content": "x"})).await;
    let Err(ToolError::InvalidArguments(m)) = r else {
        panic!("{r:?}")
    };
    assert!(m.contains("file_path"), "{m}");
}

#[tokio::test]
async fn access_reports_absolute_paths_for_the_engine() {
    use suzent_permissions::ToolAccess;
    let env = Env::new();
    let registry = default_registry();
    let access = registry
        .get("write_file")
        .unwrap()
        .access(&json!({"file_path": "src/a.rs", "content": ""}), &env.ctx)
        .unwrap();
    assert_eq!(access, ToolAccess::Write(vec![env.ws().join("src/a.rs")]));
    let access = registry
        .get("ReadFileTool")
        .unwrap()
        .access(&json!({"file_path": "/persistence/notes.md"}), &env.ctx)
        .unwrap();
    assert_eq!(
        access,
        ToolAccess::Read(vec![env.ctx.persistence_dir.join("notes.md")])
    );
}
