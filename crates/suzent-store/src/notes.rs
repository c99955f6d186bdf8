//! Turn notes: what the app shows beside the transcript and keeps across restarts — each tool
//! call's permission decision, the chat's mode then, the user's answer and the tool's wall time,
//! the runs that stopped short of an answer, and the tokens and list price of each run
//! (migration 0016).

use crate::error::{ChatDbContext, DbContext};
use crate::{Store, StoreError, decode_json, encode_json, ts};
use serde::{Deserialize, Serialize};
use sqlx::sqlite::SqliteConnection;
use suzent_core::{ApprovalActionId, PermissionDecision, PermissionMode, Rule, RunOutcome};

/// How the user answered a tool call's approval.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResolutionNote {
    /// The action the user chose.
    pub action_id: ApprovalActionId,
    /// The rule that answer added, if any.
    pub rule: Option<Rule>,
}

/// What is known of one tool call beyond its transcript messages. Fields are `None` until the
/// matching event happened (a call allowed without asking has no resolution).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallNote {
    /// The call's (claimed) id, as in the transcript.
    pub tool_call_id: String,
    /// The permission engine's decision.
    pub decision: Option<PermissionDecision>,
    /// The chat's permission mode when the engine decided.
    pub mode: Option<PermissionMode>,
    /// The user's answer, when asked.
    pub resolution: Option<ToolResolutionNote>,
    /// The tool's own wall time in milliseconds (0: it did not run).
    pub duration_ms: Option<u64>,
}

/// A run that stopped short of an answer: failed, or stopped by `max_steps`, the loop guard or a
/// context overflow.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnFailureNote {
    /// The run id.
    pub run_id: String,
    /// The message shown (the provider's words and what to do).
    pub message: String,
    /// How the run ended, once it did.
    pub outcome: Option<RunOutcome>,
    /// The chat's last message seq when it failed: the failure shows after that message.
    pub after_seq: i64,
}

/// The tokens a run's model steps used, as the providers reported them.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnUsageNote {
    /// The run id.
    pub run_id: String,
    /// The model of its last step.
    pub model: String,
    /// Request tokens over all its steps.
    pub input_tokens: u64,
    /// Generated tokens over all its steps.
    pub output_tokens: u64,
    /// List price in US dollars; `None` when a step's model had no price.
    pub cost_usd: Option<f64>,
    /// How many model steps reported usage.
    pub steps: u32,
}

/// A chat's notes (`chat_notes`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatNotes {
    /// Notes of its tool calls, in no particular order.
    pub tools: Vec<ToolCallNote>,
    /// Runs that stopped short, oldest first.
    pub failures: Vec<TurnFailureNote>,
    /// Token usage per run, in no particular order.
    pub usage: Vec<TurnUsageNote>,
}

/// One turn note to write ([`Store::write_notes`]).
#[derive(Debug, Clone, PartialEq)]
pub enum TurnNote {
    /// The engine's decision about a tool call; the chat's mode then is read in the same
    /// statement. Replaces an earlier decision (an asked call that was allowed keeps the
    /// newest). A chat that does not exist (deleted meanwhile) records nothing.
    ToolDecision {
        /// The chat.
        chat_id: String,
        /// The call's (claimed) id.
        tool_call_id: String,
        /// The engine's decision.
        decision: PermissionDecision,
    },
    /// The user's answer to a tool call's approval.
    ToolResolution {
        /// The chat.
        chat_id: String,
        /// The call's (claimed) id.
        tool_call_id: String,
        /// The user's answer.
        resolution: ToolResolutionNote,
    },
    /// A tool call's wall time in milliseconds.
    ToolDuration {
        /// The chat.
        chat_id: String,
        /// The call's (claimed) id.
        tool_call_id: String,
        /// Milliseconds (0: it did not run).
        duration_ms: u64,
    },
    /// A run's failure message, shown after the chat's newest message when it is written. A
    /// second message of the same run replaces the first.
    TurnFailure {
        /// The chat.
        chat_id: String,
        /// The run.
        run_id: String,
        /// The message shown.
        message: String,
    },
    /// How a run that failed ended (its heading); nothing for a run with no recorded failure.
    TurnOutcome {
        /// The run.
        run_id: String,
        /// How it ended.
        outcome: RunOutcome,
    },
    /// One model step's tokens and list price (`None` when unknown), added to its run's usage.
    ModelUsage {
        /// The chat.
        chat_id: String,
        /// The run.
        run_id: String,
        /// The step's model.
        model: String,
        /// Request tokens.
        input_tokens: u64,
        /// Generated tokens.
        output_tokens: u64,
        /// List price in US dollars.
        cost_usd: Option<f64>,
    },
}

