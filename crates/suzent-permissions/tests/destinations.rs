//! Destination rules: who or what a call addresses (e-mail recipients, `#channels`, chats,
//! `owner/repo`, agents, URL hosts). Allow rules cover a call only when every destination is
//! known and matched (fail closed); deny and ask rules match when any destination matches.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[allow(unused_imports)]
use Call::{Cmd, Other, Read, Tool, Write};
use common::*;
use pretty_assertions::assert_eq;
use suzent_permissions::{PermissionEngine, parse_rules_file, specificity, validate_rule};

const MAIL: &str = "mcp__gmail__send_email";
const SLACK: &str = "mcp__slack__post_message";
const GITHUB: &str = "mcp__github__create_issue";
const TELEGRAM: &str = "mcp__telegram__send_message";
const CALENDAR: &str = "mcp__calendar__create_event";

/// An MCP call (asks by default, like an untrusted MCP tool).
const fn mcp(tool: &'static str, args: &'static str) -> Call {
    Tool {
        tool,
        args,
        requires_approval: true,
    }
}

const fn agent(args: &'static str) -> Call {
    Tool {
        tool: "agent_send",
        args,
        requires_approval: false,
    }
}

const fn fetch(args: &'static str, private: bool) -> Call {
    Tool {
        tool: "webpage_fetch",
        args,
        requires_approval: private,
    }
}

const EXAMPLE: &[&str] = &["allow mcp__gmail__send_email(dest:*@example.com)"];
const NO_EVIL: &[&str] = &[
    "allow mcp__gmail__send_email(*)",
    "deny mcp__gmail__send_email(dest:*@evil.com)",
];
const OCTO: &[&str] = &["allow mcp__github__create_issue(dest:octo/*)"];

