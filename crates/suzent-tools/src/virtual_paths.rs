//! Virtual paths: what the model writes (`/workspace/src/main.rs`, `notes.md`, `/shared/x`) mapped
//! to host paths, and the run-time check against the chat's allowed roots.

use crate::tool::{ToolContext, ToolError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Maps a model-given path to an absolute host path, without touching the filesystem:
/// `/workspace/...` -> the workspace root, `/shared/...` -> the shared dir, `/persistence/...` ->
/// the chat's private dir, `~` / `~/...` -> the home directory, a relative path -> joined to the
/// workspace root, any other absolute path as is. Errors are invalid arguments naming the path.
pub fn to_host_path(path: &str, ctx: &ToolContext) -> Result<PathBuf, ToolError> {
    if path.trim().is_empty() {
        return Err(ToolError::InvalidArguments(
            "the path is empty; give a file path such as /workspace/README.md".into(),
        ));
    }
    if path.contains('\0') {
        return Err(ToolError::InvalidArguments(format!(
            "path {path:?} contains a NUL byte"
        )));
    }
    let virtual_roots: [(&str, &Path); 3] = [
        ("/workspace", &ctx.workspace_root),
        ("/shared", &ctx.shared_dir),
        ("/persistence", &ctx.persistence_dir),
    ];
    for (prefix, root) in virtual_roots {
        if let Some(rest) = strip_root(path, prefix) {
            return Ok(join_rest(root, rest));
        }
    }
    if let Some(rest) = strip_root(path, "~") {
        let home = home_dir().ok_or_else(|| {
            ToolError::InvalidArguments(format!(
                "path '{path}' starts with ~ but the home directory is unknown; give an absolute path"
            ))
        })?;
        return Ok(join_rest(&home, rest));
    }
    let p = Path::new(path);
    if p.is_absolute() {
        Ok(p.to_path_buf())
    } else {
        Ok(ctx.workspace_root.join(p))
    }
}

/// Maps the path like [`to_host_path`], then checks it against the chat's allowed roots with
/// symlinks resolved (the file may have changed since the permission engine looked at it).
/// Returns the resolved path. A refused path is a [`ToolError::Failed`] naming it.
pub fn check_path(path: &str, ctx: &ToolContext) -> Result<PathBuf, ToolError> {
    let host = to_host_path(path, ctx)?;
    ctx.paths
        .check(&host)
        .map_err(|e| ToolError::Failed(format!("refused: {e}")))
}

/// Like [`check_path`], for a tool that reads: Suzent's protected folders that are readable
/// (skills) pass, and the deny and ask path rules for reading refuse (the same policy for
/// every reading tool: `read_file`, the searches, document conversion, canvas images).
pub fn check_read_path(path: &str, ctx: &ToolContext) -> Result<PathBuf, ToolError> {
    let host = to_host_path(path, ctx)?;
    let resolved = ctx
        .paths
        .check_read(&host)
        .map_err(|e| ToolError::Failed(format!("refused: {e}")))?;
    if let Some(why) = ctx.paths.read_refusal(&resolved) {
        return Err(ToolError::Failed(format!(
            "refused: reading '{}' is not allowed by {why}",
            display_path(&resolved, ctx)
        )));
    }
    Ok(resolved)
}

/// Counts what a search left out because reading it is refused, and says so in the result.
/// Clones share the count (the walker's filter holds one).
#[derive(Debug, Clone, Default)]
pub struct Skipped {
    inner: Arc<Mutex<SkippedInner>>,
}

#[derive(Debug, Default)]
struct SkippedInner {
    shown: Vec<String>,
    count: usize,
}

impl Skipped {
    /// A filter for `ignore::WalkBuilder::filter_entry`: false (leave it out, and do not
    /// descend into it) for a file or folder the path policy refuses for reading, which is
    /// counted. The walk must start at a root resolved by the policy ([`check_read_path`]) and
    /// not follow links.
    pub fn filter(
        &self,
        ctx: &ToolContext,
    ) -> impl Fn(&ignore::DirEntry) -> bool + Send + Sync + 'static {
        let inner = self.inner.clone();
        let policy = ctx.paths.clone();
        let workspace = ctx.workspace_root.clone();
        move |entry: &ignore::DirEntry| {
            if entry.depth() == 0 {
                return true;
            }
            let path = entry.path();
            // The walk starts at a resolved root and does not follow links, so every parent of
            // an entry is already resolved: only a link needs resolving (one `stat` per link
            // instead of one per component of every path).
            let why = if entry.path_is_symlink() {
                let resolved = policy.resolve(path).unwrap_or_else(|_| path.to_path_buf());
                policy
                    .read_refusal(&resolved)
                    .or_else(|| policy.read_refusal(path))
            } else {
                policy.read_refusal(path)
            };
            let Some(why) = why else {
                return true;
            };
            if let Ok(mut s) = inner.lock() {
                s.count += 1;
                if s.shown.len() < 5 {
                    let shown = match path.strip_prefix(&workspace) {
                        Ok(rel) => {
                            format!("/workspace/{}", rel.to_string_lossy().replace('\\', "/"))
                        }
                        Err(_) => path.display().to_string(),
                    };
                    s.shown.push(format!("{shown} ({why})"));
                }
            }
            false
        }
    }

    /// The note appended to a search result, or an empty string.
    pub fn note(&self) -> String {
        let Ok(s) = self.inner.lock() else {
            return String::new();
        };
        if s.count == 0 {
            return String::new();
        }
        let more = s.count.saturating_sub(s.shown.len());
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        let mut shown = s.shown.clone();
        shown.sort();
        format!(
            "\n[skipped {} path(s) you may not read: {}{tail}]",
            s.count,
            shown.join(", ")
        )
    }
}

/// `rest` after `prefix` when `path` is `prefix` itself or `prefix/...` (or `prefix\...`).
fn strip_root<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(prefix)?;
    if rest.is_empty() {
        Some("")
    } else if rest.starts_with('/') || rest.starts_with('\\') {
        Some(rest.trim_start_matches(['/', '\\']))
    } else {
        None
    }
}

fn join_rest(root: &Path, rest: &str) -> PathBuf {
    if rest.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rest)
    }
}

fn home_dir() -> Option<PathBuf> {
    #[cfg(windows)]
    let var = std::env::var_os("USERPROFILE");
    #[cfg(not(windows))]
    let var = std::env::var_os("HOME");
    var.filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// How a path is shown to the model: relative to the workspace as `/workspace/...` when inside
/// it, otherwise the host path.
pub fn display_path(path: &Path, ctx: &ToolContext) -> String {
    match path.strip_prefix(&ctx.workspace_root) {
        Ok(rel) if rel.as_os_str().is_empty() => "/workspace".to_string(),
        Ok(rel) => format!("/workspace/{}", rel.to_string_lossy().replace('\\', "/")),
        Err(_) => path.display().to_string(),
    }
}
