//! Compaction: long chats fitted to the model's context window (issue #13 item 4).
//!
//! Before a request would not fit (the window minus the reply's `max_tokens`), or after the
//! provider said it did not, the chat is compacted in two steps:
//! 1. tool outputs of older history (everything before the newest half of the budget) are cut
//!    to a head and a tail with a note saying how many bytes were cut;
//! 2. if that is not enough, the older turns are summarized by the chat's own model into one
//!    message that keeps the task, the decisions, the files touched and the open items (folded
//!    over chunks, each request fitting the window, the previous summary carried into the next).
//!
//! A compaction is a row in the store (`compactions`), never a change of the transcript: every
//! request after it is built by [`apply`] from the stored messages and the newest row (the
//! summary in place of the messages it covers, older tool outputs cut), so a reloaded chat and
//! later turns see the same thing, and the full history stays viewable.
//!
//! Token counts are the conservative estimate of `suzent_providers::tokens`, cached per stored
//! message ([`TokenCache`]): a step on a long chat counts only the messages added since.

use crate::event_bus::Events;
use crate::provider::{ModelProvider, ModelRequest, tokens};
use std::collections::HashMap;
use std::sync::Mutex;
use suzent_core::{AgentEvent, ChatMessage, CompactionInfo};
use suzent_store::{CompactionRecord, NewCompaction, Store, StoredMessage};
use tokio_util::sync::CancellationToken;

/// Tool outputs longer than this many bytes are cut in compacted history.
pub const CUT_MIN_BYTES: usize = 1_200;
/// Bytes kept at the head of a cut tool output.
const CUT_HEAD_BYTES: usize = 600;
/// Bytes kept at the tail of a cut tool output.
const CUT_TAIL_BYTES: usize = 300;
/// Tokens kept free of every prompt besides the reply's `max_tokens` (the estimate's slack).
pub(crate) const PROMPT_MARGIN: u32 = 64;
/// The summarizer's instructions.
const SUMMARIZER_PROMPT: &str = "You summarize a conversation between a user and an AI agent so that the agent can continue the work with only your summary and the latest messages. Write a concise summary in plain text with these parts: Task (what the user asked for, in their words where it matters), Decisions (what was decided or found, including exact names, numbers, codes and facts the user stated), Files touched (paths read, written or edited, and what changed), Open items (what is left to do or was promised). Keep every fact the user stated. Do not invent anything. Answer with the summary only.";
/// What introduces the summary in requests.
pub const SUMMARY_HEADER: &str = "[Conversation compacted: the earlier messages were summarized to fit the model's context window; the full transcript is kept.]\nSummary of the earlier conversation:\n";

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The next request would not fit.
    Auto,
    /// The provider said the request did not fit: compact what can be compacted.
    Overflow,
    /// The user asked (`/compact`, the app's Compact button).
    Manual,
}

impl Trigger {
    fn as_str(self) -> &'static str {
        match self {
            Trigger::Auto => "auto",
            Trigger::Overflow => "overflow",
            Trigger::Manual => "manual",
        }
    }
}

/// The model's window and the prompt budget of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    /// The context window, tokens.
    pub(crate) window: u32,
    /// Tokens the prompt may take: the window minus the reply's `max_tokens` and a margin.
    pub(crate) prompt: usize,
    /// Tokens of the system prompt and the tool definitions, repeated in every request.
    pub(crate) fixed: usize,
}

impl Budget {
    /// The budget of a model with `window` tokens that replies with up to `max_tokens`.
    pub(crate) fn new(window: u32, max_tokens: u32, fixed: usize) -> Budget {
        Budget {
            window,
            prompt: window
                .saturating_sub(max_tokens)
                .saturating_sub(PROMPT_MARGIN) as usize,
            fixed,
        }
    }
}

/// Why a compaction could not make the request fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CompactError {
    /// The summarizing request failed, or the newest messages alone do not fit; the message
    /// says which, with what to do.
    Failed(String),
    /// Stopped by the user.
    Cancelled,
}

