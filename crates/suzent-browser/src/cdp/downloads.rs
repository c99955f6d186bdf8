//! Downloads of the managed browser: saved only into the session's download directory under a
//! sanitized name (no path part, no leading dot), never executable, never opened; executable
//! types refused; a byte quota per session.

use super::conn::{CdpEvent, Connection};
use crate::backend::{BrowserError, DownloadReport};
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::Mutex;

/// File name endings the agent never downloads (they run when opened).
pub const EXECUTABLE_EXTENSIONS: &[&str] = &[
    "exe", "msi", "dmg", "pkg", "sh", "bat", "cmd", "ps1", "app", "command", "deb", "rpm",
    "appimage", "scr", "com", "jar", "vbs",
];

/// Where and how much the managed browser may download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadPolicy {
    /// The session's download directory (created when missing).
    pub dir: PathBuf,
    /// Most bytes all downloads of the session may take together.
    pub quota_bytes: u64,
}

#[derive(Debug)]
struct Entry {
    url: String,
    suggested: String,
    frame: Option<String>,
}

#[derive(Debug, Default)]
struct Book {
    active: HashMap<String, Entry>,
    used: u64,
    reports: Vec<DownloadReport>,
}

/// Follows the browser's download events.
#[derive(Debug)]
pub(crate) struct Downloads {
    book: Arc<Mutex<Book>>,
}

/// A safe file name: the last path component of the suggestion, without leading dots (`.bashrc`
/// → `_bashrc`), control characters or reserved characters; `download` when nothing is left.
pub fn sanitize_file_name(suggested: &str) -> String {
    let last = suggested
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or_default()
        .trim();
    let mut name: String = last
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|') {
                '_'
            } else {
                c
            }
        })
        .collect();
    // A leading dot (hidden file), also behind what the browser made of `../` (`_.._.bashrc`).
    let lead: String = name
        .chars()
        .take_while(|c| matches!(c, '.' | '_' | ' '))
        .collect();
    if lead.contains('.') {
        name = format!("_{}", &name[lead.len()..]);
    }
    let name = name.trim_end_matches(['.', ' ']).to_string();
    if name.is_empty() || name == "_" {
        "download".to_string()
    } else {
        name.chars().take(180).collect()
    }
}

/// Whether a file name ends in an executable type.
pub fn is_executable_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower
        .rsplit_once('.')
        .is_some_and(|(_, ext)| EXECUTABLE_EXTENSIONS.contains(&ext))
}

/// A MIME type from the file name's ending (the download events carry none).
fn mime_from_name(name: &str) -> Option<String> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    let m = match ext.as_str() {
        "pdf" => "application/pdf",
        "txt" | "log" | "md" => "text/plain",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "zip" => "application/zip",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        _ => return None,
    };
    Some(m.to_string())
}

