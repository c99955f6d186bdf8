//! The tamper-evident permission audit log: `permission-audit.jsonl`, one JSON object per line,
//! one line per evaluation and per user resolution.
//!
//! Every line carries `seq` (1, 2, ... across files), `prevHash`, the SHA-256 (lower-case hex)
//! of the previous line's bytes without its newline (the very first line carries 64 zeros), and
//! `hash`, the SHA-256 of the line itself serialized without `hash`. A line edited by hand fails
//! its own hash; one edited with a recomputed `hash`, or removed, breaks `prevHash` of the next
//! line. [`verify`] names the first broken line.
//!
//! Lines are written by a dedicated thread. [`AuditLog::append`] is `async` and waits (without
//! blocking the thread it runs on) only while the bounded queue is full: back-pressure instead of
//! loss, since an audit log that drops entries under load is worthless, and instead of blocking a
//! runtime worker, which would stall every other chat. Code that is not async uses
//! [`AuditLog::append_blocking`].
//!
//! The file is rotated by size: when a line would take it past `max_bytes`, it is renamed to
//! `permission-audit.1.jsonl` (older ones shift to `.2`, `.3`, ...; more than `keep` are removed)
//! and a new file starts whose first line carries the hash of the previous file's last line.

use crate::redact::redact_value;
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use suzent_core::{PermissionDecision, PermissionMode};
use tokio::sync::{mpsc, oneshot};

/// The `prevHash` of the first line ever written.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Default size at which the file is rotated: 10 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// Default number of rotated files kept besides the current one.
pub const DEFAULT_KEEP: usize = 5;

/// Default capacity of the writer's queue, in entries.
pub const DEFAULT_QUEUE: usize = 4096;

/// Where and how the audit log is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    /// The current file (`.../permission-audit.jsonl`).
    pub path: PathBuf,
    /// Rotate before a line would make the file larger than this.
    pub max_bytes: u64,
    /// Rotated files kept (`.1` newest ... `.keep` oldest).
    pub keep: usize,
    /// Capacity of the queue between callers and the writer thread.
    pub queue: usize,
}

impl AuditConfig {
    /// The defaults (10 MiB, 5 rotated files, 4096 queued entries) for `path`.
    pub fn new(path: PathBuf) -> AuditConfig {
        AuditConfig {
            path,
            max_bytes: DEFAULT_MAX_BYTES,
            keep: DEFAULT_KEEP,
            queue: DEFAULT_QUEUE,
        }
    }
}

/// What one audit line records (seed 000 audit fields): the one type used both to write the
/// log and to read it back. Absent fields are omitted from the line and read as empty; the
/// chain fields (`seq`, `prevHash`, `hash`) are added by the writer and ignored here.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AuditRecord {
    /// RFC 3339 time of the event.
    pub timestamp: String,
    /// `evaluation` (the engine decided) or `resolution` (the user answered a prompt).
    pub kind: String,
    /// Chat id.
    pub chat_id: String,
    /// Run id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Tool call id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Tool runtime name.
    pub tool: String,
    /// Arguments, bounded and redacted (see [`AuditRecord::bounded_args`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// `allow`, `ask` or `deny`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// What decided (`rule`, `mode`, `auto_classifier`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The sentence shown to the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The stable reason code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// `low`, `medium` or `high`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<String>,
    /// The chat's permission mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The user's answer (`allow_once`, `allow_session`, `allow_global`, `reject`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_action: Option<String>,
    /// The user's feedback, redacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// For `refusal` entries and errors: what went wrong, redacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Ids of the rules that matched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched_rules: Vec<String>,
    /// The rule an approval added.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<String>,
    /// Reviewer confidence when the auto classifier decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<String>,
    /// Reviewer risk categories.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub risk_categories: Vec<String>,
    /// The reviewer model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewer_model: Option<String>,
    /// Who started the run when it was not the local user: `peer:<device>` for a turn that a
    /// paired device's message started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl AuditRecord {
    /// A record of one engine decision; `args` are bounded and redacted here.
    pub fn evaluation(
        chat_id: &str,
        run_id: &str,
        tool_call_id: &str,
        tool: &str,
        args: &Value,
        mode: PermissionMode,
        decision: &PermissionDecision,
    ) -> AuditRecord {
        AuditRecord {
            timestamp: chrono::Utc::now().to_rfc3339(),
            kind: "evaluation".to_string(),
            chat_id: chat_id.to_string(),
            run_id: Some(run_id.to_string()),
            tool_call_id: Some(tool_call_id.to_string()),
            tool: tool.to_string(),
            args: Some(AuditRecord::bounded_args(args)),
            decision: Some(decision.behavior.as_str().to_string()),
            source: serde_json::to_value(decision.source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string)),
            reason: Some(crate::redact::redact_text(&decision.reason)),
            reason_code: Some(decision.reason_code.as_str().to_string()),
            risk: serde_json::to_value(decision.risk)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string)),
            mode: Some(mode.as_str().to_string()),
            matched_rules: decision.matched_rules.clone(),
            confidence: decision.confidence.clone(),
            risk_categories: decision.risk_categories.clone(),
            reviewer_model: decision.reviewer_model.clone(),
            ..AuditRecord::default()
        }
    }

    /// Arguments as the log keeps them: depth, item count and string length capped (the cap
    /// visible as `[truncated]` / `…`), sensitive keys and inline secrets masked.
    pub fn bounded_args(args: &Value) -> Value {
        redact_value(args)
    }
}

