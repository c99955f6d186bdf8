//! The runtime's side of the permission gate (`suzent_permissions::PermissionGate`): the rules
//! in force and the chat's roots for every call, the `auto` mode reviewer (a model call,
//! [`ChatReviewer`]), and the decision simulator. The real path and the simulator build their
//! request through the same gate.

use crate::chats::ChatService;
use crate::dirs::Paths;
use crate::error::RuntimeError;
use crate::provider::build_provider;
use crate::reviewer::{self, ReviewInput};
use crate::rules::{RuleScope, RuleService};
use crate::settings::SettingsService;
use crate::toolset::Toolset;
use async_trait::async_trait;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use suzent_core::{PermissionDecision, PermissionMode};
use suzent_permissions::{
    Explanation, GateCall, GateOutcome, GateScope, PathPolicy, PermissionGate, PermissionRequest,
    Reviewer,
};
use suzent_store::{ChatRecord, Store};
use suzent_tools::{CallSubject, Tool, ToolContext};

/// Decisions for tool calls (through the gate) and the decision simulator.
pub(crate) struct PermissionService {
    gate: PermissionGate,
    rules: Arc<RuleService>,
    toolset: Arc<Toolset>,
    chats: Arc<ChatService>,
    settings: Arc<SettingsService>,
    store: Store,
    paths: Paths,
}

impl PermissionService {
    /// The service.
    pub(crate) fn new(
        gate: PermissionGate,
        rules: Arc<RuleService>,
        toolset: Arc<Toolset>,
        chats: Arc<ChatService>,
        settings: Arc<SettingsService>,
        store: Store,
        paths: Paths,
    ) -> PermissionService {
        PermissionService {
            gate,
            rules,
            toolset,
            chats,
            settings,
            store,
            paths,
        }
    }

    /// The gate (its audit log is also where answers to prompts are recorded).
    pub(crate) fn gate(&self) -> &PermissionGate {
        &self.gate
    }

