//! Suzent's agent runtime: chats, the agent loop, model providers and approvals. Every shell (the
//! CLI, the desktop app, the loopback server) maps its transport onto [`Runtime`] and its event
//! stream; none holds agent logic.
//!
//! A turn: the user's message is stored, the model streams text and tool calls, each call goes
//! through the registry and the permission engine, then runs, is refused, or waits for approval.
//! A waiting turn is stored and resumes from [`Runtime::resume_approvals`], also in a new process.
//!
//! ```no_run
//! # async fn demo() -> Result<(), suzent_runtime::RuntimeError> {
//! use suzent_runtime::{CreateChat, RunOptions, Runtime, RuntimeOptions};
//! let runtime = Runtime::open(RuntimeOptions::from_env()?).await?;
//! let chat = runtime.create_chat(CreateChat::default()).await?;
//! let summary = runtime.send_message(&chat.id, "List the files here", RunOptions::default()).await?;
//! println!("{:?}", summary.outcome);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod audit;
mod audit_read;
mod connection;
mod error;
mod keys;
mod logs;
mod mcp;
mod paths;
pub mod provider;
pub mod reviewer;
mod runtime;
mod search;
mod settings;
mod titles;
mod tools_api;
mod toolset;

pub use audit::AuditLog;
pub use audit_read::{AuditEntry, AuditFilter, AuditRead, MAX_AUDIT_LIMIT};
pub use connection::{ConnectionCheck, ProviderCheck};
pub use error::RuntimeError;
pub use keys::{ProviderKeyInfo, SessionKeys};
pub use logs::{LOG_FILE_NAME, log_dir};
pub use mcp::{McpImport, McpTestResult, McpTestTool};
pub use paths::Paths;
pub use runtime::{CANVAS_ACTION_KIND, CANVAS_SENDER, MAX_ACTION_CONTEXT_BYTES, action_text};
pub use runtime::{
    CreateChat, DoctorCheck, DoctorReport, OnAsk, RunOptions, RunSummary, Runtime, RuntimeOptions,
};
pub use runtime::{
    DEFAULT_MODEL_SOURCE, EMBEDDING_MODEL_ENV, EmbeddingStatus, MAX_BLOCK_CHARS, SKILL_DIRS_ENV,
};
pub use runtime::{PermissionState, RULES_FILE};
pub use search::{ChatSearch, MAX_QUERY_CHARS, MAX_SEARCH_HITS};
pub use titles::{DEFAULT_TITLE, MAX_TITLE_CHARS, title_from};
pub use settings::{KeyStatus, ProviderSettings, ProvidersSettings, Settings, SettingsPatch};
pub use suzent_core::{BackgroundTask, BackgroundTaskKind, BackgroundTaskStatus};
pub use suzent_core::{PhaseStatus, Plan, PlanPhase};
pub use suzent_core::{Surface, SurfaceAction, SurfaceHistoryEntry};
pub use suzent_mcp::{
    McpError, McpServerConfig, McpServerInfo, McpServerState, McpToolInfo, McpToolStatus,
};
pub use suzent_permissions::{Explanation, MatchedRule, RuleFileProblem, SegmentView};
pub use suzent_store::{
    ApprovalRecord, ApprovalStatus, ChatRecord, ChatSearchHit, InboxMessage, InboxStatus, NewInboxMessage,
    PendingApproval, StoredMessage,
};
pub use suzent_tools::{MemoryHit, MemorySearchResult, Skill, SkillSource};
