//! The runtime: chats, the agent loop, approvals.

mod agents;
mod background;
mod canvas;
mod content;
mod inbox;
mod permissions_api;
mod review_hook;
mod summaries;

pub use canvas::{CANVAS_ACTION_KIND, CANVAS_SENDER, MAX_ACTION_CONTEXT_BYTES, action_text};
pub use content::{
    DEFAULT_MODEL_SOURCE, EMBEDDING_MODEL_ENV, EmbeddingStatus, MAX_BLOCK_CHARS, SKILL_DIRS_ENV,
};
pub use permissions_api::{PermissionState, RULES_FILE};

use crate::audit::AuditLog;
use crate::error::RuntimeError;
use crate::paths::Paths;
use crate::provider::resolve::{EnvAndKeychain, KeySource, build_provider, parse_model};
use crate::provider::{ModelProvider, ModelRequest, ProviderError, ToolDefinition};
use chrono::Utc;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use suzent_core::{
    AgentEvent, ApprovalActionId, ApprovalResponse, Behavior, ChatMessage, Config, DecisionSource,
    PermissionDecision, PermissionMode, Rule, RuleDestination, RuleDraft, RunOutcome, ToolCall,
    new_id, parse_tool_arguments,
};
use suzent_permissions::{
    PathPolicy, PermissionContext, PermissionEngine, PermissionRequest, redact_text, redact_value,
    validate_rule,
};
use suzent_store::{
    ApprovalStatus, ChatPatch, ChatRecord, NewChat, PendingApproval, Store, StoredMessage,
    ToolStepStatus,
};
use suzent_tools::{ReadTracker, ToolContext, ToolError, ToolRegistry, default_registry};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// Capacity of the event channel; slow subscribers lose the oldest events (they can re-read the
/// transcript, which is stored before any event is sent).
const EVENT_CAPACITY: usize = 4096;

/// Environment variable naming a point where the process pauses (for crash tests, which then
/// SIGKILL it): `after_tool_ran` pauses after a tool ran and before its result is stored.
const HOLD_ENV: &str = "SUZENT_TEST_HOLD_AT";

/// How a run answers calls that need approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnAsk {
    /// Store the pending approvals and end the run as suspended (interactive shells).
    #[default]
    Suspend,
    /// Refuse them with a clear reason (headless runs that nobody answers).
    Deny,
}

/// Options of one run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// What to do with calls that need approval.
    pub on_ask: OnAsk,
}

/// How a run (`send_message`, `resume_approvals`) ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// Run id.
    pub run_id: String,
    /// Completed, suspended (waiting for approvals), cancelled or failed.
    pub outcome: RunOutcome,
    /// The approvals waiting when suspended.
    pub pending: Vec<PendingApproval>,
    /// The last assistant text of the run.
    pub text: String,
    /// The error message when the run failed.
    pub error: Option<String>,
}

/// Arguments of [`Runtime::create_chat`]. Missing fields come from the configuration.
#[derive(Debug, Clone, Default)]
pub struct CreateChat {
    /// Title (default "New chat").
    pub title: Option<String>,
    /// Workspace folder; must exist.
    pub workspace: Option<PathBuf>,
    /// Model string `provider/model`.
    pub model: Option<String>,
    /// Permission mode.
    pub mode: Option<PermissionMode>,
    /// Selected tools (runtime or legacy names).
    pub tools: Option<Vec<String>>,
}

/// How to open a runtime.
pub struct RuntimeOptions {
    /// Directories.
    pub paths: Paths,
    /// Where API keys come from.
    pub keys: Arc<dyn KeySource>,
    /// Use this configuration instead of reading `config.toml`.
    pub config: Option<Config>,
}

impl RuntimeOptions {
    /// Directories from `SUZENT_HOME` or the platform, keys from the environment and keychain.
    pub fn from_env() -> Result<RuntimeOptions, RuntimeError> {
        let paths = Paths::from_env().map_err(|message| RuntimeError::Io {
            path: "home".into(),
            message,
        })?;
        Ok(RuntimeOptions {
            paths,
            keys: Arc::new(EnvAndKeychain),
            config: None,
        })
    }
}

/// One check of `doctor`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DoctorCheck {
    /// What was checked.
    pub name: String,
    /// Whether it is fine.
    pub ok: bool,
    /// What was found.
    pub detail: String,
}

/// The result of [`Runtime::doctor`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DoctorReport {
    /// Every check, in order.
    pub checks: Vec<DoctorCheck>,
}

struct Session {
    run_lock: tokio::sync::Mutex<()>,
    reads: ReadTracker,
    cancel: Mutex<CancellationToken>,
}

struct Inner {
    paths: Paths,
    /// Replaced as a whole by `save_settings`; runs take a snapshot when they start.
    config: std::sync::RwLock<Config>,
    store: Store,
    registry: ToolRegistry,
    engine: PermissionEngine,
    keys: Arc<dyn KeySource>,
    events: broadcast::Sender<AgentEvent>,
    audit: AuditLog,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Built-in and MCP tools, deferred-tool activations (see `toolset.rs`).
    toolset: Arc<crate::toolset::Toolset>,
    /// Background commands, sub-agents, the inbox dispatcher (see `runtime/background.rs`).
    bg: background::BackgroundState,
    /// Plans, memory and skills (see `runtime/content.rs`).
    content: content::ContentState,
}

/// The agent runtime. Cheap to clone; all clones share state.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("paths", &self.inner.paths)
            .finish()
    }
}

