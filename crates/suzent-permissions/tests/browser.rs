//! Browser calls through the engine (issue 15 item 7; cases R2-B08, R2-B16): reading is
//! allowed, other schemes are refused naming the scheme, acting asks and names the origin, a
//! remembered approval is a destination rule on the host, deny rules on a host win.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::Utc;
use pretty_assertions::assert_eq;
use serde_json::json;
use suzent_core::{
    ApprovalActionId, Behavior, PermissionMode, Rule, RuleDestination, RuleDraft, RuleMatcher,
};
use suzent_permissions::{
    BrowserAccess, BrowserAccessKind, PathPolicy, PermissionContext, PermissionEngine,
    PermissionRequest, ToolAccess,
};

fn request(kind: BrowserAccessKind, command: &str, url: Option<&str>) -> PermissionRequest {
    PermissionRequest {
        tool_name: "browser_action".into(),
        args: json!({"command": command, "url": url}),
        access: ToolAccess::Browser(BrowserAccess {
            kind,
            command: command.into(),
            url: url.map(str::to_string),
        }),
        requires_approval: false,
    }
}

fn rule(draft: RuleDraft, chat: Option<&str>) -> Rule {
    Rule {
        id: format!("r-{}", draft.tool),
        tool: draft.tool,
        behavior: draft.behavior,
        matcher: draft.matcher,
        destination: draft.destination,
        chat_id: chat.map(str::to_string),
        created_at: Utc::now(),
        description: draft.description,
    }
}

fn host_rule(behavior: Behavior, host: &str) -> Rule {
    rule(
        RuleDraft {
            tool: "browser_action".into(),
            behavior,
            matcher: RuleMatcher::Destination {
                pattern: host.into(),
            },
            destination: RuleDestination::Global,
            description: None,
        },
        None,
    )
}

fn decide(
    mode: PermissionMode,
    rules: &[Rule],
    req: &PermissionRequest,
) -> (Behavior, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let paths = PathPolicy::new(dir.path(), &[]).unwrap();
    let ctx = PermissionContext {
        mode,
        paths: &paths,
        rules,
        chat_id: "chat-1",
    };
    let e = PermissionEngine::new().evaluate(req, &ctx);
    (
        e.decision.behavior,
        e.decision.reason_code.to_string(),
        e.decision.reason,
    )
}

#[test]
fn reading_a_page_is_allowed_in_every_mode() {
    for mode in [PermissionMode::Default, PermissionMode::Auto] {
        let (b, code, reason) = decide(
            mode,
            &[],
            &request(
                BrowserAccessKind::Read,
                "snapshot",
                Some("https://docs.test/a"),
            ),
        );
        assert_eq!((b, code.as_str()), (Behavior::Allow, "browser_read"));
        assert!(reason.contains("https://docs.test"), "{reason}");
    }
}

#[test]
fn other_schemes_are_refused_naming_the_scheme_even_with_an_allow_all_rule() {
    let allow_all = rule(
        RuleDraft {
            tool: "browser_action".into(),
            behavior: Behavior::Allow,
            matcher: RuleMatcher::All,
            destination: RuleDestination::Global,
            description: None,
        },
        None,
    );
    for (url, scheme) in [
        ("javascript:alert(1)", "javascript:"),
        (
            "data:text/html,<script>fetch('http://127.0.0.1:1/x')</script>",
            "data:",
        ),
        ("file:///etc/passwd", "file:"),
        ("chrome://settings", "chrome:"),
        (
            "chrome-extension://abcdefghijklmnopabcdefghijklmnop/popup.html",
            "chrome-extension:",
        ),
        ("blob:https://docs.test/uuid", "blob:"),
        ("view-source:https://docs.test", "view-source:"),
    ] {
        for mode in [PermissionMode::Default, PermissionMode::FullAccess] {
            let (b, code, reason) = decide(
                mode,
                &[allow_all.clone(), host_rule(Behavior::Allow, "docs.test")],
                &request(BrowserAccessKind::Navigate, "open", Some(url)),
            );
            assert_eq!(
                (b, code.as_str()),
                (Behavior::Deny, "browser_scheme_refused"),
                "{url}"
            );
            assert!(reason.contains(&format!("'{scheme}'")), "{reason}");
        }
    }
    let (b, code, _) = decide(
        PermissionMode::FullAccess,
        &[],
        &request(BrowserAccessKind::Navigate, "open", Some("http://[::1")),
    );
    assert_eq!((b, code.as_str()), (Behavior::Deny, "browser_bad_url"));
    let (b, _, _) = decide(
        PermissionMode::Default,
        &[],
        &request(BrowserAccessKind::Navigate, "open", Some("about:blank")),
    );
    assert_eq!(b, Behavior::Allow);
}

#[test]
fn navigation_is_checked_on_the_host_of_the_url() {
    let rules = [
        host_rule(Behavior::Allow, "docs.test"),
        host_rule(Behavior::Deny, "bank.test"),
    ];
    let open = |url| request(BrowserAccessKind::Navigate, "open", Some(url));
    let d = |url| decide(PermissionMode::Default, &rules, &open(url));
    assert_eq!(d("https://docs.test/guide").0, Behavior::Allow);
    assert_eq!(d("https://bank.test/").1, "rule_deny");
    assert_eq!(d("https://bank.test.evil.org/").0, Behavior::Ask);
    // Credentials and odd spellings do not hide the host.
    assert_eq!(d("https://docs.test@bank.test/").1, "rule_deny");
    assert_eq!(d("https://BANK.test./").1, "rule_deny");
    let (b, code, reason) = d("https://other.test/x");
    assert_eq!(
        (b, code.as_str()),
        (Behavior::Ask, "browser_requires_approval")
    );
    assert_eq!(
        reason,
        "Opening https://other.test in the browser needs your approval."
    );
}