impl TurnNote {
    /// The chat a note's errors name (`None`: the note does not name one).
    fn chat_id(&self) -> Option<&str> {
        match self {
            TurnNote::ToolDecision { chat_id, .. }
            | TurnNote::ToolResolution { chat_id, .. }
            | TurnNote::ToolDuration { chat_id, .. }
            | TurnNote::TurnFailure { chat_id, .. }
            | TurnNote::ModelUsage { chat_id, .. } => Some(chat_id),
            TurnNote::TurnOutcome { .. } => None,
        }
    }

    /// What the note is, for error messages.
    fn describe(&self) -> String {
        match self {
            TurnNote::ToolDecision { tool_call_id, .. } => {
                format!("the decision about tool call '{tool_call_id}'")
            }
            TurnNote::ToolResolution { tool_call_id, .. } => {
                format!("the answer about tool call '{tool_call_id}'")
            }
            TurnNote::ToolDuration { tool_call_id, .. } => {
                format!("the duration of tool call '{tool_call_id}'")
            }
            TurnNote::TurnFailure { run_id, .. } => format!("the failure of run '{run_id}'"),
            TurnNote::TurnOutcome { run_id, .. } => format!("the outcome of run '{run_id}'"),
            TurnNote::ModelUsage { run_id, .. } => format!("the token usage of run '{run_id}'"),
        }
    }

    /// Runs the note's statement on `conn`, stamped `now`.
    async fn write(&self, conn: &mut SqliteConnection, now: &str) -> Result<(), StoreError> {
        let query = match self {
            TurnNote::ToolDecision {
                chat_id,
                tool_call_id,
                decision,
            } => {
                // `chats.mode` is the bare name; the note keeps the JSON string, as encode_json
                // does.
                sqlx::query(
                    "INSERT INTO tool_call_notes (tool_call_id, chat_id, decision, mode, updated_at)
                     SELECT ?, id, ?, json_quote(mode), ? FROM chats WHERE id = ?
                     ON CONFLICT (tool_call_id) DO UPDATE SET decision = excluded.decision,
                         mode = excluded.mode, updated_at = excluded.updated_at",
                )
                .bind(tool_call_id)
                .bind(encode_json(decision, || self.describe())?)
                .bind(now)
                .bind(chat_id)
            }
            TurnNote::ToolResolution {
                chat_id,
                tool_call_id,
                resolution,
            } => sqlx::query(
                "INSERT INTO tool_call_notes (tool_call_id, chat_id, resolution, updated_at)
                 VALUES (?, ?, ?, ?)
                 ON CONFLICT (tool_call_id) DO UPDATE SET resolution = excluded.resolution,
                     updated_at = excluded.updated_at",
            )
            .bind(tool_call_id)
            .bind(chat_id)
            .bind(encode_json(resolution, || self.describe())?)
            .bind(now),
            TurnNote::ToolDuration {
                chat_id,
                tool_call_id,
                duration_ms,
            } => sqlx::query(
                "INSERT INTO tool_call_notes (tool_call_id, chat_id, duration_ms, updated_at)
                 VALUES (?, ?, ?, ?)
                 ON CONFLICT (tool_call_id) DO UPDATE SET duration_ms = excluded.duration_ms,
                     updated_at = excluded.updated_at",
            )
            .bind(tool_call_id)
            .bind(chat_id)
            .bind(i64::try_from(*duration_ms).unwrap_or(i64::MAX))
            .bind(now),
            TurnNote::TurnFailure {
                chat_id,
                run_id,
                message,
            } => sqlx::query(
                "INSERT INTO turn_failures (run_id, chat_id, message, after_seq, created_at)
                 VALUES (?, ?, ?, (SELECT coalesce(max(seq), 0) FROM messages WHERE chat_id = ?), ?)
                 ON CONFLICT (run_id) DO UPDATE SET message = excluded.message",
            )
            .bind(run_id)
            .bind(chat_id)
            .bind(message)
            .bind(chat_id)
            .bind(now),
            TurnNote::TurnOutcome { run_id, outcome } => {
                sqlx::query("UPDATE turn_failures SET outcome = ? WHERE run_id = ?")
                    .bind(encode_json(outcome, || self.describe())?)
                    .bind(run_id)
            }
            TurnNote::ModelUsage {
                chat_id,
                run_id,
                model,
                input_tokens,
                output_tokens,
                cost_usd,
            } => {
                let tokens = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
                sqlx::query(
                    "INSERT INTO turn_usage (run_id, chat_id, model, input_tokens, output_tokens,
                         cost_usd, steps, updated_at)
                     VALUES (?, ?, ?, ?, ?, ?, 1, ?)
                     ON CONFLICT (run_id) DO UPDATE SET model = excluded.model,
                         input_tokens = input_tokens + excluded.input_tokens,
                         output_tokens = output_tokens + excluded.output_tokens,
                         cost_usd = cost_usd + excluded.cost_usd,
                         steps = steps + 1, updated_at = excluded.updated_at",
                )
                .bind(run_id)
                .bind(chat_id)
                .bind(model)
                .bind(tokens(*input_tokens))
                .bind(tokens(*output_tokens))
                .bind(cost_usd)
                .bind(now)
            }
        };
        let done = query.execute(&mut *conn).await;
        let context = || format!("storing {}", self.describe());
        match self.chat_id() {
            Some(chat_id) => done.chat_db(chat_id, context)?,
            None => done.db(context)?,
        };
        Ok(())
    }
}

