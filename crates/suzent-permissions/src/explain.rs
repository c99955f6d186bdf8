//! The decision simulator: the engine's decision for a call together with every rule that
//! matched (and why), and the shell segments the analyser found. Nothing runs, nothing is stored.

use crate::engine::{
    Evaluation, PermissionContext, PermissionEngine, PermissionRequest, ToolAccess,
};
use crate::engine::{
    dangerous, hidden_code_option, is_protected, risky_assignment, segment_is_read_only,
};
use crate::redact::redact_text;
use crate::rules::{Prepared, applies, cd_bases, compile_glob, prefix_matches, target_candidates};
use crate::shell::CommandSegment;
use serde::Serialize;
use std::path::{Path, PathBuf};
use suzent_core::{
    ApprovalAction, Behavior, DecisionSource, PermissionMode, Risk, Rule, RuleMatcher,
};

/// One rule that matched the call.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchedRule {
    /// The rule.
    pub rule: Rule,
    /// Why it matched, in words (`prefix 'git *' matches segment 1: git status`).
    pub why: String,
    /// True for the rule the decision cites: of the rules with the deciding behavior, the most
    /// specific (see [`specificity`]: exact input, then path glob, then destination, then
    /// command prefix, then all; longer before shorter).
    pub decisive: bool,
}

/// One simple command the shell analyser found.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SegmentView {
    /// The words that run, wrappers and assignments removed.
    pub words: Vec<String>,
    /// The words including stripped wrappers.
    pub full_words: Vec<String>,
    /// Leading `VAR=value` assignments.
    pub assignments: Vec<String>,
    /// Write-redirect targets.
    pub redirects: Vec<String>,
    /// Wrapper programs this command was found inside, outermost first.
    pub wrappers: Vec<String>,
    /// True for the inner command of `xargs`, `find -exec` or `sh -c`.
    pub nested: bool,
    /// What the engine says about this command on its own, in the evaluated mode (the whole
    /// call may still ask because it runs several commands or was not fully understood).
    pub verdict: Behavior,
    /// Why, in words (`deny rule rules.toml:3: prefix 'rm'`, `never run: privilege
    /// escalation`, `a known read-only command`).
    pub verdict_reason: String,
}

/// The simulator's answer.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// The tool.
    pub tool: String,
    /// The mode the call was evaluated in.
    pub mode: PermissionMode,
    /// Allow, ask or deny.
    pub behavior: Behavior,
    /// The stable reason code (a string in the TypeScript bindings).
    #[cfg_attr(feature = "specta", specta(type = String))]
    pub reason_code: suzent_core::ReasonCode,
    /// The sentence shown to the user.
    pub reason: String,
    /// How risky the call is.
    pub risk: Risk,
    /// What decided.
    pub source: DecisionSource,
    /// Every rule that matched, whatever its behavior.
    pub matched_rules: Vec<MatchedRule>,
    /// The commands of a shell call (empty for other tools).
    pub segments: Vec<SegmentView>,
    /// The destinations the call addresses (recipients, `#channels`, chats, `owner/repo`,
    /// agents, hosts), as `destination` rules see them; empty when it addresses none.
    pub destinations: Vec<String>,
    /// False when a recipient-like argument could not be read as a destination: allow rules
    /// of the `destination` kind then never cover the call.
    pub destinations_complete: bool,
    /// For shell calls: whether the analyser understood the whole script.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub understood: Option<bool>,
    /// For shell calls: whether the script runs more than one command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compound: Option<bool>,
    /// The actions an approval prompt would offer.
    pub actions: Vec<ApprovalAction>,
    /// True when `auto` mode would send this call to the reviewer model instead of asking.
    pub reviewer_would_decide: bool,
}