enum Message {
    Entry(Value),
    /// A record, redacted and serialized by the writer (off the caller's path).
    Record(Box<AuditRecord>),
    Flush(oneshot::Sender<()>),
    FlushBlocking(std::sync::mpsc::SyncSender<()>),
}

/// Handle to the audit writer. Cloning shares the writer; the thread ends when every handle is
/// dropped, after writing what was queued.
#[derive(Debug, Clone)]
pub struct AuditLog {
    tx: mpsc::Sender<Message>,
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Message::Entry(_) | Message::Record(_) => f.write_str("Entry"),
            Message::Flush(_) | Message::FlushBlocking(_) => f.write_str("Flush"),
        }
    }
}

impl AuditLog {
    /// Starts the writer with the default limits for `path`.
    pub fn start(path: PathBuf) -> AuditLog {
        AuditLog::start_with(AuditConfig::new(path))
    }

    /// Starts the writer thread. The file and its directory are created on the first write; the
    /// chain continues from the last line already in the file (or its newest rotated file).
    pub fn start_with(config: AuditConfig) -> AuditLog {
        let (tx, rx) = mpsc::channel::<Message>(config.queue.max(1));
        let spawned = std::thread::Builder::new()
            .name("suzent-audit".into())
            .spawn(move || Writer::new(config).run(rx));
        if let Err(e) = spawned {
            tracing::error!("cannot start the audit writer: {e}");
        }
        AuditLog { tx }
    }

    /// Queues one record; waits (asynchronously) while the queue is full. Never drops a record
    /// while the writer runs.
    pub async fn append(&self, record: &AuditRecord) {
        if self
            .tx
            .send(Message::Record(Box::new(record.clone())))
            .await
            .is_err()
        {
            tracing::error!("audit writer stopped; entry lost");
        }
    }

    /// Queues one JSON object (other values are wrapped as `{"value": ...}`).
    pub async fn append_value(&self, entry: Value) {
        if self.tx.send(Message::Entry(entry)).await.is_err() {
            tracing::error!("audit writer stopped; entry lost");
        }
    }

    /// Like [`AuditLog::append`], for code that is not running on an async runtime (it blocks
    /// the calling thread while the queue is full). Must not be called from async code.
    pub fn append_blocking(&self, record: &AuditRecord) {
        if self
            .tx
            .blocking_send(Message::Entry(to_object(record)))
            .is_err()
        {
            tracing::error!("audit writer stopped; entry lost");
        }
    }

    /// Waits until everything queued before this call is written and flushed to the file.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Message::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }

    /// [`AuditLog::flush`] for code that is not async.
    pub fn flush_blocking(&self) {
        let (done, wait) = std::sync::mpsc::sync_channel(1);
        if self.tx.blocking_send(Message::FlushBlocking(done)).is_ok() {
            let _ = wait.recv();
        }
    }
}

impl AuditRecord {
    /// The record as written: every free-text field (reason, feedback, message) through the
    /// same redactor as the arguments, the arguments bounded and redacted.
    pub fn redacted(&self) -> AuditRecord {
        let text = |t: &Option<String>| t.as_deref().map(crate::redact::redact_text);
        AuditRecord {
            args: self.args.as_ref().map(redact_value),
            reason: text(&self.reason),
            feedback: text(&self.feedback),
            message: text(&self.message),
            ..self.clone()
        }
    }
}

fn to_object(record: &AuditRecord) -> Value {
    serde_json::to_value(record.redacted()).unwrap_or_else(|e| {
        serde_json::json!({"kind": "audit_error", "message": format!("unserializable record: {e}")})
    })
}

