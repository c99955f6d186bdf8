//! Registry parity with seed 003: categories (core, sandbox, search, utility, agent_builder)
//! mapped onto capabilities, tool metadata (display name, description, icon, color, is_core,
//! weight, visible, usage guide), tool summaries, usage-guide lookup, and registering a subset
//! of a tool group's functions.
//!
//! ```
//! use suzent_tools::{RegistryExt, ToolCategory, default_registry};
//! let registry = default_registry();
//! let by_category = registry.tools_by_category();
//! assert!(by_category[&ToolCategory::Sandbox].iter().any(|t| t.name == "read_file"));
//! let meta = registry.tool_metadata("ReadFileTool").unwrap();
//! assert_eq!((meta.icon.as_str(), meta.is_core), ("file-text", true));
//! assert!(registry.usage_guide("run_command").unwrap().contains("start_command"));
//! ```

use crate::registry::{DuplicateTool, ToolRegistry, UnknownTool};
use crate::tool::{Tool, ToolSpec};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A seed 003 tool category.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCategory {
    /// Always-on internals (memory, planning).
    Core,
    /// Tools acting on the workspace: files and shell.
    Sandbox,
    /// Web and search.
    Search,
    /// Everything else: browser, MCP tools, converters.
    Utility,
    /// Agents and tool discovery.
    AgentBuilder,
}

impl ToolCategory {
    /// Every category in display order.
    pub const ALL: [ToolCategory; 5] = [
        ToolCategory::Core,
        ToolCategory::Sandbox,
        ToolCategory::Search,
        ToolCategory::Utility,
        ToolCategory::AgentBuilder,
    ];

    /// The category of a capability id (`mcp:*` and unknown capabilities are utilities).
    pub fn of_capability(capability: &str) -> ToolCategory {
        match capability {
            "memory" => ToolCategory::Core,
            "filesystem" | "shell" => ToolCategory::Sandbox,
            "web" => ToolCategory::Search,
            "agents" => ToolCategory::AgentBuilder,
            _ => ToolCategory::Utility,
        }
    }
}

/// Display metadata of a tool (seed 003 `@tool_metadata`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolMetadata {
    /// Runtime name.
    pub name: String,
    /// Human name.
    pub display_name: String,
    /// Description.
    pub description: String,
    /// Icon name (lucide icon set).
    pub icon: String,
    /// Color class.
    pub color: String,
    /// Always enabled.
    pub is_core: bool,
    /// Sort weight: lower comes first.
    pub weight: u32,
    /// Shown in ConfigView.
    pub visible: bool,
    /// Category.
    pub category: ToolCategory,
    /// Longer instructions, if any.
    pub usage_guide: Option<String>,
}

/// Summary of a tool (seed 003 `get_all_tool_summaries`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSummary {
    /// Runtime name.
    pub name: String,
    /// Human name.
    pub display_name: String,
    /// Description.
    pub description: String,
}

/// Per-tool overrides of the capability defaults: (runtime name, icon, weight, is_core,
/// usage guide).
const KNOWN: &[(&str, &str, u32, bool, Option<&str>)] = &[
    ("read_file", "file-text", 10, true, None),
    ("write_file", "file-plus", 20, false, None),
    (
        "edit_file",
        "file-pen",
        30,
        false,
        Some("Read the file first; old_string must match exactly once unless replace_all is set."),
    ),
    ("glob_search", "folder-search", 40, false, None),
    ("grep_search", "search-code", 50, false, None),
    (
        "run_command",
        "terminal",
        60,
        false,
        Some(
            "For commands that run longer than a minute (servers, watchers, long builds) use start_command, then check_command and stop_command.",
        ),
    ),
    (
        "tool_search",
        "wand",
        5,
        true,
        Some(
            "Call without a query to list tools; with an exact tool name to activate it (callable from the next step); with words to search.",
        ),
    ),
];

/// Icon and color by capability.
fn capability_style(capability: &str) -> (&'static str, &'static str) {
    match capability {
        "filesystem" => ("folder", "blue"),
        "shell" => ("terminal", "slate"),
        "web" => ("globe", "sky"),
        "memory" => ("brain", "violet"),
        "browser" => ("app-window", "orange"),
        "canvas" => ("layout-dashboard", "pink"),
        "agents" => ("bot", "emerald"),
        c if c.starts_with("mcp:") => ("plug", "amber"),
        _ => ("wrench", "gray"),
    }
}

/// The metadata of a tool from its spec and the built-in table.
pub fn metadata_of(spec: &ToolSpec) -> ToolMetadata {
    let (icon, color) = capability_style(spec.capability);
    let known = KNOWN.iter().find(|k| k.0 == spec.runtime_name);
    ToolMetadata {
        name: spec.runtime_name.to_string(),
        display_name: spec.display_name.to_string(),
        description: spec.description.to_string(),
        icon: known.map_or(icon, |k| k.1).to_string(),
        color: color.to_string(),
        is_core: known.is_some_and(|k| k.3) || !spec.deferrable,
        weight: known.map_or(100, |k| k.2),
        visible: true,
        category: ToolCategory::of_capability(spec.capability),
        usage_guide: known.and_then(|k| k.4).map(str::to_string),
    }
}

/// Seed 003's registry API on [`ToolRegistry`].
pub trait RegistryExt {
    /// Registers only the named functions of a tool group (seed 003
    /// `register_tool(MyTool, function_names=[...])`); `None` registers all. A name that is
    /// not in the group is an error and nothing is registered. Returns the runtime names added.
    fn register_functions(
        &mut self,
        group: Vec<Arc<dyn Tool>>,
        only: Option<&[&str]>,
    ) -> Result<Vec<String>, RegisterError>;

