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
