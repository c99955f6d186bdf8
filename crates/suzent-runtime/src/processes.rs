//! The process service (issue 13 item 8): the durable record of the process groups tools start
//! (the tools' [`ProcessJournal`]), and the sweep at start that stops what a killed runtime left
//! running.
//!
//! Every `run_command` and `start_command` group is recorded right after its spawn with the
//! leader's pid (= group id), start time and boot, and this runtime's own pid and start time as
//! its owner; the row is deleted when the runtime saw the group end. At the next start, a row
//! still `running` whose owner no longer runs (checked by pid *and* start time, so a live
//! runtime's rows — a `suzent serve` beside a `suzent run` — are left alone) belongs to a runtime
//! that was killed. Its group is stopped only if it is verifiably the recorded one (see
//! [`suzent_tools::stop_recorded_group`]: a reused pid is never killed), and the row is marked
//! `interrupted` with what was found. A background command's chat also gets an inbox message
//! saying so (under the id its completion report would have had), so the agent is told what
//! became of the command it was promised a message about. A `run_command` call's tool step is
//! still `running` in the transcript; the chat's next turn records it as interrupted, as for any
//! call that was running when Suzent stopped.
//!
//! Off Linux the start time cannot be read, so the sweep leaves the rows alone; on Windows the
//! job objects with kill-on-close end the processes with the runtime.

use crate::background::command_message_id;
use crate::error::RuntimeError;
use crate::inbox::InboxService;
use async_trait::async_trait;
use std::sync::Arc;
use suzent_store::{NewInboxMessage, NewProcess, ProcessKind, ProcessRecord, ProcessStatus, Store};
use suzent_tools::{GroupStop, ProcessIdentity, ProcessJournal, SpawnedProcess};

/// The inbox message kind telling a chat its background command was interrupted.
pub(crate) const COMMAND_INTERRUPTED_KIND: &str = "command_interrupted";

/// Records running tool processes and sweeps those of dead runtimes.
pub(crate) struct ProcessService {
    store: Store,
    inbox: Arc<InboxService>,
    /// This runtime's process, the owner of what it records.
    owner: ProcessIdentity,
}

impl std::fmt::Debug for ProcessService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessService")
            .field("owner", &self.owner)
            .finish()
    }
}

/// One record the sweep handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SweptProcess {
    /// The record (now `interrupted`).
    pub(crate) record_id: String,
    /// What was found and done.
    pub(crate) outcome: GroupStop,
}

impl ProcessService {
    /// The service; its records name this process as their owner.
    pub(crate) fn new(store: Store, inbox: Arc<InboxService>) -> ProcessService {
        ProcessService {
            store,
            inbox,
            owner: ProcessIdentity::current(),
        }
    }

    /// Recorded process groups, running and interrupted, of one chat or all, oldest first.
    pub(crate) async fn list(
        &self,
        chat_id: Option<&str>,
    ) -> Result<Vec<ProcessRecord>, RuntimeError> {
        Ok(self.store.processes(chat_id).await?)
    }

    /// Stops the groups recorded as running by runtimes that no longer run, and marks them
    /// interrupted (see the module docs). Rows of live runtimes, and rows that cannot be checked
    /// here, are left alone.
    pub(crate) async fn sweep(&self) -> Result<Vec<SweptProcess>, RuntimeError> {
        let mut swept = Vec::new();
        for row in self.store.processes(None).await? {
            if row.status != ProcessStatus::Running {
                continue;
            }
            let p = &row.process;
            let owner = ProcessIdentity {
                pid: p.owner_pid,
                start_ticks: p.owner_start_ticks,
                boot_id: p.boot_id.clone(),
            };
            if !owner.verifiable() || owner.is_running() {
                continue;
            }
            let leader = ProcessIdentity {
                pid: p.pid,
                start_ticks: p.start_ticks,
                boot_id: p.boot_id.clone(),
            };
            let outcome = suzent_tools::stop_recorded_group(&leader);
            let note = format!(
                "the Suzent process that ran it (pid {}) ended while it ran; at the next start {}",
                p.owner_pid,
                outcome.describe()
            );
            tracing::warn!(
                record = %p.id,
                chat = %p.chat_id,
                pid = p.pid,
                "a tool process of a runtime that was killed: {note}"
            );
            if !self.store.mark_process_interrupted(&p.id, &note).await? {
                // Another runtime swept it first.
                continue;
            }
            if let (ProcessKind::BackgroundCommand, Some(command_id)) = (p.kind, &p.command_id) {
                let message = NewInboxMessage {
                    id: command_message_id(command_id),
                    target: p.chat_id.clone(),
                    sender: format!("command:{command_id}"),
                    kind: COMMAND_INTERRUPTED_KIND.into(),
                    text: format!(
                        "Background command {command_id} was interrupted: {note}. Its effects are unknown; check the current state before starting it again.\nCommand: {}",
                        p.command
                    ),
                };
                if let Err(e) = self.inbox.enqueue(message).await {
                    tracing::warn!(command = %command_id, "cannot tell the chat its command was interrupted: {e}");
                }
            }
            swept.push(SweptProcess {
                record_id: p.id.clone(),
                outcome,
            });
        }
        Ok(swept)
    }
}

