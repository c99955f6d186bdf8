//! A failed turn leaves a usable chat (issue #13 item 2). When a run fails (a provider error, a
//! store error, a panic caught at the run's boundary), every call of its last model step still
//! without a result ends as failed with the reason: stored (so the transcript the next request
//! sends has a result for every call) and announced (so no tool card stays "running"). Calls
//! waiting for the user's approval keep waiting. A failed turn is retried with
//! [`TurnService::retry`]: the model is asked again from the transcript as it is.

use super::turn_loop::unanswered_calls;
use super::{RunOptions, RunSummary, TurnService};
use crate::error::RuntimeError;
use std::future::Future;
use suzent_core::{ChatMessage, new_id};
use suzent_store::{ChatRecord, ToolStepStatus};

/// Environment variable naming a point where the process panics (tests of the run boundary):
/// `before_tool_runs` panics when a call is about to run.
const PANIC_ENV: &str = "SUZENT_TEST_PANIC_AT";

/// Panics at a named point when `SUZENT_TEST_PANIC_AT` names it (tests of the run boundary).
pub(crate) fn panic_point(name: &str) {
    if std::env::var(PANIC_ENV).ok().as_deref() == Some(name) {
        panic!("test panic at {name}");
    }
}

/// Runs `fut`, turning a panic inside it into `Err` with the panic's message.
pub(super) async fn catch_panic<T>(fut: impl Future<Output = T>) -> Result<T, String> {
    use futures::FutureExt;
    std::panic::AssertUnwindSafe(fut)
        .catch_unwind()
        .await
        .map_err(|payload| {
            payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string())
        })
}

impl TurnService {
    /// Ends every open call of the chat's last model step as failed with `reason` (see the
    /// module doc). Best effort: a store that fails here is logged, the run's own error stands.
    pub(super) async fn fail_open_calls(&self, chat: &ChatRecord, run_id: &str, reason: &str) {
        if let Err(e) = self.try_fail_open_calls(chat, run_id, reason).await {
            tracing::error!(chat = %chat.id, error = %e, "the open calls of a failed turn could not be closed");
        }
    }

    async fn try_fail_open_calls(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        reason: &str,
    ) -> Result<(), RuntimeError> {
        let store = &self.s.store;
        let messages = store.messages(&chat.id).await?;
        let Some((calls, _)) = unanswered_calls(&messages) else {
            return Ok(());
        };
        let waiting: Vec<String> = store
            .pending_approvals(Some(&chat.id))
            .await?
            .into_iter()
            .map(|p| p.tool_call_id)
            .collect();
        for call in calls.iter().filter(|c| !waiting.contains(&c.id)) {
            let text = if store.tool_step_status(&call.id).await? == Some(ToolStepStatus::Running) {
                format!(
                    "The {} call was interrupted: the turn failed while it ran ({reason}). Its effects are unknown; check the current state before retrying.",
                    call.name
                )
            } else {
                format!(
                    "The {} call did not run: the turn failed first ({reason}).",
                    call.name
                )
            };
            self.finish(chat, run_id, call, Err(text), 0).await?;
        }
        Ok(())
    }

    /// Retries the chat's failed turn: asks the model again from the transcript as it is (the
    /// user's last message, or the results a failed turn left). Refused when the last turn has
    /// an answer (nothing failed), when calls wait for approval (answer them instead), and for a
    /// chat with no messages.
    pub(crate) async fn retry(
        &self,
        chat_id: &str,
        options: RunOptions,
    ) -> Result<RunSummary, RuntimeError> {
        let chat = self.s.chats.get(chat_id).await?;
        self.s.settings.check_model(chat.model.as_deref())?;
        let session = self.s.sessions.session(chat_id);
        let _guard = session.run_lock.lock().await;
        let refuse = |message: String| RuntimeError::InvalidInput {
            field: "chat".into(),
            message,
        };
        let pending = self.s.store.pending_approvals(Some(chat_id)).await?;
        if !pending.is_empty() {
            return Err(refuse(format!(
                "chat '{chat_id}' is waiting for the user's approval of {} tool call(s); answer them (resume) instead of retrying",
                pending.len()
            )));
        }
        let messages = self.s.store.messages(chat_id).await?;
        match messages.last().map(|m| &m.message) {
            None => return Err(refuse(format!("chat '{chat_id}' has no message to retry"))),
            Some(ChatMessage::Assistant { tool_calls, .. }) if tool_calls.is_empty() => {
                return Err(refuse(format!(
                    "the last turn of chat '{chat_id}' was answered; there is nothing to retry (send a new message)"
                )));
            }
            _ => {}
        }
        self.run(&session, &chat, new_id(), options).await
    }
}
