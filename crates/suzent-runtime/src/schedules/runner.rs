//! Runs a claimed occurrence as a headless turn: in the job's own chat (created at its first
//! run), in auto mode with the non-interactive profile (what would ask is denied at once, the
//! reason recorded), through the runtime's public API only.

use super::{dream, heartbeat};
use crate::chats::CreateChat;
use crate::runtime::{Runtime, WeakRuntime};
use crate::scheduler::{Clock, JobRunner, RunReport};
use crate::turn::{OnAsk, RunOptions};
use async_trait::async_trait;
use std::sync::{Arc, OnceLock};
use suzent_core::{
    AgentEvent, BackgroundTaskStatus, Behavior, ChatMessage, Delivery, DeniedCall, JobKind,
    PermissionMode, RunOutcome, RunStatus, RunTrigger,
};
use suzent_store::{JobRecord, RunRecord, Store};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// Characters of the answer kept in a run's record.
const DETAIL_CHARS: usize = 500;

pub(crate) struct TurnRunner {
    runtime: Arc<OnceLock<WeakRuntime>>,
    store: Store,
    events: crate::event_bus::Events,
    clock: Arc<dyn Clock>,
}

impl TurnRunner {
    pub(crate) fn new(
        runtime: Arc<OnceLock<WeakRuntime>>,
        store: Store,
        events: crate::event_bus::Events,
        clock: Arc<dyn Clock>,
    ) -> TurnRunner {
        TurnRunner {
            runtime,
            store,
            events,
            clock,
        }
    }
}

pub(crate) fn failed(detail: impl Into<String>) -> RunReport {
    RunReport {
        status: Some(RunStatus::Failed),
        detail: Some(detail.into()),
        ..RunReport::default()
    }
}

/// The first `max` characters of `text`.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[async_trait]
impl JobRunner for TurnRunner {
    async fn run(&self, job: &JobRecord, run: &RunRecord, cancel: CancellationToken) -> RunReport {
        let Some(rt) = self.runtime.get().and_then(WeakRuntime::upgrade) else {
            return failed("the runtime is closed");
        };
        match job.draft.kind {
            JobKind::Prompt => {
                let chat_id = match job_chat(&rt, &self.store, job).await {
                    Ok(c) => c,
                    Err(e) => return failed(format!("cannot open the job's chat: {e}")),
                };
                let text = opening_text(job, run, &job.draft.prompt);
                headless_turn(&rt, &self.store, run, &chat_id, &text, cancel)
                    .await
                    .report
            }
            JobKind::Heartbeat => heartbeat::run(&rt, &self.store, job, run, cancel).await,
            JobKind::Dream => {
                dream::run(&rt, &self.store, job, run, cancel, self.clock.now()).await
            }
        }
    }

    fn updated(&self, job: &JobRecord, run: &RunRecord) {
        let notify = job.draft.delivery == Delivery::Notify
            && run.status.is_final()
            && run.status.was_started()
            && !run.quiet;
        self.events.emit(AgentEvent::ScheduledRunUpdated {
            chat_id: run
                .chat_id
                .clone()
                .or_else(|| job.draft.chat_id.clone())
                .unwrap_or_default(),
            job_id: job.draft.id.clone(),
            job_name: job.draft.name.clone(),
            run_id: run.id.clone(),
            status: run.status,
            trigger: run.trigger,
            notify,
            detail: run.detail.clone(),
        });
    }
}

/// The message that opens a scheduled turn: which job and occurrence it is, then the prompt.
pub(crate) fn opening_text(job: &JobRecord, run: &RunRecord, prompt: &str) -> String {
    let slot = match job.draft.timezone.parse::<chrono_tz::Tz>() {
        Ok(tz) => run
            .slot
            .with_timezone(&tz)
            .format("%Y-%m-%d %H:%M %Z")
            .to_string(),
        Err(_) => run.slot.format("%Y-%m-%d %H:%M UTC").to_string(),
    };
    let why = match run.trigger {
        RunTrigger::Schedule => String::new(),
        RunTrigger::CatchUp if run.missed > 0 => format!(
            "; catching up: {} earlier occurrence(s) were missed while Suzent was not running",
            run.missed
        ),
        RunTrigger::CatchUp => "; catching up: this occurrence was missed while Suzent was not running".into(),
        RunTrigger::Recovery => "; the previous attempt was interrupted, its effects are unknown: check before redoing anything".into(),
        RunTrigger::Retry => format!("; attempt {}: the previous one failed or timed out", run.attempt),
        RunTrigger::Manual => "; started by the user (Run now)".into(),
    };
    format!(
        "[scheduled run of \"{}\" for {slot}{why}. Nobody is watching: calls that need approval are refused.]\n{prompt}",
        job.draft.name
    )
}

/// The job's own chat, created (auto mode) at its first run and bound to the job.
pub(crate) async fn job_chat(
    rt: &Runtime,
    store: &Store,
    job: &JobRecord,
) -> Result<String, crate::RuntimeError> {
    if let Some(id) = &job.draft.chat_id
        && rt.chat(id).await.is_ok()
    {
        return Ok(id.clone());
    }
    let chat = rt
        .create_chat(CreateChat {
            title: Some(job.draft.name.clone()),
            workspace: job.draft.workspace.clone().map(Into::into),
            model: job.draft.model.clone(),
            mode: Some(PermissionMode::Auto),
            tools: None,
        })
        .await?;
    store.set_job_chat(&job.draft.id, &chat.id).await?;
    Ok(chat.id)
}

