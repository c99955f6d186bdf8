//! The turn loop: settle the tool calls the last model step left open, store the message that
//! opens the run, deliver inbox messages in place, then ask the model for the next step, until
//! the model stops, calls wait for approval, the run is cancelled or fails.

use super::{Opening, RunOptions, RunSummary, TurnService, hold_point};
use crate::error::RuntimeError;
use crate::provider::{ModelProvider, ModelRequest, ProviderError, ToolDefinition, build_provider};
use crate::sessions::Session;
use serde_json::Value;
use suzent_core::{AgentEvent, ChatMessage, RunOutcome, ToolCall, parse_tool_arguments};
use suzent_permissions::{redact_text, redact_value};
use suzent_store::{ChatRecord, PendingApproval, StoredMessage};
use tokio_util::sync::CancellationToken;

impl TurnService {
    /// Runs a turn that first stores `opening` (taken out of the option once stored): after the
    /// tool calls the last turn left without results are settled, so the transcript never has
    /// a message between calls and their results. Left in place when the run ends before that:
    /// calls still wait for the user's approval, the run was cancelled, or it failed.
    pub(crate) async fn run_with(
        &self,
        session: &Session,
        chat: &ChatRecord,
        run_id: String,
        options: RunOptions,
        opening: &mut Option<Opening>,
    ) -> Result<RunSummary, RuntimeError> {
        let cancel = session.start_run();
        let model = chat.model.clone().unwrap_or_default();
        self.emit(AgentEvent::RunStarted {
            chat_id: chat.id.clone(),
            run_id: run_id.clone(),
            model: model.clone(),
        });
        let result = self
            .run_loop(session, chat, &run_id, &options, &cancel, opening)
            .await;
        // Everything this run audited is on disk before the run is announced as finished (a
        // CLI process may exit right after).
        self.s.permissions.gate().audit().flush().await;
        let summary = match result {
            Ok(summary) => summary,
            Err(LoopError::Runtime(e)) => {
                self.emit(AgentEvent::RunError {
                    chat_id: chat.id.clone(),
                    run_id: run_id.clone(),
                    message: e.to_string(),
                });
                self.emit(AgentEvent::RunFinished {
                    chat_id: chat.id.clone(),
                    run_id: run_id.clone(),
                    outcome: RunOutcome::Failed,
                    pending_approvals: Vec::new(),
                });
                return Err(e);
            }
            Err(LoopError::Provider(ProviderError::Cancelled)) => RunSummary {
                run_id: run_id.clone(),
                outcome: RunOutcome::Cancelled,
                pending: Vec::new(),
                text: String::new(),
                error: None,
            },
            Err(LoopError::Provider(e)) => {
                let message = e.to_string();
                self.emit(AgentEvent::RunError {
                    chat_id: chat.id.clone(),
                    run_id: run_id.clone(),
                    message: message.clone(),
                });
                RunSummary {
                    run_id: run_id.clone(),
                    outcome: RunOutcome::Failed,
                    pending: Vec::new(),
                    text: String::new(),
                    error: Some(message),
                }
            }
        };
        self.emit(AgentEvent::RunFinished {
            chat_id: chat.id.clone(),
            run_id: run_id.clone(),
            outcome: summary.outcome,
            pending_approvals: summary.pending.iter().map(|p| p.id.clone()).collect(),
        });
        // The agent is idle again: the inbox dispatcher may deliver what waited for it.
        self.s.inbox.wake();
        Ok(summary)
    }