impl Store {
    /// Writes one turn note ([`TurnNote`]).
    ///
    /// Errors: [`StoreError::NotFound`] if the chat a note names (other than a decision's)
    /// does not exist, [`StoreError::Database`].
    pub async fn write_note(&self, note: &TurnNote) -> Result<(), StoreError> {
        let now = ts(&self.now());
        note.write(&mut *self.write_conn().await?, &now).await
    }

    /// Writes `notes` in order in one transaction (one commit however many there are). A note
    /// that cannot be written (its chat deleted meanwhile) is left out and its error returned,
    /// in order; the others are written.
    ///
    /// Errors: [`StoreError::Database`] when the transaction cannot begin or commit (then none
    /// is written).
    pub async fn write_notes(&self, notes: &[TurnNote]) -> Result<Vec<StoreError>, StoreError> {
        let mut tx = self
            .begin_write(|| format!("writing {} turn notes", notes.len()))
            .await?;
        let mut failed = Vec::new();
        for note in notes {
            // A statement that fails undoes only itself; the transaction goes on.
            let now = ts(&self.now());
            if let Err(e) = note.write(&mut tx, &now).await {
                failed.push(e);
            }
        }
        tx.commit()
            .await
            .db(|| format!("committing {} turn notes", notes.len()))?;
        Ok(failed)
    }

