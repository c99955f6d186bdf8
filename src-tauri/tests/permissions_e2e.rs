//! End-to-end test of the decision simulator on the desktop Permissions page ("Explain a
//! decision"): the real app, its real permission engine, driven through WebDriver under Xvfb
//! (see `desktop_e2e.rs` for the harness and when the tests are skipped).
//! Screenshots land under `$CARGO_TARGET_DIR/e2e-screenshots/explain_decision/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::{Context, Result, bail};
use support::{Desktop, desktop_test};

/// Sets the simulator's argument text the way typing does for React (the native value setter,
/// then an `input` event), replacing what is there.
async fn set_args(d: &Desktop, text: &str) -> Result<()> {
    d.wait_css("[data-testid=explain-args]").await?;
    d.client()
        .execute(
            "const el = document.querySelector('[data-testid=explain-args]');
             const set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
             set.call(el, arguments[0]);
             el.dispatchEvent(new Event('input', { bubbles: true }));",
            vec![serde_json::Value::String(text.to_string())],
        )
        .await
        .context("setting the arguments")?;
    Ok(())
}

/// Scrolls an element to the top of the page so the screenshot shows it.
async fn scroll_to(d: &Desktop, css: &str) -> Result<()> {
    d.wait_css(css).await?;
    d.client()
        .execute(
            "document.querySelector(arguments[0]).scrollIntoView({ block: 'start' });",
            vec![serde_json::Value::String(css.to_string())],
        )
        .await
        .with_context(|| format!("scrolling to {css}"))?;
    Ok(())
}

async fn texts(d: &Desktop, css: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for e in d.client().find_all(fantoccini::Locator::Css(css)).await? {
        out.push(e.text().await?);
    }
    Ok(out)
}

