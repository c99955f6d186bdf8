//! Shared types of Suzent: the permission vocabulary, transcript messages, the event enum and the
//! configuration model. Every other crate speaks these types; this crate does no I/O.
//!
//! Wire names follow seed 000 ("Permission engine", "Streaming Contract"): events serialize as
//! `{"name": "tool_permission_decision", "value": {...}}` with camelCase fields.
#![deny(missing_docs)]

mod background;
mod browser;
mod canvas;
mod channel;
mod config;
mod event;
mod message;
mod permission;
mod plan;
mod schedule;
pub mod text;

pub use background::{BackgroundTask, BackgroundTaskKind, BackgroundTaskStatus};
pub use browser::{BrowserCommand, BrowserCommandKind, BrowserMode, ScrollDirection};
pub use canvas::{
    Action, ActionContextEntry, Alignment, Axis, BadgeTone, BoundValue, CATALOG_ID, CanvasError,
    CanvasErrors, Children, ChoiceOption, Component, ComponentEntry, DataUpdate, Distribution,
    ImageSource, ListDirection, MAX_COMPONENTS, MAX_DEPTH, MAX_IMAGE_BYTES,
    MAX_INLINED_IMAGE_BYTES, MAX_SURFACE_BYTES, PointerError, Surface, SurfaceAction,
    SurfaceChange, SurfaceChangeKind, SurfaceHistoryEntry, SurfaceTarget, TabItem, TableColumn,
    Template, TextFieldType, TextUsageHint, apply_data_updates, classify_image_url, pointer_get,
    pointer_set, validate_components, validate_surface,
};
pub use channel::{
    ChannelConfig, ChannelPlatform, ChannelProfile, MAX_CHANNEL_NAME, valid_channel_name,
};
pub use config::{
    BrowserConfig, Config, ConfigError, DEFAULT_SANDBOX_IMAGE, DEFAULT_TOOLS, DevicesConfig,
    LocalConfig, ModelSettings, ProviderConfig, ProvidersConfig, SandboxBackend,
};
pub use event::{AgentEvent, CompactionInfo, DecisionEvent, RunOutcome};
pub use message::{ATTACHMENTS_DIR, Attachment, ChatMessage, ToolCall, parse_tool_arguments};
pub use permission::{
    ApprovalAction, ApprovalActionId, ApprovalResponse, Behavior, DecisionSource,
    PermissionDecision, PermissionMode, ReasonCode, Risk, Rule, RuleDestination, RuleDraft,
    RuleMatcher,
};
pub use plan::{PhaseDraft, PhaseStatus, Plan, PlanError, PlanPhase};
pub use schedule::{
    CatchUpPolicy, Delivery, DeniedCall, GoalStatus, JobKind, OverlapPolicy, RunStatus, RunTrigger,
};

/// A fresh random identifier (UUID v7, time-ordered), as a string.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
