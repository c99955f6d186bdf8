//! What the devices service may use of the rest of the runtime: the handles of the services it
//! needs (settings, inbox, chats, sessions, agents), never the facade.

use super::DeviceHost;
use crate::agents::AgentService;
use crate::chats::{ChatService, CreateChat};
use crate::error::RuntimeError;
use crate::inbox::InboxService;
use crate::sessions::Sessions;
use crate::settings::SettingsService;
use async_trait::async_trait;
use std::sync::{Arc, Weak};
use suzent_core::Config;
use suzent_devices::wire::RemoteAgent;
use suzent_store::{ChatRecord, InboxMessage, NewInboxMessage, Store};
use suzent_tools::AgentHost;

/// The runtime's [`DeviceHost`]. The agent service is held weakly: it holds the devices
/// service.
pub(crate) struct RuntimeDeviceHost {
    pub(crate) settings: Arc<SettingsService>,
    pub(crate) inbox: Arc<InboxService>,
    pub(crate) chats: Arc<ChatService>,
    pub(crate) sessions: Arc<Sessions>,
    pub(crate) store: Store,
    pub(crate) agents: Weak<AgentService>,
}

#[async_trait]
impl DeviceHost for RuntimeDeviceHost {
    fn config(&self) -> Config {
        self.settings.config()
    }

    async fn enqueue(&self, message: NewInboxMessage) -> Result<InboxMessage, RuntimeError> {
        self.inbox.enqueue(message).await
    }

    async fn create_peer_chat(&self, title: String) -> Result<ChatRecord, RuntimeError> {
        let workspace = self
            .settings
            .config()
            .workspace
            .or_else(|| directories::UserDirs::new().map(|d| d.home_dir().to_path_buf()));
        self.chats
            .create(CreateChat {
                title: Some(title),
                workspace,
                ..CreateChat::default()
            })
            .await
    }

    async fn top_level_chat(&self, chat_id: &str) -> Result<Option<ChatRecord>, RuntimeError> {
        let Some(chat) = self.store.get_chat(chat_id).await? else {
            return Ok(None);
        };
        Ok(match self.store.agent_link(chat_id).await? {
            Some(_) => None,
            None => Some(chat),
        })
    }

    async fn agents(&self) -> Result<Vec<RemoteAgent>, RuntimeError> {
        let mut out = Vec::new();
        for chat in self.chats.list().await? {
            if self.store.agent_link(&chat.id).await?.is_some() {
                continue;
            }
            out.push(RemoteAgent {
                status: if self.sessions.is_running(&chat.id) {
                    "running"
                } else {
                    "idle"
                }
                .into(),
                id: chat.id,
                title: chat.title,
                updated: chat.updated_at.to_rfc3339(),
            });
            if out.len() >= suzent_tools::agent_tools::MAX_RECENT_LISTED {
                break;
            }
        }
        Ok(out)
    }

    async fn read(&self, chat_id: &str, budget: usize) -> Result<String, RuntimeError> {
        let agents = self
            .agents
            .upgrade()
            .ok_or_else(|| RuntimeError::InvalidInput {
                field: "runtime".into(),
                message: "the runtime is shutting down".into(),
            })?;
        agents
            .read(chat_id, chat_id, budget)
            .await
            .map_err(|message| RuntimeError::InvalidInput {
                field: "agent".into(),
                message,
            })
    }

    async fn stop(&self, chat_id: &str) -> Result<String, RuntimeError> {
        if !self.sessions.is_running(chat_id) {
            return Ok(format!("agent {chat_id} is idle; nothing to stop"));
        }
        self.sessions.cancel(chat_id);
        Ok(format!("stop requested for agent {chat_id}"))
    }
}
