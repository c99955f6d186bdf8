//! The [`Runtime`] facade: it opens the services, holds them, and delegates each public call to
//! the one service that owns it. No agent logic lives here; see the service modules.

use crate::agents::AgentService;
use crate::approvals::ApprovalService;
use crate::audit_read::{AuditFilter, AuditRead};
use crate::background::BackgroundService;
use crate::browser::BrowserService;
use crate::canvas::CanvasService;
use crate::chats::{ChatService, CreateChat};
use crate::devices::{Devices, RuntimeDeviceHost};
use crate::dirs::Paths;
use crate::doctor::{DoctorReport, DoctorService};
use crate::error::RuntimeError;
use crate::event_bus::Events;
use crate::inbox::{Dispatcher, InboxService};
use crate::local_models::LocalModels;
use crate::mcp::{McpImport, McpService, McpTestResult};
use crate::memory::{EmbeddingStatus, MemoryService, SummaryService};
use crate::permissions::PermissionService;
use crate::plans::PlanService;
use crate::processes::ProcessService;
use crate::provider::{EnvAndKeychain, KeySource};
use crate::rules::{PermissionState, RuleService};
use crate::sessions::Sessions;
use crate::settings::{Settings, SettingsPatch, SettingsService, load_config};
use crate::skills::SkillService;
use crate::toolset::Toolset;
use crate::turn::{RunOptions, RunSummary, TurnService, TurnServices};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use suzent_core::{
    AgentEvent, ApprovalResponse, BackgroundTask, Config, PermissionMode, Plan, Rule, RuleDraft,
    Surface, SurfaceAction, SurfaceHistoryEntry,
};
use suzent_mcp::{McpServerConfig, McpServerInfo, McpToolInfo};
use suzent_permissions::audit::AuditLog;
use suzent_permissions::{Explanation, PermissionGate, RuleFile};
use suzent_store::{
    ChatRecord, InboxMessage, NewInboxMessage, PendingApproval, Store, StoredMessage,
};
use suzent_tools::{
    Capability, MemorySearchResult, Skill, ToolCategory, ToolMetadata, ToolRegistry, ToolSummary,
    default_registry,
};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

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

/// The services of one runtime (Codex's `SessionServices`): each owns its state; they reach
/// each other through the handles they were given when the runtime opened. A new capability is
/// a new service here (browser, devices, scheduler, channels), not new logic on [`Runtime`].
pub(crate) struct Services {
    paths: Paths,
    events: Events,
    settings: Arc<SettingsService>,
    sessions: Arc<Sessions>,
    chats: Arc<ChatService>,
    rules: Arc<RuleService>,
    toolset: Arc<Toolset>,
    mcp: McpService,
    permissions: Arc<PermissionService>,
    approvals: Arc<ApprovalService>,
    turn: Arc<TurnService>,
    inbox: Arc<InboxService>,
    dispatcher: Arc<Dispatcher>,
    background: Arc<BackgroundService>,
    processes: Arc<ProcessService>,
    memory: Arc<MemoryService>,
    summaries: Arc<SummaryService>,
    skills: Arc<SkillService>,
    plans: Arc<PlanService>,
    canvas: Arc<CanvasService>,
    /// Speech clips of `speak`: synthesis and the chats' audio folders (see `speech.rs`).
    speech: Arc<crate::speech::SpeechService>,
    /// Paired devices: pairing, the device list, the peer outbox (see `devices/`).
    devices: Arc<Devices>,
    /// Messaging channels: connectors, conversations, requests, replies (see `channels/`).
    channels: Arc<crate::channels::Channels>,
    /// Full-text search over chat titles and messages (SQLite FTS5).
    search: crate::ChatSearch,
    /// What the app shows beside the transcript after a restart (see `notes.rs`).
    notes: crate::notes::TurnNotes,
    /// Scheduled jobs, heartbeats, dreams and the scheduler (see `schedules/`).
    schedules: crate::schedules::Schedules,
    /// Chat goals (see `goals/`).
    goals: crate::goals::Goals,
    /// The browser of `browser_action` (managed Chromium, a DevTools endpoint or the extension).
    browser: Arc<BrowserService>,
    /// Local GGUF models: the models folder, downloads, the in-process engine (see
    /// `local_models.rs`).
    local_models: Arc<LocalModels>,
    /// The audit log's writer (the gate's; the browser bridge appends pairing decisions).
    audit: AuditLog,
    doctor: DoctorService,
}