/// A free path for `name` in `dir` (`name (1).ext` when taken).
fn free_path(dir: &Path, name: &str) -> PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s.to_string(), format!(".{e}")),
        _ => (name.to_string(), String::new()),
    };
    (1..10_000)
        .map(|n| dir.join(format!("{stem} ({n}){ext}")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

impl Downloads {
    pub(crate) async fn start(
        conn: Connection,
        policy: DownloadPolicy,
    ) -> Result<Downloads, BrowserError> {
        std::fs::create_dir_all(&policy.dir).map_err(|e| {
            BrowserError::Protocol(format!(
                "cannot create the download directory {}: {e}",
                policy.dir.display()
            ))
        })?;
        conn.call(
            "Browser.setDownloadBehavior",
            json!({"behavior": "allowAndName", "downloadPath": policy.dir, "eventsEnabled": true}),
            None,
        )
        .await?;
        let book: Arc<Mutex<Book>> = Arc::default();
        let mut events = conn.subscribe();
        let task_book = book.clone();
        tokio::spawn(async move {
            loop {
                let ev = match events.recv().await {
                    Ok(ev) => ev,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(_) => break,
                };
                on_event(&conn, &policy, &task_book, ev).await;
            }
        });
        Ok(Downloads { book })
    }

    /// Reports since the last call, plus those still in progress.
    pub(crate) async fn take(&self) -> Vec<DownloadReport> {
        let mut book = self.book.lock().await;
        let mut out = std::mem::take(&mut book.reports);
        for e in book.active.values() {
            out.push(DownloadReport {
                tab: None,
                url: e.url.clone(),
                suggested_name: e.suggested.clone(),
                path: None,
                size: 0,
                mime: None,
                state: "in progress".to_string(),
            });
        }
        out
    }
}

async fn on_event(conn: &Connection, policy: &DownloadPolicy, book: &Mutex<Book>, ev: CdpEvent) {
    match ev.method.as_str() {
        "Browser.downloadWillBegin" => {
            let guid = ev.params["guid"].as_str().unwrap_or_default().to_string();
            let url = ev.params["url"].as_str().unwrap_or_default().to_string();
            let suggested = ev.params["suggestedFilename"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let frame = ev.params["frameId"].as_str().map(str::to_string);
            let safe = sanitize_file_name(&suggested);
            if is_executable_name(&safe) {
                let _ = conn
                    .call("Browser.cancelDownload", json!({"guid": guid}), None)
                    .await;
                let _ = std::fs::remove_file(policy.dir.join(&guid));
                book.lock().await.reports.push(DownloadReport {
                    tab: frame,
                    url,
                    suggested_name: suggested,
                    path: None,
                    size: 0,
                    mime: None,
                    state: format!(
                        "refused: '{safe}' is an executable type, which the agent never downloads (download it yourself if you trust it)"
                    ),
                });
                return;
            }
            book.lock().await.active.insert(
                guid,
                Entry {
                    url,
                    suggested,
                    frame,
                },
            );
        }
        "Browser.downloadProgress" => {
            let guid = ev.params["guid"].as_str().unwrap_or_default().to_string();
            let state = ev.params["state"].as_str().unwrap_or_default();
            let received = ev.params["receivedBytes"].as_f64().unwrap_or(0.0) as u64;
            let total = ev.params["totalBytes"].as_f64().unwrap_or(0.0) as u64;
            let mut b = book.lock().await;
            let used = b.used;
            let over = used.saturating_add(received.max(total)) > policy.quota_bytes;
            if state == "inProgress" && over {
                if let Some(entry) = b.active.remove(&guid) {
                    drop(b);
                    let _ = conn
                        .call("Browser.cancelDownload", json!({"guid": guid}), None)
                        .await;
                    let _ = std::fs::remove_file(policy.dir.join(&guid));
                    book.lock().await.reports.push(DownloadReport {
                        tab: entry.frame,
                        url: entry.url,
                        suggested_name: entry.suggested,
                        path: None,
                        size: 0,
                        mime: None,
                        state: format!(
                            "refused: the session's download quota of {} MB is used up",
                            policy.quota_bytes / 1_000_000
                        ),
                    });
                }
                return;
            }
            if state == "completed" {
                let Some(entry) = b.active.remove(&guid) else {
                    return;
                };
                let from = policy.dir.join(&guid);
                let size = std::fs::metadata(&from)
                    .map(|m| m.len())
                    .unwrap_or(received);
                if used.saturating_add(size) > policy.quota_bytes {
                    let _ = std::fs::remove_file(&from);
                    b.reports.push(DownloadReport {
                        tab: entry.frame,
                        url: entry.url,
                        suggested_name: entry.suggested,
                        path: None,
                        size,
                        mime: None,
                        state: "refused: the session's download quota is used up".to_string(),
                    });
                    return;
                }
                let name = sanitize_file_name(&entry.suggested);
                let to = free_path(&policy.dir, &name);
                let report = match std::fs::rename(&from, &to) {
                    Ok(()) => {
                        clear_exec_bits(&to);
                        b.used = used.saturating_add(size);
                        DownloadReport {
                            tab: entry.frame,
                            url: entry.url,
                            mime: mime_from_name(&name),
                            suggested_name: entry.suggested,
                            path: Some(to.to_string_lossy().into_owned()),
                            size,
                            state: "saved".to_string(),
                        }
                    }
                    Err(e) => {
                        let _ = std::fs::remove_file(&from);
                        DownloadReport {
                            tab: entry.frame,
                            url: entry.url,
                            suggested_name: entry.suggested,
                            path: None,
                            size,
                            mime: None,
                            state: format!("failed: cannot move it into place: {e}"),
                        }
                    }
                };
                b.reports.push(report);
            } else if state == "canceled"
                && let Some(entry) = b.active.remove(&guid)
            {
                b.reports.push(DownloadReport {
                    tab: entry.frame,
                    url: entry.url,
                    suggested_name: entry.suggested,
                    path: None,
                    size: 0,
                    mime: None,
                    state: "failed: canceled".to_string(),
                });
            }
        }
        _ => {}
    }
}

#[cfg(unix)]
fn clear_exec_bits(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path) {
        let mode = meta.permissions().mode() & 0o666;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
    }
}

#[cfg(not(unix))]
fn clear_exec_bits(_path: &Path) {}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn suggested_names_lose_their_path_and_leading_dot() {
        assert_eq!(sanitize_file_name("../../.bashrc"), "_bashrc");
        assert_eq!(sanitize_file_name("_.._.bashrc"), "_bashrc");
        assert_eq!(sanitize_file_name("_config.yml"), "_config.yml");
        assert_eq!(sanitize_file_name("..\\..\\evil.txt"), "evil.txt");
        assert_eq!(sanitize_file_name("report.pdf"), "report.pdf");
        assert_eq!(sanitize_file_name(".."), "download");
        assert_eq!(sanitize_file_name(""), "download");
        assert_eq!(sanitize_file_name("a:b?.txt"), "a_b_.txt");
    }

    #[test]
    fn executable_types_are_recognised_whatever_their_case() {
        assert!(is_executable_name("invoice.EXE"));
        assert!(is_executable_name("run.sh"));
        assert!(is_executable_name("x.AppImage"));
        assert!(!is_executable_name("notes.txt"));
        assert!(!is_executable_name("exe"));
    }
}
