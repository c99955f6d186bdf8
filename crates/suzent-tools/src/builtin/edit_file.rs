//! `edit_file`: exact find-and-replace in a text file, CRLF- and BOM-aware.

use super::{atomic_write, blocking, last_stamp, read_text_file, record_stamp};
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use crate::virtual_paths::{check_path, display_path, to_host_path};
use schemars::JsonSchema;
use serde::Deserialize;
use suzent_permissions::ToolAccess;

const BOM: &str = "\u{feff}";

/// Arguments of `edit_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// Path of the file to edit: relative to the workspace, or absolute (`/workspace/...`,
    /// `/shared/...`, `/persistence/...`).
    pub file_path: String,
    /// The exact text to replace, including whitespace and indentation. Must occur exactly
    /// once unless replace_all is true; add surrounding lines to make it unique.
    pub old_string: String,
    /// The text to put in its place (must differ from old_string).
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// Replaces text in a file.
#[derive(Debug)]
pub struct EditFileTool {
    spec: ToolSpec,
}

impl EditFileTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<EditFileArgs>(
                "edit_file",
                "EditFileTool",
                "filesystem",
                "Edit file",
                "Replace exact text in a file. old_string must match the file exactly (line \
                 endings are matched either way) and occur once, unless replace_all is true. \
                 Read the file first; the edit is refused if the file changed since you read it.",
            )
            .requires_approval(true),
        }
    }
}

impl Default for EditFileTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for EditFileTool {
    type Args = EditFileArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &EditFileArgs, ctx: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Write(vec![to_host_path(&args.file_path, ctx)?]))
    }

    async fn call(&self, args: EditFileArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        if args.old_string.is_empty() {
            return Err(ToolError::InvalidArguments(
                "field `old_string` is empty; give the exact text to replace (to create or \
                 overwrite a whole file, use write_file)"
                    .into(),
            ));
        }
        if args.old_string == args.new_string {
            return Err(ToolError::InvalidArguments(
                "old_string and new_string are the same; nothing would change".into(),
            ));
        }
        let path = check_path(&args.file_path, ctx)?;
        let shown = display_path(&path, ctx);
        let known = last_stamp(ctx, &path);
        let target = path.clone();
        let (count, stamp) = blocking(move || {
            let (text, stamp) = read_text_file(&target, &shown)?;
            if let Some(known) = known
                && known != stamp
            {
                return Err(ToolError::Failed(format!(
                    "{shown} changed on disk since you last read it; read it again with \
                     read_file, then retry the edit"
                )));
            }
            let (new_text, count) = apply_edit(&text, &args, &shown)?;
            let stamp = atomic_write(&target, new_text.as_bytes(), &shown)?;
            Ok((count, stamp))
        })
        .await?;
        record_stamp(ctx, path.clone(), stamp);
        let shown = display_path(&path, ctx);
        Ok(if count == 1 {
            format!("edited {shown}: 1 replacement")
        } else {
            format!("edited {shown}: {count} replacements")
        })
    }
}

/// The edited text and the number of replacements.
fn apply_edit(text: &str, args: &EditFileArgs, shown: &str) -> Result<(String, usize), ToolError> {
    let (bom, body) = match text.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => ("", text),
    };
    let crlf = body.contains("\r\n");
    let to_file_endings = |s: &str| {
        if crlf {
            s.replace("\r\n", "\n").replace('\n', "\r\n")
        } else {
            s.to_string()
        }
    };
    let mut old = args.old_string.clone();
    let mut count = body.matches(old.as_str()).count();
    if count == 0 && crlf && old.contains('\n') {
        old = to_file_endings(&old);
        count = body.matches(old.as_str()).count();
    }
    if count == 0 {
        return Err(ToolError::Failed(format!(
            "old_string was not found in {shown}; read the file and copy the exact text, \
             including whitespace"
        )));
    }
    if count > 1 && !args.replace_all {
        return Err(ToolError::Failed(format!(
            "found {count} occurrences of old_string in {shown}; pass replace_all or add context \
             to make it unique"
        )));
    }
    let new = to_file_endings(&args.new_string);
    let replaced = if args.replace_all {
        body.replace(old.as_str(), &new)
    } else {
        body.replacen(old.as_str(), &new, 1)
    };
    Ok((format!("{bom}{replaced}"), count))
}