/// Orders matchers by specificity: exact input > path glob > destination > command prefix >
/// all; within a kind, longer (more literal characters or words) is more specific, and for
/// `all`, a rule naming its tool is more specific than one for `*`. Compare the returned
/// pairs (kind rank, length); the largest is the most specific.
pub fn specificity(rule: &Rule) -> (u8, usize) {
    match &rule.matcher {
        RuleMatcher::Exact { input } => (4, input.to_string().len()),
        RuleMatcher::Path { glob } => (3, glob.chars().filter(|c| !matches!(c, '*' | '?')).count()),
        RuleMatcher::Destination { pattern } => (2, pattern.chars().filter(|c| *c != '*').count()),
        RuleMatcher::Prefix { words } => (1, words.iter().filter(|w| w.as_str() != "*").count()),
        RuleMatcher::All => (0, usize::from(rule.tool != "*")),
    }
}

/// Why `rule` matches the prepared request, or None when it does not.
pub(crate) fn why_matches(
    rule: &Rule,
    request: &PermissionRequest,
    ctx: &PermissionContext<'_>,
    prepared: &Prepared,
) -> Option<String> {
    if !applies(rule, request, ctx) {
        return None;
    }
    let scope = match rule.destination {
        suzent_core::RuleDestination::Global => "global",
        suzent_core::RuleDestination::Session => "session",
    };
    let what = match &rule.matcher {
        RuleMatcher::All => Some(if rule.tool == "*" {
            "matches every call of every tool".to_string()
        } else {
            format!("matches every {} call", rule.tool)
        }),
        RuleMatcher::Exact { input } => crate::rules::exact_matches(input, &request.args)
            .then(|| "the arguments equal its exact input".to_string()),
        RuleMatcher::Prefix { words } => prepared.analysis.as_ref().and_then(|a| {
            a.segments.iter().enumerate().find_map(|(i, s)| {
                let hit = if prefix_matches(words, &s.words) {
                    Some(&s.words)
                } else if prefix_matches(words, &s.full_words) {
                    Some(&s.full_words)
                } else {
                    None
                };
                hit.map(|w| {
                    format!(
                        "prefix '{}' matches segment {}: {}",
                        words.join(" "),
                        i + 1,
                        w.join(" ")
                    )
                })
            })
        }),
        RuleMatcher::Path { glob } => compile_glob(glob).ok().and_then(|m| {
            prepared
                .paths
                .iter()
                .map(|p| (p, "path"))
                .chain(prepared.redirects.iter().map(|p| (p, "redirect target")))
                .find(|(p, _)| m.is_match(p))
                .map(|(p, kind)| format!("glob '{glob}' matches {kind} {}", p.display()))
        }),
        RuleMatcher::Destination { pattern } => prepared
            .destinations
            .found
            .iter()
            .find(|d| crate::destinations::destination_matches(pattern, d))
            .map(|d| format!("destination '{pattern}' matches {d}")),
    }?;
    Some(format!("{} {scope} rule: {what}", rule.behavior))
}

