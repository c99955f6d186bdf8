//! Case 5 of shared/cases/permissions.md and rule semantics: deny beats ask beats allow in every
//! mode and scope, the most specific matcher is cited, rules from files are strict, and the rules
//! an approval offers are narrow.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[allow(unused_imports)]
use Call::{Cmd, Other, Read, Write};
use common::*;
use suzent_permissions::{parse_rules_file, specificity};

fn case5_deny_wins() -> Vec<Case> {
    vec![
        // 5. Deny always wins.
        case!("deny secrets beats allow all reads", D, &["allow read_file(**)", "deny read_file(**/.secrets*)"], Read("~/.secrets"), home => DENY, "rule_deny"),
        case!("allow all reads covers other files", D, &["allow read_file(**)", "deny read_file(**/.secrets*)"], Read("src/main.rs") => ALLOW, "rule_allow"),
        case!("deny ls beats ask all", D, &["deny run_command(ls *)", "ask run_command(*)"], Cmd("ls -d /x/*/") => DENY, "rule_deny"),
        case!("global deny beats session allow", D, &["session:allow read_file({base}/etc/**)", "deny read_file({base}/etc/secret/**)"], Read("{base}/etc/secret/key") => DENY, "rule_deny"),
        case!("global deny beats session allow in full access", FULL, &["session:allow read_file({base}/etc/**)", "deny read_file({base}/etc/secret/**)"], Read("{base}/etc/secret/key") => DENY, "rule_deny"),
        case!("deny rule checked first in auto", AUTO, &["deny run_command(ls *)"], Cmd("ls") => DENY, "rule_deny"),
        case!("deny write rule checked first in full access", FULL, &["deny write_file(**/.env)"], Write(".env") => DENY, "rule_deny"),
        case!("ask beats allow", D, &["allow run_command(npm *)", "ask run_command(npm publish)"], Cmd("npm publish") => ASK, "rule_ask"),
        case!("session deny beats global allow", D, &["allow run_command(git *)", "session:deny run_command(git push)"], Cmd("git push origin main") => DENY, "rule_deny"),
        case!("deny on any tool applies to shell", D, &["deny *", "allow run_command(ls)"], Cmd("ls") => DENY, "rule_deny"),
        case!("a literal star rule matches only a star", D, &["allow run_command(npm \\*)"], Cmd("npm test") => ASK, "shell_policy_ask"),
        case!("a prefix rule matches whole tokens only", D, &["allow run_command(cargo test)"], Cmd("cargo testx") => ASK, "shell_policy_ask"),
        case!("an allow rule does not cover a write redirect outside it", D, &["allow run_command(git *)"], Cmd("git log > log.txt") => ASK, "shell_policy_ask"),
        case!("an allow path rule covers the redirect", D, &["allow run_command(git *)", "allow *({ws}/**)"], Cmd("git log > log.txt") => ALLOW, "rule_allow"),
        case!("a tilde glob matches the home directory", D, &["deny read_file(~/.aws/**)"], Read("~/.aws/credentials"), home => DENY, "rule_deny"),
        case!("git -c is never covered by an allow rule", D, &["allow run_command(git *)"], Cmd("git -c core.pager='sh -c id' log") => ASK, "code_execution_option"),
        case!("LD_PRELOAD is never covered by an allow rule", D, &["allow run_command(ls *)"], Cmd("LD_PRELOAD=/tmp/x.so ls") => ASK, "risky_environment"),
        case!("exact input rule allows the exact call", D, &["allow run_command(=cargo build --release)"], Cmd("cargo build --release") => ALLOW, "rule_allow"),
        case!("allow all of one tool does not cover another", D, &["allow write_file(*)"], Cmd("touch x") => ASK, "shell_policy_ask"),
    ]
}

#[test]
fn the_table_of_this_kind_has_at_least_19_rows() {
    let rows = case5_deny_wins().len();
    assert!(rows >= 19, "{rows} rows");
}

#[test]
fn deny_always_wins_in_every_mode_and_scope() {
    run_table(case5_deny_wins());
}

