//! The rule service: the rules in force for a chat, assembled in this one place (rules stored
//! in the database, global and of the chat's session, plus the hand-written global rules of
//! `rules.toml`, so edits apply to the next tool call), and rule changes.
//!
//! `rules.toml` is parsed once per version of the file: every call looks at the file's
//! metadata (one `stat`) and parses it again only when its size, modification time or (on
//! Unix) inode or change time differ from the parsed version's, or when the parsed version was
//! read within [`RACY_MARGIN`] of its last change.

use crate::error::RuntimeError;
use crate::toolset::Toolset;
use chrono::Utc;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};
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
    /// The last parsed version of `rules.toml` and the metadata it was read with.
    parsed: Mutex<Option<(FileVersion, Arc<RuleFile>)>>,
}

/// A file changed less than this long before it was read may change again without its
/// timestamps changing (they move in clock ticks; 2 s on FAT, 1 s on HFS+ and ext3): such a
/// parse is not kept, the next call reads the file again (git's "racy" files).
const RACY_MARGIN: Duration = Duration::from_secs(2);

/// What tells two versions of a file apart without reading it: its size and modification time,
/// and on Unix its device and inode (an editor's save by rename) and change time (any write).
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileVersion {
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64),
    /// The later of the modification and (on Unix) change times.
    changed: Option<SystemTime>,
}

impl FileVersion {
    fn of(meta: &std::fs::Metadata) -> FileVersion {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        let modified = meta.modified().ok();
        #[cfg(unix)]
        let status_changed = u64::try_from(meta.ctime()).ok().map(|secs| {
            SystemTime::UNIX_EPOCH
                + Duration::from_secs(secs)
                + Duration::from_nanos(u64::try_from(meta.ctime_nsec()).unwrap_or(0))
        });
        #[cfg(not(unix))]
        let status_changed: Option<SystemTime> = None;
        FileVersion {
            len: meta.len(),
            modified,
            #[cfg(unix)]
            inode: (meta.dev(), meta.ino()),
            changed: modified.max(status_changed),
        }
    }

    /// Whether this version was last changed at least [`RACY_MARGIN`] before `read_at`.
    fn settled_at(&self, read_at: SystemTime) -> bool {
        self.changed
            .and_then(|c| read_at.duration_since(c).ok())
            .is_some_and(|age| age >= RACY_MARGIN)
    }
}

