//! What the devices service (`crate::devices`) may use of the runtime: a narrow handle, so the
//! service never reaches into the runtime's fields.

use super::{Inner, Runtime};
use crate::devices::DeviceHost;
use crate::error::RuntimeError;
use crate::runtime::CreateChat;
use async_trait::async_trait;
use std::sync::Weak;
use suzent_core::Config;
use suzent_devices::wire::RemoteAgent;
use suzent_store::{ChatRecord, InboxMessage, NewInboxMessage};
use suzent_tools::AgentHost;

pub(crate) struct RuntimeDeviceHost {
    pub(crate) runtime: Weak<Inner>,
}

impl RuntimeDeviceHost {
    fn runtime(&self) -> Result<Runtime, RuntimeError> {
        self.runtime
            .upgrade()
            .map(|inner| Runtime { inner })
            .ok_or_else(|| RuntimeError::InvalidInput {
                field: "runtime".into(),
                message: "the runtime is shutting down".into(),
            })
    }
}

#[async_trait]
impl DeviceHost for RuntimeDeviceHost {
    fn config(&self) -> Config {
        self.runtime().map(|rt| rt.config()).unwrap_or_default()
    }

    async fn enqueue(&self, message: NewInboxMessage) -> Result<InboxMessage, RuntimeError> {
        self.runtime()?.enqueue_inbox(message).await
    }

    async fn create_peer_chat(&self, title: String) -> Result<ChatRecord, RuntimeError> {
        let rt = self.runtime()?;
        let workspace = rt
            .config()
            .workspace
            .or_else(|| directories::UserDirs::new().map(|d| d.home_dir().to_path_buf()));
        rt.create_chat(CreateChat {
            title: Some(title),
            workspace,
            ..CreateChat::default()
        })
        .await
    }

    async fn top_level_chat(&self, chat_id: &str) -> Result<Option<ChatRecord>, RuntimeError> {
        let rt = self.runtime()?;
        let Some(chat) = rt.inner.store.get_chat(chat_id).await? else {
            return Ok(None);
        };
        Ok(match rt.inner.store.agent_link(chat_id).await? {
            Some(_) => None,
            None => Some(chat),
        })
    }

    async fn agents(&self) -> Result<Vec<RemoteAgent>, RuntimeError> {
        let rt = self.runtime()?;
        let mut out = Vec::new();
        for chat in rt.list_chats().await? {
            if rt.inner.store.agent_link(&chat.id).await?.is_some() {
                continue;
            }
            out.push(RemoteAgent {
                status: if rt.is_running(&chat.id) {
                    "running"
                } else {
                    "idle"
                }
                .into(),
                id: chat.id,
                title: chat.title,
                updated: chat.updated_at.to_rfc3339(),
            });
            if out.len() >= suzent_tools::agents::MAX_RECENT_LISTED {
                break;
            }
        }
        Ok(out)
    }

    async fn read(&self, chat_id: &str, budget: usize) -> Result<String, RuntimeError> {
        let agents = super::agents::Agents {
            runtime: self.runtime.clone(),
        };
        agents
            .read(chat_id, chat_id, budget)
            .await
            .map_err(|message| RuntimeError::InvalidInput {
                field: "agent".into(),
                message,
            })
    }

    async fn stop(&self, chat_id: &str) -> Result<String, RuntimeError> {
        let rt = self.runtime()?;
        if !rt.is_running(chat_id) {
            return Ok(format!("agent {chat_id} is idle; nothing to stop"));
        }
        rt.cancel(chat_id);
        Ok(format!("stop requested for agent {chat_id}"))
    }
}