/// A request's messages after compaction, and the compaction made now (if any).
pub(crate) struct Fitted {
    /// The messages to send.
    pub(crate) messages: Vec<ChatMessage>,
    /// The compaction recorded by this call (announced already).
    pub(crate) compacted: Option<CompactionRecord>,
}

/// Token counts of stored messages, by chat and position: transcripts are only appended to, so
/// a count never changes. A message counts as shown by [`apply`] (cut when the compaction cuts
/// it), so the cache keys on (seq, cut).
#[derive(Default)]
pub struct TokenCache {
    chats: Mutex<HashMap<String, HashMap<(i64, bool), usize>>>,
}

impl TokenCache {
    /// The tokens of `messages` as [`apply`] would send them under `record` (the summary
    /// message counted once).
    pub fn count(
        &self,
        chat_id: &str,
        messages: &[StoredMessage],
        record: Option<&CompactionRecord>,
    ) -> usize {
        let (cut_through, summary_through) = marks(record);
        let Ok(mut chats) = self.chats.lock() else {
            return messages
                .iter()
                .filter(|m| m.seq > summary_through)
                .map(|m| tokens::message_tokens(&shown(m, cut_through)))
                .sum::<usize>()
                + summary_tokens(record);
        };
        let counts = chats.entry(chat_id.to_string()).or_default();
        let mut total = summary_tokens(record);
        for m in messages.iter().filter(|m| m.seq > summary_through) {
            let cut = m.seq <= cut_through && is_long_output(&m.message);
            total += *counts
                .entry((m.seq, cut))
                .or_insert_with(|| tokens::message_tokens(&shown(m, cut_through)));
        }
        total
    }
}

fn marks(record: Option<&CompactionRecord>) -> (i64, i64) {
    record
        .map(|r| (r.info.cut_through_seq, r.info.summary_through_seq))
        .unwrap_or((0, 0))
}

fn summary_tokens(record: Option<&CompactionRecord>) -> usize {
    record
        .and_then(|r| r.summary.as_deref())
        .map(|s| {
            tokens::MESSAGE_OVERHEAD + tokens::text_tokens(SUMMARY_HEADER) + tokens::text_tokens(s)
        })
        .unwrap_or(0)
}

fn is_long_output(message: &ChatMessage) -> bool {
    matches!(message, ChatMessage::Tool { content, .. } if content.len() > CUT_MIN_BYTES)
}

/// A message as requests show it: a tool output at or before `cut_through` cut.
fn shown(m: &StoredMessage, cut_through: i64) -> ChatMessage {
    match &m.message {
        ChatMessage::Tool {
            tool_call_id,
            tool_name,
            content,
            is_error,
        } if m.seq <= cut_through && content.len() > CUT_MIN_BYTES => ChatMessage::Tool {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            content: cut_output(content),
            is_error: *is_error,
        },
        other => other.clone(),
    }
}

/// The head and tail of a long tool output with a note of how many bytes were cut between.
pub fn cut_output(content: &str) -> String {
    if content.len() <= CUT_MIN_BYTES {
        return content.to_string();
    }
    let mut head = CUT_HEAD_BYTES;
    while !content.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = content.len() - CUT_TAIL_BYTES;
    while !content.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n[… {} bytes cut by compaction …]\n{}",
        &content[..head],
        tail - head,
        &content[tail..]
    )
}

/// The messages a request sends for `messages` under the compaction `record`: the summary in
/// place of the messages it covers (joined to the first user message kept, so roles still
/// alternate), and tool outputs up to its cut mark cut.
pub fn apply(messages: &[StoredMessage], record: Option<&CompactionRecord>) -> Vec<ChatMessage> {
    let (cut_through, summary_through) = marks(record);
    let mut out: Vec<ChatMessage> = messages
        .iter()
        .filter(|m| m.seq > summary_through)
        .map(|m| shown(m, cut_through))
        .collect();
    if let Some(summary) = record.and_then(|r| r.summary.as_deref()) {
        let intro = format!("{SUMMARY_HEADER}{summary}");
        match out.first_mut() {
            Some(ChatMessage::User { text, .. }) => {
                *text = format!("{intro}\n\n[The conversation continues:]\n{text}");
            }
            _ => out.insert(
                0,
                ChatMessage::User {
                    text: intro,
                    attachments: Vec::new(),
                },
            ),
        }
    }
    out
}