impl Services {
    /// Opens every service over the configuration, the database and the directories.
    async fn open(options: RuntimeOptions) -> Result<Services, RuntimeError> {
        let RuntimeOptions {
            paths,
            keys,
            config,
        } = options;
        let config = match config {
            Some(c) => {
                c.validate()?;
                c
            }
            None => load_config(&paths)?,
        };
        let registry = default_registry();
        // Unknown tool names in the configuration are an error now, not at the first turn.
        registry
            .expand_selection(&config.tools)
            .map_err(|e| RuntimeError::InvalidInput {
                field: "tools".into(),
                message: e.to_string(),
            })?;
        let store = Store::open(&paths.database()).await?;
        let events = Events::new();
        let audit = AuditLog::start(paths.audit_log());
        let rules = Arc::new(RuleService::new(store.clone(), &paths.config_dir));
        rules.report_rule_file();
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
        let sessions = Arc::new(Sessions::default());
        let inbox = Arc::new(InboxService::new(store.clone()));
        let mcp_registry = crate::mcp::open_registry(
            paths.config_file().with_file_name("mcp.json"),
            Arc::clone(&keys),
            store.clone(),
        )?;
        mcp_registry.load_cache().await?;
        let toolset = Toolset::new(
            registry,
            mcp_registry,
            store.clone(),
            events.clone(),
            Arc::clone(&rules),
        );
        // The built-in tools with `tool_search`.
        let registry = toolset.registry.clone();
        let local_models = Arc::new(LocalModels::new(&paths.data_dir, &config.providers.local));
        let settings = Arc::new(SettingsService::new(
            config,
            paths.clone(),
            keys,
            registry.clone(),
            Arc::clone(&local_models),
        ));
        let processes = Arc::new(ProcessService::new(store.clone(), Arc::clone(&inbox)));
        // What a killed runtime left running is stopped before anything new starts.
        if let Err(e) = processes.sweep().await {
            tracing::warn!("sweeping the tool processes of earlier runs: {e}");
        }
        let background = Arc::new(BackgroundService::new(
            &paths.data_dir,
            store.clone(),
            events.clone(),
            Arc::clone(&settings),
            Arc::clone(&sessions),
            Arc::clone(&inbox),
            Arc::clone(&processes) as Arc<dyn suzent_tools::ProcessJournal>,
        )?);
        let chats = Arc::new(ChatService::new(
            store.clone(),
            Arc::clone(&settings),
            registry.clone(),
            Arc::clone(&sessions),
        ));
        let plans = Arc::new(PlanService::new(
            store.clone(),
            events.clone(),
            Arc::clone(&chats),
        ));
        let canvas = Arc::new(CanvasService::new(
            store.clone(),
            events.clone(),
            Arc::clone(&chats),
            Arc::clone(&inbox),
        ));
        let speech = Arc::new(crate::speech::SpeechService::new(
            &paths,
            Arc::clone(&settings),
        ));
        let memory = Arc::new(MemoryService::new(
            &paths,
            store.clone(),
            Arc::clone(&settings),
        ));
        let skills = Arc::new(SkillService::new(&paths, store.clone()));
        let summaries = Arc::new(SummaryService::new(
            store.clone(),
            Arc::clone(&chats),
            Arc::clone(&memory),
            Arc::clone(&settings),
            Arc::clone(&sessions),
        ));
        let browser = Arc::new(BrowserService::new(
            paths.data_dir.clone(),
            store.clone(),
            settings.config().browser,
        ));
        let gate = PermissionGate::new(audit.clone(), Arc::new(events.clone()));
        let permissions = Arc::new(PermissionService::new(
            gate,
            Arc::clone(&rules),
            Arc::clone(&toolset),
            Arc::clone(&chats),
            Arc::clone(&settings),
            store.clone(),
            paths.clone(),
        ));
        let approvals = Arc::new(ApprovalService::new(
            store.clone(),
            events.clone(),
            Arc::clone(&rules),
            Arc::clone(&toolset),
            Arc::clone(&permissions),
        ));
        let devices = Arc::new(Devices::new(store.clone(), &paths.data_dir));
        let channels = Arc::new(crate::channels::Channels::new(
            store.clone(),
            Arc::clone(&settings),
            Arc::clone(&inbox),
            Arc::clone(&chats),
            Arc::clone(&rules),
            Arc::clone(&speech),
            events.clone(),
        ));
        let turn = Arc::new_cyclic(|turn: &Weak<TurnService>| {
            let agents = Arc::new(AgentService::new(
                turn.clone(),
                store.clone(),
                Arc::clone(&chats),
                Arc::clone(&sessions),
                Arc::clone(&settings),
                Arc::clone(&inbox),
                Arc::clone(&background),
                registry.clone(),
                Arc::clone(&devices),
            ));
            let services = TurnServices {
                store: store.clone(),
                events: events.clone(),
                paths: paths.clone(),
                settings: Arc::clone(&settings),
                chats: Arc::clone(&chats),
                sessions: Arc::clone(&sessions),
                toolset: Arc::clone(&toolset),
                permissions: Arc::clone(&permissions),
                approvals: Arc::clone(&approvals),
                inbox: Arc::clone(&inbox),
                background: Arc::clone(&background),
                plans: Arc::clone(&plans),
                memory: Arc::clone(&memory),
                skills: Arc::clone(&skills),
                canvas: Arc::clone(&canvas),
                speech: Arc::clone(&speech),
                browser: Arc::clone(&browser),
                local_models: Arc::clone(&local_models),
                channels: Arc::clone(&channels),
            };
            TurnService::new(services, agents)
        });
        let dispatcher = Arc::new(Dispatcher::new(
            Arc::clone(&inbox),
            Arc::clone(&turn),
            Arc::clone(&chats),
            Arc::clone(&sessions),
            store.clone(),
            Arc::clone(&summaries),
            Arc::clone(&memory),
            Arc::clone(&settings),
            CancellationToken::new(),
        ));
        channels.set_turns(Arc::downgrade(&turn) as Weak<dyn crate::channels::ChannelTurns>);
        devices.set_host(Arc::new(RuntimeDeviceHost {
            settings: Arc::clone(&settings),
            inbox: Arc::clone(&inbox),
            chats: Arc::clone(&chats),
            sessions: Arc::clone(&sessions),
            store: store.clone(),
            agents: Arc::downgrade(turn.agents()),
        }));
        let doctor = DoctorService::new(
            paths.clone(),
            store.clone(),
            Arc::clone(&settings),
            Arc::clone(&background),
            Arc::clone(&local_models),
        );
        let schedules = crate::schedules::Schedules::new(store.clone(), events.clone());
        let goals = crate::goals::Goals::new(store.clone(), events.clone());
        Ok(Services {
            channels,
            schedules,
            goals,
            devices,
            search: crate::ChatSearch::new(store.clone()),
            notes: crate::notes::TurnNotes::start(store.clone(), &events),
            mcp: McpService::new(Arc::clone(&toolset)),
            paths,
            events,
            settings,
            sessions,
            chats,
            rules,
            toolset,
            permissions,
            approvals,
            turn,
            inbox,
            dispatcher,
            background,
            processes,
            memory,
            summaries,
            skills,
            plans,
            canvas,
            speech,
            browser,
            local_models,
            audit,
            doctor,
        })
    }
}

