//! The background service: the background command table (with its observer, which turns
//! command events into sidebar events and completion reports into inbox messages), the
//! sub-agents' sidebar entries and the spawn limits' lock, and the sandbox setting.

use crate::doctor::DoctorCheck;
use crate::error::RuntimeError;
use crate::event_bus::Events;
use crate::inbox::InboxService;
use crate::sessions::Sessions;
use crate::settings::SettingsService;
use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use suzent_core::{AgentEvent, BackgroundTask, BackgroundTaskKind};
use suzent_store::{ChatRecord, NewInboxMessage, Store};
use suzent_tools::{
    BackgroundCommands, CommandFinished, CommandLifetime, CommandLimits, CommandObserver,
    ProcessJournal, Sandbox, SandboxKind, ToolContext, sandbox_available,
};

/// Background commands and sub-agent entries of one runtime.
pub(crate) struct BackgroundService {
    commands: BackgroundCommands,
    /// Sub-agents started by this runtime: chat id -> sidebar view.
    subagents: Mutex<HashMap<String, BackgroundTask>>,
    /// Held while a sub-agent is checked against the limits and registered.
    spawn_gate: tokio::sync::Mutex<()>,
    store: Store,
    events: Events,
    settings: Arc<SettingsService>,
    sessions: Arc<Sessions>,
    /// Where tool processes are recorded while they run.
    journal: Arc<dyn ProcessJournal>,
    /// Keeps the command output directory until the runtime is gone.
    _output_dir: tempfile::TempDir,
}

impl BackgroundService {
    /// The service; command output is kept under `data_dir/commands`. Completion reports go to
    /// `inbox`; process groups are recorded in `journal` while they run.
    pub(crate) fn new(
        data_dir: &std::path::Path,
        store: Store,
        events: Events,
        settings: Arc<SettingsService>,
        sessions: Arc<Sessions>,
        inbox: Arc<InboxService>,
        journal: Arc<dyn ProcessJournal>,
    ) -> Result<BackgroundService, RuntimeError> {
        let base = data_dir.join("commands");
        let io = |e: std::io::Error| RuntimeError::Io {
            path: base.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(&base).map_err(io)?;
        let dir = tempfile::Builder::new()
            .prefix("run-")
            .tempdir_in(&base)
            .map_err(io)?;
        let commands = BackgroundCommands::new(dir.path(), CommandLimits::default()).map_err(io)?;
        commands.set_observer(Arc::new(Observer {
            inbox,
            events: events.clone(),
            store: store.clone(),
        }));
        commands.set_journal(Arc::clone(&journal));
        Ok(BackgroundService {
            commands,
            subagents: Mutex::new(HashMap::new()),
            spawn_gate: tokio::sync::Mutex::new(()),
            store,
            events,
            settings,
            sessions,
            journal,
            _output_dir: dir,
        })
    }
}

/// Turns command events into sidebar events and completion reports into inbox messages.
struct Observer {
    inbox: Arc<InboxService>,
    events: Events,
    store: Store,
}

/// The inbox message id of a command's completion report.
pub(crate) fn command_message_id(command_id: &str) -> String {
    format!("command:{command_id}")
}

#[async_trait]
impl CommandObserver for Observer {
    fn changed(&self, task: &BackgroundTask) {
        self.events.emit(AgentEvent::BackgroundTaskUpdate {
            chat_id: task.chat_id.clone(),
            task: task.clone(),
        });
    }

