//! Rule matching and validation.
//!
//! A rule names a tool (or `*`) and a matcher. Deny and ask rules match a request when they
//! match ANY part of it (any command segment at any nesting, any path); allow rules cover a
//! request only when EVERY part is covered by some allow rule (see [`covers_request`]).
//! The parts of a request are its paths, its command segments and redirect targets, and its
//! destinations (recipients, channels, repositories, agents, hosts; see `destinations`).

use crate::destinations::{Destinations, destination_matches, extract};
use crate::engine::{PermissionContext, PermissionRequest, ToolAccess};
use crate::paths::{PathPolicy, expand_home};
use crate::shell::{ShellAnalysis, analyze_command};
use globset::{GlobBuilder, GlobMatcher};
use std::path::{Path, PathBuf};
use suzent_core::{Rule, RuleDestination, RuleDraft, RuleMatcher};

/// A request with its command analysed and its paths resolved, shared by all rule checks.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// For commands: the analysis.
    pub analysis: Option<ShellAnalysis>,
    /// Resolved Read/Write paths (those that resolve).
    pub paths: Vec<PathBuf>,
    /// Resolved write-redirect targets of a command.
    pub redirects: Vec<PathBuf>,
    /// The destinations the arguments address (for `destination` rules).
    pub destinations: Destinations,
    /// Resolved Read paths that are directories (search roots): a deny or ask path rule that
    /// covers everything in one refuses the search.
    pub dirs: Vec<PathBuf>,
}

/// A file name no glob names literally: a rule matching `DIR/<probe>` covers everything in DIR.
pub(crate) const DIRECTORY_PROBE: &str = "\u{1}suzent-probe\u{1}";

impl Prepared {
    pub(crate) fn new(request: &PermissionRequest, policy: &PathPolicy) -> Prepared {
        // Strings that merely look like URLs or addresses count only for tools without paths
        // or commands (their arguments are file names and scripts: `icon@2x.png`).
        let destinations = extract(&request.args, request.access == ToolAccess::Other);
        match &request.access {
            ToolAccess::Read(paths) | ToolAccess::Write(paths) => {
                let resolved: Vec<PathBuf> = paths
                    .iter()
                    .filter_map(|p| policy.resolve(p).ok())
                    .collect();
                let dirs = if matches!(request.access, ToolAccess::Read(_)) {
                    resolved.iter().filter(|p| p.is_dir()).cloned().collect()
                } else {
                    Vec::new()
                };
                Prepared {
                    analysis: None,
                    paths: resolved,
                    redirects: Vec::new(),
                    destinations,
                    dirs,
                }
            }
            ToolAccess::Command { command, cwd } => {
                let analysis = analyze_command(command);
                let redirects = write_targets(&analysis, cwd)
                    .iter()
                    .filter_map(|p| policy.resolve(p).ok())
                    .collect();
                Prepared {
                    analysis: Some(analysis),
                    paths: Vec::new(),
                    redirects,
                    destinations,
                    dirs: Vec::new(),
                }
            }
            ToolAccess::Other => Prepared {
                analysis: None,
                paths: Vec::new(),
                redirects: Vec::new(),
                destinations,
                dirs: Vec::new(),
            },
            // The host of the page (or of the address to open), never the arguments' text.
            ToolAccess::Browser(browser) => Prepared {
                analysis: None,
                paths: Vec::new(),
                redirects: Vec::new(),
                destinations: browser.destinations(),
                dirs: Vec::new(),
            },
        }
    }
}