/// The agent runtime: the one public API of Suzent. Cheap to clone; all clones share state.
///
/// A thin facade: every method hands the call to the service that owns it (`chats`, `turn`,
/// `approvals`, `rules`, `permissions`, `inbox`, `background`, `agents`, `memory`, `skills`,
/// `plans`, `canvas`, `mcp`, `doctor`, `settings`).
#[derive(Clone)]
pub struct Runtime {
    s: Arc<Services>,
}

/// A runtime handle that does not keep it alive (held by services the runtime owns: the
/// schedules and goals run turns through the public API).
#[derive(Clone)]
pub(crate) struct WeakRuntime(Weak<Services>);

impl WeakRuntime {
    /// The runtime, while it is open.
    pub(crate) fn upgrade(&self) -> Option<Runtime> {
        self.0.upgrade().map(|s| Runtime { s })
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("paths", &self.s.paths)
            .finish()
    }
}

impl Runtime {
    /// Opens the runtime: reads the configuration, opens (and migrates) the database.
    pub async fn open(options: RuntimeOptions) -> Result<Runtime, RuntimeError> {
        let runtime = Runtime {
            s: Arc::new(Services::open(options).await?),
        };
        let weak = WeakRuntime(Arc::downgrade(&runtime.s));
        runtime.s.schedules.bind(weak.clone());
        runtime.s.goals.bind(weak);
        Ok(runtime)
    }

    // ---- unattended runs: schedules, heartbeats, goals ----

    /// Scheduled jobs, heartbeats and the scheduler (add, list, run now, history...).
    pub fn schedules(&self) -> &crate::schedules::Schedules {
        &self.s.schedules
    }

    /// Chat goals (`/goal`): set, pause, resume, and the judge that ends them.
    pub fn goals(&self) -> &crate::goals::Goals {
        &self.s.goals
    }

    /// Starts what runs unattended in a long-lived process (the desktop app, `suzent serve`):
    /// the scheduler (or stands by when another process schedules; the status says which), the
    /// built-in memory consolidation job, and the goals that were active before a restart.
    pub async fn start_unattended(&self) -> crate::scheduler::SchedulerStatus {
        let status = self.s.schedules.start(None).await;
        if let Err(e) = self.s.schedules.ensure_dream().await {
            tracing::warn!("registering the memory consolidation job: {e}");
        }
        if let Err(e) = self.s.goals.resume_active().await {
            tracing::warn!("resuming goals: {e}");
        }
        self.s.channels.start();
        status
    }

    /// The messaging channels (Telegram, ...): settings, tokens, connections, pending requests
    /// of people not on an allow-list, and the conversations that have chats.
    pub fn channels(&self) -> &Arc<crate::channels::Channels> {
        &self.s.channels
    }

    /// Connects the enabled messaging channels (once): their messages go through the inbox,
    /// so the dispatcher must run too ([`Runtime::start_dispatcher`]).
    /// [`Runtime::start_unattended`] calls it.
    pub fn start_channels(&self) {
        self.s.channels.start()
    }

    // ---- configuration and settings ----

    /// A snapshot of the configuration in use (runs started later see saved changes).
    pub fn config(&self) -> Config {
        self.s.settings.config()
    }

    /// The directories in use.
    pub fn paths(&self) -> &Paths {
        &self.s.paths
    }

    /// The tool registry (built-in tools and `tool_search`).
    pub fn registry(&self) -> &ToolRegistry {
        &self.s.toolset.registry
    }

    /// Checks that `model` (or the configured default) names a provider whose key is available.
    pub fn check_model(&self, model: Option<&str>) -> Result<(), RuntimeError> {
        self.s.settings.check_model(model)
    }

    /// The current settings and which providers have a key.
    pub fn settings(&self) -> Settings {
        self.s.settings.settings()
    }

    /// Applies `patch` to the configuration, validates the result, writes `config.toml`
    /// atomically and makes it the configuration of runs that start from now on.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] or [`RuntimeError::Config`] naming the bad field
    /// (nothing is written), [`RuntimeError::Io`] when the file cannot be written.
    pub fn save_settings(&self, patch: SettingsPatch) -> Result<Settings, RuntimeError> {
        let saved = self.s.settings.save(patch)?;
        self.s.browser.set_config(self.s.settings.config().browser);
        Ok(saved)
    }

    /// Where API keys come from (the goal judge builds its provider with them).
    pub(crate) fn key_source(&self) -> &dyn KeySource {
        self.s.settings.keys()
    }

    // ---- providers and chat search ----

    /// The models `provider` offers (see [`crate::ProviderCheck::list_models`]).
    pub async fn list_models(
        &self,
        provider: &str,
        base_url: Option<&str>,
        api_key: Option<&str>,
    ) -> Result<Vec<String>, RuntimeError> {
        if provider == "local" {
            // The installed GGUF files, not a server's listing.
            return self
                .s
                .local_models
                .list()
                .map(|models| models.into_iter().map(|m| m.id).collect())
                .map_err(|e| RuntimeError::InvalidInput {
                    field: "provider".into(),
                    message: e.to_string(),
                });
        }
        crate::ProviderCheck::new(self.config().providers, self.s.settings.key_handle())
            .list_models(provider, base_url, api_key)
            .await
    }

    /// One real request to `model` (see [`crate::ProviderCheck::test_connection`]).
    pub async fn test_connection(
        &self,
        model: &str,
        base_url: Option<&str>,
    ) -> Result<crate::ConnectionCheck, RuntimeError> {
        crate::ProviderCheck::new(self.config().providers, self.s.settings.key_handle())
            .test_connection(model, base_url)
            .await
    }

