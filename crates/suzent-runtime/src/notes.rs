//! Turn notes (issue 19, "durations and states kept after restart"): a service that keeps what
//! the app shows beside the transcript — each tool call's permission decision and the chat's mode
//! then, the user's answer, the tool's wall time, the runs that stopped short of an answer, and
//! each run's tokens and list price.
//! It writes them from the event bus into the store, so no turn code knows about it, and the
//! app reads them back with the transcript (`chat_notes`).

use crate::error::RuntimeError;
use crate::event_bus::Events;
use suzent_core::AgentEvent;
use suzent_store::{ChatNotes, Store, StoreError, ToolResolutionNote};
use tokio::sync::broadcast::error::RecvError;

/// The turn notes service: a writer task on the bus, and reads.
#[derive(Debug, Clone)]
pub(crate) struct TurnNotes {
    store: Store,
}

impl TurnNotes {
    /// Starts writing the notes of every event from now on (on the current tokio runtime; the
    /// task ends with the bus).
    pub(crate) fn start(store: Store, events: &Events) -> TurnNotes {
        let notes = TurnNotes { store };
        let writer = notes.clone();
        let mut rx = events.subscribe();
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(event) => {
                        if let Err(e) = writer.record(&event).await {
                            // A chat deleted meanwhile has nothing left to annotate.
                            if !matches!(e, StoreError::NotFound { .. }) {
                                tracing::warn!("turn notes: {e}");
                            }
                        }
                    }
                    Err(RecvError::Lagged(n)) => {
                        tracing::warn!("turn notes: {n} events were missed (the bus was full)");
                    }
                    Err(RecvError::Closed) => break,
                }
            }
        });
        notes
    }

    /// Writes what `event` says that the transcript does not. Other events are ignored.
    ///
    /// Errors: the store's ([`StoreError::NotFound`] for a chat deleted meanwhile).
    pub(crate) async fn record(&self, event: &AgentEvent) -> Result<(), StoreError> {
        match event {
            AgentEvent::ToolPermissionDecision(d) => {
                self.store
                    .note_tool_decision(&d.chat_id, &d.tool_call_id, &d.decision)
                    .await
            }
            AgentEvent::ToolPermissionResolution {
                chat_id,
                tool_call_id,
                action_id,
                rule,
                ..
            } => {
                let answer = ToolResolutionNote {
                    action_id: *action_id,
                    rule: rule.clone(),
                };
                self.store
                    .note_tool_resolution(chat_id, tool_call_id, &answer)
                    .await
            }
            AgentEvent::ToolCallEnd {
                chat_id,
                tool_call_id,
                duration_ms,
                ..
            } => {
                self.store
                    .note_tool_duration(chat_id, tool_call_id, *duration_ms)
                    .await
            }
            AgentEvent::RunError {
                chat_id,
                run_id,
                message,
            } => self.store.note_turn_failure(chat_id, run_id, message).await,
            AgentEvent::ModelUsage {
                chat_id,
                run_id,
                model,
                input_tokens,
                output_tokens,
                cost_usd,
            } => {
                self.store
                    .note_model_usage(
                        chat_id,
                        run_id,
                        model,
                        *input_tokens,
                        *output_tokens,
                        *cost_usd,
                    )
                    .await
            }
            AgentEvent::RunFinished {
                run_id, outcome, ..
            } if outcome.is_stopped_short() => self.store.note_turn_outcome(run_id, *outcome).await,
            _ => Ok(()),
        }
    }

    /// The chat's notes (see [`ChatNotes`]).
    ///
    /// Errors: [`RuntimeError::ChatNotFound`]; storage errors.
    pub(crate) async fn chat_notes(&self, chat_id: &str) -> Result<ChatNotes, RuntimeError> {
        if self.store.get_chat(chat_id).await?.is_none() {
            return Err(RuntimeError::ChatNotFound(chat_id.to_string()));
        }
        Ok(self.store.chat_notes(chat_id).await?)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;
    use suzent_core::{
        ApprovalActionId, Behavior, DecisionEvent, DecisionSource, PermissionDecision,
        PermissionMode, ReasonCode, Risk, RunOutcome,
    };
    use suzent_store::{NewChat, ToolCallNote, TurnFailureNote};

    async fn notes_over_a_chat() -> (TurnNotes, Events, Store) {
        let store = Store::open_in_memory().await.unwrap();
        store
            .create_chat(&NewChat {
                id: "c1".into(),
                title: "t".into(),
                workspace: "/tmp".into(),
                model: None,
                mode: PermissionMode::Default,
                tools: None,
            })
            .await
            .unwrap();
        let events = Events::new();
        (TurnNotes::start(store.clone(), &events), events, store)
    }

    /// Waits (bounded) until the writer has written what `done` looks for.
    async fn wait_for(notes: &TurnNotes, done: impl Fn(&ChatNotes) -> bool) -> ChatNotes {
        for _ in 0..200 {
            let n = notes.chat_notes("c1").await.unwrap();
            if done(&n) {
                return n;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        notes.chat_notes("c1").await.unwrap()
    }

    #[tokio::test]
    async fn an_asked_and_allowed_call_keeps_its_decision_mode_answer_and_duration()
    -> anyhow::Result<()> {
        let (notes, events, _store) = notes_over_a_chat().await;
        let ask = PermissionDecision::new(
            Behavior::Ask,
            DecisionSource::Mode,
            ReasonCode::WriteRequiresApproval,
            "writes ask in default mode",
            Risk::Medium,
        );
        events.emit(AgentEvent::ToolPermissionDecision(DecisionEvent {
            chat_id: "c1".into(),
            tool_call_id: "call_w".into(),
            tool_name: "write_file".into(),
            decision: ask.clone(),
        }));
        events.emit(AgentEvent::ToolPermissionResolution {
            chat_id: "c1".into(),
            approval_id: "call_w".into(),
            tool_call_id: "call_w".into(),
            action_id: ApprovalActionId::AllowSession,
            scope: None,
            rule: None,
            feedback: None,
        });
        events.emit(AgentEvent::ToolCallEnd {
            chat_id: "c1".into(),
            run_id: "r1".into(),
            tool_call_id: "call_w".into(),
            tool_name: "write_file".into(),
            ok: true,
            output: "wrote".into(),
            duration_ms: 42,
        });
        let got = wait_for(&notes, |n| {
            n.tools.first().is_some_and(|t| t.duration_ms.is_some())
        })
        .await;
        assert_eq!(
            got.tools,
            vec![ToolCallNote {
                tool_call_id: "call_w".into(),
                decision: Some(ask),
                mode: Some(PermissionMode::Default),
                resolution: Some(ToolResolutionNote {
                    action_id: ApprovalActionId::AllowSession,
                    rule: None,
                }),
                duration_ms: Some(42),
            }]
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_run_stopped_at_max_steps_is_kept_with_its_message_and_outcome() -> anyhow::Result<()>
    {
        let (notes, events, _store) = notes_over_a_chat().await;
        events.emit(AgentEvent::RunError {
            chat_id: "c1".into(),
            run_id: "r1".into(),
            message: "stopped after 3 steps".into(),
        });
        events.emit(AgentEvent::RunFinished {
            chat_id: "c1".into(),
            run_id: "r1".into(),
            outcome: RunOutcome::MaxSteps,
            pending_approvals: vec![],
        });
        // A completed run leaves nothing.
        events.emit(AgentEvent::RunFinished {
            chat_id: "c1".into(),
            run_id: "r2".into(),
            outcome: RunOutcome::Completed,
            pending_approvals: vec![],
        });
        let got = wait_for(&notes, |n| {
            n.failures.first().is_some_and(|f| f.outcome.is_some())
        })
        .await;
        assert_eq!(
            got.failures,
            vec![TurnFailureNote {
                run_id: "r1".into(),
                message: "stopped after 3 steps".into(),
                outcome: Some(RunOutcome::MaxSteps),
                after_seq: 0,
            }]
        );
        Ok(())
    }

    #[tokio::test]
    async fn notes_of_an_unknown_chat_are_refused_by_name() -> anyhow::Result<()> {
        let (notes, _events, _store) = notes_over_a_chat().await;
        let err = notes.chat_notes("nope").await.unwrap_err();
        assert!(
            matches!(&err, RuntimeError::ChatNotFound(id) if id == "nope"),
            "{err:?}"
        );
        Ok(())
    }
}
