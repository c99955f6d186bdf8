//! Issue #12 item 5 (`write_file` does not overwrite what the agent has not seen; the same
//! freshness record as `edit_file`'s stale check) and item 6 (arguments are what the schema
//! says: a JSON string standing for an array or object is decoded once, otherwise an error
//! names the field and the type).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Env;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use suzent_tools::{ToolError, coerce_args, default_registry};

fn failed(r: Result<String, ToolError>) -> String {
    match r {
        Err(ToolError::Failed(m)) => m,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn write(path: &str, content: &str) -> Value {
    json!({"file_path": path, "content": content})
}

#[tokio::test]
async fn an_existing_file_the_agent_has_not_read_is_not_overwritten() {
    let env = Env::new();
    std::fs::write(env.ws().join("notes.md"), "the user's notes\n").unwrap();
    let msg = failed(env.call("write_file", write("notes.md", "mine")).await);
    assert_eq!(
        msg,
        "/workspace/notes.md already exists and you have not read it in this chat; read it with read_file first, then write it (or use edit_file)"
    );
    assert_eq!(
        std::fs::read_to_string(env.ws().join("notes.md")).unwrap(),
        "the user's notes\n"
    );
}

#[tokio::test]
async fn each_freshness_case_decides_like_edit_files_stale_check() {
    // (name, steps before the write, whether the write succeeds)
    type Step = &'static str;
    let rows: &[(&str, &[Step], bool)] = &[
        ("a new file is fine", &[], true),
        ("read then write", &["create", "read"], true),
        ("read a window then write", &["create", "read_window"], true),
        ("written by the agent then written again", &["write"], true),
        (
            "edited by the agent then written",
            &["create", "read", "edit"],
            true,
        ),
        (
            "read, then changed on disk",
            &["create", "read", "external"],
            false,
        ),
        (
            "written, then changed on disk",
            &["write", "external"],
            false,
        ),
        ("never read", &["create"], false),
        (
            "read through a symlink, written by its real path",
            &["create", "link", "read_link"],
            true,
        ),
        (
            "read, changed, read again",
            &["create", "read", "external", "read"],
            true,
        ),
    ];
    let mut failures = Vec::new();
    for (name, steps, ok) in rows {
        let env = Env::new();
        let f = env.ws().join("f.txt");
        for step in *steps {
            match *step {
                "create" => std::fs::write(&f, "original\n").unwrap(),
                "read" => {
                    env.call("read_file", json!({"file_path": "f.txt"}))
                        .await
                        .unwrap();
                }
                "read_window" => {
                    env.call(
                        "read_file",
                        json!({"file_path": "f.txt", "offset": 0, "limit": 1}),
                    )
                    .await
                    .unwrap();
                }
                "write" => {
                    env.call("write_file", write("f.txt", "agent\n"))
                        .await
                        .unwrap();
                }
                "edit" => {
                    env.call(
                        "edit_file",
                        json!({"file_path": "f.txt", "old_string": "original", "new_string": "edited"}),
                    )
                    .await
                    .unwrap();
                }
                "external" => {
                    // A different length, so the change shows even on a coarse clock.
                    std::fs::write(&f, "changed by the user meanwhile\n").unwrap();
                }
                "link" => std::os::unix::fs::symlink(&f, env.ws().join("alias.txt")).unwrap(),
                "read_link" => {
                    env.call("read_file", json!({"file_path": "alias.txt"}))
                        .await
                        .unwrap();
                }
                other => panic!("unknown step {other}"),
            }
        }
        let before = std::fs::read_to_string(&f).ok();
        let result = env.call("write_file", write("f.txt", "final\n")).await;
        let after = std::fs::read_to_string(&f).ok();
        match (result.is_ok(), *ok) {
            (true, true) => {
                if after.as_deref() != Some("final\n") {
                    failures.push(format!("{name}: wrote {after:?}"));
                }
            }
            (false, false) => {
                if after != before {
                    failures.push(format!("{name}: refused but changed the file"));
                }
            }
            (got, _) => failures.push(format!("{name}: write ok = {got}: {result:?}")),
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}

#[test]
fn strings_standing_for_arrays_or_objects_are_decoded_once() {
    let registry = default_registry();
    let schema = registry
        .get("planning_update")
        .unwrap()
        .spec()
        .parameters
        .clone();
    let phases = json!([{"id": "p1", "title": "Look", "capabilities": ["read"]}]);
    let sent = json!({"action": "update", "goal": "[not decoded]", "phases": phases.to_string()});
    assert_eq!(
        coerce_args(&schema, sent).unwrap(),
        json!({"action": "update", "goal": "[not decoded]", "phases": phases})
    );
    // Already the right type: unchanged.
    let right = json!({"action": "update", "phases": phases});
    assert_eq!(coerce_args(&schema, right.clone()).unwrap(), right);
}

#[test]
fn a_string_that_is_not_the_expected_type_is_an_error_naming_the_field() {
    let schema = default_registry()
        .get("planning_update")
        .unwrap()
        .spec()
        .parameters
        .clone();
    let rows = [
        (
            json!({"action": "update", "phases": "p1, p2"}),
            "field `phases`: expected an array, got a string that is not a JSON array",
        ),
        (
            json!({"action": "update", "phases": "{\"id\": \"p1\"}"}),
            "field `phases`: expected an array, got a string that is not a JSON array",
        ),
        (
            json!({"action": "update", "phases": "[1, 2"}),
            "field `phases`: expected an array, got a string that is not a JSON array",
        ),
    ];
    for (args, want) in rows {
        assert_eq!(
            coerce_args(&schema, args.clone()),
            Err(want.to_string()),
            "{args}"
        );
    }
}

#[test]
fn mcp_style_schemas_with_refs_unions_and_nesting_are_followed() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "$defs": {"Labels": {"type": "array", "items": {"type": "string"}}},
        "properties": {
            "title": {"type": "string"},
            "labels": {"$ref": "#/$defs/Labels"},
            "assignees": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
            "meta": {"type": "object", "properties": {"tags": {"type": "array"}}},
            "body": {"type": ["string", "null"]},
            "count": {"type": "integer"}
        }
    });
    let sent = json!({
        "title": "[\"stays\"]",
        "labels": "[\"bug\", \"p1\"]",
        "assignees": "null",
        "meta": {"tags": "[\"x\"]"},
        "body": "{\"stays\": true}",
        "count": "3",
        "extra": "[1]"
    });
    assert_eq!(
        coerce_args(&schema, sent).unwrap(),
        json!({
            "title": "[\"stays\"]",
            "labels": ["bug", "p1"],
            "assignees": null,
            "meta": {"tags": ["x"]},
            "body": "{\"stays\": true}",
            "count": "3",
            "extra": "[1]"
        })
    );
    // Decoded once: a string inside the decoded array is not decoded again.
    assert_eq!(
        coerce_args(&schema, json!({"labels": "[\"[1]\"]"})).unwrap(),
        json!({"labels": ["[1]"]})
    );
    assert_eq!(
        coerce_args(&schema, json!({"meta": "{\"tags\": 1"})),
        Err("field `meta`: expected an object, got a string that is not a JSON object".to_string())
    );
    assert_eq!(
        coerce_args(&schema, json!({"meta": {"tags": "x"}})),
        Err(
            "field `meta.tags`: expected an array, got a string that is not a JSON array"
                .to_string()
        )
    );
}
