//! Shared types of Suzent: the permission vocabulary, transcript messages, the event enum and the
//! configuration model. Every other crate speaks these types; this crate does no I/O.
//!
//! Wire names follow seed 000 ("Permission engine", "Streaming Contract"): events serialize as
//! `{"name": "tool_permission_decision", "value": {...}}` with camelCase fields.
#![deny(missing_docs)]

mod background;
mod config;
mod event;
mod message;
mod permission;
mod plan;

pub use background::{BackgroundTask, BackgroundTaskKind, BackgroundTaskStatus};
pub use config::{Config, ConfigError, DEFAULT_TOOLS, ProviderConfig, ProvidersConfig};
pub use event::{AgentEvent, DecisionEvent, RunOutcome};
pub use message::{ChatMessage, ToolCall, parse_tool_arguments};
pub use permission::{
    ApprovalAction, ApprovalActionId, ApprovalResponse, Behavior, DecisionSource,
    PermissionDecision, PermissionMode, Risk, Rule, RuleDestination, RuleDraft, RuleMatcher,
};
pub use plan::{PhaseDraft, PhaseStatus, Plan, PlanError, PlanPhase};

/// A fresh random identifier (UUID v7, time-ordered), as a string.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
