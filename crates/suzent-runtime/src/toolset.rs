//! The tools of a runtime and which of them each chat has loaded (seed 000 "Deferred
//! (AI-Activated) Tools").
//!
//! A chat's request carries its selected tools, the tools activated in it with `tool_search`
//! (stored, so they last for the session and survive a restart) and `tool_search` itself.
//! Everything else that is deferrable (built-in tools not selected, every MCP tool) waits in
//! `tool_search`'s catalog; `deferrable = false` tools are never there.

use crate::error::RuntimeError;
use crate::event_bus::Events;
use crate::mcp::{McpTool, mcp_capability};
use crate::rules::{RuleScope, RuleService};
use std::collections::BTreeMap;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use suzent_core::{AgentEvent, Behavior, RuleMatcher};
use suzent_mcp::{McpRegistry, McpToolStatus};
use suzent_store::Store;
use suzent_tools::{
    RegistryExt, SearchEntry, Tool, ToolCatalogView, ToolCategory, ToolError, ToolIndex,
    ToolMetadata, ToolRegistry, ToolSearchHost, ToolSearchTool, ToolSummary, metadata_of,
};

/// Runtime name of the meta tool that is always in the request.
pub(crate) const TOOL_SEARCH: &str = "tool_search";

type McpTools = Arc<HashMap<String, Arc<dyn Tool>>>;

/// Built-in and MCP tools, activations and activation limits.
pub(crate) struct Toolset {
    /// The built-in tools, `tool_search` included.
    pub(crate) registry: ToolRegistry,
    /// The MCP servers.
    pub(crate) mcp: McpRegistry,
    store: Store,
    events: Events,
    /// The rules in force (deny rules block activation).
    rules: Arc<RuleService>,
    mcp_tools: Mutex<Option<(u64, McpTools)>>,
    index: Mutex<Option<(u64, Arc<ToolIndex>)>>,
    /// The user's selection per chat, as the running turn computed it.
    selections: Mutex<HashMap<String, Vec<String>>>,
    /// Chats (sub-agents) that may activate only these tools; an empty set: none.
    limits: Mutex<HashMap<String, HashSet<String>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Toolset {
    /// Builds the toolset around `registry` (the built-in tools), adding `tool_search`.
    pub(crate) fn new(
        mut registry: ToolRegistry,
        mcp: McpRegistry,
        store: Store,
        events: Events,
        rules: Arc<RuleService>,
    ) -> Arc<Toolset> {
        Arc::new_cyclic(|weak: &Weak<Toolset>| {
            let host: Arc<dyn ToolSearchHost> = Arc::new(Host(weak.clone()));
            if let Err(e) = registry.register(Arc::new(ToolSearchTool::new(host))) {
                tracing::error!("tool_search not registered: {e}");
            }
            Toolset {
                registry,
                mcp,
                store,
                events,
                rules,
                mcp_tools: Mutex::new(None),
                index: Mutex::new(None),
                selections: Mutex::new(HashMap::new()),
                limits: Mutex::new(HashMap::new()),
            }
        })
    }

    /// The MCP tools of enabled servers, by model-facing name (rebuilt when the MCP registry
    /// changes).
    pub(crate) fn mcp_tools(&self) -> McpTools {
        let generation = self.mcp.generation();
        let mut cached = lock(&self.mcp_tools);
        if let Some((g, tools)) = cached.as_ref()
            && *g == generation
        {
            return Arc::clone(tools);
        }
        let tools: HashMap<String, Arc<dyn Tool>> = self
            .mcp
            .snapshot()
            .iter()
            .filter(|t| t.status != McpToolStatus::Disabled)
            .map(|t| {
                let tool: Arc<dyn Tool> = Arc::new(McpTool::new(t, self.mcp.clone()));
                (t.qualified_name.clone(), tool)
            })
            .collect();
        let tools = Arc::new(tools);
        *cached = Some((generation, Arc::clone(&tools)));
        tools
    }

    /// Drops the derived caches (MCP tool wrappers, the search index); they are rebuilt on the
    /// next use.
    pub(crate) fn invalidate(&self) {
        *lock(&self.mcp_tools) = None;
        *lock(&self.index) = None;
    }

    /// A tool by runtime name, class name or MCP name.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.registry
            .get(name)
            .or_else(|| self.mcp_tools().get(name).cloned())
    }

    /// Connects MCP servers whose tools are not known yet (schemas loaded on first need).
    pub(crate) async fn ensure_discovered(&self) {
        if self.mcp.needs_discovery() {
            self.mcp.discover(None, true).await;
        }
    }