impl PermissionEngine {
    /// Evaluates a call and explains the decision: every matching rule with why, the decisive
    /// one, and the parsed shell segments. Pure: nothing runs and nothing is stored.
    pub fn explain(&self, request: &PermissionRequest, ctx: &PermissionContext<'_>) -> Explanation {
        let Evaluation { decision, matched } = self.evaluate(request, ctx);
        let prepared = Prepared::new(request, ctx.paths);
        let decisive_id = if decision.source == DecisionSource::Rule {
            matched
                .iter()
                .filter(|r| r.behavior == decision.behavior)
                .max_by_key(|r| specificity(r))
                .map(|r| r.id.clone())
        } else {
            None
        };
        let matched_rules = matched
            .into_iter()
            .map(|rule| {
                let why = why_matches(&rule, request, ctx, &prepared)
                    .unwrap_or_else(|| format!("{} rule", rule.behavior));
                let decisive = decisive_id.as_deref() == Some(rule.id.as_str());
                let mut rule = rule;
                rule.description = rule.description.as_deref().map(redact_text);
                MatchedRule {
                    rule,
                    why: redact_text(&why),
                    decisive,
                }
            })
            .collect();
        let (segments, understood, compound) = match (&request.access, &prepared.analysis) {
            (ToolAccess::Command { cwd, .. }, Some(a)) => {
                let bases = cd_bases(a, cwd);
                (
                    a.segments
                        .iter()
                        .map(|s| {
                            let (verdict, verdict_reason) =
                                segment_verdict(s, cwd, &bases, request, ctx, &prepared);
                            let red = |v: &[String]| -> Vec<String> {
                                v.iter().map(|w| redact_text(w)).collect()
                            };
                            SegmentView {
                                words: red(&s.words),
                                full_words: red(&s.full_words),
                                assignments: red(&s.assignments),
                                redirects: red(&s.redirects),
                                wrappers: s.wrappers.clone(),
                                nested: s.nested,
                                verdict,
                                verdict_reason: redact_text(&verdict_reason),
                            }
                        })
                        .collect(),
                    Some(a.understood),
                    Some(a.compound),
                )
            }
            _ => (Vec::new(), None, None),
        };
        let reviewer_would_decide = crate::gate::should_review(ctx.mode, &decision);
        Explanation {
            tool: request.tool_name.clone(),
            mode: ctx.mode,
            behavior: decision.behavior,
            reason_code: decision.reason_code,
            reason: decision.reason,
            risk: decision.risk,
            source: decision.source,
            matched_rules,
            segments,
            destinations: prepared.destinations.found.clone(),
            destinations_complete: prepared.destinations.complete,
            understood,
            compound,
            actions: decision.actions,
            reviewer_would_decide,
        }
    }
}

