//! The one error type of every command: `{kind, message}`, serializable and exported to
//! TypeScript, so the UI can branch on `kind` and show `message`.

use serde::{Deserialize, Serialize};
use suzent_runtime::RuntimeError;
use suzent_runtime::provider::ProviderError;

/// What went wrong, in a word the UI can branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum AppErrorKind {
    /// The runtime could not start (bad `config.toml`, database unavailable); every command
    /// returns this until the problem is fixed and the app restarted.
    Startup,
    /// `config.toml` or a settings value is invalid.
    Config,
    /// An argument is invalid; the message names it.
    InvalidInput,
    /// No chat, approval or rule with that id.
    NotFound,
    /// The approval was already answered.
    StaleApproval,
    /// The model provider could not be used (unknown model, missing key, keychain failure).
    Provider,
    /// The database failed.
    Storage,
    /// A file or directory could not be used.
    Io,
    /// The folder picker failed.
    Dialog,
    /// An MCP server could not be configured, reached or called.
    Mcp,
    /// The OS keychain cannot store or read secrets here (no Secret Service on Linux, a locked
    /// or refused keychain); the message says why. The UI offers the environment's key or a key
    /// kept for this session only instead.
    Keychain,
    /// A paired-device operation failed (device key, pairing code, unreachable device).
    Device,
}

/// An error returned by a command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type, thiserror::Error)]
#[error("{message}")]
pub struct AppError {
    /// What kind of failure.
    pub kind: AppErrorKind,
    /// A readable sentence naming what was wrong.
    pub message: String,
    /// The argument or form field at fault, when the error is about one (`name`, `command`,
    /// `url`, `path`, a settings key); a form shows `message` next to it. Omitted otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl AppError {
    /// An error of `kind` with `message`.
    pub fn new(kind: AppErrorKind, message: impl Into<String>) -> AppError {
        AppError {
            kind,
            message: message.into(),
            field: None,
        }
    }

    /// The same error, about `field`.
    pub fn with_field(mut self, field: impl Into<String>) -> AppError {
        self.field = Some(field.into());
        self
    }
}

impl From<RuntimeError> for AppError {
    fn from(e: RuntimeError) -> AppError {
        let kind = match &e {
            RuntimeError::Config(_) => AppErrorKind::Config,
            RuntimeError::Store(_) => AppErrorKind::Storage,
            RuntimeError::ChatNotFound(_) | RuntimeError::UnknownApproval(_) => {
                AppErrorKind::NotFound
            }
            RuntimeError::InvalidInput { .. } | RuntimeError::UnknownAction { .. } => {
                AppErrorKind::InvalidInput
            }
            RuntimeError::StaleApproval(_) => AppErrorKind::StaleApproval,
            RuntimeError::Provider(_) | RuntimeError::Compaction { .. } => AppErrorKind::Provider,
            RuntimeError::Io { .. } => AppErrorKind::Io,
            RuntimeError::Mcp(_) => AppErrorKind::Mcp,
            RuntimeError::Device(_) => AppErrorKind::Device,
            // A platform refused or could not be reached: the message says which and why (a
            // kind of its own comes with the Settings → Channels panel).
            RuntimeError::Channel(_) => AppErrorKind::InvalidInput,
        };
        let field = match &e {
            RuntimeError::InvalidInput { field, .. } => Some(field.clone()),
            RuntimeError::Mcp(mcp) => mcp.field().map(str::to_string),
            _ => None,
        };
        AppError {
            kind,
            message: e.to_string(),
            field,
        }
    }
}

impl From<ProviderError> for AppError {
    fn from(e: ProviderError) -> AppError {
        AppError::new(AppErrorKind::Provider, e.to_string())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn runtime_errors_become_typed_errors_with_a_readable_message() {
        let e = AppError::from(RuntimeError::ChatNotFound("c1".into()));
        assert_eq!(e.kind, AppErrorKind::NotFound);
        assert_eq!(e.message, "unknown chat 'c1'");
        let e = AppError::from(RuntimeError::InvalidInput {
            field: "default_model".into(),
            message: "'gpt' is not of the form provider/model".into(),
        });
        assert_eq!(e.kind, AppErrorKind::InvalidInput);
        assert!(e.message.contains("default_model"), "{}", e.message);
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["kind"], "invalid_input");
        assert_eq!(json["field"], "default_model");
        let mut keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["field", "kind", "message"]);
        // Without a field the shape stays {kind, message}.
        let json =
            serde_json::to_value(AppError::from(RuntimeError::ChatNotFound("c".into()))).unwrap();
        assert_eq!(
            json.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["kind", "message"]
        );
    }

    #[test]
    fn mcp_configuration_errors_name_the_form_field() {
        let duplicate = suzent_runtime::McpError::DuplicateServer("fs".into());
        let e = AppError::from(RuntimeError::Mcp(duplicate));
        assert_eq!(e.kind, AppErrorKind::Mcp);
        assert_eq!(e.field.as_deref(), Some("name"));
        assert!(e.message.contains("'fs'"), "{}", e.message);
    }
}
