//! Seed 003's registry API on the runtime: tools by category, summaries, metadata and usage
//! guides (built-in and MCP tools), and cache invalidation.

use crate::error::RuntimeError;
use crate::runtime::Runtime;
use std::collections::BTreeMap;
use suzent_tools::{RegistryExt, ToolCategory, ToolMetadata, ToolSummary, metadata_of};

impl Runtime {
    /// Every tool (built-in, and MCP tools known so far) by category (seed 003
    /// `get_tools_by_category`), each list sorted by weight then name.
    pub fn tools_by_category(&self) -> BTreeMap<ToolCategory, Vec<ToolSummary>> {
        let ts = self.toolset();
        let mut out = ts.registry.tools_by_category();
        let mut mcp: Vec<ToolSummary> = ts
            .mcp_tools()
            .values()
            .map(|t| {
                let m = metadata_of(t.spec());
                ToolSummary {
                    name: m.name,
                    display_name: m.display_name,
                    description: m.description,
                }
            })
            .collect();
        mcp.sort_by(|a, b| a.name.cmp(&b.name));
        out.entry(ToolCategory::Utility).or_default().extend(mcp);
        out
    }

    /// Every tool's summary by runtime name (seed 003 `get_all_tool_summaries`).
    pub fn tool_summaries(&self) -> BTreeMap<String, ToolSummary> {
        self.tools_by_category()
            .into_values()
            .flatten()
            .map(|s| (s.name.clone(), s))
            .collect()
    }

    /// The metadata of a tool by runtime, class or MCP name (seed 003
    /// `get_tool_metadata_summary`).
    pub fn tool_metadata(&self, name: &str) -> Result<ToolMetadata, RuntimeError> {
        self.toolset()
            .get(name)
            .map(|t| metadata_of(t.spec()))
            .ok_or_else(|| RuntimeError::InvalidInput {
                field: "tool".into(),
                message: format!("unknown tool '{name}'"),
            })
    }

    /// The usage guide of a tool, if it has one (seed 003 `get_tool_usage_guide`).
    pub fn tool_usage_guide(&self, name: &str) -> Result<Option<String>, RuntimeError> {
        Ok(self.tool_metadata(name)?.usage_guide)
    }

    /// Drops the derived schema and function caches (MCP tool wrappers, the `tool_search`
    /// index) so they are rebuilt on next use (seed 003 `invalidate_schema_cache`,
    /// `invalidate_function_cache`). The MCP schema cache has its own
    /// [`Runtime::invalidate_mcp_cache`].
    pub fn invalidate_tool_caches(&self) {
        self.toolset().invalidate();
    }
}
