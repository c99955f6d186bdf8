//! The one gate every tool call passes, and the one the decision simulator uses: the
//! permission request is built from the tool, the engine decides, the `auto` mode reviewer
//! judges what the policy would ask about, a headless run turns an ask into a deny, and the
//! decision is appended to the audit log and announced. `explain` builds the request the same
//! way and runs the same engine, so the simulator and the real path cannot drift apart.
//!
//! ```text
//! tool call ──> GateSubject (access, requires_approval) ──> PermissionRequest
//!           ──> PermissionEngine::evaluate ──> should_review? ──> Reviewer::review
//!           ──> headless? ask -> deny ──> audit line ──> DecisionSink (tool_permission_decision)
//! ```
//!
//! The runtime implements [`Reviewer`] (a model call) and [`DecisionSink`] (its event stream);
//! a tool's side of the request comes through [`GateSubject`] (implemented in `suzent-tools`
//! for every tool with its call context).

use crate::audit::{AuditLog, AuditRecord};
use crate::engine::{Evaluation, PermissionContext, PermissionEngine, PermissionRequest};
use crate::explain::Explanation;
use crate::paths::PathPolicy;
use async_trait::async_trait;
use serde_json::Value;
use std::sync::Arc;
use suzent_core::{
    ApprovalActionId, Behavior, DecisionEvent, DecisionSource, PermissionDecision, PermissionMode,
    ReasonCode, Rule,
};

/// What the gate needs from a tool to build its permission request.
pub trait GateSubject: Send + Sync {
    /// The tool's runtime name (`run_command`), which rules match.
    fn runtime_name(&self) -> &str;
    /// What a call with these arguments touches. An error is the tool's message about its
    /// arguments (the call fails with it and is not evaluated).
    fn access(&self, args: &Value) -> Result<crate::ToolAccess, String>;
    /// Whether the call asks before running when nothing else decides.
    fn requires_approval(&self, args: &Value) -> bool;
}

/// The `auto` mode reviewer: a second opinion on a call the deterministic policy would ask
/// about. Implemented by the runtime (a model call).
#[async_trait]
pub trait Reviewer: Send + Sync {
    /// Judges `request`; `policy` is the engine's ask. Never fails: an error or a timeout is an
    /// ask, or a deny when `headless`. The gate keeps the policy's matched rules and, when the
    /// answer is ask, its approval actions.
    async fn review(
        &self,
        request: &PermissionRequest,
        policy: &PermissionDecision,
        headless: bool,
    ) -> PermissionDecision;
}

/// Where decisions are announced (the runtime's `tool_permission_decision` events).
pub trait DecisionSink: Send + Sync {
    /// One decision, after it was queued for the audit log.
    fn decided(&self, event: DecisionEvent);
}

/// Whether a deterministic decision goes to the reviewer: in `auto` mode, an ask of the shell or
/// tool policy. Hard path checks, protected paths and ask rules stay with the user; allow and
/// deny never go to the reviewer.
pub fn should_review(mode: PermissionMode, decision: &PermissionDecision) -> bool {
    mode == PermissionMode::Auto
        && decision.behavior == Behavior::Ask
        && !matches!(
            decision.source,
            DecisionSource::PathPolicy | DecisionSource::Rule | DecisionSource::User
        )
        && !matches!(
            decision.reason_code,
            ReasonCode::ProtectedPath | ReasonCode::RuleAsk
        )
}

/// The decision of a headless run (nobody can answer) for a decision that would ask: a deny
/// with the ask's reason and matched rules. Other decisions are returned unchanged.
pub fn headless_profile(decision: PermissionDecision) -> PermissionDecision {
    if decision.behavior != Behavior::Ask {
        return decision;
    }
    let mut headless = PermissionDecision::new(
        Behavior::Deny,
        DecisionSource::Headless,
        ReasonCode::HeadlessAskDenied,
        format!(
            "{} This run cannot ask for approval (headless), so the call was refused.",
            decision.reason
        ),
        decision.risk,
    );
    headless.matched_rules = decision.matched_rules;
    headless
}

/// One tool call at the gate.
#[derive(Debug, Clone, Copy)]
pub struct GateCall<'a> {
    /// The chat.
    pub chat_id: &'a str,
    /// The run.
    pub run_id: &'a str,
    /// The call id.
    pub tool_call_id: &'a str,
    /// The name the model called (recorded and announced as sent).
    pub tool_name: &'a str,
    /// The mode the call is evaluated in.
    pub mode: PermissionMode,
    /// True when nobody can answer a prompt (headless runs): what would ask is denied.
    pub headless: bool,
    /// Who started the run when it was not the local user (`peer:<device>`), for the audit.
    pub origin: Option<&'a str>,
}