    /// The index of every deferrable tool (built-in and MCP).
    pub(crate) fn index(&self) -> Arc<ToolIndex> {
        let generation = self.mcp.generation();
        let mut cached = lock(&self.index);
        if let Some((g, index)) = cached.as_ref()
            && *g == generation
        {
            return Arc::clone(index);
        }
        let mut entries: Vec<SearchEntry> = self
            .registry
            .list()
            .iter()
            .map(|t| t.spec())
            .filter(|s| s.deferrable)
            .map(|s| SearchEntry {
                runtime_name: s.runtime_name.to_string(),
                class_name: s.class_name.to_string(),
                display_name: s.display_name.to_string(),
                description: s.description.to_string(),
                capability: s.capability.to_string(),
            })
            .collect();
        for t in self.mcp.snapshot().iter() {
            if t.status == McpToolStatus::Disabled {
                continue;
            }
            entries.push(SearchEntry {
                runtime_name: t.qualified_name.clone(),
                class_name: t.qualified_name.clone(),
                display_name: t.title.clone().unwrap_or_else(|| t.tool_name.clone()),
                description: format!("{} (MCP server {})", t.description, t.toolkit_slug),
                capability: mcp_capability(&t.toolkit_slug),
            });
        }
        let index = Arc::new(ToolIndex::build(entries));
        *cached = Some((generation, Arc::clone(&index)));
        index
    }

    /// Records the chat's selection (runtime names) for `tool_search`'s ENABLED section.
    pub(crate) fn set_selection(&self, chat_id: &str, selected: &[String]) {
        lock(&self.selections).insert(chat_id.to_string(), selected.to_vec());
    }

    /// Limits what a chat may activate (sub-agents): `Some(names)` only these (runtime or class
    /// names; empty: nothing), `None` lifts the limit.
    pub(crate) fn set_activation_limit(&self, chat_id: &str, allowed: Option<Vec<String>>) {
        let mut limits = lock(&self.limits);
        match allowed {
            Some(names) => {
                let set = names
                    .iter()
                    .map(|n| {
                        self.get(n)
                            .map_or_else(|| n.clone(), |t| t.spec().runtime_name.to_string())
                    })
                    .collect();
                limits.insert(chat_id.to_string(), set);
            }
            None => {
                limits.remove(chat_id);
            }
        }
    }

    /// The runtime names in the chat's request: the selection, `tool_search`, then the tools
    /// activated in the chat (known ones). An empty selection (`tools = []`) offers nothing:
    /// no `tool_search` and no activated tools, so the model gets no tools and no call syntax.
    pub(crate) async fn loaded(
        &self,
        chat_id: &str,
        selected: &[String],
    ) -> Result<Vec<String>, suzent_store::StoreError> {
        if selected.is_empty() {
            return Ok(Vec::new());
        }
        let mut names: Vec<String> = selected.to_vec();
        if !names.iter().any(|n| n == TOOL_SEARCH) {
            names.push(TOOL_SEARCH.to_string());
        }
        let activated = self.store.activated_tools(chat_id).await?;
        if activated.iter().any(|n| self.get(n).is_none()) {
            // An activated MCP tool whose server is not listed yet (e.g. after a restart).
            self.ensure_discovered().await;
        }
        for name in activated {
            if !names.contains(&name) && self.get(&name).is_some() {
                names.push(name);
            }
        }
        Ok(names)
    }

    /// The tools activated in a chat.
    pub(crate) async fn store_activated(
        &self,
        chat_id: &str,
    ) -> Result<Vec<String>, suzent_store::StoreError> {
        self.store.activated_tools(chat_id).await
    }