    async fn run_loop(
        &self,
        session: &Session,
        chat: &ChatRecord,
        run_id: &str,
        options: &RunOptions,
        cancel: &CancellationToken,
        opening: &mut Option<Opening>,
    ) -> Result<RunSummary, LoopError> {
        let store = &self.s.store;
        let config = self.s.settings.config();
        // The tools' context with every service they reach (`context.rs`).
        let ctx = self.tool_context(chat, session, cancel.clone()).await?;
        let selected = self.s.chats.selected_tools(chat);
        self.s.toolset.set_selection(&chat.id, &selected);
        let mut provider: Option<(Box<dyn ModelProvider>, String)> = None;
        // The request of the last step, reused: its tool definitions (schemas) are built again
        // only when the loaded tools or the MCP tools change.
        let mut request = ModelRequest {
            model: String::new(),
            system: String::new(),
            messages: Vec::new(),
            tools: Vec::new(),
        };
        let mut request_tools: Option<(Vec<String>, u64)> = None;
        // The transcript as read so far: it is only appended to, so each step reads what is new.
        let mut messages: Vec<StoredMessage> = Vec::new();
        let mut last_text = String::new();
        let mut steps = 0u32;
        loop {
            if cancel.is_cancelled() {
                return Ok(self.summary(run_id, RunOutcome::Cancelled, Vec::new(), last_text));
            }
            let last_seq = messages.last().map_or(0, |m| m.seq);
            let new = store
                .messages_after(&chat.id, last_seq)
                .await
                .map_err(RuntimeError::from)?;
            request
                .messages
                .extend(new.iter().map(|m| m.message.clone()));
            messages.extend(new);
            // This step's tools: the selection, tool_search and the tools activated so far.
            let loaded = self
                .s
                .toolset
                .loaded(&chat.id, &selected)
                .await
                .map_err(RuntimeError::from)?;
            // Settle the tool calls of the last assistant message first (also after a crash).
            if let Some((calls, answered)) = unanswered_calls(&messages)
                && !calls.is_empty()
            {
                let mut waiting = Vec::new();
                for call in calls {
                    if answered.contains(&call.id) {
                        continue;
                    }
                    if let Some(p) = self
                        .settle_call(chat, run_id, &call, &loaded, &ctx, options)
                        .await?
                    {
                        waiting.push(p);
                    }
                }
                if !waiting.is_empty() {
                    let pending = store
                        .pending_approvals(Some(&chat.id))
                        .await
                        .map_err(RuntimeError::from)?;
                    return Ok(self.summary(run_id, RunOutcome::Suspended, pending, last_text));
                }
                if cancel.is_cancelled() {
                    return Ok(self.summary(run_id, RunOutcome::Cancelled, Vec::new(), last_text));
                }
                continue;
            }
            // Every call has its result: the message that opens this run joins the transcript.
            if let Some(first) = opening.take() {
                self.store_opening(chat, run_id, first).await?;
                continue;
            }
            match messages.last().map(|m| &m.message) {
                Some(ChatMessage::Assistant { text, .. }) => {
                    return Ok(self.summary(
                        run_id,
                        RunOutcome::Completed,
                        Vec::new(),
                        text.clone(),
                    ));
                }
                None => {
                    return Ok(self.summary(run_id, RunOutcome::Completed, Vec::new(), last_text));
                }
                _ => {}
            }
            // Inbox messages for this agent join the running turn before the next model step.
            if self.s.inbox.deliver_in_place(&chat.id, run_id).await? {
                continue;
            }
            if steps >= config.max_steps {
                let note = format!("Stopped after {steps} model steps (max_steps in config.toml).");
                store
                    .append_message(
                        &chat.id,
                        Some(run_id),
                        &ChatMessage::Assistant {
                            text: note.clone(),
                            tool_calls: Vec::new(),
                        },
                    )
                    .await
                    .map_err(RuntimeError::from)?;
                return Ok(self.summary(run_id, RunOutcome::Completed, Vec::new(), note));
            }
            steps += 1;
            if provider.is_none() {
                let model = chat.model.clone().ok_or_else(|| RuntimeError::InvalidInput {
                    field: "model".into(),
                    message: "no model set: pass --model provider/model or set default_model in config.toml".into(),
                })?;
                provider = Some(build_provider(
                    &model,
                    &config.providers,
                    self.s.settings.keys(),
                )?);
            }
            let Some((client, model_id)) = provider.as_ref() else {
                continue;
            };
            request.model.clone_from(model_id);
            request.system = self.system_prompt(chat, &ctx).await?;
            let tools_key = (loaded, self.s.toolset.generation());
            if request_tools.as_ref() != Some(&tools_key) {
                request.tools = self.tool_definitions(&tools_key.0);
                request_tools = Some(tools_key);
            }
            let chat_id = chat.id.clone();
            let run = run_id.to_string();
            let events = self.s.events.clone();
            let on_text = move |delta: &str| {
                events.emit(AgentEvent::TextDelta {
                    chat_id: chat_id.clone(),
                    run_id: run.clone(),
                    delta: delta.to_string(),
                });
            };
            let response = tokio::select! {
                r = client.stream(&request, &on_text) => r.map_err(LoopError::Provider)?,
                _ = cancel.cancelled() => return Err(LoopError::Provider(ProviderError::Cancelled)),
            };
            last_text = response.text.clone();
            let assistant = ChatMessage::Assistant {
                text: response.text.clone(),
                tool_calls: response.tool_calls.clone(),
            };
            store
                .append_message(&chat.id, Some(run_id), &assistant)
                .await
                .map_err(RuntimeError::from)?;
            for call in &response.tool_calls {
                self.emit(AgentEvent::ToolCallStart {
                    chat_id: chat.id.clone(),
                    run_id: run_id.to_string(),
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    args: display_args(&call.arguments),
                });
            }
        }
    }

