//! Suzent's permission engine: decides for every tool call whether it runs, asks the user, or is
//! refused (seed 000 "Permission engine").
//!
//! The engine is pure over its inputs except for path resolution, which reads symlinks.
//! Decision order: hard path checks and deny rules first (in every mode), then ask rules, then
//! allow rules, then the mode's defaults. Deny beats ask beats allow.
//!
//! Every tool call passes one [`PermissionGate`]: the request is built from the tool
//! ([`GateSubject`]), the engine decides, the `auto` mode [`Reviewer`] judges what the policy
//! would ask about, headless runs deny what would ask, and the decision is audited and announced
//! ([`DecisionSink`]). The decision simulator ([`PermissionGate::explain`]) uses the same path.
#![deny(missing_docs)]

pub mod audit;
mod browser;
mod destinations;
mod engine;
mod explain;
mod gate;
mod operands;
mod paths;
pub mod paths_windows;
mod redact;
mod rules;
mod rules_file;
mod shell;
mod state;

pub use browser::{BrowserAccess, BrowserAccessKind, codes as browser_codes};
pub use destinations::{Destinations, destination_matches, extract_destinations};
pub use engine::{
    Evaluation, PermissionContext, PermissionEngine, PermissionRequest, ToolAccess, reason_codes,
};
pub use explain::{Explanation, MatchedRule, SegmentView, specificity};
pub use gate::{
    DecisionSink, GateCall, GateOutcome, GateScope, GateSubject, PermissionGate, Resolution,
    Reviewer, headless_profile, should_review,
};
pub use operands::WRITING_COMMANDS;
pub use paths::{PathError, PathPolicy, ReadRefusal, contains as path_contains};
pub use redact::{is_sensitive_key, redact_text, redact_value};
pub use rules::{
    READING_TOOLS, exact_matches, is_reading_tool, prefix_matches, rule_matches, rule_warnings,
    split_rule_words, validate_rule,
};
pub use rules_file::{RuleFile, RuleFileProblem, parse_rules_file};
pub use shell::{CommandSegment, ShellAnalysis, analyze_command};
