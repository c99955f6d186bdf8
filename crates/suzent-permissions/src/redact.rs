//! Redaction of secrets in values and text that leave the process (audit log, logs, events).
//!
//! Values are bounded (depth, items, string length) with visible caps, values under sensitive
//! keys are masked at any depth, and common inline credential forms are masked in strings.

use regex::{Captures, Regex};
use serde_json::{Map, Value};
use std::sync::LazyLock;

/// The mask put in place of a secret.
const REDACTED: &str = "[redacted]";
/// The marker of a cap.
const TRUNCATED: &str = "[truncated]";
/// Nesting kept by [`redact_value`].
const MAX_DEPTH: usize = 8;
/// Items kept per array or object.
const MAX_ITEMS: usize = 50;
/// Characters kept per string.
const MAX_STRING_CHARS: usize = 2000;

/// A copy of `value`, bounded and with secrets masked: nesting beyond 8 levels becomes
/// `"[truncated]"`, arrays and objects keep 50 items plus a `[truncated]` marker, strings keep
/// 2000 characters and end in `…[truncated]`, values under sensitive keys (`api_key`,
/// `authorization`, `password`, `token`, ...) become `"[redacted]"`, and strings go through
/// [`redact_text`].
pub fn redact_value(value: &Value) -> Value {
    redact_at(value, 0)
}

fn redact_at(value: &Value, depth: usize) -> Value {
    match value {
        Value::Array(_) | Value::Object(_) if depth >= MAX_DEPTH => {
            Value::String(TRUNCATED.to_string())
        }
        Value::Array(items) => {
            let mut out: Vec<Value> = items
                .iter()
                .take(MAX_ITEMS)
                .map(|v| redact_at(v, depth + 1))
                .collect();
            if items.len() > MAX_ITEMS {
                out.push(Value::String(format!(
                    "{TRUNCATED} {} more items",
                    items.len() - MAX_ITEMS
                )));
            }
            Value::Array(out)
        }
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, v) in map.iter().take(MAX_ITEMS) {
                let masked = if is_sensitive_key(key) && !v.is_null() {
                    Value::String(REDACTED.to_string())
                } else {
                    redact_at(v, depth + 1)
                };
                out.insert(key.clone(), masked);
            }
            if map.len() > MAX_ITEMS {
                out.insert(
                    TRUNCATED.to_string(),
                    Value::String(format!("{} more keys", map.len() - MAX_ITEMS)),
                );
            }
            Value::Object(out)
        }
        Value::String(s) => Value::String(bound_string(&redact_text(s))),
        other => other.clone(),
    }
}

fn bound_string(s: &str) -> String {
    suzent_core::text::truncate_chars(s, MAX_STRING_CHARS, &format!("…{TRUNCATED}"))
}

/// Whether a key (JSON object key, header, variable or option name) names a secret.
///
/// `api_key`, `apiKey`, `x-api-key`, `Authorization`, `password`, `GITHUB_TOKEN`, `_authToken`,
/// `client_secret`, `cookie` are; `tokens`, `max_tokens`, `authorType`, `key` are not.
pub fn is_sensitive_key(key: &str) -> bool {
    let norm: String = key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const EXACT: &[&str] = &[
        "auth",
        "credentials",
        "credential",
        "cookie",
        "cookies",
        "pass",
        "pwd",
        "sessionid",
    ];
    const SUFFIXES: &[&str] = &[
        "token",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "apikey",
        "accesskey",
        "secretkey",
        "privatekey",
        "signingkey",
        "authorization",
        "cookie",
        "clientsecret",
        "sessionid",
        "sessiontoken",
        "credentials",
    ];
    EXACT.contains(&norm.as_str()) || SUFFIXES.iter().any(|s| norm.ends_with(s))
}

static PEM: LazyLock<Regex> = LazyLock::new(|| {
    regex_or_never(
        r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
    )
});
static AUTH_SCHEME: LazyLock<Regex> =
    LazyLock::new(|| regex_or_never(r"(?i)\b(bearer|basic)(\s+)[^\s\x22'<>]+"));
static PROVIDER_KEYS: LazyLock<Regex> = LazyLock::new(|| {
    regex_or_never(concat!(
        r"\bsk-[A-Za-z0-9_\-.]{8,}",
        r"|\bAIza[0-9A-Za-z_\-]{20,}",
        r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        r"|\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{16,}",
        r"|\bgithub_pat_[A-Za-z0-9_]{16,}",
        r"|\bxox[abposr]-[A-Za-z0-9\-]{8,}",
        r"|\beyJ[A-Za-z0-9_\-]+\.eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*",
    ))
});
static URL_USERINFO: LazyLock<Regex> =
    LazyLock::new(|| regex_or_never(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^/\s:@]+):([^/\s@]+)@"));