fn destination_rows() -> Vec<Case> {
    vec![
        // Allow: every destination known and matched.
        case!("allowed recipient domain", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com", "subject": "hi"}"#) => ALLOW, "rule_allow"),
        case!("recipient domain compared without case", D, EXAMPLE, mcp(MAIL, r#"{"to": "Bob <BOB@Example.COM>"}"#) => ALLOW, "rule_allow"),
        case!("other domain is not allowed", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@evil.com"}"#) => ASK, "tool_requires_approval"),
        case!("suffix trick is not the domain", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com.evil.org"}"#) => ASK, "tool_requires_approval"),
        case!("one of two recipients outside", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com, eve@evil.com"}"#) => ASK, "tool_requires_approval"),
        case!("cc outside the allowed domain", D, EXAMPLE, mcp(MAIL, r#"{"to": ["bob@example.com"], "cc": "eve@evil.com"}"#) => ASK, "tool_requires_approval"),
        case!("quoted display name with a comma", D, EXAMPLE, mcp(MAIL, r#"{"to": "\"Doe, Jane\" <jane@example.com>; ann@example.com"}"#) => ALLOW, "rule_allow"),
        case!("recipient objects with an email field", D, EXAMPLE, mcp(MAIL, r#"{"message": {"recipients": [{"name": "A", "email": "a@example.com"}]}}"#) => ALLOW, "rule_allow"),
        // Fail closed: undetermined destinations are never allowed by a destination rule.
        case!("space separated recipients are unreadable", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com eve@evil.com"}"#) => ASK, "tool_requires_approval"),
        case!("recipient object without an address", D, EXAMPLE, mcp(MAIL, r#"{"to": {"id": "U123"}}"#) => ASK, "tool_requires_approval"),
        case!("a call without any destination", D, &["allow mcp__gmail__send_email(dest:*)"], mcp(MAIL, r#"{"subject": "hi"}"#) => ASK, "tool_requires_approval"),
        case!("a boolean recipient", D, &["allow mcp__gmail__send_email(dest:*)"], mcp(MAIL, r#"{"to": true}"#) => ASK, "tool_requires_approval"),
        case!("a literal star matches only a star", D, &["allow mcp__gmail__send_email(dest:a\\*b@example.com)"], mcp(MAIL, r#"{"to": "ab@example.com"}"#) => ASK, "tool_requires_approval"),
        case!("an escaped star matches the star", D, &["allow mcp__gmail__send_email(dest:a\\*b@example.com)"], mcp(MAIL, r#"{"to": "a*b@example.com"}"#) => ALLOW, "rule_allow"),
        // Deny and ask: any destination that matches.
        case!("denied domain beats allow all", D, NO_EVIL, mcp(MAIL, r#"{"to": "bob@example.com; Eve <eve@EVIL.com>"}"#) => DENY, "rule_deny"),
        case!("denied domain in full access", FULL, NO_EVIL, mcp(MAIL, r#"{"bcc": ["eve@evil.com"]}"#) => DENY, "rule_deny"),
        case!("denied domain in auto", AUTO, NO_EVIL, mcp(MAIL, r#"{"to": "eve@evil.com"}"#) => DENY, "rule_deny"),
        case!("denied recipient beside an unreadable one", D, NO_EVIL, mcp(MAIL, r#"{"to": ["eve@evil.com", true]}"#) => DENY, "rule_deny"),
        case!("deny on every tool by recipient", D, &["deny *(dest:*@evil.com)"], mcp(SLACK, r#"{"channel": "general", "to": "eve@evil.com"}"#) => DENY, "rule_deny"),
        case!("other recipients pass the deny rule", D, NO_EVIL, mcp(MAIL, r#"{"to": "bob@example.com"}"#) => ALLOW, "rule_allow"),
        // Channels and chats.
        case!("ask rule on a channel without its hash", D, &["allow mcp__slack__post_message(*)", "ask mcp__slack__post_message(dest:#general)"], mcp(SLACK, r##"{"channel": "general", "text": "hi"}"##) => ASK, "rule_ask"),
        case!("allowed channel", D, &["allow mcp__slack__post_message(dest:#random)"], mcp(SLACK, r##"{"channel": "#random", "text": "hi"}"##) => ALLOW, "rule_allow"),
        case!("another channel is not allowed", D, &["allow mcp__slack__post_message(dest:#random)"], mcp(SLACK, r##"{"channel_id": "general", "text": "hi"}"##) => ASK, "tool_requires_approval"),
        case!("allowed telegram chat id", D, &["allow mcp__telegram__send_message(dest:-100123)"], mcp(TELEGRAM, r#"{"chat_id": -100123, "text": "hi"}"#) => ALLOW, "rule_allow"),
        case!("another telegram chat", D, &["allow mcp__telegram__send_message(dest:-100123)"], mcp(TELEGRAM, r#"{"chatId": -100999, "text": "hi"}"#) => ASK, "tool_requires_approval"),
        // Repositories.
        case!("allowed owner", D, OCTO, mcp(GITHUB, r#"{"owner": "octo", "repo": "hello", "title": "bug"}"#) => ALLOW, "rule_allow"),
        case!("owner prefix is not the owner", D, OCTO, mcp(GITHUB, r#"{"owner": "octopus", "repo": "hello", "title": "bug"}"#) => ASK, "tool_requires_approval"),
        case!("full repository name without case", D, OCTO, mcp(GITHUB, r#"{"repository": "OCTO/Hello"}"#) => ALLOW, "rule_allow"),
        case!("denied repository beats allowed owner", D, &["allow mcp__github__create_issue(dest:octo/*)", "deny mcp__github__create_issue(dest:octo/secret)"], mcp(GITHUB, r#"{"owner": "octo", "repo": "secret"}"#) => DENY, "rule_deny"),
        case!("a bare repo without owner is not under the owner", D, OCTO, mcp(GITHUB, r#"{"repo": "hello"}"#) => ASK, "tool_requires_approval"),
        // Agents.
        case!("denied agent", D, &["deny agent_send(dest:agent-8)"], agent(r#"{"agent_id": "agent-8", "message": "hi"}"#) => DENY, "rule_deny"),
        case!("another agent passes", D, &["deny agent_send(dest:agent-8)"], agent(r#"{"agent_id": "agent-7", "message": "hi"}"#) => ALLOW, "tool_default_allow"),
        case!("ask before messaging sub agents", AUTO, &["ask agent_send(dest:sub-*)"], agent(r#"{"agent_id": "SUB-42", "message": "hi"}"#) => ASK, "rule_ask"),
        // URL hosts.
        case!("denied host", D, &["deny webpage_fetch(dest:*.evil.com)"], fetch(r#"{"url": "https://www.evil.com/page"}"#, false) => DENY, "rule_deny"),
        case!("credentials before the host do not hide it", D, &["deny webpage_fetch(dest:*.evil.com)"], fetch(r#"{"url": "http://docs.example.com@www.evil.com/"}"#, false) => DENY, "rule_deny"),
        case!("a host that only contains the name", D, &["deny webpage_fetch(dest:*.evil.com)"], fetch(r#"{"url": "https://evil.com.example.org/"}"#, false) => ALLOW, "tool_default_allow"),
        case!("allowed private host", D, &["allow webpage_fetch(dest:192.168.1.10)"], fetch(r#"{"url": "http://192.168.1.10:8080/status"}"#, true) => ALLOW, "rule_allow"),
        case!("another private host asks", D, &["allow webpage_fetch(dest:192.168.1.10)"], fetch(r#"{"url": "http://192.168.1.11/"}"#, true) => ASK, "tool_requires_approval"),
        // Destination rules cover destinations only.
        case!("a destination rule does not cover a write", D, &["allow *(dest:*)"], Write("src/x.rs") => ASK, "write_requires_approval"),
        case!("a destination deny rule ignores commands", D, &["deny *(dest:*)"], Cmd("ls") => ALLOW, "read_only_command"),
        case!("a destination rule of another tool", D, &["allow mcp__slack__post_message(dest:*@example.com)"], mcp(MAIL, r#"{"to": "bob@example.com"}"#) => ASK, "tool_requires_approval"),
        case!("session deny beats global destination allow", D, &["allow mcp__gmail__send_email(dest:*@example.com)", "session:deny mcp__gmail__send_email(dest:ceo@example.com)"], mcp(MAIL, r#"{"to": "ceo@example.com"}"#) => DENY, "rule_deny"),
    ]
}

const HOOKS: &[&str] = &["allow mcp__hooks__post(dest:hooks.good.com)"];
const HOOK: &str = "mcp__hooks__post";
const TO_GOOD: &[&str] = &["allow mcp__gmail__send_email(dest:*@good.com)"];
const KATE: &[&str] = &["allow mcp__gmail__send_email(dest:kate@good.com)"];
const EVENTS_NO_EVIL: &[&str] = &[
    "allow mcp__calendar__create_event(*)",
    "deny mcp__calendar__create_event(dest:*@evil.com)",
];
const EVENTS_TO_GOOD: &[&str] = &["allow mcp__calendar__create_event(dest:*@good.com)"];

/// Bypasses found by the security review of the destination matcher: each row allowed (or
/// escaped a deny rule) before the fix.
fn bypass_rows() -> Vec<Case> {
    vec![
        // 1. Keys that normalize to the same field, and repository names that are not one segment.
        case!("owner twice in two spellings", D, OCTO, mcp(GITHUB, r#"{"Owner": "octo", "owner": "evil", "repo": "hello"}"#) => ASK, "tool_requires_approval"),
        case!("every spelling of owner is seen by deny", D, &["allow mcp__github__create_issue(*)", "deny mcp__github__create_issue(dest:evil/*)"], mcp(GITHUB, r#"{"Owner": "octo", "owner": "evil", "repo": "hello"}"#) => DENY, "rule_deny"),
        case!("recipient field twice in two spellings", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com", "To": "ann@example.com"}"#) => ASK, "tool_requires_approval"),
        case!("dot-dot in the owner", D, OCTO, mcp(GITHUB, r#"{"owner": "octo/../evil", "repo": "hello"}"#) => ASK, "tool_requires_approval"),
        case!("dot-dot in a full repository name", D, OCTO, mcp(GITHUB, r#"{"repository": "octo/../evil/hello"}"#) => ASK, "tool_requires_approval"),
        case!("dot-dot as the repository", D, OCTO, mcp(GITHUB, r#"{"owner": "octo", "repo": ".."}"#) => ASK, "tool_requires_approval"),
        case!("owner beside a full repository name", D, OCTO, mcp(GITHUB, r#"{"owner": "evil", "repo": "octo/hello"}"#) => ASK, "tool_requires_approval"),
        // 2. Recipient-like fields beyond the fixed list, and values that are URLs or addresses.
        case!("callback_url beside an allowed url", D, HOOKS, mcp(HOOK, r#"{"url": "https://hooks.good.com/x", "callback_url": "https://evil.example/"}"#) => ASK, "tool_requires_approval"),
        case!("webhook_url to another host", D, HOOKS, mcp(HOOK, r#"{"url": "https://hooks.good.com/x", "webhook_url": "https://evil.example/"}"#) => ASK, "tool_requires_approval"),
        case!("endpoint to another host", D, HOOKS, mcp(HOOK, r#"{"url": "https://hooks.good.com/x", "endpoint": "https://evil.example/in"}"#) => ASK, "tool_requires_approval"),
        case!("host field", D, HOOKS, mcp(HOOK, r#"{"url": "https://hooks.good.com/x", "host": "evil.example"}"#) => ASK, "tool_requires_approval"),
        case!("to_email", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com", "to_email": "eve@evil.com"}"#) => ASK, "tool_requires_approval"),
        case!("recipientEmail", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com", "recipientEmail": "eve@evil.com"}"#) => ASK, "tool_requires_approval"),
        case!("address", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com", "address": "eve@evil.com"}"#) => ASK, "tool_requires_approval"),
        case!("forward_to", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com", "forward_to": "eve@evil.com"}"#) => ASK, "tool_requires_approval"),
        case!("forwardTo is seen by deny", D, NO_EVIL, mcp(MAIL, r#"{"to": "bob@example.com", "forwardTo": "eve@evil.com"}"#) => DENY, "rule_deny"),
        case!("user", D, &["allow mcp__slack__post_message(dest:#random)"], mcp(SLACK, r##"{"channel": "#random", "user": "U999"}"##) => ASK, "tool_requires_approval"),
        case!("users", D, &["allow mcp__slack__post_message(dest:#random)"], mcp(SLACK, r##"{"channel": "#random", "users": ["U999"]}"##) => ASK, "tool_requires_approval"),
        case!("user_id", D, &["allow mcp__slack__post_message(dest:#random)"], mcp(SLACK, r##"{"channel": "#random", "user_id": "U999"}"##) => ASK, "tool_requires_approval"),
        case!("phone_number", D, &["allow mcp__telegram__send_message(dest:-100123)"], mcp(TELEGRAM, r#"{"chat_id": -100123, "phone_number": "+15550100"}"#) => ASK, "tool_requires_approval"),
        case!("a URL in a field with any name", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com", "target": "https://evil.example/collect"}"#) => ASK, "tool_requires_approval"),
        case!("an address in a nested field with any name", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com", "meta": {"notify": "eve@evil.com"}}"#) => ASK, "tool_requires_approval"),
        case!("an address in any field is seen by deny", D, NO_EVIL, mcp(MAIL, r#"{"to": "bob@example.com", "extra": ["eve@evil.com"]}"#) => DENY, "rule_deny"),
        // 3. Addresses read strictly.
        case!("mailto with a to header", D, TO_GOOD, mcp(MAIL, r#"{"to": "mailto:evil@x.com?to=a@good.com"}"#) => ASK, "tool_requires_approval"),
        case!("mailto bcc is seen by deny", D, NO_EVIL, mcp(MAIL, r#"{"to": "mailto:bob@example.com?subject=x&bcc=eve%40evil.com"}"#) => DENY, "rule_deny"),
        case!("two at signs", D, TO_GOOD, mcp(MAIL, r#"{"to": "evil@evil.com@good.com"}"#) => ASK, "tool_requires_approval"),
        case!("two at signs are seen by deny", D, NO_EVIL, mcp(MAIL, r#"{"to": "eve@evil.com@example.com"}"#) => DENY, "rule_deny"),
        case!("percent relay in the local part", D, TO_GOOD, mcp(MAIL, r#"{"to": "eve%evil.com@good.com"}"#) => ASK, "tool_requires_approval"),
        // 4. Spellings of hosts and addresses.
        case!("trailing dot of the domain", D, NO_EVIL, mcp(MAIL, r#"{"to": "eve@evil.com."}"#) => DENY, "rule_deny"),
        case!("trailing dot of a host pattern", D, &["deny webpage_fetch(dest:evil.com.)"], fetch(r#"{"url": "https://EVIL.com/"}"#, false) => DENY, "rule_deny"),
        case!("unicode host against a unicode pattern", D, &["deny webpage_fetch(dest:münchen.de)"], fetch(r#"{"url": "https://münchen.de/"}"#, false) => DENY, "rule_deny"),
        case!("unicode domain against a punycode pattern", D, &["allow mcp__gmail__send_email(*)", "deny mcp__gmail__send_email(dest:*@xn--mnchen-3ya.de)"], mcp(MAIL, r#"{"to": "a@MÜNCHEN.de"}"#) => DENY, "rule_deny"),
        case!("kelvin sign is not k", D, KATE, mcp(MAIL, r#"{"to": "Kate@good.com"}"#) => ASK, "tool_requires_approval"),
        // 5. Text with spaces in fields that are not recipient-like.
        case!("a display-name address in attendees is seen by deny", D, EVENTS_NO_EVIL, mcp(CALENDAR, r#"{"attendees": "Eve <eve@evil.com>"}"#) => DENY, "rule_deny"),
        case!("an address list in attendees is seen by deny", D, EVENTS_NO_EVIL, mcp(CALENDAR, r#"{"attendees": "bob@good.com, eve@evil.com"}"#) => DENY, "rule_deny"),
        case!("a display-name address in a nested field", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com", "meta": {"notify": "Eve <eve@evil.com>"}}"#) => ASK, "tool_requires_approval"),
        case!("space separated addresses in attendees are unreadable", D, EVENTS_TO_GOOD, mcp(CALENDAR, r#"{"organizer_email": "bob@good.com", "attendees": "bob@good.com eve@evil.com"}"#) => ASK, "tool_requires_approval"),
        case!("space separated addresses in attendees are seen by deny", D, EVENTS_NO_EVIL, mcp(CALENDAR, r#"{"attendees": "bob@good.com eve@evil.com"}"#) => DENY, "rule_deny"),
        case!("an address inside free text makes the set undetermined", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com", "body": "write to eve@evil.com"}"#) => ASK, "tool_requires_approval"),
        case!("a URL inside free text is seen by deny", D, &["allow mcp__hooks__post(*)", "deny mcp__hooks__post(dest:*.evil.com)"], mcp(HOOK, r#"{"text": "see https://x.evil.com/a for details"}"#) => DENY, "rule_deny"),
    ]
}

/// Calls that must stay allowed: the stricter reading does not turn ordinary arguments into
/// destinations.
fn ordinary_rows() -> Vec<Case> {
    vec![
        case!("free text without an address is not a destination", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com", "body": "Lunch at noon; bring the notes, thanks"}"#) => ALLOW, "rule_allow"),
        case!("a mention is not an address", D, &["allow mcp__slack__post_message(dest:#random)"], mcp(SLACK, r##"{"channel": "#random", "text": "@here deploy done <@U123>"}"##) => ALLOW, "rule_allow"),
        case!("an address list in attendees with every address allowed", D, EVENTS_TO_GOOD, mcp(CALENDAR, r#"{"attendees": "Bob <bob@good.com>, ann@good.com", "title": "sync"}"#) => ALLOW, "rule_allow"),
        case!("an issue number is not a recipient", D, OCTO, mcp(GITHUB, r#"{"owner": "octo", "repo": "hello", "issue_number": 5}"#) => ALLOW, "rule_allow"),
        case!("a photo field is not a recipient", D, EXAMPLE, mcp(MAIL, r#"{"to": "bob@example.com", "photo": "cat.png"}"#) => ALLOW, "rule_allow"),
        case!("mailto with every recipient allowed", D, EXAMPLE, mcp(MAIL, r#"{"to": "mailto:a@example.com?cc=b%40example.com&subject=hi"}"#) => ALLOW, "rule_allow"),
        case!("a file name with an at sign", D, &["allow write_file({ws}/src/**)"], Write("src/icon@2x.png") => ALLOW, "rule_allow"),
        case!("unicode domain against a unicode allow", D, &["allow mcp__gmail__send_email(dest:*@münchen.de)"], mcp(MAIL, r#"{"to": "a@münchen.de."}"#) => ALLOW, "rule_allow"),
    ]
}

#[test]
fn review_bypasses_are_closed() {
    run_table(bypass_rows());
}

#[test]
fn ordinary_arguments_stay_allowed() {
    run_table(ordinary_rows());
}

#[test]
fn the_table_of_this_kind_has_at_least_40_rows() {
    let rows = destination_rows().len();
    assert!(rows >= 40, "{rows} rows");
}

#[test]
fn destination_rules_allow_only_known_destinations_and_deny_any() {
    run_table(destination_rows());
}

#[test]
fn specificity_orders_exact_path_destination_prefix_all() {
    let f = fixture();
    let rules: Vec<Rule> = [
        "deny *",
        "deny run_command(git push)",
        "deny mcp__gmail__send_email(dest:*@example.com)",
        "deny read_file(~/.ssh/**)",
        "deny mcp__gmail__send_email(=x)",
    ]
    .iter()
    .enumerate()
    .map(|(i, s)| rule(i, s, &f))
    .collect();
    let mut ranked: Vec<&Rule> = rules.iter().collect();
    ranked.sort_by_key(|r| std::cmp::Reverse(specificity(r)));
    let ids: Vec<&str> = ranked.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, vec!["rule-4", "rule-3", "rule-2", "rule-1", "rule-0"]);
    // Within the destination kind, more literal characters are more specific.
    let a = rule(0, "deny x(dest:*@example.com)", &f);
    let b = rule(1, "deny x(dest:ceo@example.com)", &f);
    assert!(specificity(&b) > specificity(&a));
}

#[test]
fn the_most_specific_destination_rule_is_cited_and_explained() {
    let f = fixture();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    let rules: Vec<Rule> = [
        "deny mcp__gmail__send_email(*)",
        "deny mcp__gmail__send_email(dest:*@example.com)",
        "deny mcp__gmail__send_email(dest:ceo@example.com)",
        "allow mcp__gmail__send_email(dest:*)",
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
    let req = request(
        mcp(MAIL, r#"{"to": "CEO@example.com", "subject": "x"}"#),
        &f,
    );
    let e = PermissionEngine::new().explain(&req, &ctx);
    assert_eq!((e.behavior, e.reason_code.as_str()), (DENY, "rule_deny"));
    assert!(e.reason.contains("to ceo@example.com"), "{}", e.reason);
    assert_eq!(e.destinations, vec!["CEO@example.com".to_string()]);
    assert!(e.destinations_complete);
    let decisive: Vec<&str> = e
        .matched_rules
        .iter()
        .filter(|m| m.decisive)
        .map(|m| m.rule.id.as_str())
        .collect();
    assert_eq!(decisive, vec!["rule-2"]);
    assert_eq!(e.matched_rules.len(), 4);
    assert_eq!(
        e.matched_rules[1].why,
        "deny global rule: destination '*@example.com' matches CEO@example.com"
    );
}

#[test]
fn an_ask_for_one_destination_offers_a_rule_for_that_destination_only() {
    let eval = eval_simple(
        D,
        NONE,
        agent_ask(r#"{"agent_id": "worker*1", "message": "hi"}"#),
    );
    let rule = eval.decision.actions[1].rule.clone().unwrap();
    assert_eq!(
        rule.matcher,
        RuleMatcher::Destination {
            pattern: "worker\\*1".into()
        }
    );
    // Several destinations: no single pattern covers them, so the whole tool is offered.
    let eval = eval_simple(
        D,
        NONE,
        mcp(MAIL, r#"{"to": "a@example.com, b@example.com"}"#),
    );
    let rule = eval.decision.actions[1].rule.clone().unwrap();
    assert_eq!(rule.matcher, RuleMatcher::All);
}

const fn agent_ask(args: &'static str) -> Call {
    Tool {
        tool: "agent_send",
        args,
        requires_approval: true,
    }
}

#[test]
fn the_offered_destination_rule_allows_the_same_call_when_remembered() {
    let call = mcp(MAIL, r#"{"to": "Bob <bob@example.com>"}"#);
    let eval = eval_simple(D, NONE, call);
    let draft = eval.decision.actions[2].rule.clone().unwrap();
    assert_eq!(
        draft.matcher,
        RuleMatcher::Destination {
            pattern: "bob@example.com".into()
        }
    );
    let f = fixture();
    let policy = PathPolicy::new(&f.ws, &[]).unwrap();
    let rules = [Rule {
        id: "remembered".into(),
        tool: draft.tool,
        behavior: draft.behavior,
        matcher: draft.matcher,
        destination: draft.destination,
        chat_id: None,
        created_at: chrono::Utc::now(),
        description: draft.description,
    }];
    let ctx = PermissionContext {
        mode: D,
        paths: &policy,
        rules: &rules,
        chat_id: CHAT,
    };
    let eval = PermissionEngine::new().evaluate(&request(call, &f), &ctx);
    assert_eq!(eval.decision.reason_code, "rule_allow");
    let other = PermissionEngine::new().evaluate(
        &request(mcp(MAIL, r#"{"to": "bob@example.org"}"#), &f),
        &ctx,
    );
    assert_eq!(other.decision.reason_code, "tool_requires_approval");
}

#[test]
fn destination_patterns_are_validated_naming_the_field() {
    let draft = |pattern: &str| suzent_core::RuleDraft {
        tool: "*".into(),
        behavior: DENY,
        matcher: RuleMatcher::Destination {
            pattern: pattern.into(),
        },
        destination: RuleDestination::Global,
        description: None,
    };
    assert_eq!(
        validate_rule(&draft("  ")),
        Err("matcher.pattern: empty".to_string())
    );
    assert!(
        validate_rule(&draft("a@b.c d@e.f"))
            .unwrap_err()
            .starts_with("matcher.pattern: 'a@b.c d@e.f' contains ' '"),
    );
    assert_eq!(validate_rule(&draft("*@example.com")), Ok(()));
    assert_eq!(validate_rule(&draft("*@münchen.de")), Ok(()));
    assert_eq!(
        validate_rule(&draft("\u{212A}ate@good.com")),
        Err("matcher.pattern: '\u{212A}ate@good.com' contains '\u{212A}' outside a host name; only host names may be non-ASCII (compared in their IDNA ASCII form)".to_string())
    );
    assert!(
        validate_rule(&draft("*@mü*.de"))
            .unwrap_err()
            .starts_with("matcher.pattern: '*@mü*.de': the host label 'mü*'"),
    );
}

#[test]
fn recipient_rules_in_a_rules_file_load_and_bad_ones_are_reported_by_line() {
    let text = "[[rule]]\ntool = \"*\"\nbehavior = \"deny\"\nrecipient = \"*@evil.com\"\n\n[[rule]]\ntool = \"*\"\nbehavior = \"allow\"\nrecipient = \"\"\n\n[[rule]]\ntool = \"*\"\nbehavior = \"allow\"\nrecipient = \"octo/*\"\npath = \"**\"\n";
    let file = parse_rules_file(text, "rules.toml");
    assert_eq!(file.rules.len(), 1);
    assert_eq!(
        file.rules[0].matcher,
        RuleMatcher::Destination {
            pattern: "*@evil.com".into()
        }
    );
    let problems: Vec<(usize, &str)> = file
        .problems
        .iter()
        .map(|p| (p.line, p.message.as_str()))
        .collect();
    assert_eq!(
        problems,
        vec![
            (6, "recipient: empty"),
            (
                11,
                "matcher: more than one of all, exact, prefix, path, recipient is set"
            ),
        ]
    );
}
