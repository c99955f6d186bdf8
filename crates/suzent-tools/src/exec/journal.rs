//! The record of running tool processes (issue 13 item 8): every process group a tool starts is
//! told to a [`ProcessJournal`] right after the spawn (pid, group, start time) and again when it
//! ends, so a runtime that is killed leaves a durable list the next one can check against the
//! OS. The runtime implements the journal with the store; without one nothing is recorded.

use super::os::ProcessIdentity;
use async_trait::async_trait;
use std::sync::Arc;

/// A process group a tool just started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnedProcess {
    /// The chat whose tool started it.
    pub chat_id: String,
    /// The tool call that started it, when known.
    pub tool_call_id: Option<String>,
    /// The background command id (`start_command`); `None` for `run_command`.
    pub command_id: Option<String>,
    /// The command line.
    pub command: String,
    /// The group leader (its pid is the group id).
    pub leader: ProcessIdentity,
}

/// Keeps the durable list of running tool processes.
#[async_trait]
pub trait ProcessJournal: Send + Sync + std::fmt::Debug + 'static {
    /// Records a started group; returns the record id, or `None` when it could not be recorded
    /// (the implementation logs why; the process runs anyway).
    async fn started(&self, process: SpawnedProcess) -> Option<String>;

    /// The runtime saw the group end (or stopped it): forget the record.
    async fn ended(&self, record_id: &str);
}

/// Who records a process and under which chat and call: what a tool hands to the process code.
#[derive(Clone)]
pub struct JournalTicket {
    /// The journal.
    pub journal: Arc<dyn ProcessJournal>,
    /// The chat.
    pub chat_id: String,
    /// The tool call.
    pub tool_call_id: Option<String>,
}

impl std::fmt::Debug for JournalTicket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JournalTicket")
            .field("chat_id", &self.chat_id)
            .field("tool_call_id", &self.tool_call_id)
            .finish()
    }
}

/// A recorded process: forgets its record when finished, or when dropped (a cancelled turn
/// drops the future that ran the command; its tree is killed by the drop as well).
pub(crate) struct JournalEntry {
    journal: Arc<dyn ProcessJournal>,
    record: Option<String>,
}

impl JournalEntry {
    /// Records the group led by `leader` (read right after the spawn) under `ticket` (nothing
    /// when `ticket` is `None`).
    pub(crate) async fn record(
        ticket: Option<&JournalTicket>,
        command_id: Option<&str>,
        command: &str,
        leader: Option<ProcessIdentity>,
    ) -> Option<JournalEntry> {
        let ticket = ticket?;
        let leader = leader?;
        let record = ticket
            .journal
            .started(SpawnedProcess {
                chat_id: ticket.chat_id.clone(),
                tool_call_id: ticket.tool_call_id.clone(),
                command_id: command_id.map(str::to_string),
                command: command.to_string(),
                leader,
            })
            .await;
        Some(JournalEntry {
            journal: Arc::clone(&ticket.journal),
            record,
        })
    }

    /// The process ended: forget its record.
    pub(crate) async fn finish(mut self) {
        if let Some(id) = self.record.take() {
            self.journal.ended(&id).await;
        }
    }
}

impl Drop for JournalEntry {
    fn drop(&mut self) {
        if let Some(id) = self.record.take()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let journal = Arc::clone(&self.journal);
            handle.spawn(async move { journal.ended(&id).await });
        }
    }
}
