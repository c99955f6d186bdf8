//! What a turn gives its tools and its model: the tool context (workspace and roots, the read
//! tracker, cancellation, and a handle to each service a tool reaches: background commands,
//! agents, plans, memory, skills, the canvas), the system prompt, and the request fitted to the
//! model's context (`fit.rs` of suzent-providers).

use super::TurnService;
use crate::chats::whoami;
use crate::error::RuntimeError;
use crate::provider::window::{ContextWindow, WindowSource};
use crate::provider::{ModelRequest, ProviderKind, ToolDefinition, fit, parse_model};
use crate::sessions::Session;
use std::path::PathBuf;
use std::sync::Arc;
use suzent_core::{ChatMessage, Config, PermissionMode};
use suzent_store::{ChatRecord, StoredMessage};
use suzent_tools::{AgentHost, Tool, ToolContext};
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
        ctx.speech = Some(self.s.speech.host());
        ctx.browser = Some(Arc::clone(&self.s.browser) as Arc<dyn suzent_tools::BrowserHost>);
        ctx.social = Some(Arc::clone(&self.s.channels) as Arc<dyn suzent_tools::SocialHost>);
        Ok(ctx)
    }

    /// The system prompt: who the agent is and where it works, then `memory` (the core memory
    /// section, `MemoryService::prompt_section`) and the enabled skills.
    pub(super) fn system_prompt(
        &self,
        chat: &ChatRecord,
        ctx: &ToolContext,
        memory: Option<&str>,
    ) -> String {
        let mut prompt = format!(
            "You are Suzent, a desktop AI agent working in the user's workspace.\n\
             Workspace root: {} (also reachable as /workspace). /persistence is private storage of this chat; /shared is shared by all chats.\n\
             Permission mode: {}. Some tool calls need the user's approval; a refused call returns an error that says why: adapt instead of retrying the same call.\n\
             Read files before editing them. Keep answers short.",
            ctx.workspace_root.display(),
            chat.mode
        );
        if let Some(section) = memory {
            prompt.push_str(section);
        }
        if let Some(section) = ctx.skills.as_ref().and_then(|s| s.prompt_section()) {
            prompt.push_str("\n\n");
            prompt.push_str(&section);
        }
        prompt
    }

    /// The chat model's context window and reply limit (`max_tokens`): the model's
    /// `context_window` setting, else the provider's configured `context_size` or the loaded
    /// in-process model's, else the table of known models, else a small default
    /// (`suzent_providers::window`). `None` when the chat has no valid model.
    pub(super) fn window_of(
        &self,
        chat: &ChatRecord,
        config: &Config,
    ) -> Option<(ContextWindow, u32)> {
        let model = chat.model.as_deref()?;
        let (kind, id) = parse_model(model).ok()?;
        let providers = self.s.settings.providers(config);
        let (max_tokens, _) = crate::provider::resolve::limits(kind, &providers);
        let configured = config.models.get(model).and_then(|m| m.context_window);
        let reported = self.s.local_models.context_size(kind, &providers);
        let window = crate::provider::window::context_window(kind, &id, configured, reported);
        // A reply limit larger than the window would leave no prompt: half the window at most.
        Some((window, max_tokens.min(window.tokens / 2)))
    }

    /// The transcript with the images attached to user messages given their bytes, when it has
    /// images and the chat's model takes them ([`crate::provider::vision::takes_images`],
    /// `[models."…"] images` overriding); `None` (send `messages` as they are) otherwise.
    pub(super) fn inline_images(
        &self,
        chat: &ChatRecord,
        config: &Config,
        messages: &[StoredMessage],
    ) -> Option<Vec<StoredMessage>> {
        let has_images = messages.iter().any(|m| {
            matches!(&m.message, ChatMessage::User { attachments, .. } if attachments.iter().any(|a| a.is_image()))
        });
        if !has_images {
            return None;
        }
        let model = chat.model.as_deref()?;
        let (kind, id) = parse_model(model).ok()?;
        let configured = config.models.get(model).and_then(|m| m.images);
        if !crate::provider::vision::takes_images(kind, &id, configured) {
            return None;
        }
        let mut out = messages.to_vec();
        crate::attachments::Attachments.inline_images(
            std::path::Path::new(&chat.workspace),
            out.iter_mut().map(|m| &mut m.message),
        );
        Some(out)
    }

    /// Fits the request's system prompt and tools to the model's context: compact schemas for
    /// every model; for small windows (below [`fit::SMALL_CONTEXT`]) the small-model tool set,
    /// short descriptions and the small-model system prompt. The messages are fitted by
    /// compaction (`compact.rs`), which records what it does, never here.
    ///
    /// `window` is [`TurnService::window_of`] the chat. `request.tools` may come fitted already
    /// (from [`FittedTools::reuse`]): only the system prompt is fitted then.
    pub(super) fn fit_to_model(
        &self,
        chat: &ChatRecord,
        config: &Config,
        window: Option<(ContextWindow, u32)>,
        request: &mut ModelRequest,
        tools_fitted: bool,
    ) {
        let Some(Ok((kind, _))) = chat.model.as_deref().map(parse_model) else {
            return;
        };
        let Some((window, max_tokens)) = window else {
            return;
        };
        // The small-model treatment is for windows the user or the server stated (small local
        // models), not for models the table or the default guess at.
        let stated = matches!(
            window.source,
            WindowSource::Configured | WindowSource::Reported
        );
        let small = stated && window.tokens < fit::SMALL_CONTEXT;
        if small {
            request.system =
                fit::small_model_system_prompt(&chat.workspace, &chat.mode.to_string());
            if chat.mode == PermissionMode::Auto && config.reviewer_model.is_none() {
                tracing::warn!(
                    chat = %chat.id,
                    local = kind == ProviderKind::Local,
                    "a small local model is also the auto-mode reviewer; set reviewer_model to a stronger model"
                );
            }
        }
        if tools_fitted {
            return;
        }
        let messages = std::mem::take(&mut request.messages);
        let report = fit::fit_request(request, window.tokens, max_tokens, &[]);
        request.messages = messages;
        if report != Default::default() {
            tracing::debug!(chat = %chat.id, ?report, "request fitted to the model's context");
        }
    }
}

