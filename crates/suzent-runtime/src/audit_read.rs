//! Reading the permission audit log (`permission-audit.jsonl`) back for the UI, newest first.
//!
//! The log is one JSON object per line. Reading is tolerant: a line that is not a JSON object
//! (a torn last line after a crash, a line from a newer format) is skipped and counted, never an
//! error; unknown fields are ignored.

use crate::error::RuntimeError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// The most entries one read returns.
pub const MAX_AUDIT_LIMIT: u32 = 5000;

/// Which entries to read.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditFilter {
    /// Only entries of this chat.
    #[serde(default)]
    pub chat_id: Option<String>,
    /// Only entries of this tool (runtime name).
    #[serde(default)]
    pub tool: Option<String>,
    /// Only entries with this decision (`allow`, `ask`, `deny`) or user action (`allow_once`,
    /// `allow_session`, `allow_global`, `reject`).
    #[serde(default)]
    pub decision: Option<String>,
    /// At most this many entries (1..=5000).
    pub limit: u32,
}

/// One audit entry: a decision of the engine (`kind` = `evaluation`) or a user's answer to an
/// approval (`kind` = `resolution`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// RFC 3339 time of the entry.
    #[serde(default)]
    pub timestamp: String,
    /// `evaluation` or `resolution`.
    #[serde(default)]
    pub kind: String,
    /// The chat.
    #[serde(default)]
    pub chat_id: Option<String>,
    /// The run.
    #[serde(default)]
    pub run_id: Option<String>,
    /// The tool call.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    /// Tool runtime name.
    #[serde(default)]
    pub tool: Option<String>,
    /// The engine's decision (`allow`, `ask`, `deny`), for evaluations.
    #[serde(default)]
    pub decision: Option<String>,
    /// The user's action (`allow_once`, ...), for resolutions.
    #[serde(default)]
    pub user_action: Option<String>,
    /// The permission mode of the chat, for evaluations.
    #[serde(default)]
    pub mode: Option<String>,
    /// What decided (`rule`, `mode`, `shell_policy`, ...).
    #[serde(default)]
    pub source: Option<String>,
    /// The reason shown to the user.
    #[serde(default)]
    pub reason: Option<String>,
    /// The stable reason code.
    #[serde(default)]
    pub reason_code: Option<String>,
    /// `low`, `medium` or `high`.
    #[serde(default)]
    pub risk: Option<String>,
    /// The call's arguments, redacted and bounded when they were logged.
    #[serde(default)]
    pub args: Option<Value>,
    /// The user's feedback, redacted.
    #[serde(default)]
    pub feedback: Option<String>,
    /// The rule an answer added.
    #[serde(default)]
    pub rule_id: Option<String>,
    /// Ids of the rules that matched, for evaluations.
    #[serde(default)]
    pub matched_rules: Vec<String>,
    /// Who started the run when it was not the local user: `peer:<device>` for a turn that a
    /// paired device's message started.
    #[serde(default)]
    pub origin: Option<String>,
}

/// The result of [`Runtime::read_audit_log`].
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRead {
    /// Matching entries, newest first.
    pub entries: Vec<AuditEntry>,
    /// Lines that could not be read as an entry (not JSON, not an object, wrong field types).
    pub skipped: usize,
}

/// Reads the audit log at `path` newest first (the current file, then the rotated ones),
/// keeping the entries that match `filter`.
///
/// Errors: [`RuntimeError::InvalidInput`] for a limit outside 1..=5000,
/// [`RuntimeError::Io`] when the file exists but cannot be read. A missing file is no entries.
pub(crate) async fn read_audit_log(
    path: &Path,
    filter: AuditFilter,
) -> Result<AuditRead, RuntimeError> {
    if filter.limit == 0 || filter.limit > MAX_AUDIT_LIMIT {
        return Err(RuntimeError::InvalidInput {
            field: "limit".into(),
            message: format!("{} is outside 1..={MAX_AUDIT_LIMIT}", filter.limit),
        });
    }
    let path = path.to_path_buf();
    let mut read = AuditRead {
        entries: Vec::new(),
        skipped: 0,
    };
    // The current file, then the rotated ones (`.1` is the newest), until the limit.
    let mut n = 0;
    loop {
        let file = if n == 0 {
            path.clone()
        } else {
            suzent_permissions::audit::rotated_path(&path, n)
        };
        let bytes = match tokio::fs::read(&file).await {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if n == 0 {
                    n += 1;
                    continue;
                }
                break;
            }
            Err(e) => {
                return Err(RuntimeError::Io {
                    path: file.display().to_string(),
                    message: e.to_string(),
                });
            }
        };
        let remaining = filter.limit - u32::try_from(read.entries.len()).unwrap_or(filter.limit);
        let page = parse_newest_first(
            &bytes,
            &AuditFilter {
                limit: remaining,
                ..filter.clone()
            },
        );
        read.entries.extend(page.entries);
        read.skipped += page.skipped;
        if read.entries.len() >= filter.limit as usize {
            break;
        }
        n += 1;
    }
    Ok(read)
}