/// Roots and rules a call is evaluated against.
#[derive(Debug, Clone, Copy)]
pub struct GateScope<'a> {
    /// Roots the chat may touch, and the workspace.
    pub paths: &'a PathPolicy,
    /// The rules in force for the chat (global, session and `rules.toml`).
    pub rules: &'a [Rule],
}

/// The gate's answer for one call.
#[derive(Debug, Clone, PartialEq)]
pub struct GateOutcome {
    /// The final decision (after the reviewer and the headless profile).
    pub decision: PermissionDecision,
    /// Every rule that matched.
    pub matched: Vec<Rule>,
}

/// The permission gate: the engine, the audit log and the decision stream in one place.
#[derive(Clone)]
pub struct PermissionGate {
    engine: PermissionEngine,
    audit: AuditLog,
    sink: Arc<dyn DecisionSink>,
}

impl std::fmt::Debug for PermissionGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionGate").finish_non_exhaustive()
    }
}

impl PermissionGate {
    /// A gate writing to `audit` and announcing to `sink`.
    pub fn new(audit: AuditLog, sink: Arc<dyn DecisionSink>) -> PermissionGate {
        PermissionGate {
            engine: PermissionEngine::new(),
            audit,
            sink,
        }
    }

    /// The audit log the gate writes to.
    pub fn audit(&self) -> &AuditLog {
        &self.audit
    }

    /// The permission request for `subject` called with `args`. Errors are the tool's own
    /// message about its arguments.
    pub fn request(subject: &dyn GateSubject, args: Value) -> Result<PermissionRequest, String> {
        let access = subject.access(&args)?;
        Ok(PermissionRequest {
            tool_name: subject.runtime_name().to_string(),
            requires_approval: subject.requires_approval(&args),
            args,
            access,
        })
    }

    /// Decides one call: builds the request, evaluates it, asks the reviewer when
    /// [`should_review`] says so, applies the headless profile, appends the audit line and
    /// announces the decision. Errors (before any decision) are the tool's message about its
    /// arguments: nothing is audited then, and the call fails with it.
    pub async fn decide(
        &self,
        call: GateCall<'_>,
        subject: &dyn GateSubject,
        args: &Value,
        scope: GateScope<'_>,
        reviewer: &dyn Reviewer,
    ) -> Result<GateOutcome, String> {
        let request = PermissionGate::request(subject, args.clone())?;
        let ctx = PermissionContext {
            mode: call.mode,
            paths: scope.paths,
            rules: scope.rules,
            chat_id: call.chat_id,
        };
        let Evaluation { decision, matched } = self.engine.evaluate(&request, &ctx);
        let mut decision = decision;
        if should_review(call.mode, &decision) {
            let mut reviewed = reviewer.review(&request, &decision, call.headless).await;
            reviewed.matched_rules = decision.matched_rules.clone();
            if reviewed.behavior == Behavior::Ask {
                reviewed.actions = decision.actions.clone();
            }
            decision = reviewed;
        }
        if call.headless {
            decision = headless_profile(decision);
        }
        self.audit
            .append(&evaluation_record(
                &call,
                &audited_args(&request.access, args),
                &decision,
                &matched,
            ))
            .await;
        self.sink.decided(DecisionEvent {
            chat_id: call.chat_id.to_string(),
            tool_call_id: call.tool_call_id.to_string(),
            tool_name: call.tool_name.to_string(),
            decision: decision.clone(),
        });
        Ok(GateOutcome { decision, matched })
    }

    /// The decision simulator: what [`PermissionGate::decide`] would decide before the reviewer
    /// (whose involvement `reviewerWouldDecide` reports), with every matching rule and the shell
    /// segments. Nothing runs, nothing is audited or announced. Errors as `decide`.
    pub fn explain(
        &self,
        subject: &dyn GateSubject,
        args: Value,
        mode: PermissionMode,
        scope: GateScope<'_>,
        chat_id: &str,
    ) -> Result<Explanation, String> {
        let request = PermissionGate::request(subject, args)?;
        let ctx = PermissionContext {
            mode,
            paths: scope.paths,
            rules: scope.rules,
            chat_id,
        };
        Ok(self.engine.explain(&request, &ctx))
    }

