//! Agents talking to agents (seed 000 "Agent & Meta"): the lifecycle tools `agent_list`,
//! `agent_read`, `agent_send`, `agent_stop`, and `spawn_agent` (legacy name `AgentTool`), which
//! delegates a task to a sub-agent. Selecting `AgentTool` equips the lifecycle tools.
//!
//! The work is done by the runtime through [`AgentHost`] ([`ToolContext::agents`]); sub-agents get
//! no host, so they can neither use the lifecycle tools nor spawn further sub-agents.

use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use suzent_permissions::ToolAccess;

/// Most agents `agent_list` returns for active agents (seed 000).
pub const MAX_ACTIVE_LISTED: usize = 20;
/// Most agents `agent_list` returns for recent agents (seed 000).
pub const MAX_RECENT_LISTED: usize = 50;
/// Characters of transcript `agent_read` returns at most.
pub const READ_BUDGET_CHARS: usize = 12_000;

/// What `agent_list` says about one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSummary {
    /// Stable id: the agent's chat id.
    pub id: String,
    /// The chat's title.
    pub title: String,
    /// `chat` or `subagent`.
    pub kind: String,
    /// `running` (in a turn) or `idle`.
    pub status: String,
    /// The chat that started it (sub-agents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Last activity.
    pub updated: DateTime<Utc>,
}

/// The task profiles of sub-agents: each a subset of tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentProfile {
    /// Read and search files (read_file, glob_search, grep_search).
    Explore,
    /// Like explore; for working out a plan before changing anything.
    Plan,
    /// Read, write and edit files, run commands.
    Write,
    /// Read files and run commands (tests, builds) to check work.
    Verify,
    /// Web search and fetch (when those tools exist), plus reading files.
    Web,
}

impl AgentProfile {
    /// The tool runtime names of this profile (those not registered are skipped).
    pub fn tools(self) -> &'static [&'static str] {
        const READ: &[&str] = &["read_file", "glob_search", "grep_search"];
        match self {
            AgentProfile::Explore | AgentProfile::Plan => READ,
            AgentProfile::Write => &[
                "read_file",
                "glob_search",
                "grep_search",
                "write_file",
                "edit_file",
                "run_command",
            ],
            AgentProfile::Verify => &["read_file", "glob_search", "grep_search", "run_command"],
            AgentProfile::Web => &[
                "web_search",
                "webpage_fetch",
                "read_file",
                "glob_search",
                "grep_search",
            ],
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentProfile::Explore => "explore",
            AgentProfile::Plan => "plan",
            AgentProfile::Write => "write",
            AgentProfile::Verify => "verify",
            AgentProfile::Web => "web",
        }
    }
}

/// A task to delegate.
#[derive(Debug, Clone, PartialEq)]
pub struct SpawnRequest {
    /// What the sub-agent should do.
    pub task: String,
    /// Its tool subset.
    pub profile: AgentProfile,
    /// Run in the background and report through the inbox (true), or wait for the answer.
    pub background: bool,
}

/// The runtime's agent services, seen from a tool call. Errors are messages for the model.
#[async_trait]
pub trait AgentHost: Send + Sync + std::fmt::Debug + 'static {
    /// Agents of the caller's project: active ones (or recent ones), newest first, capped.
    async fn list(&self, caller: &str, recent: bool) -> Result<Vec<AgentSummary>, String>;
    /// The visible transcript of `agent_id` within `budget` characters, newest kept.
    async fn read(&self, caller: &str, agent_id: &str, budget: usize) -> Result<String, String>;
    /// Queues `message` for `agent_id` in the durable inbox; returns the message id.
    async fn send(&self, caller: &str, agent_id: &str, message: &str) -> Result<String, String>;
    /// Stops `agent_id`'s running turn.
    async fn stop(&self, caller: &str, agent_id: &str) -> Result<String, String>;
    /// Delegates a task to a new sub-agent of `caller`; returns what to tell the model.
    async fn spawn(&self, caller: &str, request: SpawnRequest) -> Result<String, String>;
}

fn host(ctx: &ToolContext) -> Result<&Arc<dyn AgentHost>, ToolError> {
    ctx.agents.as_ref().ok_or_else(|| {
        ToolError::Failed(
            "agent tools are not available to this agent (sub-agents cannot manage or message other agents)".into(),
        )
    })
}

fn check_agent_id(agent_id: &str) -> Result<(), ToolError> {
    if agent_id.trim().is_empty() {
        return Err(ToolError::InvalidArguments(
            "field `agent_id` is empty; take an id from agent_list".into(),
        ));
    }
    Ok(())
}

macro_rules! simple_tool {
    ($tool:ident, $args:ty, $name:literal, $class:literal, $display:literal, $desc:literal) => {
        #[doc = concat!("The `", $name, "` tool.")]
        #[derive(Debug)]
        pub struct $tool {
            spec: ToolSpec,
        }

        impl $tool {
            /// The tool.
            pub fn new() -> Self {
                Self {
                    spec: ToolSpec::new::<$args>($name, $class, "agents", $display, $desc)
                        .deferrable(false),
                }
            }
        }

        impl Default for $tool {
            fn default() -> Self {
                Self::new()
            }
        }
    };
}

/// Arguments of `agent_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentListArgs {
    /// List recently active agents too, not only those running now (default false).
    #[serde(default)]
    pub recent: bool,
}

