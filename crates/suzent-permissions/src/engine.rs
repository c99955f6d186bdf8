//! The decision procedure.
//!
//! Order (first that decides wins): hard path checks (outside every root: deny), deny rules,
//! dangerous commands (deny), protected paths (`.git` internals: ask unless `full_access`),
//! ask rules, compound or unparsed commands (ask unless `full_access`), allow rules that cover
//! the whole request, then the mode's defaults.

use crate::explain::specificity;
use crate::paths::{PathError, PathPolicy, home_dir};
use crate::rules::{Prepared, command_path, covers_request, matches_any, write_targets};
use crate::shell::{CommandSegment, ShellAnalysis};
use serde_json::Value;
use std::path::{Component, Path, PathBuf};
use suzent_core::{
    ApprovalAction, ApprovalActionId, Behavior, DecisionSource, PermissionDecision, PermissionMode,
    ReasonCode, Risk, Rule, RuleDestination, RuleDraft, RuleMatcher,
};

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
    /// A browser call: reads, navigates to an address, or acts on the selected tab's page
    /// (decided on the URL's host; see `browser`).
    Browser(crate::browser::BrowserAccess),
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

/// Reason codes the engine produces, by their old constant names (see [`ReasonCode`]).
pub mod reason_codes {
    use suzent_core::ReasonCode;
    /// A path (or redirect target) resolves outside every allowed root.
    pub const OUTSIDE_WORKSPACE: ReasonCode = ReasonCode::OutsideWorkspace;
    /// A path cannot be resolved (symlink loop, empty).
    pub const UNRESOLVABLE_PATH: ReasonCode = ReasonCode::UnresolvablePath;
    /// A write into `.git` internals of the workspace.
    pub const PROTECTED_PATH: ReasonCode = ReasonCode::ProtectedPath;
    /// A deny rule matched.
    pub const RULE_DENY: ReasonCode = ReasonCode::RuleDeny;
    /// A built-in dangerous command (privilege escalation, disk formatting, power, `rm -rf /`).
    pub const DANGEROUS_COMMAND: ReasonCode = ReasonCode::DangerousCommand;
    /// An ask rule matched.
    pub const RULE_ASK: ReasonCode = ReasonCode::RuleAsk;
    /// Allow rules cover the whole request.
    pub const RULE_ALLOW: ReasonCode = ReasonCode::RuleAllow;
    /// More than one command (or a nested script) outside `full_access`.
    pub const COMPOUND_COMMAND: ReasonCode = ReasonCode::CompoundCommand;
    /// The shell analyser could not follow the script.
    pub const SHELL_UNPARSED: ReasonCode = ReasonCode::ShellUnparsed;
    /// `full_access` mode allowed it without review.
    pub const FULL_ACCESS: ReasonCode = ReasonCode::FullAccess;
    /// A read.
    pub const READ_ONLY: ReasonCode = ReasonCode::ReadOnly;
    /// `auto` mode allowed a write inside the workspace.
    pub const AUTO_WORKSPACE_WRITE: ReasonCode = ReasonCode::AutoWorkspaceWrite;
    /// A write that needs approval.
    pub const WRITE_REQUIRES_APPROVAL: ReasonCode = ReasonCode::WriteRequiresApproval;
    /// A known read-only command.
    pub const READ_ONLY_COMMAND: ReasonCode = ReasonCode::ReadOnlyCommand;
    /// A command that is not known to be read-only.
    pub const SHELL_POLICY_ASK: ReasonCode = ReasonCode::ShellPolicyAsk;
    /// The tool asks for approval by default.
    pub const TOOL_REQUIRES_APPROVAL: ReasonCode = ReasonCode::ToolRequiresApproval;
    /// The tool does not ask for approval by default.
    pub const TOOL_DEFAULT_ALLOW: ReasonCode = ReasonCode::ToolDefaultAllow;
    /// An option that makes a program run other code (`git -c`, `--config-env`, `--exec-path`,
    /// pagers, external diff tools, `--upload-pack`, `rebase --exec`).
    pub const CODE_EXECUTION_OPTION: ReasonCode = ReasonCode::CodeExecutionOption;
    /// A variable that changes what runs (`LD_PRELOAD`, `NODE_OPTIONS`, `PYTHONPATH`, `GIT_*`).
    pub const RISKY_ENVIRONMENT: ReasonCode = ReasonCode::RiskyEnvironment;
    /// The call touches Suzent's own settings and data (rules, config, MCP servers, the
    /// database, the audit log), or runs Suzent's own CLI: never, in any mode.
    pub const SUZENT_STATE: ReasonCode = ReasonCode::SuzentState;
    /// A command writes to a path operand outside the allowed roots (or one whose value
    /// cannot be known): asks outside `full_access` (never remembered, never auto-allowed).
    pub const WRITE_OUTSIDE_WORKSPACE: ReasonCode = ReasonCode::WriteOutsideWorkspace;
}
use reason_codes as rc;

impl PermissionEngine {
    /// An engine with the built-in policy.
    pub fn new() -> Self {
        PermissionEngine {}
    }

    /// Decides one tool call. Never fails: anything it cannot classify asks (or denies, for
    /// paths that cannot be resolved).
    pub fn evaluate(&self, request: &PermissionRequest, ctx: &PermissionContext<'_>) -> Evaluation {
        let prepared = Prepared::new(request, ctx.paths);
        let matched: Vec<Rule> = ctx
            .rules
            .iter()
            .filter(|r| matches_any(r, request, ctx, &prepared))
            .cloned()
            .collect();
        let (mut decision, remember) = decide(request, ctx, &prepared, &matched);
        decision.matched_rules = matched.iter().map(|r| r.id.clone()).collect();
        if decision.behavior == Behavior::Ask {
            decision.actions = approval_actions(request, ctx, &prepared, remember);
        }
        Evaluation { decision, matched }
    }

    /// The rule an approval would remember for this call (`allow`, in `destination`), or None
    /// when remembering is not offered (compound or multi-line commands, substitutions,
    /// commands the analyser does not understand, paths without a common parent).
    pub fn suggest_rule(
        &self,
        request: &PermissionRequest,
        ctx: &PermissionContext<'_>,
        destination: RuleDestination,
    ) -> Option<RuleDraft> {
        let prepared = Prepared::new(request, ctx.paths);
        suggest_rule(request, &prepared, destination)
    }
}

/// A decision; its reason passes the redactor (it may quote the command).
fn decision(
    behavior: Behavior,
    source: DecisionSource,
    code: ReasonCode,
    reason: impl Into<String>,
    risk: Risk,
) -> PermissionDecision {
    let reason = crate::redact::redact_text(&reason.into());
    PermissionDecision::new(behavior, source, code, reason, risk)
}

