//! Records read from and written to the store.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use suzent_core::{ApprovalActionId, ChatMessage, PermissionDecision, PermissionMode};

/// A chat to create.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewChat {
    /// Unique id (e.g. [`suzent_core::new_id`]).
    pub id: String,
    /// Title shown in the chat list.
    pub title: String,
    /// Workspace root directory.
    pub workspace: String,
    /// Model override (`None`: the configured default).
    pub model: Option<String>,
    /// Permission mode.
    pub mode: PermissionMode,
    /// Selected tool ids (`None`: the default selection).
    pub tools: Option<Vec<String>>,
}

/// A stored chat.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatRecord {
    /// Unique id.
    pub id: String,
    /// Title shown in the chat list.
    pub title: String,
    /// Workspace root directory.
    pub workspace: String,
    /// Model override (`None`: the configured default).
    pub model: Option<String>,
    /// Permission mode.
    pub mode: PermissionMode,
    /// Selected tool ids (`None`: the default selection).
    pub tools: Option<Vec<String>>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it or its transcript last changed.
    pub updated_at: DateTime<Utc>,
}

/// Changes to a chat: `None` leaves a field as it is. For the optional fields, `Some(None)` clears
/// them (`model: Some(None)` goes back to the default model).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatPatch {
    /// New title.
    pub title: Option<String>,
    /// New model override.
    pub model: Option<Option<String>>,
    /// New permission mode.
    pub mode: Option<PermissionMode>,
    /// New tool selection.
    pub tools: Option<Option<Vec<String>>>,
}

/// One transcript message as stored.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredMessage {
    /// Position in the chat: 1, 2, 3...
    pub seq: i64,
    /// The run (turn) that produced it, if any.
    pub run_id: Option<String>,
    /// The message.
    pub message: ChatMessage,
    /// When it was stored.
    pub created_at: DateTime<Utc>,
}

/// State of a tool step (one tool call's execution).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStepStatus {
    /// Execution started and no result is stored yet (after a crash: do not run it again).
    Running,
    /// The result is stored in the transcript.
    Done,
}

impl ToolStepStatus {
    /// The stored name (`running`, `done`).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStepStatus::Running => "running",
            ToolStepStatus::Done => "done",
        }
    }
}

/// A tool call waiting for the user's answer.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    /// Approval id (the request id of `tool_approval_request`).
    pub id: String,
    /// The chat.
    pub chat_id: String,
    /// The suspended run.
    pub run_id: String,
    /// The tool call awaiting approval.
    pub tool_call_id: String,
    /// Tool runtime name.
    pub tool_name: String,
    /// The call's parsed arguments.
    pub args: serde_json::Value,
    /// The engine's ask decision, with the offered actions.
    pub decision: PermissionDecision,
    /// When it was asked.
    pub created_at: DateTime<Utc>,
}

/// Whether an approval is still waiting.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Waiting for an answer.
    Pending,
    /// Answered.
    Resolved,
}

impl ApprovalStatus {
    /// The stored name (`pending`, `resolved`).
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Resolved => "resolved",
        }
    }
}

/// An approval with its answer, if any.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRecord {
    /// The request.
    pub approval: PendingApproval,
    /// Pending or resolved.
    pub status: ApprovalStatus,
    /// The chosen action, once resolved.
    pub action: Option<ApprovalActionId>,
    /// The user's feedback, if any.
    pub feedback: Option<String>,
    /// When it was resolved.
    pub resolved_at: Option<DateTime<Utc>>,
}
