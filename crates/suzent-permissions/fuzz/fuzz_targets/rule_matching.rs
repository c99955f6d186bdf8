//! Rule matching and evaluation never panic: the input is split into a rule pattern, a glob and
//! a command, evaluated against a real temporary workspace; the glob doubles as a destination
//! pattern and the command as the recipients, URLs, owner and repository of a messaging call.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;
use suzent_core::{Behavior, PermissionMode, Rule, RuleDestination, RuleMatcher};
use suzent_permissions::{
    PathPolicy, PermissionContext, PermissionEngine, PermissionRequest, ToolAccess,
    destination_matches, extract_destinations, prefix_matches,
};

struct Ws {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    policy: PathPolicy,
}

fn ws() -> &'static Ws {
    static WS: OnceLock<Ws> = OnceLock::new();
    WS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let ws = std::fs::canonicalize(dir.path()).unwrap_or_else(|e| panic!("canonicalize: {e}"));
        let policy = PathPolicy::new(&ws, &[]).unwrap_or_else(|e| panic!("policy: {e}"));
        Ws {
            _dir: dir,
            ws,
            policy,
        }
    })
}

fn rule(id: &str, behavior: Behavior, matcher: RuleMatcher) -> Rule {
    Rule {
        id: id.into(),
        tool: "run_command".into(),
        behavior,
        matcher,
        destination: RuleDestination::Global,
        chat_id: None,
        created_at: chrono::Utc::now(),
        description: None,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.splitn(3, '\u{1}');
    let pattern: Vec<String> = parts
        .next()
        .unwrap_or("")
        .split(' ')
        .map(str::to_string)
        .collect();
    let glob = parts.next().unwrap_or("").to_string();
    let command = parts.next().unwrap_or("").to_string();
    let words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    let _ = prefix_matches(&pattern, &words);
    let w = ws();
    let _ = destination_matches(&glob, &command);
    let rules = vec![
        rule(
            "deny-destination",
            Behavior::Deny,
            RuleMatcher::Destination {
                pattern: glob.clone(),
            },
        ),
        rule(
            "allow-destination",
            Behavior::Allow,
            RuleMatcher::Destination {
                pattern: pattern.join(" "),
            },
        ),
        rule("deny", Behavior::Deny, RuleMatcher::Path { glob }),
        rule(
            "ask",
            Behavior::Ask,
            RuleMatcher::Prefix {
                words: pattern.clone(),
            },
        ),
        rule(
            "allow",
            Behavior::Allow,
            RuleMatcher::Prefix { words: pattern },
        ),
    ];
    let request = PermissionRequest {
        tool_name: "run_command".into(),
        args: serde_json::json!({ "content": command }),
        access: ToolAccess::Command {
            command: command.clone(),
            cwd: w.ws.clone(),
        },
        requires_approval: true,
    };
    // Recipient fields, a duplicate spelling of `owner`, a field found by its name's suffix
    // and one read only because its value may be a URL or an address.
    let message_args = serde_json::json!({
        "to": command,
        "url": command,
        "owner": "o",
        "Owner": command,
        "repo": command,
        "callbackUrl": command,
        "note": command,
    });
    let _ = extract_destinations(&message_args);
    let message = PermissionRequest {
        tool_name: "run_command".into(),
        args: message_args,
        access: ToolAccess::Other,
        requires_approval: true,
    };
    for (request, mode) in [&request, &message].into_iter().flat_map(|r| {
        [
            PermissionMode::Default,
            PermissionMode::Auto,
            PermissionMode::FullAccess,
        ]
        .map(move |m| (r, m))
    }) {
        let ctx = PermissionContext {
            mode,
            paths: &w.policy,
            rules: &rules,
            chat_id: "fuzz",
        };
        let eval = PermissionEngine::new().evaluate(request, &ctx);
        // A deny rule that matched always wins.
        if eval.matched.iter().any(|r| r.behavior == Behavior::Deny) {
            assert_eq!(eval.decision.behavior, Behavior::Deny);
        }
    }
});
