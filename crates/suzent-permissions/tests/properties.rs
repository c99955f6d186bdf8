//! Property tests: a deny rule never turns a decision into allow, every mode keeps deny, and the
//! shell analyser and rule matcher never panic on arbitrary input (the `cargo test` companion of
//! the cargo-fuzz targets in `fuzz/`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::json;
use std::path::PathBuf;
use suzent_core::{Behavior, PermissionMode, Rule, RuleDestination, RuleDraft, RuleMatcher};
use suzent_permissions::{
    PathPolicy, PermissionContext, PermissionEngine, PermissionRequest, ToolAccess,
    analyze_command, prefix_matches, validate_rule,
};

const WORDS: &[&str] = &[
    "git",
    "status",
    "push",
    "log",
    "rm",
    "-rf",
    "x",
    "ls",
    "cat",
    "echo",
    "sudo",
    "env",
    "A=1",
    "LD_PRELOAD=/t.so",
    "timeout",
    "5",
    "xargs",
    "find",
    ".",
    "-exec",
    "{}",
    "\\;",
    "sh",
    "-c",
    "'rm -rf y'",
    "npm",
    "test",
    "cd",
    "..",
    "sub",
    "tee",
    "out.txt",
    "-c",
    "core.pager=id",
    "python3",
    "-m",
    "pytest",
    "cargo",
    "build",
    "/etc/passwd",
    "~/.ssh/id_rsa",
    "$HOME",
    "\"$(id)\"",
    "`id`",
];
const OPS: &[&str] = &[
    " ", " ", " ", " && ", " || ", "; ", " | ", " & ", "\n", " > ", " >> ", " 2>&1 ",
];

fn script() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (prop::sample::select(WORDS), prop::sample::select(OPS)),
        1..12,
    )
    .prop_map(|parts| {
        let mut s = String::new();
        for (w, op) in parts {
            s.push_str(w);
            s.push_str(op);
        }
        s.trim_end()
            .trim_end_matches(['&', '|', ';', '>'])
            .to_string()
    })
}

fn words() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(prop::sample::select(WORDS).prop_map(str::to_string), 1..4)
}

fn matcher() -> impl Strategy<Value = RuleMatcher> {
    prop_oneof![
        Just(RuleMatcher::All),
        words().prop_map(|words| RuleMatcher::Prefix { words }),
        prop::sample::select(vec!["**", "**/.env", "~/**", "/etc/**", "**/out.txt"]).prop_map(
            |g| RuleMatcher::Path {
                glob: g.to_string()
            }
        ),
        destination_pattern().prop_map(|pattern| RuleMatcher::Destination { pattern }),
    ]
}

fn destination_pattern() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "*",
        "*@example.com",
        "bob@example.com",
        "*@evil.com",
        "octo/*",
        "octo/secret",
        "#general",
        "#*",
        "agent-*",
        "*.evil.com",
        "a\\*b@example.com",
    ])
    .prop_map(str::to_string)
}

/// Arguments of a messaging call: recipient-like fields drawn from a pool (clean, listed,
/// wrapped, unreadable), beside other fields.
fn message_args() -> impl Strategy<Value = serde_json::Value> {
    const RECIPIENTS: &[&str] = &[
        "bob@example.com",
        "Eve <eve@evil.com>",
        "bob@example.com, eve@evil.com",
        "bob@example.com eve@evil.com",
        "a*b@example.com",
        "CEO@EXAMPLE.COM",
    ];
    (
        prop::collection::vec(prop::sample::select(RECIPIENTS), 0..3),
        prop::option::of(prop::sample::select(vec!["general", "#general", "C0123"])),
        prop::option::of(prop::sample::select(vec!["secret", "hello", "octo/hello"])),
        prop::option::of(prop::sample::select(vec![
            "https://www.evil.com/x",
            "http://docs.example.com@a.evil.com/",
            "file:///etc/passwd",
        ])),
        any::<bool>(),
    )
        .prop_map(|(to, channel, repo, url, odd)| {
            let mut args = serde_json::Map::new();
            args.insert("text".into(), json!("hello"));
            if !to.is_empty() {
                args.insert("to".into(), json!(to));
            }
            if let Some(c) = channel {
                args.insert("channel".into(), json!(c));
            }
            if let Some(r) = repo {
                args.insert("owner".into(), json!("octo"));
                args.insert("repo".into(), json!(r));
            }
            if let Some(u) = url {
                args.insert("url".into(), json!(u));
            }
            if odd {
                args.insert("cc".into(), json!({"id": "U1"}));
            }
            serde_json::Value::Object(args)
        })
}

