//! End-of-chat summaries into archival memory (issue 7: "a summary at the end of a chat").
//!
//! A desktop chat has no explicit end, so a chat idle for `chat_summary_idle_secs` (config;
//! default 30 minutes) after its last message counts as ended: the dispatcher's summary sweep
//! (started with the inbox dispatcher) summarizes what was said since the chat's last summary.
//!
//! Deleting a chat never summarizes it, and removes the summaries already written of it (the
//! store deletes archival entries with source `summary` and the chat's id with the chat): a
//! user who deletes a chat because of what it contains does not keep a summary of it.
//!
//! Each chat has a mark (`chat_summaries.through_seq`): the last transcript position its
//! summaries cover. The summary entry and the new mark are stored in one transaction, and a
//! stretch already covered is never stored again, so every stretch of conversation is
//! summarized exactly once. Sub-agent chats are not summarized: their results reach the
//! delegating chat, whose summary covers them.

use super::MemoryService;
use crate::chats::{ChatService, whoami};
use crate::error::RuntimeError;
use crate::sessions::Sessions;
use crate::settings::SettingsService;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use suzent_core::ChatMessage;
use suzent_store::{NewArchival, Store, StoredMessage, SummaryRecord};
use tokio_util::sync::CancellationToken;

/// Characters of transcript sent for a summary (the most recent ones).
const SUMMARY_INPUT_CHARS: usize = 24_000;
/// Instructions for the summary.
const SUMMARY_PROMPT: &str = "Summarize the following conversation for long-term memory in at \
    most 5 short sentences: durable facts about the user and their work, decisions taken, and \
    open items. Write plain text without preamble.";
/// Chats summarized per sweep (one model call each, one after the other).
const SWEEP_BATCH: u32 = 8;
/// Bounds of the pause between sweeps (half the idle time in between).
const MIN_SWEEP_PAUSE: Duration = Duration::from_millis(250);
const MAX_SWEEP_PAUSE: Duration = Duration::from_secs(60);

/// End-of-chat summaries: on demand and by the sweep over idle chats.
pub(crate) struct SummaryService {
    store: Store,
    chats: Arc<ChatService>,
    memory: Arc<MemoryService>,
    settings: Arc<SettingsService>,
    sessions: Arc<Sessions>,
    /// One summary at a time: the sweep and a deletion never summarize the same stretch twice,
    /// and model calls for summaries never pile up.
    lock: tokio::sync::Mutex<()>,
    /// Chats whose automatic summary failed, and when: retried once the idle time has passed
    /// again (so a failing provider is not called on every sweep). Until then the sweep's query
    /// leaves them out, so they never fill a batch in place of other due chats.
    failed: Mutex<HashMap<String, Instant>>,
}

impl SummaryService {
    /// The service.
    pub(crate) fn new(
        store: Store,
        chats: Arc<ChatService>,
        memory: Arc<MemoryService>,
        settings: Arc<SettingsService>,
        sessions: Arc<Sessions>,
    ) -> SummaryService {
        SummaryService {
            store,
            chats,
            memory,
            settings,
            sessions,
            lock: tokio::sync::Mutex::new(()),
            failed: Mutex::new(HashMap::new()),
        }
    }

    /// Writes a summary of what was said in the chat since its last summary into archival
    /// memory (source `summary`, text `Summary of chat '<title>': ...`): the chat's model (or
    /// the default model) is asked for the durable facts, decisions and open items. Returns the
    /// entry id, or `None` when there is nothing new with a user message in it (the stretch is
    /// then marked as covered) or the model answered nothing.
    ///
    /// The runtime calls it itself when the chat has been idle for `chat_summary_idle_secs`
    /// (see [`crate::Runtime::start_dispatcher`]); `suzent memory summarize --chat ID` calls it
    /// on demand. [`crate::Runtime::delete_chat`] removes the summaries of the chat it deletes.
    ///
    /// Errors: [`RuntimeError::ChatNotFound`], [`RuntimeError::InvalidInput`] (`model`) when no
    /// model is set or the model request failed, store errors.
    pub(crate) async fn archive_chat_summary(
        &self,
        chat_id: &str,
    ) -> Result<Option<i64>, RuntimeError> {
        let _one_at_a_time = self.lock.lock().await;
        self.summarize_new_stretch(chat_id).await
    }

