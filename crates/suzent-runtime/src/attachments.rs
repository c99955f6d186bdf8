//! Attachments (issue 19 item 4): files the user drops or pastes into a chat are copied into the
//! chat's workspace under `.attachments/<chat id>/` and referenced from the user message by
//! path, so the model reads them with its file tools; images also go to models that take
//! images, inlined just before each request and never stored twice.

use crate::error::RuntimeError;
use base64::Engine as _;
use std::io::Write as _;
use std::path::{Component, Path};
use std::sync::Arc;
use suzent_core::{ATTACHMENTS_DIR, Attachment, ChatMessage};

/// The largest file that can be attached, in bytes (25 MiB).
pub const MAX_ATTACHMENT_BYTES: usize = 25 * 1024 * 1024;

/// The largest image sent to a model inline, in bytes (5 MiB, Anthropic's limit per image and
/// under OpenAI's and Gemini's). A larger image is attached as a file only.
pub const MAX_INLINE_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

/// The longest file name kept, in bytes (longer names are cut on a character boundary, keeping
/// the extension).
const MAX_NAME_BYTES: usize = 120;

/// Copies files into chats' workspaces and reads images back for requests.
#[derive(Debug, Clone, Default)]
pub(crate) struct Attachments;

impl Attachments {
    /// Stores `bytes` as the file `name` in `<workspace>/.attachments/<chat_id>/`, atomically
    /// (a temporary file renamed into place). The name is reduced to a plain file name; a taken
    /// name with other content gets ` (2)`, ` (3)`… before its extension, and the same content
    /// again reuses the file.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] for an empty file or one over
    /// [`MAX_ATTACHMENT_BYTES`]; [`RuntimeError::Io`] when the folder cannot be written.
    pub(crate) fn add(
        &self,
        workspace: &Path,
        chat_id: &str,
        name: &str,
        bytes: &[u8],
    ) -> Result<Attachment, RuntimeError> {
        if bytes.is_empty() {
            return Err(invalid(format!(
                "'{name}' is empty; there is nothing to attach"
            )));
        }
        if bytes.len() > MAX_ATTACHMENT_BYTES {
            return Err(invalid(format!(
                "'{name}' is {}, more than the {} an attachment may be; put it in the workspace and name its path instead",
                suzent_core::text::human_bytes(bytes.len() as u64),
                suzent_core::text::human_bytes(MAX_ATTACHMENT_BYTES as u64)
            )));
        }
        let chat_dir = safe_component(chat_id)
            .ok_or_else(|| invalid(format!("'{chat_id}' is not a chat id")))?;
        let file_name = clean_name(name);
        let dir = workspace.join(ATTACHMENTS_DIR).join(&chat_dir);
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        let (stem, ext) = split_ext(&file_name);
        let mut n = 1;
        let target = loop {
            let candidate = if n == 1 {
                file_name.clone()
            } else {
                format!("{stem} ({n}){ext}")
            };
            let path = dir.join(&candidate);
            match std::fs::read(&path) {
                Ok(existing) if existing == bytes => {
                    return Ok(record(&chat_dir, &candidate, bytes.len()));
                }
                Ok(_) => n += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break candidate,
                Err(e) => return Err(io(&path, e)),
            }
        };
        let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| io(&dir, e))?;
        tmp.write_all(bytes).map_err(|e| io(tmp.path(), e))?;
        tmp.as_file().sync_all().map_err(|e| io(tmp.path(), e))?;
        let path = dir.join(&target);
        // `persist_noclobber`: a file that appeared meanwhile is never overwritten.
        tmp.persist_noclobber(&path)
            .map_err(|e| io(&path, e.error))?;
        Ok(record(&chat_dir, &target, bytes.len()))
    }

    /// The attachments of a message about to be sent, as this chat's folder has them: each must
    /// name a file in `<workspace>/.attachments/<chat_id>/` (what [`Attachments::add`] returned);
    /// name, media type and size are read again from the file, never taken from the caller.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] naming the path that is not such a file.
    pub(crate) fn check(
        &self,
        workspace: &Path,
        chat_id: &str,
        attachments: Vec<Attachment>,
    ) -> Result<Vec<Attachment>, RuntimeError> {
        if attachments.is_empty() {
            return Ok(attachments);
        }
        let chat_dir = safe_component(chat_id)
            .ok_or_else(|| invalid(format!("'{chat_id}' is not a chat id")))?;
        let prefix = format!("{ATTACHMENTS_DIR}/{chat_dir}/");
        attachments
            .into_iter()
            .map(|a| {
                let not_ours = || {
                    invalid(format!(
                        "'{}' is not a file attached to this chat (attach it first)",
                        a.path
                    ))
                };
                let name = a.path.strip_prefix(&prefix).ok_or_else(not_ours)?;
                if safe_component(name).is_none() {
                    return Err(not_ours());
                }
                let meta =
                    std::fs::symlink_metadata(workspace.join(&a.path)).map_err(|_| not_ours())?;
                if !meta.is_file() {
                    return Err(not_ours());
                }
                Ok(record(&chat_dir, name, meta.len() as usize))
            })
            .collect()
    }

    /// Gives each image attachment of `messages` its bytes ([`Attachment::data`]) so a provider
    /// can send it. Only files inside `<workspace>/.attachments/` are read (a transcript names
    /// them; nothing else is), and only images up to [`MAX_INLINE_IMAGE_BYTES`]; an image that
    /// is gone or too large stays a reference the model can read about.
    pub(crate) fn inline_images<'a>(
        &self,
        workspace: &Path,
        messages: impl IntoIterator<Item = &'a mut ChatMessage>,
    ) {
        let Ok(root) = workspace.join(ATTACHMENTS_DIR).canonicalize() else {
            return;
        };
        for message in messages {
            let ChatMessage::User { attachments, .. } = message else {
                continue;
            };
            for a in attachments
                .iter_mut()
                .filter(|a| a.is_image() && a.data.is_none())
            {
                match read_image(&root, workspace, a) {
                    Ok(data) => a.data = Some(data),
                    Err(why) => {
                        tracing::debug!(path = %a.path, "image not sent to the model: {why}")
                    }
                }
            }
        }
    }
}

