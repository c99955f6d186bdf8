//! Global rules written by hand in `rules.toml` (in the config directory).
//!
//! ```toml
//! [[rule]]
//! tool = "run_command"
//! behavior = "deny"
//! prefix = "rm -rf"              # words; or prefix = ["git", "push"]
//! description = "never rm -rf"
//!
//! [[rule]]
//! tool = "read_file"
//! behavior = "deny"
//! path = "~/.ssh/**"             # or: exact = { ... }, or: all = true
//!
//! [[rule]]
//! tool = "*"
//! behavior = "deny"
//! recipient = "*@competitor.example"   # a destination: address, #channel, owner/repo, host
//! ```
//!
//! Each rule needs `tool`, `behavior` and exactly one matcher (`all`, `exact`, `prefix`, `path`,
//! `recipient`). `recipient` is the `destination` matcher (the key is not called `destination`
//! because that word names a rule's global/session scope elsewhere).
//! A rule that is invalid (unknown key, missing or extra matcher, bad glob) is reported with its
//! line and ignored: it never turns into a wider rule. A file that is not TOML at all yields no
//! rules and one problem.

use crate::rules::validate_rule;
use serde::{Deserialize, Serialize};
use suzent_core::{Behavior, Rule, RuleDestination, RuleDraft, RuleMatcher};

/// One problem in a rules file.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleFileProblem {
    /// 1-based line where the rule (or the syntax error) starts.
    pub line: usize,
    /// What is wrong, naming the field.
    pub message: String,
}

impl std::fmt::Display for RuleFileProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The rules of a file and the rules that were ignored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleFile {
    /// Valid rules, global, with ids `rules.toml:LINE`.
    pub rules: Vec<Rule>,
    /// Invalid rules (ignored) and syntax errors.
    pub problems: Vec<RuleFileProblem>,
}

#[derive(Deserialize)]
struct FileShape {
    #[serde(default)]
    rule: Vec<toml::Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    tool: String,
    behavior: Behavior,
    #[serde(default)]
    all: Option<bool>,
    #[serde(default)]
    exact: Option<toml::Value>,
    #[serde(default)]
    prefix: Option<PrefixWords>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    recipient: Option<String>,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PrefixWords {
    Text(String),
    Words(Vec<String>),
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parses a rules file. `name` prefixes rule ids (`rules.toml:12`).
pub fn parse_rules_file(text: &str, name: &str) -> RuleFile {
    let mut out = RuleFile::default();
    let shape: FileShape = match toml::from_str(text) {
        Ok(s) => s,
        Err(e) => {
            let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
            out.problems.push(RuleFileProblem {
                line,
                message: e.message().trim().to_string(),
            });
            return out;
        }
    };
    for spanned in shape.rule {
        let line = line_of(text, spanned.span().start);
        match entry_to_draft(spanned.into_inner()) {
            Ok(draft) => out.rules.push(Rule {
                id: format!("{name}:{line}"),
                tool: draft.tool,
                behavior: draft.behavior,
                matcher: draft.matcher,
                destination: RuleDestination::Global,
                chat_id: None,
                created_at: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
                description: draft.description,
            }),
            Err(message) => out.problems.push(RuleFileProblem { line, message }),
        }
    }
    out
}

fn entry_to_draft(value: toml::Value) -> Result<RuleDraft, String> {
    let entry: Entry = value
        .try_into()
        .map_err(|e: toml::de::Error| e.message().trim().to_string())?;
    let mut matchers = Vec::new();
    match entry.all {
        Some(true) => matchers.push(RuleMatcher::All),
        Some(false) => return Err("all: must be true when present".to_string()),
        None => {}
    }
    if let Some(exact) = entry.exact {
        let input = serde_json::to_value(&exact).map_err(|e| format!("exact: {e}"))?;
        matchers.push(RuleMatcher::Exact { input });
    }
    if let Some(prefix) = entry.prefix {
        let words = match prefix {
            PrefixWords::Text(t) => {
                crate::rules::split_rule_words(&t).map_err(|e| format!("prefix: {e}"))?
            }
            PrefixWords::Words(w) => w,
        };
        matchers.push(RuleMatcher::Prefix { words });
    }
    if let Some(glob) = entry.path {
        matchers.push(RuleMatcher::Path { glob });
    }
    if let Some(pattern) = entry.recipient {
        matchers.push(RuleMatcher::Destination { pattern });
    }
    let matcher = match matchers.len() {
        1 => matchers.remove(0),
        0 => {
            return Err("matcher: none of all, exact, prefix, path, recipient is set".to_string());
        }
        _ => {
            return Err(
                "matcher: more than one of all, exact, prefix, path, recipient is set".to_string(),
            );
        }
    };
    let draft = RuleDraft {
        tool: entry.tool,
        behavior: entry.behavior,
        matcher,
        destination: RuleDestination::Global,
        description: entry.description,
    };
    validate_rule(&draft).map_err(|e| match e.strip_prefix("matcher.pattern:") {
        Some(rest) => format!("recipient:{rest}"),
        None => e,
    })?;
    Ok(draft)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn valid_rules_load_with_their_line_as_id() {
        let text = "# my rules\n[[rule]]\ntool = \"run_command\"\nbehavior = \"deny\"\nprefix = \"rm -rf\"\n\n[[rule]]\ntool = \"read_file\"\nbehavior = \"ask\"\npath = \"~/.ssh/**\"\n";
        let f = parse_rules_file(text, "rules.toml");
        assert_eq!(f.problems, vec![]);
        assert_eq!(f.rules.len(), 2);
        assert_eq!(f.rules[0].id, "rules.toml:2");
        assert_eq!(
            f.rules[0].matcher,
            RuleMatcher::Prefix {
                words: vec!["rm".into(), "-rf".into()]
            }
        );
        assert_eq!(f.rules[1].id, "rules.toml:7");
        assert_eq!(f.rules[1].behavior, Behavior::Ask);
    }
}