/// Compacts chats: decides when, records what, asks the model for summaries, and announces
/// each compaction (`chat_compacted`).
pub(crate) struct Compactor {
    store: Store,
    events: Events,
    cache: TokenCache,
}

impl Compactor {
    /// The compactor over the store, announcing on `events`.
    pub(crate) fn new(store: Store, events: Events) -> Compactor {
        Compactor {
            store,
            events,
            cache: TokenCache::default(),
        }
    }

    /// The messages of the next request of `chat_id`, compacted first when `trigger` asks
    /// (`Auto`: only when they do not fit `budget`; `Overflow`, `Manual`: always, as far as
    /// there is older history). `provider` and `model` write the summaries.
    ///
    /// Returns the messages to send; `compacted` is `None` when nothing was done. Errors:
    /// [`CompactError::Failed`] when the messages cannot be made to fit, with nothing stored.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn fit(
        &self,
        chat_id: &str,
        run_id: Option<&str>,
        messages: &[StoredMessage],
        budget: Budget,
        trigger: Trigger,
        provider: &dyn ModelProvider,
        model: &str,
        cancel: &CancellationToken,
    ) -> Result<Fitted, CompactError> {
        let latest = self
            .store
            .latest_compaction(chat_id)
            .await
            .map_err(|e| CompactError::Failed(e.to_string()))?;
        self.fit_after(
            latest, chat_id, run_id, messages, budget, trigger, provider, model, cancel,
        )
        .await
    }

    /// [`Compactor::fit`] with the chat's newest compaction already read (`latest`, from
    /// `Store::latest_compaction` when `messages` were read).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn fit_after(
        &self,
        latest: Option<CompactionRecord>,
        chat_id: &str,
        run_id: Option<&str>,
        messages: &[StoredMessage],
        budget: Budget,
        trigger: Trigger,
        provider: &dyn ModelProvider,
        model: &str,
        cancel: &CancellationToken,
    ) -> Result<Fitted, CompactError> {
        let failed = |e: suzent_store::StoreError| CompactError::Failed(e.to_string());
        let before = budget.fixed + self.cache.count(chat_id, messages, latest.as_ref());
        if trigger == Trigger::Auto && before <= budget.prompt {
            return Ok(Fitted {
                messages: apply(messages, latest.as_ref()),
                compacted: None,
            });
        }
        let (old_cut, old_summary) = marks(latest.as_ref());
        // Compacted requests aim at three quarters of the budget, so the chat grows a while
        // before the next compaction.
        let target = budget.prompt * 3 / 4;
        // The newest turn (from the last user message) is kept whole when the user asked or the
        // server refused the request: everything older is compacted.
        let last_user = messages
            .iter()
            .rposition(|m| matches!(m.message, ChatMessage::User { .. }))
            .unwrap_or(0);
        let floor = if trigger == Trigger::Auto {
            0
        } else {
            last_user
        };
        // Step 1: cut the tool outputs before the newest half of the budget (a quarter when
        // asked).
        let keep = match trigger {
            Trigger::Auto => budget.prompt / 2,
            Trigger::Overflow | Trigger::Manual => budget.prompt / 4,
        };
        let recent =
            start_of_recent(messages, keep, |m| tokens::message_tokens(&m.message)).max(floor);
        let cut_through = recent
            .checked_sub(1)
            .map(|i| messages[i].seq)
            .unwrap_or(0)
            .max(old_cut);
        let newly_cut = messages
            .iter()
            .filter(|m| m.seq > old_cut && m.seq <= cut_through && m.seq > old_summary)
            .filter(|m| is_long_output(&m.message))
            .count() as u32;
        let mut candidate = NewCompaction {
            trigger: trigger.as_str().to_string(),
            cut_through_seq: cut_through,
            summary_through_seq: old_summary,
            summary: latest.as_ref().and_then(|r| r.summary.clone()),
            tool_outputs_cut: newly_cut,
            messages_summarized: 0,
            tokens_before: before as u32,
            tokens_after: 0,
            context_window: budget.window,
        };
        let as_record = |c: &NewCompaction| CompactionRecord {
            info: CompactionInfo {
                id: String::new(),
                trigger: c.trigger.clone(),
                cut_through_seq: c.cut_through_seq,
                summary_through_seq: c.summary_through_seq,
                tool_outputs_cut: 0,
                messages_summarized: 0,
                tokens_before: 0,
                tokens_after: 0,
                context_window: 0,
                created_at: String::new(),
            },
            summary: c.summary.clone(),
        };
        let after_cut = budget.fixed
            + self
                .cache
                .count(chat_id, messages, Some(&as_record(&candidate)));
        let summarize = match trigger {
            Trigger::Auto => after_cut > target,
            Trigger::Overflow | Trigger::Manual => true,
        };
        if summarize {
            // Step 2: summarize everything before the newest messages that fit a third of the
            // budget (the tail starts at a user or assistant message: a call keeps its result).
            let tail_budget = match trigger {
                Trigger::Manual | Trigger::Overflow => budget.prompt / 4,
                Trigger::Auto => budget.prompt / 3,
            };
            let shown_tokens = |m: &StoredMessage| tokens::message_tokens(&shown(m, cut_through));
            let mut boundary = start_of_recent(
                messages,
                tail_budget.saturating_sub(budget.fixed),
                shown_tokens,
            )
            .max(floor);
            while boundary < messages.len()
                && matches!(messages[boundary].message, ChatMessage::Tool { .. })
            {
                boundary += 1;
            }
            if boundary >= messages.len() {
                // The newest message alone: keep from the last user or assistant message.
                boundary = messages
                    .iter()
                    .rposition(|m| !matches!(m.message, ChatMessage::Tool { .. }))
                    .unwrap_or(0);
            }
            let first_new = messages
                .iter()
                .position(|m| m.seq > old_summary)
                .unwrap_or(messages.len());
            if boundary > first_new {
                let through = messages[boundary - 1].seq;
                let summary = self
                    .summarize(
                        latest.as_ref().and_then(|r| r.summary.as_deref()),
                        &messages[first_new..boundary],
                        budget,
                        provider,
                        model,
                        cancel,
                    )
                    .await?;
                candidate.summary = Some(summary);
                candidate.summary_through_seq = through;
                candidate.cut_through_seq = candidate.cut_through_seq.max(through);
                candidate.messages_summarized = (boundary - first_new) as u32;
            }
        }
        let changed =
            candidate.cut_through_seq != old_cut || candidate.summary_through_seq != old_summary;
        let view = as_record(&candidate);
        let after = budget.fixed + self.cache.count(chat_id, messages, Some(&view));
        if after > budget.prompt {
            return Err(CompactError::Failed(format!(
                "even compacted, the request needs about {after} tokens (the system prompt and tool definitions {}, the newest messages the rest), more than the {} the model's context window of {} tokens leaves for the prompt. Start a new chat, select fewer tools, or switch to a model with a larger context (or set context_window for it)",
                budget.fixed, budget.prompt, budget.window
            )));
        }
        if !changed {
            return Ok(Fitted {
                messages: apply(messages, latest.as_ref()),
                compacted: None,
            });
        }
        candidate.tokens_after = after as u32;
        let record = self
            .store
            .record_compaction(chat_id, &candidate)
            .await
            .map_err(failed)?;
        tracing::info!(
            chat = %chat_id,
            trigger = trigger.as_str(),
            before,
            after,
            cut = record.info.tool_outputs_cut,
            summarized = record.info.messages_summarized,
            "chat compacted"
        );
        self.events.emit(AgentEvent::ChatCompacted {
            chat_id: chat_id.to_string(),
            run_id: run_id.map(str::to_string),
            compaction: record.info.clone(),
        });
        Ok(Fitted {
            messages: apply(messages, Some(&record)),
            compacted: Some(record),
        })
    }

    /// The summary of `previous` (an earlier summary) and `messages`, folded over chunks that
    /// each fit the budget.
    async fn summarize(
        &self,
        previous: Option<&str>,
        messages: &[StoredMessage],
        budget: Budget,
        provider: &dyn ModelProvider,
        model: &str,
        cancel: &CancellationToken,
    ) -> Result<String, CompactError> {
        let fixed =
            tokens::fixed_tokens(SUMMARIZER_PROMPT, &[]) + 2 * tokens::MESSAGE_OVERHEAD + 32;
        let mut summary = previous.map(str::to_string);
        let lines: Vec<String> = messages.iter().map(render).collect();
        let mut i = 0;
        while i < lines.len() {
            let carried = summary.as_deref().map(tokens::text_tokens).unwrap_or(0);
            let room = budget.prompt.saturating_sub(fixed + carried);
            if room < 64 {
                return Err(CompactError::Failed(format!(
                    "the summary of the earlier conversation no longer fits the model's context window of {} tokens. Start a new chat",
                    budget.window
                )));
            }
            let mut chunk = String::new();
            let mut used = 0;
            while i < lines.len() {
                let cost = tokens::text_tokens(&lines[i]) + 1;
                if used + cost > room {
                    if chunk.is_empty() {
                        // One line larger than the room: its head goes in.
                        let mut end = room.saturating_sub(1) * tokens::BYTES_PER_TOKEN;
                        while !lines[i].is_char_boundary(end) {
                            end -= 1;
                        }
                        chunk.push_str(&lines[i][..end]);
                        chunk.push_str(" […]\n");
                        i += 1;
                    }
                    break;
                }
                chunk.push_str(&lines[i]);
                chunk.push('\n');
                used += cost;
                i += 1;
            }
            let mut text = String::new();
            if let Some(s) = &summary {
                text.push_str("Summary so far:\n");
                text.push_str(s);
                text.push_str("\n\n");
            }
            text.push_str("Conversation to add to the summary:\n");
            text.push_str(&chunk);
            let request = ModelRequest {
                model: model.to_string(),
                system: SUMMARIZER_PROMPT.to_string(),
                messages: vec![ChatMessage::User {
                    text,
                    attachments: Vec::new(),
                }],
                tools: Vec::new(),
            };
            let response = tokio::select! {
                r = provider.stream(&request, &|_: &str| {}) => r,
                _ = cancel.cancelled() => return Err(CompactError::Cancelled),
            };
            let written = response
                .map_err(|e| {
                    CompactError::Failed(format!(
                        "the model could not summarize the earlier conversation ({e}). Retry, start a new chat, or switch to a model with a larger context"
                    ))
                })?
                .text;
            if written.trim().is_empty() {
                return Err(CompactError::Failed(
                    "the model answered the summarizing request with no text. Retry, or start a new chat".into(),
                ));
            }
            summary = Some(written.trim().to_string());
        }
        summary.ok_or_else(|| CompactError::Failed("there was nothing to summarize".into()))
    }
}

