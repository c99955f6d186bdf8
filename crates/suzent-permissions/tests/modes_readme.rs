//! Issue #12 item 12: the README says exactly what each mode asks, allows and denies; this test
//! reads the README's table and checks every row against the engine (a row without a
//! representative call here fails the test, so the table and the engine cannot drift).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use pretty_assertions::assert_eq;

/// A representative call (and rules) for each row of the README table, by the row's label.
fn call_for(label: &str) -> Option<(Call, &'static [&'static str], bool)> {
    use Call::{Cmd, Other, Read, Tool, Write};
    Some(match label {
        l if l.starts_with("`read_file`, `glob_search`") => (Read("src/main.rs"), NONE, false),
        l if l.starts_with("reading outside") => (Read("/etc/hostname"), NONE, false),
        l if l.starts_with("`write_file`, `edit_file` inside") => {
            (Write("src/new.rs"), NONE, false)
        }
        l if l.starts_with("writing into the workspace's `.git`") => {
            (Write(".git/hooks/pre-commit"), NONE, false)
        }
        l if l.starts_with("writing outside") => (Write("outbox/x.txt"), NONE, false),
        l if l.starts_with("any tool touching Suzent's own") => {
            (Cmd("suzent rules add --all"), NONE, false)
        }
        l if l.starts_with("a known read-only command") => (Cmd("grep -rn x src"), NONE, false),
        l if l.starts_with("a script whose every command") => (
            Cmd("git status && ls"),
            &["allow run_command(git status)"],
            false,
        ),
        l if l.starts_with("another command") => (Cmd("make"), NONE, false),
        l if l.starts_with("a script with a command that is not allowed") => {
            (Cmd("ls && make"), NONE, false)
        }
        l if l.starts_with("a command redirecting output outside") => {
            (Cmd("echo x > /tmp/x"), NONE, false)
        }
        l if l.starts_with("a command whose path operand") => (Cmd("cp a /tmp/x"), NONE, false),
        l if l.starts_with("a dangerous command") => (Cmd("sudo ls"), NONE, false),
        l if l.starts_with("a command the analyser cannot follow") => {
            (Cmd("eval \"$X\""), NONE, false)
        }
        l if l.starts_with("an option or variable that runs other code") => {
            (Cmd("git -c core.pager=sh log"), NONE, false)
        }
        l if l.starts_with("a tool that asks by default") => (
            Other {
                requires_approval: true,
            },
            NONE,
            false,
        ),
        l if l.starts_with("a tool that does not") => (
            Other {
                requires_approval: false,
            },
            NONE,
            false,
        ),
        l if l.starts_with("a call a deny rule matches") => {
            (Cmd("rm x"), &["deny run_command(rm *)"], false)
        }
        l if l.starts_with("a call an ask rule matches") => (
            Tool {
                tool: "mcp__gh__create_issue",
                args: "{\"repo\": \"o/r\"}",
                requires_approval: false,
            },
            &["ask mcp__gh__create_issue"],
            false,
        ),
        l if l.starts_with("a command an allow rule covers") => {
            (Cmd("make test"), &["allow run_command(make *)"], false)
        }
        _ => return None,
    })
}

#[test]
fn the_readme_modes_table_is_what_the_engine_decides() {
    let readme = include_str!("../../../README.md");
    let start = readme
        .find("<!-- modes-table:start -->")
        .expect("table start marker");
    let end = readme
        .find("<!-- modes-table:end -->")
        .expect("table end marker");
    let rows: Vec<Vec<String>> = readme[start..end]
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---") && !l.starts_with("| Call"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    assert!(rows.len() >= 20, "{} rows", rows.len());
    let engine = PermissionEngine::new();
    let mut failures = Vec::new();
    for row in &rows {
        let [label, cells @ ..] = row.as_slice() else {
            continue;
        };
        let Some((call, rules, home)) = call_for(label) else {
            failures.push(format!("no representative call for README row {label:?}"));
            continue;
        };
        for (mode, cell) in [D, AUTO, FULL].into_iter().zip(cells) {
            let case = Case {
                name: "",
                mode,
                rules,
                call,
                home_root: home,
                behavior: ALLOW,
                code: "",
            };
            let f = fixture();
            let policy = PathPolicy::new(&f.ws, &[f.base.join("etc")])
                .unwrap()
                .protect(&[f.base.join("suzent/config"), f.base.join("suzent/data")]);
            let rules: Vec<Rule> = case
                .rules
                .iter()
                .enumerate()
                .map(|(i, s)| rule(i, s, &f))
                .collect();
            let ctx = PermissionContext {
                mode,
                paths: &policy,
                rules: &rules,
                chat_id: CHAT,
            };
            let e = engine.explain(&request(call, &f), &ctx);
            let got = match (e.behavior, e.reviewer_would_decide) {
                (Behavior::Ask, true) => "reviewer".to_string(),
                (b, _) => b.to_string(),
            };
            if got != *cell {
                failures.push(format!(
                    "{label} [{mode}]: README says {cell}, engine {got} ({})",
                    e.reason
                ));
            }
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}
