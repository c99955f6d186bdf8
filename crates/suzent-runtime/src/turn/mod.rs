//! The turn service: runs a chat's turns. A run stores the message that opens it, streams model
//! steps, settles each tool call through the permission gate (`execute.rs`), and ends when the
//! model stops, the turn waits for approvals, is cancelled or fails (`loop.rs`). Every step is
//! stored before it is announced, and a tool step is marked running before it runs, so a crash
//! never runs a call twice.

pub(crate) mod compact;
mod context;
mod execute;
mod failure;
mod ids;
mod loop_guard;
mod recover;
mod retry;
#[path = "loop.rs"]
mod turn_loop;

use crate::agents::AgentService;
use crate::approvals::ApprovalService;
use crate::background::BackgroundService;
use crate::canvas::CanvasService;
use crate::chats::ChatService;
use crate::dirs::Paths;
use crate::error::RuntimeError;
use crate::event_bus::Events;
use crate::inbox::InboxService;
use crate::memory::MemoryService;
use crate::permissions::PermissionService;
use crate::plans::PlanService;
use crate::sessions::{Session, Sessions};
use crate::settings::SettingsService;
use crate::skills::SkillService;
use crate::toolset::Toolset;
use std::sync::Arc;
use suzent_core::{
    AgentEvent, ApprovalResponse, CompactionInfo, PermissionMode, RunOutcome, new_id,
};
use suzent_store::{ChatRecord, PendingApproval, Store};

/// Environment variable naming a point where the process pauses (for crash tests, which then
/// SIGKILL it): `after_tool_ran` pauses after a tool ran and before its result is stored.
const HOLD_ENV: &str = "SUZENT_TEST_HOLD_AT";

/// How a run answers calls that need approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnAsk {
    /// Store the pending approvals and end the run as suspended (interactive shells).
    #[default]
    Suspend,
    /// Refuse them with a clear reason (headless runs that nobody answers).
    Deny,
}

/// Options of one run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// What to do with calls that need approval.
    pub on_ask: OnAsk,
    /// Run this turn in this permission mode instead of the chat's (unattended runs: `auto`,
    /// with `on_ask: Deny`, the headless profile).
    pub mode: Option<PermissionMode>,
    /// Who started the run when it is not the local user (`peer:<device>` for a paired
    /// device's message); recorded as the origin of every permission decision in the audit.
    pub origin: Option<String>,
}

/// Run options of headless turns (inbox deliveries, sub-agents): calls that would ask are refused.
#[allow(clippy::needless_update)] // other options may be added; they keep their defaults
pub(crate) fn headless_options() -> RunOptions {
    RunOptions {
        on_ask: OnAsk::Deny,
        ..RunOptions::default()
    }
}

/// How a run (`send_message`, `resume_approvals`) ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// Run id.
    pub run_id: String,
    /// Completed, suspended (waiting for approvals), cancelled or failed.
    pub outcome: RunOutcome,
    /// The approvals waiting when suspended.
    pub pending: Vec<PendingApproval>,
    /// The last assistant text of the run.
    pub text: String,
    /// The error message when the run failed.
    pub error: Option<String>,
}

/// The message that opens a run, stored once the calls of the last turn all have results.
pub(crate) enum Opening {
    /// The user's message and its attachments (`send_message`).
    User {
        /// What the user wrote.
        text: String,
        /// Files they attached, checked ([`crate::attachments::Attachments::check`]).
        attachments: Vec<suzent_core::Attachment>,
    },
    /// An inbox message, stored with its delivery record: a redelivery after a crash finds the
    /// record and stores nothing.
    Inbox {
        /// The inbox message id.
        message_id: String,
        /// Its transcript text ([`crate::inbox::transcript_text`]).
        text: String,
    },
}