#[test]
fn within_one_behavior_the_most_specific_rule_is_cited() {
    let eval = eval_simple(
        D,
        &[
            "deny run_command(*)",
            "deny run_command(git push --force)",
            "deny run_command(git *)",
        ],
        Cmd("git push --force"),
    );
    assert_eq!(eval.decision.reason_code, "rule_deny");
    assert!(
        eval.decision.reason.contains("git push --force"),
        "{}",
        eval.decision.reason
    );
    let f = fixture();
    let rules: Vec<Rule> = [
        "allow *",
        "allow run_command(git *)",
        "allow run_command(git status)",
    ]
    .iter()
    .enumerate()
    .map(|(i, s)| rule(i, s, &f))
    .collect();
    let best = rules.iter().max_by_key(|r| specificity(r)).unwrap();
    assert_eq!(best.id, "rule-2");
}

#[test]
fn the_explanation_marks_the_decisive_rule_and_says_why_each_matched() {
    let f = fixture();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    let rules: Vec<Rule> = [
        "allow run_command(git *)",
        "deny run_command(rm *)",
        "deny run_command(rm -rf x)",
    ]
    .iter()
    .enumerate()
    .map(|(i, s)| rule(i, s, &f))
    .collect();
    let ctx = PermissionContext {
        mode: D,
        paths: &policy,
        rules: &rules,
        chat_id: CHAT,
    };
    let e = PermissionEngine::new().explain(&request(Cmd("git status && rm -rf x"), &f), &ctx);
    assert_eq!((e.behavior, e.reason_code.as_str()), (DENY, "rule_deny"));
    let decisive: Vec<&str> = e
        .matched_rules
        .iter()
        .filter(|m| m.decisive)
        .map(|m| m.rule.id.as_str())
        .collect();
    assert_eq!(decisive, vec!["rule-2"]);
    assert_eq!(e.matched_rules.len(), 3);
    assert!(
        e.matched_rules[1]
            .why
            .contains("prefix 'rm *' matches segment 2: rm -rf x"),
        "{}",
        e.matched_rules[1].why
    );
    assert_eq!(e.segments.len(), 2);
    assert_eq!(e.segments[1].words, vec!["rm", "-rf", "x"]);
    assert_eq!(e.compound, Some(true));
    let verdicts: Vec<(Behavior, &str)> = e
        .segments
        .iter()
        .map(|s| (s.verdict, s.verdict_reason.as_str()))
        .collect();
    assert_eq!(
        verdicts,
        vec![
            (ALLOW, "allow rule rule-0: prefix 'git *'"),
            (DENY, "deny rule rule-2: prefix 'rm -rf x'"),
        ]
    );
    let json = serde_json::to_value(&e).unwrap();
    for key in [
        "behavior",
        "reasonCode",
        "reason",
        "risk",
        "matchedRules",
        "segments",
    ] {
        assert!(json.get(key).is_some(), "{key} missing in {json}");
    }
}

#[test]
fn invalid_rules_in_a_rules_file_are_reported_with_their_line_and_never_widened() {
    let text = "[[rule]]\ntool = \"run_command\"\nbehavior = \"allow\"\nprefix = \"git status\"\n\n[[rule]]\ntool = \"run_command\"\nbehavior = \"allow\"\nprefx = \"git\"\n\n[[rule]]\ntool = \"run_command\"\nbehavior = \"deny\"\n\n[[rule]]\ntool = \"read_file\"\nbehavior = \"allow\"\npath = \"a/[\"\n\n[[rule]]\ntool = \"run_command\"\nbehavior = \"allow\"\nall = true\nprefix = \"ls\"\n\n[[rule]]\ntool = \"run_command\"\nbehavior = \"sometimes\"\nall = true\n";
    let file = parse_rules_file(text, "rules.toml");
    assert_eq!(file.rules.len(), 1);
    assert_eq!(file.rules[0].id, "rules.toml:1");
    let lines: Vec<usize> = file.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, vec![6, 11, 15, 20, 26]);
    assert!(
        file.problems[0].message.contains("prefx"),
        "{}",
        file.problems[0].message
    );
    assert!(
        file.problems[1].message.starts_with("matcher:"),
        "{}",
        file.problems[1].message
    );
    assert!(
        file.problems[2].message.starts_with("matcher.glob:"),
        "{}",
        file.problems[2].message
    );
    assert!(
        file.problems[3].message.contains("more than one"),
        "{}",
        file.problems[3].message
    );

    let broken = parse_rules_file("[[rule]\ntool=1", "rules.toml");
    assert!(broken.rules.is_empty());
    assert_eq!(broken.problems.len(), 1);
}