#[async_trait]
impl ProcessJournal for ProcessService {
    async fn started(&self, process: SpawnedProcess) -> Option<String> {
        let id = suzent_core::new_id();
        let record = NewProcess {
            id: id.clone(),
            chat_id: process.chat_id,
            kind: if process.command_id.is_some() {
                ProcessKind::BackgroundCommand
            } else {
                ProcessKind::RunCommand
            },
            tool_call_id: process.tool_call_id,
            command_id: process.command_id,
            command: process.command,
            pid: process.leader.pid,
            pgid: process.leader.pid,
            start_ticks: process.leader.start_ticks,
            boot_id: process.leader.boot_id,
            owner_pid: self.owner.pid,
            owner_start_ticks: self.owner.start_ticks,
        };
        match self.store.record_process(&record).await {
            Ok(()) => Some(id),
            Err(e) => {
                tracing::warn!(pid = record.pid, "cannot record a tool process: {e}");
                None
            }
        }
    }

    async fn ended(&self, record_id: &str) {
        if let Err(e) = self.store.forget_process(record_id).await {
            tracing::warn!(
                record = record_id,
                "cannot forget an ended tool process: {e}"
            );
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::os::unix::process::CommandExt;

    fn record(id: &str, leader: &ProcessIdentity, owner: &ProcessIdentity) -> NewProcess {
        NewProcess {
            id: id.into(),
            chat_id: "c1".into(),
            kind: ProcessKind::RunCommand,
            tool_call_id: Some("call_1".into()),
            command_id: None,
            command: "sleep".into(),
            pid: leader.pid,
            pgid: leader.pid,
            start_ticks: leader.start_ticks,
            boot_id: leader.boot_id.clone(),
            owner_pid: owner.pid,
            owner_start_ticks: owner.start_ticks,
        }
    }

    fn sleeper(arg: &str) -> std::process::Child {
        std::process::Command::new("sleep")
            .arg(arg)
            .process_group(0)
            .spawn()
            .unwrap()
    }

    /// A dead owner: this process's pid with another start time.
    fn dead_owner() -> ProcessIdentity {
        let me = ProcessIdentity::current();
        ProcessIdentity {
            start_ticks: me.start_ticks.map(|t| t + 7),
            ..me
        }
    }

    #[tokio::test]
    async fn a_live_process_under_a_recorded_pid_with_another_start_time_is_not_killed()
    -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        let service =
            ProcessService::new(store.clone(), Arc::new(InboxService::new(store.clone())));
        let mut unrelated = sleeper("600.314");
        let live = ProcessIdentity::of(unrelated.id());
        // The record names the pid, but a process that started earlier: the pid was reused.
        let recorded = ProcessIdentity {
            start_ticks: live.start_ticks.map(|t| t.saturating_sub(100)),
            ..live.clone()
        };
        store
            .record_process(&record("r1", &recorded, &dead_owner()))
            .await?;
        let swept = service.sweep().await?;
        assert_eq!(
            swept,
            vec![SweptProcess {
                record_id: "r1".into(),
                outcome: GroupStop::Reused
            }]
        );
        assert!(live.is_running(), "the unrelated process must survive");
        assert_eq!(
            store.processes(None).await?[0].status,
            ProcessStatus::Interrupted
        );
        unrelated.kill()?;
        unrelated.wait()?;
        Ok(())
    }

    #[tokio::test]
    async fn the_group_of_a_dead_owner_is_killed_and_a_live_owners_is_left_alone()
    -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        let service =
            ProcessService::new(store.clone(), Arc::new(InboxService::new(store.clone())));
        let mut orphan = sleeper("600.315");
        let mut owned = sleeper("600.316");
        let orphan_id = ProcessIdentity::of(orphan.id());
        let owned_id = ProcessIdentity::of(owned.id());
        store
            .record_process(&record("orphan", &orphan_id, &dead_owner()))
            .await?;
        store
            .record_process(&record("owned", &owned_id, &ProcessIdentity::current()))
            .await?;
        let swept = service.sweep().await?;
        assert_eq!(
            swept,
            vec![SweptProcess {
                record_id: "orphan".into(),
                outcome: GroupStop::Stopped { processes: 1 }
            }]
        );
        orphan.wait()?;
        assert!(!orphan_id.is_running());
        assert!(owned_id.is_running());
        let statuses: Vec<(String, ProcessStatus)> = store
            .processes(None)
            .await?
            .into_iter()
            .map(|r| (r.process.id, r.status))
            .collect();
        let mut statuses = statuses;
        statuses.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            statuses,
            vec![
                ("orphan".to_string(), ProcessStatus::Interrupted),
                ("owned".to_string(), ProcessStatus::Running)
            ]
        );
        owned.kill()?;
        owned.wait()?;
        Ok(())
    }
}
