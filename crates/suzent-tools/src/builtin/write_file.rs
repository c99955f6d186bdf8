//! `write_file`: creates or overwrites a file atomically.

use super::{atomic_write, blocking, io_failed, last_stamp, record_stamp};
use crate::tool::ReadStamp;
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use crate::virtual_paths::{check_path, display_path, to_host_path};
use schemars::JsonSchema;
use serde::Deserialize;
use suzent_permissions::ToolAccess;

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// Path of the file to create or overwrite: relative to the workspace, or absolute
    /// (`/workspace/...`, `/shared/...`, `/persistence/...`). Missing directories are created.
    pub file_path: String,
    /// The complete new content of the file.
    pub content: String,
}

/// Creates or overwrites a file.
#[derive(Debug)]
pub struct WriteFileTool {
    spec: ToolSpec,
}

impl WriteFileTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<WriteFileArgs>(
                "write_file",
                "WriteFileTool",
                "filesystem",
                "Write file",
                "Create a file or overwrite it with new content. Creates missing parent \
                 directories. The write is atomic. An existing file must have been read with \
                 read_file in this chat (and not changed since) before it is overwritten. To \
                 change part of an existing file, prefer edit_file.",
            )
            .requires_approval(true),
        }
    }
}

impl Default for WriteFileTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for WriteFileTool {
    type Args = WriteFileArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &WriteFileArgs, ctx: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Write(vec![to_host_path(&args.file_path, ctx)?]))
    }

    async fn call(&self, args: WriteFileArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let path = check_path(&args.file_path, ctx)?;
        let shown = display_path(&path, ctx);
        let target = path.clone();
        let known = last_stamp(ctx, &path);
        let (created, stamp) = blocking(move || {
            let created = match std::fs::metadata(&target) {
                Ok(m) if m.is_dir() => {
                    return Err(ToolError::Failed(format!(
                        "{shown} is a directory; give the path of a file"
                    )));
                }
                // Overwriting what the agent has not seen (never read or written in this chat,
                // or changed since): the same freshness record as edit_file's stale check.
                Ok(m) => match known {
                    None => {
                        return Err(ToolError::Failed(format!(
                            "{shown} already exists and you have not read it in this chat; read it with read_file first, then write it (or use edit_file)"
                        )));
                    }
                    Some(known) if known != ReadStamp::from_metadata(&m) => {
                        return Err(ToolError::Failed(format!(
                            "{shown} changed on disk since you last read or wrote it; read it again with read_file, then write it"
                        )));
                    }
                    Some(_) => false,
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
                Err(e) => return Err(io_failed("write", &shown, &e)),
            };
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| io_failed("create the directories of", &shown, &e))?;
            }
            let stamp = atomic_write(&target, args.content.as_bytes(), &shown)?;
            Ok((created, stamp))
        })
        .await?;
        let bytes = stamp.len;
        record_stamp(ctx, path.clone(), stamp);
        let shown = display_path(&path, ctx);
        Ok(if created {
            format!("created {shown} ({bytes} bytes written)")
        } else {
            format!("overwrote {shown} ({bytes} bytes written)")
        })
    }
}