fn parse_newest_first(bytes: &[u8], filter: &AuditFilter) -> AuditRead {
    let limit = usize::try_from(filter.limit).unwrap_or(usize::MAX);
    let mut entries = Vec::new();
    let mut skipped = 0;
    for line in bytes.split(|b| *b == b'\n').rev() {
        if entries.len() >= limit {
            break;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let entry = match serde_json::from_slice::<Value>(line) {
            Ok(v @ Value::Object(_)) => serde_json::from_value::<AuditEntry>(normalize(v)).ok(),
            _ => None,
        };
        let Some(entry) = entry else {
            skipped += 1;
            continue;
        };
        if matches(&entry, filter) {
            entries.push(entry);
        }
    }
    AuditRead { entries, skipped }
}

/// The fields read as strings.
const STRING_FIELDS: &[&str] = &[
    "timestamp",
    "kind",
    "chatId",
    "runId",
    "toolCallId",
    "tool",
    "decision",
    "userAction",
    "mode",
    "source",
    "reason",
    "reasonCode",
    "risk",
    "feedback",
    "ruleId",
];

/// Makes a line of any format so far readable: string fields holding another JSON value become
/// its text, and `matchedRules` holding objects (an older format) becomes their ids, so a format
/// change degrades instead of hiding entries.
fn normalize(mut v: Value) -> Value {
    if let Value::Object(map) = &mut v {
        for key in STRING_FIELDS {
            if let Some(value) = map.get_mut(*key) {
                match value {
                    Value::String(_) | Value::Null => {}
                    other => *other = Value::String(other.to_string()),
                }
            }
        }
        if let Some(rules) = map.get_mut("matchedRules") {
            let ids: Vec<Value> = match rules {
                Value::Array(items) => items
                    .iter()
                    .filter_map(|r| match r {
                        Value::String(id) => Some(Value::String(id.clone())),
                        Value::Object(o) => o.get("id").cloned(),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            *rules = Value::Array(ids);
        }
    }
    v
}

fn matches(entry: &AuditEntry, filter: &AuditFilter) -> bool {
    let same = |want: &Option<String>, have: &Option<String>| match want.as_deref() {
        None | Some("") => true,
        Some(w) => have.as_deref() == Some(w),
    };
    same(&filter.chat_id, &entry.chat_id)
        && same(&filter.tool, &entry.tool)
        && (same(&filter.decision, &entry.decision) || same(&filter.decision, &entry.user_action))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn filter(limit: u32) -> AuditFilter {
        AuditFilter {
            limit,
            ..Default::default()
        }
    }

    #[test]
    fn torn_and_foreign_lines_are_skipped_and_counted() {
        let text = b"{\"timestamp\":\"t1\",\"kind\":\"evaluation\",\"tool\":\"write_file\",\"decision\":\"ask\"}\nnot json\n[1,2]\n{\"timestamp\":\"t2\",\"kind\":\"evaluation\",\"tool\":\"read_file\",\"decision\":\"allow\",\"risk\":\"low\",\"matchedRules\":[]}\n{\"timestamp\":\"t3\",\"ki";
        let read = parse_newest_first(text, &filter(10));
        assert_eq!(read.skipped, 3);
        let times: Vec<_> = read.entries.iter().map(|e| e.timestamp.as_str()).collect();
        assert_eq!(times, ["t2", "t1"]);
    }

    #[test]
    fn decision_filter_matches_user_actions_too() {
        let text = b"{\"timestamp\":\"t1\",\"kind\":\"evaluation\",\"decision\":\"ask\"}\n{\"timestamp\":\"t2\",\"kind\":\"resolution\",\"userAction\":\"reject\"}\n";
        let mut f = filter(10);
        f.decision = Some("reject".into());
        let read = parse_newest_first(text, &f);
        assert_eq!(read.entries.len(), 1);
        assert_eq!(read.entries[0].timestamp, "t2");
    }
}
