//! glob_search and grep_search on real directory trees.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Env;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::time::{Duration, SystemTime};
use suzent_tools::ToolError;

fn tree(env: &Env) {
    let ws = env.ws();
    std::fs::create_dir_all(ws.join("src/nested")).unwrap();
    std::fs::create_dir_all(ws.join("target/debug")).unwrap();
    std::fs::create_dir_all(ws.join(".hidden")).unwrap();
    std::fs::write(ws.join(".gitignore"), "target/\n*.log\n").unwrap();
    std::fs::write(
        ws.join("src/main.rs"),
        "fn main() {\n    println!(\"needle\");\n}\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("src/nested/lib.rs"),
        "// Needle in lib\npub fn f() {}\n",
    )
    .unwrap();
    std::fs::write(ws.join("src/notes.txt"), "needle in text\n").unwrap();
    std::fs::write(ws.join("target/debug/out.rs"), "needle ignored\n").unwrap();
    std::fs::write(ws.join("app.log"), "needle ignored log\n").unwrap();
    std::fs::write(ws.join(".hidden/h.rs"), "needle hidden\n").unwrap();
}

fn set_mtime(path: &std::path::Path, secs_ago: u64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
        .unwrap();
}

#[tokio::test]
async fn glob_respects_gitignore_and_hidden_files_and_lists_newest_first() {
    let env = Env::new();
    tree(&env);
    set_mtime(&env.ws().join("src/main.rs"), 100);
    set_mtime(&env.ws().join("src/nested/lib.rs"), 10);
    let out = env
        .call("glob_search", json!({"pattern": "**/*.rs"}))
        .await
        .unwrap();
    assert_eq!(out, "src/nested/lib.rs\nsrc/main.rs");
}

#[tokio::test]
async fn glob_star_does_not_cross_directories_and_paths_are_relative_to_the_root() {
    let env = Env::new();
    tree(&env);
    let out = env
        .call("glob_search", json!({"pattern": "*.rs", "path": "src"}))
        .await
        .unwrap();
    assert_eq!(out, "main.rs");
    let out = env
        .call("glob_search", json!({"pattern": "*.md"}))
        .await
        .unwrap();
    assert!(out.starts_with("no files match"), "{out}");
}

#[tokio::test]
async fn glob_caps_its_results_and_says_so() {
    let env = Env::new();
    for i in 0..250 {
        std::fs::write(env.ws().join(format!("f{i}.txt")), "").unwrap();
    }
    let out = env
        .call("glob_search", json!({"pattern": "*.txt"}))
        .await
        .unwrap();
    assert_eq!(out.lines().count(), 201);
    assert!(out.ends_with(
        "[showing the 200 newest of 250 matching files; narrow the pattern or the path]"
    ));
}

#[tokio::test]
async fn glob_outside_the_roots_is_refused() {
    let env = Env::new();
    let r = env
        .call(
            "glob_search",
            json!({"pattern": "*", "path": env.outside.display().to_string()}),
        )
        .await;
    assert!(
        matches!(r, Err(ToolError::Failed(ref m)) if m.contains("refused")),
        "{r:?}"
    );
}

#[tokio::test]
async fn grep_respects_gitignore_and_hidden_files() {
    let env = Env::new();
    tree(&env);
    let out = env
        .call("grep_search", json!({"pattern": "needle"}))
        .await
        .unwrap();
    let mut lines: Vec<_> = out.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "src/main.rs:2:    println!(\"needle\");",
            "src/notes.txt:1:needle in text"
        ]
    );
}

#[tokio::test]
async fn grep_filters_by_include_and_can_ignore_case() {
    let env = Env::new();
    tree(&env);
    let out = env
        .call(
            "grep_search",
            json!({"pattern": "needle", "include": "*.rs", "case_insensitive": true}),
        )
        .await
        .unwrap();
    let mut lines: Vec<_> = out.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "src/main.rs:2:    println!(\"needle\");",
            "src/nested/lib.rs:1:// Needle in lib"
        ]
    );
}

#[tokio::test]
async fn grep_shows_context_lines_with_dashes() {
    let env = Env::new();
    tree(&env);
    let out = env
        .call(
            "grep_search",
            json!({"pattern": "println", "path": "src/main.rs", "context_lines": 1}),
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        "main.rs-1-fn main() {\nmain.rs:2:    println!(\"needle\");\nmain.rs-3-}"
    );
}

#[tokio::test]
async fn grep_with_an_invalid_regex_names_the_pattern() {
    let env = Env::new();
    let r = env
        .call("grep_search", json!({"pattern": "fn (main"}))
        .await;
    let Err(ToolError::InvalidArguments(m)) = r else {
        panic!("{r:?}")
    };
    assert!(m.contains("fn (main"), "{m}");
}

#[tokio::test]
async fn grep_caps_its_output_and_says_so() {
    let env = Env::new();
    let body: String = (0..800).map(|i| format!("hit {i}\n")).collect();
    std::fs::write(env.ws().join("many.txt"), body).unwrap();
    let out = env
        .call("grep_search", json!({"pattern": "hit"}))
        .await
        .unwrap();
    assert_eq!(out.lines().count(), 501);
    assert!(
        out.ends_with("[output truncated at 500 lines; narrow the pattern, the path or include]")
    );
}

#[tokio::test]
async fn grep_skips_binary_files_and_reports_no_matches_clearly() {
    let env = Env::new();
    std::fs::write(env.ws().join("bin.dat"), b"needle\0\0\0").unwrap();
    let out = env
        .call("grep_search", json!({"pattern": "needle"}))
        .await
        .unwrap();
    assert!(out.starts_with("no matches for \"needle\""), "{out}");
}
