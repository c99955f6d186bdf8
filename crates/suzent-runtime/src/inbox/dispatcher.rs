//! The inbox dispatcher: delivers durable inbox messages to idle agents. A message to an agent
//! that is in a turn is delivered in place before its next model step (`InboxService`); a
//! message to an idle agent starts a background turn (auto mode, non-interactive: what would ask
//! is refused).
//!
//! Crash safety: the message is written into the target transcript together with a delivery
//! record at the start of its turn, under a lease renewed while the turn runs. If the process
//! dies, the lease expires, the next dispatcher claims the message again, finds the record, and
//! only continues the interrupted turn (if it is unfinished) before acknowledging it.
//!
//! A target whose last turn died with tool calls still open is settled first, the way a resumed
//! turn is: answered approvals run or are refused, a call that was running gets an
//! "interrupted, effects unknown" error result and never runs twice. Only then is the message
//! written, so every call is answered before it. A target whose calls wait for the user's
//! approval is skipped: its messages stay queued (no attempt used up) until the approvals are
//! answered.

use super::{InboxService, transcript_text};
use crate::chats::ChatService;
use crate::error::RuntimeError;
use crate::memory::{MemoryService, SummaryService};
use crate::sessions::Sessions;
use crate::settings::SettingsService;
use crate::turn::{Opening, RunOptions, TurnService, headless_options};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use suzent_core::{PermissionMode, new_id};
use suzent_store::{InboxMessage, Store};
use tokio_util::sync::CancellationToken;

/// The dispatcher's slow poll, for messages queued by other processes.
const POLL: Duration = Duration::from_secs(2);
/// Messages delivered at once (to different agents).
const MAX_PARALLEL_DELIVERIES: usize = 8;

/// Delivers inbox messages to idle agents, and runs the housekeeping that goes with an app that
/// stays up (end-of-chat summaries, the memory backfill).
pub(crate) struct Dispatcher {
    settings: Arc<SettingsService>,
    inbox: Arc<InboxService>,
    turn: Arc<TurnService>,
    chats: Arc<ChatService>,
    sessions: Arc<Sessions>,
    store: Store,
    summaries: Arc<SummaryService>,
    memory: Arc<MemoryService>,
    started: AtomicBool,
    shutdown: CancellationToken,
}

impl Dispatcher {
    /// The dispatcher (not started); `shutdown` stops it and the housekeeping.
    #[allow(clippy::too_many_arguments)] // the services it coordinates, each a handle
    pub(crate) fn new(
        inbox: Arc<InboxService>,
        turn: Arc<TurnService>,
        chats: Arc<ChatService>,
        sessions: Arc<Sessions>,
        store: Store,
        summaries: Arc<SummaryService>,
        memory: Arc<MemoryService>,
        settings: Arc<SettingsService>,
        shutdown: CancellationToken,
    ) -> Dispatcher {
        Dispatcher {
            settings,
            inbox,
            turn,
            chats,
            sessions,
            store,
            summaries,
            memory,
            started: AtomicBool::new(false),
            shutdown,
        }
    }

    /// Starts the dispatcher (once; later calls do nothing), with the summary sweep and the
    /// memory backfill beside it. It runs until [`Dispatcher::stop`]. Needs a Tokio runtime.
    pub(crate) fn start(self: &Arc<Self>) {
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let dispatcher = Arc::clone(self);
        tokio::spawn(async move { dispatcher.dispatch_loop().await });
        // End-of-chat summaries of idle chats run beside it.
        self.summaries.start_sweep(self.shutdown.clone());
        // Memories stored before an embedding model existed get their vectors.
        self.memory.start_backfill_if_due();
    }

    /// Stops the dispatcher and the housekeeping (queued messages stay queued).
    pub(crate) fn stop(&self) {
        self.shutdown.cancel();
        self.inbox.wake_all();
    }

