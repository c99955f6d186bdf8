//! The MCP registry (seed 003 "MCP Tool Registration Flow"): configured servers, one pooled
//! connection per server reused by every call and closed when idle, discovery with a filter,
//! just-in-time schema loading with a persisted 24 h cache, restart with backoff after a failure,
//! and `tools/list_changed` refreshes.

use crate::client::{CallOutput, ListChanged, McpConnection, RemoteTool, SecretLookup};
use crate::config::{McpConfigFile, McpServerConfig, validate_name};
use crate::error::McpError;
use crate::naming::qualify_all;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

/// How long cached schemas stay valid.
pub const SCHEMA_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// How long an unused connection stays open.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Status of an MCP tool (seed 003 `MCPToolStatus`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum McpToolStatus {
    /// Known (from the schema cache or an earlier listing); its server is not connected.
    Discovered,
    /// Its server is connected and listed it.
    Active,
    /// Its server failed to start or stopped; see the server's last error.
    Failed,
    /// Its server is disabled.
    Disabled,
}

/// One MCP tool (seed 003 `MCPToolInfo`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolInfo {
    /// The server's name for the tool (`send_email`), used in calls.
    pub tool_name: String,
    /// The server (toolkit) name from `mcp.json`.
    pub toolkit_slug: String,
    /// The name sent to the model (`mcp__mail__send_email`).
    pub qualified_name: String,
    /// Human title, if the server gave one.
    pub title: Option<String>,
    /// Description.
    pub description: String,
    /// Status.
    pub status: McpToolStatus,
    /// Cached JSON Schema of the arguments.
    pub schema: Value,
    /// `readOnlyHint` as the server declared it.
    pub read_only_hint: Option<bool>,
    /// Whether a call asks in `default` mode: false only for a `readOnlyHint` tool of a server
    /// the user marked trusted.
    pub requires_approval: bool,
    /// The server's configuration, secrets replaced by `***`.
    pub server_config: McpServerConfig,
}

/// Status of a server.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpServerState {
    /// Configured, not connected now.
    Idle,
    /// Connected.
    Running,
    /// The last start or call failed (see `lastError`); retried after a backoff.
    Failed,
    /// Disabled by the user.
    Disabled,
}

/// A configured server as the UI shows it.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerInfo {
    /// Name.
    pub name: String,
    /// Configuration, secrets replaced by `***`.
    pub config: McpServerConfig,
    /// `stdio` or `http`.
    pub transport: String,
    /// State.
    pub state: McpServerState,
    /// The last failure, if the server is failed.
    pub last_error: Option<String>,
    /// Model-facing names of its known tools.
    pub tools: Vec<String>,
    /// When its tool list was fetched (from the server or the cache).
    pub tools_fetched_at: Option<DateTime<Utc>>,
}

/// A server's tool list as persisted by a [`SchemaCache`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedSchemas {
    /// [`McpServerConfig::fingerprint`] of the configuration they were fetched with.
    pub fingerprint: String,
    /// When they were fetched.
    pub fetched_at: DateTime<Utc>,
    /// The tools.
    pub tools: Vec<RemoteTool>,
}

/// Persistence of tool schemas per server (SQLite in the runtime).
#[async_trait]
pub trait SchemaCache: Send + Sync {
    /// The cached entry of `server`, if any.
    async fn load(&self, server: &str) -> Result<Option<CachedSchemas>, McpError>;
    /// Replaces the entry of `server`.
    async fn store(&self, server: &str, entry: &CachedSchemas) -> Result<(), McpError>;
    /// Removes the entry of `server`, or every entry.
    async fn invalidate(&self, server: Option<&str>) -> Result<(), McpError>;
}