    async fn finished(&self, report: CommandFinished) -> Result<(), String> {
        let id = command_message_id(&report.command_id);
        self.inbox
            .enqueue(NewInboxMessage {
                id: id.clone(),
                target: report.chat_id.clone(),
                sender: format!("command:{}", report.command_id),
                kind: "command_finished".into(),
                text: report.report(),
            })
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    async fn withdrawn(&self, command_id: &str, _chat_id: &str) {
        if let Err(e) = self
            .store
            .cancel_inbox(&command_message_id(command_id))
            .await
        {
            tracing::warn!(
                command = command_id,
                "cannot withdraw the completion report: {e}"
            );
        }
    }
}

impl BackgroundService {
    /// Background commands and sub-agents of every chat (running and recent), oldest first: the
    /// sidebar's data. Live changes arrive as `background_task_update` events.
    pub(crate) fn tasks(&self) -> Vec<BackgroundTask> {
        let mut tasks = self.commands.list();
        tasks.extend(self.subagents().values().cloned());
        tasks.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.id.cmp(&b.id)));
        tasks
    }

    /// Stops a background command (with its process tree) or a sub-agent, from the UI. A stopped
    /// command sends no completion message. Returns its final state.
    pub(crate) async fn stop(&self, id: &str) -> Result<BackgroundTask, RuntimeError> {
        let sub = self.subagents().get(id).cloned();
        if let Some(task) = sub {
            self.sessions.cancel(id);
            return Ok(task);
        }
        self.commands
            .stop(id, None)
            .await
            .map(|s| s.task)
            .map_err(|e| RuntimeError::InvalidInput {
                field: "id".into(),
                message: e.to_string(),
            })
    }

    /// Stops every background command and waits for them to end (on app exit).
    pub(crate) async fn shutdown(&self) {
        self.commands.shutdown().await;
    }

    /// Sets what becomes of background commands in this process once their turn is over (what
    /// `start_command` promises the agent).
    pub(crate) fn set_lifetime(&self, lifetime: CommandLifetime) {
        self.commands.set_lifetime(lifetime);
    }

    /// Background commands of `chat_id` not yet ended and reported.
    pub(crate) fn unsettled(&self, chat_id: &str) -> usize {
        self.commands.unsettled(chat_id)
    }

    /// Waits until the commands of `chat_id` have ended and their reports are queued: all of
    /// them (`all`) or at least one.
    pub(crate) async fn wait_settled(&self, chat_id: &str, all: bool) {
        self.commands.wait_settled(chat_id, all).await;
    }

    /// Turns sandbox mode on or off for one chat (`None`: follow `sandbox` in config.toml).
    /// Turning it on where no sandbox is available is an error.
    pub(crate) async fn set_sandbox(
        &self,
        chat_id: &str,
        enabled: Option<bool>,
    ) -> Result<(), RuntimeError> {
        if self.store.get_chat(chat_id).await?.is_none() {
            return Err(RuntimeError::ChatNotFound(chat_id.to_string()));
        }
        if enabled == Some(true) {
            self.sandbox_kind()?;
        }
        let value = match enabled {
            Some(b) => serde_json::Value::Bool(b),
            None => serde_json::Value::Null,
        };
        self.store
            .set_setting(&sandbox_key(chat_id), &value)
            .await?;
        Ok(())
    }

    /// Whether a chat's commands run in the sandbox.
    pub(crate) async fn sandbox_enabled(&self, chat_id: &str) -> Result<bool, RuntimeError> {
        let stored = self.store.get_setting(&sandbox_key(chat_id)).await?;
        Ok(match stored {
            Some(serde_json::Value::Bool(b)) => b,
            _ => self.settings.config().sandbox,
        })
    }

    /// The sandbox the configured `sandbox_backend` resolves to here, or why there is none
    /// (error on the `sandbox` field).
    pub(crate) fn sandbox_kind(&self) -> Result<SandboxKind, RuntimeError> {
        let config = self.settings.config();
        sandbox_available(config.sandbox_backend, &sandbox_image(&config)).map_err(|e| {
            RuntimeError::InvalidInput {
                field: "sandbox".into(),
                message: e.to_string(),
            }
        })
    }

