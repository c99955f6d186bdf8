//! Path policy: which paths a chat may touch.
//!
//! Paths are resolved by following symlinks component by component (including the last
//! component and dangling links, which resolve to their target), then `..` is applied to the
//! already-resolved prefix. Containment is compared component-wise, never as a string prefix.
//!
//! Suzent's own state (the config and data directories: rules, `rules.toml`, `config.toml`,
//! `mcp.json`, the database and its WAL files, the audit log) is protected with
//! [`PathPolicy::protect`]: no path inside it passes [`PathPolicy::check`], whatever the roots
//! say, except the chat's own roots nested inside it (`/shared`, `/persistence`). Folders
//! given to [`PathPolicy::allow_reading`] (skills) stay readable through
//! [`PathPolicy::check_read`].

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Symlinks followed for one path before giving up.
const MAX_SYMLINKS: usize = 40;

/// A path the policy refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PathError {
    /// The resolved path is outside every allowed root.
    #[error("path '{requested}' resolves to '{resolved}', outside the workspace")]
    OutsideRoots {
        /// As given.
        requested: String,
        /// After resolving `..` and symlinks.
        resolved: PathBuf,
    },
    /// The resolved path is inside Suzent's own config or data directory.
    #[error(
        "path '{requested}' resolves to '{resolved}', inside Suzent's own settings and data \
         ('{protected}'), which the agent may not touch"
    )]
    SuzentState {
        /// As given.
        requested: String,
        /// After resolving `..` and symlinks.
        resolved: PathBuf,
        /// The protected directory it is in.
        protected: PathBuf,
    },
    /// The path could not be resolved (too many symlinks, invalid).
    #[error("cannot resolve path '{requested}': {message}")]
    Unresolvable {
        /// As given.
        requested: String,
        /// Why.
        message: String,
    },
}

/// The roots a chat may touch: the workspace root plus extra roots (`/persistence`, `/shared`
/// mounts), each canonicalized once.
#[derive(Debug, Clone)]
pub struct PathPolicy {
    workspace: PathBuf,
    roots: Vec<PathBuf>,
    /// The workspace's volume ignores case (macOS and Windows defaults): containment is then
    /// compared case-folded.
    case_insensitive: bool,
    /// Suzent's config and data directories, resolved.
    protected: Vec<PathBuf>,
    /// Folders inside `protected` that may be read (skills), resolved.
    readable: Vec<PathBuf>,
    /// Path rules that deny or ask for reading (see [`PathPolicy::with_read_rules`]).
    read_rules: Vec<ReadRule>,
}

/// A path rule that refuses reading, compiled (see [`PathPolicy::with_read_rules`]).
#[derive(Debug, Clone)]
struct ReadRule {
    glob: globset::GlobMatcher,
    summary: String,
}

/// Why a reading tool must leave a path out (see [`PathPolicy::read_refusal`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadRefusal {
    /// Inside Suzent's own settings and data.
    SuzentState,
    /// A deny or ask rule for reading covers it; the rule in words.
    Rule(String),
}

impl std::fmt::Display for ReadRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadRefusal::SuzentState => f.write_str("Suzent's own settings and data"),
            ReadRefusal::Rule(r) => write!(f, "the rule {r}"),
        }
    }
}

impl PathPolicy {
    /// A policy for `workspace` (which must exist) and `extra_roots` (resolved the same way as
    /// any path; they need not exist yet).
    pub fn new(workspace: &Path, extra_roots: &[PathBuf]) -> std::io::Result<PathPolicy> {
        let workspace = std::fs::canonicalize(workspace)?;
        let mut roots = vec![workspace.clone()];
        for root in extra_roots {
            let resolved = match std::fs::canonicalize(root) {
                Ok(p) => p,
                Err(_) => resolve_from(&workspace, root)
                    .map_err(|e| std::io::Error::other(e.to_string()))?,
            };
            if !roots.contains(&resolved) {
                roots.push(resolved);
            }
        }
        let case_insensitive = probe_case_insensitive(&workspace);
        Ok(PathPolicy {
            workspace,
            roots,
            case_insensitive,
            protected: Vec::new(),
            readable: Vec::new(),
            read_rules: Vec::new(),
        })
    }