/// How a registry behaves.
#[derive(Clone)]
pub struct McpOptions {
    /// The `mcp.json` file.
    pub config_path: PathBuf,
    /// Keychain lookups for `${keychain:ENTRY}` references.
    pub secrets: SecretLookup,
    /// The persisted schema cache, if any.
    pub cache: Option<Arc<dyn SchemaCache>>,
    /// Unused connections are closed after this long.
    pub idle_timeout: Duration,
    /// First backoff after a failure (doubles per consecutive failure).
    pub backoff_base: Duration,
    /// Longest backoff.
    pub backoff_max: Duration,
    /// How long cached schemas stay valid.
    pub schema_ttl: Duration,
}

impl McpOptions {
    /// Defaults: no cache, no secrets, 10 min idle timeout, backoff 1 s doubling up to 60 s,
    /// 24 h schema TTL.
    pub fn new(config_path: impl Into<PathBuf>) -> Self {
        McpOptions {
            config_path: config_path.into(),
            secrets: Arc::new(|_| None),
            cache: None,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            backoff_base: Duration::from_secs(1),
            backoff_max: Duration::from_secs(60),
            schema_ttl: SCHEMA_TTL,
        }
    }
}

#[derive(Default)]
struct SlotState {
    tools: Option<Vec<RemoteTool>>,
    fetched_at: Option<DateTime<Utc>>,
    last_error: Option<String>,
    failures: u32,
    retry_at: Option<Instant>,
    last_used: Option<Instant>,
    running: bool,
}

struct Slot {
    name: String,
    config: McpServerConfig,
    conn: tokio::sync::Mutex<Option<Arc<McpConnection>>>,
    state: Mutex<SlotState>,
}

impl Slot {
    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

struct Inner {
    options: McpOptions,
    servers: RwLock<BTreeMap<String, Arc<Slot>>>,
    generation: AtomicU64,
    snapshot: Mutex<Option<(u64, Arc<Vec<McpToolInfo>>)>>,
    file_lock: Mutex<()>,
}

/// The MCP registry. Cheap to clone; clones share connections and state.
#[derive(Clone)]
pub struct McpRegistry {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRegistry")
            .field("config", &self.inner.options.config_path)
            .finish()
    }
}

impl McpRegistry {
    /// Reads `mcp.json` (a missing file means no servers). Connects to nothing yet. Inside a
    /// tokio runtime, starts the task that closes idle connections.
    pub fn open(options: McpOptions) -> Result<McpRegistry, McpError> {
        let file = McpConfigFile::load(&options.config_path)?;
        let registry = McpRegistry {
            inner: Arc::new(Inner {
                options,
                servers: RwLock::new(BTreeMap::new()),
                generation: AtomicU64::new(1),
                snapshot: Mutex::new(None),
                file_lock: Mutex::new(()),
            }),
        };
        registry.apply(file);
        if tokio::runtime::Handle::try_current().is_ok() {
            let weak = Arc::downgrade(&registry.inner);
            let period = (registry.inner.options.idle_timeout / 4)
                .clamp(Duration::from_millis(100), Duration::from_secs(60));
            tokio::spawn(reap_idle(weak, period));
        }
        Ok(registry)
    }

    /// The configuration file in use.
    pub fn config_path(&self) -> &Path {
        &self.inner.options.config_path
    }

    /// A counter that changes whenever the set of tools or their status changes.
    pub fn generation(&self) -> u64 {
        self.inner.generation.load(Ordering::SeqCst)
    }

    fn bump(&self) {
        bump(&self.inner);
    }

    fn slots(&self) -> Vec<Arc<Slot>> {
        self.inner
            .servers
            .read()
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default()
    }

    fn slot(&self, name: &str) -> Result<Arc<Slot>, McpError> {
        self.inner
            .servers
            .read()
            .ok()
            .and_then(|s| s.get(name).cloned())
            .ok_or_else(|| McpError::UnknownServer(name.to_string()))
    }