    async fn dispatch_loop(self: Arc<Self>) {
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_PARALLEL_DELIVERIES));
        let shutdown = self.shutdown.clone();
        loop {
            if shutdown.is_cancelled() {
                return;
            }
            let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
                return;
            };
            let claimed = match self.blocked_targets().await {
                Ok(blocked) => {
                    self.store
                        .claim_inbox(&self.inbox.owner, self.inbox.lease, None, &blocked)
                        .await
                }
                Err(e) => {
                    drop(permit);
                    tracing::warn!("inbox dispatcher: {e}");
                    tokio::select! {
                        () = tokio::time::sleep(POLL) => {}
                        () = shutdown.cancelled() => return,
                    }
                    continue;
                }
            };
            match claimed {
                Ok(Some(message)) => {
                    let dispatcher = Arc::clone(&self);
                    tokio::spawn(async move {
                        dispatcher.deliver(message).await;
                        drop(permit);
                    });
                    continue;
                }
                Ok(None) => drop(permit),
                Err(e) => {
                    drop(permit);
                    tracing::warn!("inbox dispatcher: {e}");
                }
            }
            // A message that is due but was not claimed belongs to a blocked agent or one with
            // a delivery in flight: what unblocks it wakes the dispatcher (the end of a run or
            // a delivery here, the slow poll for other processes), so no busy wait for it.
            let wait = match self.store.next_inbox_wakeup().await {
                Ok(Some(at)) => match (at - chrono::Utc::now()).to_std() {
                    Ok(later) => later.clamp(Duration::from_millis(10), POLL),
                    Err(_) => POLL,
                },
                _ => POLL,
            };
            tokio::select! {
                () = self.inbox.wake.notified() => {}
                () = tokio::time::sleep(wait) => {}
                () = shutdown.cancelled() => return,
            }
        }
    }

    /// Delivers the queued messages of `chat_id` one after the other, here (for a process that
    /// runs no dispatcher loop), until none is due. Returns how many were delivered (delivered
    /// or failed; a message waiting for approvals stops the loop).
    pub(crate) async fn deliver_queued(&self, chat_id: &str) -> Result<usize, RuntimeError> {
        let mut delivered = 0;
        // A failed message may be due again at once: each is tried once per call.
        let mut seen = std::collections::HashSet::new();
        loop {
            if !self
                .store
                .pending_approvals(Some(chat_id))
                .await?
                .is_empty()
            {
                return Ok(delivered);
            }
            let Some(message) = self
                .store
                .claim_inbox(&self.inbox.owner, self.inbox.lease, Some(chat_id), &[])
                .await?
            else {
                return Ok(delivered);
            };
            if !seen.insert(message.id.clone()) {
                self.store
                    .release_inbox(&message.id, &self.inbox.owner)
                    .await?;
                return Ok(delivered);
            }
            self.deliver(message).await;
            delivered += 1;
        }
    }

    /// Agents the dispatcher leaves alone for now: chats with a turn running in this process
    /// (their messages are delivered in place) and chats whose tool calls wait for the user's
    /// approval (their messages wait until the approvals are answered).
    async fn blocked_targets(&self) -> Result<Vec<String>, RuntimeError> {
        let mut blocked = self.sessions.running();
        for approval in self.store.pending_approvals(None).await? {
            if !blocked.contains(&approval.chat_id) {
                blocked.push(approval.chat_id);
            }
        }
        Ok(blocked)
    }

    /// Delivers one claimed message to an idle agent: records it, runs the turn, acknowledges.
    async fn deliver(&self, message: InboxMessage) {
        let owner = self.inbox.owner.clone();
        let lease = self.inbox.lease;
        let heartbeat = {
            let store = self.store.clone();
            let id = message.id.clone();
            let owner = owner.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(lease / 3).await;
                    match store.renew_inbox_lease(&id, &owner, lease).await {
                        Ok(true) => {}
                        _ => return,
                    }
                }
            })
        };
        let result = self.deliver_turn(&message).await;
        heartbeat.abort();
        let store = &self.store;
        let outcome = match result {
            Ok(Delivery::Done) => store.complete_inbox(&message.id, &owner).await.map(|_| ()),
            // Back to the queue without using up an attempt; the dispatcher skips the agent
            // until its approvals are answered (the run that follows wakes it).
            Ok(Delivery::Waiting) => store.release_inbox(&message.id, &owner).await.map(|_| ()),
            Err(e) => {
                tracing::warn!(message = %message.id, "inbox delivery failed: {e}");
                store
                    .fail_inbox(&message.id, &owner, &e.to_string())
                    .await
                    .map(|_| ())
            }
        };
        if let Err(e) = outcome {
            tracing::warn!(message = %message.id, "inbox acknowledgement failed: {e}");
        }
        // The agent is idle again: queued messages for it may go now.
        self.inbox.wake();
    }

    /// Runs the turn of one claimed message. The message is written into the transcript by the
    /// run, once the calls an interrupted turn left open are settled (answered approvals run or
    /// are refused, a call that was running when the process died gets an "interrupted" error,
    /// never a second run), so no model request has calls without results before it.
    async fn deliver_turn(&self, message: &InboxMessage) -> Result<Delivery, RuntimeError> {
        let chat = self.chats.get(&message.target).await?;
        let session = self.sessions.session(&chat.id);
        let _guard = session.run_lock.lock().await;
        if !self
            .store
            .pending_approvals(Some(&chat.id))
            .await?
            .is_empty()
        {
            // A suspended turn waits for the user; the message waits with it.
            return Ok(Delivery::Waiting);
        }
        // Headless: auto mode with the non-interactive profile; a paired device's message
        // runs under the peer profile (at most the user's default mode, never full access,
        // what would ask is refused, its decisions audited as from `peer:<device>`).
        let mut headless = chat.clone();
        let options = if message.kind == crate::channels::CHANNEL_MESSAGE_KIND {
            // A channel's message runs under the channel's profile: headless by default (auto,
            // what would ask is refused), or asking in the app (the turn waits for the user).
            let (mode, ask_in_app) =
                crate::channels::turn_profile(&self.settings.config(), message);
            headless.mode = mode;
            RunOptions {
                origin: Some(message.sender.clone()),
                on_ask: if ask_in_app {
                    crate::turn::OnAsk::Suspend
                } else {
                    crate::turn::OnAsk::Deny
                },
                ..headless_options()
            }
        } else if message.kind == crate::devices::PEER_MESSAGE_KIND {
            headless.mode =
                crate::devices::peer_mode(chat.mode, self.settings.config().default_mode);
            RunOptions {
                origin: Some(message.sender.clone()),
                ..headless_options()
            }
        } else {
            headless.mode = PermissionMode::Auto;
            headless_options()
        };
        let mut opening = Some(Opening::Inbox {
            message_id: message.id.clone(),
            text: transcript_text(message),
        });
        let summary = self
            .turn
            .run_with(&session, &headless, new_id(), options, &mut opening)
            .await?;
        if opening.is_some() {
            // Not written: calls still wait for approval, or the run stopped before.
            return Ok(Delivery::Waiting);
        }
        if let Some(e) = summary.error {
            return Err(RuntimeError::InvalidInput {
                field: "inbox turn".into(),
                message: e,
            });
        }
        Ok(Delivery::Done)
    }
}