    /// The `doctor` line about sandbox mode: whether a sandbox can be created here. Only a
    /// failure while sandbox mode is configured on is an error.
    pub(crate) fn sandbox_check(&self) -> DoctorCheck {
        let config = self.settings.config();
        let wanted = config.sandbox;
        match sandbox_available(config.sandbox_backend, &sandbox_image(&config)) {
            Ok(kind) => DoctorCheck {
                name: "sandbox".into(),
                ok: true,
                detail: format!(
                    "{} works here; sandbox mode is {}",
                    kind.describe(),
                    if wanted { "on" } else { "off" }
                ),
            },
            Err(e) => DoctorCheck {
                name: "sandbox".into(),
                ok: !wanted,
                detail: e.to_string(),
            },
        }
    }

    /// Gives a tool context the command table and the chat's sandbox (when sandbox mode is on).
    pub(crate) async fn equip(
        &self,
        chat: &ChatRecord,
        ctx: &mut ToolContext,
    ) -> Result<(), RuntimeError> {
        ctx.commands = Some(self.commands.clone());
        ctx.processes = Some(Arc::clone(&self.journal));
        if self.sandbox_enabled(&chat.id).await? {
            let config = self.settings.config();
            ctx.sandbox = Some(Sandbox {
                workspace: ctx.workspace_root.clone(),
                persistence: ctx.persistence_dir.clone(),
                shared: ctx.shared_dir.clone(),
                network: config.sandbox_network,
                backend: config.sandbox_backend,
                image: sandbox_image(&config),
                // Suzent's own config and data directories (issue #12 item 1).
                hidden: ctx.paths.protected().to_vec(),
            });
        }
        Ok(())
    }

    /// The sub-agents' sidebar entries.
    pub(crate) fn subagents(&self) -> MutexGuard<'_, HashMap<String, BackgroundTask>> {
        self.subagents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Held while a new sub-agent is checked against the limits and registered.
    pub(crate) async fn spawn_gate(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.spawn_gate.lock().await
    }

    /// Records a sub-agent's sidebar state and announces it.
    pub(crate) fn update_subagent(&self, task: BackgroundTask) {
        debug_assert_eq!(task.kind, BackgroundTaskKind::Agent);
        self.subagents().insert(task.id.clone(), task.clone());
        self.events.emit(AgentEvent::BackgroundTaskUpdate {
            chat_id: task.chat_id.clone(),
            task,
        });
    }
}

/// The Docker sandbox's image: `sandbox_image` or the default.
fn sandbox_image(config: &suzent_core::Config) -> String {
    config
        .sandbox_image
        .clone()
        .unwrap_or_else(|| suzent_tools::DEFAULT_SANDBOX_IMAGE.to_string())
}