    /// Protects Suzent's own state: `dirs` (the config and the data directory, resolved like
    /// any path; they need not exist) are off limits to every tool in every mode. Roots nested
    /// inside one of them (the chat's `/shared` and `/persistence`) stay allowed; a workspace
    /// that holds them (a portable install) does not make them allowed.
    pub fn protect(mut self, dirs: &[PathBuf]) -> PathPolicy {
        for dir in dirs {
            if let Ok(resolved) = self.resolve(dir)
                && !self.protected.contains(&resolved)
            {
                self.protected.push(resolved);
            }
        }
        self
    }

    /// Folders inside the protected directories that may be read but not changed (skill
    /// folders, whose scripts the agent runs).
    pub fn allow_reading(mut self, dirs: &[PathBuf]) -> PathPolicy {
        for dir in dirs {
            if let Ok(resolved) = self.resolve(dir)
                && !self.readable.contains(&resolved)
            {
                self.readable.push(resolved);
            }
        }
        self
    }

    /// Makes the deny and ask path rules for reading (see [`crate::is_reading_tool`]) known to
    /// the tools, so a search rooted above a refused folder leaves it out
    /// ([`PathPolicy::read_refusal`]). Rules of other tools, other chats, or other matchers are
    /// ignored here (the engine applies them).
    pub fn with_read_rules(mut self, rules: &[suzent_core::Rule], chat_id: &str) -> PathPolicy {
        use suzent_core::{Behavior, RuleDestination, RuleMatcher};
        self.read_rules = rules
            .iter()
            .filter(|r| r.behavior != Behavior::Allow)
            .filter(|r| r.tool == "*" || crate::rules::is_reading_tool(&r.tool))
            .filter(|r| match r.destination {
                RuleDestination::Global => true,
                RuleDestination::Session => r.chat_id.as_deref().is_none_or(|c| c == chat_id),
            })
            .filter_map(|r| match &r.matcher {
                RuleMatcher::Path { glob } => {
                    crate::rules::compile_glob(glob).ok().map(|m| ReadRule {
                        glob: m,
                        summary: format!("{} {}({glob})", r.behavior, r.tool),
                    })
                }
                RuleMatcher::All => None,
                _ => None,
            })
            .collect();
        self
    }

    /// The protected directories (Suzent's own state), resolved.
    pub fn protected(&self) -> &[PathBuf] {
        &self.protected
    }

    /// The protected directory an already-resolved path is in, for reading (`write == false`:
    /// folders given to [`PathPolicy::allow_reading`] are not protected) or for writing.
    pub fn suzent_state(&self, resolved: &Path, write: bool) -> Option<&Path> {
        if self.protected.is_empty() {
            return None;
        }
        let ci = self.case_insensitive;
        let p = self.protected.iter().find(|p| contains(p, resolved, ci))?;
        // A root of this chat nested inside the protected directory stays allowed.
        let nested_root = self
            .roots
            .iter()
            .any(|r| r != p && contains(p, r, ci) && contains(r, resolved, ci));
        if nested_root {
            return None;
        }
        if !write && self.readable.iter().any(|r| contains(r, resolved, ci)) {
            return None;
        }
        Some(p)
    }

    /// Whether an already-resolved path is a proper ancestor of a protected directory (deleting,
    /// moving or extracting into it reaches Suzent's own state).
    pub fn holds_suzent_state(&self, resolved: &Path) -> bool {
        self.protected
            .iter()
            .any(|p| p != resolved && contains(resolved, p, self.case_insensitive))
    }

