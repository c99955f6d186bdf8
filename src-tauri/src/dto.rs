//! Payloads of the commands that are not runtime types themselves.

use serde::{Deserialize, Serialize};
use suzent_core::{PermissionMode, RunOutcome};
use suzent_runtime::PendingApproval;

/// Arguments of `create_chat`; missing fields come from the settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateChatArgs {
    /// Title (default "New chat").
    #[serde(default)]
    pub title: Option<String>,
    /// Workspace folder; must be an existing directory.
    #[serde(default)]
    pub workspace: Option<String>,
    /// Model `provider/model`.
    #[serde(default)]
    pub model: Option<String>,
    /// Permission mode.
    #[serde(default)]
    pub mode: Option<PermissionMode>,
}

/// How a run (`send_message`, `resume_approvals`) ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// Run id.
    pub run_id: String,
    /// Completed, suspended (waiting for approvals), cancelled or failed.
    pub outcome: RunOutcome,
    /// The approvals waiting when suspended.
    pub pending: Vec<PendingApproval>,
    /// The last assistant text of the run.
    pub text: String,
    /// The error message when the run failed.
    pub error: Option<String>,
}

impl From<suzent_runtime::RunSummary> for RunSummary {
    fn from(s: suzent_runtime::RunSummary) -> RunSummary {
        RunSummary {
            run_id: s.run_id,
            outcome: s.outcome,
            pending: s.pending,
            text: s.text,
            error: s.error,
        }
    }
}
