//! Agents talking to agents: the runtime side of `agent_list`, `agent_read`, `agent_send`,
//! `agent_stop` and `spawn_agent` (sub-agents).
//!
//! Access is inferred from the project: an agent sees the chats of its own workspace. Sub-agents
//! run headless (auto mode, what would ask is refused) with their profile's tools only, get no
//! agent host (so no lifecycle tools and no further sub-agents), and report back to the
//! delegating chat through the inbox.

use super::inbox::headless_options;
use super::{Inner, Runtime};
use crate::runtime::CreateChat;
use async_trait::async_trait;
use chrono::Utc;
use std::sync::{PoisonError, Weak};
use suzent_core::{
    BackgroundTask, BackgroundTaskKind, BackgroundTaskStatus, ChatMessage, PermissionMode,
    RunOutcome, new_id,
};
use suzent_store::{AgentLink, ChatRecord, NewInboxMessage};
use suzent_tools::{AgentHost, AgentProfile, AgentSummary, SpawnRequest};

/// Nesting depth of sub-agents: 1, only top-level chats delegate. Fixed by design (sub-agents get
/// no agent tools); the concurrency limits are `subagent_max_running` and
/// `subagent_max_per_chat` in `config.toml`.
pub const MAX_SUBAGENT_DEPTH: i64 = 1;
/// Characters of one tool result shown by `agent_read`.
const READ_TOOL_RESULT_CHARS: usize = 600;

/// The [`AgentHost`] a top-level chat's tools get.
#[derive(Debug)]
pub(crate) struct Agents {
    pub(crate) runtime: Weak<Inner>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner").field("paths", &self.paths).finish()
    }
}

impl Agents {
    fn runtime(&self) -> Result<Runtime, String> {
        self.runtime
            .upgrade()
            .map(|inner| Runtime { inner })
            .ok_or_else(|| "the runtime is shutting down".to_string())
    }
}

