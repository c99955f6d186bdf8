//! The permission audit log: one JSON object per line in `permission-audit.jsonl`, appended by a
//! dedicated writer thread so decisions never wait on the disk.

use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{SyncSender, sync_channel};

/// Capacity of the writer's queue, in entries.
const QUEUE: usize = 8192;

/// Handle to the audit writer. Cloning shares the writer.
#[derive(Debug, Clone)]
pub struct AuditLog {
    tx: SyncSender<Value>,
}

impl AuditLog {
    /// Starts the writer thread appending to `path` (created with its directory on first write).
    pub fn start(path: PathBuf) -> AuditLog {
        let (tx, rx) = sync_channel::<Value>(QUEUE);
        let spawned = std::thread::Builder::new()
            .name("suzent-audit".into())
            .spawn(move || {
                let mut file = None;
                while let Ok(entry) = rx.recv() {
                    if file.is_none() {
                        if let Some(dir) = path.parent() {
                            let _ = std::fs::create_dir_all(dir);
                        }
                        file = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(&path)
                            .ok();
                    }
                    if let Some(f) = file.as_mut() {
                        let mut line = entry.to_string();
                        line.push('\n');
                        if let Err(e) = f.write_all(line.as_bytes()) {
                            tracing::warn!("audit log write failed: {e}");
                        }
                    } else {
                        tracing::warn!("audit log {} cannot be opened", path.display());
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the audit writer: {e}");
        }
        AuditLog { tx }
    }

    /// Queues one entry. Blocks only when the writer is a full queue behind.
    pub fn append(&self, entry: Value) {
        if self.tx.send(entry).is_err() {
            tracing::warn!("audit writer stopped; entry dropped");
        }
    }
}
