//! Tests' fixture: the few services a service under test needs, opened over a real SQLite store
//! in a temporary directory, without the whole runtime (no turn service, MCP servers, memory,
//! devices or scheduler).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::approvals::ApprovalService;
use crate::chats::ChatService;
use crate::dirs::Paths;
use crate::event_bus::Events;
use crate::permissions::PermissionService;
use crate::provider::StaticKeys;
use crate::rules::RuleService;
use crate::sessions::Sessions;
use crate::settings::SettingsService;
use crate::toolset::Toolset;
use std::path::PathBuf;
use std::sync::Arc;
use suzent_core::Config;
use suzent_permissions::PermissionGate;
use suzent_permissions::audit::AuditLog;
use suzent_store::Store;

/// The services, their directory and a workspace folder in it.
pub(crate) struct TestServices {
    /// Removed when the services are dropped.
    _dir: tempfile::TempDir,
    pub(crate) workspace: PathBuf,
    pub(crate) store: Store,
    pub(crate) events: Events,
    pub(crate) toolset: Arc<Toolset>,
    pub(crate) chats: Arc<ChatService>,
    pub(crate) approvals: Arc<ApprovalService>,
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
        let local_models = Arc::new(crate::local_models::LocalModels::new(
            &paths.data_dir,
            &config.providers.local,
        ));
        let settings = Arc::new(SettingsService::new(
            config,
            paths.clone(),
            keys,
            registry.clone(),
            local_models,
        ));
        let chats = Arc::new(ChatService::new(
            store.clone(),
            Arc::clone(&settings),
            registry,
            Arc::new(Sessions::default()),
        ));
        let gate =
            PermissionGate::new(AuditLog::start(paths.audit_log()), Arc::new(events.clone()));
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
            rules,
            Arc::clone(&toolset),
            permissions,
        ));
        TestServices {
            _dir: dir,
            workspace,
            store,
            events,
            toolset,
            chats,
            approvals,
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
}