/// The services a turn uses. Each is a handle; the turn owns none of their state.
pub(crate) struct TurnServices {
    pub(crate) store: Store,
    pub(crate) events: Events,
    pub(crate) paths: Paths,
    pub(crate) settings: Arc<SettingsService>,
    pub(crate) chats: Arc<ChatService>,
    pub(crate) sessions: Arc<Sessions>,
    pub(crate) toolset: Arc<Toolset>,
    pub(crate) permissions: Arc<PermissionService>,
    pub(crate) approvals: Arc<ApprovalService>,
    pub(crate) inbox: Arc<InboxService>,
    pub(crate) background: Arc<BackgroundService>,
    pub(crate) plans: Arc<PlanService>,
    pub(crate) memory: Arc<MemoryService>,
    pub(crate) skills: Arc<SkillService>,
    pub(crate) canvas: Arc<CanvasService>,
    /// Speech output of `speak` (see `speech.rs`).
    pub(crate) speech: Arc<crate::speech::SpeechService>,
    pub(crate) browser: Arc<crate::browser::BrowserService>,
    /// Local models: the in-process engine's context size, for fitting requests.
    pub(crate) local_models: Arc<crate::local_models::LocalModels>,
    /// The messaging channels (`social_message`).
    pub(crate) channels: Arc<crate::channels::Channels>,
}

/// Runs turns.
pub(crate) struct TurnService {
    s: TurnServices,
    /// Fits long chats to the model's context window (`compact.rs`).
    compactor: compact::Compactor,
    /// The agent host given to top-level chats' tools (it runs sub-agents through this service).
    agents: Arc<AgentService>,
}

impl TurnService {
    /// The service.
    pub(crate) fn new(services: TurnServices, agents: Arc<AgentService>) -> TurnService {
        TurnService {
            compactor: compact::Compactor::new(services.store.clone(), services.events.clone()),
            s: services,
            agents,
        }
    }

    /// The agent service.
    pub(crate) fn agents(&self) -> &Arc<AgentService> {
        &self.agents
    }

    /// Sends a user message and runs the turn until the model stops, the turn waits for
    /// approvals, or it fails. Provider errors end the run with outcome `Failed` (and a
    /// `run_error` event); the chat stays usable.
    pub(crate) async fn send_message(
        &self,
        chat_id: &str,
        text: &str,
        attachments: Vec<suzent_core::Attachment>,
        options: RunOptions,
    ) -> Result<RunSummary, RuntimeError> {
        if text.trim().is_empty() && attachments.is_empty() {
            return Err(RuntimeError::InvalidInput {
                field: "text".into(),
                message: "empty message".into(),
            });
        }
        let mut chat = self.s.chats.get(chat_id).await?;
        let attachments = crate::attachments::Attachments.check(
            std::path::Path::new(&chat.workspace),
            chat_id,
            attachments,
        )?;
        if let Some(mode) = options.mode {
            chat.mode = mode;
        }
        // A missing key or a bad model is an error before anything is stored.
        self.s.settings.check_model(chat.model.as_deref())?;
        let session = self.s.sessions.session(chat_id);
        let _guard = session.run_lock.lock().await;
        // Tool calls waiting for the user are answered first: a message after them would leave
        // calls without results in the transcript, which model providers refuse.
        let pending = self.s.store.pending_approvals(Some(chat_id)).await?;
        if !pending.is_empty() {
            let names: Vec<&str> = pending.iter().map(|p| p.tool_name.as_str()).collect();
            return Err(RuntimeError::InvalidInput {
                field: "text".into(),
                message: format!(
                    "chat '{chat_id}' is waiting for the user's approval of {} tool call(s) ({}); answer them (resume_approvals) before sending a new message",
                    pending.len(),
                    names.join(", ")
                ),
            });
        }
        let chat = self.s.chats.name_after_first_message(chat, text).await?;
        // The message is stored by the run, after the calls an interrupted turn left open are
        // settled.
        let mut opening = Some(Opening::User {
            text: text.to_string(),
            attachments,
        });
        self.run_with(&session, &chat, new_id(), options, &mut opening)
            .await
    }

    /// Answers pending approvals (see [`ApprovalService::answer`]) and continues the suspended
    /// turn, under the chat's run lock. With no answers, continues an interrupted turn.
    pub(crate) async fn resume(
        &self,
        chat_id: &str,
        answers: Vec<ApprovalResponse>,
        options: RunOptions,
    ) -> Result<RunSummary, RuntimeError> {
        let chat = self.s.chats.get(chat_id).await?;
        let session = self.s.sessions.session(chat_id);
        let _guard = session.run_lock.lock().await;
        self.s.approvals.answer(chat_id, &answers).await?;
        self.run(&session, &chat, new_id(), options).await
    }