/// What a headless turn did.
pub(crate) struct HeadlessTurn {
    pub(crate) report: RunReport,
    /// The final answer (empty when the turn failed).
    pub(crate) text: String,
}

/// Runs one headless turn in `chat_id` (auto mode, asks denied) and reports it. Cancelling stops
/// the turn (its running tool's process tree is killed) and the chat's background commands; the
/// report says when one of them could not be stopped.
pub(crate) async fn headless_turn(
    rt: &Runtime,
    store: &Store,
    run: &RunRecord,
    chat_id: &str,
    text: &str,
    cancel: CancellationToken,
) -> HeadlessTurn {
    if let Err(e) = store.set_run_turn(&run.id, chat_id, None).await {
        tracing::warn!(run = %run.id, "recording the chat of a scheduled run: {e}");
    }
    let mut events = rt.subscribe();
    let options = RunOptions {
        on_ask: OnAsk::Deny,
        mode: Some(PermissionMode::Auto),
        origin: None,
    };
    let turn = rt.send_message(chat_id, text, options);
    tokio::pin!(turn);
    let mut decisions = Vec::new();
    let mut cancelled = false;
    let result = loop {
        tokio::select! {
            r = &mut turn => break r,
            ev = events.recv() => match ev {
                Ok(AgentEvent::ToolPermissionDecision(d)) if d.chat_id == chat_id => decisions.push(d),
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => {}
            },
            () = cancel.cancelled(), if !cancelled => {
                cancelled = true;
                rt.cancel(chat_id);
            }
        }
    };
    while let Ok(ev) = events.try_recv() {
        if let AgentEvent::ToolPermissionDecision(d) = ev
            && d.chat_id == chat_id
        {
            decisions.push(d);
        }
    }
    let processes_left = if cancelled {
        stop_background(rt, chat_id).await
    } else {
        false
    };
    let turn_id = result.as_ref().ok().map(|s| s.run_id.clone());
    if let Some(turn_id) = &turn_id
        && let Err(e) = store.set_run_turn(&run.id, chat_id, Some(turn_id)).await
    {
        tracing::warn!(run = %run.id, "recording the turn of a scheduled run: {e}");
    }
    // This turn's steps and calls (another turn of the chat may have run before it).
    let mut steps = 0u32;
    let mut calls = Vec::new();
    if let (Some(turn_id), Ok(messages)) = (&turn_id, rt.messages(chat_id).await) {
        for m in messages
            .iter()
            .filter(|m| m.run_id.as_deref() == Some(turn_id))
        {
            if let ChatMessage::Assistant { tool_calls, .. } = &m.message {
                steps += 1;
                calls.extend(tool_calls.iter().map(|c| c.id.clone()));
            }
        }
    }
    let denied: Vec<DeniedCall> = decisions
        .into_iter()
        .filter(|d| d.decision.behavior == Behavior::Deny && calls.contains(&d.tool_call_id))
        .map(|d| DeniedCall {
            tool: d.tool_name,
            reason_code: d.decision.reason_code.to_string(),
            reason: d.decision.reason,
        })
        .collect();
    let (status, detail, text) = match result {
        Ok(summary) => match summary.outcome {
            RunOutcome::Completed => (
                RunStatus::Completed,
                Some(excerpt(&summary.text, DETAIL_CHARS)),
                summary.text,
            ),
            RunOutcome::Cancelled if cancelled => (RunStatus::Interrupted, None, String::new()),
            RunOutcome::Cancelled => (
                RunStatus::Interrupted,
                Some("stopped by the user".to_string()),
                String::new(),
            ),
            // Stopped short (failed, max_steps, loop detected, context overflow) is a failed
            // run with the reason: never a completion.
            RunOutcome::Failed
            | RunOutcome::MaxSteps
            | RunOutcome::LoopDetected
            | RunOutcome::ContextOverflow
            | RunOutcome::CompactionFailed => (
                RunStatus::Failed,
                summary.error.or(Some("the turn failed".into())),
                String::new(),
            ),
            RunOutcome::Suspended => (
                RunStatus::Failed,
                Some(
                    "the turn stopped to wait for an approval, which an unattended run never does"
                        .into(),
                ),
                String::new(),
            ),
        },
        Err(e) => (RunStatus::Failed, Some(e.to_string()), String::new()),
    };
    HeadlessTurn {
        report: RunReport {
            status: Some(status),
            steps,
            denied,
            detail,
            quiet: false,
            changes: None,
            processes_left,
        },
        text,
    }
}

/// Stops the chat's running background commands; true when one of them is still running after.
async fn stop_background(rt: &Runtime, chat_id: &str) -> bool {
    let running = |rt: &Runtime| {
        rt.background_tasks()
            .into_iter()
            .filter(|t| t.chat_id == chat_id && t.status == BackgroundTaskStatus::Running)
            .map(|t| t.id)
            .collect::<Vec<_>>()
    };
    for id in running(rt) {
        if let Err(e) = rt.stop_background_task(&id).await {
            tracing::warn!(task = %id, "stopping a background task of a timed-out run: {e}");
        }
    }
    !running(rt).is_empty()
}