    /// The summary of the chat's unsummarized stretch, stored with its mark. The caller holds
    /// the summary lock.
    async fn summarize_new_stretch(&self, chat_id: &str) -> Result<Option<i64>, RuntimeError> {
        let chat = self.chats.get(chat_id).await?;
        let store = &self.store;
        let through = store.summarized_through(chat_id).await?;
        let messages = store.messages(chat_id).await?;
        let Some(last_seq) = messages.last().map(|m| m.seq).filter(|&s| s > through) else {
            return Ok(None);
        };
        let stretch: Vec<&StoredMessage> = messages.iter().filter(|m| m.seq > through).collect();
        let has_user = stretch
            .iter()
            .any(|m| matches!(m.message, ChatMessage::User { .. }));
        if !has_user {
            store.record_chat_summary(chat_id, last_seq, None).await?;
            return Ok(None);
        }
        let summary = self.ask_for_summary(&chat, &stretch).await?;
        if summary.is_empty() {
            store.record_chat_summary(chat_id, last_seq, None).await?;
            return Ok(None);
        }
        let text = format!("Summary of chat '{}': {summary}", chat.title);
        let embedding = self
            .memory
            .embeddings_for_storage(std::slice::from_ref(&text))
            .await?
            .pop()
            .flatten();
        let entry = NewArchival {
            user_id: whoami(),
            chat_id: Some(chat_id.to_string()),
            source: suzent_store::SUMMARY_SOURCE.into(),
            content: text,
            embedding,
        };
        match store
            .record_chat_summary(chat_id, last_seq, Some(&entry))
            .await?
        {
            SummaryRecord::Recorded(id) => Ok(id),
            SummaryRecord::AlreadyCovered => Ok(None),
        }
    }

    /// Asks the chat's model for a summary of `stretch`; returns the trimmed text.
    async fn ask_for_summary(
        &self,
        chat: &suzent_store::ChatRecord,
        stretch: &[&StoredMessage],
    ) -> Result<String, RuntimeError> {
        let mut transcript = String::new();
        for m in stretch {
            let (who, text) = match &m.message {
                ChatMessage::User { text, .. } => ("User", text),
                ChatMessage::Assistant { text, .. } if !text.is_empty() => ("Assistant", text),
                _ => continue,
            };
            transcript.push_str(&format!("{who}: {}\n\n", text.trim()));
        }
        // The end of a long chat matters most: keep its last SUMMARY_INPUT_CHARS characters.
        let transcript =
            suzent_core::text::tail_chars(&transcript, SUMMARY_INPUT_CHARS).to_string();
        let config = self.settings.config();
        let model = chat
            .model
            .clone()
            .or(config.default_model.clone())
            .ok_or_else(|| RuntimeError::InvalidInput {
                field: "model".into(),
                message: "the chat has no model to summarize with (set default_model)".into(),
            })?;
        let (client, model_id) = crate::provider::build_provider(
            &model,
            &self.settings.providers(&config),
            self.settings.keys(),
        )?;
        let request = crate::provider::ModelRequest {
            model: model_id,
            system: SUMMARY_PROMPT.into(),
            messages: vec![ChatMessage::User {
                text: transcript,
                attachments: Vec::new(),
            }],
            tools: Vec::new(),
        };
        let response =
            client
                .stream(&request, &|_| {})
                .await
                .map_err(|e| RuntimeError::InvalidInput {
                    field: "model".into(),
                    message: format!("the summary request failed: {e}"),
                })?;
        Ok(response.text.trim().to_string())
    }

