//! The one event enum: everything a UI or the CLI shows while a turn runs.

use crate::permission::{ApprovalActionId, PermissionDecision, Rule, RuleDestination};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Payload of `tool_permission_decision`: the call, with the decision's fields flattened beside
/// it (seed 000 "Streaming Contract": `{toolCallId, behavior, source, reason, reasonCode, risk,
/// confidence, riskCategories, reviewerModel}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DecisionEvent {
    /// Chat id.
    pub chat_id: String,
    /// Call id.
    pub tool_call_id: String,
    /// Tool runtime name.
    pub tool_name: String,
    /// The decision.
    #[serde(flatten)]
    pub decision: PermissionDecision,
}

/// How a chat was compacted to fit its model's context window (issue #13 item 4): what the
/// `chat_compacted` event and `compact_chat` report. The stored transcript is never changed;
/// later requests send the summary and the recent messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CompactionInfo {
    /// Id of the stored compaction record.
    pub id: String,
    /// What started it: `auto` (the next request would not fit), `overflow` (the provider
    /// said the request did not fit) or `manual` (`/compact`, the app's Compact button).
    pub trigger: String,
    /// Tool outputs of older history cut to their head and tail, up to and including this
    /// transcript position (`messages.seq`; 0: none).
    pub cut_through_seq: i64,
    /// Messages up to and including this position are replaced by the summary in requests
    /// (0: no summary).
    pub summary_through_seq: i64,
    /// Tool outputs cut by this compaction, counted.
    pub tool_outputs_cut: u32,
    /// Messages newly folded into the summary by this compaction, counted.
    pub messages_summarized: u32,
    /// Estimated request tokens before and after (messages only, see `tokens.rs` of
    /// suzent-providers).
    pub tokens_before: u32,
    /// See `tokens_before`.
    pub tokens_after: u32,
    /// The model's context window used, in tokens.
    pub context_window: u32,
    /// When it was recorded (RFC 3339).
    pub created_at: String,
}

/// How a run ended.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// The model stopped calling tools.
    Completed,
    /// Waiting for approvals; resume with `resume_approvals`.
    Suspended,
    /// Stopped by the user.
    Cancelled,
    /// A provider or runtime error ended the run (see `run_error`).
    Failed,
    /// Stopped after `max_steps` model steps: the task may be unfinished (`run_error` says so).
    MaxSteps,
    /// The loop guard stopped the run: the model repeated one call with the same arguments and
    /// the same result (`run_error` names the call).
    LoopDetected,
    /// The request did not fit the model's context window (`run_error` has the server's
    /// message).
    ContextOverflow,
    /// The request did not fit the model's context window and compacting the chat failed (the
    /// summarizing request failed, or the newest messages alone do not fit); `run_error` says
    /// why. The transcript is untouched.
    CompactionFailed,
}

impl RunOutcome {
    /// Whether the run stopped short of an answer: failed, or stopped by `max_steps`, the loop
    /// guard or a context overflow (its `error` says why).
    pub fn is_stopped_short(self) -> bool {
        matches!(
            self,
            RunOutcome::Failed
                | RunOutcome::MaxSteps
                | RunOutcome::LoopDetected
                | RunOutcome::ContextOverflow
                | RunOutcome::CompactionFailed
        )
    }
}

