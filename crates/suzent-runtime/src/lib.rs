//! Suzent's agent runtime: chats, the agent loop and approvals over the model providers, the
//! tools and the permission gate. Every shell (the CLI, the desktop app, the loopback server)
//! maps its transport onto [`Runtime`] and its event stream; none holds agent logic.
//!
//! [`Runtime`] is a thin facade over owned services, each in its own module with its own state:
//! `chats`, `turn/` (the loop and one call's execution), `approvals`, `rules` (the rules in force,
//! assembled in one place), `permissions` (the runtime's side of the permission gate and the
//! reviewer), `inbox/` (with its dispatcher), `channels/` (messaging platforms), `background`, `agents`, `memory/` (with end-of-chat
//! summaries), `skills`, `plans`, `canvas`, `mcp`, `toolset`, `doctor`, `settings`. Services
//! reach each other through the handles they are given when the runtime opens, never through
//! the facade.
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

mod agents;
mod approvals;
mod attachments;
mod audit_read;
mod background;
mod browser;
mod canvas;
mod channels;
mod chats;
mod connection;
pub mod deep_link;
pub mod desktop_prefs;
mod devices;
mod dirs;
mod doctor;
mod error;
mod event_bus;
pub mod goals;
mod inbox;
mod keys;
pub mod local_models;
mod logs;
mod mcp;
mod memory;
mod notes;
mod permissions;
mod plans;
mod processes;
pub mod reviewer;
mod rules;
mod runtime;
pub mod scheduler;
pub mod schedules;
mod search;
mod sessions;
mod settings;
mod skills;
mod speech;
#[cfg(test)]
mod test_services;
mod titles;
mod toolset;
mod turn;
#[cfg(test)]
mod turn_service_tests;

/// How long chats are fitted to the model's context (issue #13 item 4): the request view of a
/// compacted transcript and the cached token count the turn loop uses each step (public for the
/// `compaction` benchmark).
pub mod compaction {
    pub use crate::turn::compact::{CUT_MIN_BYTES, SUMMARY_HEADER, TokenCache, apply, cut_output};
}

/// The model providers (crate `suzent-providers`), re-exported under their old path.
pub use suzent_providers as provider;

pub use agents::MAX_SUBAGENT_DEPTH;
pub use audit_read::{AuditEntry, AuditFilter, AuditRead, MAX_AUDIT_LIMIT};
pub use browser::{BrowserService, ChatBrowserMode};
pub use canvas::{CANVAS_ACTION_KIND, CANVAS_SENDER, MAX_ACTION_CONTEXT_BYTES, action_text};
pub use channels::{
    CHANNEL_MESSAGE_KIND, ChannelCheck, ChannelState, ChannelStatus, ChannelView, Channels,
    PRESS_DECIDED, PRESS_ELSEWHERE, PRESS_INVALID, PRESS_NOT_ALLOWED, REFUSAL_TEXT, WAITING_TEXT,
};
pub use chats::CreateChat;
pub use connection::{ConnectionCheck, ProviderCheck};
pub use devices::{
    DeviceView, Devices, JoinOffer, NearbyView, PEER_MESSAGE_KIND, PEER_PREFIX, PairingOffer,
    PairingStatus, PeerAddressText, PeerSummary, ThisDevice, parse_peer_address, peer_address,
    peer_mode,
};
pub use dirs::Paths;
pub use doctor::{DoctorCheck, DoctorReport};
pub use error::RuntimeError;
pub use keys::{ProviderKeyInfo, SessionKeys};
pub use logs::{LOG_FILE_NAME, log_dir};
pub use mcp::{McpImport, McpTestResult, McpTestTool};
pub use memory::{DEFAULT_MODEL_SOURCE, EMBEDDING_MODEL_ENV, EmbeddingStatus, MAX_BLOCK_CHARS};
pub use rules::{PermissionState, RULES_FILE};
pub use runtime::{Runtime, RuntimeOptions};
pub use search::{ChatSearch, MAX_QUERY_CHARS, MAX_SEARCH_HITS};
pub use settings::{KeyStatus, ProviderSettings, ProvidersSettings, Settings, SettingsPatch};
pub use skills::SKILL_DIRS_ENV;
pub use suzent_channels::{ChannelError, split_message};
pub use suzent_core::{BackgroundTask, BackgroundTaskKind, BackgroundTaskStatus};
pub use suzent_core::{ChannelConfig, ChannelPlatform, ChannelProfile};
pub use suzent_core::{PhaseStatus, Plan, PlanPhase};
pub use suzent_core::{Surface, SurfaceAction, SurfaceHistoryEntry};
pub use suzent_mcp::{
    McpError, McpServerConfig, McpServerInfo, McpServerState, McpToolInfo, McpToolStatus,
};
/// The permission audit log's writer handle (`suzent-permissions`: hash chain, rotation, verify).
pub use suzent_permissions::audit::AuditLog;
pub use suzent_permissions::{Explanation, MatchedRule, RuleFileProblem, SegmentView};
pub use suzent_store::{
    ApprovalRecord, ApprovalStatus, ChatNotes, ChatRecord, ChatSearchHit, DeviceRecord,
    DeviceScope, DeviceState, InboxMessage, InboxStatus, NewInboxMessage, PeerMessage,
    PeerMessageStatus, PendingApproval, StoredMessage, ToolCallNote, ToolResolutionNote,
    TurnFailureNote, TurnUsageNote,
};
pub use suzent_store::{ChannelConversation, ChannelRequest, ChannelRequestStatus};
pub use suzent_tools::CommandLifetime;
pub use suzent_tools::{MemoryHit, MemorySearchResult, Skill, SkillSource};
pub use titles::{DEFAULT_TITLE, MAX_TITLE_CHARS, title_from};
pub use turn::{OnAsk, RunOptions, RunSummary};