    /// Installs a configuration: unchanged servers keep their connection and tools.
    fn apply(&self, file: McpConfigFile) {
        let mut dropped = Vec::new();
        if let Ok(mut servers) = self.inner.servers.write() {
            let mut next = BTreeMap::new();
            for (name, config) in file.mcp_servers {
                match servers.remove(&name) {
                    Some(slot) if slot.config == config => {
                        next.insert(name, slot);
                    }
                    old => {
                        // Same tools (only `trusted`/`disabled` changed): keep the known list.
                        let mut state = SlotState::default();
                        if let Some(old) = &old
                            && old.config.fingerprint() == config.fingerprint()
                        {
                            let o = old.state();
                            state.tools = o.tools.clone();
                            state.fetched_at = o.fetched_at;
                        }
                        dropped.extend(old);
                        next.insert(
                            name.clone(),
                            Arc::new(Slot {
                                name,
                                config,
                                conn: tokio::sync::Mutex::new(None),
                                state: Mutex::new(state),
                            }),
                        );
                    }
                }
            }
            dropped.extend(servers.values().cloned());
            *servers = next;
        }
        for slot in dropped {
            close_slot(slot);
        }
        self.bump();
    }

    /// Re-reads `mcp.json`.
    pub fn reload(&self) -> Result<(), McpError> {
        let file = McpConfigFile::load(&self.inner.options.config_path)?;
        self.apply(file);
        Ok(())
    }

    fn edit_file(
        &self,
        f: impl FnOnce(&mut McpConfigFile) -> Result<(), McpError>,
    ) -> Result<(), McpError> {
        let _guard = self
            .inner
            .file_lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let path = &self.inner.options.config_path;
        let mut file = McpConfigFile::load(path)?;
        f(&mut file)?;
        file.save(path)?;
        self.apply(file);
        Ok(())
    }

    /// Adds a server to `mcp.json`. The name must be new and the entry valid.
    pub fn add_server(&self, name: &str, config: McpServerConfig) -> Result<(), McpError> {
        validate_name(name)?;
        config.transport(name)?;
        self.edit_file(|file| {
            if file.mcp_servers.contains_key(name) {
                return Err(McpError::DuplicateServer(name.to_string()));
            }
            file.mcp_servers.insert(name.to_string(), config);
            Ok(())
        })
    }

    /// Removes a server from `mcp.json`, closes its connection and drops its cached schemas.
    pub async fn remove_server(&self, name: &str) -> Result<(), McpError> {
        self.edit_file(|file| {
            file.mcp_servers
                .remove(name)
                .map(|_| ())
                .ok_or_else(|| McpError::UnknownServer(name.to_string()))
        })?;
        if let Some(cache) = &self.inner.options.cache {
            cache.invalidate(Some(name)).await?;
        }
        Ok(())
    }

    /// Enables or disables a server (kept in the file as `"disabled": true`).
    pub fn set_enabled(&self, name: &str, enabled: bool) -> Result<(), McpError> {
        self.edit_file(|file| {
            let entry = file
                .mcp_servers
                .get_mut(name)
                .ok_or_else(|| McpError::UnknownServer(name.to_string()))?;
            entry.disabled = !enabled;
            Ok(())
        })
    }

    /// Marks a server trusted (its `readOnlyHint` annotations count) or not.
    pub fn set_trusted(&self, name: &str, trusted: bool) -> Result<(), McpError> {
        self.edit_file(|file| {
            let entry = file
                .mcp_servers
                .get_mut(name)
                .ok_or_else(|| McpError::UnknownServer(name.to_string()))?;
            entry.trusted = trusted;
            Ok(())
        })
    }

    /// Imports the servers of a Claude Desktop configuration file, each untrusted whatever the
    /// file says (the user marks one trusted with [`McpRegistry::set_trusted`] after reviewing
    /// it). Returns the names added; names that already exist are skipped (second list).
    pub fn import_claude_desktop(
        &self,
        path: &Path,
    ) -> Result<(Vec<String>, Vec<String>), McpError> {
        let servers = McpConfigFile::read_claude_desktop(path)?;
        let mut added = Vec::new();
        let mut skipped = Vec::new();
        self.edit_file(|file| {
            for (name, config) in servers {
                if file.mcp_servers.contains_key(&name) {
                    skipped.push(name);
                } else {
                    file.mcp_servers.insert(name.clone(), config);
                    added.push(name);
                }
            }
            Ok(())
        })?;
        Ok((added, skipped))
    }