    /// What the app shows beside a chat's transcript: each tool call's decision, the user's
    /// answer and the tool's wall time, and the runs that stopped short (see
    /// [`suzent_store::ChatNotes`]).
    ///
    /// Errors: [`RuntimeError::ChatNotFound`]; storage errors.
    pub async fn chat_notes(&self, chat_id: &str) -> Result<suzent_store::ChatNotes, RuntimeError> {
        self.s.notes.chat_notes(chat_id).await
    }

    /// Chats whose title or messages contain every word of `query` (see [`crate::ChatSearch`]).
    pub async fn search_chats(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<suzent_store::ChatSearchHit>, RuntimeError> {
        self.s.search.search(query, limit).await
    }

    /// Goes back to the default model for a chat.
    pub async fn clear_model(&self, chat_id: &str) -> Result<ChatRecord, RuntimeError> {
        self.s.chats.clear_model(chat_id).await
    }

    /// Paired devices: pairing, the device list, the peer outbox (see `devices/`).
    pub fn devices(&self) -> &Arc<Devices> {
        &self.s.devices
    }

    /// The browser service (`browser_action`; the extension bridge connects here).
    pub fn browser(&self) -> &Arc<BrowserService> {
        &self.s.browser
    }

    /// The local models service (installed GGUF models, downloads, the in-process engine).
    pub fn local_models(&self) -> &Arc<LocalModels> {
        &self.s.local_models
    }

    /// The model ids the server of `provider` (`local`, `openai-compatible`, `ollama`, `openai`)
    /// lists at its `/models`.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for an unknown provider, [`RuntimeError::Provider`]
    /// when the server cannot be asked.
    pub async fn server_models(&self, provider: &str) -> Result<Vec<String>, RuntimeError> {
        self.s.settings.server_models(provider).await
    }

    /// The provider settings of `config` with the local models folder filled in.
    pub(crate) fn providers_config(&self, config: &Config) -> suzent_core::ProvidersConfig {
        self.s.settings.providers(config)
    }

    /// The model of new chats: `default_model`, or else the first installed local model.
    pub fn default_model(&self) -> Option<String> {
        self.s.settings.default_model(&self.s.settings.config())
    }

    /// The permission audit log's writer (one per runtime, so the hash chain stays whole); the
    /// browser bridge appends pairing decisions to it.
    pub fn audit_log(&self) -> AuditLog {
        self.s.audit.clone()
    }

    /// Subscribes to every event of every chat, from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<AgentEvent> {
        self.s.events.subscribe()
    }

    /// Checks the configuration, keys, database, the model (`model`, else the default one: its
    /// server's `/models` and a one-token completion) and the sandbox.
    pub async fn doctor(&self, model: Option<&str>) -> DoctorReport {
        self.s.doctor.report(model).await
    }

    // ---- chats ----

    /// Creates a chat. The workspace must be an existing directory.
    pub async fn create_chat(&self, args: CreateChat) -> Result<ChatRecord, RuntimeError> {
        self.s.chats.create(args).await
    }

    /// One chat.
    pub async fn chat(&self, chat_id: &str) -> Result<ChatRecord, RuntimeError> {
        self.s.chats.get(chat_id).await
    }

    /// Every chat, most recently updated first.
    pub async fn list_chats(&self) -> Result<Vec<ChatRecord>, RuntimeError> {
        self.s.chats.list().await
    }

    /// Renames a chat.
    pub async fn rename_chat(
        &self,
        chat_id: &str,
        title: &str,
    ) -> Result<ChatRecord, RuntimeError> {
        self.s.chats.rename(chat_id, title).await
    }

    /// Deletes a chat with its transcript, approvals and session rules, and the end-of-chat
    /// summaries of it in archival memory (source `summary`); the chat is not summarized.
    /// Entries archived on purpose (`memory_archive`, other sources) stay. Its speech clips are
    /// deleted.
    pub async fn delete_chat(&self, chat_id: &str) -> Result<(), RuntimeError> {
        self.s.chats.delete(chat_id).await?;
        self.s.speech.forget_chat(chat_id);
        Ok(())
    }

    /// The file of speech clip `file` of `chat_id` (`SpeechClip::file`), for the app's player.
    /// Errors when the names are not plain file names or no such clip exists.
    pub fn speech_clip_path(
        &self,
        chat_id: &str,
        file: &str,
    ) -> Result<std::path::PathBuf, RuntimeError> {
        self.s.speech.clip_path(chat_id, file)
    }

    /// Sets a chat's permission mode.
    pub async fn set_mode(
        &self,
        chat_id: &str,
        mode: PermissionMode,
    ) -> Result<ChatRecord, RuntimeError> {
        self.s.chats.set_mode(chat_id, mode).await
    }

    /// A chat's permission mode.
    pub async fn get_mode(&self, chat_id: &str) -> Result<PermissionMode, RuntimeError> {
        Ok(self.s.chats.get(chat_id).await?.mode)
    }

    /// Sets a chat's model (`provider/model`).
    pub async fn set_model(&self, chat_id: &str, model: &str) -> Result<ChatRecord, RuntimeError> {
        self.s.chats.set_model(chat_id, model).await
    }

    /// Sets a chat's tool selection (None: the configuration's).
    pub async fn set_tools(
        &self,
        chat_id: &str,
        tools: Option<Vec<String>>,
    ) -> Result<ChatRecord, RuntimeError> {
        self.s.chats.set_tools(chat_id, tools).await
    }

    /// The stored transcript.
    pub async fn messages(&self, chat_id: &str) -> Result<Vec<StoredMessage>, RuntimeError> {
        self.s.chats.messages(chat_id).await
    }

    // ---- turns ----

