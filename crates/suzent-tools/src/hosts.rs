//! Services the runtime lends to tools through [`crate::ToolContext`]: the plan store, the
//! canvas and long-term memory. The traits live here so that tools never depend on the store; the runtime
//! implements them.

use async_trait::async_trait;
use serde::Serialize;
use suzent_core::{Plan, Surface, SurfaceChange};

/// Keeps each chat's plan (`planning_update`). Implementations store the plan before they
/// announce it (`plan_updated`).
#[async_trait]
pub trait PlanHost: Send + Sync + std::fmt::Debug + 'static {
    /// The chat's plan, if it has one.
    async fn load_plan(&self, chat_id: &str) -> Result<Option<Plan>, String>;
    /// Stores the chat's plan and announces it.
    async fn save_plan(&self, chat_id: &str, plan: &Plan) -> Result<(), String>;
}

/// Keeps each chat's canvas surfaces (`render_ui`). Implementations store a change and record
/// it in the surface's history before they announce it (`surface_updated`, `surface_deleted`).
#[async_trait]
pub trait CanvasHost: Send + Sync + std::fmt::Debug + 'static {
    /// The chat's live surface with this id, if any.
    async fn load_surface(
        &self,
        chat_id: &str,
        surface_id: &str,
    ) -> Result<Option<Surface>, String>;
    /// Stores `surface` (new when its `version` is 1, else replacing `version - 1`; an error
    /// when another change was stored in between), records `change` and announces it.
    async fn save_surface(&self, surface: &Surface, change: &SurfaceChange) -> Result<(), String>;
    /// Deletes the surface (its history is kept) and announces it; `false` when there was none.
    async fn delete_surface(
        &self,
        chat_id: &str,
        surface_id: &str,
        change: &SurfaceChange,
    ) -> Result<bool, String>;
}

/// How `memory_block_update` changes a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockOperation {
    /// Replace the whole block with the content.
    Replace,
    /// Add the content as a new line at the end of the block.
    Append,
    /// Empty the block (content is ignored).
    Clear,
}

/// One archival memory found by `memory_search`.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryHit {
    /// Entry id.
    pub id: i64,
    /// The remembered text.
    pub content: String,
    /// When it was stored (RFC 3339).
    pub created_at: String,
    /// Combined relevance (reciprocal-rank fusion of the text and vector rankings).
    pub score: f64,
    /// Which searches found it: `text`, `vector` or both.
    pub matched_by: Vec<&'static str>,
}

/// The answer of a memory search.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemorySearchResult {
    /// The hits, best first.
    pub hits: Vec<MemoryHit>,
    /// `None` when vector search ran; otherwise why only full-text search was used.
    pub text_only_reason: Option<String>,
}

/// Long-term memory: core blocks and the archive.
#[async_trait]
pub trait MemoryHost: Send + Sync + std::fmt::Debug + 'static {
    /// Hybrid search of the user's archive.
    async fn search(
        &self,
        user_id: &str,
        query: &str,
        limit: usize,
    ) -> Result<MemorySearchResult, String>;
    /// Changes a core block; returns its new content.
    async fn update_block(
        &self,
        user_id: &str,
        block: &str,
        operation: BlockOperation,
        content: &str,
    ) -> Result<String, String>;
    /// Stores an archival entry written in a chat; returns its id.
    async fn archive(&self, user_id: &str, chat_id: &str, content: &str) -> Result<i64, String>;
}

/// The chat's browser (`browser_action`): the runtime's browser service, which holds one
/// session per chat over the chat's mode (extension, managed or cdp).
#[async_trait]
pub trait BrowserHost: Send + Sync + std::fmt::Debug + 'static {
    /// The URL of the chat's selected tab as of its last browser command, if any. The
    /// permission check of a command that acts reads it (synchronously).
    fn current_url(&self, chat_id: &str) -> Option<String>;

    /// Runs one command in the chat's session. For commands that act on the page,
    /// `expected_origin` is the origin the permission decision named: when the tab is on
    /// another origin when the command runs, nothing is done. Errors are messages for the
    /// model; a timed-out command is reported as of unknown outcome and never sent again.
    async fn run(
        &self,
        chat_id: &str,
        command: &suzent_core::BrowserCommand,
        expected_origin: Option<&str>,
    ) -> Result<String, String>;
}

/// Where `speak` sends its checked request (issue 20 item 4): the runtime's speech service,
/// which synthesizes it with the configured backend (the OS voices or a provider's speech API)
/// and stores the audio with the chat.
#[async_trait]
pub trait SpeechHost: Send + Sync + std::fmt::Debug + 'static {
    /// Synthesizes `request` and stores it as a WAV clip of `chat_id`; the error is a message
    /// for the model (what to install, the available voices, the provider's answer).
    async fn speak(
        &self,
        chat_id: &str,
        request: &crate::speech::SpeechRequest,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<suzent_core::SpeechClip, String>;
}

/// One person or group a channel can reach (`social_message` with `list_contacts`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Contact {
    /// The channel's name (`telegram`).
    pub channel: String,
    /// The address `social_message` sends to: `CHANNEL:CONVERSATION` (`telegram:42`).
    pub recipient: String,
    /// Who or what it is (a person's or a group's name).
    pub name: String,
    /// When their last message arrived (RFC 3339).
    pub last_seen: String,
}

/// One page of contacts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContactPage {
    /// The contacts of this page, the most recently seen first.
    pub contacts: Vec<Contact>,
    /// How many contacts match the query in all.
    pub total: usize,
    /// The offset of the next page, when there is one.
    pub next_offset: Option<usize>,
}

/// The runtime's messaging channels, seen from `social_message`. Errors are messages for the
/// model.
#[async_trait]
pub trait SocialHost: Send + Sync + std::fmt::Debug + 'static {
    /// The contacts whose name, channel or recipient contains `query` (any case; all when
    /// `None`), the most recently seen first, `limit` of them from `offset`.
    async fn contacts(
        &self,
        query: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<ContactPage, String>;
    /// Sends `message` to `recipient` (`CHANNEL:CONVERSATION`) for chat `chat_id`; returns
    /// what to tell the model. Refuses a recipient the channel has never seen unless a rule
    /// allows it.
    async fn send(&self, chat_id: &str, recipient: &str, message: &str) -> Result<String, String>;
}
