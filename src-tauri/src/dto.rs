//! Payloads of the commands that are not runtime types themselves.

use serde::{Deserialize, Serialize};
use suzent_core::PermissionMode;

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

/// How a run ended: the runtime's own type, serialized as is.
pub use suzent_runtime::RunSummary;

/// One core memory block (persona, user, facts, context) as the memory editor shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct MemoryBlock {
    /// Block name: `persona`, `user`, `facts` or `context`.
    pub name: String,
    /// Its text (empty when the block has none); always in the system prompt.
    pub content: String,
    /// Longest content the block may hold, in characters.
    pub max_chars: u32,
}

/// Where the app writes its log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct LogFile {
    /// The folder of the rotating log files (absolute), or `null` when logging to a file did
    /// not start.
    pub folder: Option<String>,
    /// The newest log file in it, if any.
    pub current: Option<String>,
}

/// What `download_embedding_model` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ModelDownload {
    /// The model folder (absolute path).
    pub folder: String,
    /// Whether files were downloaded (`false`: they were all in place already).
    pub downloaded: bool,
}

/// A recommended local model and whether it is installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct RecommendedLocalModel {
    /// The model as recommended (size, licence, purpose).
    pub model: suzent_runtime::local_models::RecommendedModel,
    /// Whether its file is in the models folder.
    pub installed: bool,
}

/// The local models view of Settings → Models and the first run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct LocalModelsView {
    /// The models folder (absolute path).
    pub dir: String,
    /// The installed GGUF models.
    pub installed: Vec<suzent_runtime::local_models::InstalledModel>,
    /// The recommended models.
    pub recommended: Vec<RecommendedLocalModel>,
}