    /// Sends a user message and runs the turn until the model stops, the turn waits for
    /// approvals, or it fails. Provider errors end the run with outcome `Failed` (and a
    /// `run_error` event); the chat stays usable.
    pub async fn send_message(
        &self,
        chat_id: &str,
        text: &str,
        options: RunOptions,
    ) -> Result<RunSummary, RuntimeError> {
        self.s
            .turn
            .send_message(chat_id, text, Vec::new(), options)
            .await
    }

    /// [`Runtime::send_message`] with files the user attached: each one returned by
    /// [`Runtime::add_attachment`] for this chat (checked again: a path outside the chat's
    /// attachments folder is `InvalidInput`). The text may be empty when files are attached.
    pub async fn send_with_attachments(
        &self,
        chat_id: &str,
        text: &str,
        attachments: Vec<suzent_core::Attachment>,
        options: RunOptions,
    ) -> Result<RunSummary, RuntimeError> {
        self.s
            .turn
            .send_message(chat_id, text, attachments, options)
            .await
    }

    /// Copies a file the user attached (`name`, `bytes`) into the chat's workspace under
    /// `.attachments/<chat id>/` and returns its reference for [`Runtime::send_with_attachments`].
    /// Errors: an unknown chat, an empty file or one over 25 MiB (`InvalidInput`), a workspace
    /// that cannot be written (`Io`).
    pub async fn add_attachment(
        &self,
        chat_id: &str,
        name: &str,
        bytes: &[u8],
    ) -> Result<suzent_core::Attachment, RuntimeError> {
        self.s.chats.add_attachment(chat_id, name, bytes).await
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
        self.s.turn.resume(chat_id, answers, options).await
    }

    /// Retries the chat's failed turn: the model is asked again from the transcript as it is
    /// (issue #13 item 2). Refused (`InvalidInput`) when the last turn was answered, when calls
    /// wait for approval, or when the chat has no message.
    pub async fn retry(
        &self,
        chat_id: &str,
        options: RunOptions,
    ) -> Result<RunSummary, RuntimeError> {
        self.s.turn.retry(chat_id, options).await
    }

    /// Compacts the chat now to fit its model's context (`/compact`): older tool outputs cut,
    /// older turns summarized by the model; the transcript is kept whole. `None` when there was
    /// nothing to compact. Errors: an unknown chat, no usable model,
    /// [`RuntimeError::Compaction`].
    pub async fn compact_chat(
        &self,
        chat_id: &str,
    ) -> Result<Option<suzent_core::CompactionInfo>, RuntimeError> {
        self.s.turn.compact_chat(chat_id).await
    }

    /// The chat's compactions, oldest first (where the transcript shows "conversation
    /// compacted").
    pub async fn compactions(
        &self,
        chat_id: &str,
    ) -> Result<Vec<suzent_core::CompactionInfo>, RuntimeError> {
        self.s.turn.compactions(chat_id).await
    }

    /// Stops the chat's running turn (the model stream and any running tool).
    pub fn cancel(&self, chat_id: &str) {
        self.s.sessions.cancel(chat_id)
    }

    // ---- approvals, rules, permissions ----

    /// Pending approvals, of one chat or of all.
    pub async fn pending_approvals(
        &self,
        chat_id: Option<&str>,
    ) -> Result<Vec<PendingApproval>, RuntimeError> {
        self.s.approvals.pending(chat_id).await
    }

    /// Global rules plus the chat's session rules (every rule when `chat_id` is None).
    pub async fn list_rules(&self, chat_id: Option<&str>) -> Result<Vec<Rule>, RuntimeError> {
        self.s.rules.list(chat_id).await
    }

    /// Adds a rule. Session rules need a chat.
    pub async fn add_rule(
        &self,
        draft: RuleDraft,
        chat_id: Option<&str>,
    ) -> Result<Rule, RuntimeError> {
        self.s.rules.add(draft, chat_id, &self.s.toolset).await
    }

    /// Deletes a rule by id.
    pub async fn delete_rule(&self, rule_id: &str) -> Result<(), RuntimeError> {
        self.s.rules.delete(rule_id).await
    }

    /// The path of `rules.toml`.
    pub fn rules_file_path(&self) -> PathBuf {
        self.s.rules.file_path()
    }

    /// Global rules from `rules.toml` (read on every call, so edits apply to the next tool call)
    /// and the entries that were ignored. A missing file has no rules; an unreadable one is one
    /// problem.
    pub fn rule_file(&self) -> RuleFile {
        self.s.rules.rule_file()
    }

    /// A chat's mode, the rules in force for it, and the problems of `rules.toml`.
    pub async fn permission_state(&self, chat_id: &str) -> Result<PermissionState, RuntimeError> {
        self.s.rules.permission_state(chat_id).await
    }

    /// The decision simulator: what the permission gate would decide for `tool` with `args`, in
    /// `mode` (default: the chat's, else the configured default), for `chat_id` (its workspace
    /// and session rules; without a chat: the configured workspace or the current directory, and
    /// global rules only). Nothing runs and nothing is stored; the `auto` mode reviewer is not
    /// called (`reviewerWouldDecide` says whether it would be).
    pub async fn explain_permission(
        &self,
        tool: &str,
        args: Value,
        mode: Option<PermissionMode>,
        chat_id: Option<&str>,
    ) -> Result<Explanation, RuntimeError> {
        self.s.permissions.explain(tool, args, mode, chat_id).await
    }

    /// Reads the audit log newest first (the current file, then the rotated ones), keeping the
    /// entries that match `filter`.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for a limit outside 1..=5000,
    /// [`RuntimeError::Io`] when the file exists but cannot be read. A missing file is no entries.
    pub async fn read_audit_log(&self, filter: AuditFilter) -> Result<AuditRead, RuntimeError> {
        crate::audit_read::read_audit_log(&self.s.paths.audit_log(), filter).await
    }

