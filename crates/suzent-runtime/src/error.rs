//! Errors of the runtime API.

use crate::provider::ProviderError;
use suzent_core::ConfigError;
use suzent_store::StoreError;

/// An error of a [`crate::Runtime`] call. Each names what was wrong; none leaves partial state.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The configuration file is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The database failed.
    #[error("database: {0}")]
    Store(#[from] StoreError),
    /// No chat with this id.
    #[error("unknown chat '{0}'")]
    ChatNotFound(String),
    /// An argument of the call is invalid.
    #[error("invalid {field}: {message}")]
    InvalidInput {
        /// The argument.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// No approval with this id.
    #[error("unknown approval '{0}'")]
    UnknownApproval(String),
    /// The approval was already answered (or belongs to another chat).
    #[error("approval '{0}' is not pending (already resolved)")]
    StaleApproval(String),
    /// The action id is not one the approval offered.
    #[error("action '{action}' is not offered by approval '{approval}' (offered: {offered})")]
    UnknownAction {
        /// Approval id.
        approval: String,
        /// The action given.
        action: String,
        /// The offered action ids, comma separated.
        offered: String,
    },
    /// The model provider could not be set up.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// Compacting a chat failed (the summarizing request failed, or the newest messages alone
    /// do not fit the model's context). The transcript is untouched.
    #[error("compacting chat '{chat_id}' failed: {message}")]
    Compaction {
        /// The chat.
        chat_id: String,
        /// Why.
        message: String,
    },
    /// A file or directory could not be used.
    #[error("{path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// What failed.
        message: String,
    },
    /// An MCP server operation failed (configuration, connection, call).
    #[error(transparent)]
    Mcp(#[from] suzent_mcp::McpError),
    /// A paired-device operation failed (key, pairing, transport).
    #[error(transparent)]
    Device(#[from] suzent_devices::DeviceError),
    /// A messaging platform failed or refused (never with the token in the message).
    #[error(transparent)]
    Channel(#[from] suzent_channels::ChannelError),
}