/// `.attachments/<chat id>`, for messages about a chat's attachments folder.
pub(crate) fn folder_hint(chat_id: &str) -> String {
    format!("{ATTACHMENTS_DIR}/{chat_id}")
}

fn read_image(root: &Path, workspace: &Path, a: &Attachment) -> Result<Arc<str>, String> {
    let path = workspace
        .join(&a.path)
        .canonicalize()
        .map_err(|e| e.to_string())?;
    if !path.starts_with(root) {
        return Err("outside the attachments folder".into());
    }
    let meta = std::fs::metadata(&path).map_err(|e| e.to_string())?;
    if meta.len() > MAX_INLINE_IMAGE_BYTES {
        return Err(format!("{} bytes is over the inline limit", meta.len()));
    }
    let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
    Ok(base64::engine::general_purpose::STANDARD
        .encode(bytes)
        .into())
}

fn record(chat_dir: &str, file_name: &str, bytes: usize) -> Attachment {
    Attachment {
        path: format!("{ATTACHMENTS_DIR}/{chat_dir}/{file_name}"),
        name: file_name.to_string(),
        mime: mime_guess::from_path(file_name)
            .first_or_octet_stream()
            .essence_str()
            .to_string(),
        bytes: bytes as u64,
        data: None,
    }
}

/// `s` when it is one plain path component (no separators, not `.` or `..`).
fn safe_component(s: &str) -> Option<String> {
    let mut parts = Path::new(s).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(c)), None) if !s.contains(['/', '\\']) => {
            c.to_str().map(str::to_string)
        }
        _ => None,
    }
}

/// A plain file name from what the browser or the OS called the file: the last path segment,
/// without control characters, separators or a leading dot (no hidden files, no `..`), cut to
/// [`MAX_NAME_BYTES`]; `attachment` when nothing is left.
fn clean_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let cleaned: String = last
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|') {
                '_'
            } else {
                c
            }
        })
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').trim().to_string();
    if cleaned.is_empty() {
        return "attachment".into();
    }
    if cleaned.len() <= MAX_NAME_BYTES {
        return cleaned;
    }
    let (stem, ext) = split_ext(&cleaned);
    let keep = MAX_NAME_BYTES.saturating_sub(ext.len());
    format!("{}{ext}", suzent_core::text::prefix_bytes(stem, keep))
}

/// `("report", ".pdf")` for `report.pdf`; `("README", "")` for a name without an extension.
fn split_ext(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(i) if i > 0 && name.len() - i <= 10 => (&name[..i], &name[i..]),
        _ => (name, ""),
    }
}

fn invalid(message: String) -> RuntimeError {
    RuntimeError::InvalidInput {
        field: "attachment".into(),
        message,
    }
}