fn evaluate_message(
    w: &Ws,
    mode: PermissionMode,
    rules: &[Rule],
    args: &serde_json::Value,
) -> Behavior {
    let request = PermissionRequest {
        tool_name: "mcp__mail__send".into(),
        args: args.clone(),
        access: ToolAccess::Other,
        requires_approval: true,
    };
    let ctx = PermissionContext {
        mode,
        paths: &w.policy,
        rules,
        chat_id: "c",
    };
    PermissionEngine::new()
        .evaluate(&request, &ctx)
        .decision
        .behavior
}

fn rule(i: usize, behavior: Behavior, matcher: RuleMatcher) -> Rule {
    Rule {
        id: format!("r{i}"),
        tool: "run_command".into(),
        behavior,
        matcher,
        destination: RuleDestination::Global,
        chat_id: None,
        created_at: chrono::Utc::now(),
        description: None,
    }
}

fn mode() -> impl Strategy<Value = PermissionMode> {
    prop::sample::select(vec![
        PermissionMode::Default,
        PermissionMode::Auto,
        PermissionMode::FullAccess,
    ])
}

struct Ws {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    policy: PathPolicy,
}

fn ws() -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    let policy = PathPolicy::new(&ws, &[]).unwrap();
    Ws {
        _dir: dir,
        ws,
        policy,
    }
}

