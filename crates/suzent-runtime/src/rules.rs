//! The rule service: the rules in force for a chat, assembled in this one place (rules stored
//! in the database, global and of the chat's session, plus the hand-written global rules of
//! `rules.toml`, read on every call so edits apply to the next tool call), and rule changes.

use crate::error::RuntimeError;
use crate::toolset::Toolset;
use chrono::Utc;
use serde::Serialize;
use std::path::{Path, PathBuf};
use suzent_core::{PermissionMode, Rule, RuleDestination, RuleDraft, new_id};
use suzent_permissions::{RuleFile, RuleFileProblem, parse_rules_file, validate_rule};
use suzent_store::Store;

/// The name of the hand-written rules file in the config directory.
pub const RULES_FILE: &str = "rules.toml";

/// A chat's permission mode and the rules in force for it.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionState {
    /// The chat.
    pub chat_id: String,
    /// Its mode.
    pub mode: PermissionMode,
    /// Global rules (stored and from `rules.toml`) and the chat's session rules.
    pub rules: Vec<Rule>,
    /// Rules of `rules.toml` that were ignored, with their line.
    pub rule_file_problems: Vec<RuleFileProblem>,
}

/// Whose rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleScope<'a> {
    /// Global rules and this chat's session rules: what a call of the chat is decided by.
    Chat(&'a str),
    /// Global rules only (a simulated call without a chat).
    Global,
    /// Every rule, of every chat (the rule editor's full list).
    All,
}

/// Rules: in force, listed, added, deleted.
pub(crate) struct RuleService {
    store: Store,
    file: PathBuf,
}

impl RuleService {
    /// The service; `config_dir` holds `rules.toml`.
    pub(crate) fn new(store: Store, config_dir: &Path) -> RuleService {
        RuleService {
            store,
            file: config_dir.join(RULES_FILE),
        }
    }

    async fn chat(&self, chat_id: &str) -> Result<suzent_store::ChatRecord, RuntimeError> {
        self.store
            .get_chat(chat_id)
            .await?
            .ok_or_else(|| RuntimeError::ChatNotFound(chat_id.to_string()))
    }

    /// The path of `rules.toml`.
    pub(crate) fn file_path(&self) -> PathBuf {
        self.file.clone()
    }

    /// Global rules from `rules.toml` and the entries that were ignored. A missing file has no
    /// rules; an unreadable one is one problem.
    pub(crate) fn rule_file(&self) -> RuleFile {
        read_rule_file(&self.file)
    }

    /// The rules in force for `scope`: the stored ones, then those of `rules.toml`.
    pub(crate) async fn in_force(&self, scope: RuleScope<'_>) -> Result<Vec<Rule>, RuntimeError> {
        Ok(self.assemble(scope, self.rule_file().rules).await?)
    }

    /// The one place the rules in force are put together.
    async fn assemble(
        &self,
        scope: RuleScope<'_>,
        from_file: Vec<Rule>,
    ) -> Result<Vec<Rule>, suzent_store::StoreError> {
        let mut rules = match scope {
            RuleScope::Chat(chat_id) => self.store.list_rules(Some(chat_id)).await?,
            RuleScope::All => self.store.list_rules(None).await?,
            RuleScope::Global => self
                .store
                .list_rules(None)
                .await?
                .into_iter()
                .filter(|r| r.destination == RuleDestination::Global)
                .collect(),
        };
        rules.extend(from_file); // hand-written global rules (`rules.toml`)
        Ok(rules)
    }

    /// Global rules plus the chat's session rules (every rule when `chat_id` is None).
    pub(crate) async fn list(&self, chat_id: Option<&str>) -> Result<Vec<Rule>, RuntimeError> {
        let scope = chat_id.map_or(RuleScope::All, RuleScope::Chat);
        self.in_force(scope).await
    }

    /// A chat's mode, the rules in force for it, and the problems of `rules.toml`.
    pub(crate) async fn permission_state(
        &self,
        chat_id: &str,
    ) -> Result<PermissionState, RuntimeError> {
        let chat = self.chat(chat_id).await?;
        let file = self.rule_file();
        let rules = self.assemble(RuleScope::Chat(chat_id), file.rules).await?;
        Ok(PermissionState {
            chat_id: chat.id,
            mode: chat.mode,
            rules,
            rule_file_problems: file.problems,
        })
    }