#[test]
fn explaining_a_compound_command_shows_the_deny_and_both_segments_with_their_verdicts() {
    desktop_test("explain_decision", Vec::new(), |d| {
        Box::pin(async move {
            d.click("[data-testid=nav-permissions]").await?;
            d.wait_css("[data-testid=explain-panel]").await?;
            // The tool list comes from the catalog; run_command is preselected once it loads.
            let deadline = std::time::Instant::now() + support::UI_TIMEOUT;
            loop {
                let tool = d
                    .find("[data-testid=explain-tool]")
                    .await?
                    .prop("value")
                    .await?;
                if tool.as_deref() == Some("run_command") {
                    break;
                }
                if std::time::Instant::now() > deadline {
                    bail!("run_command was not preselected; the tool is {tool:?}");
                }
                tokio::time::sleep(std::time::Duration::from_millis(150)).await;
            }

            // Arguments the tool does not take: the engine's error names the field.
            set_args(d, r#"{"command":"ls && rm -rf /"}"#).await?;
            d.click("[data-testid=explain-run]").await?;
            d.wait_text("[data-testid=explain-error]", "field: args")
                .await?;
            let error = d.find("[data-testid=explain-error]").await?.text().await?;
            assert!(error.contains("unknown field `command`"), "{error}");
            scroll_to(d, "[data-testid=explain-panel]").await?;
            d.screenshot("unknown-field").await?;

            // The same script as run_command's `content`.
            set_args(d, r#"{"content":"ls && rm -rf /"}"#).await?;
            d.click("[data-testid=explain-run]").await?;
            d.wait_text("[data-testid=explain-behavior]", "deny")
                .await?;
            assert_eq!(d.count("[data-testid=explain-error]").await?, 0);
            let code = d
                .find("[data-testid=explain-reason-code]")
                .await?
                .text()
                .await?;
            assert_eq!(code, "dangerous_command");
            let reason = d.find("[data-testid=explain-reason]").await?.text().await?;
            assert!(reason.contains("recursive removal of '/'"), "{reason}");
            let risk = d.find("[data-testid=explain-risk]").await?.text().await?;
            assert_eq!(risk, "high risk");
            let segments = texts(d, "[data-testid=explain-segment]").await?;
            assert_eq!(segments.len(), 2, "{segments:?}");
            assert!(
                segments[0].contains("ls")
                    && segments[0].contains("allow")
                    && segments[0].contains("a known read-only command"),
                "{segments:?}"
            );
            assert!(
                segments[1].contains("rm -rf /")
                    && segments[1].contains("deny")
                    && segments[1].contains("never run: recursive removal of '/'"),
                "{segments:?}"
            );
            assert_eq!(
                texts(d, "[data-testid=explain-no-rules]").await?,
                vec!["No rule matched this call.".to_string()]
            );
            scroll_to(d, "[data-testid=explain-result]").await?;
            d.screenshot("deny-and-segments").await?;

            // Full Access still denies it: the dangerous segment is never run.
            d.find("[data-testid=explain-mode] option[value=full_access]")
                .await?
                .click()
                .await?;
            d.click("[data-testid=explain-run]").await?;
            d.wait_text("[data-testid=explain-result]", "mode Full")
                .await?;
            let behavior = d
                .find("[data-testid=explain-behavior]")
                .await?
                .text()
                .await?;
            assert_eq!(behavior, "deny");
            let segments = texts(d, "[data-testid=explain-segment]").await?;
            assert!(segments[0].contains("full access mode"), "{segments:?}");
            scroll_to(d, "[data-testid=explain-result]").await?;
            d.screenshot("full-access-still-denies").await?;
            Ok(())
        })
    });
}

#[test]
fn a_recipient_rule_added_in_the_editor_denies_messages_to_that_agent_in_the_simulator() {
    desktop_test("explain_recipient_rule", Vec::new(), |d| {
        Box::pin(async move {
            d.click("[data-testid=nav-permissions]").await?;
            // Add `deny agent_send to reviewer-*` through the rule editor.
            let tool = d.wait_css("[data-testid=rule-tool]").await?;
            tool.click().await?;
            tool.send_keys("agent_send").await?;
            d.click("[data-testid=rule-behavior] option[value=deny]")
                .await?;
            d.click("[data-testid=rule-matcher-kind] option[value=destination]")
                .await?;
            let pattern = d.wait_css("[data-testid=rule-recipient]").await?;
            pattern.click().await?;
            pattern.send_keys("reviewer-*").await?;
            d.click("[data-testid=rule-add]").await?;
            d.wait_text("[data-testid=rule-row]", "calls addressed to reviewer-*")
                .await?;

            d.click("[data-testid=explain-tool] option[value=agent_send]")
                .await?;
            set_args(
                d,
                r#"{"agent_id": "Reviewer-2", "message": "please review"}"#,
            )
            .await?;
            d.click("[data-testid=explain-run]").await?;
            d.wait_text("[data-testid=explain-behavior]", "deny")
                .await?;
            let code = d
                .find("[data-testid=explain-reason-code]")
                .await?
                .text()
                .await?;
            assert_eq!(code, "rule_deny");
            let rules = texts(d, "[data-testid=explain-rule]").await?;
            assert_eq!(rules.len(), 1, "{rules:?}");
            assert!(
                rules[0].contains("decides")
                    && rules[0].contains("destination 'reviewer-*' matches Reviewer-2"),
                "{rules:?}"
            );
            let destinations = d
                .find("[data-testid=explain-destinations]")
                .await?
                .text()
                .await?;
            assert_eq!(destinations, "Reviewer-2");
            scroll_to(d, "[data-testid=explain-result]").await?;
            d.screenshot("recipient-denied").await?;

            // Another agent is not addressed by the rule.
            set_args(d, r#"{"agent_id": "writer-1", "message": "please write"}"#).await?;
            d.click("[data-testid=explain-run]").await?;
            d.wait_text("[data-testid=explain-behavior]", "allow")
                .await?;
            assert_eq!(
                texts(d, "[data-testid=explain-no-rules]").await?,
                vec!["No rule matched this call.".to_string()]
            );
            Ok(())
        })
    });
}
