//! End-to-end test of the Schedules page in the real desktop app (built with
//! `custom-protocol`), driven through WebDriver under Xvfb against the scripted model server:
//! create a job with the builder, Run now, see the run in the job's history and open its chat.
//!
//! Screenshots of each step land in `$CARGO_TARGET_DIR/e2e-screenshots/<test>/`. Skipped with
//! the reason outside CI when the desktop prerequisites are missing (see `support`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::desktop_test;
use suzent_tests::Turn;

#[test]
fn a_job_made_on_the_schedules_page_runs_now_and_its_run_and_chat_are_shown() {
    desktop_test(
        "schedules_run_now",
        vec![Turn::text("Digest: three files changed since yesterday.")],
        |d| {
            Box::pin(async move {
                d.click("[data-testid=nav-schedules]").await?;
                // A new install lists only the built-in memory consolidation job.
                d.wait_css("[data-testid=schedule-row-dream]").await?;
                assert_eq!(d.count("[data-testid^=schedule-row-]").await?, 1);
                d.screenshot("schedules-builtin").await?;

                // The builder: weekdays at 07:30 in Europe/Berlin makes `30 7 * * 1-5` and
                // previews the next five times in that zone.
                d.click("[data-testid=schedule-new]").await?;
                d.wait_css("[data-testid=schedule-name]")
                    .await?
                    .send_keys("Morning digest")
                    .await?;
                d.find("[data-testid=schedule-prompt]")
                    .await?
                    .send_keys("Summarize what changed in the workspace.")
                    .await?;
                d.find("[data-testid=schedule-preset] option[value=weekdays]")
                    .await?
                    .click()
                    .await?;
                let time = d.wait_css("[data-testid=schedule-time]").await?;
                d.client()
                    .execute(
                        // A time input takes its value through the native setter plus an input
                        // event (what React listens to); typing into it differs per engine.
                        "const el = arguments[0]; \
                         const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set; \
                         set.call(el, '07:30'); el.dispatchEvent(new Event('input', { bubbles: true }));",
                        vec![serde_json::to_value(&time)?],
                    )
                    .await?;
                let zone = d.find("[data-testid=schedule-zone]").await?;
                zone.clear().await?;
                zone.send_keys("Europe/Berlin").await?;
                d.wait_text("[data-testid=schedule-pattern]", "30 7 * * 1-5")
                    .await?;
                d.wait_text("[data-testid=schedule-preview]", "in Europe/Berlin")
                    .await?;
                d.wait_text("[data-testid=schedule-preview] li", "07:30 (UTC+0")
                    .await?;
                let items = d.count("[data-testid=schedule-preview] li").await?;
                assert_eq!(items, 5, "five upcoming times");
                d.screenshot("builder-preview").await?;
                d.click("[data-testid=schedule-save]").await?;
                d.wait_text("[data-testid=schedule-list]", "Morning digest")
                    .await?;
                d.wait_text("[data-testid=schedule-list]", "30 7 * * 1-5")
                    .await?;
                d.screenshot("job-listed").await?;

                // Run now: the run appears in the history, completed, with its answer.
                const ROW: &str = "[data-job-name='Morning digest']";
                d.click(&format!("{ROW} [data-testid=schedule-run-now]"))
                    .await?;
                d.wait_text(&format!("{ROW} [data-testid=schedule-last]"), "Completed")
                    .await?;
                d.click(&format!("{ROW} [data-testid=schedule-history]"))
                    .await?;
                d.wait_css("[data-testid=run-row][data-status=completed]")
                    .await?;
                d.wait_text(
                    "[data-testid=run-row]",
                    "Digest: three files changed since yesterday.",
                )
                .await?;
                d.screenshot("run-history").await?;

                // Its chat: listed (marked scheduled), with the scheduled opening and the answer.
                d.click("[data-testid=run-open-chat]").await?;
                d.wait_text(
                    "[data-testid=message-assistant]",
                    "Digest: three files changed since yesterday.",
                )
                .await?;
                d.wait_text(
                    "[data-testid=message-user]",
                    "[scheduled run of \"Morning digest\"",
                )
                .await?;
                d.wait_css("[data-testid=chat-scheduled]").await?;
                d.wait_css("[data-testid=chat-scheduled-mark]").await?;
                d.screenshot("run-chat").await?;
                let request = d
                    .requests()
                    .into_iter()
                    .last()
                    .expect("the run asked the model");
                assert!(
                    request
                        .to_string()
                        .contains("Summarize what changed in the workspace."),
                    "{request}"
                );
                Ok(())
            })
        },
    );
}