/// An event of the runtime. Serialized as `{"name": "<snake_case>", "value": {...camelCase}}`
/// (seed 000 "Streaming Contract").
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "name", content = "value", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A run (one user turn or a resume) began.
    #[serde(rename_all = "camelCase")]
    RunStarted {
        /// Chat id.
        chat_id: String,
        /// Run id.
        run_id: String,
        /// Model string, e.g. `openai/gpt-4.1`.
        model: String,
    },
    /// A piece of streamed assistant text.
    #[serde(rename_all = "camelCase")]
    TextDelta {
        /// Chat id.
        chat_id: String,
        /// Run id.
        run_id: String,
        /// The text fragment.
        delta: String,
    },
    /// A complete tool call was received from the model.
    #[serde(rename_all = "camelCase")]
    ToolCallStart {
        /// Chat id.
        chat_id: String,
        /// Run id.
        run_id: String,
        /// Call id.
        tool_call_id: String,
        /// Tool runtime name.
        tool_name: String,
        /// Parsed arguments (redacted for display), or the raw text when it did not parse.
        args: Value,
    },
    /// A tool call produced its result (ran, failed, or was refused).
    #[serde(rename_all = "camelCase")]
    ToolCallEnd {
        /// Chat id.
        chat_id: String,
        /// Run id.
        run_id: String,
        /// Call id.
        tool_call_id: String,
        /// Tool runtime name.
        tool_name: String,
        /// Whether it succeeded.
        ok: bool,
        /// Output given to the model (bounded).
        output: String,
        /// Wall time of the tool itself, in milliseconds (0 when it did not run).
        duration_ms: u64,
    },
    /// The permission engine decided about a tool call.
    ToolPermissionDecision(DecisionEvent),
    /// A tool call waits for the user. Stored before it is sent.
    #[serde(rename_all = "camelCase")]
    ToolApprovalRequest {
        /// Chat id.
        chat_id: String,
        /// Run id.
        run_id: String,
        /// Approval id (equal to the tool call id).
        approval_id: String,
        /// Call id.
        tool_call_id: String,
        /// Tool runtime name.
        tool_name: String,
        /// Arguments (redacted).
        args: Value,
        /// The decision, with the actions to offer in order.
        decision: PermissionDecision,
    },
    /// The user answered an approval.
    #[serde(rename_all = "camelCase")]
    ToolPermissionResolution {
        /// Chat id.
        chat_id: String,
        /// Approval id.
        approval_id: String,
        /// Call id.
        tool_call_id: String,
        /// The chosen action.
        action_id: ApprovalActionId,
        /// Where the remembered rule went, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scope: Option<RuleDestination>,
        /// The rule added, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<Rule>,
        /// The user's feedback, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
    },
    /// A run ended.
    #[serde(rename_all = "camelCase")]
    RunFinished {
        /// Chat id.
        chat_id: String,
        /// Run id.
        run_id: String,
        /// How it ended.
        outcome: RunOutcome,
        /// Approval ids still pending when suspended.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pending_approvals: Vec<String>,
    },
    /// A run failed (provider error, storage error). The chat stays usable.
    #[serde(rename_all = "camelCase")]
    RunError {
        /// Chat id.
        chat_id: String,
        /// Run id.
        run_id: String,
        /// A readable message.
        message: String,
    },
    /// The model provider failed in a way worth retrying (429, 5xx, a connection that broke
    /// before anything was shown, an empty completion): the runtime waits `wait_ms` and asks
    /// again (issue #13 item 5). The turn goes on; no `run_error` unless the retries run out.
    #[serde(rename_all = "camelCase")]
    ProviderRetry {
        /// Chat id.
        chat_id: String,
        /// Run id.
        run_id: String,
        /// This retry's number, from 1.
        attempt: u32,
        /// The most retries this failure gets.
        max_attempts: u32,
        /// How long the runtime waits before it asks again, in milliseconds (the server's
        /// `Retry-After` when it gave one).
        wait_ms: u64,
        /// The provider's error.
        message: String,
    },
    /// A chat was compacted to fit its model's context window (before a request that would not
    /// fit, after a context-overflow error, or on `/compact`). The transcript is kept whole;
    /// the UI shows a divider at `summaryThroughSeq` / `cutThroughSeq`.
    #[serde(rename_all = "camelCase")]
    ChatCompacted {
        /// Chat id.
        chat_id: String,
        /// The run that compacted it (`None`: `/compact`).
        run_id: Option<String>,
        /// What was done.
        compaction: CompactionInfo,
    },
    /// What one model step cost, as the provider reported it (OpenAI `usage`, Anthropic
    /// `message_start`/`message_delta` usage, Gemini `usageMetadata`). Not sent when the
    /// provider reported nothing. The app adds a turn's steps up under its answer.
    #[serde(rename_all = "camelCase")]
    ModelUsage {
        /// Chat id.
        chat_id: String,
        /// Run id.
        run_id: String,
        /// The model as the provider names it (`gpt-4.1`).
        model: String,
        /// Tokens of the request (prompt), as the provider counted them.
        input_tokens: u64,
        /// Tokens the model generated.
        output_tokens: u64,
        /// The price of those tokens in US dollars at the provider's list price, when the model
        /// is in Suzent's price table (suzent-providers `pricing`).
        cost_usd: Option<f64>,
    },
    /// A deferred tool was activated in a chat (by `tool_search`); it is in the request from
    /// the next model step on, for the rest of the session. Stored before it is sent.
    #[serde(rename_all = "camelCase")]
    ToolActivated {
        /// Chat id.
        chat_id: String,
        /// Runtime name of the tool (`glob_search`, `mcp__fs__read_text_file`).
        tool_name: String,
        /// Legacy class name (equal to the runtime name for MCP tools).
        class_name: String,
        /// Display name.
        display_name: String,
        /// Capability id (`filesystem`, `mcp:fs`).
        capability: String,
    },
    /// A background command or sub-agent started, changed or ended (the sidebar's live data).
    #[serde(rename_all = "camelCase")]
    BackgroundTaskUpdate {
        /// The owning chat.
        chat_id: String,
        /// The task's current state.
        task: crate::background::BackgroundTask,
    },
    /// A chat's plan was created, advanced or replaced by `planning_update` (the sidebar's plan
    /// view). Stored before it is sent.
    #[serde(rename_all = "camelCase")]
    PlanUpdated {
        /// Chat id.
        chat_id: String,
        /// The whole plan as it now stands.
        plan: crate::plan::Plan,
    },
    /// A canvas surface was created or changed (by `render_ui` or a user action). Stored before
    /// it is sent.
    #[serde(rename_all = "camelCase")]
    SurfaceUpdated {
        /// Chat id.
        chat_id: String,
        /// The whole surface as it now stands.
        surface: crate::canvas::Surface,
    },
    /// A canvas surface was deleted (by `render_ui` or the user). Deleted before it is sent.
    #[serde(rename_all = "camelCase")]
    SurfaceDeleted {
        /// Chat id.
        chat_id: String,
        /// The surface's id.
        surface_id: String,
    },
    /// A scheduled run was started, ended, skipped, missed or interrupted (stored before it is
    /// sent).
    #[serde(rename_all = "camelCase")]
    ScheduledRunUpdated {
        /// The run's chat (empty before it has one).
        chat_id: String,
        /// The job.
        job_id: String,
        /// The job's name.
        job_name: String,
        /// The run.
        run_id: String,
        /// Where it is now.
        status: crate::schedule::RunStatus,
        /// Why it exists.
        trigger: crate::schedule::RunTrigger,
        /// Whether the user asked to be notified when it ends (and it has ended).
        notify: bool,
        /// The error, the skip reason or the start of the answer.
        detail: Option<String>,
    },
    /// A chat's goal was set, counted a turn, was met, paused or spent its budget (stored before
    /// it is sent).
    #[serde(rename_all = "camelCase")]
    GoalUpdated {
        /// Chat id.
        chat_id: String,
        /// The objective.
        objective: String,
        /// Where it is.
        status: crate::schedule::GoalStatus,
        /// Why it stopped.
        reason: Option<String>,
        /// Turns taken.
        turns_used: u32,
        /// Turn budget.
        max_turns: u32,
        /// Tokens used (estimated).
        tokens_used: u64,
        /// Token budget.
        max_tokens: u64,
    },
}