    /// Every configured server with its state and known tools.
    pub fn servers(&self) -> Vec<McpServerInfo> {
        let tools = self.snapshot();
        self.slots()
            .into_iter()
            .map(|slot| {
                let state = slot.state();
                let transport = if slot.config.url.is_some() {
                    "http"
                } else {
                    "stdio"
                };
                McpServerInfo {
                    name: slot.name.clone(),
                    config: slot.config.redacted(),
                    transport: transport.into(),
                    state: server_state(&slot, &state),
                    last_error: state.last_error.clone(),
                    tools: tools
                        .iter()
                        .filter(|t| t.toolkit_slug == slot.name)
                        .map(|t| t.qualified_name.clone())
                        .collect(),
                    tools_fetched_at: state.fetched_at,
                }
            })
            .collect()
    }

    /// Loads cached schemas (fresh, and fetched with the current configuration) of every
    /// enabled server that has none in memory. Returns how many tools were loaded.
    pub async fn load_cache(&self) -> Result<usize, McpError> {
        let Some(cache) = self.inner.options.cache.clone() else {
            return Ok(0);
        };
        let mut loaded = 0;
        for slot in self.slots() {
            if slot.config.disabled || slot.state().tools.is_some() {
                continue;
            }
            let Some(entry) = cache.load(&slot.name).await? else {
                continue;
            };
            if entry.fingerprint != slot.config.fingerprint() || !self.fresh(entry.fetched_at) {
                continue;
            }
            let mut state = slot.state();
            if state.tools.is_none() {
                loaded += entry.tools.len();
                state.tools = Some(entry.tools);
                state.fetched_at = Some(entry.fetched_at);
            }
        }
        self.bump();
        Ok(loaded)
    }

    fn fresh(&self, at: DateTime<Utc>) -> bool {
        let age = Utc::now().signed_duration_since(at);
        age.to_std()
            .map(|a| a < self.inner.options.schema_ttl)
            .unwrap_or(true)
    }

    /// Whether some enabled server has no (fresh) tool list yet.
    pub fn needs_discovery(&self) -> bool {
        self.slots().iter().any(|slot| {
            let state = slot.state();
            !slot.config.disabled
                && state.retry_at.is_none_or(|t| t <= Instant::now())
                && match (&state.tools, state.fetched_at) {
                    (Some(_), Some(at)) => !self.fresh(at),
                    _ => true,
                }
        })
    }

    /// Discovery (seed 003 `get_discovery_info`): the known tools whose name, server or
    /// description contains `filter` (case-insensitive; all when `None`). With `load_schemas`,
    /// servers without a fresh tool list are connected (in parallel) and listed first; a
    /// server that fails is reported FAILED and does not stop the others.
    pub async fn discover(&self, filter: Option<&str>, load_schemas: bool) -> Vec<McpToolInfo> {
        if load_schemas {
            let mut set = tokio::task::JoinSet::new();
            for slot in self.slots() {
                if slot.config.disabled {
                    continue;
                }
                let fresh = {
                    let s = slot.state();
                    s.tools.is_some() && s.fetched_at.is_some_and(|at| self.fresh(at))
                };
                if !fresh {
                    let this = self.clone();
                    set.spawn(async move {
                        if let Err(e) = this.refresh_slot(&slot).await {
                            tracing::warn!(server = %slot.name, "MCP discovery failed: {e}");
                        }
                    });
                }
            }
            while set.join_next().await.is_some() {}
        }
        let tools = self.snapshot();
        match filter.map(str::to_lowercase).filter(|f| !f.is_empty()) {
            None => tools.as_ref().clone(),
            Some(f) => tools
                .iter()
                .filter(|t| {
                    t.tool_name.to_lowercase().contains(&f)
                        || t.qualified_name.to_lowercase().contains(&f)
                        || t.toolkit_slug.to_lowercase().contains(&f)
                        || t.description.to_lowercase().contains(&f)
                })
                .cloned()
                .collect(),
        }
    }

