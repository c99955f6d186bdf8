//! Permission calls of the runtime API beyond rules add/list/delete: the decision simulator
//! (`explain_permission`), the chat's permission state, and global rules from `rules.toml`.

use super::Runtime;
use crate::error::RuntimeError;
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use suzent_core::{PermissionMode, Rule};
use suzent_permissions::{
    Explanation, PathPolicy, PermissionContext, PermissionRequest, RuleFile, RuleFileProblem,
    parse_rules_file,
};
use suzent_tools::ToolContext;

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

impl Runtime {
    /// The path of `rules.toml`.
    pub fn rules_file_path(&self) -> PathBuf {
        self.inner.paths.config_dir.join(RULES_FILE)
    }

    /// Global rules from `rules.toml` (read on every call, so edits apply to the next tool call)
    /// and the entries that were ignored. A missing file has no rules; an unreadable one is one
    /// problem.
    pub fn rule_file(&self) -> RuleFile {
        read_rule_file(&self.rules_file_path())
    }

    /// A chat's permission mode.
    pub async fn get_mode(&self, chat_id: &str) -> Result<PermissionMode, RuntimeError> {
        Ok(self.chat(chat_id).await?.mode)
    }

    /// A chat's mode, the rules in force for it, and the problems of `rules.toml`.
    pub async fn permission_state(&self, chat_id: &str) -> Result<PermissionState, RuntimeError> {
        let chat = self.chat(chat_id).await?;
        let file = self.rule_file();
        let mut rules = self.inner.store.list_rules(Some(chat_id)).await?;
        rules.extend(file.rules);
        Ok(PermissionState {
            chat_id: chat.id,
            mode: chat.mode,
            rules,
            rule_file_problems: file.problems,
        })
    }

    /// The decision simulator: what the engine would decide for `tool` with `args`, in `mode`
    /// (default: the chat's, else the configured default), for `chat_id` (its workspace and
    /// session rules; without a chat: the configured workspace or the current directory, and
    /// global rules only). Nothing runs and nothing is stored; the `auto` mode reviewer is not
    /// called (`reviewerWouldDecide` says whether it would be).
    pub async fn explain_permission(
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
        let Some(handle) = self.inner.registry.get(tool) else {
            return Err(invalid("tool", format!("unknown tool '{tool}'")));
        };
        if !args.is_object() {
            return Err(invalid("args", "not a JSON object".to_string()));
        }
        let config = self.config();
        let chat = match chat_id {
            Some(id) => Some(self.chat(id).await?),
            None => None,
        };
        let workspace = match (&chat, &config.workspace) {
            (Some(c), _) => PathBuf::from(&c.workspace),
            (None, Some(w)) => w.clone(),
            (None, None) => std::env::current_dir()
                .map_err(|e| invalid("workspace", format!("no current directory: {e}")))?,
        };
        let chat_key = chat.as_ref().map(|c| c.id.clone()).unwrap_or_default();
        let persistence = self.inner.paths.persistence_dir(&chat_key);
        let shared = self.inner.paths.shared_dir();
        let policy = PathPolicy::new(&workspace, &[persistence.clone(), shared.clone()])
            .map_err(|e| invalid("workspace", format!("'{}': {e}", workspace.display())))?;
        let ctx = ToolContext::new(
            chat_key.clone(),
            "explain",
            policy.workspace().to_path_buf(),
            persistence,
            shared,
            Arc::new(policy.clone()),
        );
        let access = handle
            .access(&args, &ctx)
            .map_err(|e| invalid("args", e.to_string()))?;
        let mut rules = match &chat {
            Some(c) => self.inner.store.list_rules(Some(&c.id)).await?,
            None => self
                .inner
                .store
                .list_rules(None)
                .await?
                .into_iter()
                .filter(|r| r.destination == suzent_core::RuleDestination::Global)
                .collect(),
        };
        rules.extend(self.rule_file().rules);
        let mode = mode
            .or(chat.as_ref().map(|c| c.mode))
            .unwrap_or(config.default_mode);
        let request = PermissionRequest {
            tool_name: handle.spec().runtime_name.to_string(),
            args,
            access,
            requires_approval: handle.spec().requires_approval,
        };
        let pctx = PermissionContext {
            mode,
            paths: &policy,
            rules: &rules,
            chat_id: &chat_key,
        };
        Ok(self.inner.engine.explain(&request, &pctx))
    }
}

/// Reads and parses a rules file; logs nothing (see [`report_rule_file`]).
pub(super) fn read_rule_file(path: &std::path::Path) -> RuleFile {
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

/// Logs the ignored entries of `rules.toml` (called when the runtime opens).
pub(super) fn report_rule_file(config_dir: &std::path::Path) {
    let path = config_dir.join(RULES_FILE);
    for problem in read_rule_file(&path).problems {
        tracing::warn!("{}: ignored rule at {problem}", path.display());
    }
}
