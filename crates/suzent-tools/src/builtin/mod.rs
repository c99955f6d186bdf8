//! The built-in tools, one file each. Adding a tool: a file here plus one line in
//! [`crate::default_registry`].

pub mod background;
pub mod browser_action;
pub mod edit_file;
pub mod glob_search;
pub mod grep_search;
pub mod memory_tools;
pub mod planning;
pub mod read_file;
pub mod render_ui;
pub mod run_command;
pub mod skill_execute;
pub mod social_message;
pub mod speak;
pub mod tool_search;
mod walk;
pub mod web_search;
pub mod webpage_fetch;
pub mod write_file;

use crate::tool::{ReadStamp, ToolContext, ToolError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Files larger than this are not read into the model's context.
pub const MAX_TEXT_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// Runs blocking filesystem work off the async runtime.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::Failed(format!("internal error: the tool task failed: {e}")))?
}

/// An I/O error as a message naming the path.
pub(crate) fn io_failed(what: &str, shown: &str, e: &std::io::Error) -> ToolError {
    let hint = match e.kind() {
        std::io::ErrorKind::NotFound => " (no such file or directory)",
        std::io::ErrorKind::PermissionDenied => " (permission denied)",
        _ => "",
    };
    ToolError::Failed(format!("cannot {what} {shown}: {e}{hint}"))
}

/// Reads a text file whole: refuses directories, files over [`MAX_TEXT_FILE_BYTES`] and binary
/// files. Returns the text and the stamp of what was read.
pub(crate) fn read_text_file(path: &Path, shown: &str) -> Result<(String, ReadStamp), ToolError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| io_failed("read", shown, &e))?;
    let meta = file.metadata().map_err(|e| io_failed("read", shown, &e))?;
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "{shown} is a directory, not a file; use glob_search to list its files"
        )));
    }
    if meta.len() > MAX_TEXT_FILE_BYTES {
        return Err(ToolError::Failed(format!(
            "{shown} is too large ({} bytes; the limit is {MAX_TEXT_FILE_BYTES} bytes); use grep_search to find the part you need",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_TEXT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_failed("read", shown, &e))?;
    let binary = |len: usize| {
        ToolError::Failed(format!(
            "binary file {shown} ({len} bytes); reading it as text is not supported yet"
        ))
    };
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err(binary(bytes.len()));
    }
    let text = String::from_utf8(bytes).map_err(|e| binary(e.as_bytes().len()))?;
    Ok((text, ReadStamp::from_metadata(&meta)))
}

/// Writes a file atomically: a temp file in the same directory, flushed, then renamed over the
/// target. An existing file's permissions are kept. Returns the new stamp.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8], shown: &str) -> Result<ReadStamp, ToolError> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(|| {
            ToolError::Failed(format!("cannot write {shown}: it has no parent directory"))
        })?;
    let old_perms = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut tmp =
        tempfile::NamedTempFile::new_in(parent).map_err(|e| io_failed("write", shown, &e))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| io_failed("write", shown, &e))?;
    let perms = match old_perms {
        Some(p) => Some(p),
        None => default_new_file_permissions(),
    };
    if let Some(perms) = perms {
        tmp.as_file()
            .set_permissions(perms)
            .map_err(|e| io_failed("write", shown, &e))?;
    }
    tmp.persist(path)
        .map_err(|e| io_failed("write", shown, &e.error))?;
    let meta = std::fs::metadata(path).map_err(|e| io_failed("write", shown, &e))?;
    Ok(ReadStamp::from_metadata(&meta))
}

#[cfg(unix)]
fn default_new_file_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_new_file_permissions() -> Option<std::fs::Permissions> {
    None
}

/// Records what the agent now knows of a file.
pub(crate) fn record_stamp(ctx: &ToolContext, path: PathBuf, stamp: ReadStamp) {
    if let Ok(mut reads) = ctx.reads.lock() {
        reads.insert(path, stamp);
    }
}

/// The stamp recorded at the agent's last read, if any.
pub(crate) fn last_stamp(ctx: &ToolContext, path: &Path) -> Option<ReadStamp> {
    ctx.reads.lock().ok().and_then(|r| r.get(path).cloned())
}