    /// Why a reading tool must leave this already-resolved path out of what it returns (a
    /// search walking a tree skips it and says so), if it must.
    pub fn read_refusal(&self, resolved: &Path) -> Option<ReadRefusal> {
        if self.suzent_state(resolved, false).is_some() {
            return Some(ReadRefusal::SuzentState);
        }
        // Searches ask this of every entry they walk: nothing is built when no read rule exists.
        if self.read_rules.is_empty() {
            return None;
        }
        // A folder the rule covers as a whole (`secret/**` covers `secret`) is refused too; the
        // probe path is built only when a rule does not match the path itself.
        let mut probe: Option<PathBuf> = None;
        self.read_rules
            .iter()
            .find(|r| {
                r.glob.is_match(resolved)
                    || r.glob.is_match(
                        probe.get_or_insert_with(|| resolved.join(crate::rules::DIRECTORY_PROBE)),
                    )
            })
            .map(|r| ReadRefusal::Rule(r.summary.clone()))
    }

    /// Whether containment is compared case-folded (the workspace's volume ignores case).
    pub fn case_insensitive(&self) -> bool {
        self.case_insensitive
    }

    /// The canonical workspace root.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Every allowed root, the workspace first.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The absolute path `path` refers to, with symlinks followed at every component and `..`
    /// applied after that. Relative paths are taken against the workspace; a leading `~` is the
    /// home directory.
    pub fn resolve(&self, path: &Path) -> Result<PathBuf, PathError> {
        resolve_from(&self.workspace, path)
    }

    /// [`PathPolicy::resolve`] of `path` taken against `base` when relative.
    pub fn resolve_in(&self, base: &Path, path: &Path) -> Result<PathBuf, PathError> {
        resolve_from(base, path)
    }

    /// Resolves `path` and requires it to be inside some root and outside Suzent's own state
    /// (for changing it: see [`PathPolicy::check_read`] for reading).
    pub fn check(&self, path: &Path) -> Result<PathBuf, PathError> {
        self.check_for(path, true)
    }

    /// Like [`PathPolicy::check`], for reading: folders given to
    /// [`PathPolicy::allow_reading`] pass.
    pub fn check_read(&self, path: &Path) -> Result<PathBuf, PathError> {
        self.check_for(path, false)
    }

    fn check_for(&self, path: &Path, write: bool) -> Result<PathBuf, PathError> {
        let resolved = self.resolve(path)?;
        if let Some(protected) = self.suzent_state(&resolved, write) {
            return Err(PathError::SuzentState {
                requested: path.display().to_string(),
                protected: protected.to_path_buf(),
                resolved,
            });
        }
        #[cfg(windows)]
        {
            let roots: Vec<crate::paths_windows::WinPath> = self
                .roots
                .iter()
                .map(|r| crate::paths_windows::parse_windows_path(&r.to_string_lossy()))
                .collect();
            if let Err(message) =
                crate::paths_windows::check_windows_path(&roots, &resolved.to_string_lossy())
            {
                return Err(PathError::OutsideRoots {
                    requested: format!("{} ({message})", path.display()),
                    resolved,
                });
            }
        }
        if self
            .roots
            .iter()
            .any(|root| contains(root, &resolved, self.case_insensitive))
        {
            Ok(resolved)
        } else {
            Err(PathError::OutsideRoots {
                requested: path.display().to_string(),
                resolved,
            })
        }
    }

    /// Whether an already-resolved path is the workspace or inside it.
    pub fn is_inside_workspace(&self, resolved: &Path) -> bool {
        contains(&self.workspace, resolved, self.case_insensitive)
    }
}

/// Component-wise containment, optionally case-folded.
pub fn contains(root: &Path, path: &Path, case_insensitive: bool) -> bool {
    if !case_insensitive {
        return path.starts_with(root);
    }
    let fold = |c: Component<'_>| c.as_os_str().to_string_lossy().to_lowercase();
    let mut p = path.components();
    root.components()
        .all(|r| p.next().is_some_and(|c| fold(c) == fold(r)))
}

