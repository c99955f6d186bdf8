//! The permission vocabulary: modes, behaviors, decisions, approval actions and rules
//! (seed 000 "Permission engine").

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// What the engine says about a tool call. Ordered: `Allow < Ask < Deny`, so the result of many
/// rules is their maximum ("deny beats ask beats allow").
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Behavior {
    /// Run the tool.
    Allow,
    /// Suspend the turn and ask the user.
    Ask,
    /// Refuse; the model gets an error result.
    Deny,
}

impl Behavior {
    /// The wire name (`allow`, `ask`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            Behavior::Allow => "allow",
            Behavior::Ask => "ask",
            Behavior::Deny => "deny",
        }
    }
}

impl fmt::Display for Behavior {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Behavior {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "allow" => Ok(Behavior::Allow),
            "ask" => Ok(Behavior::Ask),
            "deny" => Ok(Behavior::Deny),
            other => Err(format!(
                "unknown behavior '{other}' (expected allow, ask or deny)"
            )),
        }
    }
}

/// A chat's permission mode.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PermissionMode {
    /// Asks before writes and before any command not known to be read-only.
    #[default]
    Default,
    /// Allows deterministic low-risk actions (workspace writes, read-only commands); asks for the rest.
    Auto,
    /// No ordinary prompts; deny rules and hard path checks still apply.
    FullAccess,
}

impl PermissionMode {
    /// The wire name (`default`, `auto`, `full_access`).
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::Auto => "auto",
            PermissionMode::FullAccess => "full_access",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PermissionMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "default" => Ok(PermissionMode::Default),
            "auto" => Ok(PermissionMode::Auto),
            "full_access" | "full-access" => Ok(PermissionMode::FullAccess),
            other => Err(format!(
                "unknown permission mode '{other}' (expected default, auto or full_access)"
            )),
        }
    }
}

/// How risky an action is, as shown to the user.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Reads, listings.
    Low,
    /// Workspace writes, ordinary commands.
    Medium,
    /// Writes outside the workspace, destructive or unknown commands.
    High,
}

/// Which part of the engine produced a decision.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecisionSource {
    /// A user or built-in rule matched.
    Rule,
    /// The permission mode decided (e.g. `full_access` allows without review).
    Mode,
    /// The shell command policy (read-only commands, compound commands).
    ShellPolicy,
    /// The path policy (outside the workspace, protected locations).
    PathPolicy,
    /// The tool's own default (`requires_approval`).
    ToolDefault,
    /// The auto-mode reviewer model.
    AutoClassifier,
    /// A headless run that cannot ask turned an ask into a deny.
    Headless,
    /// The user answered an approval prompt.
    User,
}

/// The stable, machine-readable code of a decision (snake_case on the wire: `rule_deny`,
/// `shell_policy_ask`, ...). The sentence for people is the decision's `reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    /// A path (or redirect target) resolves outside every allowed root.
    OutsideWorkspace,
    /// A path cannot be resolved (symlink loop, empty).
    UnresolvablePath,
    /// A write into a protected location (`.git` internals of the workspace).
    ProtectedPath,
    /// A deny rule matched.
    RuleDeny,
    /// A built-in dangerous command (privilege escalation, disk formatting, power, `rm -rf /`).
    DangerousCommand,
    /// An ask rule matched.
    RuleAsk,
    /// Allow rules cover the whole request.
    RuleAllow,
    /// More than one command (or a nested script) outside `full_access`.
    CompoundCommand,
    /// The shell analyser could not follow the script.
    ShellUnparsed,
    /// `full_access` mode allowed it without review.
    FullAccess,
    /// A read.
    ReadOnly,
    /// `auto` mode allowed a write inside the workspace.
    AutoWorkspaceWrite,
    /// A write that needs approval.
    WriteRequiresApproval,
    /// A known read-only command.
    ReadOnlyCommand,
    /// A command that is not known to be read-only.
    ShellPolicyAsk,
    /// The tool asks for approval by default.
    ToolRequiresApproval,
    /// The tool does not ask for approval by default.
    ToolDefaultAllow,
    /// An option that makes a program run other code (`git -c`, `--upload-pack`, pagers, ...).
    CodeExecutionOption,
    /// A variable that changes what runs (`LD_PRELOAD`, `NODE_OPTIONS`, `GIT_*`, ...).
    RiskyEnvironment,
    /// The auto-mode reviewer allowed the call (not blocked, medium or high confidence).
    AutoClassifierAllow,
    /// The auto-mode reviewer blocked the call.
    AutoClassifierBlock,
    /// The auto-mode reviewer was not confident enough either way.
    AutoClassifierAsk,
    /// The reviewer failed, timed out or answered something that is not the expected JSON.
    AutoClassifierError,
    /// A headless run cannot ask, so what would ask was refused.
    HeadlessAskDenied,
    /// The call touches Suzent's own settings and data (rules, config, MCP servers, the
    /// database, the audit log) or runs Suzent's own CLI: refused in every mode.
    SuzentState,
    /// A command changes a path operand outside the allowed roots (or one whose value cannot
    /// be known): asks outside `full_access`, never remembered, never auto-allowed.
    WriteOutsideWorkspace,
    /// `browser_action` was asked to open a scheme other than http, https or `about:blank`.
    BrowserSchemeRefused,
    /// `browser_action` was asked to open an address that does not parse.
    BrowserBadUrl,
    /// `browser_action` reads the page (tabs, snapshot, choosing a tab): allowed.
    BrowserRead,
    /// `browser_action` acts on a page or opens an address: asks unless a rule allows its host.
    BrowserRequiresApproval,
}

