//! Suzent's own state in shell commands: whether a script names the config or data directory.
//!
//! Every word of every command (at every nesting), every assignment, redirect target and
//! here-document is split into path-like tokens (on quotes, `=`, `:`, `,`, `;`, brackets and
//! operators, so `--file=PATH`, `of=PATH`, `open('PATH')` and `A:B` lists are seen), each taken
//! like a redirect target: `~`, `$HOME` and other known variables expanded, relative tokens
//! against the working directory and every directory an earlier `cd` may have moved to, symlinks
//! followed. A token inside a protected directory is a hit. Writes (redirects and the operands
//! of [`crate::operands`]) also hit when they reach into a folder that holds one (`rm -r ~`),
//! and never pass the readable exceptions (skills). The code of an interpreter or database
//! client (`python3 -c`, `node -e`, `sqlite3`, a here-document) also hits when it contains the
//! last two components of a protected directory (`.config/suzent`), which catches paths joined
//! from pieces (`os.environ['HOME'] + '/.config/suzent'`). The `suzent` program itself (its CLI
//! changes rules, modes and MCP trust) is a hit wherever it runs.

use crate::operands::{Reach, WordPaths, absolute_word, resolve_word, write_operands};
use crate::paths::PathPolicy;
use crate::shell::{CommandSegment, ShellAnalysis};
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// Tokens resolved through the file system per command; beyond this the command is too long
/// to check and counts as naming Suzent's state (fail closed).
const MAX_RESOLVED_TOKENS: usize = 2048;

/// Database clients: their arguments are queries that change the database they open.
const DATABASE_CLIENTS: &[&str] = &[
    "sqlite3",
    "sqlite",
    "duckdb",
    "litecli",
    "sqlite-utils",
    "psql",
    "mysql",
    "mariadb",
];

/// Programs that are Suzent itself (their CLI changes rules, modes, MCP trust, settings).
const SUZENT_PROGRAMS: &[&str] = &["suzent", "suzent-cli", "suzent-desktop", "Suzent"];

/// What named Suzent's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StateHit {
    /// The word or token as written.
    pub word: String,
    /// What it resolved to (or the protected directory it names).
    pub resolved: PathBuf,
    /// Why it counts (`names`, `writes into a folder holding`, `runs Suzent's own CLI`).
    pub how: &'static str,
}

/// The first place `analysis` names Suzent's own state, if any. `bases[0]` is the working
/// directory.
pub(crate) fn names_suzent_state(
    analysis: &ShellAnalysis,
    bases: &[PathBuf],
    policy: &PathPolicy,
) -> Option<StateHit> {
    if policy.protected().is_empty() {
        return None;
    }
    let tails = protected_tails(policy);
    let mut checker = Checker {
        policy,
        bases,
        seen: HashSet::new(),
        resolved: 0,
    };
    for segment in &analysis.segments {
        if let Some(hit) = checker.segment(segment, &tails) {
            return Some(hit);
        }
    }
    None
}

struct Checker<'a> {
    policy: &'a PathPolicy,
    bases: &'a [PathBuf],
    /// (token, write) pairs already checked.
    seen: HashSet<(String, bool)>,
    resolved: usize,
}

fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