    /// Decides one call of `tool` in `chat` with the rules in force for the chat. `Err` is the
    /// tool's message about its arguments (the call fails with it, nothing is decided).
    pub(crate) async fn decide(
        &self,
        call: GateCall<'_>,
        chat: &ChatRecord,
        tool: &dyn Tool,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<Result<GateOutcome, String>, RuntimeError> {
        let rules = self.rules.in_force(RuleScope::Chat(&chat.id)).await?;
        let scope = GateScope {
            paths: &ctx.paths,
            rules: &rules,
        };
        let reviewer = ChatReviewer {
            chat,
            settings: &self.settings,
            store: &self.store,
        };
        let subject = CallSubject { tool, ctx };
        Ok(self
            .gate
            .decide(call, &subject, args, scope, &reviewer)
            .await)
    }

    /// `paths` with the chat's deny and ask read rules made known to the reading tools (a
    /// search leaves out what they refuse).
    pub(crate) async fn with_read_rules(
        &self,
        chat: &ChatRecord,
        paths: &PathPolicy,
    ) -> Result<PathPolicy, RuntimeError> {
        let rules = self.rules.in_force(RuleScope::Chat(&chat.id)).await?;
        Ok(paths.clone().with_read_rules(&rules, &chat.id))
    }

    /// The decision simulator: what the gate would decide for `tool` with `args`, in `mode`
    /// (default: the chat's, else the configured default), for `chat_id` (its workspace and
    /// session rules; without a chat: the configured workspace or the current directory, and
    /// global rules only). Nothing runs and nothing is stored; the `auto` mode reviewer is not
    /// called (`reviewerWouldDecide` says whether it would be).
    pub(crate) async fn explain(
        &self,
        tool: &str,
        args: Value,
        mode: Option<PermissionMode>,
        chat_id: Option<&str>,
    ) -> Result<Explanation, RuntimeError> {
        let invalid = |field: &str, message: String| RuntimeError::InvalidInput {
            field: field.to_string(),
            message,
        };
        let mut found = self.toolset.get(tool);
        if found.is_none() && tool.starts_with(suzent_mcp::PREFIX) {
            // An MCP tool of a server not listed yet: discover it, as a real call does.
            self.toolset.ensure_discovered().await;
            found = self.toolset.get(tool);
        }
        let Some(handle) = found else {
            return Err(invalid("tool", format!("unknown tool '{tool}'")));
        };
        if !args.is_object() {
            return Err(invalid("args", "not a JSON object".to_string()));
        }
        // The value the gate would see: coerced to the tool's schema like a real call.
        let args = suzent_tools::coerce_args(&handle.spec().parameters, args)
            .map_err(|e| invalid("args", e))?;
        let config = self.settings.config();
        let chat = match chat_id {
            Some(id) => Some(self.chats.get(id).await?),
            None => None,
        };
        let workspace = match (&chat, &config.workspace) {
            (Some(c), _) => PathBuf::from(&c.workspace),
            (None, Some(w)) => w.clone(),
            (None, None) => std::env::current_dir()
                .map_err(|e| invalid("workspace", format!("no current directory: {e}")))?,
        };
        let chat_key = chat.as_ref().map(|c| c.id.clone()).unwrap_or_default();
        let persistence = self.paths.persistence_dir(&chat_key);
        let shared = self.paths.shared_dir();
        let policy = self
            .paths
            .path_policy(&workspace, &chat_key)
            .map_err(|e| invalid("workspace", format!("'{}': {e}", workspace.display())))?;
        let ctx = ToolContext::new(
            chat_key.clone(),
            "explain",
            policy.workspace().to_path_buf(),
            persistence,
            shared,
            Arc::new(policy.clone()),
        );
        let scope = match &chat {
            Some(c) => RuleScope::Chat(&c.id),
            None => RuleScope::Global,
        };
        let rules = self.rules.in_force(scope).await?;
        let mode = mode
            .or(chat.as_ref().map(|c| c.mode))
            .unwrap_or(config.default_mode);
        let subject = CallSubject {
            tool: handle.as_ref(),
            ctx: &ctx,
        };
        let scope = GateScope {
            paths: &policy,
            rules: &rules,
        };
        self.gate
            .explain(&subject, args, mode, scope, &chat_key)
            .map_err(|message| invalid("args", message))
    }
}

/// The `auto` mode reviewer of one chat: `reviewer_model` from the configuration, else the
/// chat's model, judging with the chat's transcript (see `crate::reviewer`).
struct ChatReviewer<'a> {
    chat: &'a ChatRecord,
    settings: &'a SettingsService,
    store: &'a Store,
}

#[async_trait]
impl Reviewer for ChatReviewer<'_> {
    async fn review(
        &self,
        request: &PermissionRequest,
        policy: &PermissionDecision,
        headless: bool,
    ) -> PermissionDecision {
        let config = self.settings.config();
        let model = config
            .reviewer_model
            .clone()
            .or_else(|| self.chat.model.clone())
            .or_else(|| config.default_model.clone())
            .unwrap_or_default();
        let (provider, model_id) =
            match build_provider(&model, &config.providers, self.settings.keys()) {
                Ok(p) => p,
                Err(e) => return reviewer::error_decision(&e.to_string(), &model, headless),
            };
        let transcript: Vec<suzent_core::ChatMessage> =
            match self.store.messages(&self.chat.id).await {
                Ok(m) => m.into_iter().map(|m| m.message).collect(),
                Err(e) => return reviewer::error_decision(&e.to_string(), &model, headless),
            };
        let input = ReviewInput {
            tool: &request.tool_name,
            args: &request.args,
            policy_reason: &policy.reason,
            transcript: &transcript,
            workspace: &self.chat.workspace,
        };
        let timeout = Duration::from_secs(u64::from(config.reviewer_timeout_secs));
        reviewer::review(
            provider.as_ref(),
            &model_id,
            &model,
            &input,
            timeout,
            headless,
        )
        .await
    }
}
