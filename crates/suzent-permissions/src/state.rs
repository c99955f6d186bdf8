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
        workspace_links: None,
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
    /// The names of the symlinks directly in the workspace, read once per command (None: not
    /// read yet; Some(None): too many entries to list, look each name up).
    workspace_links: Option<Option<HashSet<std::ffi::OsString>>>,
}

/// Entries of the workspace listed to find its symlinks; a larger folder is not listed.
const MAX_LISTED: usize = 512;

/// The symlinks directly in `dir`, or None when it cannot be listed or holds too many entries.
fn links_in(dir: &Path) -> Option<HashSet<std::ffi::OsString>> {
    let mut links = HashSet::new();
    for (i, entry) in std::fs::read_dir(dir).ok()?.enumerate() {
        if i >= MAX_LISTED {
            return None;
        }
        let entry = entry.ok()?;
        if entry.file_type().ok()?.is_symlink() {
            links.insert(entry.file_name());
        }
    }
    Some(links)
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
        // Programs named bare (`cargo`, `env`) are found through PATH, not as files here.
        let programs: Vec<&str> = segment
            .full_words
            .iter()
            .take(segment.full_words.len().saturating_sub(segment.words.len()) + 1)
            .map(String::as_str)
            .filter(|w| !w.contains('/'))
            .collect();
        for text in texts {
            if programs.contains(&text.as_str()) {
                continue;
            }
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
            // Root-owned system folders cannot hold a link the agent made, and a number
            // (`-j 4`, `8080`) is not a file name worth a look-up: lexical is enough. (Write
            // operands and redirects are also resolved by the engine's path checks.)
            let numeric = word.chars().all(|c| c.is_ascii_digit() || c == '.');
            if is_system_path(&lexical) || (numeric && !write) {
                if self.policy.suzent_state(&lexical, write).is_some() {
                    return Some(StateHit {
                        word: word.to_string(),
                        resolved: lexical,
                        how: "names",
                    });
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
            // A bare name in the workspace that is not one of its symlinks is itself: no look-up.
            let workspace = self.policy.workspace();
            let bare = !word.contains('/')
                && word != "."
                && word != ".."
                && !word.starts_with('~')
                && !word.contains('$')
                && path.parent() == Some(workspace)
                && path.file_name().is_some();
            if bare {
                let links = self
                    .workspace_links
                    .get_or_insert_with(|| links_in(workspace));
                if let (Some(links), Some(name)) = (links.as_ref(), path.file_name())
                    && !links.contains(name)
                {
                    self.resolved -= 1;
                    if self.policy.suzent_state(&path, write).is_some()
                        || (reach == Reach::Tree && self.policy.holds_suzent_state(&path))
                    {
                        return Some(StateHit {
                            word: word.to_string(),
                            resolved: path,
                            how: "names",
                        });
                    }
                    continue;
                }
            }
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
        if !crate::rules::component_matches(pc, part) {
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

/// Folders only root can change (the agent never runs as root: `sudo` and friends are denied).
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/proc", "/sys", "/dev", "/boot",
];

fn is_system_path(path: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|d| path.starts_with(d))
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