    /// Pre-warms the schema cache (seed 003 `prewarm_schemas`): lists every enabled server
    /// without fresh schemas. Returns the number of tools known afterwards.
    pub async fn prewarm(&self) -> usize {
        self.discover(None, true).await.len()
    }

    /// Forgets the tool lists (memory and persisted cache) of `server`, or of every server.
    pub async fn invalidate(&self, server: Option<&str>) -> Result<(), McpError> {
        for slot in self.slots() {
            if server.is_none_or(|s| s == slot.name) {
                let mut state = slot.state();
                state.tools = None;
                state.fetched_at = None;
            }
        }
        if let Some(cache) = &self.inner.options.cache {
            cache.invalidate(server).await?;
        }
        self.bump();
        Ok(())
    }

    /// Lists a server's tools now (connecting if needed) and caches them.
    pub async fn refresh(&self, server: &str) -> Result<Vec<RemoteTool>, McpError> {
        let slot = self.slot(server)?;
        self.refresh_slot(&slot).await
    }

    async fn refresh_slot(&self, slot: &Arc<Slot>) -> Result<Vec<RemoteTool>, McpError> {
        let conn = self.connection(slot).await?;
        let listed = tokio::time::timeout(slot.config.startup_timeout(), conn.list_tools())
            .await
            .map_err(|_| McpError::Timeout {
                server: slot.name.clone(),
                tool: "tools/list".into(),
                seconds: slot.config.startup_timeout().as_secs(),
            })
            .and_then(|r| r);
        let tools = match listed {
            Ok(t) => t,
            Err(e) => {
                self.after_error(slot, &conn, &e).await;
                return Err(e);
            }
        };
        let tools: Vec<RemoteTool> = match &slot.config.enabled_tools {
            Some(only) => tools
                .into_iter()
                .filter(|t| only.contains(&t.name))
                .collect(),
            None => tools,
        };
        let fetched_at = Utc::now();
        {
            let mut state = slot.state();
            state.tools = Some(tools.clone());
            state.fetched_at = Some(fetched_at);
        }
        self.bump();
        if let Some(cache) = &self.inner.options.cache {
            let entry = CachedSchemas {
                fingerprint: slot.config.fingerprint(),
                fetched_at,
                tools: tools.clone(),
            };
            if let Err(e) = cache.store(&slot.name, &entry).await {
                tracing::warn!(server = %slot.name, "storing MCP schemas failed: {e}");
            }
        }
        Ok(tools)
    }

    /// Connects to a server on a fresh, unpooled connection, lists its tools and disconnects
    /// (`suzent mcp test`). Works for disabled servers too.
    pub async fn test_server(&self, name: &str) -> Result<Vec<RemoteTool>, McpError> {
        let slot = self.slot(name)?;
        let conn =
            McpConnection::connect(name, &slot.config, &self.inner.options.secrets, None).await?;
        let tools = tokio::time::timeout(slot.config.startup_timeout(), conn.list_tools())
            .await
            .map_err(|_| McpError::Timeout {
                server: name.to_string(),
                tool: "tools/list".into(),
                seconds: slot.config.startup_timeout().as_secs(),
            })
            .and_then(|r| r);
        conn.close().await;
        tools
    }