    // ---- inbox, background work, sub-agents ----

    /// Queues a message in the durable inbox and wakes the dispatcher. The same id with the same
    /// content returns the existing message; with other content it is an error.
    pub async fn enqueue_inbox(
        &self,
        message: NewInboxMessage,
    ) -> Result<InboxMessage, RuntimeError> {
        self.s.inbox.enqueue(message).await
    }

    /// Inbox messages, of one chat or all, oldest first.
    pub async fn inbox(&self, chat_id: Option<&str>) -> Result<Vec<InboxMessage>, RuntimeError> {
        self.s.inbox.list(chat_id).await
    }

    /// Starts the inbox dispatcher (once per runtime; later calls do nothing), with the
    /// end-of-chat summary sweep and the memory backfill beside it. It runs until
    /// [`Runtime::shutdown`]. Needs a Tokio runtime.
    pub fn start_dispatcher(&self) {
        self.s
            .background
            .set_lifetime(suzent_tools::CommandLifetime::Served);
        self.s.dispatcher.start()
    }

    /// Sets what becomes of background commands in this process once their turn is over, which
    /// `start_command` tells the agent (issue 13 item 7). [`Runtime::start_dispatcher`] sets
    /// `Served`; without it the default is `StoppedAtExit`.
    pub fn set_command_lifetime(&self, lifetime: suzent_tools::CommandLifetime) {
        self.s.background.set_lifetime(lifetime)
    }

    /// Background commands of `chat_id` that have not ended and been reported yet.
    pub fn unsettled_commands(&self, chat_id: &str) -> usize {
        self.s.background.unsettled(chat_id)
    }

    /// Waits until the background commands of `chat_id` have ended and their completion
    /// messages are queued: all of them (`all`), or at least one. Returns at once when none
    /// runs.
    pub async fn wait_for_commands(&self, chat_id: &str, all: bool) {
        self.s.background.wait_settled(chat_id, all).await
    }

    /// Delivers the queued inbox messages of `chat_id` here and now, each in its own turn (as
    /// the dispatcher would), until none is left: how a process without a dispatcher (`suzent
    /// run`, `suzent chat`) gives the agent its wake-ups. Returns how many were delivered.
    pub async fn deliver_inbox(&self, chat_id: &str) -> Result<usize, RuntimeError> {
        self.s.dispatcher.deliver_queued(chat_id).await
    }

    /// Recorded tool process groups (issue 13 item 8): running ones, and those a killed runtime
    /// left behind, marked `interrupted` by the sweep at start. Of one chat or all, oldest first.
    pub async fn recorded_processes(
        &self,
        chat_id: Option<&str>,
    ) -> Result<Vec<suzent_store::ProcessRecord>, RuntimeError> {
        self.s.processes.list(chat_id).await
    }

    /// Background commands and sub-agents of every chat (running and recent), oldest first: the
    /// sidebar's data. Live changes arrive as `background_task_update` events.
    pub fn background_tasks(&self) -> Vec<BackgroundTask> {
        self.s.background.tasks()
    }

    /// Stops a background command (with its process tree) or a sub-agent, from the UI. A stopped
    /// command sends no completion message. Returns its final state.
    pub async fn stop_background_task(&self, id: &str) -> Result<BackgroundTask, RuntimeError> {
        self.s.background.stop(id).await
    }

    /// Stops every background command and the dispatcher (on app exit). Turns in progress are
    /// cancelled; queued inbox messages stay queued for the next start.
    pub async fn shutdown(&self) {
        self.s.schedules.stop().await;
        self.s.channels.stop();
        self.s.dispatcher.stop();
        self.s.background.shutdown().await;
        self.s.devices.shutdown().await;
    }

    /// Turns sandbox mode on or off for one chat (`None`: follow `sandbox` in config.toml).
    /// Turning it on where no sandbox is available is an error.
    pub async fn set_sandbox(
        &self,
        chat_id: &str,
        enabled: Option<bool>,
    ) -> Result<(), RuntimeError> {
        self.s.background.set_sandbox(chat_id, enabled).await
    }

    /// Whether a chat's commands run in the sandbox.
    pub async fn sandbox_enabled(&self, chat_id: &str) -> Result<bool, RuntimeError> {
        self.s.background.sandbox_enabled(chat_id).await
    }

    // ---- plans, canvas ----

    /// The chat's plan, if it has one.
    pub async fn plan(&self, chat_id: &str) -> Result<Option<Plan>, RuntimeError> {
        self.s.plans.plan(chat_id).await
    }

    /// The chat's live surfaces, oldest first.
    ///
    /// Errors: [`RuntimeError::ChatNotFound`], [`RuntimeError::Store`].
    pub async fn surfaces(&self, chat_id: &str) -> Result<Vec<Surface>, RuntimeError> {
        self.s.canvas.surfaces(chat_id).await
    }

    /// Every recorded change of a surface (renders, data updates, user actions, deletes),
    /// oldest first; kept after the surface is deleted.
    ///
    /// Errors: [`RuntimeError::ChatNotFound`], [`RuntimeError::Store`].
    pub async fn surface_history(
        &self,
        chat_id: &str,
        surface_id: &str,
    ) -> Result<Vec<SurfaceHistoryEntry>, RuntimeError> {
        self.s.canvas.surface_history(chat_id, surface_id).await
    }

    /// Closes a surface for the user: deletes it (history kept) and announces
    /// `surface_deleted`. Returns `false` when the chat has no such surface.
    ///
    /// Errors: [`RuntimeError::ChatNotFound`], [`RuntimeError::Store`].
    pub async fn delete_surface(
        &self,
        chat_id: &str,
        surface_id: &str,
    ) -> Result<bool, RuntimeError> {
        self.s.canvas.delete_surface(chat_id, surface_id).await
    }

