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
use suzent_core::{PermissionDecision, PermissionMode, Rule};
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

    /// The rules in force for `chat` (stored global and session rules, then `rules.toml`).
    ///
    /// Errors: storage errors.
    pub(crate) async fn rules_for(&self, chat: &ChatRecord) -> Result<Vec<Rule>, RuntimeError> {
        self.rules.in_force(RuleScope::Chat(&chat.id)).await
    }

    /// Decides one call of `tool` in `chat` with `rules`, the rules in force for the chat
    /// ([`PermissionService::rules_for`]). `Err` is the tool's message about its arguments
    /// (the call fails with it, nothing is decided).
    pub(crate) async fn decide(
        &self,
        call: GateCall<'_>,
        chat: &ChatRecord,
        tool: &dyn Tool,
        args: &Value,
        ctx: &ToolContext,
        rules: &[Rule],
    ) -> Result<GateOutcome, String> {
        let scope = GateScope {
            paths: &ctx.paths,
            rules,
        };
        let reviewer = ChatReviewer {
            chat,
            settings: &self.settings,
            store: &self.store,
        };
        let subject = CallSubject { tool, ctx };
        self.gate
            .decide(call, &subject, args, scope, &reviewer)
            .await
    }

    /// `paths` with the deny and ask read rules among `rules` (the chat's rules in force) made
    /// known to the reading tools (a search leaves out what they refuse).
    pub(crate) fn with_read_rules(
        &self,
        chat: &ChatRecord,
        paths: &PathPolicy,
        rules: &[Rule],
    ) -> PathPolicy {
        paths.clone().with_read_rules(rules, &chat.id)
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
        let (provider, model_id) = match build_provider(
            &model,
            &self.settings.providers(&config),
            self.settings.keys(),
        ) {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use suzent_core::{
        AgentEvent, Behavior, Config, ReasonCode, RuleDestination, RuleDraft, RuleMatcher,
    };

    fn cargo_test_session_rule() -> RuleDraft {
        RuleDraft {
            tool: "run_command".into(),
            behavior: Behavior::Allow,
            matcher: RuleMatcher::Prefix {
                words: vec!["cargo".into(), "test".into()],
            },
            destination: RuleDestination::Session,
            description: None,
        }
    }

    /// Decides one call of `tool` in `chat` through the real gate, as a turn does.
    async fn decide(
        s: &TestServices,
        chat: &ChatRecord,
        tool: &str,
        args: Value,
        headless: bool,
    ) -> GateOutcome {
        let handle = s.toolset.get(tool).expect("a built-in tool");
        let ctx = s.tool_context(chat);
        let call = GateCall {
            chat_id: &chat.id,
            run_id: "run-1",
            tool_call_id: "call-1",
            tool_name: tool,
            mode: chat.mode,
            headless,
            origin: None,
        };
        let rules = s.permissions.rules_for(chat).await.unwrap();
        s.permissions
            .decide(call, chat, handle.as_ref(), &args, &ctx, &rules)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn the_simulator_applies_a_session_rule_in_its_own_chat_only() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let chat = s.chat().await;
        let other = s.chat().await;
        s.rules
            .add(cargo_test_session_rule(), Some(&chat.id), &s.toolset)
            .await?;
        let explain = |chat_id: String| {
            let permissions = Arc::clone(&s.permissions);
            async move {
                permissions
                    .explain(
                        "run_command",
                        json!({"content": "cargo test -p core"}),
                        None,
                        Some(&chat_id),
                    )
                    .await
                    .unwrap()
            }
        };
        let mine = explain(chat.id.clone()).await;
        let theirs = explain(other.id.clone()).await;
        assert_eq!(
            (
                (mine.behavior, mine.reason_code, mine.matched_rules.len()),
                (
                    theirs.behavior,
                    theirs.reason_code,
                    theirs.matched_rules.len()
                )
            ),
            (
                (Behavior::Allow, ReasonCode::RuleAllow, 1),
                (Behavior::Ask, ReasonCode::ShellPolicyAsk, 0)
            )
        );
        Ok(())
    }

    #[tokio::test]
    async fn the_simulator_decides_without_announcing_or_auditing_anything() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let chat = s.chat().await;
        let mut events = s.events.subscribe();
        let e = s
            .permissions
            .explain(
                "read_file",
                json!({"file_path": "notes.txt"}),
                None,
                Some(&chat.id),
            )
            .await?;
        assert_eq!(
            (e.tool.as_str(), e.behavior),
            ("read_file", Behavior::Allow)
        );
        s.audit.flush().await;
        assert!(
            events.try_recv().is_err(),
            "the simulator announces nothing"
        );
        assert!(
            !s.paths.audit_log().exists(),
            "the simulator writes no audit line"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_real_decision_is_announced_and_written_to_the_audit_log() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let chat = s.chat().await;
        let mut events = s.events.subscribe();
        let outcome = decide(
            &s,
            &chat,
            "read_file",
            json!({"file_path": "notes.txt"}),
            false,
        )
        .await;
        assert_eq!(outcome.decision.behavior, Behavior::Allow);
        match events.try_recv()? {
            AgentEvent::ToolPermissionDecision(event) => assert_eq!(
                (
                    event.chat_id,
                    event.tool_call_id.as_str(),
                    event.tool_name.as_str(),
                    event.decision
                ),
                (
                    chat.id.clone(),
                    "call-1",
                    "read_file",
                    outcome.decision.clone()
                )
            ),
            other => panic!("expected tool_permission_decision, got {other:?}"),
        }
        s.audit.flush().await;
        // Read back with the type the log is written with.
        let lines: Vec<(String, Option<String>, String, Option<String>)> =
            std::fs::read_to_string(s.paths.audit_log())?
                .lines()
                .map(|l| {
                    let r: suzent_permissions::audit::AuditRecord =
                        serde_json::from_str(l).unwrap();
                    (r.chat_id, r.tool_call_id, r.tool, r.decision)
                })
                .collect();
        assert_eq!(
            lines,
            vec![(
                chat.id.clone(),
                Some("call-1".to_string()),
                "read_file".to_string(),
                Some("allow".to_string())
            )]
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_headless_call_that_would_ask_is_denied() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let chat = s.chat().await;
        let asked = decide(
            &s,
            &chat,
            "run_command",
            json!({"content": "cargo test"}),
            false,
        )
        .await;
        let headless = decide(
            &s,
            &chat,
            "run_command",
            json!({"content": "cargo test"}),
            true,
        )
        .await;
        assert_eq!(
            (asked.decision.behavior, headless.decision.behavior),
            (Behavior::Ask, Behavior::Deny)
        );
        Ok(())
    }
}