fn state_denial(what: &str) -> PermissionDecision {
    decision(
        Behavior::Deny,
        DecisionSource::PathPolicy,
        rc::SUZENT_STATE,
        format!(
            "{what}: Suzent's own settings and data (rules, modes, MCP servers, the database, the audit log) change only through you, never through a tool call."
        ),
        Risk::High,
    )
}

fn rule_summary(rule: &Rule) -> String {
    if let Some(d) = rule.description.as_deref().filter(|d| !d.trim().is_empty()) {
        return d.to_string();
    }
    let what = match &rule.matcher {
        RuleMatcher::All => "*".to_string(),
        RuleMatcher::Exact { input } => input.to_string(),
        RuleMatcher::Prefix { words } => words.join(" "),
        RuleMatcher::Path { glob } => glob.clone(),
        RuleMatcher::Destination { pattern } => format!("to {pattern}"),
    };
    format!("{} {}({})", rule.behavior, rule.tool, what)
}

/// The decision and whether remembering actions may be offered.
fn decide(
    request: &PermissionRequest,
    ctx: &PermissionContext<'_>,
    prepared: &Prepared,
    matched: &[Rule],
) -> (PermissionDecision, bool) {
    let policy = ctx.paths;
    let risk = assess_risk(request, ctx, prepared);

    // 0. Built-in dangerous commands: never run, in every mode (cited before anything else:
    // `rm -rf /` is refused as the removal of `/`, not for the paths under it).
    if let (ToolAccess::Command { cwd, .. }, Some(analysis)) = (&request.access, &prepared.analysis)
    {
        for segment in &analysis.segments {
            if let Some(why) = dangerous(segment, cwd, policy) {
                let reason = format!(
                    "This command is never run by the agent: {why} (`{}`).",
                    segment.full_words.join(" ")
                );
                return (
                    decision(
                        Behavior::Deny,
                        DecisionSource::ShellPolicy,
                        rc::DANGEROUS_COMMAND,
                        reason,
                        Risk::High,
                    ),
                    false,
                );
            }
        }
    }

    // 0b. Suzent's own state: off limits in every mode.
    if let (ToolAccess::Command { cwd, .. }, Some(analysis)) = (&request.access, &prepared.analysis)
    {
        let bases = crate::rules::cd_bases(analysis, cwd);
        if let Some(hit) = crate::state::names_suzent_state(analysis, &bases, policy) {
            let what = format!("`{}` {} '{}'", hit.word, hit.how, hit.resolved.display());
            return (state_denial(&what), false);
        }
    }

    // 1. Hard path checks.
    let (checked, is_write): (Vec<PathBuf>, bool) = match &request.access {
        ToolAccess::Read(paths) => (paths.clone(), false),
        ToolAccess::Write(paths) => (paths.clone(), true),
        ToolAccess::Command { cwd, .. } => (
            prepared
                .analysis
                .iter()
                .flat_map(|a| write_targets(a, cwd))
                .collect(),
            true,
        ),
        ToolAccess::Other | ToolAccess::Browser(_) => (Vec::new(), false),
    };
    if let ToolAccess::Browser(browser) = &request.access
        && let Some(refused) = browser.refusal()
    {
        return (refused, false);
    }
    let mut resolved_writes = Vec::new();
    for path in &checked {
        let result = if is_write {
            policy.check(path)
        } else {
            policy.check_read(path)
        };
        match result {
            Ok(resolved) => {
                if is_write {
                    resolved_writes.push(resolved);
                }
            }
            Err(PathError::SuzentState { resolved, .. }) => {
                let verb = if is_write { "Writing to" } else { "Reading" };
                let what = format!(
                    "{verb} '{}' is not allowed (it resolves to '{}')",
                    path.display(),
                    resolved.display()
                );
                return (state_denial(&what), false);
            }
            Err(PathError::OutsideRoots { resolved, .. }) => {
                let verb = if is_write { "Writing to" } else { "Reading" };
                let reason = format!(
                    "{verb} '{}' is not allowed: it resolves to '{}', outside the workspace and the allowed folders.",
                    path.display(),
                    resolved.display()
                );
                return (
                    decision(
                        Behavior::Deny,
                        DecisionSource::PathPolicy,
                        rc::OUTSIDE_WORKSPACE,
                        reason,
                        Risk::High,
                    ),
                    false,
                );
            }
            Err(e @ PathError::Unresolvable { .. }) => {
                let reason = format!("The path cannot be checked safely: {e}.");
                return (
                    decision(
                        Behavior::Deny,
                        DecisionSource::PathPolicy,
                        rc::UNRESOLVABLE_PATH,
                        reason,
                        Risk::High,
                    ),
                    false,
                );
            }
        }
    }

    // 2. Deny rules.
    // Within one behavior, the most specific matcher is the one the reason cites.
    if let Some(rule) = matched
        .iter()
        .filter(|r| r.behavior == Behavior::Deny)
        .max_by_key(|r| specificity(r))
    {
        let reason = format!("A deny rule forbids this call: {}.", rule_summary(rule));
        return (
            decision(
                Behavior::Deny,
                DecisionSource::Rule,
                rc::RULE_DENY,
                reason,
                risk,
            ),
            false,
        );
    }
    // 2b. Path operands of commands that create, change or delete files.
    if let (ToolAccess::Command { cwd, .. }, Some(analysis)) = (&request.access, &prepared.analysis)
    {
        let bases = crate::rules::cd_bases(analysis, cwd);
        for segment in &analysis.segments {
            for operand in crate::operands::write_operands(segment) {
                let outside = match crate::operands::resolve_word(&operand.word, &bases) {
                    crate::operands::WordPaths::Unknown => {
                        Some("its value cannot be known".to_string())
                    }
                    crate::operands::WordPaths::Known { paths, glob } => {
                        let mut why = None;
                        for p in paths {
                            match policy.check(&p) {
                                Ok(resolved) => resolved_writes.push(resolved),
                                Err(PathError::OutsideRoots { resolved, .. }) => {
                                    why = Some(if glob {
                                        format!(
                                            "the pattern starts at '{}', outside the workspace and the allowed folders",
                                            resolved.display()
                                        )
                                    } else {
                                        format!(
                                            "it resolves to '{}', outside the workspace and the allowed folders",
                                            resolved.display()
                                        )
                                    });
                                    break;
                                }
                                Err(e) => {
                                    why = Some(e.to_string());
                                    break;
                                }
                            }
                        }
                        why
                    }
                };
                if let Some(why) = outside {
                    let command = segment.words.join(" ");
                    return if ctx.mode == PermissionMode::FullAccess {
                        (
                            decision(
                                Behavior::Deny,
                                DecisionSource::PathPolicy,
                                rc::OUTSIDE_WORKSPACE,
                                format!("`{command}` changes '{}': {why}.", operand.word),
                                Risk::High,
                            ),
                            false,
                        )
                    } else {
                        (
                            decision(
                                Behavior::Ask,
                                DecisionSource::PathPolicy,
                                rc::WRITE_OUTSIDE_WORKSPACE,
                                format!(
                                    "`{command}` changes '{}': {why}, so it needs your approval each time.",
                                    operand.word
                                ),
                                Risk::High,
                            ),
                            false,
                        )
                    };
                }
            }
        }
    }

    // 3. Protected paths.
    if ctx.mode != PermissionMode::FullAccess
        && let Some(p) = resolved_writes.iter().find(|p| is_protected(p, policy))
    {
        let reason = format!(
            "Writing to '{}' changes Git internals (hooks, config) and needs approval.",
            p.display()
        );
        return (
            decision(
                Behavior::Ask,
                DecisionSource::PathPolicy,
                rc::PROTECTED_PATH,
                reason,
                Risk::High,
            ),
            false,
        );
    }

    // 4. Ask rules.
    if let Some(rule) = matched
        .iter()
        .filter(|r| r.behavior == Behavior::Ask)
        .max_by_key(|r| specificity(r))
    {
        let reason = format!("An ask rule requires approval: {}.", rule_summary(rule));
        return (
            decision(
                Behavior::Ask,
                DecisionSource::Rule,
                rc::RULE_ASK,
                reason,
                risk,
            ),
            false,
        );
    }

    // 5a. In `full_access`, deny rules still apply: a script the analyser could not follow may
    // hide a denied command, so it asks when any deny rule could apply to this tool.
    if ctx.mode == PermissionMode::FullAccess
        && let Some(analysis) = &prepared.analysis
        && !analysis.understood
        && ctx
            .rules
            .iter()
            .any(|r| r.behavior == Behavior::Deny && crate::rules::applies(r, request, ctx))
    {
        return (
            decision(
                Behavior::Ask,
                DecisionSource::ShellPolicy,
                rc::SHELL_UNPARSED,
                "This command could not be fully analysed, so your deny rules cannot be checked; it needs approval.",
                Risk::High,
            ),
            false,
        );
    }

    // 5. Unparsed commands (compound ones are decided after the allow rules, 6b).
    if ctx.mode != PermissionMode::FullAccess
        && let Some(analysis) = &prepared.analysis
        && !analysis.understood
    {
        let reason = "This command could not be fully analysed, so it needs approval.";
        return (
            decision(
                Behavior::Ask,
                DecisionSource::ShellPolicy,
                rc::SHELL_UNPARSED,
                reason,
                Risk::High,
            ),
            false,
        );
    }

    // 5b. Options and variables that change what a command runs are never covered by allow
    // rules or known-safe names.
    if ctx.mode != PermissionMode::FullAccess
        && let Some(analysis) = &prepared.analysis
    {
        for segment in &analysis.segments {
            if let Some(why) = hidden_code_option(segment) {
                let reason = format!(
                    "`{}` uses {why}, which can run arbitrary programs, so it needs approval.",
                    segment.words.join(" ")
                );
                return (
                    decision(
                        Behavior::Ask,
                        DecisionSource::ShellPolicy,
                        rc::CODE_EXECUTION_OPTION,
                        reason,
                        Risk::High,
                    ),
                    false,
                );
            }
            if let Some(var) = risky_assignment(segment) {
                let reason = format!(
                    "Setting {var} changes what the command runs, so it needs approval (rules never cover it)."
                );
                return (
                    decision(
                        Behavior::Ask,
                        DecisionSource::ShellPolicy,
                        rc::RISKY_ENVIRONMENT,
                        reason,
                        Risk::High,
                    ),
                    false,
                );
            }
        }
    }

    // 6. Allow rules covering the whole request.
    let allow_rules: Vec<&Rule> = ctx
        .rules
        .iter()
        .filter(|r| r.behavior == Behavior::Allow)
        .collect();
    if covers_request(&allow_rules, request, ctx, prepared) {
        let reason = "Allowed by your permission rules.";
        return (
            decision(
                Behavior::Allow,
                DecisionSource::Rule,
                rc::RULE_ALLOW,
                reason,
                risk,
            ),
            true,
        );
    }

    // 6b. A script whose every command is allowed (by a rule or as known read-only), with
    // every write target covered by a path rule, is allowed; otherwise a compound script asks.
    if let (ToolAccess::Command { .. }, Some(analysis)) = (&request.access, &prepared.analysis)
        && analysis.understood
        && analysis.compound
        && ctx.mode != PermissionMode::FullAccess
    {
        match every_segment_allowed(&allow_rules, request, ctx, prepared) {
            Some(by_rule) => {
                let (source, code, reason) = if by_rule {
                    (
                        DecisionSource::Rule,
                        rc::RULE_ALLOW,
                        "Every command of this script is allowed by your rules or known to be read-only.",
                    )
                } else {
                    (
                        DecisionSource::ShellPolicy,
                        rc::READ_ONLY_COMMAND,
                        "Every command of this script is known to be read-only.",
                    )
                };
                return (decision(Behavior::Allow, source, code, reason, risk), false);
            }
            None => {
                let reason = "This command runs several commands (or a nested script), and not all of them are allowed, so it needs approval.";
                // Remembering is offered where the rule synthesis allows it (a nested script
                // gets an exact rule; pipelines and lists none).
                return (
                    decision(
                        Behavior::Ask,
                        DecisionSource::ShellPolicy,
                        rc::COMPOUND_COMMAND,
                        reason,
                        risk.max(Risk::Medium),
                    ),
                    true,
                );
            }
        }
    }

    // 7. Mode defaults.
    (
        mode_default(request, ctx, prepared, &resolved_writes, risk),
        true,
    )
}

