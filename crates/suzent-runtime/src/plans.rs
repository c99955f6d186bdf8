//! The plan service: one plan per chat (`planning_update`), stored in SQLite and announced as
//! `plan_updated` after each change.

use crate::chats::ChatService;
use crate::error::RuntimeError;
use crate::event_bus::Events;
use async_trait::async_trait;
use std::sync::Arc;
use suzent_core::{AgentEvent, Plan};
use suzent_store::Store;
use suzent_tools::PlanHost;

/// Stores plans and announces them.
#[derive(Debug)]
struct Plans {
    store: Store,
    events: Events,
}

#[async_trait]
impl PlanHost for Plans {
    async fn load_plan(&self, chat_id: &str) -> Result<Option<Plan>, String> {
        self.store
            .get_plan(chat_id)
            .await
            .map_err(|e| e.to_string())
    }

    async fn save_plan(&self, chat_id: &str, plan: &Plan) -> Result<(), String> {
        self.store
            .save_plan(chat_id, plan)
            .await
            .map_err(|e| e.to_string())?;
        self.events.emit(AgentEvent::PlanUpdated {
            chat_id: chat_id.to_string(),
            plan: plan.clone(),
        });
        Ok(())
    }
}

/// Plans of every chat.
pub(crate) struct PlanService {
    store: Store,
    events: Events,
    chats: Arc<ChatService>,
}

impl PlanService {
    /// The service.
    pub(crate) fn new(store: Store, events: Events, chats: Arc<ChatService>) -> PlanService {
        PlanService {
            store,
            events,
            chats,
        }
    }

    /// Where `planning_update` keeps a chat's plan.
    pub(crate) fn host(&self) -> Arc<dyn PlanHost> {
        Arc::new(Plans {
            store: self.store.clone(),
            events: self.events.clone(),
        })
    }

    /// The chat's plan, if it has one.
    pub(crate) async fn plan(&self, chat_id: &str) -> Result<Option<Plan>, RuntimeError> {
        self.chats.get(chat_id).await?;
        Ok(self.store.get_plan(chat_id).await?)
    }
}