/// A run's tool definitions as fitted to its model for the last step ([`TurnService::fit_to_model`]
/// with no messages fits only the tools), kept for the next step: building and fitting them
/// clones and measures every schema, and the next step mostly offers the same tools.
#[derive(Default)]
pub(super) struct FittedTools {
    /// The tools they were built from (a tool whose schema changed, e.g. an MCP server's, is a
    /// new `Arc`).
    tools: Vec<Arc<dyn Tool>>,
    /// The model's window and reply limit they were fitted to ([`TurnService::window_of`]).
    window: Option<(ContextWindow, u32)>,
    /// The fitted definitions (empty when none are kept).
    definitions: Vec<ToolDefinition>,
}

impl FittedTools {
    /// Keeps `definitions`, fitted from `tools` for `window`.
    pub(super) fn keep(
        tools: Vec<Arc<dyn Tool>>,
        window: Option<(ContextWindow, u32)>,
        definitions: Vec<ToolDefinition>,
    ) -> FittedTools {
        FittedTools {
            tools,
            window,
            definitions,
        }
    }

    /// The kept definitions, handed over, when they were fitted from the same tools for the
    /// same window.
    pub(super) fn reuse(
        &mut self,
        tools: &[Arc<dyn Tool>],
        window: Option<(ContextWindow, u32)>,
    ) -> Option<Vec<ToolDefinition>> {
        let same = self.window == window
            && self.tools.len() == tools.len()
            && self.tools.iter().zip(tools).all(|(a, b)| Arc::ptr_eq(a, b));
        if !same || self.tools.is_empty() {
            return None;
        }
        // Handed over: nothing is kept until the next `keep`.
        Some(std::mem::take(self).definitions)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use suzent_tools::{ReadFileTool, WriteFileTool};

    fn window(tokens: u32) -> Option<(ContextWindow, u32)> {
        Some((
            ContextWindow {
                tokens,
                source: WindowSource::Configured,
            },
            4096,
        ))
    }

    fn definition(name: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: String::new(),
            parameters: serde_json::json!({"type": "object"}),
        }
    }

    #[test]
    fn fitted_tools_serve_again_only_for_the_same_tools_and_window() {
        let read: Arc<dyn Tool> = Arc::new(ReadFileTool::new());
        let write: Arc<dyn Tool> = Arc::new(WriteFileTool::new());
        let tools = vec![Arc::clone(&read), Arc::clone(&write)];
        let keep = || {
            FittedTools::keep(
                tools.clone(),
                window(32_000),
                vec![definition("read_file"), definition("write_file")],
            )
        };

        // Nothing kept yet.
        assert_eq!(FittedTools::default().reuse(&tools, window(32_000)), None);
        // The same tools and window: the kept definitions, once.
        let mut fitted = keep();
        let again = fitted.reuse(&tools, window(32_000)).unwrap();
        assert_eq!(
            again,
            vec![definition("read_file"), definition("write_file")]
        );
        assert_eq!(fitted.reuse(&tools, window(32_000)), None);
        // Another window, another set, another order.
        assert_eq!(keep().reuse(&tools, window(8_000)), None);
        assert_eq!(keep().reuse(&tools[..1], window(32_000)), None);
        let swapped = vec![Arc::clone(&write), Arc::clone(&read)];
        assert_eq!(keep().reuse(&swapped, window(32_000)), None);
        // A tool built again (an MCP server's new schema is a new tool): fitted again.
        let rebuilt: Arc<dyn Tool> = Arc::new(ReadFileTool::new());
        assert_eq!(keep().reuse(&[rebuilt, write], window(32_000)), None);
    }
}