/// For a script: Some(whether a rule was needed) when every segment is known read-only or
/// covered by an allow prefix rule, and every write-redirect target by an allow path rule.
fn every_segment_allowed(
    allow_rules: &[&Rule],
    request: &PermissionRequest,
    ctx: &PermissionContext<'_>,
    prepared: &Prepared,
) -> Option<bool> {
    let analysis = prepared.analysis.as_ref()?;
    let rules: Vec<&Rule> = allow_rules
        .iter()
        .copied()
        .filter(|r| crate::rules::applies(r, request, ctx))
        .collect();
    let globs: Vec<globset::GlobMatcher> = rules
        .iter()
        .filter_map(|r| match &r.matcher {
            RuleMatcher::Path { glob } => crate::rules::compile_glob(glob).ok(),
            _ => None,
        })
        .collect();
    let ToolAccess::Command { cwd, .. } = &request.access else {
        return None;
    };
    if analysis.segments.is_empty()
        || prepared.redirects.len() != write_targets(analysis, cwd).len()
        || !prepared
            .redirects
            .iter()
            .all(|p| globs.iter().any(|g| g.is_match(p)))
    {
        return None;
    }
    let mut by_rule = false;
    for segment in &analysis.segments {
        let mut plain = segment.clone();
        plain.redirects.clear();
        if segment_is_read_only(&plain) {
            continue;
        }
        let covered = rules.iter().any(|r| match &r.matcher {
            RuleMatcher::Prefix { words } => crate::rules::prefix_matches(words, &segment.words),
            _ => false,
        });
        if !covered {
            return None;
        }
        by_rule = true;
    }
    if !prepared.redirects.is_empty() {
        by_rule = true;
    }
    Some(by_rule)
}