impl AgentEvent {
    /// The wire name of this event (`tool_approval_request`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            AgentEvent::RunStarted { .. } => "run_started",
            AgentEvent::TextDelta { .. } => "text_delta",
            AgentEvent::ToolCallStart { .. } => "tool_call_start",
            AgentEvent::ToolCallEnd { .. } => "tool_call_end",
            AgentEvent::ToolPermissionDecision(..) => "tool_permission_decision",
            AgentEvent::ToolApprovalRequest { .. } => "tool_approval_request",
            AgentEvent::ToolPermissionResolution { .. } => "tool_permission_resolution",
            AgentEvent::RunFinished { .. } => "run_finished",
            AgentEvent::RunError { .. } => "run_error",
            AgentEvent::ProviderRetry { .. } => "provider_retry",
            AgentEvent::ChatCompacted { .. } => "chat_compacted",
            AgentEvent::ModelUsage { .. } => "model_usage",
            AgentEvent::ToolActivated { .. } => "tool_activated",
            AgentEvent::BackgroundTaskUpdate { .. } => "background_task_update",
            AgentEvent::PlanUpdated { .. } => "plan_updated",
            AgentEvent::SurfaceUpdated { .. } => "surface_updated",
            AgentEvent::SurfaceDeleted { .. } => "surface_deleted",
            AgentEvent::ScheduledRunUpdated { .. } => "scheduled_run_updated",
            AgentEvent::GoalUpdated { .. } => "goal_updated",
        }
    }

    /// The chat this event belongs to.
    pub fn chat_id(&self) -> &str {
        match self {
            AgentEvent::RunStarted { chat_id, .. }
            | AgentEvent::TextDelta { chat_id, .. }
            | AgentEvent::ToolCallStart { chat_id, .. }
            | AgentEvent::ToolCallEnd { chat_id, .. }
            | AgentEvent::ToolPermissionDecision(DecisionEvent { chat_id, .. })
            | AgentEvent::ToolApprovalRequest { chat_id, .. }
            | AgentEvent::ToolPermissionResolution { chat_id, .. }
            | AgentEvent::RunFinished { chat_id, .. }
            | AgentEvent::RunError { chat_id, .. }
            | AgentEvent::ProviderRetry { chat_id, .. }
            | AgentEvent::ChatCompacted { chat_id, .. }
            | AgentEvent::ModelUsage { chat_id, .. }
            | AgentEvent::ToolActivated { chat_id, .. }
            | AgentEvent::BackgroundTaskUpdate { chat_id, .. }
            | AgentEvent::PlanUpdated { chat_id, .. }
            | AgentEvent::SurfaceUpdated { chat_id, .. }
            | AgentEvent::SurfaceDeleted { chat_id, .. }
            | AgentEvent::ScheduledRunUpdated { chat_id, .. }
            | AgentEvent::GoalUpdated { chat_id, .. } => chat_id,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::permission::{Behavior, DecisionSource, Risk};

    #[test]
    fn decision_event_has_the_seed_wire_shape() {
        let mut decision = PermissionDecision::new(
            Behavior::Ask,
            DecisionSource::AutoClassifier,
            crate::permission::ReasonCode::AutoClassifierAsk,
            "This command changes workspace files.",
            Risk::Medium,
        );
        decision.confidence = Some("high".into());
        let ev = AgentEvent::ToolPermissionDecision(DecisionEvent {
            chat_id: "c1".into(),
            tool_call_id: "tc".into(),
            tool_name: "run_command".into(),
            decision,
        });
        let v = serde_json::to_value(&ev).unwrap_or_default();
        assert_eq!(v["name"], "tool_permission_decision");
        assert_eq!(v["value"]["toolCallId"], "tc");
        assert_eq!(v["value"]["behavior"], "ask");
        assert_eq!(v["value"]["source"], "auto_classifier");
        assert_eq!(v["value"]["reasonCode"], "auto_classifier_ask");
        assert_eq!(v["value"]["risk"], "medium");
        assert_eq!(v["value"]["confidence"], "high");
        let back: AgentEvent = serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.name(), "tool_permission_decision");
    }
}
