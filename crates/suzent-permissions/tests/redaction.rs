//! shared/cases/redaction.md: secrets are masked in the audit log, logs and events that leave the
//! process; harmless look-alikes are kept; bounds are visible.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use suzent_permissions::{redact_text, redact_value};

#[test]
fn every_redaction_text_case_masks_secrets_and_keeps_the_rest() {
    let rows: &[(&str, &str)] = &[
        (
            "Authorization: Bearer sk-test-ABC123:SUFFIX456",
            "Authorization: Bearer [redacted]",
        ),
        (
            "curl -H 'Authorization: Basic dXNlcjpwYXNz' x",
            "curl -H 'Authorization: Basic [redacted]' x",
        ),
        ("key is sk-ws-H.EEP.pFau... ok", "key is [redacted] ok"),
        (
            "OPENAI_API_KEY=sk-proj-abcdefghijklmnop",
            "OPENAI_API_KEY=[redacted]",
        ),
        ("x sk-ant-api03-abcdefghijklmnopqrstuv y", "x [redacted] y"),
        ("AIzaSyA1234567890abcdefghijklmnopqrstu", "[redacted]"),
        ("aws AKIAIOSFODNN7EXAMPLE", "aws [redacted]"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[redacted]"),
        (
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "[redacted]",
        ),
        ("slack xoxb-1234567890-abcdefghij", "slack [redacted]"),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
            "jwt [redacted] end",
        ),
        (
            "git clone https://alice:s3cr3t@example.com/r.git",
            "git clone https://alice:[redacted]@example.com/r.git",
        ),
        (
            "GET /api?token=abc123&page=2",
            "GET /api?token=[redacted]&page=2",
        ),
        (
            "https://x.io/v1?a=1&key=AbC",
            "https://x.io/v1?a=1&key=[redacted]",
        ),
        ("token=inline-secret npm test", "token=[redacted] npm test"),
        (
            "TO_KEN=inline-secret npm test",
            "TO_KEN=[redacted] npm test",
        ),
        ("--pass-word hunter2 x", "--pass-word [redacted] x"),
        (
            "//registry.npmjs.org/:_authToken=npm_abcdef",
            "//registry.npmjs.org/:_authToken=[redacted]",
        ),
        (
            "export GITHUB_TOKEN=abc123",
            "export GITHUB_TOKEN=[redacted]",
        ),
        (
            "mysql --password hunter2 db",
            "mysql --password [redacted] db",
        ),
        ("{\"api_key\": \"abc\"}", "{\"api_key\": \"[redacted]\"}"),
        ("authorType=x", "authorType=x"),
        ("tokens=1500", "tokens=1500"),
        ("max_tokens: 2048", "max_tokens: 2048"),
        (
            "plain text with no secrets: 42",
            "plain text with no secrets: 42",
        ),
    ];
    let mut failures = Vec::new();
    for (input, expected) in rows {
        let got = redact_text(input);
        if got != *expected {
            failures.push(format!("{input:?}: expected {expected:?}, got {got:?}"));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}

#[test]
fn a_pem_private_key_block_is_masked_entirely() {
    let pem = "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----\nafter";
    let got = redact_text(pem);
    assert!(!got.contains("MIIEow") && !got.contains("IBAAKC"), "{got}");
    assert!(
        got.starts_with("before\n") && got.ends_with("\nafter"),
        "{got}"
    );
}

#[test]
fn sensitive_keys_are_masked_at_any_depth() {
    let v = json!({
        "api_key": "a", "apiKey": 7, "x-api-key": "b", "Authorization": "Bearer z", "password": "p",
        "secret": "s", "token": "t", "access_token": "at", "refresh_token": "rt", "client_secret": "cs",
        "private_key": "pk", "cookie": "c",
        "nested": [{"deeper": {"apiKey": {"even": "an object"}}}],
        "tokens": 1500, "max_tokens": 2048, "authorType": "x"
    });
    let r = redact_value(&v);
    for key in [
        "api_key",
        "apiKey",
        "x-api-key",
        "Authorization",
        "password",
        "secret",
        "token",
        "access_token",
        "refresh_token",
        "client_secret",
        "private_key",
        "cookie",
    ] {
        assert_eq!(r[key], json!("[redacted]"), "{key}");
    }
    assert_eq!(r["nested"][0]["deeper"]["apiKey"], json!("[redacted]"));
    assert_eq!(
        (&r["tokens"], &r["max_tokens"], &r["authorType"]),
        (&json!(1500), &json!(2048), &json!("x"))
    );
}

#[test]
fn inline_secrets_inside_values_are_masked() {
    let v =
        json!({"args": {"content": "curl -H 'Authorization: Bearer sk-test-ABC123:SUFFIX456' x"}});
    let r = redact_value(&v).to_string();
    assert!(!r.contains("ABC123") && !r.contains("SUFFIX456"), "{r}");
}

#[test]
fn nesting_beyond_eight_levels_is_cut_visibly() {
    let mut v = json!("leaf");
    for _ in 0..12 {
        v = json!({"a": v});
    }
    let r = redact_value(&v);
    let mut cur = &r;
    let mut depth = 0;
    while let Some(next) = cur.get("a") {
        cur = next;
        depth += 1;
    }
    assert_eq!(depth, 8);
    assert_eq!(cur, &json!("[truncated]"));
}

#[test]
fn arrays_and_objects_keep_fifty_items_and_say_so() {
    let arr: Vec<Value> = (0..60).map(|i| json!(i)).collect();
    let r = redact_value(&Value::Array(arr));
    let items = r.as_array().unwrap();
    assert_eq!(items.len(), 51);
    assert_eq!(items[50], json!("[truncated] 10 more items"));

    let obj: serde_json::Map<String, Value> =
        (0..60).map(|i| (format!("k{i:02}"), json!(i))).collect();
    let r = redact_value(&Value::Object(obj));
    let map = r.as_object().unwrap();
    assert_eq!(map.len(), 51);
    assert_eq!(map["[truncated]"], json!("10 more keys"));
}

#[test]
fn long_strings_keep_two_thousand_chars_and_end_with_an_ellipsis() {
    let r = redact_value(&json!("é".repeat(3000)));
    let s = r.as_str().unwrap();
    assert!(s.ends_with("…[truncated]"));
    assert_eq!(s.chars().filter(|c| *c == 'é').count(), 2000);
    assert_eq!(redact_value(&json!("short")), json!("short"));
}
