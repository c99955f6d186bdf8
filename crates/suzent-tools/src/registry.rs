//! The tool registry: lookup by runtime or legacy class name, selection expansion, the schemas
//! sent to the model (seed 003 format) and the capability catalog ConfigView shows.

use crate::tool::Tool;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// A capability the registry knows how to label (seed 000 "Available Tools").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapabilityInfo {
    /// Capability id (`filesystem`).
    pub id: &'static str,
    /// Header label (`Filesystem`).
    pub label: &'static str,
    /// What the capability lets the agent do.
    pub description: &'static str,
}

/// Labels of the known capabilities, in the order ConfigView shows them. A tool whose
/// capability is not listed here is still shown, labelled with its id.
pub const CAPABILITIES: &[CapabilityInfo] = &[
    CapabilityInfo {
        id: "filesystem",
        label: "Filesystem",
        description: "Read, write, edit and search files in the workspace and the agent's storage.",
    },
    CapabilityInfo {
        id: "shell",
        label: "Shell",
        description: "Run shell commands in the workspace.",
    },
    CapabilityInfo {
        id: "web",
        label: "Web & Search",
        description: "Search the web, fetch pages and drive a browser.",
    },
    CapabilityInfo {
        id: "memory",
        label: "Planning & Memory",
        description: "Plan multi-step work and keep long-term memory.",
    },
    CapabilityInfo {
        id: "canvas",
        label: "Canvas & UI",
        description: "Show cards, tables, forms and progress on the canvas beside the chat.",
    },
    CapabilityInfo {
        id: "browser",
        label: "Browser",
        description: "Control browser tabs through the Suzent extension or a managed browser.",
    },
    CapabilityInfo {
        id: "social",
        label: "Social",
        description: "List contacts and send messages on the connected messaging channels.",
    },
    CapabilityInfo {
        id: "output",
        label: "Output",
        description: "Speak text aloud: audio stored with the chat and played in the app.",
    },
    CapabilityInfo {
        id: "agents",
        label: "Agent & Meta",
        description: "Start and talk to sub-agents; discover more tools.",
    },
];

/// Legacy selection names that expand to every registered tool of a capability (seed 000:
/// "Existing ShellTool, BashTool, or ProcessTool selections are expanded to all four operations").
pub const LEGACY_GROUPS: &[(&str, &str)] = &[
    ("ShellTool", "shell"),
    ("BashTool", "shell"),
    ("ProcessTool", "shell"),
];

/// Tools that selecting another tool also equips (seed 000: "Selecting AgentTool automatically
/// equips these lifecycle operations as its management dependencies").
pub const EQUIPS: &[(&str, &[&str])] = &[(
    "spawn_agent",
    &["agent_list", "agent_read", "agent_send", "agent_stop"],
)];

/// A second tool with an already registered runtime or class name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a tool named '{0}' is already registered")]
pub struct DuplicateTool(pub String);

/// A selected tool name that is neither a runtime name, a class name nor a legacy group.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown tool '{0}': not a registered tool name (e.g. read_file), class name (e.g. ReadFileTool) or legacy group (ShellTool)"
)]
pub struct UnknownTool(pub String);

/// One capability of the catalog (DESIGN.md "Capability catalog").
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Capability {
    /// Capability id (`filesystem`).
    pub id: String,
    /// Header label.
    pub label: String,
    /// Header description.
    pub description: String,
    /// Its tools in registration order.
    pub tools: Vec<CatalogTool>,
}

/// One tool of the catalog.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogTool {
    /// Legacy class name, the id configs store (`ReadFileTool`).
    pub id: String,
    /// Display name (`Read file`).
    pub name: String,
    /// Description.
    pub description: String,
    /// Name the model calls (`read_file`).
    pub runtime_name: String,
    /// Whether it asks before running by default.
    pub requires_approval: bool,
}

