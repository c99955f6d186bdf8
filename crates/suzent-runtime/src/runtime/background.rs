//! Background work owned by the runtime: the background command table, sub-agent tasks, the
//! inbox dispatcher's state, the sandbox setting, and what a tool context gets of them.

use super::{Inner, Runtime};
use crate::error::RuntimeError;
use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;
use suzent_core::{AgentEvent, BackgroundTask, BackgroundTaskKind};
use suzent_store::{ChatRecord, NewInboxMessage};
use suzent_tools::{
    BackgroundCommands, CommandFinished, CommandLimits, CommandObserver, Sandbox, SandboxKind,
    ToolContext, sandbox_available,
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Environment variable overriding the inbox lease in milliseconds (crash tests use a short one).
const LEASE_ENV: &str = "SUZENT_INBOX_LEASE_MS";
/// How long a dispatcher owns a message it delivers, renewed while the turn runs.
const DEFAULT_LEASE: Duration = Duration::from_secs(60);

/// The runtime's background state (one per [`Runtime`]).
pub(crate) struct BackgroundState {
    pub(crate) commands: BackgroundCommands,
    /// Wakes the dispatcher: a message was queued or an agent became idle.
    pub(crate) inbox_wake: Arc<Notify>,
    /// This runtime's identity as an inbox lease owner.
    pub(crate) owner: String,
    pub(crate) lease: Duration,
    pub(crate) dispatcher_started: std::sync::atomic::AtomicBool,
    pub(crate) shutdown: CancellationToken,
    /// Sub-agents started by this runtime: chat id -> sidebar view.
    pub(crate) subagents: Mutex<HashMap<String, BackgroundTask>>,
    /// Held while a sub-agent is checked against the limits and registered.
    pub(crate) spawn_gate: tokio::sync::Mutex<()>,
    /// Keeps the command output directory until the runtime is gone.
    _output_dir: tempfile::TempDir,
}

impl BackgroundState {
    pub(crate) fn new(data_dir: &std::path::Path) -> Result<BackgroundState, RuntimeError> {
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
        let lease = std::env::var(LEASE_ENV)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_LEASE);
        Ok(BackgroundState {
            commands,
            inbox_wake: Arc::new(Notify::new()),
            owner: format!("runtime-{}", suzent_core::new_id()),
            lease,
            dispatcher_started: std::sync::atomic::AtomicBool::new(false),
            shutdown: CancellationToken::new(),
            subagents: Mutex::new(HashMap::new()),
            spawn_gate: tokio::sync::Mutex::new(()),
            _output_dir: dir,
        })
    }
}

/// Turns command events into sidebar events and completion reports into inbox messages.
struct Observer {
    runtime: Weak<Inner>,
}

impl Observer {
    fn runtime(&self) -> Option<Runtime> {
        self.runtime.upgrade().map(|inner| Runtime { inner })
    }
}

/// The inbox message id of a command's completion report.
pub(crate) fn command_message_id(command_id: &str) -> String {
    format!("command:{command_id}")
}

#[async_trait]
impl CommandObserver for Observer {
    fn changed(&self, task: &BackgroundTask) {
        if let Some(rt) = self.runtime() {
            rt.emit(AgentEvent::BackgroundTaskUpdate {
                chat_id: task.chat_id.clone(),
                task: task.clone(),
            });
        }
    }