fn mode_default(
    request: &PermissionRequest,
    ctx: &PermissionContext<'_>,
    prepared: &Prepared,
    resolved_writes: &[PathBuf],
    risk: Risk,
) -> PermissionDecision {
    if ctx.mode == PermissionMode::FullAccess {
        return decision(
            Behavior::Allow,
            DecisionSource::Mode,
            rc::FULL_ACCESS,
            "Allowed without review (Full Access mode).",
            risk,
        );
    }
    match &request.access {
        ToolAccess::Read(_) => decision(
            Behavior::Allow,
            DecisionSource::Mode,
            rc::READ_ONLY,
            "Reading files is allowed.",
            Risk::Low,
        ),
        ToolAccess::Write(_) => {
            let in_workspace = !resolved_writes.is_empty()
                && resolved_writes
                    .iter()
                    .all(|p| ctx.paths.is_inside_workspace(p));
            if ctx.mode == PermissionMode::Auto && in_workspace {
                decision(
                    Behavior::Allow,
                    DecisionSource::Mode,
                    rc::AUTO_WORKSPACE_WRITE,
                    "Auto mode allows changes inside the workspace.",
                    risk,
                )
            } else {
                decision(
                    Behavior::Ask,
                    DecisionSource::Mode,
                    rc::WRITE_REQUIRES_APPROVAL,
                    "Changing files needs your approval.",
                    risk.max(Risk::Medium),
                )
            }
        }
        ToolAccess::Command { .. } => match &prepared.analysis {
            Some(a) if is_read_only(a) => decision(
                Behavior::Allow,
                DecisionSource::ShellPolicy,
                rc::READ_ONLY_COMMAND,
                "This is a known read-only command.",
                Risk::Low,
            ),
            _ => decision(
                Behavior::Ask,
                DecisionSource::ShellPolicy,
                rc::SHELL_POLICY_ASK,
                "This command is not known to be read-only, so it needs approval.",
                risk.max(Risk::Medium),
            ),
        },
        ToolAccess::Browser(browser) => browser.mode_default(ctx.mode),
        ToolAccess::Other => {
            if request.requires_approval {
                decision(
                    Behavior::Ask,
                    DecisionSource::ToolDefault,
                    rc::TOOL_REQUIRES_APPROVAL,
                    format!(
                        "The tool '{}' asks for approval before it runs.",
                        request.tool_name
                    ),
                    risk,
                )
            } else {
                decision(
                    Behavior::Allow,
                    DecisionSource::ToolDefault,
                    rc::TOOL_DEFAULT_ALLOW,
                    "This tool runs without approval.",
                    risk,
                )
            }
        }
    }
}

/// How risky the call is, independent of the decision.
fn assess_risk(
    request: &PermissionRequest,
    ctx: &PermissionContext<'_>,
    prepared: &Prepared,
) -> Risk {
    match &request.access {
        ToolAccess::Read(_) => Risk::Low,
        ToolAccess::Write(_) => {
            if prepared
                .paths
                .iter()
                .all(|p| ctx.paths.is_inside_workspace(p))
            {
                Risk::Medium
            } else {
                Risk::High
            }
        }
        ToolAccess::Command { .. } => match &prepared.analysis {
            Some(a) if !a.understood || a.compound => Risk::High,
            Some(a) if is_read_only(a) => Risk::Low,
            Some(a) if a.segments.iter().any(is_high_risk) => Risk::High,
            Some(a)
                if !prepared
                    .redirects
                    .iter()
                    .all(|p| ctx.paths.is_inside_workspace(p)) =>
            {
                Risk::High
            }
            _ => Risk::Medium,
        },
        ToolAccess::Browser(b) => match b.kind {
            crate::browser::BrowserAccessKind::Read => Risk::Low,
            _ => Risk::Medium,
        },
        ToolAccess::Other => {
            if request.requires_approval {
                Risk::Medium
            } else {
                Risk::Low
            }
        }
    }
}

fn program(segment: &CommandSegment) -> &str {
    segment
        .words
        .first()
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .unwrap_or("")
}

fn is_high_risk(segment: &CommandSegment) -> bool {
    let prog = program(segment);
    let sub = segment.words.get(1).map(String::as_str).unwrap_or("");
    matches!(
        prog,
        "rm" | "rmdir"
            | "curl"
            | "wget"
            | "ssh"
            | "scp"
            | "rsync"
            | "chmod"
            | "chown"
            | "kill"
            | "pkill"
            | "killall"
            | "mv"
            | "sh"
            | "bash"
            | "zsh"
            | "eval"
            | "nc"
            | "ncat"
    ) || (prog == "git"
        && matches!(
            sub,
            "push" | "reset" | "clean" | "rebase" | "checkout" | "restore"
        ))
}

/// A write into `.git` internals of the workspace (any `.git` directory inside it).
pub(crate) fn is_protected(resolved: &Path, policy: &PathPolicy) -> bool {
    // `.GIT` is `.git` on a case-insensitive volume: compare without case everywhere.
    crate::paths::contains(policy.workspace(), resolved, policy.case_insensitive())
        && resolved.components().skip(policy.workspace().components().count()).any(|c| {
            matches!(c, Component::Normal(n) if n.to_string_lossy().eq_ignore_ascii_case(".git"))
        })
}

// ---------- shell policy ----------

/// Variables (exact names) that change which code a program loads or runs.
const RISKY_VARIABLES: &[&str] = &[
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "BASH_ENV",
    "ENV",
    "PATH",
    "IFS",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "CLASSPATH",
    "MAVEN_OPTS",
    "GRADLE_OPTS",
    "GCONV_PATH",
    "RUSTC_WRAPPER",
    "RUSTC",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CC",
    "CXX",
    "LESSOPEN",
    "LESSCLOSE",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "BROWSER",
    "HOME",
    "XDG_CONFIG_HOME",
    "ZDOTDIR",
    "TMPDIR",
];