impl RuleService {
    /// The service; `config_dir` holds `rules.toml`.
    pub(crate) fn new(store: Store, config_dir: &Path) -> RuleService {
        RuleService {
            store,
            file: config_dir.join(RULES_FILE),
            parsed: Mutex::new(None),
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

    /// Global rules from `rules.toml` and the entries that were ignored, as the file is now. A
    /// missing file has no rules; an unreadable one is one problem.
    pub(crate) fn rule_file(&self) -> RuleFile {
        self.current_rule_file().as_ref().clone()
    }

    /// The parsed `rules.toml` of the file's current version (parsed again only when the file
    /// changed since the last call).
    fn current_rule_file(&self) -> Arc<RuleFile> {
        let meta = match std::fs::metadata(&self.file) {
            Ok(meta) => meta,
            Err(e) => {
                *self.parsed.lock().unwrap_or_else(PoisonError::into_inner) = None;
                return Arc::new(rule_file_error(&self.file, e));
            }
        };
        let version = FileVersion::of(&meta);
        let mut parsed = self.parsed.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((seen, file)) = parsed.as_ref()
            && *seen == version
        {
            return Arc::clone(file);
        }
        let read_at = SystemTime::now();
        let file = Arc::new(read_rule_file(&self.file));
        // Kept only when the file had settled before it was read and did not change while it
        // was read (else: read again next time).
        if version.settled_at(read_at)
            && std::fs::metadata(&self.file).is_ok_and(|m| FileVersion::of(&m) == version)
        {
            *parsed = Some((version, Arc::clone(&file)));
        } else {
            *parsed = None;
        }
        file
    }

    /// The rules in force for `scope`: the stored ones, then those of `rules.toml`.
    pub(crate) async fn in_force(&self, scope: RuleScope<'_>) -> Result<Vec<Rule>, RuntimeError> {
        let from_file = self.current_rule_file().rules.clone();
        Ok(self.assemble(scope, from_file).await?)
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
        Err(e) => rule_file_error(path, e),
    }
}

/// A rules file that could not be read: none when it does not exist, else one problem.
fn rule_file_error(path: &Path, e: std::io::Error) -> RuleFile {
    if e.kind() == std::io::ErrorKind::NotFound {
        return RuleFile::default();
    }
    RuleFile {
        rules: Vec::new(),
        problems: vec![RuleFileProblem {
            line: 0,
            message: format!("cannot read {}: {e}", path.display()),
        }],
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::sync::Arc;
    use std::time::Duration;
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

    fn deny_prefix(word: &str) -> String {
        format!("[[rule]]\ntool = \"run_command\"\nbehavior = \"deny\"\nprefix = \"{word}\"\n")
    }

    fn file_rule_prefixes(rules: &[Rule]) -> Vec<RuleMatcher> {
        rules
            .iter()
            .filter(|r| r.id.starts_with(RULES_FILE))
            .map(|r| r.matcher.clone())
            .collect()
    }

    #[tokio::test]
    async fn an_edit_of_the_rules_file_applies_to_the_very_next_call() -> anyhow::Result<()> {
        let (dir, rules) = service().await?;
        let file = dir.path().join(RULES_FILE);
        let prefix = |w: &str| RuleMatcher::Prefix {
            words: vec![w.to_string()],
        };
        // A settled file, so its parse is kept.
        std::thread::sleep(RACY_MARGIN + Duration::from_millis(100));
        assert_eq!(
            file_rule_prefixes(&rules.in_force(RuleScope::Global).await?),
            vec![prefix("rm")]
        );
        // Written in place with the same length.
        std::fs::write(&file, deny_prefix("mv"))?;
        assert_eq!(
            file_rule_prefixes(&rules.in_force(RuleScope::Global).await?),
            vec![prefix("mv")]
        );
        // And again within the same clock tick.
        std::fs::write(&file, deny_prefix("rm"))?;
        assert_eq!(
            file_rule_prefixes(&rules.in_force(RuleScope::Global).await?),
            vec![prefix("rm")]
        );
        std::fs::write(&file, deny_prefix("mv"))?;
        assert_eq!(
            file_rule_prefixes(&rules.in_force(RuleScope::Global).await?),
            vec![prefix("mv")]
        );
        // Replaced by a rename, as editors save.
        let next = dir.path().join("rules.toml.new");
        std::fs::write(&next, deny_prefix("cp"))?;
        std::fs::rename(&next, &file)?;
        assert_eq!(
            file_rule_prefixes(&rules.in_force(RuleScope::Global).await?),
            vec![prefix("cp")]
        );
        std::fs::remove_file(&file)?;
        assert_eq!(
            file_rule_prefixes(&rules.in_force(RuleScope::Global).await?),
            Vec::new()
        );
        std::fs::write(&file, "[[rule]]\ntool = \"run_command\"\n")?;
        assert_eq!(
            rules.rule_file().problems.len(),
            1,
            "an invalid rule is reported at once"
        );
        Ok(())
    }

    #[tokio::test]
    async fn an_unchanged_rules_file_is_parsed_once() -> anyhow::Result<()> {
        let (_dir, rules) = service().await?;
        let fresh = rules.current_rule_file();
        assert!(
            !Arc::ptr_eq(&fresh, &rules.current_rule_file()),
            "a file changed just now is read again"
        );
        // Once it has settled, its parse is kept.
        std::thread::sleep(RACY_MARGIN + Duration::from_millis(100));
        let first = rules.current_rule_file();
        let second = rules.current_rule_file();
        assert!(
            Arc::ptr_eq(&first, &second),
            "the second call reuses the parse"
        );
        assert_eq!(file_rule_prefixes(&first.rules).len(), 1);
        Ok(())
    }
}
