//! Issue #12 item 11: rule syntax means one thing. Prefix words are split with shell quoting
//! (quotes removed), a `*` inside quotes is literal, and a wildcard in the middle is accepted
//! with a warning showing a command it also covers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use suzent_core::{Behavior, RuleDestination, RuleDraft, RuleMatcher};
use suzent_permissions::{parse_rules_file, prefix_matches, rule_warnings, split_rule_words};

fn w(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn prefix_text_is_split_with_shell_quoting() {
    let rows: &[(&str, &[&str])] = &[
        ("git status", &["git", "status"]),
        ("git commit -m 'a b'", &["git", "commit", "-m", "a b"]),
        ("echo \"x  y\" z", &["echo", "x  y", "z"]),
        ("grep 'a*b' *", &["grep", "a\\*b", "*"]),
        ("ls \"*\"", &["ls", "\\*"]),
        ("ls \\*", &["ls", "\\*"]),
        ("rm -rf *", &["rm", "-rf", "*"]),
        ("echo it\\'s", &["echo", "it's"]),
        ("a\"b c\"d", &["ab cd"]),
        ("  spaced   out  ", &["spaced", "out"]),
        ("printf '%s\\n'", &["printf", "%s\\\\n"]),
        ("''", &[""]),
    ];
    let mut failures = Vec::new();
    for (text, want) in rows {
        let got = split_rule_words(text).unwrap();
        if got != w(want) {
            failures.push(format!("{text}: got {got:?}"));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
    assert_eq!(
        split_rule_words("git commit -m 'unterminated"),
        Err("unterminated single quote in 'git commit -m 'unterminated'".to_string())
    );
}

#[test]
fn a_quoted_star_matches_only_a_literal_star() {
    let words = split_rule_words("grep '*'").unwrap();
    assert!(prefix_matches(&words, &w(&["grep", "*"])));
    assert!(!prefix_matches(&words, &w(&["grep", "-r"])));
    let words = split_rule_words("grep *").unwrap();
    assert!(prefix_matches(&words, &w(&["grep", "-r"])));
}

#[test]
fn rules_toml_prefixes_are_split_the_same_way() {
    let text = "[[rule]]\ntool = \"run_command\"\nbehavior = \"deny\"\nprefix = \"git commit -m 'release *'\"\n\n[[rule]]\ntool = \"run_command\"\nbehavior = \"deny\"\nprefix = \"git 'unterminated\"\n";
    let f = parse_rules_file(text, "rules.toml");
    assert_eq!(
        f.rules[0].matcher,
        RuleMatcher::Prefix {
            words: w(&["git", "commit", "-m", "release \\*"])
        }
    );
    assert_eq!(f.problems.len(), 1);
    assert_eq!(
        f.problems[0].message,
        "prefix: unterminated single quote in 'git 'unterminated'"
    );
}

fn draft(behavior: Behavior, words: &str) -> RuleDraft {
    RuleDraft {
        tool: "run_command".into(),
        behavior,
        matcher: RuleMatcher::Prefix {
            words: split_rule_words(words).unwrap(),
        },
        destination: RuleDestination::Global,
        description: None,
    }
}

#[test]
fn a_wildcard_in_the_middle_is_accepted_with_a_warning_showing_what_else_it_covers() {
    assert_eq!(
        rule_warnings(&draft(Behavior::Allow, "git * main")),
        vec!["the wildcard in 'git * main' stands before the end, so the rule also covers commands such as `git --force anything main`; an allow rule like this may allow more than you mean".to_string()]
    );
    assert_eq!(
        rule_warnings(&draft(Behavior::Deny, "docker run * --privileged")),
        vec!["the wildcard in 'docker run * --privileged' stands before the end, so the rule also covers commands such as `docker run --force anything --privileged`".to_string()]
    );
    assert_eq!(
        rule_warnings(&draft(Behavior::Allow, "npm run* test")).len(),
        1
    );
    for quiet in ["git status *", "git status", "grep '*' x", "cargo test *"] {
        assert_eq!(
            rule_warnings(&draft(Behavior::Allow, quiet)),
            Vec::<String>::new(),
            "{quiet}"
        );
    }
    // The warned-about example really is covered by the rule.
    let rule = split_rule_words("git * main").unwrap();
    assert!(prefix_matches(
        &rule,
        &w(&["git", "--force", "anything", "main"])
    ));
}

/// The same globs as `globProblem` in ui/src/test/ruleText.test.ts: the app refuses, while the
/// user types, exactly the path rules the engine would refuse when saving them.
#[test]
fn path_globs_the_app_refuses_are_the_ones_the_engine_refuses() {
    let refused = [
        "[", "[]", "[!", "[!]", "[z-a]", "[z--]", "{a,b", "{a,{b,c}", "a,b}", "{a,b}}", "src/\\",
    ];
    let accepted = [
        "~/project/**",
        "src/**/*.{ts,tsx}",
        "[]]",
        "[-a]",
        "[a-]",
        "[!a-c]x",
        "[[:alpha:]]",
        "a\\*b",
        "{a,{b,c}}",
        "*.[ch]",
    ];
    let path = |glob: &str| RuleDraft {
        tool: "write_file".into(),
        behavior: Behavior::Allow,
        matcher: RuleMatcher::Path { glob: glob.into() },
        destination: RuleDestination::Global,
        description: None,
    };
    let wrong: Vec<String> = refused
        .iter()
        .filter(|g| suzent_permissions::validate_rule(&path(g)).is_ok())
        .map(|g| format!("{g} was accepted"))
        .chain(accepted.iter().filter_map(|g| {
            suzent_permissions::validate_rule(&path(g))
                .err()
                .map(|e| format!("{g} was refused: {e}"))
        }))
        .collect();
    assert_eq!(wrong, Vec::<String>::new());
}
