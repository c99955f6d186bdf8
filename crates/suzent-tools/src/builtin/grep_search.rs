//! `grep_search`: regex search through file contents with ripgrep's library crates, on all
//! cores (`walk.rs`): files in path order, each file's lines in order, the first 500 lines.

use super::blocking;
use super::glob_search::{rel_string, search_root_arg};
use super::walk::{parallel_walk, path_order, search_in_order, threads};
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use crate::virtual_paths::{Skipped, check_read_path, display_path, to_host_path};
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use suzent_permissions::ToolAccess;

/// At most this many output lines are returned.
pub const MAX_LINES: usize = 500;
/// Matched lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 500;
/// Upper bound of `context_lines`.
const MAX_CONTEXT: usize = 20;

/// Arguments of `grep_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regular expression to search for (Rust regex syntax, like ripgrep).
    pub pattern: String,
    /// File or directory to search (default: the workspace root).
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this glob, e.g. `*.rs` (matched against the file name) or
    /// `src/**/*.ts` (matched against the path relative to the searched directory).
    #[serde(default)]
    pub include: Option<String>,
    /// Match case-insensitively.
    #[serde(default)]
    pub case_insensitive: bool,
    /// Lines of context to show before and after each match (0-20).
    #[serde(default)]
    pub context_lines: usize,
}

/// Searches file contents.
#[derive(Debug)]
pub struct GrepTool {
    spec: ToolSpec,
}

impl GrepTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<GrepArgs>(
                "grep_search",
                "GrepTool",
                "filesystem",
                "Search file contents",
                "Search file contents with a regular expression. Output lines are \
                 `path:line:text` (context lines `path-line-text`). Skips hidden, binary and \
                 .gitignore'd files; at most 500 lines are returned.",
            ),
        }
    }
}

impl Default for GrepTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for GrepTool {
    type Args = GrepArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &GrepArgs, ctx: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Read(vec![to_host_path(
            search_root_arg(&args.path),
            ctx,
        )?]))
    }

    async fn call(&self, args: GrepArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(args.case_insensitive)
            // Matches never span lines (as in ripgrep without --multiline): the searcher may
            // then search whole buffers instead of line by line.
            .line_terminator(Some(b'\n'))
            .build(&args.pattern)
            .map_err(|e| {
                ToolError::InvalidArguments(format!(
                    "field `pattern`: invalid regex {:?}: {e}",
                    args.pattern
                ))
            })?;
        let include = match args.include.as_deref().filter(|s| !s.trim().is_empty()) {
            None => None,
            Some(g) => Some((
                globset::GlobBuilder::new(g)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| {
                        ToolError::InvalidArguments(format!(
                            "field `include`: invalid glob {g:?}: {e}"
                        ))
                    })?
                    .compile_matcher(),
                g.contains('/'),
            )),
        };
        if args.context_lines > MAX_CONTEXT {
            return Err(ToolError::InvalidArguments(format!(
                "field `context_lines`: {} is more than the maximum {MAX_CONTEXT}",
                args.context_lines
            )));
        }
        let root = check_read_path(search_root_arg(&args.path), ctx)?;
        let shown_root = display_path(&root, ctx);
        if !root.exists() {
            return Err(ToolError::Failed(format!(
                "{shown_root} does not exist; give an existing file or directory in `path`"
            )));
        }
        let pattern = args.pattern.clone();
        let context = args.context_lines;
        let skipped = Skipped::default();
        let filter = skipped.filter(ctx);
        blocking(move || {
            let root_is_file = root.is_file();
            // 1. The files to search, found on all cores (folders and files the path policy
            //    refuses for reading are left out), in path order.
            let mut files = parallel_walk(&root, filter, |entry| {
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return None;
                }
                let path = entry.path();
                let rel = if root_is_file {
                    path.file_name().map(Path::new).unwrap_or(path)
                } else {
                    path.strip_prefix(&root).unwrap_or(path)
                };
                if let Some((glob, with_dirs)) = &include {
                    let subject = if *with_dirs {
                        rel
                    } else {
                        path.file_name().map(Path::new).unwrap_or(rel)
                    };
                    if !glob.is_match(subject) {
                        return None;
                    }
                }
                Some((rel_string(rel), path.to_path_buf()))
            });
            files.sort_unstable_by(|a, b| path_order(Path::new(&a.0), Path::new(&b.0)));
            // 2. Their contents, on all cores, stopping once the lines of the first files
            //    (in path order) pass the cap.
            let per_file = search_in_order(
                &files,
                threads(),
                MAX_LINES + 1,
                || {
                    SearcherBuilder::new()
                        .line_number(true)
                        .before_context(context)
                        .after_context(context)
                        .binary_detection(BinaryDetection::quit(0))
                        .build()
                },
                |searcher, (shown, path)| {
                    let mut sink = Collect {
                        shown: shown.clone(),
                        out: Vec::new(),
                    };
                    if searcher.search_path(&matcher, path, &mut sink).is_err() {
                        // Unreadable files are skipped like ripgrep does.
                        sink.out.clear();
                    }
                    sink.out
                },
                Vec::len,
            );
            let mut lines: Vec<String> = per_file.into_iter().flatten().collect();
            if lines.is_empty() {
                return Ok(format!(
                    "no matches for {pattern:?} under {shown_root}{}",
                    skipped.note()
                ));
            }
            let truncated = lines.len() > MAX_LINES;
            lines.truncate(MAX_LINES);
            let mut out = lines.join("\n");
            if truncated {
                out.push_str(&format!(
                    "\n[output truncated at {MAX_LINES} lines; narrow the pattern, the path or include]"
                ));
            }
            out.push_str(&skipped.note());
            Ok(out)
        })
        .await
    }
}

/// One file's output lines (at most one past the cap).
struct Collect {
    shown: String,
    out: Vec<String>,
}

impl Collect {
    fn push(&mut self, sep: char, line_number: Option<u64>, bytes: &[u8]) -> bool {
        // One line past the cap tells the caller the output is cut.
        if self.out.len() > MAX_LINES {
            return false;
        }
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let text = suzent_core::text::truncate_chars(text, MAX_LINE_CHARS, "... [line truncated]");
        let n = line_number.unwrap_or(0);
        self.out.push(format!("{}{sep}{n}{sep}{text}", self.shown));
        true
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        Ok(self.push(':', mat.line_number(), mat.bytes()))
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        Ok(self.push('-', ctx.line_number(), ctx.bytes()))
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, std::io::Error> {
        if self.out.len() > MAX_LINES {
            return Ok(false);
        }
        self.out.push("--".into());
        Ok(true)
    }
}