#[test]
fn a_saved_rule_never_covers_newlines_substitutions_or_backticks() {
    for cmd in ["git status\nrm -rf x", "git log $(id)", "git log `id`"] {
        let eval = eval_simple(D, &[], Cmd(cmd));
        assert!(
            eval.decision.actions.iter().all(|a| a.rule.is_none()),
            "{cmd}"
        );
    }
    // The remembered prefix keeps the subcommand for tools that have one.
    for (cmd, words) in [
        ("npm run build", vec!["npm", "run", "build", "*"]),
        ("cargo test -p x", vec!["cargo", "test", "*"]),
        ("git log --oneline", vec!["git", "log", "*"]),
    ] {
        let eval = eval_simple(D, &[], Cmd(cmd));
        let rule = eval.decision.actions[1].rule.clone().unwrap();
        assert_eq!(
            rule.matcher,
            RuleMatcher::Prefix {
                words: words.iter().map(|w| w.to_string()).collect()
            },
            "{cmd}"
        );
    }
}

#[test]
fn an_ordinary_ask_offers_once_session_global_and_reject_in_order() {
    let eval = eval_simple(D, &[], Cmd("git status -s"));
    assert_eq!(
        action_ids(&eval),
        vec![
            ApprovalActionId::AllowOnce,
            ApprovalActionId::AllowSession,
            ApprovalActionId::AllowGlobal,
            ApprovalActionId::Reject
        ]
    );
    let session = &eval.decision.actions[1];
    let rule = session.rule.as_ref().unwrap();
    assert_eq!(
        rule.matcher,
        RuleMatcher::Prefix {
            words: vec!["git".into(), "status".into(), "*".into()]
        }
    );
    assert_eq!(rule.behavior, Behavior::Allow);
    assert_eq!(rule.destination, RuleDestination::Session);
    assert_eq!(
        eval.decision.actions[2].rule.as_ref().unwrap().destination,
        RuleDestination::Global
    );
    assert!(session.description.contains("git status"));
    assert!(eval.decision.actions[3].accepts_feedback);
}

#[test]
fn a_compound_or_multiline_command_offers_only_once_and_reject() {
    for cmd in [
        "git status && git log",
        "git status\ngit log",
        "echo $(make)",
        "echo `make`",
    ] {
        let eval = eval_simple(D, &[], Cmd(cmd));
        assert_eq!(
            action_ids(&eval),
            vec![ApprovalActionId::AllowOnce, ApprovalActionId::Reject],
            "{cmd}"
        );
    }
}

#[test]
fn a_write_suggests_a_glob_of_the_parent_directory() {
    let f = fixture();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    let ctx = PermissionContext {
        mode: D,
        paths: &policy,
        rules: &[],
        chat_id: CHAT,
    };
    let eval = PermissionEngine::new().evaluate(&request(Write("src/new.rs"), &f), &ctx);
    let rule = eval.decision.actions[1].rule.clone().unwrap();
    assert_eq!(
        rule.matcher,
        RuleMatcher::Path {
            glob: format!("{}/src/**", f.ws.display())
        }
    );
    // The suggested rule really allows the call when remembered.
    let stored = Rule {
        id: "new".into(),
        tool: rule.tool,
        behavior: rule.behavior,
        matcher: rule.matcher,
        destination: rule.destination,
        chat_id: Some(CHAT.into()),
        created_at: chrono::Utc::now(),
        description: rule.description,
    };
    let rules = [stored];
    let ctx = PermissionContext {
        rules: &rules,
        ..ctx
    };
    let eval = PermissionEngine::new().evaluate(&request(Write("src/new.rs"), &f), &ctx);
    assert_eq!(
        (eval.decision.behavior, eval.decision.reason_code.as_str()),
        (ALLOW, "rule_allow")
    );
}

#[test]
fn a_session_rule_of_another_chat_does_not_apply() {
    let f = fixture();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    let mut r = rule(0, "session:allow run_command(cargo test)", &f);
    r.chat_id = Some("other-chat".into());
    let rules = [r];
    let ctx = PermissionContext {
        mode: D,
        paths: &policy,
        rules: &rules,
        chat_id: CHAT,
    };
    let eval = PermissionEngine::new().evaluate(&request(Cmd("cargo test"), &f), &ctx);
    assert_eq!(eval.decision.reason_code, "shell_policy_ask");
    assert!(eval.matched.is_empty());
}