impl ReasonCode {
    /// The wire name (`rule_deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::OutsideWorkspace => "outside_workspace",
            ReasonCode::UnresolvablePath => "unresolvable_path",
            ReasonCode::ProtectedPath => "protected_path",
            ReasonCode::RuleDeny => "rule_deny",
            ReasonCode::DangerousCommand => "dangerous_command",
            ReasonCode::RuleAsk => "rule_ask",
            ReasonCode::RuleAllow => "rule_allow",
            ReasonCode::CompoundCommand => "compound_command",
            ReasonCode::ShellUnparsed => "shell_unparsed",
            ReasonCode::FullAccess => "full_access",
            ReasonCode::ReadOnly => "read_only",
            ReasonCode::AutoWorkspaceWrite => "auto_workspace_write",
            ReasonCode::WriteRequiresApproval => "write_requires_approval",
            ReasonCode::ReadOnlyCommand => "read_only_command",
            ReasonCode::ShellPolicyAsk => "shell_policy_ask",
            ReasonCode::ToolRequiresApproval => "tool_requires_approval",
            ReasonCode::ToolDefaultAllow => "tool_default_allow",
            ReasonCode::CodeExecutionOption => "code_execution_option",
            ReasonCode::RiskyEnvironment => "risky_environment",
            ReasonCode::AutoClassifierAllow => "auto_classifier_allow",
            ReasonCode::AutoClassifierBlock => "auto_classifier_block",
            ReasonCode::AutoClassifierAsk => "auto_classifier_ask",
            ReasonCode::AutoClassifierError => "auto_classifier_error",
            ReasonCode::HeadlessAskDenied => "headless_ask_denied",
            ReasonCode::SuzentState => "suzent_state",
            ReasonCode::WriteOutsideWorkspace => "write_outside_workspace",
            ReasonCode::BrowserSchemeRefused => "browser_scheme_refused",
            ReasonCode::BrowserBadUrl => "browser_bad_url",
            ReasonCode::BrowserRead => "browser_read",
            ReasonCode::BrowserRequiresApproval => "browser_requires_approval",
        }
    }
}

impl std::fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for ReasonCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ReasonCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for ReasonCode {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

/// One decision of the permission engine for one tool call.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionDecision {
    /// Allow, ask or deny.
    pub behavior: Behavior,
    /// What decided.
    pub source: DecisionSource,
    /// A sentence for the user and the model.
    pub reason: String,
    /// A stable machine-readable code, e.g. `shell_policy_ask`, `rule_deny`, `outside_workspace`.
    /// (A string in the TypeScript bindings: the UI shows it as it is.)
    #[cfg_attr(feature = "specta", specta(type = String))]
    pub reason_code: ReasonCode,
    /// How risky the action is.
    pub risk: Risk,
    /// The actions an approval prompt offers, in display order (empty unless `behavior` is ask).
    #[serde(default)]
    pub actions: Vec<ApprovalAction>,
    /// Ids of the rules that matched (for explanation).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matched_rules: Vec<String>,
    /// Reviewer confidence (`low`/`medium`/`high`) when the auto classifier decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<String>,
    /// Reviewer risk categories when the auto classifier decided.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub risk_categories: Vec<String>,
    /// The reviewer model, when the auto classifier decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer_model: Option<String>,
}

impl PermissionDecision {
    /// A decision with no actions and no metadata.
    pub fn new(
        behavior: Behavior,
        source: DecisionSource,
        reason_code: ReasonCode,
        reason: impl Into<String>,
        risk: Risk,
    ) -> Self {
        PermissionDecision {
            behavior,
            source,
            reason: reason.into(),
            reason_code,
            risk,
            actions: Vec::new(),
            matched_rules: Vec::new(),
            confidence: None,
            risk_categories: Vec::new(),
            reviewer_model: None,
        }
    }
}

/// The id of an approval action (seed 000: `allow_once`, `allow_session`, `allow_global`, `reject`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalActionId {
    /// Run this call only.
    AllowOnce,
    /// Run it and add a session rule.
    AllowSession,
    /// Run it and add a global rule.
    AllowGlobal,
    /// Do not run it; optional feedback goes to the model.
    Reject,
}

