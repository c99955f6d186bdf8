//! Tests' fixture: the services a service under test needs, opened over a real SQLite store in a
//! temporary directory, without the whole runtime (no dispatcher, devices host, scheduler or
//! goals). The services the base fixture does not hold (background, plans, canvas, skills,
//! memory, doctor, mcp, turn) are opened on demand over the same store and directories.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::agents::AgentService;
use crate::approvals::ApprovalService;
use crate::background::BackgroundService;
use crate::browser::BrowserService;
use crate::canvas::CanvasService;
use crate::chats::ChatService;
use crate::devices::Devices;
use crate::dirs::Paths;
use crate::doctor::DoctorService;
use crate::event_bus::Events;
use crate::inbox::InboxService;
use crate::local_models::LocalModels;
use crate::mcp::McpService;
use crate::memory::MemoryService;
use crate::permissions::PermissionService;
use crate::plans::PlanService;
use crate::provider::StaticKeys;
use crate::rules::RuleService;
use crate::sessions::Sessions;
use crate::settings::SettingsService;
use crate::skills::SkillService;
use crate::toolset::Toolset;
use crate::turn::{TurnService, TurnServices};
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use suzent_core::Config;
use suzent_permissions::PermissionGate;
use suzent_permissions::audit::AuditLog;
use suzent_store::Store;
use suzent_tools::ToolContext;

/// The services, their directory and a workspace folder in it.
pub(crate) struct TestServices {
    /// Removed when the services are dropped.
    _dir: tempfile::TempDir,
    pub(crate) workspace: PathBuf,
    pub(crate) paths: Paths,
    pub(crate) store: Store,
    pub(crate) events: Events,
    pub(crate) toolset: Arc<Toolset>,
    pub(crate) chats: Arc<ChatService>,
    pub(crate) approvals: Arc<ApprovalService>,
    pub(crate) settings: Arc<SettingsService>,
    pub(crate) sessions: Arc<Sessions>,
    pub(crate) inbox: Arc<InboxService>,
    pub(crate) permissions: Arc<PermissionService>,
    pub(crate) rules: Arc<RuleService>,
    /// The permission gate's audit log (`paths.audit_log()`).
    pub(crate) audit: AuditLog,
    pub(crate) local_models: Arc<LocalModels>,
    /// Background commands (output under the data directory), reporting to `inbox`.
    pub(crate) background: Arc<BackgroundService>,
}

impl TestServices {
    /// Opens them with `config` (the configuration of `config.toml`).
    pub(crate) async fn open(config: Config) -> TestServices {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        let paths = Paths::under(&dir.path().join("home"));
        std::fs::create_dir_all(&paths.config_dir).unwrap();
        std::fs::create_dir_all(&paths.data_dir).unwrap();
        let keys: Arc<dyn crate::provider::resolve::KeySource> =
            Arc::new(StaticKeys::new().with("openai", "sk-test"));
        let store = Store::open(&paths.database()).await.unwrap();
        let events = Events::new();
        let rules = Arc::new(RuleService::new(store.clone(), &paths.config_dir));
        let mcp = crate::mcp::open_registry(
            paths.config_file().with_file_name("mcp.json"),
            Arc::clone(&keys),
            store.clone(),
        )
        .unwrap();
        let toolset = Toolset::new(
            suzent_tools::default_registry(),
            mcp,
            store.clone(),
            events.clone(),
            Arc::clone(&rules),
        );
        let registry = toolset.registry.clone();
        let local_models = Arc::new(LocalModels::new(&paths.data_dir, &config.providers.local));
        let settings = Arc::new(SettingsService::new(
            config,
            paths.clone(),
            keys,
            registry.clone(),
            Arc::clone(&local_models),
        ));
        let sessions = Arc::new(Sessions::default());
        let chats = Arc::new(ChatService::new(
            store.clone(),
            Arc::clone(&settings),
            registry,
            Arc::clone(&sessions),
        ));
        let audit = AuditLog::start(paths.audit_log());
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
        let inbox = Arc::new(InboxService::new(store.clone()));
        let background = Arc::new(
            BackgroundService::new(
                &paths.data_dir,
                store.clone(),
                events.clone(),
                Arc::clone(&settings),
                Arc::clone(&sessions),
                Arc::clone(&inbox),
                Arc::new(crate::processes::ProcessService::new(
                    store.clone(),
                    Arc::clone(&inbox),
                )) as Arc<dyn suzent_tools::ProcessJournal>,
            )
            .unwrap(),
        );
        TestServices {
            _dir: dir,
            workspace,
            paths,
            store,
            events,
            toolset,
            chats,
            approvals,
            settings,
            sessions,
            inbox,
            permissions,
            rules,
            audit,
            local_models,
            background,
        }
    }

