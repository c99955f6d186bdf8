//! Suzent's permission engine: decides for every tool call whether it runs, asks the user, or is
//! refused (seed 000 "Permission engine").
//!
//! The engine is pure over its inputs except for path resolution, which reads symlinks.
//! Decision order: hard path checks and deny rules first (in every mode), then ask rules, then
//! allow rules, then the mode's defaults. Deny beats ask beats allow.
#![deny(missing_docs)]

mod engine;
mod paths;
mod redact;
mod rules;
mod shell;

pub use engine::{
    Evaluation, PermissionContext, PermissionEngine, PermissionRequest, ToolAccess, reason_codes,
};
pub use paths::{PathError, PathPolicy};
pub use redact::{is_sensitive_key, redact_text, redact_value};
pub use rules::{prefix_matches, rule_matches, validate_rule};
pub use shell::{CommandSegment, ShellAnalysis, analyze_command};