    /// Tools by category, each sorted by weight then name.
    fn tools_by_category(&self) -> BTreeMap<ToolCategory, Vec<ToolSummary>>;

    /// Every tool's summary, by runtime name.
    fn tool_summaries(&self) -> BTreeMap<String, ToolSummary>;

    /// The metadata of a tool (runtime or class name).
    fn tool_metadata(&self, name: &str) -> Option<ToolMetadata>;

    /// The usage guide of a tool (runtime or class name), if it has one.
    fn usage_guide(&self, name: &str) -> Option<String>;
}

/// Why [`RegistryExt::register_functions`] registered nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// A requested function is not in the group.
    #[error(transparent)]
    Unknown(#[from] UnknownTool),
    /// A name is already registered.
    #[error(transparent)]
    Duplicate(#[from] DuplicateTool),
}

fn summary(spec: &ToolSpec) -> ToolSummary {
    ToolSummary {
        name: spec.runtime_name.to_string(),
        display_name: spec.display_name.to_string(),
        description: spec.description.to_string(),
    }
}

impl RegistryExt for ToolRegistry {
    fn register_functions(
        &mut self,
        group: Vec<Arc<dyn Tool>>,
        only: Option<&[&str]>,
    ) -> Result<Vec<String>, RegisterError> {
        if let Some(only) = only {
            for name in only {
                if !group
                    .iter()
                    .any(|t| t.spec().runtime_name == *name || t.spec().class_name == *name)
                {
                    return Err(UnknownTool((*name).to_string()).into());
                }
            }
        }
        let chosen: Vec<Arc<dyn Tool>> = group
            .into_iter()
            .filter(|t| {
                only.is_none_or(|o| {
                    o.iter()
                        .any(|n| t.spec().runtime_name == *n || t.spec().class_name == *n)
                })
            })
            .collect();
        for t in &chosen {
            if self.get(t.spec().runtime_name).is_some() || self.get(t.spec().class_name).is_some()
            {
                return Err(DuplicateTool(t.spec().runtime_name.to_string()).into());
            }
        }
        let mut added = Vec::new();
        for t in chosen {
            added.push(t.spec().runtime_name.to_string());
            self.register(t)?;
        }
        Ok(added)
    }

    fn tools_by_category(&self) -> BTreeMap<ToolCategory, Vec<ToolSummary>> {
        let mut out: BTreeMap<ToolCategory, Vec<(u32, ToolSummary)>> =
            ToolCategory::ALL.iter().map(|c| (*c, Vec::new())).collect();
        for tool in self.list() {
            let meta = metadata_of(tool.spec());
            out.entry(meta.category)
                .or_default()
                .push((meta.weight, summary(tool.spec())));
        }
        out.into_iter()
            .map(|(c, mut v)| {
                v.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.name.cmp(&b.1.name)));
                (c, v.into_iter().map(|(_, s)| s).collect())
            })
            .collect()
    }

    fn tool_summaries(&self) -> BTreeMap<String, ToolSummary> {
        self.list()
            .iter()
            .map(|t| (t.spec().runtime_name.to_string(), summary(t.spec())))
            .collect()
    }

    fn tool_metadata(&self, name: &str) -> Option<ToolMetadata> {
        self.get(name).map(|t| metadata_of(t.spec()))
    }

    fn usage_guide(&self, name: &str) -> Option<String> {
        self.tool_metadata(name).and_then(|m| m.usage_guide)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::{GlobTool, GrepTool, ReadFileTool};
    use pretty_assertions::assert_eq;

    #[test]
    fn capabilities_map_onto_the_seed_categories() {
        assert_eq!(
            ToolCategory::of_capability("filesystem"),
            ToolCategory::Sandbox
        );
        assert_eq!(ToolCategory::of_capability("web"), ToolCategory::Search);
        assert_eq!(
            ToolCategory::of_capability("agents"),
            ToolCategory::AgentBuilder
        );
        assert_eq!(ToolCategory::of_capability("memory"), ToolCategory::Core);
        assert_eq!(
            ToolCategory::of_capability("mcp:github"),
            ToolCategory::Utility
        );
    }

    #[test]
    fn a_subset_of_a_groups_functions_can_be_registered() {
        let mut registry = ToolRegistry::new();
        let group: Vec<Arc<dyn Tool>> = vec![
            Arc::new(ReadFileTool::new()),
            Arc::new(GlobTool::new()),
            Arc::new(GrepTool::new()),
        ];
        let added = registry
            .register_functions(group.clone(), Some(&["read_file", "GrepTool"]))
            .unwrap();
        assert_eq!(added, ["read_file", "grep_search"]);
        assert!(registry.get("glob_search").is_none());
        let err = registry
            .register_functions(group, Some(&["no_such_function"]))
            .unwrap_err();
        assert!(err.to_string().contains("no_such_function"), "{err}");
    }

    #[test]
    fn summaries_and_categories_cover_every_tool_sorted_by_weight() {
        let registry = crate::default_registry();
        let summaries = registry.tool_summaries();
        assert_eq!(
            summaries["read_file"].display_name,
            registry.get("read_file").unwrap().spec().display_name
        );
        let sandbox: Vec<String> = registry.tools_by_category()[&ToolCategory::Sandbox]
            .iter()
            .map(|s| s.name.clone())
            .collect();
        assert_eq!(&sandbox[..2], ["read_file", "write_file"]);
        assert_eq!(registry.usage_guide("GlobTool"), None);
    }
}
