//! Background commands: shell commands that outlive the turn that started them
//! (`start_command` / `check_command` / `stop_command`, seed 000 "Shell capability").
//!
//! Each command is a [`Process`] like `run_command`'s (its own session / process group, stdin
//! from `/dev/null`, prompts and editors disabled, optionally inside the sandbox). Its output goes
//! to an on-disk [`Spool`] of a few fixed-size segments. Offsets are absolute byte positions in
//! the whole output; reading below the retained start reports how many bytes were dropped.
//!
//! When a command ends on its own (exits or times out), the [`CommandObserver`] is asked to
//! report it to the owning agent, unless the agent already read the final result with
//! `check_command` or stopped the command; a report already queued is withdrawn when the final
//! result is read first.

use super::journal::{JournalEntry, JournalTicket, ProcessJournal};
use super::os::ProcessIdentity;
use super::output::{OutputPage, Spool};
use super::{ExecError, Process, ShellRequest, split_status};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;
use suzent_core::{BackgroundTask, BackgroundTaskKind, BackgroundTaskStatus};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Characters of output a completion report carries (seed 000: "the last 8,000 characters").
pub const REPORT_TAIL_CHARS: usize = 8_000;
/// Characters of recent output the sidebar shows.
pub const RECENT_OUTPUT_CHARS: usize = 2_000;
/// After SIGTERM: how long the tree may take to exit before SIGKILL (see `Process::stop_tree`).
const TERM_GRACE: Duration = Duration::from_secs(2);
/// After the tree is gone: how long to wait for the last output.
const DRAIN: Duration = Duration::from_secs(2);

/// Limits of the background command table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandLimits {
    /// Commands running at once, over all chats.
    pub max_active: usize,
    /// Commands running at once in one chat.
    pub max_active_per_chat: usize,
    /// Finished commands whose output is kept for `check_command`; the oldest is forgotten (and
    /// its output deleted) when a newer one finishes beyond this.
    pub max_retained: usize,
    /// Size of one output segment file.
    pub segment_bytes: u64,
    /// Segments kept per command (the retained output is at most `segment_bytes * segments`).
    pub segments: u64,
}

impl Default for CommandLimits {
    fn default() -> Self {
        Self {
            max_active: 128,
            max_active_per_chat: 100,
            max_retained: 64,
            segment_bytes: 1 << 20,
            segments: 2,
        }
    }
}

/// What becomes of background commands in this process once their turn is over (issue 13 item
/// 7): `start_command`'s result tells the agent exactly this, so it is never promised a message
/// that cannot come.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLifetime {
    /// The process stays up and delivers completion messages (`suzent serve`, the app).
    Served,
    /// The process waits for the chat's commands before it exits and delivers their completion
    /// messages first (`suzent run`). `process` names it for the agent.
    AwaitedAtExit {
        /// The process, e.g. `suzent run`.
        process: String,
    },
    /// Commands are stopped when the process exits; a completion message comes only if the
    /// command ends before that (`suzent chat`, `suzent run --no-wait`).
    StoppedAtExit {
        /// The process, e.g. `suzent chat`.
        process: String,
    },
}

impl Default for CommandLifetime {
    fn default() -> Self {
        CommandLifetime::StoppedAtExit {
            process: "this Suzent process".into(),
        }
    }
}

impl CommandLifetime {
    /// The sentence `start_command` ends its result with.
    pub fn promise(&self) -> String {
        match self {
            CommandLifetime::Served => "You will get a message when it ends.".into(),
            CommandLifetime::AwaitedAtExit { process } => format!(
                "You will get a message when it ends: {process} waits for this chat's background commands before it exits."
            ),
            CommandLifetime::StoppedAtExit { process } => format!(
                "It is stopped when {process} exits, and you get a message when it ends only if that happens before; if you need its result, wait for it with check_command (wait_seconds) before you finish."
            ),
        }
    }
}

/// A command that ended on its own, to be reported to its owner.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandFinished {
    /// Command id.
    pub command_id: String,
    /// The owning chat.
    pub chat_id: String,
    /// The command line.
    pub command: String,
    /// `finished` or `timed_out` (a stopped command is never reported).
    pub status: BackgroundTaskStatus,
    /// Exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when killed by one.
    pub signal: Option<i32>,
    /// Total bytes of output.
    pub output_bytes: u64,
    /// The last [`REPORT_TAIL_CHARS`] characters of output.
    pub tail: String,
}