/// Variable name prefixes that change what runs (`GIT_SSH_COMMAND`, `DYLD_INSERT_LIBRARIES`,
/// `npm_config_script_shell`, `CARGO_TARGET_*_RUNNER`).
const RISKY_VARIABLE_PREFIXES: &[&str] = &[
    "GIT_",
    "DYLD_",
    "LD_",
    "NPM_CONFIG_",
    "npm_config_",
    "YARN_",
    "CARGO_",
    "PIP_",
    "NODE_",
];

/// Names under a risky prefix that only change output or build caching.
const PREFIXED_BUT_HARMLESS: &[&str] = &[
    "NODE_ENV",
    "NODE_NO_WARNINGS",
    "CARGO_TERM_COLOR",
    "CARGO_TERM_VERBOSE",
    "CARGO_TERM_PROGRESS_WHEN",
    "CARGO_INCREMENTAL",
    "GIT_PAGER_IN_USE",
];

/// The first assignment of a segment (leading `VAR=value`, `env VAR=value`, or an argument of
/// `export`/`declare`) that sets a variable which changes what runs.
pub(crate) fn risky_assignment(segment: &CommandSegment) -> Option<String> {
    // `export A=1` is analysed as a declaration whose keyword may or may not be a word.
    let declared = match segment.words.first().map(String::as_str) {
        Some("export" | "declare" | "typeset" | "readonly" | "local") => &segment.words[1..],
        Some(first)
            if first.split_once('=').is_some_and(|(n, _)| {
                !n.is_empty()
                    && n.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '+')
            }) =>
        {
            &segment.words[..]
        }
        _ => &[][..],
    };
    segment
        .assignments
        .iter()
        .chain(declared.iter())
        .filter_map(|a| a.split_once('=').map(|(n, _)| n))
        .find(|name| {
            let name = name.trim_end_matches('+');
            RISKY_VARIABLES.contains(&name)
                || (RISKY_VARIABLE_PREFIXES.iter().any(|p| name.starts_with(p))
                    && !PREFIXED_BUT_HARMLESS.contains(&name))
        })
        .map(str::to_string)
}

/// Why a segment's options make its program run other code, if they do.
pub(crate) fn hidden_code_option(segment: &CommandSegment) -> Option<&'static str> {
    let words = &segment.words;
    let prog = words.first().map(|w| w.rsplit('/').next().unwrap_or(w))?;
    if prog != "git" {
        return None;
    }
    let args = &words[1..];
    // Global options before the subcommand.
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let w = w.as_str();
        if !w.starts_with('-') {
            break;
        }
        if w == "-c" || (w.starts_with("-c") && w.len() > 2) {
            return Some("`git -c` (configuration such as core.pager, core.sshCommand, aliases)");
        }
        if w.starts_with("--config-env") {
            return Some("`git --config-env`");
        }
        if w.starts_with("--exec-path") {
            return Some("`git --exec-path`");
        }
        if w == "-p" || w == "--paginate" {
            return Some("a pager (`git -p`)");
        }
        // Options with a separate value.
        if matches!(
            w,
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix"
        ) {
            i += 1;
        }
        i += 1;
    }
    let sub = args.get(i).map(String::as_str).unwrap_or("");
    if matches!(
        sub,
        "config" | "alias" | "filter-branch" | "difftool" | "mergetool" | "submodule"
    ) {
        return Some("a git subcommand that configures or runs external programs");
    }
    for w in &args[i..] {
        let w = w.as_str();
        if w == "--ext-diff"
            || w.starts_with("--upload-pack")
            || w.starts_with("--receive-pack")
            || w.starts_with("--exec")
            || w == "-x" && sub == "rebase"
            || w.starts_with("--open-files-in-pager")
            || (w.starts_with("-O") && sub == "grep")
            || w.starts_with("--textconv")
            || w.starts_with("--extcmd")
            || w.starts_with("--tool")
            || (w == "-u" && matches!(sub, "clone" | "fetch" | "ls-remote" | "pull"))
        {
            return Some("an option that runs an external program");
        }
        if w.starts_with("--output") {
            return Some("`--output` (writes a file the path policy cannot see)");
        }
    }
    None
}

/// Environment variables that do not change what a read-only command does.
const HARMLESS_ASSIGNMENTS: &[&str] = &[
    "LC_ALL", "LANG", "LANGUAGE", "TZ", "COLUMNS", "LINES", "NO_COLOR", "TERM", "CLICOLOR",
];

const READ_ONLY_PROGRAMS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "fd",
    "pwd",
    "echo",
    "printf",
    "true",
    "false",
    "which",
    "stat",
    "file",
    "du",
    "df",
    "tree",
    "uniq",
    "cut",
    "diff",
    "date",
    "whoami",
    "uname",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "id",
    "hostname",
    "nl",
    "tac",
    "tr",
    "comm",
    "cmp",
    "seq",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "type",
    "test",
    "[",
    "[[",
    "column",
    "xargs",
    "cd",
    "pushd",
    "popd",
];

/// A single, understood command (or `find -exec` / `xargs` with inner commands) whose every
/// segment is a known read-only program by bare name, without write redirects.
pub(crate) fn is_read_only(analysis: &ShellAnalysis) -> bool {
    analysis.understood
        && !analysis.compound
        && !analysis.segments.is_empty()
        && analysis.segments.iter().all(segment_is_read_only)
}

pub(crate) fn segment_is_read_only(segment: &CommandSegment) -> bool {
    let Some(prog) = segment.words.first() else {
        return false;
    };
    if prog.contains('/') || !segment.redirects.is_empty() {
        return false;
    }
    if segment.wrappers.iter().any(|w| {
        matches!(
            w.as_str(),
            "sudo" | "doas" | "su" | "sh" | "bash" | "zsh" | "dash" | "ksh"
        )
    }) {
        return false;
    }
    if !segment.assignments.iter().all(|a| {
        a.split_once('=')
            .is_some_and(|(n, _)| HARMLESS_ASSIGNMENTS.contains(&n))
    }) {
        return false;
    }
    let args = &segment.words[1..];
    let short_cluster_has =
        |w: &str, c: char| w.starts_with('-') && !w.starts_with("--") && w[1..].contains(c);
    match prog.as_str() {
        "sort" => !args
            .iter()
            .any(|w| w.starts_with("--output") || short_cluster_has(w, 'o')),
        "sed" => {
            let has_n = args
                .iter()
                .any(|w| w == "--quiet" || w == "--silent" || short_cluster_has(w, 'n'));
            let in_place = args.iter().any(|w| {
                w.starts_with("--in-place")
                    || short_cluster_has(w, 'i')
                    || short_cluster_has(w, 'f')
            });
            // `w`/`W` write files and `e` executes: scripts containing those letters are not trusted.
            let scripts_ok = args
                .iter()
                .filter(|w| !w.starts_with('-'))
                .take(1)
                .all(|s| !s.contains(['w', 'W', 'e']))
                && args
                    .windows(2)
                    .filter(|p| p[0] == "-e")
                    .all(|p| !p[1].contains(['w', 'W', 'e']));
            has_n && !in_place && scripts_ok
        }
        "find" => !args.iter().any(|w| {
            matches!(
                w.as_str(),
                "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls"
            )
        }),
        "env" => args.iter().all(|w| w.starts_with('-') || w.contains('=')),
        p => READ_ONLY_PROGRAMS.contains(&p),
    }
}

