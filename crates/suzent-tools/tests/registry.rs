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
            "run_command",
            "start_command",
            "check_command",
            "stop_command",
            "spawn_agent",
            "agent_list",
            "agent_read",
            "agent_send",
            "agent_stop",
            "web_search",
            "webpage_fetch",
            "browser_action",
            "planning_update",
            "memory_search",
            "memory_block_update",
            "memory_archive",
            "skill_execute",
            "render_ui",
            "social_message",
            "speak"
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
            [
                "run_command",
                "start_command",
                "check_command",
                "stop_command"
            ]
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
        [
            "grep_search",
            "read_file",
            "run_command",
            "start_command",
            "check_command",
            "stop_command"
        ]
    );
    let err = registry
        .expand_selection(&names(&["ReadFileTool", "TelepathyTool"]))
        .unwrap_err();
    assert_eq!(err, UnknownTool("TelepathyTool".into()));
    assert!(err.to_string().contains("'TelepathyTool'"));
}

#[test]
fn selecting_agent_tool_equips_the_lifecycle_tools() {
    let registry = default_registry();
    assert_eq!(
        registry.expand_selection(&names(&["AgentTool"])).unwrap(),
        [
            "spawn_agent",
            "agent_list",
            "agent_read",
            "agent_send",
            "agent_stop"
        ]
    );
    // Each lifecycle tool stays selectable alone.
    assert_eq!(
        registry.expand_selection(&names(&["agent_read"])).unwrap(),
        ["agent_read"]
    );
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
                 "runtimeName": "run_command", "requiresApproval": true},
                {"id": "StartCommandTool", "name": "Start background command",
                 "description": d("start_command"), "runtimeName": "start_command",
                 "requiresApproval": true},
                {"id": "CheckCommandTool", "name": "Check background command",
                 "description": d("check_command"), "runtimeName": "check_command",
                 "requiresApproval": false},
                {"id": "StopCommandTool", "name": "Stop background command",
                 "description": d("stop_command"), "runtimeName": "stop_command",
                 "requiresApproval": false}
            ]
        },
        {
            "id": "web",
            "label": "Web & Search",
            "description": "Search the web, fetch pages and drive a browser.",
            "tools": [
                {"id": "WebSearchTool", "name": "Web search", "description": d("web_search"),
                 "runtimeName": "web_search", "requiresApproval": false},
                {"id": "WebpageFetchTool", "name": "Fetch web page",
                 "description": d("webpage_fetch"), "runtimeName": "webpage_fetch",
                 "requiresApproval": false},
                {"id": "BrowserTool", "name": "Browser",
                 "description": d("browser_action"), "runtimeName": "browser_action",
                 "requiresApproval": true}
            ]
        },
        {
            "id": "memory",
            "label": "Planning & Memory",
            "description": "Plan multi-step work and keep long-term memory.",
            "tools": [
                {"id": "PlanningTool", "name": "Update plan", "description": d("planning_update"),
                 "runtimeName": "planning_update", "requiresApproval": false},
                {"id": "MemorySearchTool", "name": "Search memory",
                 "description": d("memory_search"), "runtimeName": "memory_search",
                 "requiresApproval": false},
                {"id": "MemoryBlockUpdateTool", "name": "Update core memory",
                 "description": d("memory_block_update"), "runtimeName": "memory_block_update",
                 "requiresApproval": false},
                {"id": "MemoryArchiveTool", "name": "Archive memory",
                 "description": d("memory_archive"), "runtimeName": "memory_archive",
                 "requiresApproval": false}
            ]
        },
        {
            "id": "canvas",
            "label": "Canvas & UI",
            "description": "Show cards, tables, forms and progress on the canvas beside the chat.",
            "tools": [
                {"id": "RenderUiTool", "name": "Render UI", "description": d("render_ui"),
                 "runtimeName": "render_ui", "requiresApproval": false}
            ]
        },
        {
            "id": "social",
            "label": "Social",
            "description": "List contacts and send messages on the connected messaging channels.",
            "tools": [
                {"id": "SocialMessageTool", "name": "Social message",
                 "description": d("social_message"), "runtimeName": "social_message",
                 "requiresApproval": true}
            ]
        },
        {
            "id": "output",
            "label": "Output",
            "description": "Speak text aloud: audio stored with the chat and played in the app.",
            "tools": [
                {"id": "SpeakTool", "name": "Speak", "description": d("speak"),
                 "runtimeName": "speak", "requiresApproval": false}
            ]
        },
        {
            "id": "agents",
            "label": "Agent & Meta",
            "description": "Start and talk to sub-agents; discover more tools.",
            "tools": [
                {"id": "AgentTool", "name": "Delegate to sub-agent", "description": d("spawn_agent"),
                 "runtimeName": "spawn_agent", "requiresApproval": false},
                {"id": "AgentListTool", "name": "List agents", "description": d("agent_list"),
                 "runtimeName": "agent_list", "requiresApproval": false},
                {"id": "AgentReadTool", "name": "Read agent", "description": d("agent_read"),
                 "runtimeName": "agent_read", "requiresApproval": false},
                {"id": "AgentSendTool", "name": "Message agent", "description": d("agent_send"),
                 "runtimeName": "agent_send", "requiresApproval": false},
                {"id": "AgentStopTool", "name": "Stop agent", "description": d("agent_stop"),
                 "runtimeName": "agent_stop", "requiresApproval": false},
                {"id": "SkillTool", "name": "Use skill", "description": d("skill_execute"),
                 "runtimeName": "skill_execute", "requiresApproval": false}
            ]
        }
    ]);
    assert_eq!(catalog, expected);
}