impl CommandFinished {
    /// The completion report as text for the agent.
    pub fn report(&self) -> String {
        let ended = match (self.status, self.exit_code, self.signal) {
            (BackgroundTaskStatus::TimedOut, _, _) => {
                "timed out and was stopped with its child processes".to_string()
            }
            (_, Some(code), _) => format!("exited with code {code}"),
            (_, None, Some(sig)) => format!("was killed by signal {sig}"),
            _ => "ended (exit code unknown)".to_string(),
        };
        let mut out = format!(
            "Background command {} {ended}.\nCommand: {}\nOutput: {} bytes",
            self.command_id, self.command, self.output_bytes
        );
        if self.output_bytes as usize > self.tail.len() {
            out.push_str(&format!(
                "; the last {} characters follow",
                self.tail.chars().count()
            ));
        }
        out.push_str(":\n");
        out.push_str(if self.tail.is_empty() {
            "(no output)"
        } else {
            &self.tail
        });
        out
    }
}

/// Receives what happens to background commands. Implemented by the runtime: it turns completion
/// reports into durable inbox messages and updates into sidebar events.
#[async_trait]
pub trait CommandObserver: Send + Sync + 'static {
    /// A command started, ended or was stopped.
    fn changed(&self, task: &BackgroundTask);

    /// A command ended on its own and its owner has not seen the result: queue the report. Returns
    /// once it is queued (durably), or with a message when it could not be.
    async fn finished(&self, report: CommandFinished) -> Result<(), String>;

    /// The owner read the final result before the queued report was delivered: withdraw it.
    async fn withdrawn(&self, command_id: &str, chat_id: &str);
}

/// A command's state as `check_command` reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSnapshot {
    /// The sidebar view (status, exit code...).
    pub task: BackgroundTask,
    /// Signal that killed it, if any.
    pub signal: Option<i32>,
}

#[derive(Debug, Default)]
struct Delivery {
    /// No report is wanted any more (final result read, or stopped on request).
    suppressed: bool,
    /// A report was queued.
    queued: bool,
}

#[derive(Debug)]
struct State {
    status: BackgroundTaskStatus,
    exit_code: Option<i32>,
    signal: Option<i32>,
    finished_at: Option<DateTime<Utc>>,
}

#[derive(Debug)]
struct Entry {
    id: String,
    chat_id: String,
    command: String,
    started_at: DateTime<Utc>,
    state: Mutex<State>,
    spool: Arc<Spool>,
    stop: CancellationToken,
    done: watch::Receiver<bool>,
    delivery: tokio::sync::Mutex<Delivery>,
    /// Its supervisor is done: the end is recorded and the report (if any) queued.
    settled: AtomicBool,
}

impl Entry {
    fn task(&self) -> BackgroundTask {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        BackgroundTask {
            id: self.id.clone(),
            kind: BackgroundTaskKind::Command,
            chat_id: self.chat_id.clone(),
            title: shorten(&self.command, 200),
            status: state.status,
            exit_code: state.exit_code,
            recent_output: self.spool.tail_chars(RECENT_OUTPUT_CHARS),
            output_bytes: self.spool.total(),
            started_at: self.started_at,
            finished_at: state.finished_at,
        }
    }

    fn status(&self) -> BackgroundTaskStatus {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .status
    }
}

struct Shared {
    dir: PathBuf,
    limits: CommandLimits,
    entries: Mutex<HashMap<String, Arc<Entry>>>,
    /// Finished command ids, oldest first (retention order).
    finished: Mutex<Vec<String>>,
    observer: RwLock<Option<Arc<dyn CommandObserver>>>,
    shutdown: CancellationToken,
    seq: AtomicU64,
    lifetime: RwLock<CommandLifetime>,
    journal: RwLock<Option<Arc<dyn ProcessJournal>>>,
    /// Counts commands whose supervisor is done (wakes [`BackgroundCommands::wait_settled`]).
    settled: watch::Sender<u64>,
}

/// The background command table of one runtime. Cheap to clone; clones share the table.
#[derive(Clone)]
pub struct BackgroundCommands {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for BackgroundCommands {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundCommands")
            .field("dir", &self.shared.dir)
            .field("limits", &self.shared.limits)
            .finish()
    }
}

/// Errors of the command table, as messages for the model.
fn failed(message: impl Into<String>) -> ExecError {
    ExecError(message.into())
}

