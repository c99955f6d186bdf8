//! End-to-end tests of issue 13 ("turns that survive real models and real use") in the real app
//! under Xvfb through WebDriver, against the scripted model server: a failed turn leaves the
//! composer usable with the draft kept, offers Retry and is still shown after a restart; Stop
//! keeps the partial answer, also after a restart. Screenshots of each step:
//! `$CARGO_TARGET_DIR/e2e-screenshots/<test>/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::Context;
use serde_json::json;
use std::time::Duration;
use support::desktop_test;
use suzent_tests::{Chunking, Turn};

const ENTER: &str = "\u{E007}";

/// The user bubbles and assistant texts of the open chat, in order.
const TRANSCRIPT: &str = "return [...document.querySelectorAll('[data-testid=message-user] .bubble, [data-testid=message-assistant] .markdown')].map(e => e.textContent.trim())";

#[test]
fn a_failed_turn_leaves_the_composer_usable_with_the_draft_kept() {
    desktop_test(
        "failed_turn",
        vec![
            Turn::error(
                400,
                r#"{"error":{"message":"scripted bad request: the prompt was refused","type":"invalid_request_error"}}"#,
            )
            .delayed(2500),
            Turn::text("Retried answer."),
            Turn::text("Answer to the draft."),
        ],
        |d| {
            Box::pin(async move {
                d.wait_css("[data-testid=composer-input]").await?;
                d.send("First question").await?;
                // While the turn runs, the user starts the next message.
                d.wait_css("[data-testid=composer-stop]").await?;
                d.find("[data-testid=composer-input]")
                    .await?
                    .send_keys("draft typed while waiting")
                    .await?;
                d.wait_text(
                    "[data-testid=error-banner][data-scope=turn]",
                    "scripted bad request",
                )
                .await?;
                d.wait_css("[data-testid=composer-send]").await?;
                d.screenshot("turn-failed").await?;
                let draft = d
                    .js("return document.querySelector('[data-testid=composer-input]').value")
                    .await?;
                assert_eq!(draft, json!("draft typed while waiting"));
                // Retry asks the model again without storing the message twice.
                d.click("[data-testid=turn-retry]").await?;
                d.wait_text("[data-testid=message-assistant]", "Retried answer.")
                    .await?;
                // The composer still works: the draft is sent as the next message.
                d.find("[data-testid=composer-input]")
                    .await?
                    .send_keys(ENTER)
                    .await?;
                d.wait_text("[data-testid=message-assistant]", "Answer to the draft.")
                    .await?;
                d.screenshot("after-retry-and-draft").await?;
                let shown = d.js(TRANSCRIPT).await?;
                assert_eq!(
                    shown,
                    json!([
                        "First question",
                        "Retried answer.",
                        "draft typed while waiting",
                        "Answer to the draft."
                    ])
                );
                // After a restart the failure is still shown, once, after its turn.
                d.restart().await?;
                if d.count("[data-testid=message-assistant]").await? == 0 {
                    d.click("[data-testid=chat-item]").await?;
                }
                d.wait_text(
                    "[data-testid=error-banner][data-scope=turn]",
                    "scripted bad request",
                )
                .await?;
                d.screenshot("failure-after-restart").await?;
                assert_eq!(d.count("[data-testid=error-banner][data-scope=turn]").await?, 1);
                Ok(())
            })
        },
    );
}

#[test]
fn stop_keeps_the_partial_answer_also_after_a_restart() {
    let story = format!(
        "Once upon a time {}THE END",
        "there was a very long story that went on and on. ".repeat(12)
    );
    desktop_test(
        "stop_partial",
        vec![
            Turn::text(story)
                .chunked(Chunking::Fragments { size: 12 })
                .delayed(120),
            Turn::text("A short answer."),
        ],
        |d| {
            Box::pin(async move {
                d.wait_css("[data-testid=composer-input]").await?;
                d.send("Tell me a long story").await?;
                d.wait_text("[data-testid=message-assistant]", "very long story")
                    .await?;
                d.click("[data-testid=composer-stop]").await?;
                d.wait_css("[data-testid=composer-send]").await?;
                d.screenshot("stopped").await?;
                let partial = |v: serde_json::Value| -> anyhow::Result<String> {
                    Ok(v.as_array()
                        .and_then(|a| a.get(1))
                        .and_then(|t| t.as_str())
                        .context("an assistant message after the user's")?
                        .to_string())
                };
                let stopped = partial(d.js(TRANSCRIPT).await?)?;
                assert!(stopped.starts_with("Once upon a time"), "{stopped}");
                assert!(!stopped.contains("THE END"), "{stopped}");
                // Nothing more arrives after the stop.
                tokio::time::sleep(Duration::from_millis(1500)).await;
                assert_eq!(partial(d.js(TRANSCRIPT).await?)?, stopped);

                d.restart().await?;
                if d.count("[data-testid=message-assistant]").await? == 0 {
                    d.click("[data-testid=chat-item]").await?;
                }
                d.wait_text("[data-testid=message-assistant]", "Once upon a time")
                    .await?;
                d.screenshot("after-restart").await?;
                let kept = partial(d.js(TRANSCRIPT).await?)?;
                assert!(
                    kept.starts_with(&stopped[..stopped.len().min(60)]),
                    "{kept}"
                );
                assert!(!kept.contains("THE END"), "{kept}");
                d.send("And a short one?").await?;
                d.wait_text("[data-testid=message-assistant]", "A short answer.")
                    .await?;
                Ok(())
            })
        },
    );
}
