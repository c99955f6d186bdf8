//! The turn loop: settle the tool calls the last model step left open, store the message that
//! opens the run, deliver inbox messages in place, then ask the model for the next step, until
//! the model stops, calls wait for approval, the run is cancelled or fails.

use super::compact::{Budget, CompactError, Fitted, Trigger};
use super::context::FittedTools;
use super::execute::Settled;
use super::{Opening, RunOptions, RunSummary, TurnService, hold_point};
use crate::error::RuntimeError;
use crate::provider::{
    ModelProvider, ModelRequest, ProviderError, ToolDefinition, build_provider, tokens,
};
use crate::sessions::Session;
use serde_json::Value;
use std::sync::Arc;
use suzent_core::{AgentEvent, ChatMessage, Rule, RunOutcome, ToolCall, parse_tool_arguments};
use suzent_permissions::{redact_text, redact_value};
use suzent_store::{ChatRecord, PendingApproval, StoredMessage};
use suzent_tools::Tool;
use tokio::sync::oneshot;
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
        // A panic inside the run ends it as failed, like any other error (issue #13 item 2).
        let result = super::recover::catch_panic(
            self.run_loop(session, chat, &run_id, &options, &cancel, opening),
        )
        .await
        .unwrap_or_else(|panic| {
            tracing::error!(chat = %chat.id, run = %run_id, %panic, "a turn panicked");
            Err(LoopError::Panicked(panic))
        });
        // A failed run closes the calls it left open, with the reason.
        match &result {
            Err(LoopError::Runtime(e)) => {
                self.fail_open_calls(chat, &run_id, &e.to_string()).await;
            }
            Err(LoopError::Panicked(p)) => {
                self.fail_open_calls(chat, &run_id, &format!("internal error: {p}"))
                    .await;
            }
            Err(LoopError::Provider(e)) if !matches!(e, ProviderError::Cancelled) => {
                self.fail_open_calls(chat, &run_id, &e.to_string()).await;
            }
            _ => {}
        }
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
            Err(LoopError::Panicked(panic)) => {
                let message = format!(
                    "internal error: {panic}. The chat is usable: send a new message or retry."
                );
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
            Err(LoopError::Provider(e)) => {
                // Each failure names itself, with the provider's message and what to do.
                let (outcome, message) = super::failure::explain(&e);
                self.emit(AgentEvent::RunError {
                    chat_id: chat.id.clone(),
                    run_id: run_id.clone(),
                    message: message.clone(),
                });
                RunSummary {
                    run_id: run_id.clone(),
                    outcome,
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
        let mut last_text = String::new();
        let mut steps = 0u32;
        // The transcript as this run has read it: whole once, then only what each step added.
        let mut transcript = Transcript::default();
        // The tools offered to the model in this run's last step, and the calls it answered
        // with (not settled yet): those calls are checked against the tools they were offered.
        let mut offered: Option<Vec<String>> = None;
        let mut fresh: Vec<String> = Vec::new();
        let mut fitted_tools = FittedTools::default();
        // The estimated tokens of the definitions `fitted_tools` keeps.
        let mut tools_tokens: Option<usize> = None;
        // The rules in force read while the last model step was stored, for its calls.
        let mut step_rules: Option<Vec<Rule>> = None;
        // What the next model step reads, read while the last call's result was stored.
        let mut prefetched: Option<StepReads> = None;
        loop {
            if cancel.is_cancelled() {
                return Ok(self.summary(run_id, RunOutcome::Cancelled, Vec::new(), last_text));
            }
            // What comes next is read while the transcript is refreshed, each read on its own
            // connection: the rules in force for the calls the model just made (read while
            // the step was stored), else what a model step reads. A transcript that holds the
            // step this run just stored right after what it had read is not read again.
            let mut rules: Option<Vec<Rule>> = step_rules.take();
            let mut reads: Option<StepReads> = None;
            // Read while the last call's result was stored: used only right after it.
            let ready = prefetched.take();
            if !fresh.is_empty() {
                match rules {
                    Some(_) if transcript.take_current() => {}
                    Some(_) => transcript.refresh(store, &chat.id).await?,
                    None => {
                        let (refreshed, read) = tokio::join!(
                            transcript.refresh(store, &chat.id),
                            self.s.permissions.rules_for(chat)
                        );
                        refreshed?;
                        rules = Some(read?);
                    }
                }
            } else if opening.is_none() && transcript.take_current() {
                reads = match ready {
                    Some(read) => Some(read),
                    None => Some(self.step_reads(chat, &selected, &ctx.user_id).await?),
                };
            } else if opening.is_none() {
                let (refreshed, read) = tokio::join!(
                    transcript.refresh(store, &chat.id),
                    self.step_reads(chat, &selected, &ctx.user_id)
                );
                refreshed?;
                reads = Some(read?);
            } else {
                transcript.refresh(store, &chat.id).await?;
            }
            let messages = transcript.messages();
            // Settle the tool calls of the last assistant message first (also after a crash).
            if let Some((calls, answered)) = unanswered_calls(messages)
                && !calls.is_empty()
            {
                // The tools these calls were offered: the last step's, else (calls of an
                // earlier run) the selection, tool_search and the tools activated so far.
                let loaded = match offered.take() {
                    Some(tools) => tools,
                    None => self
                        .s
                        .toolset
                        .loaded(&chat.id, &selected)
                        .await
                        .map_err(RuntimeError::from)?,
                };
                let fresh_calls = std::mem::take(&mut fresh);
                let mut waiting = Vec::new();
                let mut looped: Option<String> = None;
                for (i, call) in calls.iter().enumerate() {
                    if answered.contains(&call.id) {
                        continue;
                    }
                    // The loop guard reads the transcript as each call is settled.
                    if i > 0 && !transcript.take_current() {
                        transcript.refresh(store, &chat.id).await?;
                    }
                    let seen = transcript.messages();
                    // Stopped by the user: the calls not begun yet do not run.
                    if cancel.is_cancelled() {
                        let text = format!(
                            "The {} call did not run: the user stopped the turn.",
                            call.name
                        );
                        let r = self.finish(chat, run_id, call, Err(text), 0).await?;
                        transcript.stored(r.seq, run_id, r.message);
                        continue;
                    }
                    if let Some(stop) = &looped {
                        let text = format!(
                            "The {} call did not run: the turn was stopped ({stop}).",
                            call.name
                        );
                        let r = self.finish(chat, run_id, call, Err(text), 0).await?;
                        transcript.stored(r.seq, run_id, r.message);
                        continue;
                    }
                    if let Some(reason) = super::loop_guard::blocks(seen, call) {
                        tracing::warn!(chat = %chat.id, tool = %call.name, "loop guard stopped a repeated call");
                        let r = self
                            .finish(chat, run_id, call, Err(reason.clone()), 0)
                            .await?;
                        transcript.stored(r.seq, run_id, r.message);
                        looped = Some(reason);
                        continue;
                    }
                    let is_fresh = fresh_calls.contains(&call.id);
                    // The rules read with the transcript serve the first call only: a rule
                    // added while it ran is in force for the next.
                    let read_rules = if is_fresh { rules.take() } else { None };
                    // Once the last call has run, what the next model step reads is read while
                    // its result is stored (the tool's own writes are done by then).
                    let last = calls[i + 1..].iter().all(|c| answered.contains(&c.id));
                    let (ran, has_run) = if last {
                        let (ran, has_run) = oneshot::channel();
                        (Some(ran), Some(has_run))
                    } else {
                        (None, None)
                    };
                    let (settled, read) = tokio::join!(
                        self.settle_call(
                            chat, run_id, call, &loaded, &ctx, options, is_fresh, read_rules, ran,
                        ),
                        async {
                            has_run?.await.ok()?;
                            Some(self.step_reads(chat, &selected, &ctx.user_id).await)
                        }
                    );
                    // A read that failed is made again where the step needs it.
                    prefetched = read.and_then(Result::ok);
                    match settled? {
                        Settled::Waiting(p) => waiting.push(p),
                        Settled::Stored(r) => transcript.stored(r.seq, run_id, r.message),
                    }
                }
                if let Some(reason) = looped {
                    return Ok(self.stopped(chat, run_id, RunOutcome::LoopDetected, reason));
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
            let reads = match reads {
                Some(reads) => reads,
                None => self.step_reads(chat, &selected, &ctx.user_id).await?,
            };
            // Inbox messages for this agent join the running turn before the next model step.
            if reads.inbox_due && self.s.inbox.deliver_due(&chat.id, run_id).await? {
                continue;
            }
            if steps >= config.max_steps {
                let note = format!(
                    "Stopped after {steps} model steps (max_steps in config.toml): the task may be unfinished. Send a message to continue, or raise max_steps."
                );
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
                return Ok(self.stopped(chat, run_id, RunOutcome::MaxSteps, note));
            }
            steps += 1;
            // This step's tools: the selection, tool_search and the tools activated so far.
            let loaded = reads.loaded;
            if provider.is_none() {
                let model = chat.model.clone().ok_or_else(|| RuntimeError::InvalidInput {
                    field: "model".into(),
                    message: "no model set: pass --model provider/model or set default_model in config.toml".into(),
                })?;
                provider = Some(build_provider(
                    &model,
                    &self.s.settings.providers(&config),
                    self.s.settings.keys(),
                )?);
            }
            let Some((client, model_id)) = provider.as_ref() else {
                continue;
            };
            let warning = super::loop_guard::warning(messages);
            let system = self.system_prompt(chat, &ctx, reads.memory.as_deref());
            // The last step's fitted definitions serve again while the tools and window are.
            let step_tools = self.offered_tools(&loaded);
            let window = self.window_of(chat, &config);
            let kept = fitted_tools.reuse(&step_tools, window);
            let tools_fitted = kept.is_some();
            let mut request = ModelRequest {
                model: model_id.clone(),
                system,
                messages: Vec::new(),
                tools: kept.unwrap_or_else(|| definitions_of(&step_tools)),
            };
            self.fit_to_model(chat, &config, window, &mut request, tools_fitted);
            // Images go to models that take them, counted before compaction decides.
            let inlined = self.inline_images(chat, &config, messages);
            let messages_for_model = inlined.as_deref().unwrap_or(messages);
            // The messages, compacted first when they would not fit (`compact.rs`).
            // Definitions kept from the last step were counted when they were fitted.
            let counted = match tools_tokens {
                Some(counted) if tools_fitted => counted,
                _ => tokens::tools_tokens(&request.tools),
            };
            tools_tokens = Some(counted);
            let budget = self.budget_with(chat, &config, &request.system, counted);
            let fitted = match reads.compaction {
                Ok(latest) => {
                    self.compactor
                        .fit_after(
                            latest,
                            &chat.id,
                            Some(run_id),
                            messages_for_model,
                            budget,
                            Trigger::Auto,
                            client.as_ref(),
                            model_id,
                            cancel,
                        )
                        .await
                }
                Err(e) => Err(CompactError::Failed(e.to_string())),
            };
            request.messages = match fitted {
                Ok(fitted) => fitted.messages,
                Err(e) => return self.compaction_failed(chat, run_id, e),
            };
            // Repeated identical calls: the model is told before it repeats again (not stored).
            if let Some(w) = &warning {
                super::loop_guard::inject(&mut request.messages, w);
            }
            let chat_id = chat.id.clone();
            let run = run_id.to_string();
            let events = self.s.events.clone();
            // Whether any of this step's text reached the user (a retry would show it twice).
            let shown = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let shown_by_sink = std::sync::Arc::clone(&shown);
            // What was streamed, kept when the user stops the step (issue #13 item 3).
            let partial = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
            let partial_by_sink = std::sync::Arc::clone(&partial);
            let on_text = move |delta: &str| {
                shown_by_sink.store(true, std::sync::atomic::Ordering::Relaxed);
                if let Ok(mut p) = partial_by_sink.lock() {
                    p.push_str(delta);
                }
                events.emit(AgentEvent::TextDelta {
                    chat_id: chat_id.clone(),
                    run_id: run.clone(),
                    delta: delta.to_string(),
                });
            };
            let mut retries = 0u32;
            // A context-overflow error compacts the chat and retries once.
            let mut overflow_compacted = false;
            let response = loop {
                let result = tokio::select! {
                    r = client.stream(&request, &on_text) => r,
                    _ = cancel.cancelled() => {
                        let said = partial.lock().map(|p| p.clone()).unwrap_or_default();
                        return self.keep_stopped_text(chat, run_id, said).await;
                    }
                };
                let e = match result {
                    Ok(response) => break response,
                    Err(e) => e,
                };
                if !overflow_compacted && super::failure::is_context_overflow(&e) {
                    overflow_compacted = true;
                    let fitted = self
                        .compactor
                        .fit(
                            &chat.id,
                            Some(run_id),
                            messages,
                            budget,
                            Trigger::Overflow,
                            client.as_ref(),
                            model_id,
                            cancel,
                        )
                        .await;
                    match fitted {
                        Ok(Fitted {
                            messages: compacted,
                            compacted: Some(_),
                        }) => {
                            tracing::warn!(chat = %chat.id, run = %run_id, error = %e, "the request did not fit the model's context; compacted, retrying once");
                            request.messages = compacted;
                            if let Some(w) = &warning {
                                super::loop_guard::inject(&mut request.messages, w);
                            }
                            continue;
                        }
                        // Nothing left to compact: the overflow is the outcome.
                        Ok(_) => return Err(LoopError::Provider(e)),
                        Err(failure) => return self.compaction_failed(chat, run_id, failure),
                    }
                }
                // 429, 5xx, a broken connection, an empty completion: wait and ask again.
                let shown_now = shown.load(std::sync::atomic::Ordering::Relaxed);
                let Some(plan) = super::retry::plan(&e, retries, shown_now) else {
                    return Err(LoopError::Provider(e));
                };
                tracing::warn!(chat = %chat.id, run = %run_id, error = %e, attempt = plan.attempt, wait_ms = plan.wait_ms, "model step failed; retrying");
                self.emit(AgentEvent::ProviderRetry {
                    chat_id: chat.id.clone(),
                    run_id: run_id.to_string(),
                    attempt: plan.attempt,
                    max_attempts: plan.max_attempts,
                    wait_ms: plan.wait_ms,
                    message: e.to_string(),
                });
                tokio::select! {
                    _ = tokio::time::sleep(std::time::Duration::from_millis(plan.wait_ms)) => {}
                    _ = cancel.cancelled() => return Err(LoopError::Provider(ProviderError::Cancelled)),
                }
                retries += 1;
            };
            fitted_tools =
                FittedTools::keep(step_tools, window, std::mem::take(&mut request.tools));
            last_text = response.text.clone();
            if let Some(usage) = &response.usage {
                self.emit(AgentEvent::ModelUsage {
                    chat_id: chat.id.clone(),
                    run_id: run_id.to_string(),
                    model: model_id.clone(),
                    input_tokens: usage.input_tokens,
                    output_tokens: usage.output_tokens,
                    cost_usd: suzent_providers::pricing::cost_usd(
                        model_id,
                        configured_price(&config, chat),
                        usage,
                    ),
                });
            }
            // The provider's ids are not keys: each call is stored under a step id it claimed.
            // The rules in force for the calls are read meanwhile (after the model answered,
            // before anything is decided).
            let calls_made = !response.tool_calls.is_empty();
            let (stored, read) = tokio::join!(
                super::ids::store_model_step(
                    store,
                    &chat.id,
                    run_id,
                    response.text,
                    response.tool_calls
                ),
                async {
                    if calls_made {
                        Some(self.s.permissions.rules_for(chat).await)
                    } else {
                        None
                    }
                }
            );
            let (seq, assistant) = stored.map_err(RuntimeError::from)?;
            step_rules = read.transpose()?;
            let tool_calls = match &assistant {
                ChatMessage::Assistant { tool_calls, .. } => tool_calls.clone(),
                _ => Vec::new(),
            };
            transcript.stored(seq, run_id, assistant);
            fresh = tool_calls.iter().map(|c| c.id.clone()).collect();
            offered = Some(loaded);
            for call in &tool_calls {
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

    /// A step the user stopped while the model was streaming: the text shown so far is kept in
    /// the transcript, marked as stopped, and the run ends as cancelled (issue #13 item 3).
    async fn keep_stopped_text(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        said: String,
    ) -> Result<RunSummary, LoopError> {
        if said.trim().is_empty() {
            return Err(LoopError::Provider(ProviderError::Cancelled));
        }
        let text = format!("{said}{STOPPED_MARK}");
        self.s
            .store
            .append_message(
                &chat.id,
                Some(run_id),
                &ChatMessage::Assistant {
                    text: text.clone(),
                    tool_calls: Vec::new(),
                },
            )
            .await
            .map_err(RuntimeError::from)?;
        Ok(self.summary(run_id, RunOutcome::Cancelled, Vec::new(), text))
    }

    /// The prompt budget of `request` (its system prompt and tools already fitted).
    pub(super) fn budget(
        &self,
        chat: &ChatRecord,
        config: &suzent_core::Config,
        request: &ModelRequest,
    ) -> Budget {
        self.budget_with(
            chat,
            config,
            &request.system,
            tokens::tools_tokens(&request.tools),
        )
    }

    /// [`TurnService::budget`] of a request with the system prompt `system` and tool definitions
    /// counted as `tools_tokens` ([`tokens::tools_tokens`]).
    fn budget_with(
        &self,
        chat: &ChatRecord,
        config: &suzent_core::Config,
        system: &str,
        tools_tokens: usize,
    ) -> Budget {
        let (window, max_tokens) = self.window_of(chat, config).unwrap_or((
            crate::provider::window::ContextWindow {
                tokens: crate::provider::window::DEFAULT_CONTEXT_WINDOW,
                source: crate::provider::window::WindowSource::Default,
            },
            crate::provider::resolve::DEFAULT_MAX_TOKENS,
        ));
        Budget::new(
            window.tokens,
            max_tokens,
            tokens::fixed_tokens_with(system, tools_tokens),
        )
    }

    /// The run's end when compaction could not make the request fit: its own outcome,
    /// `compaction_failed`, with the reason (or cancelled, when the user stopped it).
    fn compaction_failed(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        e: CompactError,
    ) -> Result<RunSummary, LoopError> {
        match e {
            CompactError::Cancelled => Err(LoopError::Provider(ProviderError::Cancelled)),
            CompactError::Failed(reason) => {
                tracing::warn!(chat = %chat.id, run = %run_id, %reason, "compaction failed");
                Ok(self.stopped(
                    chat,
                    run_id,
                    RunOutcome::CompactionFailed,
                    format!("compaction failed: {reason}. The chat is usable; its transcript is unchanged."),
                ))
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
            Opening::User { text, attachments } => {
                store
                    .append_message(
                        &chat.id,
                        Some(run_id),
                        &ChatMessage::User { text, attachments },
                    )
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
                        &ChatMessage::user(text),
                    )
                    .await?;
                hold_point("inbox_recorded").await;
            }
        }
        Ok(())
    }

    /// The summary of a run stopped by the runtime (max_steps, the loop guard): its own outcome
    /// with the reason as its error, announced as the run's error so the UI shows it.
    fn stopped(
        &self,
        chat: &ChatRecord,
        run_id: &str,
        outcome: RunOutcome,
        reason: String,
    ) -> RunSummary {
        self.emit(AgentEvent::RunError {
            chat_id: chat.id.clone(),
            run_id: run_id.to_string(),
            message: reason.clone(),
        });
        RunSummary {
            run_id: run_id.to_string(),
            outcome,
            pending: Vec::new(),
            text: String::new(),
            error: Some(reason),
        }
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

    /// What the next model step of `chat` reads ([`StepReads`]), the four reads made at once.
    async fn step_reads(
        &self,
        chat: &ChatRecord,
        selected: &[String],
        user_id: &str,
    ) -> Result<StepReads, RuntimeError> {
        let (inbox_due, loaded, memory, compaction) = tokio::join!(
            self.s.inbox.has_due(&chat.id),
            self.s.toolset.loaded(&chat.id, selected),
            self.s.memory.prompt_section(user_id),
            self.s.store.latest_compaction(&chat.id),
        );
        Ok(StepReads {
            inbox_due: inbox_due?,
            loaded: loaded?,
            memory: memory?,
            compaction,
        })
    }

    /// The definitions of the tools named in `selected` (unknown names left out).
    pub(super) fn tool_definitions(&self, selected: &[String]) -> Vec<ToolDefinition> {
        definitions_of(&self.offered_tools(selected))
    }

    /// The tools named in `selected` (unknown names left out), in order.
    fn offered_tools(&self, selected: &[String]) -> Vec<Arc<dyn Tool>> {
        selected
            .iter()
            .filter_map(|name| self.s.toolset.get(name))
            .collect()
    }
}

/// What the model is told of each tool: its runtime name, description and JSON Schema.
fn definitions_of(tools: &[Arc<dyn Tool>]) -> Vec<ToolDefinition> {
    tools
        .iter()
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

/// The chat's model's own prices (`[models."…"] input_price`, `output_price`), if set.
fn configured_price(
    config: &suzent_core::Config,
    chat: &ChatRecord,
) -> Option<suzent_providers::pricing::Price> {
    let settings = config.models.get(chat.model.as_deref()?)?;
    Some(suzent_providers::pricing::Price {
        input_per_million: settings.input_price?,
        output_per_million: settings.output_price?,
    })
}

/// What a model step reads from the store, read at once (each read on its own connection).
struct StepReads {
    /// Whether inbox messages for the chat are due (`InboxService::has_due`).
    inbox_due: bool,
    /// The step's tools: the selection, tool_search and the tools activated so far.
    loaded: Vec<String>,
    /// The core memory section of the system prompt (`MemoryService::prompt_section`).
    memory: Option<String>,
    /// The chat's newest compaction (a failed read fails the step's compaction, as before).
    compaction: Result<Option<suzent_store::CompactionRecord>, suzent_store::StoreError>,
}

/// Added to the text of a step the user stopped (what the model and the user see of it).
pub(crate) const STOPPED_MARK: &str = "\n\n[stopped by the user]";

/// A chat's transcript as a run has read it. Transcripts are only appended to, so after the
/// first read each refresh asks the store only for the messages after the last one held
/// (`Store::messages_after`) instead of reading and decoding the whole chat on every step.
#[derive(Default)]
struct Transcript {
    messages: Vec<StoredMessage>,
    /// The last message held was stored by this run right after the one before it (see
    /// [`Transcript::stored`]): nothing came between, so there is nothing to refresh yet.
    current: bool,
}

impl Transcript {
    /// Adds what was stored since the last refresh.
    async fn refresh(
        &mut self,
        store: &suzent_store::Store,
        chat_id: &str,
    ) -> Result<(), RuntimeError> {
        let after = self.messages.last().map_or(0, |m| m.seq);
        let new = store.messages_after(chat_id, after).await?;
        self.messages.extend(new);
        self.current = false;
        Ok(())
    }

    /// Whether the transcript ends with a message this run stored right after what it held
    /// since this was last asked (so a refresh now would find only what others stored
    /// meanwhile, as one a moment earlier would not have). Asking again says `false` until
    /// the run stores another message: whatever else the loop does before it comes back to
    /// its top (an opening message, inbox messages delivered in place) is read by a refresh.
    fn take_current(&mut self) -> bool {
        std::mem::take(&mut self.current)
    }

    /// Keeps `message`, just stored by this run at `seq`, when it directly follows the last
    /// message held (else another writer's message came between: the next refresh reads both).
    fn stored(&mut self, seq: i64, run_id: &str, message: ChatMessage) {
        let last = self.messages.last().map_or(0, |m| m.seq);
        self.current = seq == last + 1;
        if self.current {
            self.messages.push(StoredMessage {
                seq,
                run_id: Some(run_id.to_string()),
                message,
                created_at: chrono::Utc::now(),
            });
        }
    }

    fn messages(&self) -> &[StoredMessage] {
        &self.messages
    }
}

enum LoopError {
    Runtime(RuntimeError),
    Provider(ProviderError),
    /// A panic caught at the run's boundary, with its message.
    Panicked(String),
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
pub(super) fn unanswered_calls(messages: &[StoredMessage]) -> Option<(Vec<ToolCall>, Vec<String>)> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> ChatMessage {
        ChatMessage::Assistant {
            text: t.to_string(),
            tool_calls: Vec::new(),
        }
    }

    #[test]
    fn a_transcript_is_current_once_after_each_message_stored_right_after_what_it_held() {
        let mut transcript = Transcript::default();
        assert!(!transcript.take_current(), "nothing read yet");
        transcript.stored(1, "r", text("a"));
        assert!(transcript.take_current());
        // Asked again without a new message of its own: whatever came since is read.
        assert!(!transcript.take_current());
        transcript.stored(2, "r", text("b"));
        transcript.stored(3, "r", text("c"));
        assert!(transcript.take_current());
        // Another writer's message came between (seq 4): not kept, not current.
        transcript.stored(5, "r", text("e"));
        assert!(!transcript.take_current());
        let seqs: Vec<i64> = transcript.messages().iter().map(|m| m.seq).collect();
        assert_eq!(seqs, vec![1, 2, 3]);
    }
}