const SYSTEM_DIRS: &[&str] = &[
    "/",
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/boot",
    "/dev",
    "/proc",
    "/sys",
    "/var",
    "/opt",
    "/root",
    "/home",
    "/srv",
    "/System",
    "/Library",
    "/Applications",
    "/Users",
    "/private",
];

/// Why a segment is a built-in dangerous command, if it is.
pub(crate) fn dangerous(
    segment: &CommandSegment,
    cwd: &Path,
    policy: &PathPolicy,
) -> Option<String> {
    let escalation = ["sudo", "doas", "su", "pkexec", "run0"];
    if segment
        .wrappers
        .iter()
        .any(|w| escalation.contains(&w.as_str()))
        || escalation.contains(&program(segment))
    {
        return Some("privilege escalation".to_string());
    }
    let prog = program(segment);
    let args = segment.words.get(1..).unwrap_or(&[]);
    if prog.starts_with("mkfs")
        || matches!(
            prog,
            "fdisk" | "sfdisk" | "cfdisk" | "parted" | "wipefs" | "mkswap"
        )
    {
        return Some("disk partitioning or formatting".to_string());
    }
    if prog == "dd" && args.iter().any(|a| a.starts_with("of=/dev/")) {
        return Some("writing to a raw device".to_string());
    }
    if matches!(prog, "shutdown" | "reboot" | "halt" | "poweroff")
        || (prog == "systemctl"
            && args
                .iter()
                .any(|a| matches!(a.as_str(), "poweroff" | "reboot" | "halt" | "kexec")))
        || (prog == "init" && args.iter().any(|a| a == "0" || a == "6"))
    {
        return Some("shutting down or rebooting the machine".to_string());
    }
    if prog == "find" && args.iter().any(|a| a == "-delete") {
        for start in args
            .iter()
            .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
        {
            if deletes_protected_tree(start, cwd, policy) {
                return Some(format!("deleting everything under '{start}'"));
            }
        }
    }
    if matches!(prog, "chmod" | "chown" | "chgrp")
        && args.iter().any(|a| {
            a == "-R"
                || a == "--recursive"
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('R'))
        })
    {
        for target in args.iter().filter(|a| !a.starts_with('-')).skip(1) {
            if deletes_protected_tree(target, cwd, policy) {
                return Some(format!("recursive ownership or mode change of '{target}'"));
            }
        }
    }
    if prog == "rm" {
        let mut recursive = false;
        let mut targets = Vec::new();
        let mut options_done = false;
        for a in args {
            if !options_done && a == "--" {
                options_done = true;
            } else if !options_done && a.starts_with("--") {
                recursive |= a == "--recursive" || a == "--no-preserve-root";
            } else if !options_done && a.starts_with('-') && a.len() > 1 {
                recursive |= a.contains('r') || a.contains('R');
            } else {
                targets.push(a);
            }
        }
        if recursive {
            for t in targets {
                if deletes_protected_tree(t, cwd, policy) {
                    return Some(format!("recursive removal of '{t}'"));
                }
            }
        }
    }
    None
}

fn deletes_protected_tree(target: &str, cwd: &Path, policy: &PathPolicy) -> bool {
    let base = target.trim_end_matches('*').trim_end_matches('/');
    let base = if base.is_empty() && target.starts_with('/') {
        "/"
    } else {
        base
    };
    let base = if base.is_empty() { "." } else { base };
    let path = command_path(base, cwd);
    let resolved = policy.resolve(&path).unwrap_or(path);
    let mut protected: Vec<PathBuf> = SYSTEM_DIRS.iter().map(PathBuf::from).collect();
    protected.push(policy.workspace().to_path_buf());
    if let Some(home) = home_dir() {
        protected.push(home);
    }
    protected.contains(&resolved)
}

// ---------- approval actions ----------

/// Tools whose second word is a subcommand worth remembering (`git status`, `npm test`).
const SUBCOMMAND_TOOLS: &[&str] = &[
    "git",
    "npm",
    "npx",
    "cargo",
    "pnpm",
    "yarn",
    "go",
    "docker",
    "kubectl",
    "gh",
    "pip",
    "pip3",
    "uv",
    "bun",
    "deno",
    "poetry",
    "helm",
    "terraform",
    "dotnet",
    "rustup",
    "brew",
    "apt",
    "apt-get",
    "systemctl",
];

fn escape_word(w: &str) -> String {
    w.replace('\\', "\\\\").replace('*', "\\*")
}

/// Programs that run code given to them (inline with `-c`/`-e`, on stdin, or from a script).
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "node",
    "nodejs",
    "deno",
    "bun",
    "perl",
    "ruby",
    "php",
    "lua",
    "luajit",
    "Rscript",
    "julia",
    "osascript",
    "pwsh",
    "powershell",
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "ash",
    "mksh",
    "csh",
    "tcsh",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "tclsh",
    "expect",
    "groovy",
    "jshell",
    "irb",
    "ipython",
];

/// Options that hand an interpreter its code inline.
const INLINE_CODE_OPTIONS: &[&str] = &[
    "-c",
    "-e",
    "-E",
    "-r",
    "-p",
    "-x",
    "--eval",
    "--print",
    "-Command",
    "-command",
    "--command",
    "-EncodedCommand",
    "-encodedcommand",
    "-lc",
    "-ic",
    "-ec",
    "-xc",
];