fn io(path: &Path, e: std::io::Error) -> RuntimeError {
    RuntimeError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_file_is_copied_into_the_chats_folder_and_named_by_its_path() -> anyhow::Result<()> {
        let ws = tempfile::tempdir()?;
        let a = Attachments.add(ws.path(), "c1", "report.csv", b"a,b\n1,2\n")?;
        assert_eq!(
            a,
            Attachment {
                path: ".attachments/c1/report.csv".into(),
                name: "report.csv".into(),
                mime: "text/csv".into(),
                bytes: 8,
                data: None,
            }
        );
        assert_eq!(std::fs::read(ws.path().join(&a.path))?, b"a,b\n1,2\n");
        Ok(())
    }

    #[test]
    fn the_same_name_with_other_content_gets_a_number_and_the_same_content_is_reused()
    -> anyhow::Result<()> {
        let ws = tempfile::tempdir()?;
        let first = Attachments.add(ws.path(), "c1", "shot.png", b"one")?;
        let again = Attachments.add(ws.path(), "c1", "shot.png", b"one")?;
        let other = Attachments.add(ws.path(), "c1", "shot.png", b"two")?;
        assert_eq!(
            (
                first.path.as_str(),
                again.path.as_str(),
                other.path.as_str()
            ),
            (
                ".attachments/c1/shot.png",
                ".attachments/c1/shot.png",
                ".attachments/c1/shot (2).png"
            )
        );
        assert_eq!(std::fs::read(ws.path().join(&other.path))?, b"two");
        Ok(())
    }

    #[test]
    fn a_name_cannot_leave_the_chats_folder_or_hide() -> anyhow::Result<()> {
        let ws = tempfile::tempdir()?;
        for (name, kept) in [
            ("../../.bashrc", "bashrc"),
            ("..\\..\\evil.txt", "evil.txt"),
            ("/etc/passwd", "passwd"),
            ("..", "attachment"),
            ("a\nb\u{0}.txt", "a_b_.txt"),
        ] {
            let a = Attachments.add(ws.path(), "c1", name, b"x")?;
            assert_eq!(a.path, format!(".attachments/c1/{kept}"), "{name:?}");
        }
        assert!(!ws.path().join(".bashrc").exists());
        assert!(matches!(
            Attachments.add(ws.path(), "../c2", "a.txt", b"x"),
            Err(RuntimeError::InvalidInput { .. })
        ));
        Ok(())
    }

    #[test]
    fn an_empty_or_oversized_file_is_refused_with_its_name() -> anyhow::Result<()> {
        let ws = tempfile::tempdir()?;
        let empty = Attachments.add(ws.path(), "c1", "e.txt", b"").unwrap_err();
        assert!(empty.to_string().contains("'e.txt' is empty"), "{empty}");
        let big = vec![0u8; MAX_ATTACHMENT_BYTES + 1];
        let err = Attachments
            .add(ws.path(), "c1", "big.bin", &big)
            .unwrap_err();
        assert!(err.to_string().contains("'big.bin' is 26.2 MB"), "{err}");
        assert!(!ws.path().join(".attachments/c1/big.bin").exists());
        Ok(())
    }

    #[test]
    fn only_files_of_this_chats_folder_can_be_sent_and_their_facts_are_read_again()
    -> anyhow::Result<()> {
        let ws = tempfile::tempdir()?;
        let mut a = Attachments.add(ws.path(), "c1", "notes.txt", b"hello")?;
        a.bytes = 1;
        a.mime = "image/png".into();
        let checked = Attachments.check(ws.path(), "c1", vec![a.clone()])?;
        assert_eq!(
            (checked[0].bytes, checked[0].mime.as_str()),
            (5, "text/plain")
        );
        std::fs::write(ws.path().join("secret.txt"), b"s")?;
        for path in [
            ".attachments/c2/notes.txt",
            ".attachments/c1/../../secret.txt",
            "secret.txt",
            ".attachments/c1/missing.txt",
        ] {
            let err = Attachments
                .check(
                    ws.path(),
                    "c1",
                    vec![Attachment {
                        path: path.into(),
                        ..a.clone()
                    }],
                )
                .unwrap_err();
            assert!(
                err.to_string()
                    .contains("is not a file attached to this chat"),
                "{path}: {err}"
            );
        }
        Ok(())
    }

    #[test]
    fn images_get_their_bytes_and_nothing_outside_the_folder_is_read() -> anyhow::Result<()> {
        let ws = tempfile::tempdir()?;
        let png = Attachments.add(ws.path(), "c1", "dot.png", b"\x89PNG fake")?;
        let text = Attachments.add(ws.path(), "c1", "notes.txt", b"hello")?;
        std::fs::write(ws.path().join("secret.png"), b"not yours")?;
        let outside = Attachment {
            path: ".attachments/../secret.png".into(),
            name: "secret.png".into(),
            mime: "image/png".into(),
            bytes: 9,
            data: None,
        };
        let mut messages = vec![ChatMessage::User {
            text: "look".into(),
            attachments: vec![png, text, outside],
        }];
        Attachments.inline_images(ws.path(), messages.iter_mut());
        let ChatMessage::User { attachments, .. } = &messages[0] else {
            unreachable!()
        };
        let data: Vec<Option<&str>> = attachments.iter().map(|a| a.data.as_deref()).collect();
        assert_eq!(data, vec![Some("iVBORyBmYWtl"), None, None]);
        Ok(())
    }
}
