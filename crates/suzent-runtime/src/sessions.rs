//! Live chat sessions in this process: one run at a time per chat (its run lock), the files the
//! agent read (for the stale-edit checks), and the token that cancels the running turn.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use suzent_tools::ReadTracker;
use tokio_util::sync::CancellationToken;

/// One chat's live state.
pub(crate) struct Session {
    /// Held for the whole of a run (a turn, a resume, an inbox delivery).
    pub(crate) run_lock: tokio::sync::Mutex<()>,
    /// Files read in this session.
    pub(crate) reads: ReadTracker,
    /// Cancels the running turn; replaced at the start of each run.
    pub(crate) cancel: Mutex<CancellationToken>,
}

impl Session {
    fn new() -> Session {
        Session {
            run_lock: tokio::sync::Mutex::new(()),
            reads: Default::default(),
            cancel: Mutex::new(CancellationToken::new()),
        }
    }

    /// Whether a run holds the session now.
    pub(crate) fn is_running(&self) -> bool {
        self.run_lock.try_lock().is_err()
    }

    /// A fresh cancellation token for a run that starts now.
    pub(crate) fn start_run(&self) -> CancellationToken {
        let cancel = CancellationToken::new();
        if let Ok(mut token) = self.cancel.lock() {
            *token = cancel.clone();
        }
        cancel
    }
}

/// The session table.
#[derive(Default)]
pub(crate) struct Sessions {
    table: Mutex<HashMap<String, Arc<Session>>>,
}

impl Sessions {
    /// The chat's session, created on first use.
    pub(crate) fn session(&self, chat_id: &str) -> Arc<Session> {
        match self.table.lock() {
            Ok(mut s) => s
                .entry(chat_id.to_string())
                .or_insert_with(|| Arc::new(Session::new()))
                .clone(),
            Err(_) => Arc::new(Session::new()),
        }
    }

    /// The chat's session if it has one.
    pub(crate) fn existing(&self, chat_id: &str) -> Option<Arc<Session>> {
        self.table.lock().ok().and_then(|s| s.get(chat_id).cloned())
    }

    /// Forgets a chat's session (the chat was deleted).
    pub(crate) fn remove(&self, chat_id: &str) {
        if let Ok(mut sessions) = self.table.lock() {
            sessions.remove(chat_id);
        }
    }

    /// Stops the chat's running turn (the model stream and any running tool).
    pub(crate) fn cancel(&self, chat_id: &str) {
        if let Some(session) = self.existing(chat_id)
            && let Ok(token) = session.cancel.lock()
        {
            token.cancel();
        }
    }

    /// Whether a turn of this chat runs in this process now.
    pub(crate) fn is_running(&self, chat_id: &str) -> bool {
        self.existing(chat_id).is_some_and(|s| s.is_running())
    }

    /// Chats with a turn running in this process.
    pub(crate) fn running(&self) -> Vec<String> {
        let sessions: Vec<(String, Arc<Session>)> = match self.table.lock() {
            Ok(s) => s.iter().map(|(k, v)| (k.clone(), Arc::clone(v))).collect(),
            Err(_) => Vec::new(),
        };
        sessions
            .into_iter()
            .filter(|(_, s)| s.is_running())
            .map(|(id, _)| id)
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn a_chat_counts_as_running_while_its_run_lock_is_held() {
        let sessions = Sessions::default();
        let session = sessions.session("a");
        assert_eq!(sessions.running(), Vec::<String>::new());
        let guard = session.run_lock.lock().await;
        assert_eq!(sessions.running(), vec!["a".to_string()]);
        assert!(sessions.is_running("a"));
        drop(guard);
        assert!(!sessions.is_running("a"));
    }

    #[test]
    fn cancel_stops_the_token_of_the_run_that_is_going() {
        let sessions = Sessions::default();
        let token = sessions.session("a").start_run();
        sessions.cancel("a");
        assert!(token.is_cancelled());
        let next = sessions.session("a").start_run();
        assert!(!next.is_cancelled());
    }
}
