//! MCP servers as toolsets: their tools as [`Tool`]s (always deferred; every call goes through
//! the permission engine as `ToolAccess::Other`), the SQLite schema cache, and the runtime's
//! MCP API (what ConfigView's MCP panel and `suzent mcp` use).

use crate::error::RuntimeError;
use crate::toolset::Toolset;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use suzent_mcp::{
    CachedSchemas, McpError, McpRegistry, McpServerConfig, McpServerInfo, McpToolInfo,
    McpToolStatus, RemoteTool, SchemaCache, qualify_all,
};
use suzent_permissions::ToolAccess;
use suzent_store::{McpSchemaRow, Store};
use suzent_tools::{Capability, CatalogTool, Tool, ToolContext, ToolError, ToolSpec};

/// Capability id of a server's tools (`mcp:fs`).
pub(crate) fn mcp_capability(server: &str) -> String {
    format!("mcp:{server}")
}

/// `ToolSpec` holds `&'static str`s (built-in tools are static). MCP names and descriptions are
/// interned: each distinct string is leaked once per process, so memory grows only with the
/// number of distinct tools ever seen, not with calls or refreshes.
fn intern(s: &str) -> &'static str {
    static TABLE: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut table = TABLE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(found) = table.get(s) {
        return found;
    }
    let leaked: &'static str = Box::leak(s.to_string().into_boxed_str());
    table.insert(leaked);
    leaked
}

/// One tool of an MCP server.
pub(crate) struct McpTool {
    spec: ToolSpec,
    server: String,
    tool: String,
    mcp: McpRegistry,
}

impl McpTool {
    pub(crate) fn new(info: &McpToolInfo, mcp: McpRegistry) -> McpTool {
        let name = intern(&info.qualified_name);
        let description = if info.description.trim().is_empty() {
            format!(
                "Tool '{}' of MCP server '{}'.",
                info.tool_name, info.toolkit_slug
            )
        } else {
            info.description.clone()
        };
        McpTool {
            spec: ToolSpec {
                runtime_name: name,
                class_name: name,
                capability: intern(&mcp_capability(&info.toolkit_slug)),
                display_name: intern(info.title.as_deref().unwrap_or(&info.tool_name)),
                description: intern(&description),
                requires_approval: info.requires_approval,
                deferrable: true,
                parameters: info.schema.clone(),
            },
            server: info.toolkit_slug.clone(),
            tool: info.tool_name.clone(),
            mcp,
        }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &Value, _ctx: &ToolContext) -> Result<ToolAccess, ToolError> {
        if !(args.is_object() || args.is_null()) {
            return Err(ToolError::InvalidArguments(
                "the arguments must be a JSON object".into(),
            ));
        }
        Ok(ToolAccess::Other)
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let call = self.mcp.call(&self.server, &self.tool, args);
        let out = tokio::select! {
            r = call => r,
            _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        match out {
            Ok(o) if o.is_error => Err(ToolError::Failed(o.text)),
            Ok(o) => Ok(o.text),
            Err(e) => Err(ToolError::Failed(e.to_string())),
        }
    }
}

/// The MCP schema cache in the SQLite store.
pub(crate) struct StoreSchemaCache(pub(crate) Store);

#[async_trait]
impl SchemaCache for StoreSchemaCache {
    async fn load(&self, server: &str) -> Result<Option<CachedSchemas>, McpError> {
        let Some(row) = self
            .0
            .mcp_schemas(server)
            .await
            .map_err(|e| McpError::Cache(e.to_string()))?
        else {
            return Ok(None);
        };
        let tools: Vec<RemoteTool> = match serde_json::from_value(row.tools) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(server, "ignoring an unreadable MCP schema cache entry: {e}");
                return Ok(None);
            }
        };
        Ok(Some(CachedSchemas {
            fingerprint: row.fingerprint,
            fetched_at: row.fetched_at,
            tools,
        }))
    }

    async fn store(&self, server: &str, entry: &CachedSchemas) -> Result<(), McpError> {
        let row = McpSchemaRow {
            fingerprint: entry.fingerprint.clone(),
            tools: serde_json::to_value(&entry.tools)
                .map_err(|e| McpError::Cache(e.to_string()))?,
            fetched_at: entry.fetched_at,
        };
        self.0
            .put_mcp_schemas(server, &row)
            .await
            .map_err(|e| McpError::Cache(e.to_string()))
    }

    async fn invalidate(&self, server: Option<&str>) -> Result<(), McpError> {
        self.0
            .invalidate_mcp_schemas(server)
            .await
            .map_err(|e| McpError::Cache(e.to_string()))
    }
}

