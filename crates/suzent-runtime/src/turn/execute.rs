//! One tool call: answered approvals run or are refused, a call interrupted by a crash gets an
//! "interrupted" result, arguments are parsed strictly, the tool is looked up (deferred tools
//! must be activated first), then the permission gate decides and the call runs, is refused,
//! or waits for the user's approval. Results are stored, then announced.

use super::{OnAsk, RunOptions, TurnService, hold_point};
use crate::error::RuntimeError;
use chrono::Utc;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use suzent_core::{
    AgentEvent, ApprovalActionId, Behavior, ChatMessage, Rule, ToolCall, parse_tool_arguments,
};
use suzent_permissions::{GateCall, ToolAccess, redact_value};
use suzent_store::{ApprovalStatus, ChatRecord, PendingApproval, ToolStepStatus};
use suzent_tools::{ToolContext, ToolError};
use tokio::sync::oneshot;

impl TurnService {
    /// Decides, runs or refuses one call: waiting for the user's approval (its id), or its
    /// result stored.
    ///
    /// `fresh`: the call came from this run's last model step, so it has no approval and no
    /// tool step yet (nothing else knows its id) and neither is looked up. `rules`: the rules
    /// in force for the chat, read just before (`None`: read them now). `ran`: told when the
    /// tool has run, before its result is stored (dropped untold when it does not run).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn settle_call(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        call: &ToolCall,
        selected: &[String],
        ctx: &ToolContext,
        options: &RunOptions,
        fresh: bool,
        rules: Option<Vec<Rule>>,
        ran: Option<oneshot::Sender<()>>,
    ) -> Result<Settled, RuntimeError> {
        let store = &self.s.store;
        // A call that was answered by the user. One still waiting is decided again below: a
        // rule added since (an answer that remembers, issue #12 item 8) may now allow or deny it.
        let mut waiting: Option<String> = None;
        let answered = if fresh {
            None
        } else {
            store.get_approval(&call.id).await?
        };
        if let Some(record) = answered {
            match (record.status, record.action) {
                (ApprovalStatus::Pending, _) => waiting = Some(record.approval.id),
                (ApprovalStatus::Resolved, Some(ApprovalActionId::Reject))
                | (ApprovalStatus::Resolved, None) => {
                    let mut text =
                        format!("The user rejected this {} call; it did not run.", call.name);
                    if let Some(f) = record.feedback {
                        text.push_str(&format!(" User feedback: {f}"));
                    }
                    return self
                        .finish(chat, run_id, call, Err(text), 0)
                        .await
                        .map(Settled::Stored);
                }
                (ApprovalStatus::Resolved, Some(_)) => {
                    let args = parse_tool_arguments(&call.arguments).unwrap_or_default();
                    // The same schema-typed value the gate decided on.
                    let args = match self.coerce(&call.name, args) {
                        Ok(a) => a,
                        Err(message) => {
                            return self
                                .finish(chat, run_id, call, Err(message), 0)
                                .await
                                .map(Settled::Stored);
                        }
                    };
                    return self
                        .execute(chat, run_id, call, args, ctx, record.feedback, None, ran)
                        .await
                        .map(Settled::Stored);
                }
            }
        }
        // A call that started running in a process that died.
        if !fresh
            && waiting.is_none()
            && store.tool_step_status(&call.id).await? == Some(ToolStepStatus::Running)
        {
            let text = format!(
                "The {} call was interrupted: Suzent stopped while it was running, so its effects are unknown. Check the current state before retrying.",
                call.name
            );
            return self
                .finish(chat, run_id, call, Err(text), 0)
                .await
                .map(Settled::Stored);
        }
        let args = match parse_tool_arguments(&call.arguments) {
            Ok(a) => a,
            Err(message) => {
                return self
                    .finish(chat, run_id, call, Err(message), 0)
                    .await
                    .map(Settled::Stored);
            }
        };
        let mut found = self.s.toolset.get(&call.name);
        if found.is_none() && call.name.starts_with(suzent_mcp::PREFIX) {
            // An MCP tool of a server not listed yet.
            self.s.toolset.ensure_discovered().await;
            found = self.s.toolset.get(&call.name);
        }
        let Some(tool) = found else {
            let known = selected.join(", ");
            return self
                .finish(
                    chat,
                    run_id,
                    call,
                    Err(format!(
                        "unknown tool '{}'. Available tools: {known}",
                        call.name
                    )),
                    0,
                )
                .await
                .map(Settled::Stored);
        };
        if !selected.iter().any(|s| s == tool.spec().runtime_name) {
            // Deferred tools are not loaded until tool_search activates them (mcp case 3).
            let msg = if tool.spec().deferrable {
                format!(
                    "tool '{}' is not loaded in this chat: it is a deferred tool and did not run. Activate it first with tool_search(query=\"{}\"); it is callable from the next step.",
                    call.name,
                    tool.spec().runtime_name
                )
            } else {
                format!(
                    "tool '{}' is not enabled in this chat. Enabled tools: {}",
                    call.name,
                    selected.join(", ")
                )
            };
            return self
                .finish(chat, run_id, call, Err(msg), 0)
                .await
                .map(Settled::Stored);
        }
        // Arguments are what the schema says before anything looks at them (issue #12 item 6):
        // the gate, the audit log and the tool all see the coerced value.
        let args = match suzent_tools::coerce_args(&tool.spec().parameters, args) {
            Ok(a) => a,
            Err(message) => {
                return self
                    .finish(
                        chat,
                        run_id,
                        call,
                        Err(format!("invalid arguments: {message}")),
                        0,
                    )
                    .await
                    .map(Settled::Stored);
            }
        };
        // The one gate: request, engine, reviewer, headless profile, audit line and event.
        let gate_call = GateCall {
            chat_id: &chat.id,
            run_id,
            tool_call_id: &call.id,
            tool_name: &call.name,
            mode: chat.mode,
            // A call already waiting keeps waiting rather than being refused by a headless
            // resume: only a rule may settle it here.
            headless: options.on_ask == OnAsk::Deny && waiting.is_none(),
            origin: options.origin.as_deref(),
        };
        // The rules in force, read once: the gate decides with them and the reading tools
        // leave out what they refuse.
        let rules = match rules {
            Some(rules) => rules,
            None => self.s.permissions.rules_for(chat).await?,
        };
        let decision = match self
            .s
            .permissions
            .decide(gate_call, chat, tool.as_ref(), &args, ctx, &rules)
            .await
        {
            Ok(outcome) => outcome.decision,
            Err(message) => {
                return self
                    .finish(chat, run_id, call, Err(message), 0)
                    .await
                    .map(Settled::Stored);
            }
        };
        if let Some(approval_id) = waiting {
            return self
                .settle_waiting(chat, run_id, call, args, ctx, approval_id, &decision, ran)
                .await;
        }
        match decision.behavior {
            Behavior::Allow => self
                .execute(chat, run_id, call, args, ctx, None, Some(&rules), ran)
                .await
                .map(Settled::Stored),
            Behavior::Deny => {
                let msg = format!(
                    "Permission denied ({}): {}",
                    decision.reason_code, decision.reason
                );
                self.finish(chat, run_id, call, Err(msg), 0)
                    .await
                    .map(Settled::Stored)
            }
            Behavior::Ask => {
                let shown = redact_value(&args);
                let approval = PendingApproval {
                    id: call.id.clone(),
                    chat_id: chat.id.clone(),
                    run_id: run_id.to_string(),
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    args: shown.clone(),
                    decision: decision.clone(),
                    created_at: Utc::now(),
                };
                store.insert_pending_approval(&approval).await?;
                self.emit(AgentEvent::ToolApprovalRequest {
                    chat_id: chat.id.clone(),
                    run_id: run_id.to_string(),
                    approval_id: approval.id.clone(),
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    args: shown,
                    decision,
                });
                Ok(Settled::Waiting(approval.id))
            }
        }
    }

    /// A call that waits for the user, decided again: allowed or denied by a rule added since,
    /// it is settled (the approval resolved as `allow_once` or `reject`, audited and announced,
    /// so the app drops its dialog) and runs or is refused; otherwise it keeps waiting.
    #[allow(clippy::too_many_arguments)]
    async fn settle_waiting(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        call: &ToolCall,
        args: Value,
        ctx: &ToolContext,
        approval_id: String,
        decision: &suzent_core::PermissionDecision,
        ran: Option<oneshot::Sender<()>>,
    ) -> Result<Settled, RuntimeError> {
        let action = match decision.behavior {
            // Only a rule releases a waiting call (never a second opinion of the reviewer).
            Behavior::Allow if decision.source == suzent_core::DecisionSource::Rule => {
                ApprovalActionId::AllowOnce
            }
            Behavior::Deny => ApprovalActionId::Reject,
            _ => return Ok(Settled::Waiting(approval_id)),
        };
        if !self
            .s
            .store
            .resolve_approval(&approval_id, action, None)
            .await?
        {
            // Answered meanwhile by someone else: leave it to that answer.
            return Ok(Settled::Waiting(approval_id));
        }
        self.s
            .permissions
            .gate()
            .record_resolution(suzent_permissions::Resolution {
                chat_id: &chat.id,
                run_id,
                tool_call_id: &call.id,
                tool: &call.name,
                action,
                feedback: None,
                rule_id: decision.matched_rules.first().map(String::as_str),
            })
            .await;
        self.emit(AgentEvent::ToolPermissionResolution {
            chat_id: chat.id.clone(),
            approval_id: approval_id.clone(),
            tool_call_id: call.id.clone(),
            action_id: action,
            scope: None,
            rule: None,
            feedback: None,
        });
        if action == ApprovalActionId::AllowOnce {
            self.execute(chat, run_id, call, args, ctx, None, None, ran)
                .await
                .map(Settled::Stored)
        } else {
            let msg = format!(
                "Permission denied ({}): {}",
                decision.reason_code, decision.reason
            );
            self.finish(chat, run_id, call, Err(msg), 0)
                .await
                .map(Settled::Stored)
        }
    }

    /// The arguments coerced to the schema of the tool `name` (unchanged for an unknown tool).
    fn coerce(&self, name: &str, args: Value) -> Result<Value, String> {
        match self.s.toolset.get(name) {
            Some(tool) => suzent_tools::coerce_args(&tool.spec().parameters, args)
                .map_err(|m| format!("invalid arguments: {m}")),
            None => Ok(args),
        }
    }

    /// Runs an allowed call and stores its result (returned as stored). `rules`: the rules in
    /// force the gate just decided with (`None`: read them now). `ran`: told once the tool has
    /// run, before its result is stored.
    #[allow(clippy::too_many_arguments)]
    async fn execute(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        call: &ToolCall,
        args: Value,
        ctx: &ToolContext,
        feedback: Option<String>,
        rules: Option<&[Rule]>,
        ran: Option<oneshot::Sender<()>>,
    ) -> Result<StoredResult, RuntimeError> {
        let store = &self.s.store;
        let Some(tool) = self.s.toolset.get(&call.name) else {
            return self
                .finish(
                    chat,
                    run_id,
                    call,
                    Err(format!("unknown tool '{}'", call.name)),
                    0,
                )
                .await;
        };
        // The call's own context knows its id (`render_ui` records which call drew a surface).
        let mut ctx = ctx.clone();
        ctx.tool_call_id = Some(call.id.clone());
        // Reading tools leave out what the chat's deny and ask read rules refuse (issue #12
        // item 4): the rules in force now, as the gate saw them.
        let read_now;
        let rules = match rules {
            Some(rules) => rules,
            None => {
                read_now = self.s.permissions.rules_for(chat).await?;
                &read_now
            }
        };
        ctx.paths = Arc::new(self.s.permissions.with_read_rules(chat, &ctx.paths, rules));
        // A call that only reads files (what the engine decides as a read: read_file,
        // grep_search, glob_search) leaves nothing a crash could make unknown: it is not marked
        // running (after a crash it reads again) and its step is recorded done with its result.
        // Any other call runs once its running mark is stored, so a crash leaves it interrupted,
        // never run twice.
        let reads_only = matches!(tool.access(&args, &ctx), Ok(ToolAccess::Read(_)));
        if !reads_only
            && !store
                .begin_tool_step(&chat.id, &call.id, &call.name, &call.arguments)
                .await?
        {
            // Another process began it and it never finished (else a result would exist).
            let text = format!(
                "The {} call was interrupted before its result was recorded; its effects are unknown.",
                call.name
            );
            return self.finish(chat, run_id, call, Err(text), 0).await;
        }
        super::panic_point("before_tool_runs");
        let started = Instant::now();
        let result = tool.call(args, &ctx).await;
        let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        hold_point("after_tool_ran").await;
        if let Some(ran) = ran {
            let _ = ran.send(());
        }
        let result = match result {
            Ok(mut out) => {
                if let Some(f) = feedback {
                    out.push_str(&format!("\n\nUser note with the approval: {f}"));
                }
                Ok(out)
            }
            Err(ToolError::Cancelled) => Err("the call was cancelled by the user".to_string()),
            Err(e) => Err(e.to_string()),
        };
        self.finish(chat, run_id, call, result, elapsed).await
    }

    /// Stores a call's result, then announces it. Returns the result as stored.
    pub(super) async fn finish(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        call: &ToolCall,
        result: Result<String, String>,
        duration_ms: u64,
    ) -> Result<StoredResult, RuntimeError> {
        let (ok, content) = match result {
            Ok(c) => (true, c),
            Err(e) => (false, e),
        };
        let message = ChatMessage::Tool {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: content.clone(),
            is_error: !ok,
        };
        let seq = self
            .s
            .store
            .finish_tool_step(&chat.id, Some(run_id), &call.id, &message)
            .await?;
        self.emit(AgentEvent::ToolCallEnd {
            chat_id: chat.id.clone(),
            run_id: run_id.to_string(),
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            ok,
            // An error message may quote the command line: it passes the redactor (issue #12
            // item 7) before it leaves the process.
            output: if ok {
                suzent_core::text::truncate_bytes(&content, 8000)
            } else {
                suzent_core::text::truncate_bytes(&suzent_permissions::redact_text(&content), 8000)
            },
            duration_ms,
        });
        Ok(StoredResult { seq, message })
    }
}

/// How a call was settled: it waits for the user's approval (the approval's id), or its result
/// is stored.
pub(super) enum Settled {
    Waiting(String),
    Stored(StoredResult),
}

/// A tool call's result as stored: its transcript position and the message.
pub(super) struct StoredResult {
    pub(super) seq: i64,
    pub(super) message: ChatMessage,
}