fn text_of(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl Runtime {
    /// Whether a turn of this chat runs in this process now.
    pub(crate) fn is_running(&self, chat_id: &str) -> bool {
        self.existing_session(chat_id)
            .is_some_and(|s| s.run_lock.try_lock().is_err())
    }

    /// The chat `agent_id` if `caller` may reach it (same project).
    async fn reachable(&self, caller: &str, agent_id: &str) -> Result<ChatRecord, String> {
        let me = self.chat(caller).await.map_err(text_of)?;
        match self.chat(agent_id).await {
            Ok(other) if other.workspace == me.workspace => Ok(other),
            _ => Err(format!(
                "no agent '{agent_id}' in this project; take an id from agent_list"
            )),
        }
    }

    async fn refuse_subagent(&self, caller: &str, what: &str) -> Result<(), String> {
        match self.inner.store.agent_link(caller).await.map_err(text_of)? {
            Some(_) => Err(format!("sub-agents cannot {what}")),
            None => Ok(()),
        }
    }

    async fn run_subagent(
        &self,
        child: ChatRecord,
        parent_id: String,
        profile: AgentProfile,
        task: BackgroundTask,
        report: bool,
    ) -> String {
        let session = self.session(&child.id);
        let summary = {
            let _guard = session.run_lock.lock().await;
            self.run(&session, &child, new_id(), headless_options())
                .await
        };
        let (status, outcome, text) = match &summary {
            Ok(s) => match s.outcome {
                RunOutcome::Completed => {
                    (BackgroundTaskStatus::Finished, "finished", s.text.clone())
                }
                RunOutcome::Cancelled => {
                    (BackgroundTaskStatus::Stopped, "was stopped", s.text.clone())
                }
                RunOutcome::Suspended | RunOutcome::Failed => (
                    BackgroundTaskStatus::Failed,
                    "failed",
                    s.error.clone().unwrap_or_else(|| s.text.clone()),
                ),
            },
            Err(e) => (BackgroundTaskStatus::Failed, "failed", e.to_string()),
        };
        let mut done = task;
        done.status = status;
        done.recent_output = shorten(&text, suzent_tools::REPORT_TAIL_CHARS.min(2_000));
        done.finished_at = Some(Utc::now());
        self.update_subagent(done);
        let message = format!(
            "Sub-agent {} ({} profile) {outcome}.\n{}",
            child.id,
            profile.as_str(),
            if text.trim().is_empty() {
                "(no answer)"
            } else {
                &text
            }
        );
        if report {
            let run_id = summary
                .as_ref()
                .map(|s| s.run_id.clone())
                .unwrap_or_else(|_| new_id());
            let queued = self
                .enqueue_inbox(NewInboxMessage {
                    id: format!("subagent:{}:{run_id}", child.id),
                    target: parent_id,
                    sender: child.id.clone(),
                    kind: "subagent_report".into(),
                    text: message.clone(),
                })
                .await;
            if let Err(e) = queued {
                tracing::warn!(agent = %child.id, "sub-agent report not queued: {e}");
            }
        }
        message
    }
}

fn shorten(text: &str, max_chars: usize) -> String {
    let count = text.chars().count();
    if count <= max_chars {
        return text.to_string();
    }
    text.chars().skip(count - max_chars).collect()
}

fn render_message(m: &ChatMessage) -> String {
    match m {
        ChatMessage::User { text } => format!("user: {text}"),
        ChatMessage::Assistant { text, tool_calls } => {
            let mut out = format!("assistant: {text}");
            for c in tool_calls {
                let args: String = c.arguments.chars().take(300).collect();
                out.push_str(&format!("\n  -> calls {}({args})", c.name));
            }
            out
        }
        ChatMessage::Tool {
            tool_name,
            content,
            is_error,
            ..
        } => {
            let shown: String = content.chars().take(READ_TOOL_RESULT_CHARS).collect();
            let more = content
                .chars()
                .count()
                .saturating_sub(READ_TOOL_RESULT_CHARS);
            format!(
                "tool {tool_name}{}: {shown}{}",
                if *is_error { " (error)" } else { "" },
                if more > 0 {
                    format!(" … [{more} more characters]")
                } else {
                    String::new()
                }
            )
        }
    }
}

#[async_trait]
impl AgentHost for Agents {
    async fn list(&self, caller: &str, recent: bool) -> Result<Vec<AgentSummary>, String> {
        let rt = self.runtime()?;
        let peers = rt.devices().agents_for_list(recent).await;
        let me = rt.chat(caller).await.map_err(text_of)?;
        let chats = rt.list_chats().await.map_err(text_of)?;
        let cap = if recent {
            suzent_tools::agents::MAX_RECENT_LISTED
        } else {
            suzent_tools::agents::MAX_ACTIVE_LISTED
        };
        let mut out = Vec::new();
        for chat in chats.into_iter().filter(|c| c.workspace == me.workspace) {
            let running = rt.is_running(&chat.id);
            if !recent && !running {
                continue;
            }
            let link = rt.inner.store.agent_link(&chat.id).await.map_err(text_of)?;
            out.push(AgentSummary {
                kind: if link.is_some() { "subagent" } else { "chat" }.into(),
                parent: link.map(|l| l.parent_id),
                status: if running { "running" } else { "idle" }.into(),
                id: chat.id,
                title: chat.title,
                updated: chat.updated_at,
            });
            if out.len() >= cap {
                break;
            }
        }
        out.extend(peers);
        Ok(out)
    }

    async fn read(&self, caller: &str, agent_id: &str, budget: usize) -> Result<String, String> {
        let rt = self.runtime()?;
        if agent_id.starts_with(crate::devices::PEER_PREFIX) {
            return rt.devices().read(agent_id, budget).await;
        }
        let chat = rt.reachable(caller, agent_id).await?;
        let messages = rt.messages(&chat.id).await.map_err(text_of)?;
        let mut kept: Vec<String> = Vec::new();
        let mut used = 0usize;
        for m in messages.iter().rev() {
            let text = render_message(&m.message);
            let len = text.chars().count() + 1;
            if used + len > budget && !kept.is_empty() {
                break;
            }
            used += len;
            kept.push(if len > budget {
                shorten(&text, budget)
            } else {
                text
            });
        }
        let omitted = messages.len() - kept.len();
        kept.reverse();
        let status = if rt.is_running(&chat.id) {
            "running"
        } else {
            "idle"
        };
        let mut out = format!(
            "agent {} \"{}\" ({status}, {} messages)\n",
            chat.id,
            chat.title,
            messages.len()
        );
        if omitted > 0 {
            out.push_str(&format!(
                "[{omitted} older messages omitted; newest shown]\n"
            ));
        }
        out.push_str(&kept.join("\n"));
        Ok(out)
    }

    async fn send(&self, caller: &str, agent_id: &str, message: &str) -> Result<String, String> {
        let rt = self.runtime()?;
        rt.refuse_subagent(caller, "message other agents").await?;
        if agent_id.starts_with(crate::devices::PEER_PREFIX) {
            return rt.devices().send(caller, agent_id, message).await;
        }
        let target = rt.reachable(caller, agent_id).await?;
        if target.id == caller {
            return Err("an agent cannot send a message to itself".into());
        }
        let queued = rt
            .enqueue_inbox(NewInboxMessage {
                id: new_id(),
                target: target.id,
                sender: caller.to_string(),
                kind: "agent_message".into(),
                text: message.to_string(),
            })
            .await
            .map_err(text_of)?;
        Ok(queued.id)
    }

    async fn stop(&self, caller: &str, agent_id: &str) -> Result<String, String> {
        let rt = self.runtime()?;
        rt.refuse_subagent(caller, "stop other agents").await?;
        if agent_id.starts_with(crate::devices::PEER_PREFIX) {
            return rt.devices().stop(agent_id).await;
        }
        let target = rt.reachable(caller, agent_id).await?;
        if target.id == caller {
            return Err("an agent cannot stop itself; end the turn instead".into());
        }
        if !rt.is_running(&target.id) {
            return Ok(format!("agent {} is idle; nothing to stop", target.id));
        }
        rt.cancel(&target.id);
        Ok(format!("stop requested for agent {}", target.id))
    }

    async fn spawn(&self, caller: &str, request: SpawnRequest) -> Result<String, String> {
        let rt = self.runtime()?;
        if let Some(link) = rt.inner.store.agent_link(caller).await.map_err(text_of)?
            && link.depth >= MAX_SUBAGENT_DEPTH
        {
            return Err("sub-agents cannot start sub-agents".into());
        }
        // Checking the limits and registering the new sub-agent happen under one gate, so
        // spawns racing from several chats cannot overshoot them.
        let gate = rt.inner.bg.spawn_gate.lock().await;
        {
            let config = rt.config();
            let max_running = usize::try_from(config.subagent_max_running).unwrap_or(usize::MAX);
            let max_per_chat = usize::try_from(config.subagent_max_per_chat).unwrap_or(usize::MAX);
            let subs = rt
                .inner
                .bg
                .subagents
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let running: Vec<&BackgroundTask> =
                subs.values().filter(|t| !t.status.is_final()).collect();
            let mine = running.iter().filter(|t| t.chat_id == caller).count();
            if mine >= max_per_chat {
                return Err(format!(
                    "sub-agent limit reached: this chat already has {mine} sub-agents running (subagent_max_per_chat = {max_per_chat}); the task was not started. Wait for one to report back or stop one with agent_stop"
                ));
            }
            if running.len() >= max_running {
                return Err(format!(
                    "sub-agent limit reached: {} sub-agents are running in this app (subagent_max_running = {max_running}); the task was not started. Wait for one to report back",
                    running.len()
                ));
            }
        }
        let parent = rt.chat(caller).await.map_err(text_of)?;
        let tools: Vec<String> = request
            .profile
            .tools()
            .iter()
            .filter(|t| rt.registry().get(t).is_some())
            .map(|t| t.to_string())
            .collect();
        let title: String = request.task.chars().take(60).collect();
        // The chat, its link to the parent and the task are stored in one transaction: a
        // failure leaves no unlinked "Sub-agent" chat behind.
        let new = rt
            .new_chat(CreateChat {
                title: Some(format!("Sub-agent ({}): {title}", request.profile.as_str())),
                workspace: Some(parent.workspace.clone().into()),
                model: rt.config().subagent_model.or(parent.model.clone()),
                mode: Some(PermissionMode::Auto),
                tools: Some(tools),
            })
            .map_err(text_of)?;
        let link = AgentLink {
            chat_id: new.id.clone(),
            parent_id: parent.id.clone(),
            kind: "subagent".into(),
            profile: Some(request.profile.as_str().into()),
            depth: 1,
        };
        let task_message = ChatMessage::User {
            text: request.task.clone(),
        };
        let child = rt
            .inner
            .store
            .create_subagent_chat(&new, &link, &task_message)
            .await
            .map_err(text_of)?;
        let task = BackgroundTask {
            id: child.id.clone(),
            kind: BackgroundTaskKind::Agent,
            chat_id: parent.id.clone(),
            title: child.title.clone(),
            status: BackgroundTaskStatus::Running,
            exit_code: None,
            recent_output: String::new(),
            output_bytes: 0,
            started_at: Utc::now(),
            finished_at: None,
        };
        rt.update_subagent(task.clone());
        drop(gate);
        let child_id = child.id.clone();
        let profile = request.profile;
        if request.background {
            let rt2 = rt.clone();
            tokio::spawn(async move {
                rt2.run_subagent(child, parent.id, profile, task, true)
                    .await;
            });
            Ok(format!(
                "started sub-agent {child_id} ({} profile) in the background; it reports back with a message when done (agent_read {child_id} shows its progress)",
                profile.as_str()
            ))
        } else {
            Ok(rt
                .run_subagent(child, parent.id, profile, task, false)
                .await)
        }
    }
}