    /// Why this chat may not activate `runtime_name`, if it may not.
    async fn blocked(&self, chat_id: &str) -> Result<HashMap<String, String>, ToolError> {
        let rules = self
            .rules
            .in_force(RuleScope::Chat(chat_id))
            .await
            .map_err(|e| ToolError::Failed(format!("cannot read the permission rules: {e}")))?;
        let denied_all = rules.iter().any(|r| {
            r.behavior == Behavior::Deny && r.matcher == RuleMatcher::All && r.tool == "*"
        });
        let denied: HashSet<&str> = rules
            .iter()
            .filter(|r| r.behavior == Behavior::Deny && r.matcher == RuleMatcher::All)
            .map(|r| r.tool.as_str())
            .collect();
        let mut limit = lock(&self.limits).get(chat_id).cloned();
        if limit.is_none() {
            // Sub-agents stay limited to their profile's tools after a restart too: the limit
            // is derived from the stored agent link (fail closed: a store error allows none).
            limit = match self.store.agent_link(chat_id).await {
                Ok(Some(link)) if link.kind == "subagent" => {
                    match self.store.get_chat(chat_id).await {
                        Ok(Some(chat)) => Some(
                            chat.tools
                                .unwrap_or_default()
                                .iter()
                                .filter_map(|n| {
                                    self.get(n).map(|t| t.spec().runtime_name.to_string())
                                })
                                .collect(),
                        ),
                        _ => Some(HashSet::new()),
                    }
                }
                Ok(_) => None,
                Err(_) => Some(HashSet::new()),
            };
        }
        let mut blocked = HashMap::new();
        for e in self.index().entries() {
            let name = e.runtime_name.as_str();
            if denied_all || denied.contains(name) {
                blocked.insert(
                    name.to_string(),
                    "a permission rule denies every call of this tool".to_string(),
                );
            } else if let Some(allowed) = &limit
                && !allowed.contains(name)
            {
                let reason = if allowed.is_empty() {
                    "this agent may not activate tools".to_string()
                } else {
                    let mut list: Vec<&str> = allowed.iter().map(String::as_str).collect();
                    list.sort_unstable();
                    format!("this agent may only activate: {}", list.join(", "))
                };
                blocked.insert(name.to_string(), reason);
            }
        }
        Ok(blocked)
    }
}

/// `tool_search`'s view of the toolset (weak: the toolset owns the tool).
struct Host(Weak<Toolset>);

impl Host {
    fn toolset(&self) -> Result<Arc<Toolset>, ToolError> {
        self.0
            .upgrade()
            .ok_or_else(|| ToolError::Failed("the runtime is shutting down".into()))
    }
}

#[async_trait::async_trait]
impl ToolSearchHost for Host {
    async fn catalog(&self, chat_id: &str) -> Result<ToolCatalogView, ToolError> {
        let ts = self.toolset()?;
        ts.ensure_discovered().await;
        let enabled: Vec<String> = lock(&ts.selections)
            .get(chat_id)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|n| n != TOOL_SEARCH)
            .collect();
        let active: Vec<String> = ts
            .store
            .activated_tools(chat_id)
            .await
            .map_err(|e| ToolError::Failed(format!("cannot read the activated tools: {e}")))?
            .into_iter()
            .filter(|n| !enabled.contains(n))
            .collect();
        Ok(ToolCatalogView {
            enabled,
            active,
            index: ts.index(),
            blocked: ts.blocked(chat_id).await?,
        })
    }

    async fn activate(&self, chat_id: &str, runtime_name: &str) -> Result<bool, ToolError> {
        let ts = self.toolset()?;
        let tool = ts
            .get(runtime_name)
            .ok_or_else(|| ToolError::Failed(format!("unknown tool '{runtime_name}'")))?;
        let spec = tool.spec();
        if !spec.deferrable {
            return Err(ToolError::Failed(format!(
                "{runtime_name} is not a deferred tool and cannot be activated"
            )));
        }
        if let Some(reason) = ts.blocked(chat_id).await?.get(spec.runtime_name) {
            return Err(ToolError::Failed(format!(
                "{runtime_name} cannot be activated: {reason}"
            )));
        }
        let new = ts
            .store
            .activate_tool(chat_id, spec.runtime_name)
            .await
            .map_err(|e| ToolError::Failed(format!("cannot store the activation: {e}")))?;
        if new {
            ts.events.emit(AgentEvent::ToolActivated {
                chat_id: chat_id.to_string(),
                tool_name: spec.runtime_name.to_string(),
                class_name: spec.class_name.to_string(),
                display_name: spec.display_name.to_string(),
                capability: spec.capability.to_string(),
            });
        }
        Ok(new)
    }
}

