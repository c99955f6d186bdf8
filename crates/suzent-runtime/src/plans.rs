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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::error::RuntimeError;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use suzent_core::{AgentEvent, Config, PhaseStatus, Plan, PlanPhase};
    use suzent_tools::{PlanningTool, Tool};

    fn phase(id: &str, title: &str, status: PhaseStatus) -> PlanPhase {
        PlanPhase {
            id: id.into(),
            title: title.into(),
            capabilities: Vec::new(),
            status,
        }
    }

    #[tokio::test]
    async fn a_plan_written_by_planning_update_is_stored_and_announced() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let chat = s.chat().await;
        let plans = s.plans();
        let mut events = s.events.subscribe();
        let mut ctx = s.tool_context(&chat);
        ctx.plans = Some(plans.host());
        PlanningTool::new()
            .call(
                json!({"action": "update", "goal": "Ship the parser", "phases": [
                    {"id": "read", "title": "Read the grammar"},
                    {"id": "write", "title": "Write the parser"}
                ]}),
                &ctx,
            )
            .await?;
        let plan = plans.plan(&chat.id).await?.expect("a stored plan");
        assert_eq!(
            (plan.goal.as_str(), plan.phases.clone()),
            (
                "Ship the parser",
                vec![
                    phase("read", "Read the grammar", PhaseStatus::InProgress),
                    phase("write", "Write the parser", PhaseStatus::Pending),
                ]
            )
        );
        match events.try_recv()? {
            AgentEvent::PlanUpdated {
                chat_id,
                plan: sent,
            } => {
                assert_eq!((chat_id, sent), (chat.id.clone(), plan));
            }
            other => panic!("expected plan_updated, got {other:?}"),
        }
        Ok(())
    }

    #[tokio::test]
    async fn an_advance_completes_the_phase_and_starts_the_next_in_the_store() -> anyhow::Result<()>
    {
        let s = TestServices::open(Config::default()).await;
        let chat = s.chat().await;
        let plans = s.plans();
        let mut ctx = s.tool_context(&chat);
        ctx.plans = Some(plans.host());
        let tool = PlanningTool::new();
        tool.call(
            json!({"action": "update", "goal": "g", "phases": [
                {"id": "a", "title": "A"}, {"id": "b", "title": "B"}
            ]}),
            &ctx,
        )
        .await?;
        tool.call(
            json!({"action": "advance", "current_phase_id": "a", "next_phase_id": "b"}),
            &ctx,
        )
        .await?;
        let plan: Plan = plans.plan(&chat.id).await?.expect("a stored plan");
        assert_eq!(
            plan.phases,
            vec![
                phase("a", "A", PhaseStatus::Completed),
                phase("b", "B", PhaseStatus::InProgress),
            ]
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_chat_without_a_plan_has_none_and_an_unknown_chat_is_an_error() -> anyhow::Result<()>
    {
        let s = TestServices::open(Config::default()).await;
        let chat = s.chat().await;
        let plans = s.plans();
        assert_eq!(plans.plan(&chat.id).await?, None);
        let err = plans.plan("no-such-chat").await.unwrap_err();
        assert!(
            matches!(&err, RuntimeError::ChatNotFound(id) if id == "no-such-chat"),
            "{err}"
        );
        Ok(())
    }
}