fn evaluate(w: &Ws, mode: PermissionMode, rules: &[Rule], command: &str) -> Behavior {
    let request = PermissionRequest {
        tool_name: "run_command".into(),
        args: json!({ "content": command }),
        access: ToolAccess::Command {
            command: command.to_string(),
            cwd: w.ws.clone(),
        },
        requires_approval: true,
    };
    let ctx = PermissionContext {
        mode,
        paths: &w.policy,
        rules,
        chat_id: "c",
    };
    PermissionEngine::new()
        .evaluate(&request, &ctx)
        .decision
        .behavior
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn adding_a_deny_rule_never_turns_a_decision_into_allow(
        command in script(),
        mode in mode(),
        existing in prop::collection::vec((prop::sample::select(vec![Behavior::Allow, Behavior::Ask]), matcher()), 0..4),
        deny in matcher(),
    ) {
        let w = ws();
        let mut rules: Vec<Rule> = existing.into_iter().enumerate().map(|(i, (b, m))| rule(i, b, m)).collect();
        let before = evaluate(&w, mode, &rules, &command);
        rules.push(rule(99, Behavior::Deny, deny));
        let after = evaluate(&w, mode, &rules, &command);
        prop_assert!(after >= before, "{command:?} in {mode}: {before} became {after}");
        if before != Behavior::Allow {
            prop_assert_ne!(after, Behavior::Allow);
        }
    }

    #[test]
    fn every_mode_keeps_a_deny_rule_that_matches_any_segment(
        command in script(),
        allow in prop::collection::vec(matcher(), 0..3),
    ) {
        let w = ws();
        let analysis = analyze_command(&command);
        prop_assume!(analysis.understood);
        let Some(segment) = analysis.segments.iter().find(|s| !s.words.is_empty()) else {
            return Ok(());
        };
        // A deny rule on the program of one segment (its star escaped: a literal word).
        let program = segment.words[0].replace('\\', "\\\\").replace('*', "\\*");
        let mut rules: Vec<Rule> = allow.into_iter().enumerate().map(|(i, m)| rule(i, Behavior::Allow, m)).collect();
        rules.push(rule(99, Behavior::Deny, RuleMatcher::Prefix { words: vec![program] }));
        for mode in [PermissionMode::Default, PermissionMode::Auto, PermissionMode::FullAccess] {
            prop_assert_eq!(evaluate(&w, mode, &rules, &command), Behavior::Deny, "{:?} in {}", command, mode);
        }
    }

    #[test]
    fn adding_a_deny_rule_never_turns_a_message_into_allow(
        args in message_args(),
        mode in mode(),
        existing in prop::collection::vec((prop::sample::select(vec![Behavior::Allow, Behavior::Ask]), matcher()), 0..4),
        deny in matcher(),
    ) {
        let w = ws();
        let mut rules: Vec<Rule> = existing
            .into_iter()
            .enumerate()
            .map(|(i, (b, m))| Rule { tool: "mcp__mail__send".into(), ..rule(i, b, m) })
            .collect();
        let before = evaluate_message(&w, mode, &rules, &args);
        rules.push(Rule { tool: "*".into(), ..rule(99, Behavior::Deny, deny.clone()) });
        let after = evaluate_message(&w, mode, &rules, &args);
        prop_assert!(after >= before, "{args} in {mode}: {before} became {after}");
        if before != Behavior::Allow {
            prop_assert_ne!(after, Behavior::Allow);
        }
        // A deny destination rule that matches any destination denies in every mode.
        if let RuleMatcher::Destination { pattern } = &deny {
            let found = suzent_permissions::extract_destinations(&args).found;
            if found.iter().any(|d| suzent_permissions::destination_matches(pattern, d)) {
                prop_assert_eq!(after, Behavior::Deny, "{} in {}", args, mode);
            }
        }
    }

    #[test]
    fn destination_matching_never_panics_on_arbitrary_patterns(
        pattern in "\\PC{0,30}",
        destination in "\\PC{0,40}",
        to in "\\PC{0,60}",
    ) {
        let _ = suzent_permissions::destination_matches(&pattern, &destination);
        let d = suzent_permissions::extract_destinations(&json!({"to": to, "url": destination}));
        if d.determined() {
            prop_assert!(d.found.iter().all(|x| !x.contains(char::is_whitespace)));
        }
    }

    #[test]
    fn shell_analysis_never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
        let _ = analyze_command(&text);
    }

    #[test]
    fn shell_analysis_never_panics_on_shell_like_text(text in "[a-z$`'\"(){};|&<>\\\\ \n=*~./-]{0,120}") {
        let a = analyze_command(&text);
        // Whatever it found, every segment it reports has been unquoted into words.
        for s in &a.segments {
            prop_assert!(s.words.len() <= s.full_words.len() || s.full_words.is_empty() || s.nested);
        }
    }

    #[test]
    fn rule_matching_never_panics_on_arbitrary_patterns(
        pattern in prop::collection::vec("\\PC{0,12}", 0..5),
        words in prop::collection::vec("\\PC{0,12}", 0..6),
        glob in "\\PC{0,40}",
        command in "\\PC{0,80}",
    ) {
        let _ = prefix_matches(&pattern, &words);
        let draft = RuleDraft {
            tool: "run_command".into(),
            behavior: Behavior::Deny,
            matcher: RuleMatcher::Path { glob: glob.clone() },
            destination: RuleDestination::Global,
            description: None,
        };
        let _ = validate_rule(&draft);
        let w = ws();
        let rules = vec![
            rule(0, Behavior::Deny, RuleMatcher::Path { glob }),
            rule(1, Behavior::Ask, RuleMatcher::Prefix { words: pattern }),
        ];
        let _ = evaluate(&w, PermissionMode::Auto, &rules, &command);
    }
}