/// Whether the volume holding `dir` (an existing, canonical directory) ignores case: the same
/// directory is found under its name with the case of its letters swapped.
fn probe_case_insensitive(dir: &Path) -> bool {
    let Some(name) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return false;
    };
    let swapped: String = name
        .chars()
        .map(|c| {
            if c.is_lowercase() {
                c.to_uppercase().next().unwrap_or(c)
            } else {
                c.to_lowercase().next().unwrap_or(c)
            }
        })
        .collect();
    if swapped == name {
        return false;
    }
    let twin = dir.with_file_name(swapped);
    match (std::fs::metadata(dir), std::fs::metadata(&twin)) {
        (Ok(a), Ok(b)) => same_file(&a, &b),
        _ => false,
    }
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.is_dir() && b.is_dir() && a.modified().ok() == b.modified().ok()
}

/// The home directory from `$HOME` (`%USERPROFILE%` on Windows).
pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Expands a leading `~`, `$HOME` or `${HOME}` (followed by `/` or nothing).
pub(crate) fn expand_home(path: &str) -> PathBuf {
    for prefix in ["~", "$HOME", "${HOME}"] {
        if let Some(rest) = path.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with('/'))
            && let Some(home) = home_dir()
        {
            let rest = rest.trim_start_matches('/');
            return if rest.is_empty() {
                home
            } else {
                home.join(rest)
            };
        }
    }
    PathBuf::from(path)
}

fn resolve_from(base: &Path, path: &Path) -> Result<PathBuf, PathError> {
    resolve_with(base, false, path)
}

impl PathPolicy {
    /// [`PathPolicy::resolve`] for the shell analysis's many words: a relative path is taken
    /// against the canonical workspace without re-reading its components (they were resolved
    /// when the policy was made).
    pub(crate) fn resolve_fast(&self, base: &Path, path: &Path) -> Result<PathBuf, PathError> {
        resolve_with(base, base == self.workspace, path)
    }
}

/// Resolves `path` against `base`; `base_canonical` says `base` has no symlinks or dots left.
fn resolve_with(base: &Path, base_canonical: bool, path: &Path) -> Result<PathBuf, PathError> {
    let requested = path.display().to_string();
    let unresolvable = |message: &str| PathError::Unresolvable {
        requested: requested.clone(),
        message: message.to_string(),
    };
    if path.as_os_str().is_empty() {
        return Err(unresolvable("empty path"));
    }
    let path = match path.to_str() {
        Some(s) => expand_home(s),
        None => path.to_path_buf(),
    };
    let mut pending: VecDeque<OsString> = VecDeque::new();
    let mut resolved = PathBuf::new();
    if path.is_absolute() {
        push_components(&path, &mut resolved, &mut pending);
    } else if base_canonical {
        resolved = base.to_path_buf();
        push_components(&path, &mut PathBuf::new(), &mut pending);
    } else {
        push_components(&base.join(path), &mut resolved, &mut pending);
    }
    let mut followed = 0usize;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            resolved.pop();
            if resolved.as_os_str().is_empty() {
                resolved.push(Component::RootDir.as_os_str());
            }
            continue;
        }
        let candidate = resolved.join(&part);
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                followed += 1;
                if followed > MAX_SYMLINKS {
                    return Err(unresolvable("too many levels of symbolic links"));
                }
                let target =
                    std::fs::read_link(&candidate).map_err(|e| unresolvable(&e.to_string()))?;
                let mut front = VecDeque::new();
                if target.is_absolute() {
                    resolved = PathBuf::new();
                    push_components(&target, &mut resolved, &mut front);
                } else {
                    let mut ignored = PathBuf::new();
                    push_components(&target, &mut ignored, &mut front);
                }
                while let Some(p) = front.pop_back() {
                    pending.push_front(p);
                }
            }
            _ => resolved = candidate,
        }
    }
    Ok(resolved)
}