    /// Adds a rule. Session rules need a chat; the tool must be known to `tools` (or be `*` or
    /// an MCP tool) and is stored under its runtime name.
    pub(crate) async fn add(
        &self,
        draft: RuleDraft,
        chat_id: Option<&str>,
        tools: &Toolset,
    ) -> Result<Rule, RuntimeError> {
        validate_rule(&draft).map_err(|message| RuntimeError::InvalidInput {
            field: "rule".into(),
            message,
        })?;
        if draft.tool != "*"
            && tools.get(&draft.tool).is_none()
            && !draft.tool.starts_with(suzent_mcp::PREFIX)
        {
            return Err(RuntimeError::InvalidInput {
                field: "rule.tool".into(),
                message: format!("unknown tool '{}'", draft.tool),
            });
        }
        let chat_id = match draft.destination {
            RuleDestination::Session => {
                let id = chat_id.ok_or_else(|| RuntimeError::InvalidInput {
                    field: "chat_id".into(),
                    message: "a session rule needs a chat".into(),
                })?;
                self.chat(id).await?;
                Some(id.to_string())
            }
            RuleDestination::Global => None,
        };
        let tool = match tools.get(&draft.tool) {
            Some(t) => t.spec().runtime_name.to_string(),
            None => draft.tool.clone(),
        };
        let rule = Rule {
            id: new_id(),
            tool,
            behavior: draft.behavior,
            matcher: draft.matcher,
            destination: draft.destination,
            chat_id,
            created_at: Utc::now(),
            description: draft.description,
        };
        self.store.add_rule(&rule).await?;
        Ok(rule)
    }

    /// Deletes a rule by id.
    pub(crate) async fn delete(&self, rule_id: &str) -> Result<(), RuntimeError> {
        if self.store.delete_rule(rule_id).await? {
            Ok(())
        } else {
            Err(RuntimeError::InvalidInput {
                field: "rule_id".into(),
                message: format!("no rule '{rule_id}'"),
            })
        }
    }

    /// Logs the ignored entries of `rules.toml` (called when the runtime opens).
    pub(crate) fn report_rule_file(&self) {
        for problem in self.rule_file().problems {
            tracing::warn!("{}: ignored rule at {problem}", self.file.display());
        }
    }
}

/// Reads and parses a rules file; logs nothing (see [`RuleService::report_rule_file`]).
fn read_rule_file(path: &Path) -> RuleFile {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_rules_file(&text, RULES_FILE),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => RuleFile::default(),
        Err(e) => RuleFile {
            rules: Vec::new(),
            problems: vec![RuleFileProblem {
                line: 0,
                message: format!("cannot read {}: {e}", path.display()),
            }],
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use suzent_core::{Behavior, RuleMatcher};

    fn rule(id: &str, destination: RuleDestination, chat_id: Option<&str>) -> Rule {
        Rule {
            id: id.into(),
            tool: "run_command".into(),
            behavior: Behavior::Deny,
            matcher: RuleMatcher::All,
            destination,
            chat_id: chat_id.map(str::to_string),
            created_at: Utc::now(),
            description: None,
        }
    }

    async fn service() -> anyhow::Result<(tempfile::TempDir, RuleService)> {
        let dir = tempfile::tempdir()?;
        let store = Store::open(&dir.path().join("db.sqlite")).await?;
        for id in ["a", "b"] {
            store
                .create_chat(&suzent_store::NewChat {
                    id: id.into(),
                    title: id.into(),
                    workspace: dir.path().display().to_string(),
                    model: None,
                    mode: PermissionMode::Default,
                    tools: None,
                })
                .await?;
        }
        store
            .add_rule(&rule("global", RuleDestination::Global, None))
            .await?;
        store
            .add_rule(&rule("session-a", RuleDestination::Session, Some("a")))
            .await?;
        store
            .add_rule(&rule("session-b", RuleDestination::Session, Some("b")))
            .await?;
        std::fs::write(
            dir.path().join(RULES_FILE),
            "[[rule]]\ntool = \"run_command\"\nbehavior = \"deny\"\nprefix = \"rm\"\n",
        )?;
        let rules = RuleService::new(store, dir.path());
        Ok((dir, rules))
    }

    fn ids(rules: &[Rule]) -> Vec<String> {
        let mut ids: Vec<String> = rules
            .iter()
            .filter(|r| !r.id.starts_with(RULES_FILE))
            .map(|r| r.id.clone())
            .collect();
        ids.sort();
        ids
    }

    #[tokio::test]
    async fn a_chat_is_decided_by_the_global_rules_its_own_and_the_rules_file() -> anyhow::Result<()>
    {
        let (_dir, rules) = service().await?;
        let in_force = rules.in_force(RuleScope::Chat("a")).await?;
        assert_eq!(ids(&in_force), vec!["global", "session-a"]);
        assert_eq!(in_force.len(), 3, "the rules.toml rule is in force too");
        Ok(())
    }

    #[tokio::test]
    async fn without_a_chat_only_global_rules_are_in_force() -> anyhow::Result<()> {
        let (_dir, rules) = service().await?;
        let global = rules.in_force(RuleScope::Global).await?;
        assert_eq!(ids(&global), vec!["global"]);
        assert_eq!(global.len(), 2);
        let all = rules.in_force(RuleScope::All).await?;
        assert_eq!(ids(&all), vec!["global", "session-a", "session-b"]);
        Ok(())
    }
}
