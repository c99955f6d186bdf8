//! The registry: schemas, lookups, legacy names, the catalog.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::Arc;
use suzent_tools::{
    DuplicateTool, ReadFileTool, RunCommandTool, ToolRegistry, UnknownTool, default_registry,
};

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn schemas_are_object_schemas_with_descriptions_and_required_fields() {
    let registry = default_registry();
    let read = registry.get("read_file").unwrap();
    let p = &read.spec().parameters;
    assert_eq!(p["type"], "object");
    assert!(p.get("$schema").is_none());
    assert_eq!(p["required"], json!(["file_path"]));
    assert_eq!(p["additionalProperties"], false);
    assert!(
        p["properties"]["file_path"]["description"]
            .as_str()
            .unwrap()
            .starts_with("Path of the file")
    );
    assert_eq!(p["properties"]["limit"]["default"], 2000);
    assert_eq!(p["properties"]["offset"]["type"], "integer");
    for tool in registry.list() {
        let p = &tool.spec().parameters;
        assert_eq!(p["type"], "object", "{}", tool.spec().runtime_name);
        assert!(p["required"].is_array());
        for (name, prop) in p["properties"].as_object().unwrap() {
            assert!(
                prop["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{}.{name} has no description",
                tool.spec().runtime_name
            );
        }
    }
    let edit = registry.get("edit_file").unwrap();
    assert_eq!(
        edit.spec().parameters["required"],
        json!(["file_path", "old_string", "new_string"])
    );
    let run = registry.get("run_command").unwrap();
    assert_eq!(run.spec().parameters["required"], json!(["content"]));
    assert_eq!(
        run.spec().parameters["properties"]["timeout"]["default"],
        120
    );
}

#[test]
fn tools_are_found_by_runtime_name_and_by_class_name() {
    let registry = default_registry();
    for (runtime, class) in [
        ("read_file", "ReadFileTool"),
        ("write_file", "WriteFileTool"),
        ("edit_file", "EditFileTool"),
        ("glob_search", "GlobTool"),
        ("grep_search", "GrepTool"),
        ("run_command", "RunCommandTool"),
    ] {
        assert_eq!(registry.get(runtime).unwrap().spec().class_name, class);
        assert_eq!(registry.get(class).unwrap().spec().runtime_name, runtime);
    }
    assert!(registry.get("nope").is_none());
    let order: Vec<_> = registry
        .list()
        .iter()
        .map(|t| t.spec().runtime_name)
        .collect();
    assert_eq!(
        order,
        [
            "read_file",
            "write_file",
            "edit_file",
            "glob_search",
            "grep_search",
            "run_command"
        ]
    );
}

#[test]
fn registering_a_name_twice_is_an_error() {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(ReadFileTool::new())).unwrap();
    assert_eq!(
        registry.register(Arc::new(ReadFileTool::new())),
        Err(DuplicateTool("read_file".into()))
    );
    assert_eq!(registry.list().len(), 1);
}

#[test]
fn legacy_shell_names_expand_to_every_shell_tool_and_others_map_to_runtime_names() {
    let registry = default_registry();
    for legacy in ["ShellTool", "BashTool", "ProcessTool"] {
        assert_eq!(
            registry.expand_selection(&names(&[legacy])).unwrap(),
            ["run_command"]
        );
    }
    assert_eq!(
        registry
            .expand_selection(&names(&[
                "GrepTool",
                "read_file",
                "ShellTool",
                "RunCommandTool",
                "ReadFileTool",
                "BashTool"
            ]))
            .unwrap(),
        ["grep_search", "read_file", "run_command"]
    );
    let err = registry
        .expand_selection(&names(&["ReadFileTool", "WebSearchTool"]))
        .unwrap_err();
    assert_eq!(err, UnknownTool("WebSearchTool".into()));
    assert!(err.to_string().contains("'WebSearchTool'"));
}

#[test]
fn legacy_shell_names_cover_shell_tools_registered_later() {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(RunCommandTool::new())).unwrap();
    registry.register(Arc::new(ReadFileTool::new())).unwrap();
    assert_eq!(
        registry.expand_selection(&names(&["ProcessTool"])).unwrap(),
        ["run_command"]
    );
    assert!(registry.expand_selection(&[]).unwrap().is_empty());
}

#[test]
fn openai_schemas_use_the_function_format() {
    let registry = default_registry();
    let schemas = registry.openai_schemas(&names(&["GlobTool", "glob_search", "missing"]));
    assert_eq!(schemas.len(), 1);
    let glob = registry.get("glob_search").unwrap();
    assert_eq!(
        schemas[0],
        json!({
            "type": "function",
            "function": {
                "name": "glob_search",
                "description": glob.spec().description,
                "parameters": glob.spec().parameters,
            }
        })
    );
}

#[test]
fn the_catalog_has_the_configview_shape() {
    let registry = default_registry();
    let catalog = serde_json::to_value(registry.catalog()).unwrap();
    let d = |name: &str| registry.get(name).unwrap().spec().description;
    let expected = json!([
        {
            "id": "filesystem",
            "label": "Filesystem",
            "description": "Read, write, edit and search files in the workspace and the agent's storage.",
            "tools": [
                {"id": "ReadFileTool", "name": "Read file", "description": d("read_file"),
                 "runtimeName": "read_file", "requiresApproval": false},
                {"id": "WriteFileTool", "name": "Write file", "description": d("write_file"),
                 "runtimeName": "write_file", "requiresApproval": true},
                {"id": "EditFileTool", "name": "Edit file", "description": d("edit_file"),
                 "runtimeName": "edit_file", "requiresApproval": true},
                {"id": "GlobTool", "name": "Find files", "description": d("glob_search"),
                 "runtimeName": "glob_search", "requiresApproval": false},
                {"id": "GrepTool", "name": "Search file contents", "description": d("grep_search"),
                 "runtimeName": "grep_search", "requiresApproval": false}
            ]
        },
        {
            "id": "shell",
            "label": "Shell",
            "description": "Run shell commands in the workspace.",
            "tools": [
                {"id": "RunCommandTool", "name": "Run command", "description": d("run_command"),
                 "runtimeName": "run_command", "requiresApproval": true}
            ]
        }
    ]);
    assert_eq!(catalog, expected);
}
