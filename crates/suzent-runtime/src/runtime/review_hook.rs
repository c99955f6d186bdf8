//! The `auto` mode reviewer, wired into the agent loop (see `crate::reviewer`).

use super::{OnAsk, RunOptions, Runtime};
use crate::provider::resolve::build_provider;
use crate::reviewer::{self, ReviewInput};
use std::time::Duration;
use suzent_core::PermissionDecision;
use suzent_permissions::PermissionRequest;
use suzent_store::ChatRecord;

impl Runtime {
    /// Replaces a deterministic ask with the reviewer's decision. The reviewer model is
    /// `reviewer_model` from the configuration, else the chat's model.
    pub(super) async fn review_call(
        &self,
        chat: &ChatRecord,
        request: &PermissionRequest,
        deterministic: &PermissionDecision,
        options: &RunOptions,
    ) -> PermissionDecision {
        let headless = options.on_ask == OnAsk::Deny;
        let config = self.config();
        let model = config
            .reviewer_model
            .clone()
            .or_else(|| chat.model.clone())
            .or_else(|| config.default_model.clone())
            .unwrap_or_default();
        let (provider, model_id) = match build_provider(
            &model,
            &self.providers_config(&config),
            self.inner.keys.as_ref(),
        ) {
            Ok(p) => p,
            Err(e) => return reviewer::error_decision(&e.to_string(), &model, headless),
        };
        let transcript: Vec<suzent_core::ChatMessage> =
            match self.inner.store.messages(&chat.id).await {
                Ok(m) => m.into_iter().map(|m| m.message).collect(),
                Err(e) => return reviewer::error_decision(&e.to_string(), &model, headless),
            };
        let input = ReviewInput {
            tool: &request.tool_name,
            args: &request.args,
            policy_reason: &deterministic.reason,
            transcript: &transcript,
            workspace: &chat.workspace,
        };
        let timeout = Duration::from_secs(u64::from(config.reviewer_timeout_secs));
        let mut decision = reviewer::review(
            provider.as_ref(),
            &model_id,
            &model,
            &input,
            timeout,
            headless,
        )
        .await;
        decision.matched_rules = deterministic.matched_rules.clone();
        if decision.behavior == suzent_core::Behavior::Ask {
            decision.actions = deterministic.actions.clone();
        }
        decision
    }
}
