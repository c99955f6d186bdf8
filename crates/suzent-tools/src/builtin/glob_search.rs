//! `glob_search`: files matching a glob, newest first, honouring `.gitignore`, found on all
//! cores (`walk.rs`).

use super::blocking;
use super::walk::parallel_walk;
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use crate::virtual_paths::{Skipped, check_read_path, display_path, to_host_path};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::time::SystemTime;
use suzent_permissions::ToolAccess;

/// At most this many paths are returned.
pub const MAX_RESULTS: usize = 200;

/// Arguments of `glob_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// Glob matched against paths relative to the search directory, e.g. `**/*.rs`,
    /// `src/*.py`. `*` does not cross `/`; use `**/` to search subdirectories.
    pub pattern: String,
    /// Directory to search (default: the workspace root).
    #[serde(default)]
    pub path: Option<String>,
}

/// Finds files by glob.
#[derive(Debug)]
pub struct GlobTool {
    spec: ToolSpec,
}

impl GlobTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<GlobArgs>(
                "glob_search",
                "GlobTool",
                "filesystem",
                "Find files",
                "Find files whose path matches a glob pattern (e.g. `**/*.py`), newest first. \
                 Skips hidden files and what .gitignore excludes. Paths are relative to the \
                 searched directory; at most 200 are listed.",
            ),
        }
    }
}

impl Default for GlobTool {
    fn default() -> Self {
        Self::new()
    }
}

pub(crate) fn search_root_arg(path: &Option<String>) -> &str {
    match path.as_deref() {
        Some(p) if !p.trim().is_empty() => p,
        _ => "/workspace",
    }
}

#[async_trait::async_trait]
impl TypedTool for GlobTool {
    type Args = GlobArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &GlobArgs, ctx: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Read(vec![to_host_path(
            search_root_arg(&args.path),
            ctx,
        )?]))
    }

    async fn call(&self, args: GlobArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let glob = globset::GlobBuilder::new(&args.pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| {
                ToolError::InvalidArguments(format!(
                    "field `pattern`: invalid glob {:?}: {e}",
                    args.pattern
                ))
            })?
            .compile_matcher();
        let root = check_read_path(search_root_arg(&args.path), ctx)?;
        let shown_root = display_path(&root, ctx);
        if !root.is_dir() {
            return Err(ToolError::Failed(format!(
                "{shown_root} is not a directory; give a directory to search in `path`"
            )));
        }
        let pattern = args.pattern.clone();
        let skipped = Skipped::default();
        let filter = skipped.filter(ctx);
        blocking(move || {
            // On all cores; folders and files the path policy refuses for reading are left out.
            // Every match is needed (newest first, and how many there are), so the walk does
            // not stop at the cap; only matches are stat'ed for their modification time.
            let mut found: Vec<(SystemTime, String)> = parallel_walk(&root, filter, |entry| {
                if entry.file_type().is_none_or(|t| t.is_dir()) {
                    return None;
                }
                let rel = entry.path().strip_prefix(&root).ok()?;
                if !glob.is_match(rel) {
                    return None;
                }
                let modified = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                Some((modified, rel_string(rel)))
            });
            if found.is_empty() {
                return Ok(format!(
                    "no files match {pattern:?} under {shown_root}{}",
                    skipped.note()
                ));
            }
            let newest_first = |a: &(SystemTime, String), b: &(SystemTime, String)| {
                b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1))
            };
            let total = found.len();
            if total > MAX_RESULTS {
                // Only the shown ones need sorting.
                found.select_nth_unstable_by(MAX_RESULTS, newest_first);
                found.truncate(MAX_RESULTS);
            }
            found.sort_unstable_by(newest_first);
            let mut out = found
                .into_iter()
                .take(MAX_RESULTS)
                .map(|(_, p)| p)
                .collect::<Vec<_>>()
                .join("\n");
            if total > MAX_RESULTS {
                out.push_str(&format!(
                    "\n[showing the {MAX_RESULTS} newest of {total} matching files; narrow the pattern or the path]"
                ));
            }
            out.push_str(&skipped.note());
            Ok(out)
        })
        .await
    }
}

pub(crate) fn rel_string(rel: &Path) -> String {
    rel.to_string_lossy().replace('\\', "/")
}
