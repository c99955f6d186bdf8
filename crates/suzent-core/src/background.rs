//! Background tasks as the sidebar shows them: shell commands started with `start_command` and
//! sub-agents doing delegated work (seed 000 "Background tasks sidebar").

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What kind of work a background task is.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundTaskKind {
    /// A shell command started with `start_command`.
    Command,
    /// A sub-agent started with `spawn_agent`.
    Agent,
}

/// Where a background task is in its life.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundTaskStatus {
    /// Still running.
    Running,
    /// Ended on its own (a command exited, whatever its exit code; an agent finished its turn).
    Finished,
    /// Could not complete (a command killed by a signal it did not ask for, an agent's run failed).
    Failed,
    /// Stopped on request (`stop_command`, `agent_stop`, the sidebar).
    Stopped,
    /// Stopped because its time limit expired.
    TimedOut,
}

impl BackgroundTaskStatus {
    /// Whether the task has ended.
    pub fn is_final(self) -> bool {
        !matches!(self, BackgroundTaskStatus::Running)
    }

    /// The wire name (`running`, `timed_out`...).
    pub fn as_str(self) -> &'static str {
        match self {
            BackgroundTaskStatus::Running => "running",
            BackgroundTaskStatus::Finished => "finished",
            BackgroundTaskStatus::Failed => "failed",
            BackgroundTaskStatus::Stopped => "stopped",
            BackgroundTaskStatus::TimedOut => "timed_out",
        }
    }
}

/// One background task with its live state.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundTask {
    /// Command id (`cmd-...`) or the sub-agent's chat id.
    pub id: String,
    /// Command or sub-agent.
    pub kind: BackgroundTaskKind,
    /// The chat that owns it (started the command or delegated the task).
    pub chat_id: String,
    /// The command line or the delegated task, shortened for display.
    pub title: String,
    /// Status.
    pub status: BackgroundTaskStatus,
    /// Exit code of a command that exited (none while running or when killed by a signal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The last part of the command's output or the agent's last answer (at most 2,000 characters).
    pub recent_output: String,
    /// Bytes of output produced so far (commands; 0 for agents).
    pub output_bytes: u64,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
}
