//! `read_file`: a text file with line numbers, a window of lines at a time.

use super::{blocking, read_text_file, record_stamp};
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use crate::virtual_paths::{check_read_path, display_path, to_host_path};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use suzent_permissions::ToolAccess;

/// Lines returned when no limit is given.
pub const DEFAULT_LIMIT: usize = 2000;
/// Longer lines are cut to this many characters.
pub const MAX_LINE_CHARS: usize = 2000;

fn default_limit() -> usize {
    DEFAULT_LIMIT
}

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// Path of the file: relative to the workspace, or absolute (`/workspace/...`,
    /// `/shared/...`, `/persistence/...`).
    pub file_path: String,
    /// First line to return, 0-indexed (0 = the first line).
    #[serde(default)]
    pub offset: usize,
    /// Maximum number of lines to return (default 2000).
    #[serde(default = "default_limit")]
    pub limit: usize,
}

/// Reads a text file.
#[derive(Debug)]
pub struct ReadFileTool {
    spec: ToolSpec,
}

impl ReadFileTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<ReadFileArgs>(
                "read_file",
                "ReadFileTool",
                "filesystem",
                "Read file",
                "Read a file. Returns a header `[lines A-B of N] path` and the lines numbered \
                 like `cat -n`. Use offset and limit to page through long files. Documents \
                 (.pdf, .docx, .xlsx, .pptx) are converted to Markdown and images (.png, .jpg) \
                 read with OCR; offset and limit apply to the converted text. Other binary \
                 files and text files over 10 MiB are refused.",
            ),
        }
    }
}

impl Default for ReadFileTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for ReadFileTool {
    type Args = ReadFileArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &ReadFileArgs, ctx: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Read(vec![to_host_path(&args.file_path, ctx)?]))
    }

    async fn call(&self, args: ReadFileArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        if args.limit == 0 {
            return Err(ToolError::InvalidArguments(
                "field `limit`: must be at least 1".into(),
            ));
        }
        let path = check_read_path(&args.file_path, ctx)?;
        let shown = display_path(&path, ctx);
        let (text, stamp) = {
            let path = path.clone();
            let shown = shown.clone();
            // Documents and images are converted to text first (see `crate::convert`).
            blocking(move || match crate::convert::DocKind::of(&path) {
                Some(kind) => crate::convert::read_document(&path, kind, &shown),
                None => read_text_file(&path, &shown),
            })
            .await?
        };
        record_stamp(ctx, path, stamp);
        Ok(render(&text, args.offset, args.limit, &shown))
    }
}

/// The numbered window of lines `offset..offset+limit` of `text`.
fn render(text: &str, offset: usize, limit: usize, shown: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let total = text.lines().count();
    if total == 0 {
        return format!("[no lines: the file is empty] {shown}");
    }
    if offset >= total {
        return format!(
            "[no lines: offset {offset} is past the end; the file has {total} lines] {shown}"
        );
    }
    let end = offset.saturating_add(limit).min(total);
    let mut out =
        String::with_capacity(text.len().min(256 * 1024) + (end - offset) * 8 + shown.len() + 64);
    let _ = write!(out, "[lines {}-{} of {}] {}", offset + 1, end, total, shown);
    for (i, line) in text.lines().enumerate().skip(offset).take(end - offset) {
        out.push('\n');
        let number = i + 1;
        // Written in place: a `format!` per line was most of the time of a whole-file read.
        let _ = match suzent_core::text::prefix_chars(line, MAX_LINE_CHARS) {
            Some(head) => {
                let chars = line.chars().count();
                write!(
                    out,
                    "{number:>6}\t{head}... [line truncated: {chars} characters]"
                )
            }
            None => write!(out, "{number:>6}\t{line}"),
        };
    }
    if end < total {
        out.push_str(&format!(
            "\n[{} more lines; continue with offset {}]",
            total - end,
            end
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::render;

    #[test]
    fn a_window_is_numbered_from_one_and_says_what_remains() {
        let out = render("a\nb\nc\n", 1, 1, "/workspace/f");
        assert_eq!(
            out,
            "[lines 2-2 of 3] /workspace/f\n     2\tb\n[1 more lines; continue with offset 2]"
        );
    }

    #[test]
    fn an_offset_past_the_end_reports_the_line_count() {
        assert_eq!(
            render("a\nb\n", 5, 10, "f"),
            "[no lines: offset 5 is past the end; the file has 2 lines] f"
        );
    }

    #[test]
    fn long_lines_are_cut() {
        let line = "x".repeat(3000);
        let out = render(&line, 0, 10, "f");
        assert!(out.contains("[line truncated: 3000 characters]"));
        assert!(out.len() < 2100);
    }

    #[test]
    fn crlf_and_bom_do_not_show() {
        assert_eq!(
            render("\u{feff}a\r\nb", 0, 10, "f"),
            "[lines 1-2 of 2] f\n     1\ta\n     2\tb"
        );
    }
}