fn sandbox_key(chat_id: &str) -> String {
    format!("chat:{chat_id}:sandbox")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use std::time::Duration;
    use suzent_core::{BackgroundTaskStatus, Config};
    use suzent_store::InboxMessage;
    use suzent_tools::exec::ShellRequest;

    /// Starts `script` as a background command of `chat` through the table `equip` hands out.
    async fn start(s: &TestServices, chat: &ChatRecord, script: &str) -> String {
        let mut ctx = s.tool_context(chat);
        s.background.equip(chat, &mut ctx).await.unwrap();
        assert!(ctx.sandbox.is_none(), "sandbox mode is off by default");
        let commands = ctx.commands.clone().expect("equip gives the command table");
        commands
            .start(
                &chat.id,
                None,
                &ShellRequest {
                    script,
                    cwd: &ctx.workspace_root,
                    sandbox: None,
                },
                Duration::from_secs(60),
            )
            .unwrap()
    }

    /// The chat's inbox once it holds a message (at most 20 s).
    async fn first_message(s: &TestServices, chat_id: &str) -> Vec<InboxMessage> {
        for _ in 0..200 {
            let messages = s.inbox.list(Some(chat_id)).await.unwrap();
            if !messages.is_empty() {
                return messages;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no inbox message for {chat_id} within 20 s");
    }

    #[tokio::test]
    async fn a_command_that_ends_on_its_own_reports_its_exit_code_and_output_to_its_chat()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let chat = s.chat().await;
        let id = start(&s, &chat, "echo built in $(basename \"$PWD\"); exit 3").await;
        let messages = first_message(&s, &chat.id).await;
        assert_eq!(
            messages
                .iter()
                .map(|m| (
                    m.id.clone(),
                    m.target.clone(),
                    m.sender.clone(),
                    m.kind.as_str(),
                    m.text.clone()
                ))
                .collect::<Vec<_>>(),
            vec![(
                command_message_id(&id),
                chat.id.clone(),
                format!("command:{id}"),
                "command_finished",
                format!(
                    "Background command {id} exited with code 3.\nCommand: echo built in $(basename \"$PWD\"); exit 3\nOutput: 12 bytes:\nbuilt in ws\n"
                )
            )]
        );
        let tasks: Vec<(String, BackgroundTaskStatus, Option<i32>, String)> = s
            .background
            .tasks()
            .into_iter()
            .map(|t| (t.id, t.status, t.exit_code, t.recent_output))
            .collect();
        assert_eq!(
            tasks,
            vec![(
                id,
                BackgroundTaskStatus::Finished,
                Some(3),
                "built in ws\n".into()
            )]
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_command_stopped_from_the_sidebar_ends_and_sends_no_report() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let chat = s.chat().await;
        let id = start(&s, &chat, "echo started; sleep 30; echo never").await;
        // Stopped once it is under way (its first line is out).
        for _ in 0..200 {
            if s.background.tasks()[0].recent_output == "started\n" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let task = s.background.stop(&id).await?;
        assert_eq!(
            (task.id.as_str(), task.status, task.recent_output.as_str()),
            (id.as_str(), BackgroundTaskStatus::Stopped, "started\n")
        );
        // A report would be queued as soon as the command ended; give it time to show up.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(s.inbox.list(Some(&chat.id)).await?, Vec::new());
        let err = s.background.stop("cmd-unknown").await.unwrap_err();
        assert!(
            matches!(&err, RuntimeError::InvalidInput { field, .. } if field == "id"),
            "{err}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_chats_sandbox_choice_is_stored_and_unset_follows_the_configuration()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config {
            sandbox: true,
            ..Config::default()
        })
        .await;
        let chat = s.chat().await;
        let other = s.chat().await;
        // Turning it off needs no sandbox on this machine.
        s.background.set_sandbox(&chat.id, Some(false)).await?;
        assert_eq!(
            (
                s.background.sandbox_enabled(&chat.id).await?,
                s.background.sandbox_enabled(&other.id).await?
            ),
            (false, true)
        );
        s.background.set_sandbox(&chat.id, None).await?;
        assert!(s.background.sandbox_enabled(&chat.id).await?);
        let err = s
            .background
            .set_sandbox("no-such-chat", Some(false))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, RuntimeError::ChatNotFound(id) if id == "no-such-chat"),
            "{err}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_sub_agents_entry_is_listed_and_announced() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let chat = s.chat().await;
        let mut events = s.events.subscribe();
        let task = BackgroundTask {
            id: "child-1".into(),
            kind: BackgroundTaskKind::Agent,
            chat_id: chat.id.clone(),
            title: "Research the parser".into(),
            status: BackgroundTaskStatus::Running,
            exit_code: None,
            recent_output: String::new(),
            output_bytes: 0,
            started_at: chrono::Utc::now(),
            finished_at: None,
        };
        s.background.update_subagent(task.clone());
        assert_eq!(s.background.tasks(), vec![task.clone()]);
        match events.try_recv()? {
            AgentEvent::BackgroundTaskUpdate {
                chat_id,
                task: sent,
            } => {
                assert_eq!((chat_id, sent), (chat.id.clone(), task.clone()));
            }
            other => panic!("expected background_task_update, got {other:?}"),
        }
        // Stopping it from the sidebar cancels its session and returns its entry.
        assert_eq!(s.background.stop("child-1").await?, task);
        Ok(())
    }
}