    /// Stores the message that opens a run (see [`Opening`]).
    async fn store_opening(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        opening: Opening,
    ) -> Result<(), RuntimeError> {
        let store = &self.s.store;
        match opening {
            Opening::User(text) => {
                store
                    .append_message(&chat.id, Some(run_id), &ChatMessage::User { text })
                    .await?;
            }
            Opening::Inbox { message_id, text } => {
                // `None`: recorded by an earlier attempt that died; the run continues from the
                // transcript as it is (a finished answer ends it without a model call).
                store
                    .record_inbox_delivery(
                        &message_id,
                        &chat.id,
                        Some(run_id),
                        &ChatMessage::User { text },
                    )
                    .await?;
                hold_point("inbox_recorded").await;
            }
        }
        Ok(())
    }

    fn summary(
        &self,
        run_id: &str,
        outcome: RunOutcome,
        pending: Vec<PendingApproval>,
        text: String,
    ) -> RunSummary {
        RunSummary {
            run_id: run_id.to_string(),
            outcome,
            pending,
            text,
            error: None,
        }
    }

    fn tool_definitions(&self, selected: &[String]) -> Vec<ToolDefinition> {
        selected
            .iter()
            .filter_map(|name| self.s.toolset.get(name))
            .map(|tool| {
                let spec = tool.spec();
                ToolDefinition {
                    name: spec.runtime_name.to_string(),
                    description: spec.description.to_string(),
                    parameters: spec.parameters.clone(),
                }
            })
            .collect()
    }
}

enum LoopError {
    Runtime(RuntimeError),
    Provider(ProviderError),
}

impl From<RuntimeError> for LoopError {
    fn from(e: RuntimeError) -> Self {
        LoopError::Runtime(e)
    }
}

impl From<ProviderError> for LoopError {
    fn from(e: ProviderError) -> Self {
        LoopError::Runtime(RuntimeError::Provider(e))
    }
}

/// The tool calls of the last assistant message and the ids already answered after it, when the
/// transcript ends in tool work (an assistant message with calls, possibly followed by results).
fn unanswered_calls(messages: &[StoredMessage]) -> Option<(Vec<ToolCall>, Vec<String>)> {
    let idx = messages
        .iter()
        .rposition(|m| matches!(m.message, ChatMessage::Assistant { .. }))?;
    if messages[idx + 1..]
        .iter()
        .any(|m| matches!(m.message, ChatMessage::User { .. }))
    {
        return None;
    }
    let ChatMessage::Assistant { tool_calls, .. } = &messages[idx].message else {
        return None;
    };
    if tool_calls.is_empty() {
        return None;
    }
    let answered: Vec<String> = messages[idx + 1..]
        .iter()
        .filter_map(|m| match &m.message {
            ChatMessage::Tool { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    let open: Vec<ToolCall> = tool_calls
        .iter()
        .filter(|c| !answered.contains(&c.id))
        .cloned()
        .collect();
    Some((open, answered))
}

fn display_args(raw: &str) -> Value {
    match parse_tool_arguments(raw) {
        Ok(v) => redact_value(&v),
        Err(_) => Value::String(redact_text(&suzent_core::text::truncate_bytes(raw, 2000))),
    }
}