/// Every path the script's write targets (redirects, `tee` files) may refer to. A relative
/// target is taken against `cwd` and against every directory a `cd`/`pushd` in the script may
/// have moved to (cumulatively, in script order): the analyser does not track which commands a
/// `cd` precedes in every nesting, so all candidates are checked (fail closed).
pub(crate) fn write_targets(analysis: &ShellAnalysis, cwd: &Path) -> Vec<PathBuf> {
    let bases = cd_bases(analysis, cwd);
    let mut out = Vec::new();
    for target in analysis.segments.iter().flat_map(|s| s.redirects.iter()) {
        for p in target_candidates(target, cwd, &bases) {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// `cwd` and every directory a `cd`/`pushd` in the script may have moved to (cumulatively, in
/// script order): the bases a relative write target is taken against.
pub(crate) fn cd_bases(analysis: &ShellAnalysis, cwd: &Path) -> Vec<PathBuf> {
    let mut bases = vec![cwd.to_path_buf()];
    let mut current = cwd.to_path_buf();
    for segment in &analysis.segments {
        if let Some(target) = crate::shell::cd_target(&segment.words) {
            current = command_path(&target, &current);
            if !bases.contains(&current) {
                bases.push(current.clone());
            }
        }
    }
    bases
}

/// The paths one write target may refer to: against every base when it is relative (and not
/// `~` or `$HOME`), otherwise itself.
pub(crate) fn target_candidates(target: &str, cwd: &Path, bases: &[PathBuf]) -> Vec<PathBuf> {
    let first = command_path(target, cwd);
    let relative = !PathBuf::from(target).is_absolute() && first.starts_with(cwd);
    if relative
        && !target.starts_with('~')
        && !target.starts_with("$HOME")
        && !target.starts_with("${HOME}")
    {
        let mut out: Vec<PathBuf> = Vec::new();
        for base in bases {
            let p = command_path(target, base);
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    } else {
        vec![first]
    }
}

/// A path as a command sees it: `~`/`$HOME` expanded, relative to `cwd`.
pub(crate) fn command_path(word: &str, cwd: &Path) -> PathBuf {
    let p = expand_home(word);
    if p.is_absolute() { p } else { cwd.join(p) }
}

/// Checks a rule before it is stored. Errors name the field (`tool: empty`,
/// `matcher.words: empty prefix`, `matcher.glob: ...`, `matcher.pattern: ...`).
pub fn validate_rule(draft: &RuleDraft) -> Result<(), String> {
    let tool = draft.tool.trim();
    if tool.is_empty() {
        return Err("tool: empty".to_string());
    }
    if tool.chars().any(char::is_whitespace) {
        return Err(format!("tool: '{}' contains whitespace", draft.tool));
    }
    match &draft.matcher {
        RuleMatcher::All => Ok(()),
        RuleMatcher::Exact { input } => {
            if input.is_object() {
                Ok(())
            } else {
                Err("matcher.input: not a JSON object".to_string())
            }
        }
        RuleMatcher::Prefix { words } => {
            if words.is_empty() {
                return Err("matcher.words: empty prefix".to_string());
            }
            if let Some(i) = words.iter().position(|w| w.is_empty()) {
                return Err(format!("matcher.words[{i}]: empty word"));
            }
            Ok(())
        }
        RuleMatcher::Path { glob } => {
            if glob.trim().is_empty() {
                return Err("matcher.glob: empty".to_string());
            }
            compile_glob(glob)
                .map(|_| ())
                .map_err(|e| format!("matcher.glob: {e}"))
        }
        RuleMatcher::Destination { pattern } => crate::destinations::validate_pattern(pattern)
            .map_err(|e| format!("matcher.pattern: {e}")),
    }
}

/// Splits the text of a command-prefix rule into words with shell quoting, like the commands
/// it matches: `git commit -m 'a b'` is four words, quotes removed. An unquoted `*` is a
/// wildcard; a `*` inside quotes (or escaped, `\*`) is a literal star and comes back escaped
/// (`\*`), as [`prefix_matches`] expects. Errors name an unterminated quote.
pub fn split_rule_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    let literal = |word: &mut String, c: char| {
        if c == '*' || c == '\\' {
            word.push('\\');
        }
        word.push(c);
    };
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => literal(&mut word, c),
                        None => return Err(format!("unterminated single quote in '{text}'")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(n @ ('"' | '\\' | '$' | '`')) => literal(&mut word, n),
                            Some(n) => {
                                literal(&mut word, '\\');
                                literal(&mut word, n);
                            }
                            None => return Err(format!("unterminated double quote in '{text}'")),
                        },
                        Some(c) => literal(&mut word, c),
                        None => return Err(format!("unterminated double quote in '{text}'")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(n) => literal(&mut word, n),
                    None => literal(&mut word, '\\'),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Warnings about a rule that is valid but may cover more than it seems to: a command-prefix
/// rule with a wildcard before its last word (`git * main`), shown with a command it also
/// covers. Empty when there is nothing to warn about.
pub fn rule_warnings(draft: &RuleDraft) -> Vec<String> {
    let RuleMatcher::Prefix { words } = &draft.matcher else {
        return Vec::new();
    };
    let wild = |w: &str| {
        let mut escaped = false;
        for c in w.chars() {
            match c {
                '\\' if !escaped => escaped = true,
                '*' if !escaped => return true,
                _ => escaped = false,
            }
        }
        false
    };
    let last = words.len().saturating_sub(1);
    let Some(i) = words.iter().take(last).position(|w| wild(w)) else {
        return Vec::new();
    };
    // An example: the wildcard filled with an extra flag and argument.
    let example: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(k, w)| {
            let w = if k == i && w == "*" {
                "--force anything".to_string()
            } else if wild(w) && k <= last {
                w.replacen('*', "-anything-", 1)
            } else {
                w.clone()
            };
            w.replace("\\*", "*").replace('*', "")
        })
        .collect();
    let pattern = words.join(" ");
    let mut warning = format!(
        "the wildcard in '{pattern}' stands before the end, so the rule also covers commands such as `{}`",
        example.join(" ")
    );
    if draft.behavior == suzent_core::Behavior::Allow {
        warning.push_str("; an allow rule like this may allow more than you mean");
    }
    vec![warning]
}

/// Whether `rule` matches any part of `request` (any command segment at any nesting, any path
/// or redirect target), for the chat in `ctx`. This is the sense in which deny and ask rules
/// apply; allow rules also need to cover the whole request.
pub fn rule_matches(rule: &Rule, request: &PermissionRequest, ctx: &PermissionContext<'_>) -> bool {
    let prepared = Prepared::new(request, ctx.paths);
    matches_any(rule, request, ctx, &prepared)
}

/// The built-in tools that read files. A deny or ask path rule written for any of them is a
/// rule for reading: it applies to every call that reads (`ToolAccess::Read`), whatever the
/// tool (searches, document conversion, canvas images, MCP-free future readers).
pub const READING_TOOLS: &[&str] = &["read_file", "glob_search", "grep_search"];

/// Whether `tool` is one of [`READING_TOOLS`].
pub fn is_reading_tool(tool: &str) -> bool {
    READING_TOOLS.contains(&tool)
}

/// Whether a rule is in force for this chat and tool.
pub(crate) fn applies(
    rule: &Rule,
    request: &PermissionRequest,
    ctx: &PermissionContext<'_>,
) -> bool {
    let scope_ok = match rule.destination {
        RuleDestination::Global => true,
        RuleDestination::Session => rule.chat_id.as_deref().is_none_or(|c| c == ctx.chat_id),
    };
    let reading_rule = rule.behavior != suzent_core::Behavior::Allow
        && matches!(rule.matcher, RuleMatcher::Path { .. })
        && is_reading_tool(&rule.tool)
        && matches!(request.access, ToolAccess::Read(_));
    scope_ok && (rule.tool == "*" || rule.tool == request.tool_name || reading_rule)
}

/// Whether an exact-input rule matches the arguments: every field of `input` equals the same
/// field of `args` (fields the rule does not name may differ: a command's `description` or
/// `timeout`); for inputs that are not objects, the whole value.
pub fn exact_matches(input: &serde_json::Value, args: &serde_json::Value) -> bool {
    match (input.as_object(), args.as_object()) {
        (Some(want), Some(have)) => {
            !want.is_empty() && want.iter().all(|(k, v)| have.get(k) == Some(v))
        }
        _ => input == args,
    }
}

/// The words of a command with its program named by its file name (`/usr/bin/rm -r x` ->
/// `rm -r x`), when it was invoked by a path; None otherwise.
fn by_program_name(words: &[String]) -> Option<Vec<String>> {
    let first = words.first()?;
    if !first.contains('/') {
        return None;
    }
    let name = first.rsplit('/').next().filter(|n| !n.is_empty())?;
    let mut out = Vec::with_capacity(words.len());
    out.push(name.to_string());
    out.extend(words[1..].iter().cloned());
    Some(out)
}

/// Whether deny/ask prefix `words` match a segment: as written, with its wrappers, or with the
/// program invoked by a path named by its file name.
fn segment_matches_prefix(
    words: &[String],
    s: &crate::shell::CommandSegment,
    by_name: bool,
) -> bool {
    prefix_matches(words, &s.words)
        || prefix_matches(words, &s.full_words)
        || (by_name
            && (by_program_name(&s.words).is_some_and(|w| prefix_matches(words, &w))
                || by_program_name(&s.full_words).is_some_and(|w| prefix_matches(words, &w))))
}

pub(crate) fn matches_any(
    rule: &Rule,
    request: &PermissionRequest,
    ctx: &PermissionContext<'_>,
    prepared: &Prepared,
) -> bool {
    if !applies(rule, request, ctx) {
        return false;
    }
    // Deny and ask rules match a command however it is invoked; allow rules bare names only.
    let by_name = rule.behavior != suzent_core::Behavior::Allow;
    match &rule.matcher {
        RuleMatcher::All => true,
        RuleMatcher::Exact { input } => exact_matches(input, &request.args),
        RuleMatcher::Prefix { words } => prepared.analysis.as_ref().is_some_and(|a| {
            a.segments
                .iter()
                .any(|s| segment_matches_prefix(words, s, by_name))
        }),
        RuleMatcher::Path { glob } => match compile_glob(glob) {
            Ok(m) => {
                prepared
                .paths
                .iter()
                .chain(prepared.redirects.iter())
                .any(|p| m.is_match(p))
                // A search rooted in a folder the rule covers as a whole.
                || (by_name
                    && prepared
                        .dirs
                        .iter()
                        .any(|d| m.is_match(d.join(DIRECTORY_PROBE))))
            }
            Err(_) => false,
        },
        RuleMatcher::Destination { pattern } => prepared
            .destinations
            .found
            .iter()
            .any(|d| destination_matches(pattern, d)),
    }
}

/// Whether the allow rules among `rules` cover every part of the request: every path, every
/// command segment (at every nesting), every write-redirect target and every destination.
/// A request whose destinations could not all be read is never covered by part-wise rules
/// (only by `all` or `exact`); a tool without paths or commands is covered only through its
/// destinations, and only when there is at least one.
pub(crate) fn covers_request(
    allow_rules: &[&Rule],
    request: &PermissionRequest,
    ctx: &PermissionContext<'_>,
    prepared: &Prepared,
) -> bool {
    let rules: Vec<&Rule> = allow_rules
        .iter()
        .copied()
        .filter(|r| applies(r, request, ctx))
        .collect();
    if rules.is_empty() {
        return false;
    }
    // A script of several commands (or a nested one) is covered as a whole only by an exact
    // rule; otherwise each of its commands must be (see the engine's per-segment check), so an
    // `all` rule never lets a nested `sh -c` through unseen.
    let compound = prepared.analysis.as_ref().is_some_and(|a| a.compound);
    let whole = |r: &&Rule| match &r.matcher {
        RuleMatcher::All => !compound,
        RuleMatcher::Exact { input } => exact_matches(input, &request.args),
        _ => false,
    };
    if rules.iter().any(whole) {
        return true;
    }
    let globs: Vec<GlobMatcher> = rules
        .iter()
        .filter_map(|r| match &r.matcher {
            RuleMatcher::Path { glob } => compile_glob(glob).ok(),
            _ => None,
        })
        .collect();
    let path_covered = |p: &PathBuf| globs.iter().any(|g| g.is_match(p));
    let patterns: Vec<&str> = rules
        .iter()
        .filter_map(|r| match &r.matcher {
            RuleMatcher::Destination { pattern } => Some(pattern.as_str()),
            _ => None,
        })
        .collect();
    let destinations = &prepared.destinations;
    let destinations_covered = destinations.complete
        && destinations
            .found
            .iter()
            .all(|d| patterns.iter().any(|p| destination_matches(p, d)));
    if !destinations_covered {
        return false;
    }
    match &request.access {
        ToolAccess::Read(paths) | ToolAccess::Write(paths) => {
            !paths.is_empty()
                && prepared.paths.len() == paths.len()
                && prepared.paths.iter().all(path_covered)
        }
        ToolAccess::Command { .. } => {
            let Some(analysis) = &prepared.analysis else {
                return false;
            };
            let redirect_count = write_targets(analysis, &cwd_of(request)).len();
            !analysis.segments.is_empty()
                && analysis.segments.iter().all(|s| {
                    rules.iter().any(|r| match &r.matcher {
                        RuleMatcher::Prefix { words } => prefix_matches(words, &s.words),
                        _ => false,
                    })
                })
                && prepared.redirects.len() == redirect_count
                && prepared.redirects.iter().all(path_covered)
        }
        ToolAccess::Other | ToolAccess::Browser(_) => destinations.determined(),
    }
}

fn cwd_of(request: &PermissionRequest) -> PathBuf {
    match &request.access {
        ToolAccess::Command { cwd, .. } => cwd.clone(),
        _ => PathBuf::new(),
    }
}

/// Matches rule words against the start of a command's words, on whole tokens. A pattern word
/// `*` matches any number of words (also none); `*` inside a word matches any characters
/// within that word; `\*` is a literal star.
pub fn prefix_matches(pattern: &[String], words: &[String]) -> bool {
    match pattern.split_first() {
        None => true,
        Some((first, rest)) if first == "*" => {
            (0..=words.len()).any(|k| prefix_matches(rest, &words[k..]))
        }
        Some((first, rest)) => match words.split_first() {
            Some((w, wrest)) => token_matches(first, w) && prefix_matches(rest, wrest),
            None => false,
        },
    }
}

fn token_matches(pattern: &str, word: &str) -> bool {
    // Split the pattern on unescaped `*` into literal pieces.
    let mut pieces: Vec<String> = vec![String::new()];
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n) => pieces.last_mut().map_or((), |p| p.push(n)),
                None => pieces.last_mut().map_or((), |p| p.push('\\')),
            },
            '*' => pieces.push(String::new()),
            _ => pieces.last_mut().map_or((), |p| p.push(c)),
        }
    }
    if pieces.len() == 1 {
        return pieces[0] == word;
    }
    let (first, last) = (&pieces[0], &pieces[pieces.len() - 1]);
    if !word.starts_with(first.as_str())
        || word.len() < first.len() + last.len()
        || !word.ends_with(last.as_str())
    {
        return false;
    }
    let mut rest = &word[first.len()..word.len() - last.len()];
    for middle in &pieces[1..pieces.len() - 1] {
        match rest.find(middle.as_str()) {
            Some(i) => rest = &rest[i + middle.len()..],
            None => return false,
        }
    }
    true
}

