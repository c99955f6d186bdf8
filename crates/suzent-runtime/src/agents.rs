//! Agents talking to agents: the runtime side of `agent_list`, `agent_read`, `agent_send`,
//! `agent_stop` and `spawn_agent` (sub-agents).
//!
//! Access is inferred from the project: an agent sees the chats of its own workspace. Sub-agents
//! run headless (auto mode, what would ask is refused) with their profile's tools only, get no
//! agent host (so no lifecycle tools and no further sub-agents), and report back to the
//! delegating chat through the inbox.

use crate::background::BackgroundService;
use crate::chats::{ChatService, CreateChat};
use crate::devices::{Devices, PEER_PREFIX};
use crate::inbox::InboxService;
use crate::sessions::Sessions;
use crate::settings::SettingsService;
use crate::turn::{TurnService, headless_options};
use async_trait::async_trait;
use chrono::Utc;
use std::sync::{Arc, Weak};
use suzent_core::{
    BackgroundTask, BackgroundTaskKind, BackgroundTaskStatus, ChatMessage, PermissionMode,
    RunOutcome, new_id,
};
use suzent_store::{AgentLink, ChatRecord, NewInboxMessage, Store};
use suzent_tools::{AgentHost, AgentProfile, AgentSummary, SpawnRequest, ToolRegistry};

/// Nesting depth of sub-agents: 1, only top-level chats delegate. Fixed by design (sub-agents get
/// no agent tools); the concurrency limits are `subagent_max_running` and
/// `subagent_max_per_chat` in `config.toml`.
pub const MAX_SUBAGENT_DEPTH: i64 = 1;
/// Characters of one tool result shown by `agent_read`.
const READ_TOOL_RESULT_CHARS: usize = 600;

/// The agent service: the [`AgentHost`] a top-level chat's tools get, and the runner of
/// sub-agents (through the turn service, held weakly: the turn service holds this one).
pub(crate) struct AgentService {
    turn: Weak<TurnService>,
    store: Store,
    chats: Arc<ChatService>,
    sessions: Arc<Sessions>,
    settings: Arc<SettingsService>,
    inbox: Arc<InboxService>,
    background: Arc<BackgroundService>,
    registry: ToolRegistry,
    /// Paired devices: `peer:<device>[/<agent>]` ids are theirs.
    devices: Arc<Devices>,
}

impl std::fmt::Debug for AgentService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentService").finish_non_exhaustive()
    }
}

impl AgentService {
    /// The service; `turn` runs the sub-agents' turns.
    #[allow(clippy::too_many_arguments)] // the services it reaches, each a handle
    pub(crate) fn new(
        turn: Weak<TurnService>,
        store: Store,
        chats: Arc<ChatService>,
        sessions: Arc<Sessions>,
        settings: Arc<SettingsService>,
        inbox: Arc<InboxService>,
        background: Arc<BackgroundService>,
        registry: ToolRegistry,
        devices: Arc<Devices>,
    ) -> AgentService {
        AgentService {
            turn,
            store,
            chats,
            sessions,
            settings,
            inbox,
            background,
            registry,
            devices,
        }
    }

    fn turn(&self) -> Result<Arc<TurnService>, String> {
        self.turn
            .upgrade()
            .ok_or_else(|| "the runtime is shutting down".to_string())
    }
}