    async fn finished(&self, report: CommandFinished) -> Result<(), String> {
        let Some(rt) = self.runtime() else {
            return Err("the runtime is gone".into());
        };
        let id = command_message_id(&report.command_id);
        rt.enqueue_inbox(NewInboxMessage {
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
        if let Some(rt) = self.runtime()
            && let Err(e) = rt
                .inner
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

impl Runtime {
    /// Connects the background command table to this runtime (called once by `open`).
    pub(crate) fn init_background(&self) {
        self.inner.bg.commands.set_observer(Arc::new(Observer {
            runtime: Arc::downgrade(&self.inner),
        }));
    }

    /// Background commands and sub-agents of every chat (running and recent), oldest first: the
    /// sidebar's data. Live changes arrive as `background_task_update` events.
    pub fn background_tasks(&self) -> Vec<BackgroundTask> {
        let mut tasks = self.inner.bg.commands.list();
        tasks.extend(
            self.inner
                .bg
                .subagents
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .values()
                .cloned(),
        );
        tasks.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.id.cmp(&b.id)));
        tasks
    }

    /// Stops a background command (with its process tree) or a sub-agent, from the UI. A stopped
    /// command sends no completion message. Returns its final state.
    pub async fn stop_background_task(&self, id: &str) -> Result<BackgroundTask, RuntimeError> {
        let sub = self
            .inner
            .bg
            .subagents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned();
        if let Some(task) = sub {
            self.cancel(id);
            return Ok(task);
        }
        self.inner
            .bg
            .commands
            .stop(id, None)
            .await
            .map(|s| s.task)
            .map_err(|e| RuntimeError::InvalidInput {
                field: "id".into(),
                message: e.to_string(),
            })
    }

    /// Stops every background command and the dispatcher (on app exit). Turns in progress are
    /// cancelled; queued inbox messages stay queued for the next start.
    pub async fn shutdown(&self) {
        self.inner.schedules.stop().await;
        self.inner.bg.shutdown.cancel();
        self.inner.bg.inbox_wake.notify_waiters();
        self.inner.bg.commands.shutdown().await;
    }

    /// Turns sandbox mode on or off for one chat (`None`: follow `sandbox` in config.toml).
    /// Turning it on where no sandbox is available is an error.
    pub async fn set_sandbox(
        &self,
        chat_id: &str,
        enabled: Option<bool>,
    ) -> Result<(), RuntimeError> {
        self.chat(chat_id).await?;
        if enabled == Some(true) {
            self.sandbox_kind()?;
        }
        let value = match enabled {
            Some(b) => serde_json::Value::Bool(b),
            None => serde_json::Value::Null,
        };
        self.inner
            .store
            .set_setting(&sandbox_key(chat_id), &value)
            .await?;
        Ok(())
    }

    /// Whether a chat's commands run in the sandbox.
    pub async fn sandbox_enabled(&self, chat_id: &str) -> Result<bool, RuntimeError> {
        let stored = self.inner.store.get_setting(&sandbox_key(chat_id)).await?;
        Ok(match stored {
            Some(serde_json::Value::Bool(b)) => b,
            _ => self.config().sandbox,
        })
    }

    /// The sandbox the configured `sandbox_backend` resolves to here, or why there is none
    /// (error on the `sandbox` field).
    pub(crate) fn sandbox_kind(&self) -> Result<SandboxKind, RuntimeError> {
        let config = self.config();
        sandbox_available(config.sandbox_backend, &sandbox_image(&config)).map_err(|e| {
            RuntimeError::InvalidInput {
                field: "sandbox".into(),
                message: e.to_string(),
            }
        })
    }

    /// The `doctor` line about sandbox mode: whether a sandbox can be created here. Only a
    /// failure while sandbox mode is configured on is an error.
    pub(crate) fn sandbox_check(&self) -> super::DoctorCheck {
        let config = self.config();
        let wanted = config.sandbox;
        match sandbox_available(config.sandbox_backend, &sandbox_image(&config)) {
            Ok(kind) => super::DoctorCheck {
                name: "sandbox".into(),
                ok: true,
                detail: format!(
                    "{} works here; sandbox mode is {}",
                    kind.describe(),
                    if wanted { "on" } else { "off" }
                ),
            },
            Err(e) => super::DoctorCheck {
                name: "sandbox".into(),
                ok: !wanted,
                detail: e.to_string(),
            },
        }
    }

    /// Completes a tool context with the runtime's services: the command table, the agent host
    /// (not for sub-agents) and the sandbox.
    pub(crate) async fn equip_context(
        &self,
        chat: &ChatRecord,
        mut ctx: ToolContext,
    ) -> Result<ToolContext, RuntimeError> {
        ctx.commands = Some(self.inner.bg.commands.clone());
        let is_subagent = self.inner.store.agent_link(&chat.id).await?.is_some();
        if !is_subagent {
            ctx.agents = Some(Arc::new(super::agents::Agents {
                runtime: Arc::downgrade(&self.inner),
            }));
        }
        if self.sandbox_enabled(&chat.id).await? {
            let config = self.config();
            ctx.sandbox = Some(Sandbox {
                workspace: ctx.workspace_root.clone(),
                persistence: ctx.persistence_dir.clone(),
                shared: ctx.shared_dir.clone(),
                network: config.sandbox_network,
                backend: config.sandbox_backend,
                image: sandbox_image(&config),
            });
        }
        Ok(ctx)
    }

    /// Records a sub-agent's sidebar state and announces it.
    pub(crate) fn update_subagent(&self, task: BackgroundTask) {
        debug_assert_eq!(task.kind, BackgroundTaskKind::Agent);
        self.inner
            .bg
            .subagents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(task.id.clone(), task.clone());
        self.emit(AgentEvent::BackgroundTaskUpdate {
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