/// How the delivery of one claimed message ended.
enum Delivery {
    /// Written into the transcript and its turn ran: acknowledge it.
    Done,
    /// Not written: the agent waits for the user's approval (or its run stopped before). The
    /// message goes back to the queue without using up an attempt.
    Waiting,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use suzent_core::{ChatMessage, Config};
    use suzent_store::{InboxStatus, NewInboxMessage};
    use suzent_tests::{ScriptedServer, Turn};

    /// A dispatcher over the fixture's services and its turn service.
    fn dispatcher(s: &TestServices) -> Arc<Dispatcher> {
        let memory = s.memory();
        let summaries = Arc::new(SummaryService::new(
            s.store.clone(),
            Arc::clone(&s.chats),
            Arc::clone(&memory),
            Arc::clone(&s.settings),
            Arc::clone(&s.sessions),
        ));
        Arc::new(Dispatcher::new(
            Arc::clone(&s.inbox),
            s.turn(),
            Arc::clone(&s.chats),
            Arc::clone(&s.sessions),
            s.store.clone(),
            summaries,
            memory,
            Arc::clone(&s.settings),
            CancellationToken::new(),
        ))
    }

    #[tokio::test]
    async fn a_message_to_an_idle_chat_starts_a_turn_that_answers_it_and_is_marked_delivered()
    -> anyhow::Result<()> {
        let server = ScriptedServer::start(vec![Turn::text("Noted: the build is green.")]).await;
        let mut config = Config {
            default_model: Some("openai/gpt-test".into()),
            ..Config::default()
        };
        config.providers.openai.base_url = Some(server.openai_base());
        let s = TestServices::open(config).await;
        let chat = s.chat().await;
        let dispatcher = dispatcher(&s);
        dispatcher.start();
        let queued = s
            .inbox
            .enqueue(NewInboxMessage {
                id: "msg-1".into(),
                target: chat.id.clone(),
                sender: "ci".into(),
                kind: "agent_message".into(),
                text: "the build is green".into(),
            })
            .await?;
        let mut status = InboxStatus::Pending;
        for _ in 0..300 {
            status = s.inbox.list(Some(&chat.id)).await?[0].status;
            if status == InboxStatus::Delivered {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        dispatcher.stop();
        assert_eq!(status, InboxStatus::Delivered);
        let transcript: Vec<ChatMessage> = s
            .store
            .messages(&chat.id)
            .await?
            .into_iter()
            .map(|m| m.message)
            .collect();
        assert_eq!(
            transcript,
            vec![
                ChatMessage::User {
                    text: transcript_text(&queued),
                    attachments: Vec::new(),
                },
                ChatMessage::Assistant {
                    text: "Noted: the build is green.".into(),
                    tool_calls: Vec::new()
                },
            ]
        );
        Ok(())
    }
}
