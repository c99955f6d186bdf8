//! The approval service: pending approvals, and the user's answers to them (seed 000
//! `resume_approvals`). All answers are checked before anything is written: an unknown
//! approval, a stale one, one of another chat, or an action that was not offered is an error
//! and changes nothing. An answer that remembers adds its rule; every answer is audited and
//! announced (`tool_permission_resolution`). The turn service continues the turn afterwards.

use crate::error::RuntimeError;
use crate::event_bus::Events;
use crate::permissions::PermissionService;
use crate::rules::RuleService;
use crate::toolset::Toolset;
use std::sync::Arc;
use suzent_core::{AgentEvent, ApprovalActionId, ApprovalResponse};
use suzent_permissions::Resolution;
use suzent_store::{ApprovalStatus, PendingApproval, Store};

/// Pending approvals and answers.
pub(crate) struct ApprovalService {
    store: Store,
    events: Events,
    rules: Arc<RuleService>,
    toolset: Arc<Toolset>,
    permissions: Arc<PermissionService>,
}

impl ApprovalService {
    /// The service.
    pub(crate) fn new(
        store: Store,
        events: Events,
        rules: Arc<RuleService>,
        toolset: Arc<Toolset>,
        permissions: Arc<PermissionService>,
    ) -> ApprovalService {
        ApprovalService {
            store,
            events,
            rules,
            toolset,
            permissions,
        }
    }

    /// Pending approvals, of one chat or of all.
    pub(crate) async fn pending(
        &self,
        chat_id: Option<&str>,
    ) -> Result<Vec<PendingApproval>, RuntimeError> {
        Ok(self.store.pending_approvals(chat_id).await?)
    }