/// The engine's answer for one command segment on its own, with every rule kind that can match
/// it: dangerous commands and Suzent's own state (deny), its write targets outside every root
/// (deny), deny rules (`all` and `exact` of this tool, command prefixes, path globs on its write
/// targets, destinations of the call), then writes into Git internals, ask rules and options or variables that run other
/// code, then allow rules (`all`, `exact`, or a prefix with every write target covered by a path
/// rule), then the mode (`full_access` allows, otherwise only known read-only commands are
/// allowed).
fn segment_verdict(
    segment: &CommandSegment,
    cwd: &Path,
    bases: &[PathBuf],
    request: &PermissionRequest,
    ctx: &PermissionContext<'_>,
    prepared: &Prepared,
) -> (Behavior, String) {
    let alone = crate::shell::ShellAnalysis {
        segments: vec![segment.clone()],
        compound: false,
        understood: true,
    };
    // The same order as the engine: dangerous commands, then Suzent's own state.
    if let Some(why) = dangerous(segment, cwd, ctx.paths) {
        return (Behavior::Deny, format!("never run: {why}"));
    }
    if let Some(hit) = crate::state::names_suzent_state(&alone, bases, ctx.paths) {
        return (
            Behavior::Deny,
            format!(
                "`{}` {} '{}': Suzent's own settings and data",
                hit.word,
                hit.how,
                hit.resolved.display()
            ),
        );
    }
    let targets: Vec<PathBuf> = segment
        .redirects
        .iter()
        .flat_map(|t| target_candidates(t, cwd, bases))
        .collect();
    for target in &targets {
        if let Err(e) = ctx.paths.check(target) {
            return (
                Behavior::Deny,
                format!("writes to {}: {e}", target.display()),
            );
        }
    }
    let resolved: Vec<PathBuf> = targets
        .iter()
        .filter_map(|p| ctx.paths.resolve(p).ok())
        .collect();
    // Why a deny or ask rule matches this segment.
    let why = |rule: &Rule| -> Option<String> {
        match &rule.matcher {
            RuleMatcher::All => Some(every_call(rule)),
            RuleMatcher::Exact { input } => crate::rules::exact_matches(input, &request.args)
                .then(|| "the arguments equal its exact input".to_string()),
            RuleMatcher::Prefix { words } => (prefix_matches(words, &segment.words)
                || prefix_matches(words, &segment.full_words))
            .then(|| format!("prefix '{}'", words.join(" "))),
            RuleMatcher::Path { glob } => compile_glob(glob).ok().and_then(|m| {
                resolved
                    .iter()
                    .find(|p| m.is_match(p))
                    .map(|p| format!("glob '{glob}' matches redirect target {}", p.display()))
            }),
            RuleMatcher::Destination { pattern } => prepared
                .destinations
                .found
                .iter()
                .find(|d| crate::destinations::destination_matches(pattern, d))
                .map(|d| format!("destination '{pattern}' matches {d}")),
        }
    };
    let rule_for = |behavior: Behavior| {
        ctx.rules
            .iter()
            .filter(|r| r.behavior == behavior && applies(r, request, ctx))
            .filter_map(|r| why(r).map(|w| (r, w)))
            .max_by_key(|(r, _)| specificity(r))
            .map(|(r, w)| format!("{behavior} rule {}: {w}", r.id))
    };
    if let Some(why) = rule_for(Behavior::Deny) {
        return (Behavior::Deny, why);
    }
    for operand in crate::operands::write_operands(segment) {
        let outside = match crate::operands::resolve_word(&operand.word, bases) {
            crate::operands::WordPaths::Unknown => Some("its value cannot be known".to_string()),
            crate::operands::WordPaths::Known { paths, .. } => paths
                .iter()
                .find_map(|p| ctx.paths.check(p).err().map(|e| e.to_string())),
        };
        if let Some(why) = outside {
            let behavior = if ctx.mode == PermissionMode::FullAccess {
                Behavior::Deny
            } else {
                Behavior::Ask
            };
            return (behavior, format!("changes '{}': {why}", operand.word));
        }
    }
    if ctx.mode != PermissionMode::FullAccess
        && let Some(p) = resolved.iter().find(|p| is_protected(p, ctx.paths))
    {
        return (
            Behavior::Ask,
            format!("writes to {}, inside Git internals", p.display()),
        );
    }
    if let Some(why) = rule_for(Behavior::Ask) {
        return (Behavior::Ask, why);
    }
    if ctx.mode != PermissionMode::FullAccess {
        if let Some(why) = hidden_code_option(segment) {
            return (Behavior::Ask, format!("uses {why}"));
        }
        if let Some(var) = risky_assignment(segment) {
            return (
                Behavior::Ask,
                format!("sets {var}, which changes what runs"),
            );
        }
    }
    let allow_rules: Vec<&Rule> = ctx
        .rules
        .iter()
        .filter(|r| r.behavior == Behavior::Allow && applies(r, request, ctx))
        .collect();
    let globs: Vec<_> = allow_rules
        .iter()
        .filter_map(|r| match &r.matcher {
            RuleMatcher::Path { glob } => compile_glob(glob).ok(),
            _ => None,
        })
        .collect();
    let targets_covered = resolved.len() == targets.len()
        && resolved.iter().all(|p| globs.iter().any(|g| g.is_match(p)));
    if let Some((rule, why)) = allow_rules
        .iter()
        .filter_map(|r| {
            let why = match &r.matcher {
                RuleMatcher::All => Some(every_call(r)),
                RuleMatcher::Exact { input } => crate::rules::exact_matches(input, &request.args)
                    .then(|| "the arguments equal its exact input".to_string()),
                RuleMatcher::Prefix { words }
                    if targets_covered && prefix_matches(words, &segment.words) =>
                {
                    Some(format!("prefix '{}'", words.join(" ")))
                }
                _ => None,
            };
            why.map(|w| (r, w))
        })
        .max_by_key(|(r, _)| specificity(r))
    {
        return (Behavior::Allow, format!("allow rule {}: {why}", rule.id));
    }
    if ctx.mode == PermissionMode::FullAccess {
        return (Behavior::Allow, "full access mode".to_string());
    }
    if segment_is_read_only(segment) {
        return (Behavior::Allow, "a known read-only command".to_string());
    }
    (
        Behavior::Ask,
        "not known to be read-only: needs approval".to_string(),
    )
}

/// What an `all` rule covers, in words.
fn every_call(rule: &Rule) -> String {
    if rule.tool == "*" {
        "every call of every tool".to_string()
    } else {
        format!("every {} call", rule.tool)
    }
}