    /// Records the engine's decision about a tool call ([`TurnNote::ToolDecision`]).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn note_tool_decision(
        &self,
        chat_id: &str,
        tool_call_id: &str,
        decision: &PermissionDecision,
    ) -> Result<(), StoreError> {
        self.write_note(&TurnNote::ToolDecision {
            chat_id: chat_id.into(),
            tool_call_id: tool_call_id.into(),
            decision: decision.clone(),
        })
        .await
    }

    /// Records the user's answer to a tool call's approval ([`TurnNote::ToolResolution`]).
    ///
    /// Errors: [`StoreError::NotFound`] if the chat does not exist, [`StoreError::Database`].
    pub async fn note_tool_resolution(
        &self,
        chat_id: &str,
        tool_call_id: &str,
        resolution: &ToolResolutionNote,
    ) -> Result<(), StoreError> {
        self.write_note(&TurnNote::ToolResolution {
            chat_id: chat_id.into(),
            tool_call_id: tool_call_id.into(),
            resolution: resolution.clone(),
        })
        .await
    }

    /// Records a tool call's wall time in milliseconds ([`TurnNote::ToolDuration`]).
    ///
    /// Errors: [`StoreError::NotFound`] if the chat does not exist, [`StoreError::Database`].
    pub async fn note_tool_duration(
        &self,
        chat_id: &str,
        tool_call_id: &str,
        duration_ms: u64,
    ) -> Result<(), StoreError> {
        self.write_note(&TurnNote::ToolDuration {
            chat_id: chat_id.into(),
            tool_call_id: tool_call_id.into(),
            duration_ms,
        })
        .await
    }

    /// Records a run's failure message, after the chat's newest message
    /// ([`TurnNote::TurnFailure`]).
    ///
    /// Errors: [`StoreError::NotFound`] if the chat does not exist, [`StoreError::Database`].
    pub async fn note_turn_failure(
        &self,
        chat_id: &str,
        run_id: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        self.write_note(&TurnNote::TurnFailure {
            chat_id: chat_id.into(),
            run_id: run_id.into(),
            message: message.into(),
        })
        .await
    }

    /// Records how a run that failed ended ([`TurnNote::TurnOutcome`]).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn note_turn_outcome(
        &self,
        run_id: &str,
        outcome: RunOutcome,
    ) -> Result<(), StoreError> {
        self.write_note(&TurnNote::TurnOutcome {
            run_id: run_id.into(),
            outcome,
        })
        .await
    }

    /// Adds one model step's tokens and price to its run's usage ([`TurnNote::ModelUsage`]).
    ///
    /// Errors: [`StoreError::NotFound`] if the chat does not exist, [`StoreError::Database`].
    pub async fn note_model_usage(
        &self,
        chat_id: &str,
        run_id: &str,
        model: &str,
        input_tokens: u64,
        output_tokens: u64,
        cost_usd: Option<f64>,
    ) -> Result<(), StoreError> {
        self.write_note(&TurnNote::ModelUsage {
            chat_id: chat_id.into(),
            run_id: run_id.into(),
            model: model.into(),
            input_tokens,
            output_tokens,
            cost_usd,
        })
        .await
    }

    /// The chat's notes: every tool call note and its failed runs, oldest first.
    ///
    /// Errors: [`StoreError::Corrupt`] if a stored note does not decode, [`StoreError::Database`].
    pub async fn chat_notes(&self, chat_id: &str) -> Result<ChatNotes, StoreError> {
        type ToolRow = (
            String,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<i64>,
        );
        let rows: Vec<ToolRow> = sqlx::query_as(
            "SELECT tool_call_id, decision, mode, resolution, duration_ms
             FROM tool_call_notes WHERE chat_id = ?",
        )
        .bind(chat_id)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading the tool call notes of chat '{chat_id}'"))?;
        let mut tools = Vec::with_capacity(rows.len());
        for (id, decision, mode, resolution, duration) in rows {
            let col = |c: &'static str| {
                let id = id.clone();
                move || format!("tool_call_notes row '{id}' ({c})")
            };
            tools.push(ToolCallNote {
                decision: decision
                    .as_deref()
                    .map(|d| decode_json(d, col("decision")))
                    .transpose()?,
                mode: mode
                    .as_deref()
                    .map(|m| decode_json(m, col("mode")))
                    .transpose()?,
                resolution: resolution
                    .as_deref()
                    .map(|r| decode_json(r, col("resolution")))
                    .transpose()?,
                duration_ms: duration.map(|d| u64::try_from(d).unwrap_or(0)),
                tool_call_id: id,
            });
        }
        let rows: Vec<(String, String, Option<String>, i64)> = sqlx::query_as(
            "SELECT run_id, message, outcome, after_seq FROM turn_failures
             WHERE chat_id = ? ORDER BY after_seq, created_at",
        )
        .bind(chat_id)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading the failed runs of chat '{chat_id}'"))?;
        let mut failures = Vec::with_capacity(rows.len());
        for (run_id, message, outcome, after_seq) in rows {
            failures.push(TurnFailureNote {
                outcome: outcome
                    .as_deref()
                    .map(|o| decode_json(o, || format!("turn_failures row '{run_id}' (outcome)")))
                    .transpose()?,
                run_id,
                message,
                after_seq,
            });
        }
        type UsageRow = (String, String, i64, i64, Option<f64>, i64);
        let rows: Vec<UsageRow> = sqlx::query_as(
            "SELECT run_id, model, input_tokens, output_tokens, cost_usd, steps FROM turn_usage
             WHERE chat_id = ?",
        )
        .bind(chat_id)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading the token usage of chat '{chat_id}'"))?;
        let usage = rows
            .into_iter()
            .map(
                |(run_id, model, input, output, cost_usd, steps)| TurnUsageNote {
                    run_id,
                    model,
                    input_tokens: u64::try_from(input).unwrap_or(0),
                    output_tokens: u64::try_from(output).unwrap_or(0),
                    cost_usd,
                    steps: u32::try_from(steps).unwrap_or(u32::MAX),
                },
            )
            .collect();
        Ok(ChatNotes {
            tools,
            failures,
            usage,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::{NewChat, StoreError};
    use pretty_assertions::assert_eq;
    use suzent_core::{Behavior, ChatMessage, DecisionSource, ReasonCode, Risk};

    async fn store_with_chat() -> Store {
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

    /// The decision full access makes for any call.
    fn full_access_allow() -> PermissionDecision {
        PermissionDecision::new(
            Behavior::Allow,
            DecisionSource::Mode,
            ReasonCode::FullAccess,
            "full access allows without review",
            Risk::Low,
        )
    }

    #[tokio::test]
    async fn a_tool_calls_decision_answer_and_duration_are_kept_together() -> anyhow::Result<()> {
        let store = store_with_chat().await;
        let decision = full_access_allow();
        store.note_tool_decision("c1", "call_a", &decision).await?;
        let answer = ToolResolutionNote {
            action_id: ApprovalActionId::AllowSession,
            rule: None,
        };
        store.note_tool_resolution("c1", "call_a", &answer).await?;
        store.note_tool_duration("c1", "call_a", 1234).await?;
        store.note_tool_duration("c1", "call_b", 0).await?;
        let mut notes = store.chat_notes("c1").await?;
        notes
            .tools
            .sort_by(|a, b| a.tool_call_id.cmp(&b.tool_call_id));
        assert_eq!(
            notes,
            ChatNotes {
                tools: vec![
                    ToolCallNote {
                        tool_call_id: "call_a".into(),
                        decision: Some(decision),
                        mode: Some(PermissionMode::Default),
                        resolution: Some(answer),
                        duration_ms: Some(1234),
                    },
                    ToolCallNote {
                        tool_call_id: "call_b".into(),
                        decision: None,
                        mode: None,
                        resolution: None,
                        duration_ms: Some(0),
                    },
                ],
                failures: vec![],
                usage: vec![],
            }
        );
        Ok(())
    }

    #[tokio::test]
    async fn notes_written_together_keep_their_order_and_one_that_fails_leaves_the_others()
    -> anyhow::Result<()> {
        let store = store_with_chat().await;
        let decision = full_access_allow();
        let notes = vec![
            TurnNote::ToolDecision {
                chat_id: "c1".into(),
                tool_call_id: "call_a".into(),
                decision: decision.clone(),
            },
            // A chat deleted meanwhile: this one is refused by name, the rest are written.
            TurnNote::ToolDuration {
                chat_id: "gone".into(),
                tool_call_id: "call_x".into(),
                duration_ms: 5,
            },
            TurnNote::ToolDuration {
                chat_id: "c1".into(),
                tool_call_id: "call_a".into(),
                duration_ms: 7,
            },
            TurnNote::ModelUsage {
                chat_id: "c1".into(),
                run_id: "r1".into(),
                model: "m".into(),
                input_tokens: 10,
                output_tokens: 2,
                cost_usd: None,
            },
            TurnNote::ModelUsage {
                chat_id: "c1".into(),
                run_id: "r1".into(),
                model: "m".into(),
                input_tokens: 5,
                output_tokens: 1,
                cost_usd: None,
            },
            TurnNote::TurnFailure {
                chat_id: "c1".into(),
                run_id: "r1".into(),
                message: "stopped".into(),
            },
            // Written after the failure it heads, in the same transaction.
            TurnNote::TurnOutcome {
                run_id: "r1".into(),
                outcome: RunOutcome::MaxSteps,
            },
        ];
        let failed = store.write_notes(&notes).await?;
        assert_eq!(failed.len(), 1);
        assert!(
            matches!(&failed[0], StoreError::NotFound { what: "chat", id } if id == "gone"),
            "{:?}",
            failed[0]
        );
        let got = store.chat_notes("c1").await?;
        assert_eq!(
            got.tools,
            vec![ToolCallNote {
                tool_call_id: "call_a".into(),
                decision: Some(decision),
                mode: Some(PermissionMode::Default),
                resolution: None,
                duration_ms: Some(7),
            }]
        );
        assert_eq!(
            (
                got.usage[0].input_tokens,
                got.usage[0].output_tokens,
                got.usage[0].steps
            ),
            (15, 3, 2)
        );
        assert_eq!(got.failures[0].outcome, Some(RunOutcome::MaxSteps));
        assert!(store.write_notes(&[]).await?.is_empty());
        Ok(())
    }

    #[tokio::test]
    async fn a_runs_steps_add_up_and_an_unpriced_step_leaves_no_cost() -> anyhow::Result<()> {
        let store = store_with_chat().await;
        store
            .note_model_usage("c1", "r1", "gpt-4.1", 1000, 100, Some(0.0028))
            .await?;
        store
            .note_model_usage("c1", "r1", "gpt-4.1", 2000, 50, Some(0.0044))
            .await?;
        store
            .note_model_usage("c1", "r2", "gpt-4.1", 10, 5, Some(0.1))
            .await?;
        store
            .note_model_usage("c1", "r2", "scripted", 10, 5, None)
            .await?;
        let mut usage = store.chat_notes("c1").await?.usage;
        usage.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        assert_eq!(usage.len(), 2);
        assert_eq!(
            (
                usage[0].input_tokens,
                usage[0].output_tokens,
                usage[0].steps
            ),
            (3000, 150, 2)
        );
        assert!((usage[0].cost_usd.unwrap() - 0.0072).abs() < 1e-12);
        assert_eq!(
            (usage[1].model.as_str(), usage[1].cost_usd, usage[1].steps),
            ("scripted", None, 2)
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_failed_run_is_placed_after_the_newest_message_and_gets_its_outcome()
    -> anyhow::Result<()> {
        let store = store_with_chat().await;
        store
            .append_message(
                "c1",
                Some("r1"),
                &ChatMessage::User {
                    text: "hello".into(),
                    attachments: Vec::new(),
                },
            )
            .await?;
        store
            .note_turn_failure("c1", "r1", "the provider said no")
            .await?;
        store.note_turn_outcome("r1", RunOutcome::MaxSteps).await?;
        store.note_turn_outcome("r2", RunOutcome::Failed).await?;
        assert_eq!(
            store.chat_notes("c1").await?.failures,
            vec![TurnFailureNote {
                run_id: "r1".into(),
                message: "the provider said no".into(),
                outcome: Some(RunOutcome::MaxSteps),
                after_seq: 1,
            }]
        );
        Ok(())
    }

    #[tokio::test]
    async fn notes_of_an_unknown_chat_are_refused_and_go_with_a_deleted_chat() -> anyhow::Result<()>
    {
        let store = store_with_chat().await;
        let err = store
            .note_tool_duration("nope", "call_a", 5)
            .await
            .unwrap_err();
        assert!(
            matches!(err, StoreError::NotFound { what: "chat", .. }),
            "{err:?}"
        );
        store.note_tool_duration("c1", "call_a", 5).await?;
        store.note_turn_failure("c1", "r1", "failed").await?;
        store.delete_chat("c1").await?;
        assert_eq!(store.chat_notes("c1").await?, ChatNotes::default());
        Ok(())
    }

    #[tokio::test]
    async fn a_decision_noted_in_the_chats_mode_keeps_the_mode_of_that_moment() -> anyhow::Result<()>
    {
        let store = store_with_chat().await;
        let decision = full_access_allow();
        store.note_tool_decision("c1", "call_a", &decision).await?;
        let patch = crate::ChatPatch {
            mode: Some(PermissionMode::FullAccess),
            ..Default::default()
        };
        store.update_chat("c1", &patch).await?;
        store.note_tool_decision("c1", "call_b", &decision).await?;
        let mut notes = store.chat_notes("c1").await?.tools;
        notes.sort_by(|a, b| a.tool_call_id.cmp(&b.tool_call_id));
        let modes: Vec<_> = notes
            .iter()
            .map(|n| (n.tool_call_id.as_str(), n.mode))
            .collect();
        assert_eq!(
            modes,
            vec![
                ("call_a", Some(PermissionMode::Default)),
                ("call_b", Some(PermissionMode::FullAccess)),
            ]
        );
        assert_eq!(notes[1].decision.as_ref(), Some(&decision));
        // A chat deleted meanwhile: nothing is recorded, and nothing fails.
        store.delete_chat("c1").await?;
        store.note_tool_decision("c1", "call_c", &decision).await?;
        assert_eq!(store.chat_notes("c1").await?, ChatNotes::default());
        Ok(())
    }
}