    /// Sends a button press to the agent that owns the surface (A2UI `userAction`).
    ///
    /// The surface must exist and `action.sourceComponentId` must be a Button whose action
    /// is `action.name`; `action.context` may only hold keys of that button's context and at
    /// most [`crate::MAX_ACTION_CONTEXT_BYTES`] of JSON. Values of context entries bound to an
    /// absolute path are written into the surface's data model (a new version, announced with
    /// `surface_updated`, recorded as a `user_action`); then a message whose text shows what
    /// was sent ([`crate::action_text`]) is queued in the durable inbox of the chat, from
    /// [`crate::CANVAS_SENDER`]. The dispatcher delivers it in place to a running turn, or starts
    /// a turn of the idle chat. Returns the queued message.
    ///
    /// Errors: [`RuntimeError::ChatNotFound`]; [`RuntimeError::InvalidInput`] naming
    /// `action.surfaceId`, `action.sourceComponentId`, `action.name` or `action.context`;
    /// [`RuntimeError::Store`].
    pub async fn submit_surface_action(
        &self,
        chat_id: &str,
        action: SurfaceAction,
    ) -> Result<InboxMessage, RuntimeError> {
        self.s.canvas.submit_action(chat_id, action).await
    }

    // ---- memory, skills ----

    /// Uses a provider's embedding model (`openai/text-embedding-3-small`; OpenAI-compatible
    /// `/embeddings` endpoints: `openai/...` with its base URL and key, `ollama/...`) for
    /// archival memory instead of the local model, or the local model again with `None`. The
    /// choice is stored. Vectors of entries stored with another model are not compared.
    pub async fn set_embedding_provider(&self, model: Option<&str>) -> Result<(), RuntimeError> {
        self.s.memory.set_embedding_provider(model).await
    }

    /// Downloads the local embedding model (all-MiniLM-L6-v2) once into the data folder (or the
    /// folder named by `SUZENT_EMBEDDING_MODEL`) from `source` (default
    /// [`crate::DEFAULT_MODEL_SOURCE`]). Returns the folder and whether anything was downloaded;
    /// files already in place are kept. Then loads the embedding model in use (this one unless a
    /// provider's is chosen) and starts embedding, in the background, the memories stored
    /// without a vector ([`Runtime::embedding_status`] tells how many are left).
    pub async fn download_embedding_model(
        &self,
        source: Option<&str>,
    ) -> Result<(PathBuf, bool), RuntimeError> {
        self.s.memory.download_embedding_model(source).await
    }

    /// Whether memory search compares meanings, with which model, or why not; and how many of
    /// the local user's memories still wait for a vector. Cheap: it loads no model (an unused
    /// local model counts as on when its files are in place) and calls no provider.
    pub async fn embedding_status(&self) -> Result<EmbeddingStatus, RuntimeError> {
        self.s.memory.embedding_status().await
    }

    /// The local user's core memory blocks that have content, as `(block, content)`.
    pub async fn memory_blocks(&self) -> Result<Vec<(String, String)>, RuntimeError> {
        self.s.memory.memory_blocks().await
    }

    /// Sets a core memory block of the local user (the desktop app's editor).
    pub async fn set_memory_block(
        &self,
        block: &str,
        content: &str,
    ) -> Result<String, RuntimeError> {
        self.s.memory.set_memory_block(block, content).await
    }

    /// Stores archival memories of the local user (imports, end-of-chat summaries); embeds them
    /// when a model is available. Returns their ids.
    pub async fn archive_memories(
        &self,
        chat_id: Option<&str>,
        source: &str,
        texts: &[String],
    ) -> Result<Vec<i64>, RuntimeError> {
        self.s.memory.archive_memories(chat_id, source, texts).await
    }