#[test]
fn acting_asks_naming_the_origin_and_offers_to_allow_the_site_in_this_chat() {
    let dir = tempfile::tempdir().unwrap();
    let paths = PathPolicy::new(dir.path(), &[]).unwrap();
    let req = request(
        BrowserAccessKind::Act,
        "click",
        Some("http://docs.test:8080/page"),
    );
    let ctx = PermissionContext {
        mode: PermissionMode::Default,
        paths: &paths,
        rules: &[],
        chat_id: "chat-1",
    };
    let e = PermissionEngine::new().evaluate(&req, &ctx);
    assert_eq!(e.decision.behavior, Behavior::Ask);
    assert_eq!(
        e.decision.reason,
        "browser_action click on http://docs.test:8080 needs your approval."
    );
    let session = e
        .decision
        .actions
        .iter()
        .find(|a| a.id == ApprovalActionId::AllowSession)
        .unwrap();
    let draft = session.rule.clone().unwrap();
    assert_eq!(
        draft,
        RuleDraft {
            tool: "browser_action".into(),
            behavior: Behavior::Allow,
            matcher: RuleMatcher::Destination {
                pattern: "http://docs.test:8080".into()
            },
            destination: RuleDestination::Session,
            description: Some(
                "Allow browser actions on http://docs.test:8080 in this chat.".into()
            ),
        }
    );
    // Remembered for this chat and this origin: the next action on the site runs; another
    // site, another port or scheme of the same host, and another chat still ask.
    let grant = rule(draft, Some("chat-1"));
    let rules = [grant];
    let next = |url: &str, chat: &str| {
        let ctx = PermissionContext {
            mode: PermissionMode::Default,
            paths: &paths,
            rules: &rules,
            chat_id: chat,
        };
        PermissionEngine::new()
            .evaluate(&request(BrowserAccessKind::Act, "fill", Some(url)), &ctx)
            .decision
            .behavior
    };
    assert_eq!(
        next("http://docs.test:8080/other", "chat-1"),
        Behavior::Allow
    );
    assert_eq!(next("https://bank.test/", "chat-1"), Behavior::Ask);
    assert_eq!(next("http://docs.test:9090/other", "chat-1"), Behavior::Ask);
    assert_eq!(next("https://docs.test/other", "chat-1"), Behavior::Ask);
    assert_eq!(next("http://docs.test:8080/other", "chat-2"), Behavior::Ask);
}

#[test]
fn a_host_rule_covers_every_origin_of_its_host_and_an_origin_rule_only_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let paths = PathPolicy::new(dir.path(), &[]).unwrap();
    let decide = |pattern: &str, url: &str| {
        let rules = [rule(
            RuleDraft {
                tool: "browser_action".into(),
                behavior: Behavior::Allow,
                matcher: RuleMatcher::Destination {
                    pattern: pattern.into(),
                },
                destination: RuleDestination::Global,
                description: None,
            },
            None,
        )];
        let ctx = PermissionContext {
            mode: PermissionMode::Default,
            paths: &paths,
            rules: &rules,
            chat_id: "chat-1",
        };
        PermissionEngine::new()
            .evaluate(&request(BrowserAccessKind::Act, "click", Some(url)), &ctx)
            .decision
            .behavior
    };
    assert_eq!(decide("docs.test", "https://docs.test/a"), Behavior::Allow);
    assert_eq!(
        decide("docs.test", "http://docs.test:8080/a"),
        Behavior::Allow
    );
    assert_eq!(
        decide("*.docs.test", "https://api.docs.test/"),
        Behavior::Allow
    );
    assert_eq!(
        decide("docs.test", "https://docs.test.evil/"),
        Behavior::Ask
    );
    assert_eq!(
        decide("https://docs.test", "https://docs.test/a"),
        Behavior::Allow
    );
    assert_eq!(
        decide("https://docs.test", "http://docs.test/a"),
        Behavior::Ask
    );
    assert_eq!(
        decide("http://127.0.0.1:8080", "http://127.0.0.1:8080/x"),
        Behavior::Allow
    );
    assert_eq!(
        decide("http://127.0.0.1:8080", "http://127.0.0.1:17345/"),
        Behavior::Ask
    );
}

#[test]
fn acting_on_an_unknown_page_asks_and_remembers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let paths = PathPolicy::new(dir.path(), &[]).unwrap();
    let ctx = PermissionContext {
        mode: PermissionMode::Default,
        paths: &paths,
        rules: &[],
        chat_id: "chat-1",
    };
    for url in [None, Some("about:blank")] {
        let e = PermissionEngine::new()
            .evaluate(&request(BrowserAccessKind::Act, "click_coords", url), &ctx);
        assert_eq!(e.decision.behavior, Behavior::Ask);
        let ids: Vec<ApprovalActionId> = e.decision.actions.iter().map(|a| a.id).collect();
        assert_eq!(
            ids,
            vec![ApprovalActionId::AllowOnce, ApprovalActionId::Reject]
        );
    }
}

#[test]
fn full_access_acts_without_asking_but_deny_rules_on_the_host_still_apply() {
    let rules = [host_rule(Behavior::Deny, "bank.test")];
    let act = |url| request(BrowserAccessKind::Act, "click", Some(url));
    assert_eq!(
        decide(
            PermissionMode::FullAccess,
            &rules,
            &act("https://docs.test/")
        )
        .0,
        Behavior::Allow
    );
    assert_eq!(
        decide(
            PermissionMode::FullAccess,
            &rules,
            &act("https://bank.test/")
        )
        .1,
        "rule_deny"
    );
}