impl BackgroundCommands {
    /// A table keeping command output under `dir` (created; each command's files are deleted when
    /// it is forgotten).
    pub fn new(dir: impl Into<PathBuf>, limits: CommandLimits) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(Self {
            shared: Arc::new(Shared {
                dir,
                limits,
                entries: Mutex::new(HashMap::new()),
                finished: Mutex::new(Vec::new()),
                observer: RwLock::new(None),
                shutdown: CancellationToken::new(),
                seq: AtomicU64::new(0),
                lifetime: RwLock::new(CommandLifetime::default()),
                journal: RwLock::new(None),
                settled: watch::channel(0).0,
            }),
        })
    }

    /// Sets who hears about starts, ends and completion reports.
    pub fn set_observer(&self, observer: Arc<dyn CommandObserver>) {
        *self
            .shared
            .observer
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(observer);
    }

    /// Sets what becomes of commands in this process once their turn is over (what
    /// `start_command` promises).
    pub fn set_lifetime(&self, lifetime: CommandLifetime) {
        *self
            .shared
            .lifetime
            .write()
            .unwrap_or_else(PoisonError::into_inner) = lifetime;
    }

    /// What becomes of commands in this process once their turn is over.
    pub fn lifetime(&self) -> CommandLifetime {
        self.shared
            .lifetime
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Sets where started process groups are recorded while they run.
    pub fn set_journal(&self, journal: Arc<dyn ProcessJournal>) {
        *self
            .shared
            .journal
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(journal);
    }

    /// Commands of `chat_id` whose end is not settled yet (running, or ending now).
    pub fn unsettled(&self, chat_id: &str) -> usize {
        self.shared
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .filter(|e| e.chat_id == chat_id && !e.settled.load(Ordering::SeqCst))
            .count()
    }

    /// Waits until the commands of `chat_id` have ended and their completion reports are queued:
    /// all of them (`all`), or at least one of those running now. Returns at once when none runs.
    pub async fn wait_settled(&self, chat_id: &str, all: bool) {
        let mut changes = self.shared.settled.subscribe();
        let before = self.unsettled(chat_id);
        if before == 0 {
            return;
        }
        loop {
            if changes.changed().await.is_err() {
                return;
            }
            let now = self.unsettled(chat_id);
            if now == 0 || (!all && now < before) {
                return;
            }
        }
    }

    fn observer(&self) -> Option<Arc<dyn CommandObserver>> {
        self.shared
            .observer
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The limits in force.
    pub fn limits(&self) -> CommandLimits {
        self.shared.limits
    }

    /// Every known command (running and retained), oldest first.
    pub fn list(&self) -> Vec<BackgroundTask> {
        let entries: Vec<Arc<Entry>> = self
            .shared
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        let mut tasks: Vec<BackgroundTask> = entries.iter().map(|e| e.task()).collect();
        tasks.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.id.cmp(&b.id)));
        tasks
    }

    fn entry(&self, command_id: &str, chat_id: Option<&str>) -> Result<Arc<Entry>, ExecError> {
        let entry = self
            .shared
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(command_id)
            .cloned();
        match entry {
            None => Err(failed(format!(
                "no background command '{command_id}' (it never existed, or it finished long ago and its output was discarded)"
            ))),
            Some(e) if chat_id.is_some_and(|c| c != e.chat_id) => Err(failed(format!(
                "background command '{command_id}' belongs to another chat; only the chat that started it can check or stop it"
            ))),
            Some(e) => Ok(e),
        }
    }

    /// Starts `request` for `chat_id` (in its workspace, under its sandbox if any), from the
    /// tool call `tool_call_id` when known. Returns the command id. `timeout`: the whole tree is
    /// stopped when it expires. The process group is recorded in the journal while it runs.
    pub fn start(
        &self,
        chat_id: &str,
        tool_call_id: Option<&str>,
        request: &ShellRequest<'_>,
        timeout: Duration,
    ) -> Result<String, ExecError> {
        if self.shared.shutdown.is_cancelled() {
            return Err(failed("background commands are shut down"));
        }
        let limits = self.shared.limits;
        {
            let entries = self
                .shared
                .entries
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let running: Vec<&Arc<Entry>> = entries
                .values()
                .filter(|e| !e.status().is_final())
                .collect();
            if running.len() >= limits.max_active {
                return Err(failed(format!(
                    "too many background commands are running ({} of {}); stop one with stop_command or wait for one to finish",
                    running.len(),
                    limits.max_active
                )));
            }
            let mine = running.iter().filter(|e| e.chat_id == chat_id).count();
            if mine >= limits.max_active_per_chat {
                return Err(failed(format!(
                    "this chat already runs {mine} background commands (the limit is {}); stop one with stop_command or wait for one to finish",
                    limits.max_active_per_chat
                )));
            }
        }
        if let Some(sandbox) = request.sandbox {
            sandbox.check_available()?;
        }
        let n = self.shared.seq.fetch_add(1, Ordering::Relaxed);
        // The random tail of a UUID v7: unique across processes, so completion reports of a
        // restarted runtime never reuse an inbox message id.
        let uuid = suzent_core::new_id();
        let id = format!("cmd-{}-{n}", &uuid[uuid.len().saturating_sub(12)..]);
        let spool = Arc::new(
            Spool::create(&self.shared.dir, &id, limits.segment_bytes, limits.segments)
                .map_err(|e| failed(format!("cannot create the output file: {e}")))?,
        );
        let process = {
            let spool = Arc::clone(&spool);
            Process::spawn(request, format!("{id}-output"), move |chunk| {
                spool.write(chunk)
            })?
        };
        let (done_tx, done_rx) = watch::channel(false);
        let entry = Arc::new(Entry {
            id: id.clone(),
            chat_id: chat_id.to_string(),
            command: request.script.to_string(),
            started_at: Utc::now(),
            state: Mutex::new(State {
                status: BackgroundTaskStatus::Running,
                exit_code: None,
                signal: None,
                finished_at: None,
            }),
            spool,
            stop: self.shared.shutdown.child_token(),
            done: done_rx,
            delivery: tokio::sync::Mutex::new(Delivery::default()),
            settled: AtomicBool::new(false),
        });
        self.shared
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), Arc::clone(&entry));
        if let Some(o) = self.observer() {
            o.changed(&entry.task());
        }
        // Read at once: a short command may be gone by the time the record is written.
        let leader = process.pid().map(ProcessIdentity::of);
        let ticket = self
            .shared
            .journal
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .map(|journal| JournalTicket {
                journal,
                chat_id: chat_id.to_string(),
                tool_call_id: tool_call_id.map(str::to_string),
            });
        let this = self.clone();
        tokio::spawn(async move {
            let record =
                JournalEntry::record(ticket.as_ref(), Some(&entry.id), &entry.command, leader)
                    .await;
            this.supervise(Arc::clone(&entry), process, timeout, done_tx)
                .await;
            if let Some(record) = record {
                record.finish().await;
            }
            entry.settled.store(true, Ordering::SeqCst);
            this.shared.settled.send_modify(|n| *n += 1);
        });
        Ok(id)
    }

    async fn supervise(
        &self,
        entry: Arc<Entry>,
        // Stops the tree (and kills its container) when dropped: also when this task is
        // dropped (the async runtime shuts down).
        mut process: Process,
        timeout: Duration,
        done: watch::Sender<bool>,
    ) {
        enum End {
            Exited(Option<ExitStatus>),
            TimedOut,
            Stopped,
        }
        let end = tokio::select! {
            status = process.wait() => End::Exited(status),
            () = tokio::time::sleep(timeout) => End::TimedOut,
            () = entry.stop.cancelled() => End::Stopped,
        };
        let status = match end {
            End::Exited(status) => {
                // Output of leftovers may still be on its way; then stop what the shell left.
                process.settle_exit(DRAIN).await;
                let (code, signal) = split_status(status);
                (BackgroundTaskStatus::Finished, code, signal)
            }
            End::TimedOut | End::Stopped => {
                process.stop_tree(DRAIN).await;
                let final_status = if matches!(end, End::TimedOut) {
                    BackgroundTaskStatus::TimedOut
                } else {
                    BackgroundTaskStatus::Stopped
                };
                (final_status, None, None)
            }
        };
        process.release();
        entry.spool.flush();
        {
            let mut state = entry.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.status = status.0;
            state.exit_code = status.1;
            state.signal = status.2;
            state.finished_at = Some(Utc::now());
        }
        let _ = done.send(true);
        let observer = self.observer();
        if let Some(o) = &observer {
            o.changed(&entry.task());
        }
        self.retain(&entry.id);
        if status.0 == BackgroundTaskStatus::Stopped {
            return;
        }
        // Report the end unless the owner already read it (or stopped the command).
        let mut delivery = entry.delivery.lock().await;
        if delivery.suppressed {
            return;
        }
        let Some(o) = observer else { return };
        let report = CommandFinished {
            command_id: entry.id.clone(),
            chat_id: entry.chat_id.clone(),
            command: entry.command.clone(),
            status: status.0,
            exit_code: status.1,
            signal: status.2,
            output_bytes: entry.spool.total(),
            tail: entry.spool.tail_chars(REPORT_TAIL_CHARS),
        };
        match o.finished(report).await {
            Ok(()) => delivery.queued = true,
            Err(e) => tracing::warn!(command = %entry.id, "completion report not queued: {e}"),
        }
    }

    /// Remembers a finished command, forgetting the oldest finished ones beyond the limit.
    fn retain(&self, id: &str) {
        let forget: Vec<String> = {
            let mut finished = self
                .shared
                .finished
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            finished.push(id.to_string());
            let excess = finished
                .len()
                .saturating_sub(self.shared.limits.max_retained);
            finished.drain(..excess).collect()
        };
        if forget.is_empty() {
            return;
        }
        let mut entries = self
            .shared
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for id in forget {
            if let Some(e) = entries.remove(&id) {
                e.spool.remove_files();
            }
        }
    }

    /// Reads output from `offset` (at most `max_bytes`), waiting up to `wait` for the command to
    /// end first. `chat_id`: the caller's chat (commands of other chats are refused); `None` for
    /// the owner's UI. Reading the final result withdraws its completion report.
    pub async fn check(
        &self,
        command_id: &str,
        chat_id: Option<&str>,
        offset: u64,
        max_bytes: usize,
        wait: Duration,
    ) -> Result<(CommandSnapshot, OutputPage), ExecError> {
        let entry = self.entry(command_id, chat_id)?;
        if !wait.is_zero() {
            let mut done = entry.done.clone();
            let _ = tokio::time::timeout(wait, done.wait_for(|d| *d)).await;
        }
        let finished = *entry.done.borrow();
        let page = entry
            .spool
            .read(offset, max_bytes)
            .map_err(|e| failed(format!("cannot read the output of '{command_id}': {e}")))?;
        let (snapshot_status, signal) = {
            let s = entry.state.lock().unwrap_or_else(PoisonError::into_inner);
            (s.status, s.signal)
        };
        if finished && page.next_offset >= page.total && snapshot_status.is_final() {
            self.final_read(&entry).await;
        }
        Ok((
            CommandSnapshot {
                task: entry.task(),
                signal,
            },
            page,
        ))
    }

    async fn final_read(&self, entry: &Entry) {
        let mut delivery = entry.delivery.lock().await;
        if delivery.suppressed {
            return;
        }
        delivery.suppressed = true;
        if delivery.queued
            && let Some(o) = self.observer()
        {
            o.withdrawn(&entry.id, &entry.chat_id).await;
        }
    }

    /// Stops a command and its whole process tree (SIGTERM, then SIGKILL) and waits until it is
    /// gone. No completion report follows. `chat_id`: the caller's chat, `None` for the owner's UI.
    pub async fn stop(
        &self,
        command_id: &str,
        chat_id: Option<&str>,
    ) -> Result<CommandSnapshot, ExecError> {
        let entry = self.entry(command_id, chat_id)?;
        {
            let mut delivery = entry.delivery.lock().await;
            if !*entry.done.borrow() {
                delivery.suppressed = true;
            }
        }
        entry.stop.cancel();
        let mut done = entry.done.clone();
        let _ = tokio::time::timeout(TERM_GRACE + DRAIN * 2, done.wait_for(|d| *d)).await;
        let signal = entry
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .signal;
        Ok(CommandSnapshot {
            task: entry.task(),
            signal,
        })
    }

    /// Stops every running command (on exit) and waits for them to end.
    pub async fn shutdown(&self) {
        self.shared.shutdown.cancel();
        let entries: Vec<Arc<Entry>> = self
            .shared
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        // Until every supervisor is done, its process record forgotten with it.
        let mut changes = self.shared.settled.subscribe();
        let all_settled = || entries.iter().all(|e| e.settled.load(Ordering::SeqCst));
        let _ = tokio::time::timeout(TERM_GRACE + DRAIN * 3, async {
            while !all_settled() {
                if changes.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
    }
}

fn shorten(text: &str, max_chars: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    suzent_core::text::truncate_chars(&one_line, max_chars, "…")
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Commands never outlive the table: their supervisors see the cancellation and stop
        // the trees (when the async runtime is still running).
        self.shutdown.cancel();
    }
}