static QUERY_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    regex_or_never(
        r"(?i)([?&](?:token|access_token|refresh_token|id_token|api_key|apikey|key|secret|client_secret|password|auth|sig|signature)=)[^&\s#\x22'<>]+",
    )
});
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    regex_or_never(r#"([A-Za-z_][A-Za-z0-9_.\-]*)(["']?[ \t]*[=:][ \t]*["']?)([^\s"',;&}\]]+)"#)
});
static FLAG: LazyLock<Regex> =
    LazyLock::new(|| regex_or_never(r#"(--?[A-Za-z][A-Za-z0-9_\-]*)([ \t]+)([^\s"'\-][^\s"']*)"#));

/// Matches wherever any of the patterns of [`redact_text`] could (a superset: provider key
/// prefixes, auth schemes, URL credentials, and the fragments every sensitive key name
/// contains). Text without a match is returned unchanged without running them.
static MAY_HOLD_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    regex_or_never(concat!(
        r"(?i)private key|bearer|basic|sk-|aiza|akia|asia|gh[pousr]_|github_pat_|xox|eyj",
        r"|://[^/\s]*@|token|secret|pass|pwd|key|auth|cookie|credential|session|sig",
    ))
});

/// A regex that never matches, for the (impossible) case a built-in pattern fails to compile.
fn regex_or_never(pattern: &str) -> Regex {
    match Regex::new(pattern) {
        Ok(r) => r,
        Err(_) => {
            Regex::new(r"[^\s\S]").unwrap_or_else(|_| unreachable!("constant regex compiles"))
        }
    }
}

/// `text` with inline credentials masked: `Bearer`/`Basic` credentials, provider keys
/// (`sk-...`, `AIza...`, `AKIA...`, `ghp_...`, `github_pat_...`, `xox?-...`), JWTs, PEM private
/// keys, `user:pass@` in URLs, secret query values and `token=value` style assignments.
pub fn redact_text(text: &str) -> String {
    // Most text holds nothing that any pattern below could mask: one pass decides (a second
    // without the `_`, `.`, `-` that key names may hide their words behind: `TO_KEN`).
    if !MAY_HOLD_SECRET.is_match(text) {
        let joined: String = text
            .chars()
            .filter(|c| !matches!(c, '_' | '.' | '-'))
            .collect();
        if !MAY_HOLD_SECRET.is_match(&joined) {
            return text.to_string();
        }
    }
    let s = PEM.replace_all(
        text,
        "-----BEGIN ${1}PRIVATE KEY----- [redacted] -----END ${1}PRIVATE KEY-----",
    );
    let s = AUTH_SCHEME.replace_all(&s, "${1}${2}[redacted]");
    let s = PROVIDER_KEYS.replace_all(&s, REDACTED);
    let s = URL_USERINFO.replace_all(&s, "${1}${2}:[redacted]@");
    let s = QUERY_SECRET.replace_all(&s, "${1}[redacted]");
    let s = ASSIGNMENT.replace_all(&s, |c: &Captures<'_>| mask_if_sensitive(c));
    let s = FLAG.replace_all(&s, |c: &Captures<'_>| mask_if_sensitive(c));
    s.into_owned()
}

fn mask_if_sensitive(c: &Captures<'_>) -> String {
    let key = c.get(1).map_or("", |m| m.as_str());
    let sep = c.get(2).map_or("", |m| m.as_str());
    let value = c.get(3).map_or("", |m| m.as_str());
    let already = value.starts_with("[redacted")
        || value.eq_ignore_ascii_case("bearer")
        || value.eq_ignore_ascii_case("basic");
    if is_sensitive_key(key) && !already {
        format!("{key}{sep}{REDACTED}")
    } else {
        format!("{key}{sep}{value}")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn a_bearer_credential_is_masked_including_its_suffix() {
        assert_eq!(
            redact_text("Authorization: Bearer sk-test-ABC123:SUFFIX456"),
            "Authorization: Bearer [redacted]"
        );
    }

    #[test]
    fn sensitive_keys_are_masked_at_any_depth_but_token_counts_are_not() {
        let v = json!({"a": {"b": [{"apiKey": "x", "max_tokens": 2048, "tokens": 1500, "authorType": "x"}]}});
        assert_eq!(
            redact_value(&v),
            json!({"a": {"b": [{"apiKey": "[redacted]", "max_tokens": 2048, "tokens": 1500, "authorType": "x"}]}})
        );
    }

    #[test]
    fn long_strings_are_cut_visibly() {
        let v = redact_value(&json!("a".repeat(2500)));
        let s = v.as_str().unwrap();
        assert!(s.ends_with("…[truncated]"));
        assert_eq!(s.chars().count(), 2000 + "…[truncated]".chars().count());
    }
}