#[test]
fn every_matching_rule_is_listed_whatever_its_behavior() {
    let eval = eval_simple(D, CASE1, Cmd("git status && rm -rf x"));
    let ids: Vec<&str> = eval.matched.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, vec!["rule-0", "rule-1"]);
    assert_eq!(
        eval.decision.matched_rules,
        vec!["rule-0".to_string(), "rule-1".to_string()]
    );
}

#[test]
fn each_segment_gets_its_own_verdict_in_the_evaluated_mode() {
    let f = fixture();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    let rules = [rule(0, "ask run_command(npm publish)", &f)];
    let explain = |mode, command: &'static str| {
        let ctx = PermissionContext {
            mode,
            paths: &policy,
            rules: &rules,
            chat_id: CHAT,
        };
        let e = PermissionEngine::new().explain(&request(Cmd(command), &f), &ctx);
        let verdicts: Vec<(Behavior, String)> = e
            .segments
            .iter()
            .map(|s| (s.verdict, s.verdict_reason.clone()))
            .collect();
        (e.behavior, verdicts)
    };
    assert_eq!(
        explain(D, "ls && rm -rf /"),
        (
            DENY,
            vec![
                (ALLOW, "a known read-only command".to_string()),
                (DENY, "never run: recursive removal of '/'".to_string()),
            ]
        )
    );
    assert_eq!(
        explain(FULL, "cargo build; npm publish; LD_PRELOAD=x.so ls"),
        (
            ASK,
            vec![
                (ALLOW, "full access mode".to_string()),
                (ASK, "ask rule rule-0: prefix 'npm publish'".to_string()),
                (ALLOW, "full access mode".to_string()),
            ]
        )
    );
    assert_eq!(
        explain(D, "cargo build | LD_PRELOAD=x.so ls").1,
        vec![
            (ASK, "not known to be read-only: needs approval".to_string()),
            (ASK, "sets LD_PRELOAD, which changes what runs".to_string()),
        ]
    );
}

/// The simulator's per-command verdicts apply every rule kind that can match a command, so no
/// segment shows "allow" while a rule denies the call.
#[test]
fn segment_verdicts_apply_every_rule_kind() {
    let f = fixture();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    let explain = |specs: &[&str], command: &'static str| {
        let rules: Vec<Rule> = specs
            .iter()
            .enumerate()
            .map(|(i, s)| rule(i, s, &f))
            .collect();
        let ctx = PermissionContext {
            mode: D,
            paths: &policy,
            rules: &rules,
            chat_id: CHAT,
        };
        let e = PermissionEngine::new().explain(&request(Cmd(command), &f), &ctx);
        let verdicts: Vec<(Behavior, String)> = e
            .segments
            .iter()
            .map(|s| (s.verdict, s.verdict_reason.clone()))
            .collect();
        (e.behavior, verdicts)
    };
    let deny_all = (DENY, "deny rule rule-0: every run_command call".to_string());
    assert_eq!(
        explain(&["deny run_command"], "ls && cat README.md"),
        (DENY, vec![deny_all.clone(), deny_all])
    );
    assert_eq!(
        explain(&["deny run_command(=ls)"], "ls"),
        (
            DENY,
            vec![(
                DENY,
                "deny rule rule-0: the arguments equal its exact input".to_string()
            )]
        )
    );
    let (behavior, verdicts) = explain(&["deny *({ws}/src/**)"], "ls > src/out.txt; ls");
    assert_eq!(behavior, DENY);
    assert_eq!(verdicts[0].0, DENY);
    assert!(
        verdicts[0].1.starts_with("deny rule rule-0: glob '")
            && verdicts[0].1.ends_with("/src/out.txt"),
        "{}",
        verdicts[0].1
    );
    assert_eq!(
        verdicts[1],
        (ALLOW, "a known read-only command".to_string())
    );
    assert_eq!(
        explain(&["allow run_command"], "make build"),
        (
            ALLOW,
            vec![(
                ALLOW,
                "allow rule rule-0: every run_command call".to_string()
            )]
        )
    );
    let (behavior, verdicts) = explain(&[], "ls > /suzent-outside/out.txt");
    assert_eq!(behavior, DENY);
    assert_eq!(verdicts[0].0, DENY);
    assert!(
        verdicts[0]
            .1
            .starts_with("writes to /suzent-outside/out.txt"),
        "{}",
        verdicts[0].1
    );
}