    /// Starts the summary sweep (with the inbox dispatcher): every half idle time (0.25-60 s)
    /// it summarizes chats idle for `chat_summary_idle_secs`, re-reading the setting each time.
    /// Runs until `shutdown` is cancelled ([`crate::Runtime::shutdown`]).
    pub(crate) fn start_sweep(self: &Arc<Self>, shutdown: CancellationToken) {
        let rt = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                let idle =
                    Duration::from_secs(u64::from(rt.settings.config().chat_summary_idle_secs));
                let pause = if idle.is_zero() {
                    MAX_SWEEP_PAUSE
                } else {
                    rt.summarize_idle_chats(idle).await;
                    (idle / 2).clamp(MIN_SWEEP_PAUSE, MAX_SWEEP_PAUSE)
                };
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    () = shutdown.cancelled() => return,
                }
            }
        });
    }

    /// One sweep: summarizes up to [`SWEEP_BATCH`] chats whose last message is older than
    /// `idle` and not yet covered by a summary, leaving out chats in a turn and chats whose
    /// last attempt failed less than `idle` ago (in the query, before the batch limit, so they
    /// never take the places of other chats). Returns how many summaries were stored.
    async fn summarize_idle_chats(&self, idle: Duration) -> usize {
        let Ok(idle_delta) = chrono::TimeDelta::from_std(idle) else {
            return 0;
        };
        let state = self;
        let mut skip = self.sessions.running();
        {
            let mut failed = state.failed.lock().unwrap_or_else(PoisonError::into_inner);
            failed.retain(|_, at| at.elapsed() < idle);
            skip.extend(failed.keys().cloned());
        }
        let due = match self
            .store
            .chats_due_for_summary(chrono::Utc::now() - idle_delta, SWEEP_BATCH, &skip)
            .await
        {
            Ok(due) => due,
            Err(e) => {
                tracing::warn!("summary sweep: {e}");
                return 0;
            }
        };
        let mut stored = 0;
        for chat in due {
            let result = match self.store.agent_link(&chat.chat_id).await {
                // A sub-agent's work reaches its parent chat; only the mark moves.
                Ok(Some(_)) => self
                    .store
                    .record_chat_summary(&chat.chat_id, chat.last_seq, None)
                    .await
                    .map(|_| None)
                    .map_err(RuntimeError::from),
                Ok(None) => self.archive_chat_summary(&chat.chat_id).await,
                Err(e) => Err(e.into()),
            };
            let mut failed = state.failed.lock().unwrap_or_else(PoisonError::into_inner);
            match result {
                Ok(id) => {
                    failed.remove(&chat.chat_id);
                    if let Some(id) = id {
                        stored += 1;
                        tracing::info!(chat = %chat.chat_id, entry = id, "summarized an idle chat");
                    }
                }
                // Deleted meanwhile: nothing to do.
                Err(RuntimeError::ChatNotFound(_)) => {}
                Err(e) => {
                    tracing::warn!(chat = %chat.chat_id, "summary of an idle chat failed: {e}");
                    failed.insert(chat.chat_id.clone(), Instant::now());
                }
            }
        }
        stored
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use suzent_core::Config;
    use suzent_tests::{ScriptedServer, Turn};

    /// The fixture with `openai/gpt-test` on `server`, and its summary service.
    async fn summaries(
        server: &ScriptedServer,
    ) -> (TestServices, Arc<MemoryService>, SummaryService) {
        let mut config = Config {
            default_model: Some("openai/gpt-test".into()),
            ..Config::default()
        };
        config.providers.openai.base_url = Some(server.openai_base());
        let s = TestServices::open(config).await;
        let memory = s.memory();
        let service = SummaryService::new(
            s.store.clone(),
            Arc::clone(&s.chats),
            Arc::clone(&memory),
            Arc::clone(&s.settings),
            Arc::clone(&s.sessions),
        );
        (s, memory, service)
    }

    #[tokio::test]
    async fn a_chats_summary_is_archived_once_and_found_by_memory_search() -> anyhow::Result<()> {
        let server =
            ScriptedServer::start(vec![Turn::text("The user is moving the flamingo service.")])
                .await;
        let (s, memory, service) = summaries(&server).await;
        let chat = s.chat().await;
        for message in [
            ChatMessage::User {
                text: "help me move the flamingo service".into(),
                attachments: Vec::new(),
            },
            ChatMessage::Assistant {
                text: "Start with its database.".into(),
                tool_calls: Vec::new(),
            },
        ] {
            s.store.append_message(&chat.id, None, &message).await?;
        }
        let id = service.archive_chat_summary(&chat.id).await?;
        assert!(id.is_some());
        // Nothing new since: no second entry, no second model call.
        assert_eq!(service.archive_chat_summary(&chat.id).await?, None);
        let sent = server.requests();
        assert_eq!(sent.len(), 1);
        let asked = sent[0]["messages"].to_string();
        assert!(
            asked.contains("User: help me move the flamingo service")
                && asked.contains("Assistant: Start with its database."),
            "{asked}"
        );
        let hits: Vec<(Option<i64>, String)> = memory
            .search_memory("flamingo", 5)
            .await?
            .hits
            .into_iter()
            .map(|h| (Some(h.id), h.content))
            .collect();
        assert_eq!(
            hits,
            vec![(
                id,
                "Summary of chat 'New chat': The user is moving the flamingo service.".to_string()
            )]
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_stretch_without_a_user_message_is_covered_without_asking_the_model()
    -> anyhow::Result<()> {
        let server = ScriptedServer::start(Vec::new()).await;
        let (s, _memory, service) = summaries(&server).await;
        let chat = s.chat().await;
        s.store
            .append_message(
                &chat.id,
                None,
                &ChatMessage::Assistant {
                    text: "A scheduled report.".into(),
                    tool_calls: Vec::new(),
                },
            )
            .await?;
        assert_eq!(service.archive_chat_summary(&chat.id).await?, None);
        assert_eq!(server.requests().len(), 0);
        let err = service
            .archive_chat_summary("no-such-chat")
            .await
            .unwrap_err();
        assert!(
            matches!(&err, RuntimeError::ChatNotFound(id) if id == "no-such-chat"),
            "{err}"
        );
        Ok(())
    }
}