/// Seed 003's registry API: tools by category, summaries, metadata and usage guides (built-in
/// and MCP tools), and cache invalidation.
impl Toolset {
    /// Every tool (built-in, and MCP tools known so far) by category (seed 003
    /// `get_tools_by_category`), each list sorted by weight then name.
    pub(crate) fn tools_by_category(&self) -> BTreeMap<ToolCategory, Vec<ToolSummary>> {
        let ts = self;
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
    pub(crate) fn tool_summaries(&self) -> BTreeMap<String, ToolSummary> {
        self.tools_by_category()
            .into_values()
            .flatten()
            .map(|s| (s.name.clone(), s))
            .collect()
    }

    /// The metadata of a tool by runtime, class or MCP name (seed 003
    /// `get_tool_metadata_summary`).
    pub(crate) fn tool_metadata(&self, name: &str) -> Result<ToolMetadata, RuntimeError> {
        self.get(name)
            .map(|t| metadata_of(t.spec()))
            .ok_or_else(|| RuntimeError::InvalidInput {
                field: "tool".into(),
                message: format!("unknown tool '{name}'"),
            })
    }

    /// The usage guide of a tool, if it has one (seed 003 `get_tool_usage_guide`).
    pub(crate) fn tool_usage_guide(&self, name: &str) -> Result<Option<String>, RuntimeError> {
        Ok(self.tool_metadata(name)?.usage_guide)
    }

    /// Drops the derived schema and function caches (MCP tool wrappers, the `tool_search`
    /// index) so they are rebuilt on next use (seed 003 `invalidate_schema_cache`,
    /// `invalidate_function_cache`). The MCP schema cache has its own
    /// [`crate::Runtime::invalidate_mcp_cache`].
    pub(crate) fn invalidate_tool_caches(&self) {
        self.invalidate();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use chrono::Utc;
    use pretty_assertions::assert_eq;
    use suzent_core::{Rule, RuleDestination};

    /// A built-in deferrable tool that is not in `selected`.
    fn deferred(ts: &Toolset, selected: &[String]) -> String {
        ts.registry
            .list()
            .iter()
            .map(|t| t.spec())
            .find(|s| s.deferrable && !selected.iter().any(|n| n == s.runtime_name))
            .map(|s| s.runtime_name.to_string())
            .expect("a deferrable built-in tool")
    }

    fn host(ts: &Arc<Toolset>) -> Host {
        Host(Arc::downgrade(ts))
    }

    #[tokio::test]
    async fn a_chat_loads_its_selection_then_tool_search_then_what_it_activated()
    -> anyhow::Result<()> {
        let s = TestServices::open(Default::default()).await;
        let chat = s.chat().await;
        let selected = vec!["read_file".to_string()];
        assert_eq!(
            s.toolset.loaded(&chat.id, &selected).await?,
            vec!["read_file", TOOL_SEARCH]
        );
        let extra = deferred(&s.toolset, &selected);
        assert!(host(&s.toolset).activate(&chat.id, &extra).await?);
        assert!(
            !host(&s.toolset).activate(&chat.id, &extra).await?,
            "a second activation is no news"
        );
        assert_eq!(
            s.toolset.loaded(&chat.id, &selected).await?,
            vec!["read_file".to_string(), TOOL_SEARCH.to_string(), extra]
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_rule_that_denies_every_call_of_a_tool_blocks_its_activation() -> anyhow::Result<()> {
        let s = TestServices::open(Default::default()).await;
        let chat = s.chat().await;
        let extra = deferred(&s.toolset, &[]);
        s.store
            .add_rule(&Rule {
                id: "deny".into(),
                tool: extra.clone(),
                behavior: Behavior::Deny,
                matcher: RuleMatcher::All,
                destination: RuleDestination::Global,
                chat_id: None,
                created_at: Utc::now(),
                description: None,
            })
            .await?;
        let err = host(&s.toolset)
            .activate(&chat.id, &extra)
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            ToolError::Failed(format!(
                "{extra} cannot be activated: a permission rule denies every call of this tool"
            ))
            .to_string()
        );
        assert_eq!(
            s.store.activated_tools(&chat.id).await?,
            Vec::<String>::new()
        );
        Ok(())
    }

    #[tokio::test]
    async fn an_agent_limited_to_no_tools_cannot_activate_any() -> anyhow::Result<()> {
        let s = TestServices::open(Default::default()).await;
        let chat = s.chat().await;
        let extra = deferred(&s.toolset, &[]);
        s.toolset.set_activation_limit(&chat.id, Some(Vec::new()));
        let err = host(&s.toolset)
            .activate(&chat.id, &extra)
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("this agent may not activate tools"),
            "{err}"
        );
        s.toolset.set_activation_limit(&chat.id, None);
        assert!(host(&s.toolset).activate(&chat.id, &extra).await?);
        Ok(())
    }

    #[tokio::test]
    async fn a_non_deferred_tool_cannot_be_activated() -> anyhow::Result<()> {
        let s = TestServices::open(Default::default()).await;
        let chat = s.chat().await;
        let err = host(&s.toolset)
            .activate(&chat.id, TOOL_SEARCH)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("is not a deferred tool"), "{err}");
        Ok(())
    }
}