simple_tool!(
    AgentListTool,
    AgentListArgs,
    "agent_list",
    "AgentListTool",
    "List agents",
    "List the agents of this project: their ids (stable chat ids), kind, status, parent and last activity. Active agents by default (at most 20); recent=true lists recent ones too (at most 50). Paired devices appear as peer:<device> (kind peer, status online/offline) and, with recent=true and the device online, their agents as peer:<device>/<agent>."
);

#[async_trait]
impl TypedTool for AgentListTool {
    type Args = AgentListArgs;
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn access(&self, _: &AgentListArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Other)
    }
    async fn call(&self, args: AgentListArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let agents = host(ctx)?
            .list(&ctx.chat_id, args.recent)
            .await
            .map_err(ToolError::Failed)?;
        serde_json::to_string_pretty(&agents)
            .map_err(|e| ToolError::Failed(format!("cannot encode the list: {e}")))
    }
}

/// Arguments of `agent_read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentReadArgs {
    /// The agent's id (from agent_list).
    pub agent_id: String,
}

simple_tool!(
    AgentReadTool,
    AgentReadArgs,
    "agent_read",
    "AgentReadTool",
    "Read agent",
    "Read an agent's visible conversation. Long conversations are cut to the newest messages; the omission is marked."
);

#[async_trait]
impl TypedTool for AgentReadTool {
    type Args = AgentReadArgs;
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn access(&self, args: &AgentReadArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        check_agent_id(&args.agent_id)?;
        Ok(ToolAccess::Other)
    }
    async fn call(&self, args: AgentReadArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        check_agent_id(&args.agent_id)?;
        host(ctx)?
            .read(&ctx.chat_id, &args.agent_id, READ_BUDGET_CHARS)
            .await
            .map_err(ToolError::Failed)
    }
}

/// Arguments of `agent_send` (exactly two, seed 000).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSendArgs {
    /// The receiving agent's id (from agent_list).
    pub agent_id: String,
    /// The message.
    pub message: String,
}

simple_tool!(
    AgentSendTool,
    AgentSendArgs,
    "agent_send",
    "AgentSendTool",
    "Message agent",
    "Send a message to another agent. It is queued in the durable inbox and this returns at once; the receiver reads it in its running turn or wakes up for it. Read its answer later with agent_read. A peer:<device>[/<agent>] id sends to an agent on a paired device: the message waits in the outbox while the device is offline; agent_read on the peer shows whether it was delivered and read."
);

#[async_trait]
impl TypedTool for AgentSendTool {
    type Args = AgentSendArgs;
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn access(&self, args: &AgentSendArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        check_agent_id(&args.agent_id)?;
        Ok(ToolAccess::Other)
    }
    async fn call(&self, args: AgentSendArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        check_agent_id(&args.agent_id)?;
        if args.message.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "field `message` is empty".into(),
            ));
        }
        let id = host(ctx)?
            .send(&ctx.chat_id, &args.agent_id, &args.message)
            .await
            .map_err(ToolError::Failed)?;
        Ok(format!(
            "queued for {} (inbox message {id}); read the answer later with agent_read",
            args.agent_id
        ))
    }
}

/// Arguments of `agent_stop`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentStopArgs {
    /// The agent's id (from agent_list).
    pub agent_id: String,
}

simple_tool!(
    AgentStopTool,
    AgentStopArgs,
    "agent_stop",
    "AgentStopTool",
    "Stop agent",
    "Stop an agent's running turn (e.g. a sub-agent that is no longer needed)."
);

#[async_trait]
impl TypedTool for AgentStopTool {
    type Args = AgentStopArgs;
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn access(&self, args: &AgentStopArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        check_agent_id(&args.agent_id)?;
        Ok(ToolAccess::Other)
    }
    async fn call(&self, args: AgentStopArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        check_agent_id(&args.agent_id)?;
        host(ctx)?
            .stop(&ctx.chat_id, &args.agent_id)
            .await
            .map_err(ToolError::Failed)
    }
}

fn default_true() -> bool {
    true
}

/// Arguments of `spawn_agent`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnAgentArgs {
    /// The task, self-contained: the sub-agent sees nothing of this conversation.
    pub task: String,
    /// Tool profile: explore or plan (read and search), write (edit files, run commands),
    /// verify (read, run tests), web (search the web, read).
    pub profile: AgentProfile,
    /// Run in the background and report back with a message when done (default true); false
    /// waits for the answer.
    #[serde(default = "default_true")]
    pub background: bool,
}

/// Delegates a task to a sub-agent.
#[derive(Debug)]
pub struct SpawnAgentTool {
    spec: ToolSpec,
}

impl SpawnAgentTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<SpawnAgentArgs>(
                "spawn_agent",
                "AgentTool",
                "agents",
                "Delegate to sub-agent",
                "Delegate a self-contained task to a sub-agent with a tool profile. It runs in the \
                 background (in auto mode; what would need approval is refused) and reports back \
                 with a message when done. Sub-agents cannot message other agents or start \
                 sub-agents of their own.",
            )
            .deferrable(false),
        }
    }
}

impl Default for SpawnAgentTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl TypedTool for SpawnAgentTool {
    type Args = SpawnAgentArgs;
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn access(&self, _: &SpawnAgentArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Other)
    }
    async fn call(&self, args: SpawnAgentArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        if args.task.trim().is_empty() {
            return Err(ToolError::InvalidArguments("field `task` is empty".into()));
        }
        let request = SpawnRequest {
            task: args.task,
            profile: args.profile,
            background: args.background,
        };
        let spawn = host(ctx)?.spawn(&ctx.chat_id, request);
        tokio::select! {
            r = spawn => r.map_err(ToolError::Failed),
            () = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
        }
    }
}