/// The result of [`crate::Runtime::test_mcp_server`].
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpTestResult {
    /// The server.
    pub server: String,
    /// Its tools, as listed on a fresh connection.
    pub tools: Vec<McpTestTool>,
}

/// One tool listed by [`crate::Runtime::test_mcp_server`].
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpTestTool {
    /// The server's name for it.
    pub name: String,
    /// The name the model would see (qualified by this server alone; another server's tools
    /// can add a hash suffix on collision).
    pub qualified_name: String,
    /// Description.
    pub description: String,
    /// `readOnlyHint`.
    pub read_only_hint: Option<bool>,
}

/// The result of [`crate::Runtime::import_mcp_servers`].
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpImport {
    /// Servers added.
    pub added: Vec<String>,
    /// Servers skipped because the name already existed.
    pub skipped: Vec<String>,
}

/// The MCP service: the servers of `mcp.json`, their tools and the schema cache, over the
/// toolset that holds the registry.
pub(crate) struct McpService {
    toolset: Arc<Toolset>,
}

impl McpService {
    /// The service over `toolset`'s MCP registry.
    pub(crate) fn new(toolset: Arc<Toolset>) -> McpService {
        McpService { toolset }
    }

    fn mcp(&self) -> &McpRegistry {
        &self.toolset.mcp
    }

    /// The configured MCP servers with their state and tools (ConfigView's MCP panel).
    pub(crate) fn mcp_servers(&self) -> Vec<McpServerInfo> {
        self.mcp().servers()
    }

    /// Adds an MCP server to `mcp.json`. Its tools are listed when first needed.
    pub(crate) fn add_mcp_server(
        &self,
        name: &str,
        config: McpServerConfig,
    ) -> Result<McpServerInfo, RuntimeError> {
        self.mcp().add_server(name, config)?;
        self.mcp_server(name)
    }