/// The index where the newest messages whose tokens sum to at most `keep` begin (the last
/// message is always kept; `messages.len()` for none).
fn start_of_recent(
    messages: &[StoredMessage],
    keep: usize,
    cost: impl Fn(&StoredMessage) -> usize,
) -> usize {
    let mut used = 0;
    for (i, m) in messages.iter().enumerate().rev() {
        used += cost(m);
        if used > keep {
            return (i + 1).min(messages.len().saturating_sub(1));
        }
    }
    0
}

/// One message as a line of the summarizer's input (tool outputs cut).
fn render(m: &StoredMessage) -> String {
    match &m.message {
        ChatMessage::User { text, .. } => format!("User: {text}"),
        ChatMessage::Assistant { text, tool_calls } => {
            let mut line = format!("Assistant: {text}");
            for c in tool_calls {
                line.push_str(&format!(" [called {} with {}]", c.name, c.arguments));
            }
            line
        }
        ChatMessage::Tool {
            tool_name,
            content,
            is_error,
            ..
        } => format!(
            "Tool result of {tool_name}{}: {}",
            if *is_error { " (error)" } else { "" },
            cut_output(content)
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    fn stored(seq: i64, message: ChatMessage) -> StoredMessage {
        StoredMessage {
            seq,
            run_id: None,
            message,
            created_at: chrono::Utc::now(),
        }
    }

    fn record(cut: i64, through: i64, summary: Option<&str>) -> CompactionRecord {
        CompactionRecord {
            info: CompactionInfo {
                id: "c".into(),
                trigger: "auto".into(),
                cut_through_seq: cut,
                summary_through_seq: through,
                tool_outputs_cut: 0,
                messages_summarized: 0,
                tokens_before: 0,
                tokens_after: 0,
                context_window: 0,
                created_at: String::new(),
            },
            summary: summary.map(str::to_string),
        }
    }

    fn tool(content: &str) -> ChatMessage {
        ChatMessage::Tool {
            tool_call_id: "c1".into(),
            tool_name: "read_file".into(),
            content: content.into(),
            is_error: false,
        }
    }

    #[test]
    fn a_long_output_keeps_its_head_and_tail_and_says_how_much_was_cut() {
        let content = format!("{}{}{}", "h".repeat(600), "m".repeat(1000), "t".repeat(300));
        assert_eq!(
            cut_output(&content),
            format!(
                "{}\n[… 1000 bytes cut by compaction …]\n{}",
                "h".repeat(600),
                "t".repeat(300)
            )
        );
        assert_eq!(cut_output("short"), "short");
    }

    #[test]
    fn the_summary_replaces_what_it_covers_and_older_outputs_are_cut() {
        let big = "x".repeat(2_000);
        let messages = vec![
            stored(
                1,
                ChatMessage::User {
                    text: "old".into(),
                    attachments: Vec::new(),
                },
            ),
            stored(2, tool(&big)),
            stored(
                3,
                ChatMessage::User {
                    text: "mid".into(),
                    attachments: Vec::new(),
                },
            ),
            stored(4, tool(&big)),
            stored(5, tool(&big)),
        ];
        let view = apply(&messages, Some(&record(4, 2, Some("the task"))));
        assert_eq!(
            view,
            vec![
                ChatMessage::User {
                    text: format!("{SUMMARY_HEADER}the task\n\n[The conversation continues:]\nmid"),
                    attachments: Vec::new(),
                },
                tool(&cut_output(&big)),
                tool(&big),
            ]
        );
        assert_eq!(apply(&messages, None).len(), 5);
    }

    #[test]
    fn cached_counts_equal_the_counts_of_the_messages_sent() {
        let big = "y".repeat(5_000);
        let messages: Vec<StoredMessage> = (1..=40)
            .map(|i| {
                if i % 2 == 0 {
                    stored(i, tool(&big))
                } else {
                    stored(
                        i,
                        ChatMessage::User {
                            text: format!("turn {i}"),
                            attachments: Vec::new(),
                        },
                    )
                }
            })
            .collect();
        let cache = TokenCache::default();
        for r in [
            None,
            Some(record(20, 0, None)),
            Some(record(30, 11, Some("s"))),
        ] {
            let sent: usize = apply(&messages, r.as_ref())
                .iter()
                .map(tokens::message_tokens)
                .sum();
            let counted = cache.count("c", &messages, r.as_ref());
            // Never below what is sent; the summary's own overhead at most above.
            assert!(
                counted >= sent && counted <= sent + tokens::MESSAGE_OVERHEAD,
                "{counted} {sent}"
            );
            // Counted again from the cache.
            assert_eq!(cache.count("c", &messages, r.as_ref()), counted);
        }
    }
}
