//! `tool_search` (seed 000): lists the chat's tools (ENABLED / ACTIVE / AVAILABLE TO ACTIVATE),
//! searches the deferred tools by free text, and activates one by its class or runtime name.
//! The chat's state and the activation itself belong to the host (the runtime), which checks
//! deny rules and sub-agent limits, stores the activation and announces it.

use crate::search::{SearchEntry, ToolIndex};
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::sync::Arc;
use suzent_permissions::ToolAccess;

/// At most this many AVAILABLE tools are listed without a query.
const LIST_LIMIT: usize = 50;
/// Default number of search results.
const DEFAULT_RESULTS: usize = 10;

/// Arguments of `tool_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchArgs {
    /// Omit to list the tools of this chat. An exact tool name (runtime name like
    /// `glob_search` or class name like `GlobTool`) activates that tool; any other text searches
    /// the tools that can be activated.
    #[serde(default)]
    pub query: Option<String>,
    /// Maximum number of search results (default 10, at most 50).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// A chat's view of the catalog, as the host computes it.
#[derive(Debug, Clone)]
pub struct ToolCatalogView {
    /// Runtime names the user selected for the chat.
    pub enabled: Vec<String>,
    /// Runtime names activated in this session.
    pub active: Vec<String>,
    /// Every deferrable tool (`deferrable = false` tools are never here).
    pub index: Arc<ToolIndex>,
    /// Tools that may not be activated here (denied by a rule, outside a sub-agent's limits),
    /// with the reason.
    pub blocked: HashMap<String, String>,
}

impl ToolCatalogView {
    fn blocked_reason(&self, name: &str) -> Option<&str> {
        self.blocked.get(name).map(String::as_str)
    }
}

/// What `tool_search` needs from its host.
#[async_trait]
pub trait ToolSearchHost: Send + Sync {
    /// The chat's catalog view.
    async fn catalog(&self, chat_id: &str) -> Result<ToolCatalogView, ToolError>;
    /// Activates `runtime_name` in the chat (stored, then announced with `tool_activated`).
    /// Refuses tools the chat may not activate. Returns whether it was newly activated.
    async fn activate(&self, chat_id: &str, runtime_name: &str) -> Result<bool, ToolError>;
}

/// The `tool_search` tool. Never deferrable: always in the request.
pub struct ToolSearchTool {
    spec: ToolSpec,
    host: Arc<dyn ToolSearchHost>,
}

impl ToolSearchTool {
    /// The tool, answering through `host`.
    pub fn new(host: Arc<dyn ToolSearchHost>) -> Self {
        ToolSearchTool {
            spec: ToolSpec::new::<ToolSearchArgs>(
                "tool_search",
                "ToolSearchTool",
                "agents",
                "Tool search",
                "Find and activate more tools. Without a query: lists the tools of this chat (ENABLED, ACTIVE, AVAILABLE TO ACTIVATE). With an exact tool name: activates it, and it can be called from your next step. With other text: searches the tools that can be activated.",
            )
            .deferrable(false),
            host,
        }
    }
}

fn line(out: &mut String, e: &SearchEntry) {
    let desc = suzent_core::text::truncate_chars(&e.description, 160, "…");
    let _ = writeln!(out, "- {} ({}): {}", e.runtime_name, e.class_name, desc);
}

fn describe(index: &ToolIndex, name: &str) -> Option<SearchEntry> {
    index.find_exact(name).map(|i| index.entries()[i].clone())
}

#[async_trait]
impl TypedTool for ToolSearchTool {
    type Args = ToolSearchArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &ToolSearchArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Other)
    }

    async fn call(&self, args: ToolSearchArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let view = self.host.catalog(&ctx.chat_id).await?;
        let loaded: HashSet<&str> = view
            .enabled
            .iter()
            .chain(&view.active)
            .map(String::as_str)
            .collect();
        let query = args.query.as_deref().map(str::trim).unwrap_or_default();
        if query.is_empty() {
            let mut out = String::from("ENABLED (user-selected):\n");
            for name in &view.enabled {
                match describe(&view.index, name) {
                    Some(e) => line(&mut out, &e),
                    None => {
                        let _ = writeln!(out, "- {name}");
                    }
                }
            }
            out.push_str("\nACTIVE (activated this session):\n");
            if view.active.is_empty() {
                out.push_str("(none)\n");
            }
            for name in &view.active {
                match describe(&view.index, name) {
                    Some(e) => line(&mut out, &e),
                    None => {
                        let _ = writeln!(out, "- {name}");
                    }
                }
            }
            out.push_str("\nAVAILABLE TO ACTIVATE:\n");
            let available: Vec<&SearchEntry> = view
                .index
                .entries()
                .iter()
                .filter(|e| {
                    !loaded.contains(e.runtime_name.as_str())
                        && view.blocked_reason(&e.runtime_name).is_none()
                })
                .collect();
            if available.is_empty() {
                out.push_str("(none)\n");
            }
            for e in available.iter().take(LIST_LIMIT) {
                line(&mut out, e);
            }
            if available.len() > LIST_LIMIT {
                let _ = writeln!(
                    out,
                    "… and {} more: call tool_search with words describing what you need.",
                    available.len() - LIST_LIMIT
                );
            }
            out.push_str(
                "\nActivate a tool with tool_search(query=\"<exact name>\"); it is callable from your next step.",
            );
            return Ok(out);
        }
        if let Some(i) = view.index.find_exact(query) {
            let entry = view.index.entries()[i].clone();
            if loaded.contains(entry.runtime_name.as_str()) {
                return Ok(format!(
                    "{} is already loaded in this chat; call it directly.",
                    entry.runtime_name
                ));
            }
            if let Some(reason) = view.blocked_reason(&entry.runtime_name) {
                return Err(ToolError::Failed(format!(
                    "{} cannot be activated: {reason}",
                    entry.runtime_name
                )));
            }
            self.host
                .activate(&ctx.chat_id, &entry.runtime_name)
                .await?;
            let mut out = format!(
                "Activated {} ({}). It is callable from your next step.\n",
                entry.runtime_name, entry.display_name
            );
            line(&mut out, &entry);
            return Ok(out);
        }
        let limit = args
            .limit
            .map_or(DEFAULT_RESULTS, |l| l.clamp(1, 50) as usize);
        let hits: Vec<&SearchEntry> = view
            .index
            .search(query, limit + view.blocked.len())
            .into_iter()
            .map(|h| &view.index.entries()[h.entry])
            .filter(|e| view.blocked_reason(&e.runtime_name).is_none())
            .take(limit)
            .collect();
        if hits.is_empty() {
            return Ok(format!(
                "No tool matches '{query}'. Call tool_search without a query to list the tools."
            ));
        }
        let mut out = format!("Tools matching '{query}', best first:\n");
        for e in &hits {
            let mark = if loaded.contains(e.runtime_name.as_str()) {
                " [loaded]"
            } else {
                ""
            };
            let desc = suzent_core::text::truncate_chars(&e.description, 160, "…");
            let _ = writeln!(out, "- {}{mark} ({}): {desc}", e.runtime_name, e.class_name);
        }
        out.push_str(
            "\nActivate one with tool_search(query=\"<exact name>\"); it is callable from your next step.",
        );
        Ok(out)
    }
}