/// Reads `config.toml`; a missing file means the defaults.
pub fn load_config(paths: &Paths) -> Result<Config, RuntimeError> {
    let file = paths.config_file();
    match std::fs::read_to_string(&file) {
        Ok(text) => Ok(Config::from_toml(&text, &file)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(e) => Err(RuntimeError::Io {
            path: file.display().to_string(),
            message: e.to_string(),
        }),
    }
}

impl Runtime {
    /// Opens the runtime: reads the configuration, opens (and migrates) the database.
    pub async fn open(options: RuntimeOptions) -> Result<Runtime, RuntimeError> {
        let config = match options.config {
            Some(c) => {
                c.validate()?;
                c
            }
            None => load_config(&options.paths)?,
        };
        let registry = default_registry();
        // Unknown tool names in the configuration are an error now, not at the first turn.
        registry
            .expand_selection(&config.tools)
            .map_err(|e| RuntimeError::InvalidInput {
                field: "tools".into(),
                message: e.to_string(),
            })?;
        let store = Store::open(&options.paths.database()).await?;
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        let audit = AuditLog::start(options.paths.audit_log());
        permissions_api::report_rule_file(&options.paths.config_dir);
        if config.sandbox {
            let image = config
                .sandbox_image
                .clone()
                .unwrap_or_else(|| suzent_tools::DEFAULT_SANDBOX_IMAGE.to_string());
            suzent_tools::sandbox_available(config.sandbox_backend, &image).map_err(|e| {
                RuntimeError::InvalidInput {
                    field: "sandbox".into(),
                    message: e.to_string(),
                }
            })?;
        }
        let bg = background::BackgroundState::new(&options.paths.data_dir)?;
        let mcp = crate::mcp::open_registry(
            options.paths.config_file().with_file_name("mcp.json"),
            Arc::clone(&options.keys),
            store.clone(),
        )?;
        mcp.load_cache().await?;
        let toolset = crate::toolset::Toolset::new(registry, mcp, store.clone(), events.clone());
        let registry = toolset.registry.clone();
        let content_state = content::ContentState::new(&options.paths, store.clone());
        let runtime = Runtime {
            inner: Arc::new(Inner {
                paths: options.paths,
                config: std::sync::RwLock::new(config),
                store,
                registry,
                engine: PermissionEngine::new(),
                keys: options.keys,
                events,
                audit,
                sessions: Mutex::new(HashMap::new()),
                toolset,
                bg,
                content: content_state,
            }),
        };
        runtime.init_background();
        Ok(runtime)
    }

    /// Built-in and MCP tools with the chats' activations.
    pub(crate) fn toolset(&self) -> &Arc<crate::toolset::Toolset> {
        &self.inner.toolset
    }

    /// A snapshot of the configuration in use (runs started later see saved changes).
    pub fn config(&self) -> Config {
        match self.inner.config.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Replaces the configuration in memory (after `save_settings` wrote it).
    pub(crate) fn replace_config(&self, config: Config) {
        match self.inner.config.write() {
            Ok(mut c) => *c = config,
            Err(poisoned) => *poisoned.into_inner() = config,
        }
    }

    /// Where API keys come from.
    pub(crate) fn key_source(&self) -> &dyn KeySource {
        self.inner.keys.as_ref()
    }

    /// The directories in use.
    pub fn paths(&self) -> &Paths {
        &self.inner.paths
    }

    /// The tool registry.
    pub fn registry(&self) -> &ToolRegistry {
        &self.inner.registry
    }

    /// Checks that `model` (or the configured default) names a provider whose key is available.
    pub fn check_model(&self, model: Option<&str>) -> Result<(), RuntimeError> {
        let config = self.config();
        let model = model.or(config.default_model.as_deref()).ok_or_else(|| {
            RuntimeError::InvalidInput {
                field: "model".into(),
                message:
                    "no model set: pass --model provider/model or set default_model in config.toml"
                        .into(),
            }
        })?;
        build_provider(model, &config.providers, self.inner.keys.as_ref())?;
        Ok(())
    }

    /// Subscribes to every event of every chat, from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<AgentEvent> {
        self.inner.events.subscribe()
    }

    /// The capability catalog (what ConfigView shows), as JSON:
    /// `[{id, label, description, tools:[{id, name, description, runtimeName, requiresApproval}]}]`.
    pub fn catalog(&self) -> Value {
        serde_json::to_value(self.inner.registry.catalog()).unwrap_or(Value::Null)
    }

    // ---- chats ----

    /// Creates a chat. The workspace must be an existing directory.
    pub async fn create_chat(&self, args: CreateChat) -> Result<ChatRecord, RuntimeError> {
        let new = self.new_chat(args)?;
        Ok(self.inner.store.create_chat(&new).await?)
    }

    /// The chat [`Runtime::create_chat`] would store for `args` (workspace canonicalized,
    /// defaults from the configuration, model and tools checked), with a fresh id; nothing is
    /// stored. Errors as [`Runtime::create_chat`].
    pub(crate) fn new_chat(&self, args: CreateChat) -> Result<NewChat, RuntimeError> {
        let cfg = &self.config();
        let workspace = match args.workspace.or_else(|| cfg.workspace.clone()) {
            Some(w) => w,
            None => std::env::current_dir().map_err(|e| RuntimeError::Io {
                path: ".".into(),
                message: e.to_string(),
            })?,
        };
        let workspace =
            std::fs::canonicalize(&workspace).map_err(|e| RuntimeError::InvalidInput {
                field: "workspace".into(),
                message: format!("'{}': {e}", workspace.display()),
            })?;
        if !workspace.is_dir() {
            return Err(RuntimeError::InvalidInput {
                field: "workspace".into(),
                message: format!("'{}' is not a directory", workspace.display()),
            });
        }
        if let Some(model) = &args.model {
            parse_model(model)?;
        }
        if let Some(tools) = &args.tools {
            self.inner.registry.expand_selection(tools).map_err(|e| {
                RuntimeError::InvalidInput {
                    field: "tools".into(),
                    message: e.to_string(),
                }
            })?;
        }
        let new = NewChat {
            id: new_id(),
            title: args.title.unwrap_or_else(|| crate::DEFAULT_TITLE.into()),
            workspace: workspace.display().to_string(),
            model: args.model.or_else(|| cfg.default_model.clone()),
            mode: args.mode.unwrap_or(cfg.default_mode),
            tools: args.tools,
        };
        Ok(new)
    }

    /// One chat.
    pub async fn chat(&self, chat_id: &str) -> Result<ChatRecord, RuntimeError> {
        self.inner
            .store
            .get_chat(chat_id)
            .await?
            .ok_or_else(|| RuntimeError::ChatNotFound(chat_id.to_string()))
    }

    /// Every chat, most recently updated first.
    pub async fn list_chats(&self) -> Result<Vec<ChatRecord>, RuntimeError> {
        Ok(self.inner.store.list_chats().await?)
    }

    /// The models `provider` offers (see [`crate::ProviderCheck::list_models`]).
    pub async fn list_models(
        &self,
        provider: &str,
        base_url: Option<&str>,
        api_key: Option<&str>,
    ) -> Result<Vec<String>, RuntimeError> {
        crate::ProviderCheck::new(self.config().providers, Arc::clone(&self.inner.keys))
            .list_models(provider, base_url, api_key)
            .await
    }

    /// One real request to `model` (see [`crate::ProviderCheck::test_connection`]).
    pub async fn test_connection(
        &self,
        model: &str,
        base_url: Option<&str>,
    ) -> Result<crate::ConnectionCheck, RuntimeError> {
        crate::ProviderCheck::new(self.config().providers, Arc::clone(&self.inner.keys))
            .test_connection(model, base_url)
            .await
    }

    /// Chats whose title or messages contain every word of `query` (see [`crate::ChatSearch`]).
    pub async fn search_chats(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<suzent_store::ChatSearchHit>, RuntimeError> {
        crate::ChatSearch::new(self.inner.store.clone())
            .search(query, limit)
            .await
    }

    /// Renames a chat.
    pub async fn rename_chat(
        &self,
        chat_id: &str,
        title: &str,
    ) -> Result<ChatRecord, RuntimeError> {
        if title.trim().is_empty() {
            return Err(RuntimeError::InvalidInput {
                field: "title".into(),
                message: "empty".into(),
            });
        }
        self.chat(chat_id).await?;
        let patch = ChatPatch {
            title: Some(title.trim().to_string()),
            ..Default::default()
        };
        Ok(self.inner.store.update_chat(chat_id, &patch).await?)
    }

    /// Deletes a chat with its transcript, approvals and session rules, and the end-of-chat
    /// summaries of it in archival memory (source `summary`); the chat is not summarized.
    /// Entries archived on purpose (`memory_archive`, other sources) stay.
    pub async fn delete_chat(&self, chat_id: &str) -> Result<(), RuntimeError> {
        self.chat(chat_id).await?;
        self.inner.store.delete_chat(chat_id).await?;
        if let Ok(mut sessions) = self.inner.sessions.lock() {
            sessions.remove(chat_id);
        }
        Ok(())
    }

    /// Sets a chat's permission mode.
    pub async fn set_mode(
        &self,
        chat_id: &str,
        mode: PermissionMode,
    ) -> Result<ChatRecord, RuntimeError> {
        self.chat(chat_id).await?;
        let patch = ChatPatch {
            mode: Some(mode),
            ..Default::default()
        };
        Ok(self.inner.store.update_chat(chat_id, &patch).await?)
    }

    /// Sets a chat's model (`provider/model`).
    pub async fn set_model(&self, chat_id: &str, model: &str) -> Result<ChatRecord, RuntimeError> {
        parse_model(model)?;
        self.chat(chat_id).await?;
        let patch = ChatPatch {
            model: Some(Some(model.to_string())),
            ..Default::default()
        };
        Ok(self.inner.store.update_chat(chat_id, &patch).await?)
    }

    /// A chat still called [`crate::DEFAULT_TITLE`] with no message yet is named after `text`
    /// (see [`crate::title_from`]); other chats are returned as they are.
    async fn name_after_first_message(
        &self,
        chat: ChatRecord,
        text: &str,
    ) -> Result<ChatRecord, RuntimeError> {
        if chat.title != crate::DEFAULT_TITLE || !self.inner.store.messages(&chat.id).await?.is_empty() {
            return Ok(chat);
        }
        match crate::title_from(text) {
            Some(title) => Ok(self.rename_chat(&chat.id, &title).await?),
            None => Ok(chat),
        }
    }

    /// Goes back to the default model for a chat.
    pub async fn clear_model(&self, chat_id: &str) -> Result<ChatRecord, RuntimeError> {
        self.chat(chat_id).await?;
        let patch = ChatPatch {
            model: Some(None),
            ..Default::default()
        };
        Ok(self.inner.store.update_chat(chat_id, &patch).await?)
    }

    /// Sets a chat's tool selection (None: the configuration's).
    pub async fn set_tools(
        &self,
        chat_id: &str,
        tools: Option<Vec<String>>,
    ) -> Result<ChatRecord, RuntimeError> {
        if let Some(t) = &tools {
            self.inner
                .registry
                .expand_selection(t)
                .map_err(|e| RuntimeError::InvalidInput {
                    field: "tools".into(),
                    message: e.to_string(),
                })?;
        }
        self.chat(chat_id).await?;
        let patch = ChatPatch {
            tools: Some(tools),
            ..Default::default()
        };
        Ok(self.inner.store.update_chat(chat_id, &patch).await?)
    }

    /// The stored transcript.
    pub async fn messages(&self, chat_id: &str) -> Result<Vec<StoredMessage>, RuntimeError> {
        self.chat(chat_id).await?;
        Ok(self.inner.store.messages(chat_id).await?)
    }

    // ---- rules ----

    /// Global rules plus the chat's session rules (every rule when `chat_id` is None).
    pub async fn list_rules(&self, chat_id: Option<&str>) -> Result<Vec<Rule>, RuntimeError> {
        let mut rules = self.inner.store.list_rules(chat_id).await?;
        rules.extend(self.rule_file().rules); // hand-written global rules (`rules.toml`)
        Ok(rules)
    }

    /// Adds a rule. Session rules need a chat.
    pub async fn add_rule(
        &self,
        draft: RuleDraft,
        chat_id: Option<&str>,
    ) -> Result<Rule, RuntimeError> {
        validate_rule(&draft).map_err(|message| RuntimeError::InvalidInput {
            field: "rule".into(),
            message,
        })?;
        if draft.tool != "*"
            && self.inner.toolset.get(&draft.tool).is_none()
            && !draft.tool.starts_with(suzent_mcp::PREFIX)
        {
            return Err(RuntimeError::InvalidInput {
                field: "rule.tool".into(),
                message: format!("unknown tool '{}'", draft.tool),
            });
        }
        let chat_id = match draft.destination {
            RuleDestination::Session => {
                let id = chat_id.ok_or_else(|| RuntimeError::InvalidInput {
                    field: "chat_id".into(),
                    message: "a session rule needs a chat".into(),
                })?;
                self.chat(id).await?;
                Some(id.to_string())
            }
            RuleDestination::Global => None,
        };
        let tool = match self.inner.toolset.get(&draft.tool) {
            Some(t) => t.spec().runtime_name.to_string(),
            None => draft.tool.clone(),
        };
        let rule = Rule {
            id: new_id(),
            tool,
            behavior: draft.behavior,
            matcher: draft.matcher,
            destination: draft.destination,
            chat_id,
            created_at: Utc::now(),
            description: draft.description,
        };
        self.inner.store.add_rule(&rule).await?;
        Ok(rule)
    }

    /// Deletes a rule by id.
    pub async fn delete_rule(&self, rule_id: &str) -> Result<(), RuntimeError> {
        if self.inner.store.delete_rule(rule_id).await? {
            Ok(())
        } else {
            Err(RuntimeError::InvalidInput {
                field: "rule_id".into(),
                message: format!("no rule '{rule_id}'"),
            })
        }
    }

    // ---- approvals ----

    /// Pending approvals, of one chat or of all.
    pub async fn pending_approvals(
        &self,
        chat_id: Option<&str>,
    ) -> Result<Vec<PendingApproval>, RuntimeError> {
        Ok(self.inner.store.pending_approvals(chat_id).await?)
    }

    // ---- runs ----

    /// Stops the chat's running turn (the model stream and any running tool).
    pub fn cancel(&self, chat_id: &str) {
        if let Some(session) = self.existing_session(chat_id)
            && let Ok(token) = session.cancel.lock()
        {
            token.cancel();
        }
    }

    /// Sends a user message and runs the turn until the model stops, the turn waits for
    /// approvals, or it fails. Provider errors end the run with outcome `Failed` (and a
    /// `run_error` event); the chat stays usable.
    pub async fn send_message(
        &self,
        chat_id: &str,
        text: &str,
        options: RunOptions,
    ) -> Result<RunSummary, RuntimeError> {
        if text.trim().is_empty() {
            return Err(RuntimeError::InvalidInput {
                field: "text".into(),
                message: "empty message".into(),
            });
        }
        let chat = self.chat(chat_id).await?;
        // A missing key or a bad model is an error before anything is stored.
        self.check_model(chat.model.as_deref())?;
        let session = self.session(chat_id);
        let _guard = session.run_lock.lock().await;
        // Tool calls waiting for the user are answered first: a message after them would leave
        // calls without results in the transcript, which model providers refuse.
        let pending = self.inner.store.pending_approvals(Some(chat_id)).await?;
        if !pending.is_empty() {
            let names: Vec<&str> = pending.iter().map(|p| p.tool_name.as_str()).collect();
            return Err(RuntimeError::InvalidInput {
                field: "text".into(),
                message: format!(
                    "chat '{chat_id}' is waiting for the user's approval of {} tool call(s) ({}); answer them (resume_approvals) before sending a new message",
                    pending.len(),
                    names.join(", ")
                ),
            });
        }
        let chat = self.name_after_first_message(chat, text).await?;
        // The message is stored by the run, after the calls an interrupted turn left open are
        // settled.
        let mut opening = Some(Opening::User(text.to_string()));
        self.run_with(&session, &chat, new_id(), options, &mut opening)
            .await
    }

    /// Answers pending approvals and continues the suspended turn (seed 000 `resume_approvals`).
    /// All answers are checked before anything is written: an unknown approval, a stale one, one
    /// of another chat, or an action that was not offered is an error and changes nothing. With
    /// no answers, continues an interrupted turn (e.g. after a crash).
    pub async fn resume_approvals(
        &self,
        chat_id: &str,
        answers: Vec<ApprovalResponse>,
        options: RunOptions,
    ) -> Result<RunSummary, RuntimeError> {
        let chat = self.chat(chat_id).await?;
        let session = self.session(chat_id);
        let _guard = session.run_lock.lock().await;
        let mut checked = Vec::new();
        for answer in &answers {
            let record = self
                .inner
                .store
                .get_approval(&answer.request_id)
                .await?
                .ok_or_else(|| RuntimeError::UnknownApproval(answer.request_id.clone()))?;
            if record.approval.chat_id != chat_id || record.status != ApprovalStatus::Pending {
                return Err(RuntimeError::StaleApproval(answer.request_id.clone()));
            }
            if let Some(tc) = &answer.tool_call_id
                && tc != &record.approval.tool_call_id
            {
                return Err(RuntimeError::InvalidInput {
                    field: "tool_call_id".into(),
                    message: format!("'{tc}' does not belong to approval '{}'", answer.request_id),
                });
            }
            let offered = &record.approval.decision.actions;
            let offered_ids = || {
                offered
                    .iter()
                    .map(|a| a.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let action_id = ApprovalActionId::parse(&answer.action_id).map_err(|_| {
                RuntimeError::UnknownAction {
                    approval: answer.request_id.clone(),
                    action: answer.action_id.clone(),
                    offered: offered_ids(),
                }
            })?;
            let action = offered.iter().find(|a| a.id == action_id).cloned();
            let always_allowed = matches!(
                action_id,
                ApprovalActionId::AllowOnce | ApprovalActionId::Reject
            );
            if action.is_none() && !always_allowed {
                return Err(RuntimeError::UnknownAction {
                    approval: answer.request_id.clone(),
                    action: answer.action_id.clone(),
                    offered: offered_ids(),
                });
            }
            if checked
                .iter()
                .any(|(r, _, _): &(suzent_store::ApprovalRecord, _, Option<RuleDraft>)| {
                    r.approval.id == record.approval.id
                })
            {
                return Err(RuntimeError::InvalidInput {
                    field: "resume_approvals".into(),
                    message: format!("approval '{}' answered twice", answer.request_id),
                });
            }
            let remembered = remembered_rule(answer, &record.approval.tool_name, action.as_ref())?;
            checked.push((record, action_id, remembered));
        }
        for ((record, action_id, remembered), answer) in checked.into_iter().zip(&answers) {
            let feedback = answer.feedback.as_deref().filter(|f| !f.trim().is_empty());
            if !self
                .inner
                .store
                .resolve_approval(&record.approval.id, action_id, feedback)
                .await?
            {
                return Err(RuntimeError::StaleApproval(record.approval.id.clone()));
            }
            let mut added = None;
            if let Some(draft) = remembered {
                let rule = self.add_rule(draft, Some(chat_id)).await?;
                added = Some(rule);
            }
            self.inner
                .audit
                .append_value(json!({
                    "timestamp": Utc::now().to_rfc3339(),
                    "kind": "resolution",
                    "chatId": chat_id,
                    "runId": record.approval.run_id,
                    "toolCallId": record.approval.tool_call_id,
                    "tool": record.approval.tool_name,
                    "userAction": action_id.as_str(),
                    "feedback": feedback.map(redact_text),
                    "ruleId": added.as_ref().map(|r| r.id.clone()),
                }))
                .await;
            self.emit(AgentEvent::ToolPermissionResolution {
                chat_id: chat_id.to_string(),
                approval_id: record.approval.id.clone(),
                tool_call_id: record.approval.tool_call_id.clone(),
                action_id,
                scope: added.as_ref().map(|r| r.destination),
                rule: added,
                feedback: feedback.map(str::to_string),
            });
        }
        self.run(&session, &chat, new_id(), options).await
    }

    /// Checks configuration, keys, database and providers.
    pub async fn doctor(&self) -> DoctorReport {
        let mut checks = Vec::new();
        let cfg_file = self.inner.paths.config_file();
        checks.push(DoctorCheck {
            name: "config".into(),
            ok: true,
            detail: if cfg_file.exists() {
                format!("{} is valid", cfg_file.display())
            } else {
                format!("{} not present; using defaults", cfg_file.display())
            },
        });
        let db = self.inner.store.list_chats().await;
        checks.push(DoctorCheck {
            name: "database".into(),
            ok: db.is_ok(),
            detail: match db {
                Ok(chats) => format!(
                    "{} ({} chats)",
                    self.inner.paths.database().display(),
                    chats.len()
                ),
                Err(e) => e.to_string(),
            },
        });
        let config = self.config();
        match &config.default_model {
            None => checks.push(DoctorCheck {
                name: "model".into(),
                ok: false,
                detail: "no default_model in config.toml (e.g. default_model = \"openai/gpt-4.1\"); pass --model".into(),
            }),
            Some(model) => match build_provider(model, &config.providers, self.inner.keys.as_ref()) {
                Ok((_provider, _)) => {
                    checks.push(DoctorCheck { name: "model".into(), ok: true, detail: format!("{model}: key present") });
                }
                Err(e) => checks.push(DoctorCheck { name: "model".into(), ok: false, detail: e.to_string() }),
            },
        }
        for provider in ["openai", "anthropic", "gemini"] {
            let present = self.inner.keys.api_key(provider).is_some();
            checks.push(DoctorCheck {
                name: format!("key:{provider}"),
                ok: true,
                detail: if present {
                    "present".into()
                } else {
                    "not set".into()
                },
            });
        }
        if let Some(model) = &config.default_model {
            checks.push(self.reachability(model).await);
        }
        checks.push(self.sandbox_check());
        DoctorReport { checks }
    }

    async fn reachability(&self, model: &str) -> DoctorCheck {
        let url = match parse_model(model) {
            Ok((kind, _)) => crate::provider::resolve::base_url(kind, &self.config().providers),
            Err(e) => {
                return DoctorCheck {
                    name: "reachable".into(),
                    ok: false,
                    detail: e.to_string(),
                };
            }
        };
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(5))
            .build();
        let result = match client {
            Ok(c) => c
                .get(&url)
                .send()
                .await
                .map(|r| r.status().as_u16())
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match result {
            Ok(status) => DoctorCheck {
                name: "reachable".into(),
                ok: true,
                detail: format!("{url} answered HTTP {status}"),
            },
            Err(e) => DoctorCheck {
                name: "reachable".into(),
                ok: false,
                detail: format!("{url}: {e}"),
            },
        }
    }

    // ---- internals ----

    fn emit(&self, event: AgentEvent) {
        let _ = self.inner.events.send(event);
    }

    fn existing_session(&self, chat_id: &str) -> Option<Arc<Session>> {
        self.inner
            .sessions
            .lock()
            .ok()
            .and_then(|s| s.get(chat_id).cloned())
    }

    fn session(&self, chat_id: &str) -> Arc<Session> {
        let fresh = || {
            Arc::new(Session {
                run_lock: tokio::sync::Mutex::new(()),
                reads: Default::default(),
                cancel: Mutex::new(CancellationToken::new()),
            })
        };
        match self.inner.sessions.lock() {
            Ok(mut s) => s.entry(chat_id.to_string()).or_insert_with(fresh).clone(),
            Err(_) => fresh(),
        }
    }

    fn tool_context(
        &self,
        chat: &ChatRecord,
        session: &Session,
        cancel: CancellationToken,
    ) -> Result<ToolContext, RuntimeError> {
        let workspace = PathBuf::from(&chat.workspace);
        let persistence = self.inner.paths.persistence_dir(&chat.id);
        let shared = self.inner.paths.shared_dir();
        for dir in [&persistence, &shared] {
            std::fs::create_dir_all(dir).map_err(|e| RuntimeError::Io {
                path: dir.display().to_string(),
                message: e.to_string(),
            })?;
        }
        let policy =
            PathPolicy::new(&workspace, &[persistence.clone(), shared.clone()]).map_err(|e| {
                RuntimeError::Io {
                    path: workspace.display().to_string(),
                    message: format!("workspace unavailable: {e}"),
                }
            })?;
        Ok(ToolContext {
            chat_id: chat.id.clone(),
            user_id: whoami(),
            workspace_root: policy.workspace().to_path_buf(),
            persistence_dir: persistence,
            shared_dir: shared,
            paths: Arc::new(policy),
            reads: session.reads.clone(),
            cancel,
            // Filled in by `equip_context`.
            commands: None,
            agents: None,
            sandbox: None,
            plans: None,
            memory: None,
            canvas: None,
            tool_call_id: None,
            skills: None,
        })
    }

    fn selected_tools(&self, chat: &ChatRecord) -> Vec<String> {
        let selection = chat.tools.clone().unwrap_or_else(|| self.config().tools);
        self.inner
            .registry
            .expand_selection(&selection)
            .unwrap_or_default()
    }

    async fn run(
        &self,
        session: &Session,
        chat: &ChatRecord,
        run_id: String,
        options: RunOptions,
    ) -> Result<RunSummary, RuntimeError> {
        self.run_with(session, chat, run_id, options, &mut None)
            .await
    }

    /// Runs a turn that first stores `opening` (taken out of the option once stored): after the
    /// tool calls the last turn left without results are settled, so the transcript never has
    /// a message between calls and their results. Left in place when the run ends before that:
    /// calls still wait for the user's approval, the run was cancelled, or it failed.
    async fn run_with(
        &self,
        session: &Session,
        chat: &ChatRecord,
        run_id: String,
        options: RunOptions,
        opening: &mut Option<Opening>,
    ) -> Result<RunSummary, RuntimeError> {
        let cancel = CancellationToken::new();
        if let Ok(mut token) = session.cancel.lock() {
            *token = cancel.clone();
        }
        let model = chat.model.clone().unwrap_or_default();
        self.emit(AgentEvent::RunStarted {
            chat_id: chat.id.clone(),
            run_id: run_id.clone(),
            model: model.clone(),
        });
        let result = self
            .run_loop(session, chat, &run_id, &options, &cancel, opening)
            .await;
        // Everything this run audited is on disk before the run is announced as finished (a
        // CLI process may exit right after).
        self.inner.audit.flush().await;
        let summary = match result {
            Ok(summary) => summary,
            Err(LoopError::Runtime(e)) => {
                self.emit(AgentEvent::RunError {
                    chat_id: chat.id.clone(),
                    run_id: run_id.clone(),
                    message: e.to_string(),
                });
                self.emit(AgentEvent::RunFinished {
                    chat_id: chat.id.clone(),
                    run_id: run_id.clone(),
                    outcome: RunOutcome::Failed,
                    pending_approvals: Vec::new(),
                });
                return Err(e);
            }
            Err(LoopError::Provider(ProviderError::Cancelled)) => RunSummary {
                run_id: run_id.clone(),
                outcome: RunOutcome::Cancelled,
                pending: Vec::new(),
                text: String::new(),
                error: None,
            },
            Err(LoopError::Provider(e)) => {
                let message = e.to_string();
                self.emit(AgentEvent::RunError {
                    chat_id: chat.id.clone(),
                    run_id: run_id.clone(),
                    message: message.clone(),
                });
                RunSummary {
                    run_id: run_id.clone(),
                    outcome: RunOutcome::Failed,
                    pending: Vec::new(),
                    text: String::new(),
                    error: Some(message),
                }
            }
        };
        self.emit(AgentEvent::RunFinished {
            chat_id: chat.id.clone(),
            run_id: run_id.clone(),
            outcome: summary.outcome,
            pending_approvals: summary.pending.iter().map(|p| p.id.clone()).collect(),
        });
        // The agent is idle again: the inbox dispatcher may deliver what waited for it.
        self.inner.bg.inbox_wake.notify_one();
        Ok(summary)
    }

    async fn run_loop(
        &self,
        session: &Session,
        chat: &ChatRecord,
        run_id: &str,
        options: &RunOptions,
        cancel: &CancellationToken,
        opening: &mut Option<Opening>,
    ) -> Result<RunSummary, LoopError> {
        let store = &self.inner.store;
        let config = self.config();
        let ctx = self.tool_context(chat, session, cancel.clone())?;
        let mut ctx = self.equip_context(chat, ctx).await?;
        self.equip_content(&mut ctx).await?; // plans, memory, skills (runtime/content.rs)
        self.equip_canvas(&mut ctx); // render_ui's surfaces (runtime/canvas.rs)
        let selected = self.selected_tools(chat);
        self.inner.toolset.set_selection(&chat.id, &selected);
        let mut provider: Option<(Box<dyn ModelProvider>, String)> = None;
        let mut last_text = String::new();
        let mut steps = 0u32;
        loop {
            if cancel.is_cancelled() {
                return Ok(self.summary(run_id, RunOutcome::Cancelled, Vec::new(), last_text));
            }
            let messages = store.messages(&chat.id).await.map_err(RuntimeError::from)?;
            // This step's tools: the selection, tool_search and the tools activated so far.
            let loaded = self
                .inner
                .toolset
                .loaded(&chat.id, &selected)
                .await
                .map_err(RuntimeError::from)?;
            // Settle the tool calls of the last assistant message first (also after a crash).
            if let Some((calls, answered)) = unanswered_calls(&messages)
                && !calls.is_empty()
            {
                let mut waiting = Vec::new();
                for call in calls {
                    if answered.contains(&call.id) {
                        continue;
                    }
                    if let Some(p) = self
                        .settle_call(chat, run_id, &call, &loaded, &ctx, options)
                        .await?
                    {
                        waiting.push(p);
                    }
                }
                if !waiting.is_empty() {
                    let pending = store
                        .pending_approvals(Some(&chat.id))
                        .await
                        .map_err(RuntimeError::from)?;
                    return Ok(self.summary(run_id, RunOutcome::Suspended, pending, last_text));
                }
                if cancel.is_cancelled() {
                    return Ok(self.summary(run_id, RunOutcome::Cancelled, Vec::new(), last_text));
                }
                continue;
            }
            // Every call has its result: the message that opens this run joins the transcript.
            if let Some(first) = opening.take() {
                self.store_opening(chat, run_id, first).await?;
                continue;
            }
            match messages.last().map(|m| &m.message) {
                Some(ChatMessage::Assistant { text, .. }) => {
                    return Ok(self.summary(
                        run_id,
                        RunOutcome::Completed,
                        Vec::new(),
                        text.clone(),
                    ));
                }
                None => {
                    return Ok(self.summary(run_id, RunOutcome::Completed, Vec::new(), last_text));
                }
                _ => {}
            }
            // Inbox messages for this agent join the running turn before the next model step.
            if self.deliver_in_place(&chat.id, run_id).await? {
                continue;
            }
            if steps >= config.max_steps {
                let note = format!("Stopped after {steps} model steps (max_steps in config.toml).");
                store
                    .append_message(
                        &chat.id,
                        Some(run_id),
                        &ChatMessage::Assistant {
                            text: note.clone(),
                            tool_calls: Vec::new(),
                        },
                    )
                    .await
                    .map_err(RuntimeError::from)?;
                return Ok(self.summary(run_id, RunOutcome::Completed, Vec::new(), note));
            }
            steps += 1;
            if provider.is_none() {
                let model = chat.model.clone().ok_or_else(|| RuntimeError::InvalidInput {
                    field: "model".into(),
                    message: "no model set: pass --model provider/model or set default_model in config.toml".into(),
                })?;
                provider = Some(build_provider(
                    &model,
                    &config.providers,
                    self.inner.keys.as_ref(),
                )?);
            }
            let Some((client, model_id)) = provider.as_ref() else {
                continue;
            };
            let request = ModelRequest {
                model: model_id.clone(),
                system: self.full_system_prompt(chat, &ctx).await?,
                messages: messages.into_iter().map(|m| m.message).collect(),
                tools: self.tool_definitions(&loaded),
            };
            let chat_id = chat.id.clone();
            let run = run_id.to_string();
            let events = self.inner.events.clone();
            let on_text = move |delta: &str| {
                let _ = events.send(AgentEvent::TextDelta {
                    chat_id: chat_id.clone(),
                    run_id: run.clone(),
                    delta: delta.to_string(),
                });
            };
            let response = tokio::select! {
                r = client.stream(&request, &on_text) => r.map_err(LoopError::Provider)?,
                _ = cancel.cancelled() => return Err(LoopError::Provider(ProviderError::Cancelled)),
            };
            last_text = response.text.clone();
            let assistant = ChatMessage::Assistant {
                text: response.text.clone(),
                tool_calls: response.tool_calls.clone(),
            };
            store
                .append_message(&chat.id, Some(run_id), &assistant)
                .await
                .map_err(RuntimeError::from)?;
            for call in &response.tool_calls {
                self.emit(AgentEvent::ToolCallStart {
                    chat_id: chat.id.clone(),
                    run_id: run_id.to_string(),
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    args: display_args(&call.arguments),
                });
            }
        }
    }

    /// Stores the message that opens a run (see [`Opening`]).
    async fn store_opening(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        opening: Opening,
    ) -> Result<(), RuntimeError> {
        let store = &self.inner.store;
        match opening {
            Opening::User(text) => {
                store
                    .append_message(&chat.id, Some(run_id), &ChatMessage::User { text })
                    .await?;
            }
            Opening::Inbox { message_id, text } => {
                // `None`: recorded by an earlier attempt that died; the run continues from the
                // transcript as it is (a finished answer ends it without a model call).
                store
                    .record_inbox_delivery(
                        &message_id,
                        &chat.id,
                        Some(run_id),
                        &ChatMessage::User { text },
                    )
                    .await?;
                hold_point("inbox_recorded").await;
            }
        }
        Ok(())
    }

    fn summary(
        &self,
        run_id: &str,
        outcome: RunOutcome,
        pending: Vec<PendingApproval>,
        text: String,
    ) -> RunSummary {
        RunSummary {
            run_id: run_id.to_string(),
            outcome,
            pending,
            text,
            error: None,
        }
    }

    fn tool_definitions(&self, selected: &[String]) -> Vec<ToolDefinition> {
        selected
            .iter()
            .filter_map(|name| self.inner.toolset.get(name))
            .map(|tool| {
                let spec = tool.spec();
                ToolDefinition {
                    name: spec.runtime_name.to_string(),
                    description: spec.description.to_string(),
                    parameters: spec.parameters.clone(),
                }
            })
            .collect()
    }

    /// Decides, runs or refuses one call. Returns the pending approval when it must wait.
    async fn settle_call(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        call: &ToolCall,
        selected: &[String],
        ctx: &ToolContext,
        options: &RunOptions,
    ) -> Result<Option<String>, RuntimeError> {
        let store = &self.inner.store;
        // A call that was answered by the user.
        if let Some(record) = store.get_approval(&call.id).await? {
            match (record.status, record.action) {
                (ApprovalStatus::Pending, _) => return Ok(Some(record.approval.id)),
                (ApprovalStatus::Resolved, Some(ApprovalActionId::Reject))
                | (ApprovalStatus::Resolved, None) => {
                    let mut text =
                        format!("The user rejected this {} call; it did not run.", call.name);
                    if let Some(f) = record.feedback {
                        text.push_str(&format!(" User feedback: {f}"));
                    }
                    self.finish(chat, run_id, call, Err(text), 0).await?;
                    return Ok(None);
                }
                (ApprovalStatus::Resolved, Some(_)) => {
                    let args = parse_tool_arguments(&call.arguments).unwrap_or_default();
                    self.execute(chat, run_id, call, args, ctx, record.feedback)
                        .await?;
                    return Ok(None);
                }
            }
        }
        // A call that started running in a process that died.
        if store.tool_step_status(&call.id).await? == Some(ToolStepStatus::Running) {
            let text = format!(
                "The {} call was interrupted: Suzent stopped while it was running, so its effects are unknown. Check the current state before retrying.",
                call.name
            );
            self.finish(chat, run_id, call, Err(text), 0).await?;
            return Ok(None);
        }
        let args = match parse_tool_arguments(&call.arguments) {
            Ok(a) => a,
            Err(message) => {
                self.finish(chat, run_id, call, Err(message), 0).await?;
                return Ok(None);
            }
        };
        let mut found = self.inner.toolset.get(&call.name);
        if found.is_none() && call.name.starts_with(suzent_mcp::PREFIX) {
            // An MCP tool of a server not listed yet.
            self.inner.toolset.ensure_discovered().await;
            found = self.inner.toolset.get(&call.name);
        }
        let Some(tool) = found else {
            let known = selected.join(", ");
            self.finish(
                chat,
                run_id,
                call,
                Err(format!(
                    "unknown tool '{}'. Available tools: {known}",
                    call.name
                )),
                0,
            )
            .await?;
            return Ok(None);
        };
        if !selected.iter().any(|s| s == tool.spec().runtime_name) {
            // Deferred tools are not loaded until tool_search activates them (mcp case 3).
            let msg = if tool.spec().deferrable {
                format!(
                    "tool '{}' is not loaded in this chat: it is a deferred tool and did not run. Activate it first with tool_search(query=\"{}\"); it is callable from the next step.",
                    call.name,
                    tool.spec().runtime_name
                )
            } else {
                format!(
                    "tool '{}' is not enabled in this chat. Enabled tools: {}",
                    call.name,
                    selected.join(", ")
                )
            };
            self.finish(chat, run_id, call, Err(msg), 0).await?;
            return Ok(None);
        }
        let access = match tool.access(&args, ctx) {
            Ok(a) => a,
            Err(e) => {
                self.finish(chat, run_id, call, Err(e.to_string()), 0)
                    .await?;
                return Ok(None);
            }
        };
        let mut rules = store.list_rules(Some(&chat.id)).await?;
        rules.extend(self.rule_file().rules);
        let request = PermissionRequest {
            tool_name: tool.spec().runtime_name.to_string(),
            args: args.clone(),
            requires_approval: tool.needs_approval(&args, ctx),
            access,
        };
        let pctx = PermissionContext {
            mode: chat.mode,
            paths: &ctx.paths,
            rules: &rules,
            chat_id: &chat.id,
        };
        let evaluation = self.inner.engine.evaluate(&request, &pctx);
        let mut decision = evaluation.decision;
        if crate::reviewer::should_review(chat.mode, &decision) {
            decision = self.review_call(chat, &request, &decision, options).await;
        }
        if decision.behavior == Behavior::Ask && options.on_ask == OnAsk::Deny {
            let mut headless = PermissionDecision::new(
                Behavior::Deny,
                DecisionSource::Headless,
                "headless_ask_denied",
                format!(
                    "{} This run cannot ask for approval (headless), so the call was refused.",
                    decision.reason
                ),
                decision.risk,
            );
            headless.matched_rules = decision.matched_rules.clone();
            decision = headless;
        }
        self.audit_decision(chat, run_id, call, &args, &decision, &evaluation.matched)
            .await;
        self.emit(AgentEvent::ToolPermissionDecision(
            suzent_core::DecisionEvent {
                chat_id: chat.id.clone(),
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                decision: decision.clone(),
            },
        ));
        match decision.behavior {
            Behavior::Allow => {
                self.execute(chat, run_id, call, args, ctx, None).await?;
                Ok(None)
            }
            Behavior::Deny => {
                let msg = format!(
                    "Permission denied ({}): {}",
                    decision.reason_code, decision.reason
                );
                self.finish(chat, run_id, call, Err(msg), 0).await?;
                Ok(None)
            }
            Behavior::Ask => {
                let shown = redact_value(&args);
                let approval = PendingApproval {
                    id: call.id.clone(),
                    chat_id: chat.id.clone(),
                    run_id: run_id.to_string(),
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    args: shown.clone(),
                    decision: decision.clone(),
                    created_at: Utc::now(),
                };
                store.insert_pending_approval(&approval).await?;
                self.emit(AgentEvent::ToolApprovalRequest {
                    chat_id: chat.id.clone(),
                    run_id: run_id.to_string(),
                    approval_id: approval.id.clone(),
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    args: shown,
                    decision,
                });
                Ok(Some(approval.id))
            }
        }
    }

    async fn execute(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        call: &ToolCall,
        args: Value,
        ctx: &ToolContext,
        feedback: Option<String>,
    ) -> Result<(), RuntimeError> {
        let store = &self.inner.store;
        if !store
            .begin_tool_step(&chat.id, &call.id, &call.name, &call.arguments)
            .await?
        {
            // Another process began it; it never finished (else a result would exist).
            let text = format!(
                "The {} call was interrupted before its result was recorded; its effects are unknown.",
                call.name
            );
            return self.finish(chat, run_id, call, Err(text), 0).await;
        }
        let Some(tool) = self.inner.toolset.get(&call.name) else {
            return self
                .finish(
                    chat,
                    run_id,
                    call,
                    Err(format!("unknown tool '{}'", call.name)),
                    0,
                )
                .await;
        };
        let started = Instant::now();
        // The call's own context knows its id (`render_ui` records which call drew a surface).
        let mut ctx = ctx.clone();
        ctx.tool_call_id = Some(call.id.clone());
        let result = tool.call(args, &ctx).await;
        let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        hold_point("after_tool_ran").await;
        let result = match result {
            Ok(mut out) => {
                if let Some(f) = feedback {
                    out.push_str(&format!("\n\nUser note with the approval: {f}"));
                }
                Ok(out)
            }
            Err(ToolError::Cancelled) => Err("the call was cancelled by the user".to_string()),
            Err(e) => Err(e.to_string()),
        };
        self.finish(chat, run_id, call, result, elapsed).await
    }

    /// Stores a call's result, then announces it.
    async fn finish(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        call: &ToolCall,
        result: Result<String, String>,
        duration_ms: u64,
    ) -> Result<(), RuntimeError> {
        let (ok, content) = match result {
            Ok(c) => (true, c),
            Err(e) => (false, e),
        };
        let message = ChatMessage::Tool {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: content.clone(),
            is_error: !ok,
        };
        self.inner
            .store
            .finish_tool_step(&chat.id, Some(run_id), &call.id, &message)
            .await?;
        self.emit(AgentEvent::ToolCallEnd {
            chat_id: chat.id.clone(),
            run_id: run_id.to_string(),
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            ok,
            output: bounded(&content, 8000),
            duration_ms,
        });
        Ok(())
    }

    async fn audit_decision(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        call: &ToolCall,
        args: &Value,
        decision: &PermissionDecision,
        matched: &[Rule],
    ) {
        self.inner.audit.append_value(json!({
            "timestamp": Utc::now().to_rfc3339(),
            "kind": "evaluation",
            "chatId": chat.id,
            "runId": run_id,
            "toolCallId": call.id,
            "tool": call.name,
            "args": redact_value(args),
            "mode": chat.mode.as_str(),
            "decision": decision.behavior.as_str(),
            "source": decision.source,
            "reason": decision.reason,
            "reasonCode": decision.reason_code,
            "risk": decision.risk,
            "matchedRules": matched.iter().map(|r| json!({"id": r.id, "tool": r.tool, "behavior": r.behavior, "destination": r.destination})).collect::<Vec<_>>(),
            "confidence": decision.confidence,
            "riskCategories": decision.risk_categories,
            "reviewerModel": decision.reviewer_model,
        })).await;
    }
}

/// The message that opens a run, stored once the calls of the last turn all have results.
pub(crate) enum Opening {
    /// The user's message (`send_message`).
    User(String),
    /// An inbox message, stored with its delivery record: a redelivery after a crash finds the
    /// record and stores nothing.
    Inbox {
        /// The inbox message id.
        message_id: String,
        /// Its transcript text ([`inbox::transcript_text`]).
        text: String,
    },
}

enum LoopError {
    Runtime(RuntimeError),
    Provider(ProviderError),
}

impl From<RuntimeError> for LoopError {
    fn from(e: RuntimeError) -> Self {
        LoopError::Runtime(e)
    }
}

impl From<ProviderError> for LoopError {
    fn from(e: ProviderError) -> Self {
        LoopError::Runtime(RuntimeError::Provider(e))
    }
}

/// The tool calls of the last assistant message and the ids already answered after it, when the
/// transcript ends in tool work (an assistant message with calls, possibly followed by results).
fn unanswered_calls(messages: &[StoredMessage]) -> Option<(Vec<ToolCall>, Vec<String>)> {
    let idx = messages
        .iter()
        .rposition(|m| matches!(m.message, ChatMessage::Assistant { .. }))?;
    if messages[idx + 1..]
        .iter()
        .any(|m| matches!(m.message, ChatMessage::User { .. }))
    {
        return None;
    }
    let ChatMessage::Assistant { tool_calls, .. } = &messages[idx].message else {
        return None;
    };
    if tool_calls.is_empty() {
        return None;
    }
    let answered: Vec<String> = messages[idx + 1..]
        .iter()
        .filter_map(|m| match &m.message {
            ChatMessage::Tool { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    let open: Vec<ToolCall> = tool_calls
        .iter()
        .filter(|c| !answered.contains(&c.id))
        .cloned()
        .collect();
    Some((open, answered))
}

fn display_args(raw: &str) -> Value {
    match parse_tool_arguments(raw) {
        Ok(v) => redact_value(&v),
        Err(_) => Value::String(redact_text(&bounded(raw, 2000))),
    }
}

fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… [{} more bytes]", &text[..cut], text.len() - cut)
}

fn system_prompt(chat: &ChatRecord, ctx: &ToolContext) -> String {
    format!(
        "You are Suzent, a desktop AI agent working in the user's workspace.\n\
         Workspace root: {} (also reachable as /workspace). /persistence is private storage of this chat; /shared is shared by all chats.\n\
         Permission mode: {}. Some tool calls need the user's approval; a refused call returns an error that says why: adapt instead of retrying the same call.\n\
         Read files before editing them. Keep answers short.",
        ctx.workspace_root.display(),
        chat.mode
    )
}

fn whoami() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "local".into())
}

async fn hold_point(name: &str) {
    if std::env::var(HOLD_ENV).ok().as_deref() == Some(name) {
        eprintln!("suzent: holding at {name}");
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    }
}

/// The rule an answer remembers: the one its action proposed, or the user's edit of it. An edit
/// must keep the tool and stay an allow rule (the destination is always the action's), and only
/// an action that proposes a rule can carry one.
fn remembered_rule(
    answer: &ApprovalResponse,
    tool_name: &str,
    action: Option<&suzent_core::ApprovalAction>,
) -> Result<Option<RuleDraft>, RuntimeError> {
    let proposed = action.and_then(|a| a.rule.clone());
    let Some(edited) = answer.rule.clone() else {
        return Ok(proposed);
    };
    let invalid = |message: String| RuntimeError::InvalidInput {
        field: "rule".into(),
        message,
    };
    let Some(proposed) = proposed else {
        return Err(invalid(format!(
            "approval '{}': action '{}' remembers no rule, so it cannot carry an edited one",
            answer.request_id, answer.action_id
        )));
    };
    if edited.tool != tool_name {
        return Err(invalid(format!(
            "approval '{}': the edited rule is for '{}', but the call is '{tool_name}'",
            answer.request_id, edited.tool
        )));
    }
    if edited.behavior != suzent_core::Behavior::Allow {
        return Err(invalid(format!(
            "approval '{}': an approval can only remember an allow rule, not '{}'",
            answer.request_id,
            edited.behavior.as_str()
        )));
    }
    Ok(Some(RuleDraft {
        destination: proposed.destination,
        ..edited
    }))
}