    /// Appends the audit line of a user's answer to a prompt (`resolution`).
    pub async fn record_resolution(&self, resolution: Resolution<'_>) {
        self.audit
            .append(&AuditRecord {
                timestamp: chrono::Utc::now().to_rfc3339(),
                kind: "resolution".to_string(),
                chat_id: resolution.chat_id.to_string(),
                run_id: Some(resolution.run_id.to_string()),
                tool_call_id: Some(resolution.tool_call_id.to_string()),
                tool: resolution.tool.to_string(),
                user_action: Some(resolution.action.as_str().to_string()),
                feedback: resolution.feedback.map(str::to_string),
                rule_id: resolution.rule_id.map(str::to_string),
                ..AuditRecord::default()
            })
            .await;
    }
}

/// A user's answer to a prompt, as the audit log records it.
#[derive(Debug, Clone, Copy)]
pub struct Resolution<'a> {
    /// The chat.
    pub chat_id: &'a str,
    /// The run that asked.
    pub run_id: &'a str,
    /// The call.
    pub tool_call_id: &'a str,
    /// The tool.
    pub tool: &'a str,
    /// The answer.
    pub action: ApprovalActionId,
    /// The user's feedback (redacted before it is written).
    pub feedback: Option<&'a str>,
    /// The rule the answer added.
    pub rule_id: Option<&'a str>,
}

/// The arguments as the audit log keeps them. Text a browser call types into a page (`fill`'s
/// `value`, `type`'s `text`) is replaced by its length: the gate cannot tell a password field
/// from any other, so it never writes typed text to disk.
fn audited_args(access: &crate::ToolAccess, args: &Value) -> Value {
    let crate::ToolAccess::Browser(browser) = access else {
        return args.clone();
    };
    let field = match browser.command.as_str() {
        "fill" => "value",
        "type" => "text",
        _ => return args.clone(),
    };
    let mut args = args.clone();
    if let Some(typed) = args.get_mut(field) {
        let n = typed.as_str().map_or(0, |t| t.chars().count());
        *typed = Value::String(format!("[typed text withheld: {n} characters]"));
    }
    args
}