    /// Runs a turn of `chat` that opens with nothing new (a resume, a sub-agent's task already
    /// stored). The caller holds the session's run lock.
    pub(crate) async fn run(
        &self,
        session: &Session,
        chat: &ChatRecord,
        run_id: String,
        options: RunOptions,
    ) -> Result<RunSummary, RuntimeError> {
        self.run_with(session, chat, run_id, options, &mut None)
            .await
    }

    /// Compacts the chat now (`/compact`, the app's Compact button), under its run lock: older
    /// tool outputs cut and older turns summarized by the chat's model, recorded and announced
    /// (`chat_compacted`). `None` when there was nothing to compact.
    ///
    /// Errors: [`RuntimeError::ChatNotFound`], no model or a bad one, and
    /// [`RuntimeError::Compaction`] when the summary could not be written.
    pub(crate) async fn compact_chat(
        &self,
        chat_id: &str,
    ) -> Result<Option<CompactionInfo>, RuntimeError> {
        let chat = self.s.chats.get(chat_id).await?;
        let model = chat
            .model
            .clone()
            .ok_or_else(|| RuntimeError::InvalidInput {
                field: "model".into(),
                message:
                    "no model set: pass --model provider/model or set default_model in config.toml"
                        .into(),
            })?;
        self.s.settings.check_model(Some(&model))?;
        let session = self.s.sessions.session(chat_id);
        let _guard = session.run_lock.lock().await;
        let config = self.s.settings.config();
        let cancel = tokio_util::sync::CancellationToken::new();
        let ctx = self.tool_context(&chat, &session, cancel.clone()).await?;
        let selected = self.s.chats.selected_tools(&chat);
        let loaded = self.s.toolset.loaded(&chat.id, &selected).await?;
        let (client, model_id) = crate::provider::build_provider(
            &model,
            &self.s.settings.providers(&config),
            self.s.settings.keys(),
        )?;
        let mut request = crate::provider::ModelRequest {
            model: model_id.clone(),
            system: self.system_prompt(
                &chat,
                &ctx,
                self.s.memory.prompt_section(&ctx.user_id).await?.as_deref(),
            ),
            messages: Vec::new(),
            tools: self.tool_definitions(&loaded),
        };
        let window = self.window_of(&chat, &config);
        self.fit_to_model(&chat, &config, window, &mut request, false);
        let budget = self.budget(&chat, &config, &request);
        let messages = self.s.store.messages(chat_id).await?;
        self.compactor
            .fit(
                chat_id,
                None,
                &messages,
                budget,
                compact::Trigger::Manual,
                client.as_ref(),
                &model_id,
                &cancel,
            )
            .await
            .map(|fitted| fitted.compacted.map(|r| r.info))
            .map_err(|e| RuntimeError::Compaction {
                chat_id: chat_id.to_string(),
                message: match e {
                    compact::CompactError::Failed(m) => m,
                    compact::CompactError::Cancelled => "stopped".into(),
                },
            })
    }

    /// The chat's compactions, oldest first (the transcript's "conversation compacted"
    /// dividers). Errors: [`RuntimeError::ChatNotFound`], the store's.
    pub(crate) async fn compactions(
        &self,
        chat_id: &str,
    ) -> Result<Vec<CompactionInfo>, RuntimeError> {
        self.s.chats.get(chat_id).await?;
        Ok(self
            .s
            .store
            .compactions(chat_id)
            .await?
            .into_iter()
            .map(|r| r.info)
            .collect())
    }

    fn emit(&self, event: AgentEvent) {
        self.s.events.emit(event);
    }
}

pub(crate) use recover::panic_point;

/// Pauses at a named point when `SUZENT_TEST_HOLD_AT` names it (crash tests).
pub(crate) async fn hold_point(name: &str) {
    if std::env::var(HOLD_ENV).ok().as_deref() == Some(name) {
        eprintln!("suzent: holding at {name}");
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    }
}