    fn mcp_server(&self, name: &str) -> Result<McpServerInfo, RuntimeError> {
        self.mcp_servers()
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| McpError::UnknownServer(name.to_string()).into())
    }

    /// Removes an MCP server (its connection is closed and its cached schemas dropped).
    pub(crate) async fn remove_mcp_server(&self, name: &str) -> Result<(), RuntimeError> {
        Ok(self.mcp().remove_server(name).await?)
    }

    /// Enables or disables an MCP server.
    pub(crate) fn set_mcp_server_enabled(
        &self,
        name: &str,
        enabled: bool,
    ) -> Result<McpServerInfo, RuntimeError> {
        self.mcp().set_enabled(name, enabled)?;
        self.mcp_server(name)
    }

    /// Marks an MCP server trusted (its `readOnlyHint` tools run without asking in `default`
    /// mode) or not.
    pub(crate) fn set_mcp_server_trusted(
        &self,
        name: &str,
        trusted: bool,
    ) -> Result<McpServerInfo, RuntimeError> {
        self.mcp().set_trusted(name, trusted)?;
        self.mcp_server(name)
    }

    /// Connects to a server on a fresh connection and lists its tools (`suzent mcp test`).
    pub(crate) async fn test_mcp_server(&self, name: &str) -> Result<McpTestResult, RuntimeError> {
        let tools = self.mcp().test_server(name).await?;
        let pairs: Vec<(&str, &str)> = tools.iter().map(|t| (name, t.name.as_str())).collect();
        let names = qualify_all(&pairs);
        Ok(McpTestResult {
            server: name.to_string(),
            tools: tools
                .iter()
                .zip(names)
                .map(|(t, qualified_name)| McpTestTool {
                    name: t.name.clone(),
                    qualified_name,
                    description: t.description.clone(),
                    read_only_hint: t.read_only_hint,
                })
                .collect(),
        })
    }

    /// Lists one server's tools now on its pooled connection (started if needed) and caches
    /// their schemas; returns the server's tools as the registry knows them afterwards. A
    /// failure is recorded: the server shows `failed` with the error until its backoff ends.
    pub(crate) async fn refresh_mcp_server(
        &self,
        name: &str,
    ) -> Result<Vec<McpToolInfo>, RuntimeError> {
        self.mcp().refresh(name).await?;
        Ok(self
            .mcp()
            .snapshot()
            .iter()
            .filter(|t| t.toolkit_slug == name)
            .cloned()
            .collect())
    }

    /// The capability catalog ConfigView shows: the built-in capabilities, then one toolset per
    /// MCP server with known tools (id `mcp:SERVER`, tools by their model-facing names; servers
    /// that are disabled are left out). No I/O: servers not listed yet have no toolset.
    pub(crate) fn tool_catalog(&self) -> Vec<Capability> {
        let mut catalog = self.toolset.registry.catalog();
        let mut by_server: Vec<(String, Vec<CatalogTool>)> = Vec::new();
        for t in self.mcp().snapshot().iter() {
            if t.status == McpToolStatus::Disabled {
                continue;
            }
            let tool = CatalogTool {
                id: t.qualified_name.clone(),
                name: t.title.clone().unwrap_or_else(|| t.tool_name.clone()),
                description: t.description.clone(),
                runtime_name: t.qualified_name.clone(),
                requires_approval: t.requires_approval,
            };
            match by_server.iter_mut().find(|(s, _)| *s == t.toolkit_slug) {
                Some((_, tools)) => tools.push(tool),
                None => by_server.push((t.toolkit_slug.clone(), vec![tool])),
            }
        }
        catalog.extend(by_server.into_iter().map(|(server, tools)| Capability {
            id: mcp_capability(&server),
            label: format!("MCP: {server}"),
            description: format!(
                "Tools of the MCP server '{server}'. The agent activates them with tool_search when it needs them."
            ),
            tools,
        }));
        catalog
    }

    /// Imports the servers of a Claude Desktop configuration file.
    pub(crate) fn import_mcp_servers(&self, path: &Path) -> Result<McpImport, RuntimeError> {
        let (added, skipped) = self.mcp().import_claude_desktop(path)?;
        Ok(McpImport { added, skipped })
    }

    /// MCP discovery (seed 003): known MCP tools matching `filter`; with `load_schemas`,
    /// servers without fresh schemas are connected and listed first.
    pub(crate) async fn mcp_tools(
        &self,
        filter: Option<&str>,
        load_schemas: bool,
    ) -> Vec<McpToolInfo> {
        self.mcp().discover(filter, load_schemas).await
    }

    /// Lists every enabled server without fresh schemas and caches them (seed 003
    /// `prewarm_schemas`). Returns the number of MCP tools known afterwards.
    pub(crate) async fn prewarm_mcp_schemas(&self) -> usize {
        self.mcp().prewarm().await
    }

    /// Drops the cached MCP schemas of one server, or of all (seed 003 `invalidate_mcp_cache`).
    pub(crate) async fn invalidate_mcp_cache(
        &self,
        server: Option<&str>,
    ) -> Result<(), RuntimeError> {
        Ok(self.mcp().invalidate(server).await?)
    }

    /// The tools activated in a chat with `tool_search`, in activation order.
    pub(crate) async fn activated_tools(&self, chat_id: &str) -> Result<Vec<String>, RuntimeError> {
        Ok(self.toolset.store_activated(chat_id).await?)
    }

    /// Limits which tools `tool_search` may activate in a chat (for sub-agents): `Some(names)`
    /// allows only these (runtime or class names; an empty list allows none), `None` lifts the
    /// limit. Held in memory for the life of the runtime.
    pub(crate) fn limit_activation(&self, chat_id: &str, allowed: Option<Vec<String>>) {
        self.toolset.set_activation_limit(chat_id, allowed);
    }
}