/// The registered tools.
#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    /// Runtime and class names -> index into `tools`.
    by_name: HashMap<String, usize>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.spec().runtime_name))
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool. Its runtime and class names must both be new.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), DuplicateTool> {
        let spec = tool.spec();
        for name in [spec.runtime_name, spec.class_name] {
            if self.by_name.contains_key(name) || LEGACY_GROUPS.iter().any(|(g, _)| *g == name) {
                return Err(DuplicateTool(name.to_string()));
            }
        }
        let index = self.tools.len();
        self.by_name.insert(spec.runtime_name.to_string(), index);
        self.by_name.insert(spec.class_name.to_string(), index);
        self.tools.push(tool);
        Ok(())
    }

    /// The tool with this runtime name (`read_file`) or legacy class name (`ReadFileTool`).
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.by_name.get(name).map(|&i| Arc::clone(&self.tools[i]))
    }

    /// All tools in registration order.
    pub fn list(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }

    /// Expands a configured selection into runtime names, deduplicated, order kept. Runtime
    /// names map to themselves, class names to their tool, legacy groups (`ShellTool`,
    /// `BashTool`, `ProcessTool`) to every registered tool of their capability.
    pub fn expand_selection(&self, selection: &[String]) -> Result<Vec<String>, UnknownTool> {
        let mut out: Vec<String> = Vec::new();
        let mut push = |name: &str| {
            if !out.iter().any(|n| n == name) {
                out.push(name.to_string());
            }
        };
        for name in selection {
            if let Some(tool) = self.get(name) {
                push(tool.spec().runtime_name);
                for (_, deps) in EQUIPS
                    .iter()
                    .filter(|(t, _)| *t == tool.spec().runtime_name)
                {
                    for dep in deps.iter().filter(|d| self.get(d).is_some()) {
                        push(dep);
                    }
                }
            } else if let Some((_, capability)) = LEGACY_GROUPS.iter().find(|(g, _)| g == name) {
                for tool in self
                    .tools
                    .iter()
                    .filter(|t| t.spec().capability == *capability)
                {
                    push(tool.spec().runtime_name);
                }
            } else {
                return Err(UnknownTool(name.clone()));
            }
        }
        Ok(out)
    }

    /// The function schemas of these tools (runtime or class names; unknown names are skipped,
    /// duplicates sent once) in the seed 003 format:
    /// `{"type":"function","function":{"name","description","parameters"}}`.
    pub fn openai_schemas(&self, names: &[String]) -> Vec<Value> {
        let mut seen: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        for name in names {
            let Some(&index) = self.by_name.get(name.as_str()) else {
                continue;
            };
            if seen.contains(&index) {
                continue;
            }
            seen.push(index);
            let spec = self.tools[index].spec();
            out.push(json!({
                "type": "function",
                "function": {
                    "name": spec.runtime_name,
                    "description": spec.description,
                    "parameters": spec.parameters,
                }
            }));
        }
        out
    }

    /// The capability catalog: known capabilities first in [`CAPABILITIES`] order, then any
    /// other capability in order of first registration; only capabilities with tools.
    pub fn catalog(&self) -> Vec<Capability> {
        let mut ids: Vec<&'static str> = CAPABILITIES
            .iter()
            .map(|c| c.id)
            .filter(|id| self.tools.iter().any(|t| t.spec().capability == *id))
            .collect();
        for tool in &self.tools {
            let id = tool.spec().capability;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids.into_iter()
            .map(|id| {
                let info = CAPABILITIES.iter().find(|c| c.id == id);
                Capability {
                    id: id.to_string(),
                    label: info.map_or(id, |c| c.label).to_string(),
                    description: info.map_or("", |c| c.description).to_string(),
                    tools: self
                        .tools
                        .iter()
                        .map(|t| t.spec())
                        .filter(|s| s.capability == id)
                        .map(|s| CatalogTool {
                            id: s.class_name.to_string(),
                            name: s.display_name.to_string(),
                            description: s.description.to_string(),
                            runtime_name: s.runtime_name.to_string(),
                            requires_approval: s.requires_approval,
                        })
                        .collect(),
                }
            })
            .collect()
    }
}

/// A registry with the built-in tools: read_file, write_file, edit_file, glob_search,
/// grep_search, run_command.
pub fn default_registry() -> ToolRegistry {
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(crate::builtin::read_file::ReadFileTool::new()),
        Arc::new(crate::builtin::write_file::WriteFileTool::new()),
        Arc::new(crate::builtin::edit_file::EditFileTool::new()),
        Arc::new(crate::builtin::glob_search::GlobTool::new()),
        Arc::new(crate::builtin::grep_search::GrepTool::new()),
        Arc::new(crate::builtin::run_command::RunCommandTool::new()),
        Arc::new(crate::builtin::background::StartCommandTool::new()),
        Arc::new(crate::builtin::background::CheckCommandTool::new()),
        Arc::new(crate::builtin::background::StopCommandTool::new()),
        Arc::new(crate::agent_tools::SpawnAgentTool::new()),
        Arc::new(crate::agent_tools::AgentListTool::new()),
        Arc::new(crate::agent_tools::AgentReadTool::new()),
        Arc::new(crate::agent_tools::AgentSendTool::new()),
        Arc::new(crate::agent_tools::AgentStopTool::new()),
        Arc::new(crate::builtin::web_search::WebSearchTool::new()),
        Arc::new(crate::builtin::webpage_fetch::WebpageFetchTool::new()),
        Arc::new(crate::builtin::browser_action::BrowserActionTool::new()),
        Arc::new(crate::builtin::planning::PlanningTool::new()),
        Arc::new(crate::builtin::memory_tools::MemorySearchTool::new()),
        Arc::new(crate::builtin::memory_tools::MemoryBlockUpdateTool::new()),
        Arc::new(crate::builtin::memory_tools::MemoryArchiveTool::new()),
        Arc::new(crate::builtin::skill_execute::SkillExecuteTool::new()),
        Arc::new(crate::builtin::render_ui::RenderUiTool::new()),
        Arc::new(crate::builtin::social_message::SocialMessageTool::new()),
        Arc::new(crate::builtin::speak::SpeakTool::new()),
    ];
    let mut registry = ToolRegistry::new();
    for tool in tools {
        if let Err(e) = registry.register(tool) {
            // The built-in names are distinct; a clash is a programming error caught by tests.
            tracing::error!("built-in tool not registered: {e}");
        }
    }
    registry
}