impl Checker<'_> {
    fn segment(&mut self, segment: &CommandSegment, tails: &[String]) -> Option<StateHit> {
        for w in segment
            .full_words
            .iter()
            .take(1)
            .chain(segment.words.iter().take(1))
        {
            if SUZENT_PROGRAMS.contains(&program_name(w)) {
                return Some(StateHit {
                    word: w.clone(),
                    resolved: self.policy.protected()[0].clone(),
                    how: "runs Suzent's own command line, which changes its settings",
                });
            }
        }
        let prog = segment.words.first().map(|w| program_name(w)).unwrap_or("");
        // Inline code and database queries may open any file for writing.
        let code =
            DATABASE_CLIENTS.contains(&prog) || crate::engine::runs_inline_code(&segment.words);
        // Writes: redirects and the table's operands.
        for target in &segment.redirects {
            if let Some(hit) = self.word(target, true, Reach::Itself) {
                return Some(hit);
            }
        }
        for operand in write_operands(segment) {
            if let Some(hit) = self.word(&operand.word, true, operand.reach) {
                return Some(hit);
            }
        }
        // Everything named.
        let texts = segment
            .full_words
            .iter()
            .chain(segment.assignments.iter())
            .chain(segment.input.iter());
        for text in texts {
            if code && let Some(tail) = tails.iter().find(|t| text.contains(t.as_str())) {
                return Some(StateHit {
                    word: text.clone(),
                    resolved: PathBuf::from(tail),
                    how: "names in code",
                });
            }
            if let Some(hit) = self.word(text, code, Reach::Itself) {
                return Some(hit);
            }
            for token in tokens(text) {
                if token.len() == text.len() {
                    continue;
                }
                if let Some(hit) = self.word(token, code, Reach::Itself) {
                    return Some(hit);
                }
            }
        }
        for text in &segment.input {
            if let Some(tail) = tails.iter().find(|t| text.contains(t.as_str())) {
                return Some(StateHit {
                    word: text.clone(),
                    resolved: PathBuf::from(tail),
                    how: "names in a here-document",
                });
            }
        }
        None
    }

    /// Checks one word or token as a path. `write`: readable exceptions do not apply; with
    /// `Reach::Tree`, a folder holding a protected directory is a hit too.
    fn word(&mut self, word: &str, write: bool, reach: Reach) -> Option<StateHit> {
        let word = word.trim();
        if word.is_empty() || word.starts_with('-') && !word.contains('=') || word.contains("://") {
            return None;
        }
        if !self
            .seen
            .insert((word.to_string(), write || reach == Reach::Tree))
        {
            return None;
        }
        let WordPaths::Known { paths, glob } = resolve_word(word, self.bases) else {
            return None;
        };
        for path in paths {
            // Lexically first: a glob's literal directory, or the path itself.
            let lexical = lexical(&path);
            if glob {
                if let Some(hit) = self.glob(word, &lexical, write) {
                    return Some(hit);
                }
                continue;
            }
            self.resolved += 1;
            if self.resolved > MAX_RESOLVED_TOKENS {
                return Some(StateHit {
                    word: word.to_string(),
                    resolved: lexical,
                    how: "is in a command too long to check for",
                });
            }
            let base = self
                .bases
                .first()
                .map(PathBuf::as_path)
                .unwrap_or(Path::new("/"));
            let Ok(resolved) = self.policy.resolve_fast(base, &path) else {
                continue;
            };
            for candidate in [&lexical, &resolved] {
                if self.policy.suzent_state(candidate, write).is_some() {
                    return Some(StateHit {
                        word: word.to_string(),
                        resolved: candidate.clone(),
                        how: "names",
                    });
                }
                if reach == Reach::Tree && self.policy.holds_suzent_state(candidate) {
                    return Some(StateHit {
                        word: word.to_string(),
                        resolved: candidate.clone(),
                        how: "changes a folder that holds",
                    });
                }
            }
        }
        None
    }

    /// A glob word: a hit when it may match a protected directory or a path inside one.
    fn glob(&self, word: &str, literal_dir: &Path, write: bool) -> Option<StateHit> {
        let ci = self.policy.case_insensitive();
        for base in self.bases {
            let Some(full) = absolute_word(word, base) else {
                continue;
            };
            let pattern: Vec<&str> = full
                .split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .collect();
            for p in self.policy.protected() {
                if !write && self.policy.suzent_state(p, false).is_none() {
                    continue;
                }
                if crate::paths::contains(p, literal_dir, ci) {
                    return Some(StateHit {
                        word: word.to_string(),
                        resolved: literal_dir.to_path_buf(),
                        how: "names",
                    });
                }
                let parts: Vec<String> = p
                    .components()
                    .filter_map(|c| match c {
                        Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                        _ => None,
                    })
                    .collect();
                if glob_may_reach(&pattern, &parts, write) {
                    return Some(StateHit {
                        word: word.to_string(),
                        resolved: p.clone(),
                        how: "may match",
                    });
                }
            }
        }
        None
    }
}

/// Whether a glob (split into components) may match the protected directory `parts` or a path
/// inside it; with `ancestors`, also a folder holding it.
fn glob_may_reach(pattern: &[&str], parts: &[String], ancestors: bool) -> bool {
    for (i, pc) in pattern.iter().enumerate() {
        if *pc == "**" {
            return true;
        }
        let Some(part) = parts.get(i) else {
            // The pattern goes deeper than the protected directory: inside it.
            return true;
        };
        if *pc == ".." {
            return true; // cannot follow lexically: fail closed
        }
        let matches = globset::GlobBuilder::new(pc)
            .literal_separator(true)
            .build()
            .map(|g| g.compile_matcher().is_match(part))
            .unwrap_or(true);
        if !matches {
            return false;
        }
    }
    // The pattern ends at the protected directory (a hit) or above it (a folder holding it).
    pattern.len() == parts.len() || ancestors
}

/// Path-like tokens of a word or of code: split on quotes, whitespace, `=`, `:`, `,`, `;`,
/// brackets and shell/expression operators.
pub(crate) fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '\'' | '"'
                    | '`'
                    | '('
                    | ')'
                    | '['
                    | ']'
                    | ','
                    | ';'
                    | '='
                    | ':'
                    | '<'
                    | '>'
                    | '|'
                    | '&'
                    | '+'
                    | '%'
            )
    })
    .filter(|t| !t.is_empty())
}

/// `..` and `.` applied without reading the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The last two components of each protected directory (`.config/suzent`).
fn protected_tails(policy: &PathPolicy) -> Vec<String> {
    policy
        .protected()
        .iter()
        .filter_map(|p| {
            let parts: Vec<String> = p
                .components()
                .filter_map(|c| match c {
                    Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect();
            match parts.as_slice() {
                [.., a, b] => Some(format!("{a}/{b}")),
                [a] => Some(format!("/{a}")),
                [] => None,
            }
        })
        .collect()
}