/// The path of rotated file `n` (1 = newest): `permission-audit.1.jsonl`.
pub fn rotated_path(path: &Path, n: usize) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "permission-audit".to_string());
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    path.with_file_name(format!("{stem}.{n}{ext}"))
}

/// SHA-256 of `bytes` as lower-case hex.
pub fn line_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

struct Writer {
    config: AuditConfig,
    file: Option<BufWriter<File>>,
    size: u64,
    prev_hash: String,
    seq: u64,
    resumed: bool,
}

impl Writer {
    fn new(config: AuditConfig) -> Writer {
        Writer {
            config,
            file: None,
            size: 0,
            prev_hash: GENESIS_HASH.to_string(),
            seq: 0,
            resumed: false,
        }
    }

    fn run(mut self, mut rx: mpsc::Receiver<Message>) {
        while let Some(message) = rx.blocking_recv() {
            self.handle(message);
            // Write whatever else is queued before flushing the buffer once.
            while let Ok(more) = rx.try_recv() {
                self.handle(more);
            }
            self.flush();
        }
        self.flush();
    }

    fn handle(&mut self, message: Message) {
        let entry = match message {
            Message::Entry(entry) => Some(entry),
            Message::Record(record) => Some(to_object(&record)),
            Message::Flush(done) => {
                self.flush();
                let _ = done.send(());
                None
            }
            Message::FlushBlocking(done) => {
                self.flush();
                let _ = done.send(());
                None
            }
        };
        if let Some(entry) = entry
            && let Err(e) = self.write(entry)
        {
            tracing::error!(
                "audit log {} cannot be written: {e}",
                self.config.path.display()
            );
        }
    }

    fn flush(&mut self) {
        if let Some(f) = self.file.as_mut()
            && let Err(e) = f.flush()
        {
            tracing::error!("audit log flush failed: {e}");
        }
    }

    /// Reads the last line of the current file (or the newest rotated file) to continue the
    /// chain after a restart.
    fn resume(&mut self) {
        self.resumed = true;
        let candidates = [self.config.path.clone(), rotated_path(&self.config.path, 1)];
        for path in candidates {
            if let Ok(Some(last)) = last_line(&path) {
                self.prev_hash = line_hash(last.as_bytes());
                self.seq = serde_json::from_str::<Value>(&last)
                    .ok()
                    .and_then(|v| v.get("seq").and_then(Value::as_u64))
                    .unwrap_or(0);
                return;
            }
        }
    }

    fn open(&mut self) -> std::io::Result<()> {
        if let Some(dir) = self.config.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&self.config.path)?;
        let size = file.metadata()?.len();
        // A line cut short by a crash would glue onto the next one: end it first.
        if size > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(size - 1))?;
            file.read_exact(&mut last)?;
            if last[0] != b'\n' {
                file.write_all(b"\n")?;
            }
        }
        self.size = file.metadata()?.len();
        self.file = Some(BufWriter::new(file));
        Ok(())
    }

    fn rotate(&mut self) -> std::io::Result<()> {
        self.flush();
        self.file = None;
        let path = &self.config.path;
        let keep = self.config.keep.max(1);
        let _ = std::fs::remove_file(rotated_path(path, keep));
        for n in (1..keep).rev() {
            let from = rotated_path(path, n);
            if from.exists() {
                std::fs::rename(&from, rotated_path(path, n + 1))?;
            }
        }
        std::fs::rename(path, rotated_path(path, 1))?;
        self.open()
    }

    fn write(&mut self, entry: Value) -> std::io::Result<()> {
        if !self.resumed {
            self.resume();
        }
        if self.file.is_none() {
            self.open()?;
        }
        let mut object = match entry {
            Value::Object(map) => map,
            other => {
                let mut map = Map::new();
                map.insert("value".into(), other);
                map
            }
        };
        self.seq += 1;
        object.insert("seq".into(), Value::from(self.seq));
        object.insert("prevHash".into(), Value::from(self.prev_hash.clone()));
        object.remove("hash");
        let own = line_hash(Value::Object(object.clone()).to_string().as_bytes());
        object.insert("hash".into(), Value::from(own));
        let line = Value::Object(object).to_string();
        let len = line.len() as u64 + 1;
        if self.size > 0 && self.size + len > self.config.max_bytes {
            self.rotate()?;
        }
        let Some(file) = self.file.as_mut() else {
            return Err(std::io::Error::other("audit file not open"));
        };
        file.write_all(line.as_bytes())?;
        file.write_all(b"\n")?;
        self.size += len;
        self.prev_hash = line_hash(line.as_bytes());
        Ok(())
    }
}