/// The MCP registry of a runtime: `mcp.json` in the config directory, `${keychain:ENTRY}`
/// references resolved from the MCP namespace of the keychain only (account `mcp:ENTRY`, see
/// [`crate::provider::resolve::KeySource::mcp_secret`]; never a model provider's key), the
/// SQLite schema cache.
pub(crate) fn open_registry(
    config_path: std::path::PathBuf,
    keys: Arc<dyn crate::provider::resolve::KeySource>,
    store: Store,
) -> Result<McpRegistry, McpError> {
    let mut options = suzent_mcp::McpOptions::new(config_path);
    options.secrets = Arc::new(move |entry: &str| keys.mcp_secret(entry));
    options.cache = Some(Arc::new(StoreSchemaCache(store)));
    McpRegistry::open(options)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use std::path::PathBuf;
    use suzent_core::Config;
    use suzent_mcp::McpServerState;

    /// tests/mcp-servers (the npm servers are installed there by scripts/setup-tests).
    fn servers_dir() -> PathBuf {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp-servers");
        assert!(
            dir.join("node_modules/@modelcontextprotocol/server-everything")
                .is_dir(),
            "the npm MCP servers are not installed: run `npm ci` in {} (scripts/setup-tests does)",
            dir.display()
        );
        dir
    }

    /// Our misbehaving stdio server (banner on stdout, odd schemas), labelled `label`.
    fn misbehaving(label: &str) -> McpServerConfig {
        McpServerConfig::stdio(
            "node",
            vec![
                servers_dir().join("misbehaving.mjs").display().to_string(),
                label.into(),
            ],
        )
    }

    /// `@modelcontextprotocol/server-everything` over stdio.
    fn everything() -> McpServerConfig {
        let script = servers_dir()
            .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        McpServerConfig::stdio("node", vec![script.display().to_string(), "stdio".into()])
    }

    #[tokio::test]
    async fn an_added_server_is_written_to_mcp_json_and_tested_on_a_fresh_connection()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let mcp = s.mcp();
        let added = mcp.add_mcp_server("mail", misbehaving("mail"))?;
        assert_eq!(
            (added.name.as_str(), added.state, added.tools.clone()),
            ("mail", McpServerState::Idle, Vec::<String>::new())
        );
        let written: Value = serde_json::from_str(&std::fs::read_to_string(
            s.paths.config_dir.join("mcp.json"),
        )?)?;
        assert_eq!(
            written["mcpServers"]["mail"]["command"],
            json!("node"),
            "{written}"
        );
        let tested = mcp.test_mcp_server("mail").await?;
        let whoami = tested
            .tools
            .iter()
            .find(|t| t.name == "whoami")
            .cloned()
            .expect("whoami listed");
        assert_eq!(
            (
                tested.server.as_str(),
                tested.tools.len(),
                whoami.qualified_name.as_str(),
                whoami.read_only_hint
            ),
            ("mail", 7, "mcp__mail__whoami", Some(true))
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_refreshed_servers_tools_join_the_catalog_are_cached_and_run() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let mcp = s.mcp();
        mcp.add_mcp_server("everything", everything())?;
        let tools = mcp.refresh_mcp_server("everything").await?;
        assert!(
            tools
                .iter()
                .any(|t| t.qualified_name == "mcp__everything__echo"),
            "{tools:?}"
        );
        assert!(s.store.mcp_schemas("everything").await?.is_some());
        let catalog = mcp.tool_catalog();
        let toolset = catalog
            .iter()
            .find(|c| c.id == "mcp:everything")
            .expect("a toolset for the server");
        assert_eq!(
            (toolset.label.as_str(), toolset.tools.len()),
            ("MCP: everything", tools.len())
        );
        // The tool runs on the server through the toolset, as a turn calls it.
        let chat = s.chat().await;
        let echo = s.toolset.get("mcp__everything__echo").expect("echo tool");
        let out = echo
            .call(
                json!({"message": "hello from a test"}),
                &s.tool_context(&chat),
            )
            .await?;
        assert!(out.contains("hello from a test"), "{out}");
        mcp.invalidate_mcp_cache(Some("everything")).await?;
        assert_eq!(s.store.mcp_schemas("everything").await?, None);
        Ok(())
    }

    #[tokio::test]
    async fn a_disabled_server_leaves_the_catalog_and_a_removed_one_is_gone() -> anyhow::Result<()>
    {
        let s = TestServices::open(Config::default()).await;
        let mcp = s.mcp();
        mcp.add_mcp_server("mail", misbehaving("mail"))?;
        mcp.refresh_mcp_server("mail").await?;
        let has_toolset = |mcp: &McpService| mcp.tool_catalog().iter().any(|c| c.id == "mcp:mail");
        assert!(has_toolset(&mcp));
        let disabled = mcp.set_mcp_server_enabled("mail", false)?;
        assert_eq!(disabled.state, McpServerState::Disabled);
        assert!(!has_toolset(&mcp));
        mcp.remove_mcp_server("mail").await?;
        assert_eq!(
            (mcp.mcp_servers(), s.store.mcp_schemas("mail").await?),
            (Vec::new(), None)
        );
        let err = mcp.set_mcp_server_enabled("mail", true).unwrap_err();
        assert!(err.to_string().contains("mail"), "{err}");
        Ok(())
    }
}