/// Splits `path`: prefix and root go into `resolved`, the rest (`.` dropped, `..` kept) into `out`.
fn push_components(path: &Path, resolved: &mut PathBuf, out: &mut VecDeque<OsString>) {
    for component in path.components() {
        match component {
            Component::Prefix(p) => *resolved = PathBuf::from(p.as_os_str()),
            Component::RootDir => resolved.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => out.push_back(OsString::from("..")),
            Component::Normal(name) => out.push_back(name.to_os_string()),
        }
    }
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("ws/src")).unwrap();
        std::fs::create_dir_all(base.join("OUTSIDE")).unwrap();
        (dir, base)
    }

    #[test]
    fn relative_paths_resolve_against_the_workspace_and_normalize_dots_and_slashes() {
        let (_d, base) = setup();
        let policy = PathPolicy::new(&base.join("ws"), &[]).unwrap();
        assert_eq!(
            policy.resolve(Path::new("src//./a/../b.rs")).unwrap(),
            base.join("ws/src/b.rs")
        );
        assert_eq!(
            policy.check(Path::new("src/new.rs")).unwrap(),
            base.join("ws/src/new.rs")
        );
    }

    #[test]
    fn dot_dot_applies_after_following_a_symlinked_directory() {
        let (_d, base) = setup();
        std::fs::create_dir_all(base.join("OUTSIDE/deep")).unwrap();
        symlink(base.join("OUTSIDE/deep"), base.join("ws/link")).unwrap();
        let policy = PathPolicy::new(&base.join("ws"), &[]).unwrap();
        // Lexically `ws/link/../x` would be `ws/x`; really it is `OUTSIDE/x`.
        assert_eq!(
            policy.resolve(Path::new("link/../x")).unwrap(),
            base.join("OUTSIDE/x")
        );
        assert!(matches!(
            policy.check(Path::new("link/../x")),
            Err(PathError::OutsideRoots { .. })
        ));
    }

    #[test]
    fn a_dangling_last_component_resolves_to_its_target() {
        let (_d, base) = setup();
        symlink(base.join("OUTSIDE/new.txt"), base.join("ws/draft.txt")).unwrap();
        let policy = PathPolicy::new(&base.join("ws"), &[]).unwrap();
        assert_eq!(
            policy.resolve(Path::new("draft.txt")).unwrap(),
            base.join("OUTSIDE/new.txt")
        );
    }

    #[test]
    fn a_symlink_loop_is_unresolvable() {
        let (_d, base) = setup();
        symlink(base.join("ws/b"), base.join("ws/a")).unwrap();
        symlink(base.join("ws/a"), base.join("ws/b")).unwrap();
        let policy = PathPolicy::new(&base.join("ws"), &[]).unwrap();
        assert!(matches!(
            policy.resolve(Path::new("a/x")),
            Err(PathError::Unresolvable { .. })
        ));
    }

    #[test]
    fn a_sibling_with_the_workspace_name_as_prefix_is_outside() {
        let (_d, base) = setup();
        std::fs::create_dir_all(base.join("project")).unwrap();
        let policy = PathPolicy::new(&base.join("project"), &[]).unwrap();
        assert!(matches!(
            policy.check(Path::new("../project-evil/x")),
            Err(PathError::OutsideRoots { .. })
        ));
        assert!(policy.is_inside_workspace(&base.join("project/x")));
        assert!(!policy.is_inside_workspace(&base.join("project-evil/x")));
    }

    #[test]
    fn extra_roots_are_allowed_and_listed_after_the_workspace() {
        let (_d, base) = setup();
        let policy = PathPolicy::new(&base.join("ws"), &[base.join("OUTSIDE")]).unwrap();
        assert_eq!(policy.roots(), &[base.join("ws"), base.join("OUTSIDE")]);
        assert!(policy.check(&base.join("OUTSIDE/f")).is_ok());
        assert_eq!(policy.workspace(), base.join("ws"));
    }

    #[test]
    fn a_missing_workspace_is_an_error() {
        let (_d, base) = setup();
        assert!(PathPolicy::new(&base.join("nope"), &[]).is_err());
    }
}