/// Compiles a gitignore-style glob: `~` is the home directory, `*` stays within a path
/// component, `**` crosses components, and a glob without `/` matches a name at any depth.
/// Compiled globs are kept per thread (a rule's glob is compiled once, not on every call).
pub(crate) fn compile_glob(glob: &str) -> Result<GlobMatcher, String> {
    thread_local! {
        static CACHE: std::cell::RefCell<std::collections::HashMap<String, Result<GlobMatcher, String>>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    /// Globs kept per thread before the cache starts over.
    const MAX_CACHED: usize = 4096;
    if let Some(hit) = CACHE.with(|c| c.try_borrow().ok().and_then(|m| m.get(glob).cloned())) {
        return hit;
    }
    let compiled = compile_glob_uncached(glob);
    CACHE.with(|c| {
        if let Ok(mut m) = c.try_borrow_mut() {
            if m.len() >= MAX_CACHED {
                m.clear();
            }
            m.insert(glob.to_string(), compiled.clone());
        }
    });
    compiled
}

fn compile_glob_uncached(glob: &str) -> Result<GlobMatcher, String> {
    let expanded = if glob == "~" || glob.starts_with("~/") {
        expand_home(glob).to_string_lossy().into_owned()
    } else {
        glob.to_string()
    };
    let pattern = if expanded.contains('/') {
        expanded
    } else {
        format!("**/{expanded}")
    };
    GlobBuilder::new(&pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| e.to_string())
}

/// Whether one path component matches one glob component (`*`, `?`, `[..]` within it),
/// compiled once per thread like [`compile_glob`].
pub(crate) fn component_matches(pattern: &str, component: &str) -> bool {
    // A literal component needs no glob.
    if !pattern.contains(['*', '?', '[', '{', '\\']) {
        return pattern == component;
    }
    match compile_glob(&format!("/{pattern}")) {
        Ok(m) => m.is_match(format!("/{component}")),
        Err(_) => true,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use suzent_core::Behavior;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_prefix_matches_whole_tokens_only() {
        assert!(prefix_matches(&words("git"), &words("git status")));
        assert!(!prefix_matches(&words("git"), &words("gitk --all")));
        assert!(prefix_matches(
            &words("git status"),
            &words("git status -s")
        ));
        assert!(!prefix_matches(&words("git status"), &words("git")));
    }

    #[test]
    fn a_star_word_matches_any_number_of_words() {
        let p = words("gh api * -X DELETE *");
        assert!(prefix_matches(
            &p,
            &words("gh api -X DELETE repos/o/r/x/{}")
        ));
        assert!(prefix_matches(&p, &words("gh api repos/x -X DELETE")));
        assert!(!prefix_matches(&p, &words("gh api repos/o/r/x -q .id")));
    }

    #[test]
    fn an_escaped_star_is_literal() {
        assert!(prefix_matches(
            &[r"ls".into(), r"\*".into()],
            &words("ls *")
        ));
        assert!(!prefix_matches(
            &[r"ls".into(), r"\*".into()],
            &words("ls foo")
        ));
        assert!(prefix_matches(
            &["ls".into(), "*.rs".into()],
            &words("ls main.rs")
        ));
    }

    #[test]
    fn validation_names_the_field() {
        let draft = |tool: &str, matcher| RuleDraft {
            tool: tool.into(),
            behavior: Behavior::Allow,
            matcher,
            destination: RuleDestination::Global,
            description: None,
        };
        assert_eq!(
            validate_rule(&draft("", RuleMatcher::All)),
            Err("tool: empty".to_string())
        );
        assert_eq!(
            validate_rule(&draft("run_command", RuleMatcher::Prefix { words: vec![] })),
            Err("matcher.words: empty prefix".to_string())
        );
        assert!(
            validate_rule(&draft(
                "read_file",
                RuleMatcher::Path { glob: "a/[".into() }
            ))
            .unwrap_err()
            .starts_with("matcher.glob:")
        );
        assert_eq!(
            validate_rule(&draft(
                "x",
                RuleMatcher::Exact {
                    input: serde_json::json!(1)
                }
            )),
            Err("matcher.input: not a JSON object".to_string())
        );
        assert_eq!(
            validate_rule(&draft(
                "*",
                RuleMatcher::Path {
                    glob: "~/x/**".into()
                }
            )),
            Ok(())
        );
    }

    #[test]
    fn a_glob_without_slash_matches_at_any_depth() {
        let m = compile_glob(".secrets*").unwrap();
        assert!(m.is_match("/home/u/.secrets"));
        let m = compile_glob("/w/*.rs").unwrap();
        assert!(!m.is_match("/w/a/b.rs"));
        assert!(
            compile_glob("**/.secrets*")
                .unwrap()
                .is_match("/home/u/.secrets")
        );
    }
}
