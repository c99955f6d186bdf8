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
mod error;
mod paths;
pub mod provider;
mod runtime;

pub use audit::AuditLog;
pub use error::RuntimeError;
pub use paths::Paths;
pub use runtime::{
    CreateChat, DoctorCheck, DoctorReport, OnAsk, RunOptions, RunSummary, Runtime, RuntimeOptions,
};
pub use suzent_store::{
    ApprovalRecord, ApprovalStatus, ChatRecord, PendingApproval, StoredMessage,
};
