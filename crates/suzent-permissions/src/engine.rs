//! The decision procedure. (API fixed by the runtime; bodies to be implemented.)

use crate::paths::PathPolicy;
use serde_json::Value;
use std::path::PathBuf;
use suzent_core::{PermissionDecision, PermissionMode, Rule};

/// What a tool call touches, as the tool itself reports it (`Tool::access`). Paths are absolute
/// but not yet resolved: the engine resolves symlinks through [`PathPolicy`].
#[derive(Debug, Clone, PartialEq)]
pub enum ToolAccess {
    /// Reads these files or directories.
    Read(Vec<PathBuf>),
    /// Creates, changes or deletes these files.
    Write(Vec<PathBuf>),
    /// Runs a shell command in `cwd`.
    Command {
        /// The script as the model wrote it.
        command: String,
        /// Working directory (absolute).
        cwd: PathBuf,
    },
    /// Nothing the engine can classify; decided by the tool's `requires_approval`.
    Other,
}

/// One tool call presented to the engine.
#[derive(Debug, Clone)]
pub struct PermissionRequest {
    /// Tool runtime name (`run_command`).
    pub tool_name: String,
    /// Parsed arguments (for exact-input rules).
    pub args: Value,
    /// What the call touches.
    pub access: ToolAccess,
    /// The tool's own flag: asks in `default` mode when nothing else decides.
    pub requires_approval: bool,
}

/// Everything besides the call that a decision depends on.
#[derive(Debug, Clone, Copy)]
pub struct PermissionContext<'a> {
    /// The chat's mode.
    pub mode: PermissionMode,
    /// Roots the chat may touch, and the workspace.
    pub paths: &'a PathPolicy,
    /// Global rules plus this chat's session rules (any order).
    pub rules: &'a [Rule],
    /// The chat id (for session rules offered in approval actions).
    pub chat_id: &'a str,
}

/// The engine's answer: the decision (with approval actions when it asks) and the rules that
/// matched, for explanation.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The decision.
    pub decision: PermissionDecision,
    /// Every rule that matched, whatever its behavior.
    pub matched: Vec<Rule>,
}

/// The permission engine. Cheap to clone; holds the built-in policy.
#[derive(Debug, Clone, Default)]
pub struct PermissionEngine {}