fn text_of(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl AgentService {
    fn is_running(&self, chat_id: &str) -> bool {
        self.sessions.is_running(chat_id)
    }

    /// The chat `agent_id` if `caller` may reach it (same project).
    async fn reachable(&self, caller: &str, agent_id: &str) -> Result<ChatRecord, String> {
        let me = self.chats.get(caller).await.map_err(text_of)?;
        match self.chats.get(agent_id).await {
            Ok(other) if other.workspace == me.workspace => Ok(other),
            _ => Err(format!(
                "no agent '{agent_id}' in this project; take an id from agent_list"
            )),
        }
    }

    async fn refuse_subagent(&self, caller: &str, what: &str) -> Result<(), String> {
        match self.store.agent_link(caller).await.map_err(text_of)? {
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
        let session = self.sessions.session(&child.id);
        let summary = match self.turn() {
            Ok(turn) => {
                let _guard = session.run_lock.lock().await;
                turn.run(&session, &child, new_id(), headless_options())
                    .await
            }
            Err(message) => Err(crate::error::RuntimeError::InvalidInput {
                field: "agent".into(),
                message,
            }),
        };
        let (status, outcome, text) = match &summary {
            Ok(s) => match s.outcome {
                RunOutcome::Completed => {
                    (BackgroundTaskStatus::Finished, "finished", s.text.clone())
                }
                RunOutcome::Cancelled => {
                    (BackgroundTaskStatus::Stopped, "was stopped", s.text.clone())
                }
                RunOutcome::Suspended
                | RunOutcome::Failed
                | RunOutcome::MaxSteps
                | RunOutcome::LoopDetected
                | RunOutcome::ContextOverflow
                | RunOutcome::CompactionFailed => (
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
        self.background.update_subagent(done);
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
                .inbox
                .enqueue(NewInboxMessage {
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
    suzent_core::text::tail_chars(text, max_chars).to_string()
}

fn render_message(m: &ChatMessage) -> String {
    match m {
        ChatMessage::User { text, .. } => format!("user: {text}"),
        ChatMessage::Assistant { text, tool_calls } => {
            let mut out = format!("assistant: {text}");
            for c in tool_calls {
                let args = suzent_core::text::truncate_chars(&c.arguments, 300, "");
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
            let more = content
                .chars()
                .count()
                .saturating_sub(READ_TOOL_RESULT_CHARS);
            let shown = suzent_core::text::truncate_chars(
                content,
                READ_TOOL_RESULT_CHARS,
                &format!(" … [{more} more characters]"),
            );
            format!(
                "tool {tool_name}{}: {shown}",
                if *is_error { " (error)" } else { "" },
            )
        }
    }
}

#[async_trait]
impl AgentHost for AgentService {
    async fn list(&self, caller: &str, recent: bool) -> Result<Vec<AgentSummary>, String> {
        let rt = self;
        let peers = rt.devices.agents_for_list(recent).await;
        let me = rt.chats.get(caller).await.map_err(text_of)?;
        let chats = rt.chats.list().await.map_err(text_of)?;
        let cap = if recent {
            suzent_tools::agent_tools::MAX_RECENT_LISTED
        } else {
            suzent_tools::agent_tools::MAX_ACTIVE_LISTED
        };
        let mut out = Vec::new();
        for chat in chats.into_iter().filter(|c| c.workspace == me.workspace) {
            let running = rt.is_running(&chat.id);
            if !recent && !running {
                continue;
            }
            let link = rt.store.agent_link(&chat.id).await.map_err(text_of)?;
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
        let rt = self;
        if agent_id.starts_with(PEER_PREFIX) {
            return rt.devices.read(agent_id, budget).await;
        }
        let chat = rt.reachable(caller, agent_id).await?;
        let messages = rt.chats.messages(&chat.id).await.map_err(text_of)?;
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
        let rt = self;
        rt.refuse_subagent(caller, "message other agents").await?;
        if agent_id.starts_with(PEER_PREFIX) {
            return rt.devices.send(caller, agent_id, message).await;
        }
        let target = rt.reachable(caller, agent_id).await?;
        if target.id == caller {
            return Err("an agent cannot send a message to itself".into());
        }
        let queued = rt
            .inbox
            .enqueue(NewInboxMessage {
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
        let rt = self;
        rt.refuse_subagent(caller, "stop other agents").await?;
        if agent_id.starts_with(PEER_PREFIX) {
            return rt.devices.stop(agent_id).await;
        }
        let target = rt.reachable(caller, agent_id).await?;
        if target.id == caller {
            return Err("an agent cannot stop itself; end the turn instead".into());
        }
        if !rt.is_running(&target.id) {
            return Ok(format!("agent {} is idle; nothing to stop", target.id));
        }
        rt.sessions.cancel(&target.id);
        Ok(format!("stop requested for agent {}", target.id))
    }

    async fn spawn(&self, caller: &str, request: SpawnRequest) -> Result<String, String> {
        let rt = self;
        if let Some(link) = rt.store.agent_link(caller).await.map_err(text_of)?
            && link.depth >= MAX_SUBAGENT_DEPTH
        {
            return Err("sub-agents cannot start sub-agents".into());
        }
        // Checking the limits and registering the new sub-agent happen under one gate, so
        // spawns racing from several chats cannot overshoot them.
        let gate = rt.background.spawn_gate().await;
        {
            let config = rt.settings.config();
            let max_running = usize::try_from(config.subagent_max_running).unwrap_or(usize::MAX);
            let max_per_chat = usize::try_from(config.subagent_max_per_chat).unwrap_or(usize::MAX);
            let subs = rt.background.subagents();
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
        let parent = rt.chats.get(caller).await.map_err(text_of)?;
        let tools: Vec<String> = request
            .profile
            .tools()
            .iter()
            .filter(|t| rt.registry.get(t).is_some())
            .map(|t| t.to_string())
            .collect();
        let title = suzent_core::text::truncate_chars(&request.task, 60, "");
        // The chat, its link to the parent and the task are stored in one transaction: a
        // failure leaves no unlinked "Sub-agent" chat behind.
        let new = rt
            .chats
            .new_chat(CreateChat {
                title: Some(format!("Sub-agent ({}): {title}", request.profile.as_str())),
                workspace: Some(parent.workspace.clone().into()),
                model: rt.settings.config().subagent_model.or(parent.model.clone()),
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
            attachments: Vec::new(),
        };
        let child = rt
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
        rt.background.update_subagent(task.clone());
        drop(gate);
        let child_id = child.id.clone();
        let profile = request.profile;
        if request.background {
            let turn = rt.turn()?;
            tokio::spawn(async move {
                turn.agents()
                    .run_subagent(child, parent.id, profile, task, true)
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use suzent_core::Config;
    use suzent_tests::{ScriptedServer, Turn};

    /// Services whose model is `openai/gpt-test` on `server`.
    async fn services(server: &ScriptedServer) -> TestServices {
        let mut config = Config {
            default_model: Some("openai/gpt-test".into()),
            ..Config::default()
        };
        config.providers.openai.base_url = Some(server.openai_base());
        TestServices::open(config).await
    }

    /// A chat in another folder than the fixture's workspace.
    async fn elsewhere(s: &TestServices) -> ChatRecord {
        let other = s.paths.data_dir.join("other-project");
        std::fs::create_dir_all(&other).unwrap();
        s.chats
            .create(CreateChat {
                workspace: Some(other),
                ..Default::default()
            })
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn agent_list_shows_the_chats_of_the_callers_project_only() -> anyhow::Result<()> {
        let server = ScriptedServer::start(Vec::new()).await;
        let s = services(&server).await;
        let turn = s.turn();
        let me = s.chat().await;
        let peer = s.chat().await;
        let stranger = elsewhere(&s).await;
        let mut listed: Vec<(String, String, String)> = turn
            .agents()
            .list(&me.id, true)
            .await
            .unwrap()
            .into_iter()
            .map(|a| (a.id, a.kind, a.status))
            .collect();
        listed.sort();
        let mut expected = vec![
            (me.id.clone(), "chat".to_string(), "idle".to_string()),
            (peer.id.clone(), "chat".to_string(), "idle".to_string()),
        ];
        expected.sort();
        assert_eq!(listed, expected);
        assert!(!listed.iter().any(|(id, _, _)| *id == stranger.id));
        // Only running agents are listed without `recent`.
        assert_eq!(turn.agents().list(&me.id, false).await.unwrap(), Vec::new());
        Ok(())
    }

    #[tokio::test]
    async fn agent_send_queues_the_message_in_the_other_chats_inbox() -> anyhow::Result<()> {
        let server = ScriptedServer::start(Vec::new()).await;
        let s = services(&server).await;
        let turn = s.turn();
        let me = s.chat().await;
        let peer = s.chat().await;
        let id = turn
            .agents()
            .send(&me.id, &peer.id, "the build is green")
            .await
            .unwrap();
        let queued: Vec<(String, String, String, String)> = s
            .inbox
            .list(Some(&peer.id))
            .await?
            .into_iter()
            .map(|m| (m.id, m.sender, m.kind, m.text))
            .collect();
        assert_eq!(
            queued,
            vec![(
                id,
                me.id.clone(),
                "agent_message".to_string(),
                "the build is green".to_string()
            )]
        );
        assert_eq!(
            turn.agents().send(&me.id, &me.id, "hi").await,
            Err("an agent cannot send a message to itself".to_string())
        );
        Ok(())
    }

    #[tokio::test]
    async fn agent_read_shows_a_project_chats_transcript_and_refuses_another_projects()
    -> anyhow::Result<()> {
        let server = ScriptedServer::start(Vec::new()).await;
        let s = services(&server).await;
        let turn = s.turn();
        let me = s.chat().await;
        let peer = s.chat().await;
        let stranger = elsewhere(&s).await;
        for message in [
            ChatMessage::User {
                text: "run the tests".into(),
                attachments: Vec::new(),
            },
            ChatMessage::Assistant {
                text: "all 12 pass".into(),
                tool_calls: Vec::new(),
            },
        ] {
            s.store.append_message(&peer.id, None, &message).await?;
        }
        assert_eq!(
            turn.agents().read(&me.id, &peer.id, 4000).await,
            Ok(format!(
                "agent {} \"{}\" (idle, 2 messages)\nuser: run the tests\nassistant: all 12 pass",
                peer.id, peer.title
            ))
        );
        assert_eq!(
            turn.agents().read(&me.id, &stranger.id, 4000).await,
            Err(format!(
                "no agent '{}' in this project; take an id from agent_list",
                stranger.id
            ))
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_sub_agent_runs_its_task_headless_and_answers_the_delegating_chat()
    -> anyhow::Result<()> {
        let server =
            ScriptedServer::start(vec![Turn::text("The parser lives in src/parse.rs.")]).await;
        let s = services(&server).await;
        let turn = s.turn();
        let parent = s.chat().await;
        let answer = turn
            .agents()
            .spawn(
                &parent.id,
                SpawnRequest {
                    task: "Find the parser".into(),
                    profile: AgentProfile::Explore,
                    background: false,
                },
            )
            .await
            .unwrap();
        let tasks = s.background.tasks();
        assert_eq!(tasks.len(), 1, "{tasks:?}");
        let child = &tasks[0];
        assert_eq!(
            answer,
            format!(
                "Sub-agent {} (explore profile) finished.\nThe parser lives in src/parse.rs.",
                child.id
            )
        );
        assert_eq!(
            (
                child.chat_id.as_str(),
                child.status,
                child.recent_output.as_str()
            ),
            (
                parent.id.as_str(),
                BackgroundTaskStatus::Finished,
                "The parser lives in src/parse.rs."
            )
        );
        let link = s.store.agent_link(&child.id).await?.expect("a link");
        assert_eq!(
            (
                link.parent_id,
                link.depth,
                s.chats.get(&child.id).await?.mode
            ),
            (parent.id.clone(), 1, PermissionMode::Auto)
        );
        // A foreground sub-agent answers in the call: nothing is queued for the parent.
        assert_eq!(s.inbox.list(Some(&parent.id)).await?, Vec::new());
        // The child cannot delegate further.
        assert_eq!(
            turn.agents()
                .spawn(
                    &child.id,
                    SpawnRequest {
                        task: "Go deeper".into(),
                        profile: AgentProfile::Explore,
                        background: false,
                    },
                )
                .await,
            Err("sub-agents cannot start sub-agents".to_string())
        );
        Ok(())
    }
}