    /// A chat in the workspace.
    pub(crate) async fn chat(&self) -> suzent_store::ChatRecord {
        self.chats
            .create(crate::chats::CreateChat {
                workspace: Some(self.workspace.clone()),
                ..Default::default()
            })
            .await
            .unwrap()
    }

    /// A tool context of `chat` in its workspace, as a turn builds it (paths, no hosts).
    pub(crate) fn tool_context(&self, chat: &suzent_store::ChatRecord) -> ToolContext {
        let workspace = PathBuf::from(&chat.workspace);
        std::fs::create_dir_all(self.paths.persistence_dir(&chat.id)).unwrap();
        std::fs::create_dir_all(self.paths.shared_dir()).unwrap();
        let policy = self.paths.path_policy(&workspace, &chat.id).unwrap();
        ToolContext::new(
            chat.id.clone(),
            "test",
            workspace,
            self.paths.persistence_dir(&chat.id),
            self.paths.shared_dir(),
            Arc::new(policy),
        )
    }

    /// The plan service over the fixture's store.
    pub(crate) fn plans(&self) -> Arc<PlanService> {
        Arc::new(PlanService::new(
            self.store.clone(),
            self.events.clone(),
            Arc::clone(&self.chats),
        ))
    }

    /// The canvas service; button presses go to the fixture's inbox.
    pub(crate) fn canvas(&self) -> Arc<CanvasService> {
        Arc::new(CanvasService::new(
            self.store.clone(),
            self.events.clone(),
            Arc::clone(&self.chats),
            Arc::clone(&self.inbox),
        ))
    }

    /// The skill service (built-in skills written under the data directory, user skills in
    /// `config_dir/skills`).
    pub(crate) fn skills(&self) -> Arc<SkillService> {
        Arc::new(SkillService::new(&self.paths, self.store.clone()))
    }

    /// The memory service (no embedding model in the data directory: full-text search only).
    pub(crate) fn memory(&self) -> Arc<MemoryService> {
        Arc::new(MemoryService::new(
            &self.paths,
            self.store.clone(),
            Arc::clone(&self.settings),
        ))
    }

    /// The doctor over the fixture's services.
    pub(crate) fn doctor(&self) -> DoctorService {
        DoctorService::new(
            self.paths.clone(),
            self.store.clone(),
            Arc::clone(&self.settings),
            Arc::clone(&self.background),
            Arc::clone(&self.local_models),
        )
    }

    /// The MCP service over the fixture's toolset (servers in `config_dir/mcp.json`).
    pub(crate) fn mcp(&self) -> McpService {
        McpService::new(Arc::clone(&self.toolset))
    }

    /// The turn service (with its agent service) over the fixture's services, as the runtime
    /// opens it.
    pub(crate) fn turn(&self) -> Arc<TurnService> {
        let devices = Arc::new(Devices::new(self.store.clone(), &self.paths.data_dir));
        let browser = Arc::new(BrowserService::new(
            self.paths.data_dir.clone(),
            self.store.clone(),
            self.settings.config().browser,
        ));
        let memory = self.memory();
        Arc::new_cyclic(|turn: &Weak<TurnService>| {
            let agents = Arc::new(AgentService::new(
                turn.clone(),
                self.store.clone(),
                Arc::clone(&self.chats),
                Arc::clone(&self.sessions),
                Arc::clone(&self.settings),
                Arc::clone(&self.inbox),
                Arc::clone(&self.background),
                self.toolset.registry.clone(),
                devices,
            ));
            let speech = Arc::new(crate::speech::SpeechService::new(
                &self.paths,
                Arc::clone(&self.settings),
            ));
            let services = TurnServices {
                store: self.store.clone(),
                events: self.events.clone(),
                paths: self.paths.clone(),
                settings: Arc::clone(&self.settings),
                chats: Arc::clone(&self.chats),
                sessions: Arc::clone(&self.sessions),
                toolset: Arc::clone(&self.toolset),
                permissions: Arc::clone(&self.permissions),
                approvals: Arc::clone(&self.approvals),
                inbox: Arc::clone(&self.inbox),
                background: Arc::clone(&self.background),
                plans: self.plans(),
                memory,
                skills: self.skills(),
                canvas: self.canvas(),
                speech: Arc::clone(&speech),
                browser,
                local_models: Arc::clone(&self.local_models),
                channels: Arc::new(crate::channels::Channels::new(
                    self.store.clone(),
                    Arc::clone(&self.settings),
                    Arc::clone(&self.inbox),
                    Arc::clone(&self.chats),
                    Arc::clone(&self.rules),
                    speech,
                    self.events.clone(),
                )),
            };
            TurnService::new(services, agents)
        })
    }
}