/// The audit line of one decision: the one [`AuditRecord`] type, whose free text and arguments
/// pass the redactor when it is written.
fn evaluation_record(
    call: &GateCall<'_>,
    args: &Value,
    decision: &PermissionDecision,
    matched: &[Rule],
) -> AuditRecord {
    let mut record = AuditRecord::evaluation(
        call.chat_id,
        call.run_id,
        call.tool_call_id,
        call.tool_name,
        args,
        call.mode,
        decision,
    );
    record.matched_rules = matched.iter().map(|r| r.id.clone()).collect();
    record.origin = call.origin.map(str::to_string);
    record
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::ToolAccess;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use std::sync::Mutex;
    use suzent_core::Risk;

    struct Tool {
        access: ToolAccess,
        approval: bool,
    }

    impl GateSubject for Tool {
        fn runtime_name(&self) -> &str {
            "run_command"
        }
        fn access(&self, _args: &Value) -> Result<ToolAccess, String> {
            Ok(self.access.clone())
        }
        fn requires_approval(&self, _args: &Value) -> bool {
            self.approval
        }
    }

    struct Sink(Mutex<Vec<DecisionEvent>>);
    impl DecisionSink for Sink {
        fn decided(&self, event: DecisionEvent) {
            self.0.lock().unwrap().push(event);
        }
    }

    struct FixedReviewer(Behavior);
    #[async_trait]
    impl Reviewer for FixedReviewer {
        async fn review(
            &self,
            _request: &PermissionRequest,
            _policy: &PermissionDecision,
            _headless: bool,
        ) -> PermissionDecision {
            PermissionDecision::new(
                self.0,
                DecisionSource::AutoClassifier,
                ReasonCode::AutoClassifierAllow,
                "reviewed",
                Risk::Medium,
            )
        }
    }

    fn setup() -> (tempfile::TempDir, PathPolicy, PermissionGate, Arc<Sink>) {
        let dir = tempfile::tempdir().unwrap();
        let policy = PathPolicy::new(dir.path(), &[]).unwrap();
        let sink = Arc::new(Sink(Mutex::new(Vec::new())));
        let audit = AuditLog::start(dir.path().join("audit.jsonl"));
        let gate = PermissionGate::new(audit, sink.clone());
        (dir, policy, gate, sink)
    }

    fn call(mode: PermissionMode, headless: bool) -> GateCall<'static> {
        GateCall {
            chat_id: "c",
            run_id: "r",
            tool_call_id: "t",
            tool_name: "run_command",
            mode,
            headless,
            origin: None,
        }
    }

    fn command(policy: &PathPolicy, script: &str) -> Tool {
        Tool {
            access: ToolAccess::Command {
                command: script.into(),
                cwd: policy.workspace().to_path_buf(),
            },
            approval: true,
        }
    }

    #[tokio::test]
    async fn text_typed_into_a_page_never_reaches_the_audit_file() -> anyhow::Result<()> {
        let (dir, policy, gate, _sink) = setup();
        for (command, args) in [
            (
                "fill",
                json!({"command": "fill", "ref": "s1e3", "value": "hunter2-secret"}),
            ),
            (
                "type",
                json!({"command": "type", "text": "hunter2-secret", "submit": true}),
            ),
        ] {
            let tool = Tool {
                access: ToolAccess::Browser(crate::BrowserAccess {
                    kind: crate::BrowserAccessKind::Act,
                    command: command.into(),
                    url: Some("https://bank.test/login".into()),
                }),
                approval: true,
            };
            gate.decide(
                call(PermissionMode::Default, false),
                &tool,
                &args,
                GateScope {
                    paths: &policy,
                    rules: &[],
                },
                &FixedReviewer(Behavior::Allow),
            )
            .await
            .map_err(anyhow::Error::msg)?;
        }
        gate.audit().flush().await;
        let written = std::fs::read_to_string(dir.path().join("audit.jsonl"))?;
        assert!(!written.contains("hunter2"), "{written}");
        let lines: Vec<Value> = written
            .lines()
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()?;
        assert_eq!(
            lines
                .iter()
                .map(|l| (
                    l["args"]["ref"].clone(),
                    l["args"]["value"].clone(),
                    l["args"]["text"].clone()
                ))
                .collect::<Vec<_>>(),
            vec![
                (
                    json!("s1e3"),
                    json!("[typed text withheld: 14 characters]"),
                    Value::Null
                ),
                (
                    Value::Null,
                    Value::Null,
                    json!("[typed text withheld: 14 characters]")
                ),
            ]
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_headless_ask_becomes_a_deny_that_is_audited_and_announced() -> anyhow::Result<()> {
        let (_dir, policy, gate, sink) = setup();
        let scope = GateScope {
            paths: &policy,
            rules: &[],
        };
        let tool = command(&policy, "cargo build");
        let out = gate
            .decide(
                call(PermissionMode::Default, true),
                &tool,
                &json!({}),
                scope,
                &FixedReviewer(Behavior::Allow),
            )
            .await
            .map_err(anyhow::Error::msg)?;
        assert_eq!(
            (out.decision.behavior, out.decision.reason_code),
            (Behavior::Deny, ReasonCode::HeadlessAskDenied)
        );
        let events = sink.0.lock().unwrap().clone();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].decision, out.decision);
        Ok(())
    }

    #[tokio::test]
    async fn the_reviewer_decides_only_in_auto_mode_and_keeps_the_policy_actions()
    -> anyhow::Result<()> {
        let (_dir, policy, gate, _sink) = setup();
        let scope = GateScope {
            paths: &policy,
            rules: &[],
        };
        let tool = command(&policy, "cargo build");
        let args = json!({});
        let default = gate
            .decide(
                call(PermissionMode::Default, false),
                &tool,
                &args,
                scope,
                &FixedReviewer(Behavior::Allow),
            )
            .await
            .map_err(anyhow::Error::msg)?;
        assert_eq!(default.decision.reason_code, ReasonCode::ShellPolicyAsk);
        let auto = gate
            .decide(
                call(PermissionMode::Auto, false),
                &tool,
                &args,
                scope,
                &FixedReviewer(Behavior::Ask),
            )
            .await
            .map_err(anyhow::Error::msg)?;
        assert_eq!(auto.decision.source, DecisionSource::AutoClassifier);
        assert_eq!(auto.decision.actions, default.decision.actions);
        Ok(())
    }

    #[tokio::test]
    async fn explain_and_decide_build_the_same_request() -> anyhow::Result<()> {
        let (_dir, policy, gate, _sink) = setup();
        let scope = GateScope {
            paths: &policy,
            rules: &[],
        };
        let tool = Tool {
            access: ToolAccess::Other,
            approval: true,
        };
        let explained = gate
            .explain(&tool, json!({}), PermissionMode::Default, scope, "c")
            .map_err(anyhow::Error::msg)?;
        let decided = gate
            .decide(
                call(PermissionMode::Default, false),
                &tool,
                &json!({}),
                scope,
                &FixedReviewer(Behavior::Allow),
            )
            .await
            .map_err(anyhow::Error::msg)?;
        assert_eq!(
            (explained.behavior, explained.reason_code),
            (decided.decision.behavior, decided.decision.reason_code)
        );
        assert_eq!(explained.reason_code, ReasonCode::ToolRequiresApproval);
        Ok(())
    }
}
