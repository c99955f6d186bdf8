//! What a turn gives its tools and its model: the tool context (workspace and roots, the read
//! tracker, cancellation, and a handle to each service a tool reaches: background commands,
//! agents, plans, memory, skills, the canvas) and the system prompt.

use super::TurnService;
use crate::chats::whoami;
use crate::error::RuntimeError;
use crate::sessions::Session;
use std::path::PathBuf;
use std::sync::Arc;
use suzent_store::ChatRecord;
use suzent_tools::{AgentHost, ToolContext};
use tokio_util::sync::CancellationToken;

impl TurnService {
    /// The tools' context for a run of `chat`: `/persistence` and `/shared` created, the path
    /// policy over the workspace and them, and every service handle (the agent host only for
    /// top-level chats: sub-agents get no agent tools).
    pub(super) async fn tool_context(
        &self,
        chat: &ChatRecord,
        session: &Session,
        cancel: CancellationToken,
    ) -> Result<ToolContext, RuntimeError> {
        let workspace = PathBuf::from(&chat.workspace);
        let persistence = self.s.paths.persistence_dir(&chat.id);
        let shared = self.s.paths.shared_dir();
        for dir in [&persistence, &shared] {
            std::fs::create_dir_all(dir).map_err(|e| RuntimeError::Io {
                path: dir.display().to_string(),
                message: e.to_string(),
            })?;
        }
        // Suzent's own config and data directories are protected (issue #12 item 1).
        let policy = self
            .s
            .paths
            .path_policy(&workspace, &chat.id)
            .map_err(|e| RuntimeError::Io {
                path: workspace.display().to_string(),
                message: format!("workspace unavailable: {e}"),
            })?;
        let mut ctx = ToolContext::new(
            chat.id.clone(),
            whoami(),
            policy.workspace().to_path_buf(),
            persistence,
            shared,
            Arc::new(policy),
        );
        ctx.reads = session.reads.clone();
        ctx.cancel = cancel;
        // Background commands and the sandbox.
        self.s.background.equip(chat, &mut ctx).await?;
        let is_subagent = self.s.store.agent_link(&chat.id).await?.is_some();
        if !is_subagent {
            ctx.agents = Some(Arc::clone(&self.agents) as Arc<dyn AgentHost>);
        }
        ctx.plans = Some(self.s.plans.host());
        ctx.memory = Some(self.s.memory.host().await?);
        ctx.skills = Some(Arc::new(self.s.skills.load().await?));
        ctx.canvas = Some(self.s.canvas.host());
        ctx.browser = Some(Arc::clone(&self.s.browser) as Arc<dyn suzent_tools::BrowserHost>);
        Ok(ctx)
    }

    /// The system prompt: who the agent is and where it works, then the core memory blocks and
    /// the enabled skills.
    pub(super) async fn system_prompt(
        &self,
        chat: &ChatRecord,
        ctx: &ToolContext,
    ) -> Result<String, RuntimeError> {
        let mut prompt = format!(
            "You are Suzent, a desktop AI agent working in the user's workspace.\n\
             Workspace root: {} (also reachable as /workspace). /persistence is private storage of this chat; /shared is shared by all chats.\n\
             Permission mode: {}. Some tool calls need the user's approval; a refused call returns an error that says why: adapt instead of retrying the same call.\n\
             Read files before editing them. Keep answers short.",
            ctx.workspace_root.display(),
            chat.mode
        );
        if let Some(section) = self.s.memory.prompt_section(&ctx.user_id).await? {
            prompt.push_str(&section);
        }
        if let Some(section) = ctx.skills.as_ref().and_then(|s| s.prompt_section()) {
            prompt.push_str("\n\n");
            prompt.push_str(&section);
        }
        Ok(prompt)
    }
}