    /// Every known tool of every server (no I/O), with model-facing names. Disabled servers'
    /// tools are included with status DISABLED.
    pub fn snapshot(&self) -> Arc<Vec<McpToolInfo>> {
        let generation = self.generation();
        if let Ok(cached) = self.inner.snapshot.lock()
            && let Some((g, tools)) = cached.as_ref()
            && *g == generation
        {
            return Arc::clone(tools);
        }
        let mut entries: Vec<(Arc<Slot>, RemoteTool, McpToolStatus)> = Vec::new();
        for slot in self.slots() {
            let state = slot.state();
            let status = match server_state(&slot, &state) {
                McpServerState::Disabled => McpToolStatus::Disabled,
                McpServerState::Failed => McpToolStatus::Failed,
                McpServerState::Running => McpToolStatus::Active,
                McpServerState::Idle => McpToolStatus::Discovered,
            };
            for tool in state.tools.iter().flatten() {
                entries.push((Arc::clone(&slot), tool.clone(), status));
            }
        }
        let pairs: Vec<(&str, &str)> = entries
            .iter()
            .map(|(s, t, _)| (s.name.as_str(), t.name.as_str()))
            .collect();
        let names = qualify_all(&pairs);
        let tools: Vec<McpToolInfo> = entries
            .iter()
            .zip(names)
            .map(|((slot, tool, status), qualified_name)| McpToolInfo {
                tool_name: tool.name.clone(),
                toolkit_slug: slot.name.clone(),
                qualified_name,
                title: tool.title.clone(),
                description: tool.description.clone(),
                status: *status,
                schema: tool.input_schema.clone(),
                read_only_hint: tool.read_only_hint,
                requires_approval: !(slot.config.trusted && tool.read_only_hint == Some(true)),
                server_config: slot.config.redacted(),
            })
            .collect();
        let tools = Arc::new(tools);
        if let Ok(mut cached) = self.inner.snapshot.lock() {
            *cached = Some((generation, Arc::clone(&tools)));
        }
        tools
    }

    /// The tool with this model-facing name.
    pub fn resolve(&self, qualified_name: &str) -> Option<McpToolInfo> {
        self.snapshot()
            .iter()
            .find(|t| t.qualified_name == qualified_name)
            .cloned()
    }

    /// Calls `tool` (the server's own name) on `server` over the pooled connection, starting
    /// the server if needed. A server that stopped fails the call at once and is restarted on a
    /// later call once its backoff has passed.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        args: Value,
    ) -> Result<CallOutput, McpError> {
        let slot = self.slot(server)?;
        let conn = self.connection(&slot).await?;
        slot.state().last_used = Some(Instant::now());
        let result = conn.call_tool(tool, args, slot.config.call_timeout()).await;
        slot.state().last_used = Some(Instant::now());
        if let Err(e) = &result {
            self.after_error(&slot, &conn, e).await;
        }
        result
    }

    /// After a failed request: a stopped server's connection is dropped and counted as a
    /// failure (so later calls fail fast until its backoff ends).
    async fn after_error(&self, slot: &Arc<Slot>, conn: &Arc<McpConnection>, e: &McpError) {
        if !matches!(e, McpError::Stopped { .. }) && !conn.is_closed() {
            return;
        }
        let mut guard = slot.conn.lock().await;
        if guard.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)) {
            guard.take();
            drop(guard);
            self.record_failure(slot, e.to_string());
        }
    }

    fn record_failure(&self, slot: &Slot, message: String) {
        {
            let mut state = slot.state();
            state.failures = state.failures.saturating_add(1);
            let exp = state.failures.saturating_sub(1).min(16);
            let backoff = self
                .inner
                .options
                .backoff_base
                .saturating_mul(1u32 << exp)
                .min(self.inner.options.backoff_max);
            state.retry_at = Some(Instant::now() + backoff);
            state.last_error = Some(message);
            state.running = false;
        }
        self.bump();
    }

    /// The pooled connection of a server: reused while alive, else (re)started unless the
    /// server is in its backoff window.
    async fn connection(&self, slot: &Arc<Slot>) -> Result<Arc<McpConnection>, McpError> {
        if slot.config.disabled {
            return Err(McpError::Disabled(slot.name.clone()));
        }
        let mut guard = slot.conn.lock().await;
        if let Some(conn) = guard.as_ref() {
            if !conn.is_closed() {
                return Ok(Arc::clone(conn));
            }
            guard.take();
            self.record_failure(slot, "the server stopped".into());
        }
        let (retry_at, last_error) = {
            let s = slot.state();
            (s.retry_at, s.last_error.clone())
        };
        if let Some(at) = retry_at
            && at > Instant::now()
        {
            let wait = at.saturating_duration_since(Instant::now());
            return Err(McpError::Backoff {
                server: slot.name.clone(),
                message: last_error.unwrap_or_else(|| "it failed".into()),
                retry_in_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
            });
        }
        let on_change = list_changed_callback(Arc::downgrade(&self.inner), slot.name.clone());
        match McpConnection::connect(
            &slot.name,
            &slot.config,
            &self.inner.options.secrets,
            Some(on_change),
        )
        .await
        {
            Ok(conn) => {
                let conn = Arc::new(conn);
                *guard = Some(Arc::clone(&conn));
                {
                    let mut state = slot.state();
                    state.running = true;
                    state.failures = 0;
                    state.retry_at = None;
                    state.last_error = None;
                    state.last_used = Some(Instant::now());
                }
                self.bump();
                Ok(conn)
            }
            Err(e) => {
                drop(guard);
                self.record_failure(slot, e.to_string());
                Err(e)
            }
        }
    }

    /// Closes every connection now (idle or not).
    pub async fn shutdown(&self) {
        for slot in self.slots() {
            let conn = slot.conn.lock().await.take();
            slot.state().running = false;
            if let Some(conn) = conn
                && let Ok(conn) = Arc::try_unwrap(conn)
            {
                conn.close().await;
            }
        }
        self.bump();
    }

    /// Whether a server currently holds an open pooled connection.
    pub async fn is_connected(&self, server: &str) -> bool {
        match self.slot(server) {
            Ok(slot) => slot
                .conn
                .lock()
                .await
                .as_ref()
                .is_some_and(|c| !c.is_closed()),
            Err(_) => false,
        }
    }
}

