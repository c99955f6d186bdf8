//! Turn notes (issue 19, "durations and states kept after restart"): a service that keeps what
//! the app shows beside the transcript — each tool call's permission decision and the chat's mode
//! then, the user's answer, the tool's wall time, the runs that stopped short of an answer, and
//! each run's tokens and list price.
//! It writes them from the event bus into the store, so no turn code knows about it, and the
//! app reads them back with the transcript (`chat_notes`).
//!
//! The notes of a run's steps (decisions, answers, durations, token usage) are gathered for up
//! to [`BATCH_WINDOW`] and written in one transaction: a tool step's own writes do not queue
//! behind three notes of their own on the one writer connection. A run's failure and its end
//! write what was gathered at once, so the notes of a finished run are on disk right after it.

use crate::error::RuntimeError;
use crate::event_bus::Events;
use std::time::Duration;
use suzent_core::AgentEvent;
use suzent_store::{ChatNotes, Store, StoreError, ToolResolutionNote, TurnNote};
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

/// How long the notes of a run's steps wait to be written with the ones after them.
pub(crate) const BATCH_WINDOW: Duration = Duration::from_millis(50);

/// The turn notes service: a writer task on the bus, and reads.
#[derive(Debug, Clone)]
pub(crate) struct TurnNotes {
    store: Store,
}

impl TurnNotes {
    /// Starts writing the notes of every event from now on (on the current tokio runtime; the
    /// task ends with the bus, after writing what it gathered).
    pub(crate) fn start(store: Store, events: &Events) -> TurnNotes {
        TurnNotes::start_with(store, events, BATCH_WINDOW)
    }

    /// [`TurnNotes::start`] with the notes of steps gathered for up to `window`.
    fn start_with(store: Store, events: &Events, window: Duration) -> TurnNotes {
        let notes = TurnNotes { store };
        let writer = notes.clone();
        let mut rx = events.subscribe();
        tokio::spawn(async move {
            let mut gathered: Vec<TurnNote> = Vec::new();
            // When what was gathered is written at the latest.
            let mut due: Option<Instant> = None;
            loop {
                let received = match due {
                    Some(at) => tokio::select! {
                        r = rx.recv() => Some(r),
                        () = tokio::time::sleep_until(at) => None,
                    },
                    None => Some(rx.recv().await),
                };
                let write_now = match received {
                    // The window closed.
                    None => true,
                    Some(Ok(event)) => {
                        if let Some(note) = note_of(&event) {
                            gathered.push(note);
                            due.get_or_insert_with(|| Instant::now() + window);
                        }
                        matches!(
                            event,
                            AgentEvent::RunError { .. } | AgentEvent::RunFinished { .. }
                        )
                    }
                    Some(Err(RecvError::Lagged(n))) => {
                        tracing::warn!("turn notes: {n} events were missed (the bus was full)");
                        false
                    }
                    Some(Err(RecvError::Closed)) => {
                        writer.write(std::mem::take(&mut gathered)).await;
                        break;
                    }
                };
                if write_now {
                    writer.write(std::mem::take(&mut gathered)).await;
                    due = None;
                }
            }
        });
        notes
    }

    /// Writes `notes` in one transaction; failures are logged (a chat deleted meanwhile has
    /// nothing left to annotate).
    async fn write(&self, notes: Vec<TurnNote>) {
        if notes.is_empty() {
            return;
        }
        match self.store.write_notes(&notes).await {
            Ok(failed) => {
                for e in failed {
                    if !matches!(e, StoreError::NotFound { .. }) {
                        tracing::warn!("turn notes: {e}");
                    }
                }
            }
            Err(e) => tracing::warn!("turn notes: {} notes not written: {e}", notes.len()),
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

/// What `event` says that the transcript does not, as a note (`None` for other events).
fn note_of(event: &AgentEvent) -> Option<TurnNote> {
    Some(match event {
        AgentEvent::ToolPermissionDecision(d) => TurnNote::ToolDecision {
            chat_id: d.chat_id.clone(),
            tool_call_id: d.tool_call_id.clone(),
            decision: d.decision.clone(),
        },
        AgentEvent::ToolPermissionResolution {
            chat_id,
            tool_call_id,
            action_id,
            rule,
            ..
        } => TurnNote::ToolResolution {
            chat_id: chat_id.clone(),
            tool_call_id: tool_call_id.clone(),
            resolution: ToolResolutionNote {
                action_id: *action_id,
                rule: rule.clone(),
            },
        },
        AgentEvent::ToolCallEnd {
            chat_id,
            tool_call_id,
            duration_ms,
            ..
        } => TurnNote::ToolDuration {
            chat_id: chat_id.clone(),
            tool_call_id: tool_call_id.clone(),
            duration_ms: *duration_ms,
        },
        AgentEvent::RunError {
            chat_id,
            run_id,
            message,
        } => TurnNote::TurnFailure {
            chat_id: chat_id.clone(),
            run_id: run_id.clone(),
            message: message.clone(),
        },
        AgentEvent::ModelUsage {
            chat_id,
            run_id,
            model,
            input_tokens,
            output_tokens,
            cost_usd,
        } => TurnNote::ModelUsage {
            chat_id: chat_id.clone(),
            run_id: run_id.clone(),
            model: model.clone(),
            input_tokens: *input_tokens,
            output_tokens: *output_tokens,
            cost_usd: *cost_usd,
        },
        AgentEvent::RunFinished {
            run_id, outcome, ..
        } if outcome.is_stopped_short() => TurnNote::TurnOutcome {
            run_id: run_id.clone(),
            outcome: *outcome,
        },
        _ => return None,
    })
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

    /// An in-memory store with chat `c1`.
    async fn store_with_a_chat() -> Store {
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
        store
    }

    async fn notes_over_a_chat() -> (TurnNotes, Events, Store) {
        let store = store_with_a_chat().await;
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
    async fn the_notes_of_steps_wait_for_the_window_or_the_run_s_end() -> anyhow::Result<()> {
        let store = store_with_a_chat().await;
        let events = Events::new();
        // A window no test outlives: only the run's end (or the bus closing) writes.
        let notes =
            TurnNotes::start_with(store.clone(), &events, std::time::Duration::from_secs(3600));
        let end = |id: &str| AgentEvent::ToolCallEnd {
            chat_id: "c1".into(),
            run_id: "r1".into(),
            tool_call_id: id.into(),
            tool_name: "read_file".into(),
            ok: true,
            output: String::new(),
            duration_ms: 3,
        };
        events.emit(end("call_a"));
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(notes.chat_notes("c1").await?.tools.is_empty());
        events.emit(AgentEvent::RunFinished {
            chat_id: "c1".into(),
            run_id: "r1".into(),
            outcome: RunOutcome::Completed,
            pending_approvals: vec![],
        });
        let got = wait_for(&notes, |n| !n.tools.is_empty()).await;
        assert_eq!(got.tools[0].duration_ms, Some(3));
        // What is gathered when the bus closes is written too.
        events.emit(end("call_b"));
        drop(events);
        let got = wait_for(&notes, |n| n.tools.len() == 2).await;
        assert_eq!(got.tools.len(), 2);
        // And the product's window is short: a step's notes are on disk within it.
        let events = Events::new();
        let notes = TurnNotes::start(store, &events);
        events.emit(end("call_c"));
        let got = wait_for(&notes, |n| n.tools.len() == 3).await;
        assert_eq!(got.tools.len(), 3);
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