fn program_of(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn is_interpreter(prog: &str) -> bool {
    INTERPRETERS.contains(&prog)
        || prog.starts_with("python")
        || prog.starts_with("pypy")
        || prog.starts_with("ruby")
        || prog.starts_with("perl")
        || prog.starts_with("php")
        || prog.starts_with("node")
}

/// Whether the command runs code written into the command itself: an interpreter with an
/// inline-code option (`python -c`, `node -e`, `bash -c`, `deno eval`), an `awk` program, or
/// an interpreter with no script (it reads code from a here-document or stdin).
pub(crate) fn runs_inline_code(words: &[String]) -> bool {
    let Some(first) = words.first() else {
        return false;
    };
    let prog = program_of(first);
    if !is_interpreter(prog) {
        return false;
    }
    if prog.ends_with("awk") {
        return true;
    }
    let args = &words[1..];
    if matches!(prog, "deno" | "bun") && args.first().is_some_and(|a| a == "eval" || a == "-e") {
        return true;
    }
    for a in args {
        if INLINE_CODE_OPTIONS.contains(&a.as_str())
            || (a.starts_with('-')
                && !a.starts_with("--")
                && a.len() > 2
                && a.ends_with('c')
                && matches!(
                    prog,
                    "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "mksh"
                ))
        {
            return true;
        }
        if !a.starts_with('-') {
            return false; // a script file: code on disk, not inline
        }
        if a == "-" {
            return true;
        }
    }
    // No script: the code comes from stdin.
    !matches!(prog, "deno" | "bun")
}

/// Whether the command deletes, overwrites or publishes (a remembered rule for it is exact).
pub(crate) fn destroys_or_publishes(words: &[String]) -> bool {
    let Some(first) = words.first() else {
        return false;
    };
    let prog = program_of(first);
    let rest: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let sub = rest
        .iter()
        .find(|w| !w.starts_with('-'))
        .copied()
        .unwrap_or("");
    let has = |w: &str| rest.contains(&w);
    let short_has = |c: char| {
        rest.iter()
            .any(|w| w.starts_with('-') && !w.starts_with("--") && w[1..].contains(c))
    };
    match prog {
        "rm" | "rmdir" | "unlink" | "shred" | "dd" | "truncate" | "mv" | "kill" | "pkill"
        | "killall" | "wipefs" | "scp" | "rsync" | "ssh" | "sftp" | "ftp" | "twine" | "chmod"
        | "chown" | "chgrp" => true,
        p if p.starts_with("mkfs") => true,
        "sed" => rest.iter().any(|w| w.starts_with("--in-place")) || short_has('i'),
        "perl" => short_has('i'),
        "git" => matches!(
            sub,
            "push"
                | "reset"
                | "clean"
                | "rebase"
                | "checkout"
                | "restore"
                | "rm"
                | "filter-repo"
                | "filter-branch"
                | "gc"
                | "prune"
                | "stash"
                | "switch"
                | "merge"
                | "cherry-pick"
                | "revert"
                | "am"
                | "apply"
                | "tag"
                | "branch"
                | "remote"
                | "update-ref"
                | "reflog"
                | "worktree"
                | "send-email"
        ),
        "npm" | "pnpm" | "yarn" | "bun" => matches!(
            sub,
            "publish"
                | "unpublish"
                | "deprecate"
                | "dist-tag"
                | "owner"
                | "access"
                | "token"
                | "adduser"
                | "login"
                | "logout"
        ),
        "cargo" => matches!(sub, "publish" | "yank" | "owner" | "login" | "logout"),
        "gem" => matches!(sub, "push" | "yank" | "owner"),
        "docker" | "podman" => matches!(
            sub,
            "push" | "rm" | "rmi" | "prune" | "system" | "volume" | "kill" | "stop" | "login"
        ),
        "kubectl" | "helm" | "terraform" | "tofu" | "pulumi" => matches!(
            sub,
            "delete"
                | "apply"
                | "destroy"
                | "uninstall"
                | "install"
                | "upgrade"
                | "rollback"
                | "patch"
                | "replace"
                | "scale"
                | "drain"
                | "up"
                | "import"
        ),
        "gh" | "glab" => {
            matches!(
                sub,
                "release" | "repo" | "secret" | "api" | "pr" | "issue" | "gist"
            ) && !rest
                .iter()
                .any(|w| matches!(*w, "list" | "view" | "status"))
                || has("delete")
        }
        "curl" | "wget" | "http" | "xh" => rest.iter().any(|w| {
            matches!(
                *w,
                "-X" | "--request"
                    | "-d"
                    | "--data"
                    | "--data-binary"
                    | "--data-raw"
                    | "--data-urlencode"
                    | "-F"
                    | "--form"
                    | "-T"
                    | "--upload-file"
                    | "--post-data"
                    | "--post-file"
                    | "--method"
            ) || w.starts_with("--data")
                || w.starts_with("--request=")
                || w.starts_with("-X")
        }),
        _ => false,
    }
}

/// The words an allow rule should remember for a command, ending in `*`: the program, the
/// subcommand of tools that have one (`cargo test *`), the script of `npm run X` / `npx X`,
/// the module of `python -m X`, the script file of an interpreter (`python3 tool.py *`). None
/// when no prefix is narrow enough (an interpreter without a script).
pub(crate) fn suggested_prefix(words: &[String]) -> Vec<String> {
    let Some(first) = words.first() else {
        return Vec::new();
    };
    let prog = first.as_str();
    let mut out = vec![escape_word(prog)];
    let second = words.get(1).map(String::as_str);
    let third = words.get(2).map(String::as_str);
    fn positional(w: Option<&str>) -> Option<&str> {
        w.filter(|s| !s.starts_with('-'))
    }
    if SUBCOMMAND_TOOLS.contains(&prog) {
        if let Some(sub) = positional(second) {
            out.push(escape_word(sub));
            if matches!(sub, "run" | "exec" | "x" | "dlx" | "run-script")
                && let Some(script) = positional(third)
            {
                out.push(escape_word(script));
            }
        }
    } else if matches!(prog, "npx" | "bunx" | "uvx" | "pnpx") {
        if let Some(pkg) = positional(second) {
            out.push(escape_word(pkg));
        }
    } else if is_interpreter(program_of(prog)) {
        if second == Some("-m") {
            out.push("-m".to_string());
            match words.get(2) {
                Some(module) => out.push(escape_word(module)),
                None => return Vec::new(),
            }
        } else {
            // The script file, after the interpreter's own options.
            match words[1..].iter().find(|w| !w.starts_with('-')) {
                Some(script)
                    if words[1..].iter().take_while(|w| w.starts_with('-')).count() == 0 =>
                {
                    out.push(escape_word(script))
                }
                _ => return Vec::new(),
            }
        }
    }
    out.push("*".to_string());
    out
}

fn escape_glob(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn common_dir(paths: &[PathBuf]) -> Option<PathBuf> {
    let mut iter = paths.iter().map(|p| {
        p.parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| p.clone())
    });
    let mut common = iter.next()?;
    for p in iter {
        while !p.starts_with(&common) {
            if !common.pop() {
                return None;
            }
        }
    }
    Some(common)
}

fn suggest_rule(
    request: &PermissionRequest,
    prepared: &Prepared,
    destination: RuleDestination,
) -> Option<RuleDraft> {
    let tool = request.tool_name.clone();
    let (matcher, what) = match &request.access {
        ToolAccess::Command { command, .. } => {
            let analysis = prepared.analysis.as_ref()?;
            if command.contains('\n') || command.contains("$(") || command.contains('`') {
                return None;
            }
            if !analysis.understood {
                return None;
            }
            let primary: Vec<&CommandSegment> =
                analysis.segments.iter().filter(|s| !s.nested).collect();
            // Pipelines and lists (`curl ... | sh` among them) are never remembered.
            let [segment] = primary.as_slice() else {
                return None;
            };
            if !segment.redirects.is_empty() || !segment.input.is_empty() {
                return None;
            }
            let exact = runs_inline_code(&segment.words)
                || destroys_or_publishes(&segment.words)
                || analysis
                    .segments
                    .iter()
                    .any(|s| destroys_or_publishes(&s.words));
            let words = if exact {
                Vec::new()
            } else {
                suggested_prefix(&segment.words)
            };
            if words.is_empty() {
                // Exact: this command (the argument holding it) and nothing else.
                let input = match request.args.as_object() {
                    Some(map) => match map
                        .iter()
                        .find(|(_, v)| v.as_str() == Some(command.as_str()))
                    {
                        Some((k, v)) => serde_json::json!({ k.clone(): v.clone() }),
                        None => request.args.clone(),
                    },
                    None => return None,
                };
                (RuleMatcher::Exact { input }, format!("exactly `{command}`"))
            } else {
                let what = format!("`{}` commands matching `{}`", tool, words.join(" "));
                (RuleMatcher::Prefix { words }, what)
            }
        }
        ToolAccess::Read(_) | ToolAccess::Write(_) => {
            let dir = common_dir(&prepared.paths)?;
            dir.parent()?; // never suggest the whole file system
            let glob = format!("{}/**", escape_glob(&dir.to_string_lossy()));
            let what = format!("`{}` on anything under `{}`", tool, dir.display());
            (RuleMatcher::Path { glob }, what)
        }
        // A browser call remembers its origin ("allow browser actions on https://docs.test in
        // this chat"); without a known origin nothing is remembered.
        ToolAccess::Browser(b) => {
            let origin = b.grant_origin()?;
            (
                RuleMatcher::Destination {
                    pattern: crate::destinations::escape_destination(&origin),
                },
                format!("browser actions on {origin}"),
            )
        }
        // A call to exactly one known destination remembers that destination only.
        ToolAccess::Other => match prepared.destinations.found.as_slice() {
            [only] if prepared.destinations.complete => (
                RuleMatcher::Destination {
                    pattern: crate::destinations::escape_destination(only),
                },
                format!("`{tool}` calls to `{only}`"),
            ),
            _ => (RuleMatcher::All, format!("every `{tool}` call")),
        },
    };
    let scope = match destination {
        RuleDestination::Session => "in this chat",
        RuleDestination::Global => "in every chat",
    };
    let draft = RuleDraft {
        tool,
        behavior: Behavior::Allow,
        matcher,
        destination,
        description: Some(format!("Allow {what} {scope}.")),
    };
    // A rule that would store a secret in clear is not offered.
    let text = serde_json::to_string(&draft.matcher).ok()?;
    if crate::redact::redact_text(&text) != text {
        return None;
    }
    Some(draft)
}

fn approval_actions(
    request: &PermissionRequest,
    _ctx: &PermissionContext<'_>,
    prepared: &Prepared,
    remember: bool,
) -> Vec<ApprovalAction> {
    let mut actions = vec![ApprovalAction {
        id: ApprovalActionId::AllowOnce,
        label: "Allow once".to_string(),
        description: "Run this call once; nothing is remembered.".to_string(),
        rule: None,
        accepts_feedback: false,
    }];
    if remember {
        for (id, destination, label) in [
            (
                ApprovalActionId::AllowSession,
                RuleDestination::Session,
                "Allow for this chat",
            ),
            (
                ApprovalActionId::AllowGlobal,
                RuleDestination::Global,
                "Always allow",
            ),
        ] {
            if let Some(rule) = suggest_rule(request, prepared, destination) {
                actions.push(ApprovalAction {
                    id,
                    label: label.to_string(),
                    description: rule.description.clone().unwrap_or_default(),
                    rule: Some(rule),
                    accepts_feedback: false,
                });
            }
        }
    }
    actions.push(ApprovalAction {
        id: ApprovalActionId::Reject,
        label: "Reject".to_string(),
        description: "Do not run it; your feedback, if any, goes to the agent.".to_string(),
        rule: None,
        accepts_feedback: true,
    });
    actions
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn s(list: &[&str]) -> Vec<String> {
        list.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_suggested_prefix_keeps_the_subcommand_of_tools_that_have_one() {
        assert_eq!(
            suggested_prefix(&s(&["git", "status", "-s"])),
            s(&["git", "status", "*"])
        );
        assert_eq!(
            suggested_prefix(&s(&["python3", "-m", "pytest", "-q"])),
            s(&["python3", "-m", "pytest", "*"])
        );
        assert_eq!(suggested_prefix(&s(&["make", "-j4"])), s(&["make", "*"]));
        assert_eq!(
            suggested_prefix(&s(&["git", "-C", "x", "log"])),
            s(&["git", "*"])
        );
        assert_eq!(suggested_prefix(&s(&["python3", "-u", "x.py"])), s(&[]));
    }

    #[test]
    fn a_literal_star_in_a_suggested_prefix_is_escaped() {
        assert_eq!(suggested_prefix(&s(&["npm", "*"])), s(&["npm", "\\*", "*"]));
    }

    #[test]
    fn sed_in_place_and_sort_output_are_not_read_only() {
        let ro = |c: &str| is_read_only(&crate::shell::analyze_command(c));
        assert!(ro("sed -n 1,20p file"));
        assert!(!ro("sed -n -i 1p file"));
        assert!(!ro("sed 1p file"));
        assert!(!ro("sed -n 'w out' file"));
        assert!(ro("sort -u file"));
        assert!(!ro("sort -o out file"));
        assert!(ro("find . -name x"));
        assert!(!ro("find . -delete"));
        assert!(ro("env"));
        assert!(!ro("FOO=1 ls"));
        assert!(ro("LC_ALL=C ls"));
        assert!(!ro("echo hi > f"));
    }
}