fn bump(inner: &Inner) {
    inner.generation.fetch_add(1, Ordering::SeqCst);
}

fn server_state(slot: &Slot, state: &SlotState) -> McpServerState {
    if slot.config.disabled {
        McpServerState::Disabled
    } else if state.running {
        McpServerState::Running
    } else if state.last_error.is_some() {
        McpServerState::Failed
    } else {
        McpServerState::Idle
    }
}

fn close_slot(slot: Arc<Slot>) {
    if tokio::runtime::Handle::try_current().is_err() {
        return;
    }
    tokio::spawn(async move {
        let conn = slot.conn.lock().await.take();
        if let Some(conn) = conn
            && let Ok(conn) = Arc::try_unwrap(conn)
        {
            conn.close().await;
        }
    });
}

/// On `tools/list_changed`: re-list the server's tools in a new task (the notification handler
/// must not wait for a response on its own connection).
fn list_changed_callback(inner: Weak<Inner>, server: String) -> ListChanged {
    Arc::new(move || {
        let inner = inner.clone();
        let server = server.clone();
        tokio::spawn(async move {
            let Some(inner) = inner.upgrade() else {
                return;
            };
            let registry = McpRegistry { inner };
            if let Err(e) = registry.refresh(&server).await {
                tracing::warn!(server = %server, "refreshing tools after list_changed failed: {e}");
            }
        });
    })
}

async fn reap_idle(inner: Weak<Inner>, period: Duration) {
    loop {
        tokio::time::sleep(period).await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let idle = inner.options.idle_timeout;
        let slots: Vec<Arc<Slot>> = inner
            .servers
            .read()
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default();
        for slot in slots {
            let expired = slot.state().last_used.is_some_and(|t| t.elapsed() >= idle);
            if !expired {
                continue;
            }
            let Ok(mut guard) = slot.conn.try_lock() else {
                continue; // connecting right now
            };
            // Only close a connection no call holds (the pool's reference is the only one).
            if guard.as_ref().is_some_and(|c| Arc::strong_count(c) == 1)
                && let Some(conn) = guard.take()
            {
                drop(guard);
                slot.state().running = false;
                bump(&inner);
                tracing::debug!(server = %slot.name, "closing idle MCP connection");
                if let Ok(conn) = Arc::try_unwrap(conn) {
                    conn.close().await;
                }
            }
        }
    }
}