impl ApprovalActionId {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalActionId::AllowOnce => "allow_once",
            ApprovalActionId::AllowSession => "allow_session",
            ApprovalActionId::AllowGlobal => "allow_global",
            ApprovalActionId::Reject => "reject",
        }
    }

    /// Parses a wire name. Legacy binary answers are accepted: `yes`/`true`/`approve` mean
    /// `allow_once`, `no`/`false`/`deny` mean `reject`; they never create rules.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "allow_once" | "yes" | "y" | "true" | "approve" | "approved" => {
                Ok(ApprovalActionId::AllowOnce)
            }
            "allow_session" => Ok(ApprovalActionId::AllowSession),
            "allow_global" => Ok(ApprovalActionId::AllowGlobal),
            "reject" | "no" | "n" | "false" | "deny" | "denied" => Ok(ApprovalActionId::Reject),
            _ => Err(format!(
                "unknown approval action '{s}' (expected allow_once, allow_session, allow_global or reject)"
            )),
        }
    }
}

impl fmt::Display for ApprovalActionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One button of an approval prompt, as declared by the backend.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalAction {
    /// What answering with this action does.
    pub id: ApprovalActionId,
    /// Button label.
    pub label: String,
    /// A sentence explaining the action (for remembered actions: the rule it adds).
    pub description: String,
    /// The rule this action adds, for `allow_session` and `allow_global`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleDraft>,
    /// Whether the UI should offer a feedback field with this action.
    #[serde(default)]
    pub accepts_feedback: bool,
}

/// A user's answer to one pending approval (seed 000 `resume_approvals` item).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApprovalResponse {
    /// The approval id from `tool_approval_request`.
    pub request_id: String,
    /// The tool call id (equal to the request id in Suzent; kept for the seed's payload shape).
    #[serde(default)]
    pub tool_call_id: Option<String>,
    /// One of the offered action ids, or a legacy yes/no.
    pub action_id: String,
    /// Guidance for the model (with `reject`, or with any action).
    #[serde(default)]
    pub feedback: Option<String>,
    /// With `allow_session` / `allow_global`: the rule as the user saw it, possibly edited
    /// (the one saved, exactly). Absent: the rule the action offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleDraft>,
}

/// Where a rule lives.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuleDestination {
    /// Only for one chat.
    Session,
    /// For every chat of this user.
    Global,
}

impl RuleDestination {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleDestination::Session => "session",
            RuleDestination::Global => "global",
        }
    }
}

impl FromStr for RuleDestination {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "session" => Ok(RuleDestination::Session),
            "global" => Ok(RuleDestination::Global),
            other => Err(format!(
                "unknown destination '{other}' (expected session or global)"
            )),
        }
    }
}

/// What a rule matches within its tool.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RuleMatcher {
    /// Every call of the tool.
    All,
    /// Calls whose arguments equal this JSON object exactly.
    Exact {
        /// The arguments.
        input: Value,
    },
    /// Commands whose words start with these words (shell tools).
    Prefix {
        /// The leading words, e.g. `["git", "status"]`.
        words: Vec<String>,
    },
    /// Paths matching a gitignore-style glob (file tools), e.g. `/home/u/project/**`.
    Path {
        /// The glob; `~` expands to the home directory.
        glob: String,
    },
    /// Calls addressed to a matching destination: a recipient, channel, chat, repository,
    /// agent or host, as found in the call's arguments (recipient-like fields such as `to`,
    /// `recipients`, `channel`, `chat_id`, `repo`/`repository` or `owner` + `repo`,
    /// `agent_id`, and the host of `url`).
    ///
    /// Destination shapes, as they are matched:
    /// - e-mail addresses: `alice@example.com` (`Alice <alice@example.com>` is read as the
    ///   address; comma- or semicolon-separated lists are split);
    /// - channels: `#general` (a leading `#` is added when the argument has none);
    /// - repositories: `owner/name`, e.g. `octo/hello`;
    /// - chats and agents: the id as given (`-100123`, `@news`, an agent's chat id);
    /// - hosts of URLs: `api.github.com` (lower case, no port).
    ///
    /// The pattern is a case-insensitive glob on the whole destination: `*` matches any run
    /// of characters (also none), `\*` is a literal star and `\\` a backslash, e.g.
    /// `*@example.com`, `octo/*`, `#general`, `*.github.com`. Allow rules of this kind never
    /// cover a call whose destinations cannot all be determined; deny and ask rules match when
    /// any destination matches.
    Destination {
        /// The glob on the destination.
        pattern: String,
    },
}

/// A rule before it is stored: what an approval action would add.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleDraft {
    /// Tool runtime name (`run_command`) or `*` for every tool.
    pub tool: String,
    /// What the rule decides.
    pub behavior: Behavior,
    /// What it matches.
    pub matcher: RuleMatcher,
    /// Session or global.
    pub destination: RuleDestination,
    /// A sentence for the user.
    #[serde(default)]
    pub description: Option<String>,
}

/// A stored permission rule (seed 000: `{id, tool, behavior, matcher, destination, createdAt, description}`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// Unique id.
    pub id: String,
    /// Tool runtime name or `*`.
    pub tool: String,
    /// What the rule decides.
    pub behavior: Behavior,
    /// What it matches.
    pub matcher: RuleMatcher,
    /// Session or global.
    pub destination: RuleDestination,
    /// The chat a session rule belongs to (None for global rules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
    /// When it was added.
    pub created_at: DateTime<Utc>,
    /// A sentence for the user.
    #[serde(default)]
    pub description: Option<String>,
}