    /// Hybrid search of the local user's archival memory (what `memory_search` does): at most
    /// `limit` hits, best first.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] with field `query` (empty, or the search failed)
    /// or `limit` (outside 1..=[`suzent_tools::MAX_MEMORY_RESULTS`]).
    pub async fn search_memory(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<MemorySearchResult, RuntimeError> {
        self.s.memory.search_memory(query, limit).await
    }

    /// Writes a summary of what was said in the chat since its last summary into archival
    /// memory (source `summary`, text `Summary of chat '<title>': ...`): the chat's model (or
    /// the default model) is asked for the durable facts, decisions and open items. Returns the
    /// entry id, or `None` when there is nothing new with a user message in it (the stretch is
    /// then marked as covered) or the model answered nothing.
    ///
    /// The runtime calls it itself when the chat has been idle for `chat_summary_idle_secs`
    /// (see [`Runtime::start_dispatcher`]); `suzent memory summarize --chat ID` calls it on
    /// demand. [`Runtime::delete_chat`] removes the summaries of the chat it deletes.
    ///
    /// Errors: [`RuntimeError::ChatNotFound`], [`RuntimeError::InvalidInput`] (`model`) when no
    /// model is set or the model request failed, store errors.
    pub async fn archive_chat_summary(&self, chat_id: &str) -> Result<Option<i64>, RuntimeError> {
        self.s.summaries.archive_chat_summary(chat_id).await
    }

    /// Every skill (enabled or not), by name; a user skill hides a built-in one of its name.
    pub async fn skills(&self) -> Result<Vec<Skill>, RuntimeError> {
        self.s.skills.list().await
    }

    /// Enables or disables a skill by name.
    pub async fn set_skill_enabled(&self, name: &str, enabled: bool) -> Result<(), RuntimeError> {
        self.s.skills.set_enabled(name, enabled).await
    }

    // ---- tools and MCP ----

    /// The capability catalog (what ConfigView shows), as JSON:
    /// `[{id, label, description, tools:[{id, name, description, runtimeName, requiresApproval}]}]`.
    pub fn catalog(&self) -> Value {
        serde_json::to_value(self.s.toolset.registry.catalog()).unwrap_or(Value::Null)
    }

    /// The capability catalog ConfigView shows: the built-in capabilities, then one toolset per
    /// MCP server with known tools (id `mcp:SERVER`, tools by their model-facing names; servers
    /// that are disabled are left out). No I/O: servers not listed yet have no toolset.
    pub fn tool_catalog(&self) -> Vec<Capability> {
        self.s.mcp.tool_catalog()
    }

    /// Every tool (built-in, and MCP tools known so far) by category (seed 003
    /// `get_tools_by_category`), each list sorted by weight then name.
    pub fn tools_by_category(&self) -> BTreeMap<ToolCategory, Vec<ToolSummary>> {
        self.s.toolset.tools_by_category()
    }

    /// Every tool's summary by runtime name (seed 003 `get_all_tool_summaries`).
    pub fn tool_summaries(&self) -> BTreeMap<String, ToolSummary> {
        self.s.toolset.tool_summaries()
    }

    /// The metadata of a tool by runtime, class or MCP name (seed 003
    /// `get_tool_metadata_summary`).
    pub fn tool_metadata(&self, name: &str) -> Result<ToolMetadata, RuntimeError> {
        self.s.toolset.tool_metadata(name)
    }

    /// The usage guide of a tool, if it has one (seed 003 `get_tool_usage_guide`).
    pub fn tool_usage_guide(&self, name: &str) -> Result<Option<String>, RuntimeError> {
        self.s.toolset.tool_usage_guide(name)
    }

    /// Drops the derived schema and function caches (MCP tool wrappers, the `tool_search`
    /// index) so they are rebuilt on next use (seed 003 `invalidate_schema_cache`,
    /// `invalidate_function_cache`). The MCP schema cache has its own
    /// [`Runtime::invalidate_mcp_cache`].
    pub fn invalidate_tool_caches(&self) {
        self.s.toolset.invalidate_tool_caches()
    }

    /// The tools activated in a chat with `tool_search`, in activation order.
    pub async fn activated_tools(&self, chat_id: &str) -> Result<Vec<String>, RuntimeError> {
        self.s.mcp.activated_tools(chat_id).await
    }

    /// Limits which tools `tool_search` may activate in a chat (for sub-agents): `Some(names)`
    /// allows only these (runtime or class names; an empty list allows none), `None` lifts the
    /// limit. Held in memory for the life of the runtime.
    pub fn limit_activation(&self, chat_id: &str, allowed: Option<Vec<String>>) {
        self.s.mcp.limit_activation(chat_id, allowed)
    }

    /// The configured MCP servers with their state and tools (ConfigView's MCP panel).
    pub fn mcp_servers(&self) -> Vec<McpServerInfo> {
        self.s.mcp.mcp_servers()
    }

    /// Adds an MCP server to `mcp.json`. Its tools are listed when first needed.
    pub fn add_mcp_server(
        &self,
        name: &str,
        config: McpServerConfig,
    ) -> Result<McpServerInfo, RuntimeError> {
        self.s.mcp.add_mcp_server(name, config)
    }

    /// Removes an MCP server (its connection is closed and its cached schemas dropped).
    pub async fn remove_mcp_server(&self, name: &str) -> Result<(), RuntimeError> {
        self.s.mcp.remove_mcp_server(name).await
    }

    /// Enables or disables an MCP server.
    pub fn set_mcp_server_enabled(
        &self,
        name: &str,
        enabled: bool,
    ) -> Result<McpServerInfo, RuntimeError> {
        self.s.mcp.set_mcp_server_enabled(name, enabled)
    }

    /// Marks an MCP server trusted (its `readOnlyHint` tools run without asking in `default`
    /// mode) or not.
    pub fn set_mcp_server_trusted(
        &self,
        name: &str,
        trusted: bool,
    ) -> Result<McpServerInfo, RuntimeError> {
        self.s.mcp.set_mcp_server_trusted(name, trusted)
    }

    /// Connects to a server on a fresh connection and lists its tools (`suzent mcp test`).
    pub async fn test_mcp_server(&self, name: &str) -> Result<McpTestResult, RuntimeError> {
        self.s.mcp.test_mcp_server(name).await
    }

    /// Lists one server's tools now on its pooled connection (started if needed) and caches
    /// their schemas; returns the server's tools as the registry knows them afterwards. A
    /// failure is recorded: the server shows `failed` with the error until its backoff ends.
    pub async fn refresh_mcp_server(&self, name: &str) -> Result<Vec<McpToolInfo>, RuntimeError> {
        self.s.mcp.refresh_mcp_server(name).await
    }

    /// Imports the servers of a Claude Desktop configuration file.
    pub fn import_mcp_servers(&self, path: &Path) -> Result<McpImport, RuntimeError> {
        self.s.mcp.import_mcp_servers(path)
    }

    /// MCP discovery (seed 003): known MCP tools matching `filter`; with `load_schemas`,
    /// servers without fresh schemas are connected and listed first.
    pub async fn mcp_tools(&self, filter: Option<&str>, load_schemas: bool) -> Vec<McpToolInfo> {
        self.s.mcp.mcp_tools(filter, load_schemas).await
    }

    /// Lists every enabled server without fresh schemas and caches them (seed 003
    /// `prewarm_schemas`). Returns the number of MCP tools known afterwards.
    pub async fn prewarm_mcp_schemas(&self) -> usize {
        self.s.mcp.prewarm_mcp_schemas().await
    }

    /// Drops the cached MCP schemas of one server, or of all (seed 003 `invalidate_mcp_cache`).
    pub async fn invalidate_mcp_cache(&self, server: Option<&str>) -> Result<(), RuntimeError> {
        self.s.mcp.invalidate_mcp_cache(server).await
    }
}