    /// Records the answers to pending approvals of `chat_id` (checked first, all or nothing),
    /// adds the rules they remember, audits and announces each. The caller holds the chat's
    /// run lock and continues the turn.
    pub(crate) async fn answer(
        &self,
        chat_id: &str,
        answers: &[ApprovalResponse],
    ) -> Result<(), RuntimeError> {
        let mut checked = Vec::new();
        for answer in answers {
            let record = self
                .store
                .get_approval(&answer.request_id)
                .await?
                .ok_or_else(|| RuntimeError::UnknownApproval(answer.request_id.clone()))?;
            if record.approval.chat_id != chat_id || record.status != ApprovalStatus::Pending {
                return Err(RuntimeError::StaleApproval(answer.request_id.clone()));
            }
            if let Some(tc) = &answer.tool_call_id
                && tc != &record.approval.tool_call_id
            {
                return Err(RuntimeError::InvalidInput {
                    field: "tool_call_id".into(),
                    message: format!("'{tc}' does not belong to approval '{}'", answer.request_id),
                });
            }
            let offered = &record.approval.decision.actions;
            let offered_ids = || {
                offered
                    .iter()
                    .map(|a| a.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let action_id = ApprovalActionId::parse(&answer.action_id).map_err(|_| {
                RuntimeError::UnknownAction {
                    approval: answer.request_id.clone(),
                    action: answer.action_id.clone(),
                    offered: offered_ids(),
                }
            })?;
            let action = offered.iter().find(|a| a.id == action_id).cloned();
            let always_allowed = matches!(
                action_id,
                ApprovalActionId::AllowOnce | ApprovalActionId::Reject
            );
            if action.is_none() && !always_allowed {
                return Err(RuntimeError::UnknownAction {
                    approval: answer.request_id.clone(),
                    action: answer.action_id.clone(),
                    offered: offered_ids(),
                });
            }
            if checked
                .iter()
                .any(|(r, _, _): &(suzent_store::ApprovalRecord, _, _)| {
                    r.approval.id == record.approval.id
                })
            {
                return Err(RuntimeError::InvalidInput {
                    field: "resume_approvals".into(),
                    message: format!("approval '{}' answered twice", answer.request_id),
                });
            }
            if let Some(edited) = &answer.rule {
                let offered_rule = action.as_ref().and_then(|a| a.rule.as_ref());
                let Some(offered_rule) = offered_rule else {
                    return Err(RuntimeError::InvalidInput {
                        field: "rule".into(),
                        message: format!(
                            "action '{}' of approval '{}' adds no rule, so none can be edited",
                            answer.action_id, answer.request_id
                        ),
                    });
                };
                // An edited rule stays an allow rule of this tool in the action's scope.
                if edited.behavior != suzent_core::Behavior::Allow
                    || edited.tool != offered_rule.tool
                    || edited.destination != offered_rule.destination
                {
                    return Err(RuntimeError::InvalidInput {
                        field: "rule".into(),
                        message: format!(
                            "the edited rule of approval '{}' must stay an allow rule for '{}' in the {} scope",
                            answer.request_id,
                            offered_rule.tool,
                            offered_rule.destination.as_str()
                        ),
                    });
                }
                suzent_permissions::validate_rule(edited).map_err(|e| {
                    RuntimeError::InvalidInput {
                        field: "rule".into(),
                        message: e,
                    }
                })?;
            }
            checked.push((record, action_id, action));
        }
        for ((record, action_id, action), answer) in checked.into_iter().zip(answers) {
            let feedback = answer.feedback.as_deref().filter(|f| !f.trim().is_empty());
            if !self
                .store
                .resolve_approval(&record.approval.id, action_id, feedback)
                .await?
            {
                return Err(RuntimeError::StaleApproval(record.approval.id.clone()));
            }
            let mut added = None;
            // The rule the user saw, edited or not, is saved exactly (checked above).
            let shown = answer.rule.clone().or_else(|| action.and_then(|a| a.rule));
            if let Some(draft) = shown {
                let rule = self.rules.add(draft, Some(chat_id), &self.toolset).await?;
                added = Some(rule);
            }
            self.permissions
                .gate()
                .record_resolution(Resolution {
                    chat_id,
                    run_id: &record.approval.run_id,
                    tool_call_id: &record.approval.tool_call_id,
                    tool: &record.approval.tool_name,
                    action: action_id,
                    feedback,
                    rule_id: added.as_ref().map(|r| r.id.as_str()),
                })
                .await;
            self.events.emit(AgentEvent::ToolPermissionResolution {
                chat_id: chat_id.to_string(),
                approval_id: record.approval.id.clone(),
                tool_call_id: record.approval.tool_call_id.clone(),
                action_id,
                scope: added.as_ref().map(|r| r.destination),
                rule: added,
                feedback: feedback.map(str::to_string),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::error::RuntimeError;
    use crate::test_services::TestServices;
    use chrono::Utc;
    use pretty_assertions::assert_eq;
    use suzent_core::{
        AgentEvent, ApprovalAction, ApprovalActionId, ApprovalResponse, Behavior, DecisionSource,
        PermissionDecision, ReasonCode, Risk, RuleDestination, RuleDraft, RuleMatcher,
    };
    use suzent_store::{ApprovalStatus, PendingApproval};

    fn cargo_test_rule() -> RuleDraft {
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

    /// A pending `run_command` approval in `chat_id` offering allow once, allow for the
    /// session (with its rule) and reject.
    async fn pending(s: &TestServices, chat_id: &str, id: &str) -> PendingApproval {
        let mut decision = PermissionDecision::new(
            Behavior::Ask,
            DecisionSource::ShellPolicy,
            ReasonCode::ShellPolicyAsk,
            "cargo test runs code",
            Risk::Medium,
        );
        let action = |id: ApprovalActionId, rule: Option<RuleDraft>| ApprovalAction {
            id,
            label: id.as_str().into(),
            description: String::new(),
            rule,
            accepts_feedback: false,
        };
        decision.actions = vec![
            action(ApprovalActionId::AllowOnce, None),
            action(ApprovalActionId::AllowSession, Some(cargo_test_rule())),
            action(ApprovalActionId::Reject, None),
        ];
        let approval = PendingApproval {
            id: id.into(),
            chat_id: chat_id.into(),
            run_id: "run-1".into(),
            tool_call_id: id.into(),
            tool_name: "run_command".into(),
            args: serde_json::json!({"content": "cargo test"}),
            decision,
            created_at: Utc::now(),
        };
        s.store.insert_pending_approval(&approval).await.unwrap();
        approval
    }

    fn answer(id: &str, action: &str) -> ApprovalResponse {
        ApprovalResponse {
            request_id: id.into(),
            tool_call_id: None,
            action_id: action.into(),
            feedback: None,
            rule: None,
        }
    }

    async fn status(s: &TestServices, id: &str) -> ApprovalStatus {
        s.store.get_approval(id).await.unwrap().unwrap().status
    }

    #[tokio::test]
    async fn allow_for_the_session_resolves_the_approval_saves_the_offered_rule_and_announces_it()
    -> anyhow::Result<()> {
        let s = TestServices::open(Default::default()).await;
        let chat = s.chat().await;
        pending(&s, &chat.id, "call_1").await;
        let mut events = s.events.subscribe();
        s.approvals
            .answer(&chat.id, &[answer("call_1", "allow_session")])
            .await?;
        let record = s.store.get_approval("call_1").await?.unwrap();
        assert_eq!(
            (record.status, record.action),
            (
                ApprovalStatus::Resolved,
                Some(ApprovalActionId::AllowSession)
            )
        );
        let stored = s.store.list_rules(Some(&chat.id)).await?;
        assert_eq!(stored.len(), 1);
        let rule = &stored[0];
        assert_eq!(
            (
                &rule.tool,
                &rule.matcher,
                rule.destination,
                rule.chat_id.as_deref()
            ),
            (
                &"run_command".to_string(),
                &cargo_test_rule().matcher,
                RuleDestination::Session,
                Some(chat.id.as_str())
            )
        );
        let event = events.try_recv()?;
        assert_eq!(
            event,
            AgentEvent::ToolPermissionResolution {
                chat_id: chat.id.clone(),
                approval_id: "call_1".into(),
                tool_call_id: "call_1".into(),
                action_id: ApprovalActionId::AllowSession,
                scope: Some(RuleDestination::Session),
                rule: Some(rule.clone()),
                feedback: None,
            }
        );
        Ok(())
    }

    #[tokio::test]
    async fn an_answer_from_another_chat_is_refused_and_the_approval_keeps_waiting()
    -> anyhow::Result<()> {
        let s = TestServices::open(Default::default()).await;
        let owner = s.chat().await;
        let other = s.chat().await;
        pending(&s, &owner.id, "call_1").await;
        let err = s
            .approvals
            .answer(&other.id, &[answer("call_1", "allow_once")])
            .await
            .unwrap_err();
        assert!(
            matches!(err, RuntimeError::StaleApproval(ref id) if id == "call_1"),
            "{err}"
        );
        assert_eq!(status(&s, "call_1").await, ApprovalStatus::Pending);
        Ok(())
    }

    #[tokio::test]
    async fn an_action_that_was_not_offered_is_refused_and_nothing_is_saved() -> anyhow::Result<()>
    {
        let s = TestServices::open(Default::default()).await;
        let chat = s.chat().await;
        pending(&s, &chat.id, "call_1").await;
        let err = s
            .approvals
            .answer(&chat.id, &[answer("call_1", "allow_global")])
            .await
            .unwrap_err();
        assert!(matches!(err, RuntimeError::UnknownAction { .. }), "{err}");
        assert_eq!(status(&s, "call_1").await, ApprovalStatus::Pending);
        assert_eq!(s.store.list_rules(None).await?, Vec::new());
        Ok(())
    }

    #[tokio::test]
    async fn a_batch_with_one_bad_answer_changes_none_of_the_approvals() -> anyhow::Result<()> {
        let s = TestServices::open(Default::default()).await;
        let chat = s.chat().await;
        pending(&s, &chat.id, "call_1").await;
        pending(&s, &chat.id, "call_2").await;
        let err = s
            .approvals
            .answer(
                &chat.id,
                &[answer("call_1", "allow_once"), answer("call_2", "maybe")],
            )
            .await
            .unwrap_err();
        assert!(matches!(err, RuntimeError::UnknownAction { .. }), "{err}");
        assert_eq!(
            (status(&s, "call_1").await, status(&s, "call_2").await),
            (ApprovalStatus::Pending, ApprovalStatus::Pending)
        );
        Ok(())
    }

    #[tokio::test]
    async fn an_edited_rule_that_no_longer_allows_is_refused() -> anyhow::Result<()> {
        let s = TestServices::open(Default::default()).await;
        let chat = s.chat().await;
        pending(&s, &chat.id, "call_1").await;
        let mut edited = answer("call_1", "allow_session");
        edited.rule = Some(RuleDraft {
            behavior: Behavior::Deny,
            ..cargo_test_rule()
        });
        let err = s.approvals.answer(&chat.id, &[edited]).await.unwrap_err();
        assert!(
            matches!(err, RuntimeError::InvalidInput { ref field, .. } if field == "rule"),
            "{err}"
        );
        assert_eq!(status(&s, "call_1").await, ApprovalStatus::Pending);
        assert_eq!(s.store.list_rules(None).await?, Vec::new());
        Ok(())
    }
}
