//! `planning_update` (seed 000): creates, replaces and advances the chat's plan.

use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use schemars::JsonSchema;
use serde::Deserialize;
use suzent_core::{PhaseDraft, Plan};
use suzent_permissions::ToolAccess;

/// What `planning_update` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanAction {
    /// Create the plan, or overwrite it: all progress is reset, the first phase starts.
    Update,
    /// Complete `current_phase_id` and start `next_phase_id` (phases in between are completed).
    Advance,
}

/// Arguments of `planning_update`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanningArgs {
    /// `update` (create or overwrite the plan) or `advance` (complete a phase).
    pub action: PlanAction,
    /// High-level goal (required for update).
    #[serde(default)]
    pub goal: Option<String>,
    /// The phases in order, each with id, title and capabilities (required for update).
    #[serde(default)]
    pub phases: Option<Vec<PhaseDraft>>,
    /// The phase being completed (required for advance).
    #[serde(default)]
    pub current_phase_id: Option<String>,
    /// The phase to start next (advance); omit it when completing the last phase.
    #[serde(default)]
    pub next_phase_id: Option<String>,
}

/// Creates and manages the chat's structured plan.
#[derive(Debug)]
pub struct PlanningTool {
    spec: ToolSpec,
}

impl PlanningTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<PlanningArgs>(
                "planning_update",
                "PlanningTool",
                "memory",
                "Update plan",
                "Create and track a structured plan for multi-step work; the user sees it in \
                 the sidebar. action='update' with goal and phases (id, title, capabilities) \
                 creates or overwrites the plan: the first phase starts, the others are pending. \
                 action='advance' with current_phase_id and next_phase_id completes the current \
                 phase and starts the next; phases skipped over are completed too. Returns the \
                 plan.",
            ),
        }
    }
}

impl Default for PlanningTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for PlanningTool {
    type Args = PlanningArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &PlanningArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Other)
    }

    async fn call(&self, args: PlanningArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let host = ctx
            .plans
            .as_ref()
            .ok_or_else(|| ToolError::Failed("planning is not available in this session".into()))?;
        let now = chrono::Utc::now();
        let plan = match args.action {
            PlanAction::Update => {
                let goal = args.goal.ok_or_else(|| {
                    ToolError::InvalidArguments("field `goal`: required for action 'update'".into())
                })?;
                let phases = args.phases.ok_or_else(|| {
                    ToolError::InvalidArguments(
                        "field `phases`: required for action 'update'".into(),
                    )
                })?;
                Plan::new(&goal, phases, now)
                    .map_err(|e| ToolError::InvalidArguments(e.to_string()))?
            }
            PlanAction::Advance => {
                let current = args.current_phase_id.ok_or_else(|| {
                    ToolError::InvalidArguments(
                        "field `current_phase_id`: required for action 'advance'".into(),
                    )
                })?;
                let mut plan = host
                    .load_plan(&ctx.chat_id)
                    .await
                    .map_err(ToolError::Failed)?
                    .ok_or_else(|| {
                        ToolError::Failed(
                            "this chat has no plan yet; create one with action 'update'".into(),
                        )
                    })?;
                plan.advance(&current, args.next_phase_id.as_deref(), now)
                    .map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
                plan
            }
        };
        host.save_plan(&ctx.chat_id, &plan)
            .await
            .map_err(ToolError::Failed)?;
        Ok(plan.to_text())
    }
}