/// The last non-empty line of a file, if any.
fn last_line(path: &Path) -> std::io::Result<Option<String>> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    let mut window = 64 * 1024u64;
    loop {
        let start = len.saturating_sub(window);
        file.seek(SeekFrom::Start(start))?;
        let mut buf = Vec::new();
        file.read_to_end(&mut buf)?;
        let text = String::from_utf8_lossy(&buf);
        let trimmed = text.trim_end_matches('\n');
        match trimmed.rfind('\n') {
            Some(i) => return Ok(Some(trimmed[i + 1..].to_string())),
            None if start == 0 => {
                return Ok((!trimmed.is_empty()).then(|| trimmed.to_string()));
            }
            None => window *= 4,
        }
    }
}

/// Where the chain breaks.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokenLine {
    /// The file holding the line.
    pub file: PathBuf,
    /// 1-based line number within that file.
    pub line: u64,
    /// What is wrong with it.
    pub reason: String,
}

/// The result of [`verify`].
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    /// True when every line links to the one before it.
    pub ok: bool,
    /// Lines checked (up to and including the broken one).
    pub lines: u64,
    /// Files checked, oldest first.
    pub files: Vec<PathBuf>,
    /// The first broken line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broken: Option<BrokenLine>,
}

/// Checks the chain over the rotated files (oldest first) and the current file. The first line
/// of the oldest file kept must link to the genesis hash only when its `seq` is 1 (older files
/// may have been rotated away). A missing log verifies as OK with zero lines.
pub fn verify(path: &Path) -> std::io::Result<VerifyReport> {
    let mut files = Vec::new();
    let mut n = 1;
    while rotated_path(path, n).exists() {
        files.push(rotated_path(path, n));
        n += 1;
    }
    files.reverse();
    if path.exists() {
        files.push(path.to_path_buf());
    }
    let mut report = VerifyReport {
        ok: true,
        lines: 0,
        files: files.clone(),
        broken: None,
    };
    let mut prev: Option<(String, u64)> = None;
    for file in &files {
        let reader = BufReader::new(File::open(file)?);
        for (i, line) in reader.split(b'\n').enumerate() {
            let line = line?;
            let number = i as u64 + 1;
            report.lines += 1;
            let fail = |reason: String| BrokenLine {
                file: file.clone(),
                line: number,
                reason,
            };
            let problem = check_line(&line, prev.as_ref());
            match problem {
                Ok(seq) => prev = Some((line_hash(&line), seq)),
                Err(reason) => {
                    report.ok = false;
                    report.broken = Some(fail(reason));
                    return Ok(report);
                }
            }
        }
    }
    Ok(report)
}

/// Checks one line against the previous (hash, seq); returns its seq.
fn check_line(line: &[u8], prev: Option<&(String, u64)>) -> Result<u64, String> {
    let mut value: Value = serde_json::from_slice(line).map_err(|e| format!("not JSON: {e}"))?;
    let own = value
        .as_object_mut()
        .and_then(|o| o.remove("hash"))
        .ok_or_else(|| "no hash".to_string())?;
    if own.as_str() != Some(line_hash(value.to_string().as_bytes()).as_str()) {
        return Err("the line does not match its own hash: it was changed".to_string());
    }
    let seq = value
        .get("seq")
        .and_then(Value::as_u64)
        .ok_or_else(|| "no seq".to_string())?;
    let prev_hash = value
        .get("prevHash")
        .and_then(Value::as_str)
        .ok_or_else(|| "no prevHash".to_string())?;
    match prev {
        Some((hash, prev_seq)) => {
            if prev_hash != hash {
                return Err(format!(
                    "prevHash {prev_hash} does not match the previous line ({hash}): that line was changed or a line was removed"
                ));
            }
            if seq != prev_seq + 1 {
                return Err(format!("seq {seq} does not follow {prev_seq}"));
            }
        }
        None => {
            if seq == 1 && prev_hash != GENESIS_HASH {
                return Err("the first line does not start the chain".to_string());
            }
        }
    }
    Ok(seq)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn rotated_files_are_numbered_before_the_extension() {
        assert_eq!(
            rotated_path(Path::new("/c/permission-audit.jsonl"), 2),
            PathBuf::from("/c/permission-audit.2.jsonl")
        );
    }

    #[test]
    fn the_line_hash_is_sha256_hex() {
        assert_eq!(
            line_hash(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_missing_log_verifies_with_zero_lines() {
        let dir = tempfile::tempdir().unwrap();
        let report = verify(&dir.path().join("permission-audit.jsonl")).unwrap();
        assert!(report.ok);
        assert_eq!(report.lines, 0);
    }
}
