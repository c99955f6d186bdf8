//! End-to-end tests of the content views in the real desktop app (built with `custom-protocol`),
//! driven through WebDriver under Xvfb against the scripted model server: the chat's plan view
//! fed by `planning_update`, and the Memory page (core blocks, archive search, skills).
//!
//! Screenshots of each step land in `$CARGO_TARGET_DIR/e2e-screenshots/<test>/`. Skipped with
//! the reason outside CI when the desktop prerequisites are missing (see `support`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use std::time::Instant;
use support::{Desktop, UI_TIMEOUT, desktop_test};
use suzent_tests::{Item, Turn};

fn plan_update() -> Turn {
    Turn::tool_call(
        "call_plan1",
        "planning_update",
        json!({
            "action": "update",
            "goal": "Publish the release notes",
            "phases": [
                {"id": "collect", "title": "Collect the merged changes", "capabilities": ["shell"]},
                {"id": "draft", "title": "Draft the notes", "capabilities": ["filesystem"]},
                {"id": "review", "title": "Review them with the user"}
            ]
        })
        .to_string(),
    )
}

fn plan_advance_and_archive() -> Turn {
    Turn::tool_calls(vec![
        Item::tool_call(
            "call_plan2",
            "planning_update",
            json!({"action": "advance", "current_phase_id": "collect", "next_phase_id": "draft"})
                .to_string(),
        ),
        Item::tool_call(
            "call_arch1",
            "memory_archive",
            json!({"content": "The release notes for version 2.4 go out on Friday."}).to_string(),
        ),
    ])
}

/// The system prompt of a recorded OpenAI chat-completions request.
fn system_prompt(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Waits until the element's `value` property equals `want`.
async fn wait_value(d: &Desktop, css: &str, want: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + UI_TIMEOUT;
    loop {
        let value = d.wait_css(css).await?.prop("value").await?;
        if value.as_deref() == Some(want) {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{css} has value {value:?}, not {want:?}, after {UI_TIMEOUT:?}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    }
}

#[test]
fn the_plan_view_follows_planning_update_and_a_memory_block_edit_reaches_the_model() {
    desktop_test(
        "content_plan_and_memory",
        vec![
            plan_update(),
            Turn::text("I made a plan with three steps."),
            plan_advance_and_archive(),
            Turn::text("The changes are collected; drafting next."),
            Turn::text("Noted, Mira."),
        ],
        |d| {
            Box::pin(async move {
                d.new_chat().await?;
                assert_eq!(
                    d.count("[data-testid=plan-view]").await?,
                    0,
                    "no plan view before the model makes a plan"
                );

                // 1. The model calls planning_update with three steps: the view shows them.
                d.send("Plan the release notes").await?;
                d.wait_text(
                    "[data-testid=message-assistant]",
                    "I made a plan with three steps.",
                )
                .await?;
                d.wait_css("[data-testid=plan-view]").await?;
                // (WebKitWebDriver leaves ellipsized text out of an element's text: read the
                // goal's textContent.)
                let goal = d
                    .find("[data-testid=plan-goal]")
                    .await?
                    .prop("textContent")
                    .await?;
                assert_eq!(goal.as_deref(), Some("Publish the release notes"));
                for (i, title) in [
                    "Collect the merged changes",
                    "Draft the notes",
                    "Review them with the user",
                ]
                .iter()
                .enumerate()
                {
                    d.wait_text(&format!("[data-testid=plan-step-{i}]"), title)
                        .await?;
                }
                d.wait_css("[data-testid=plan-step-0][data-status=in_progress][aria-current=step]")
                    .await?;
                d.wait_css("[data-testid=plan-step-2][data-status=pending]")
                    .await?;
                d.wait_text("[data-testid=plan-progress]", "0/3 done")
                    .await?;
                d.screenshot("plan-created").await?;

                // 2. The model marks the first step done: the view updates live.
                d.send("The changes are collected").await?;
                d.wait_text(
                    "[data-testid=message-assistant]",
                    "The changes are collected; drafting next.",
                )
                .await?;
                d.wait_css("[data-testid=plan-step-0][data-status=completed]")
                    .await?;
                d.wait_css("[data-testid=plan-step-1][data-status=in_progress][aria-current=step]")
                    .await?;
                d.wait_text("[data-testid=plan-progress]", "1/3 done")
                    .await?;
                d.screenshot("plan-step-done").await?;

                // The plan is stored: a reloaded window reads it back (get_plan).
                d.client().refresh().await?;
                d.wait_for_app().await?;
                d.click("[data-testid=nav-chat]").await?;
                if d.count("[data-testid=plan-view]").await? == 0 {
                    d.click("[data-testid=chat-item]").await?;
                }
                d.wait_css("[data-testid=plan-step-1][data-status=in_progress]")
                    .await?;
                d.wait_text("[data-testid=plan-progress]", "1/3 done")
                    .await?;
                d.screenshot("plan-after-reload").await?;

                // 3. Edit a core memory block on the Memory page and save it.
                d.click("[data-testid=nav-memory]").await?;
                let block = d.wait_css("[data-testid=memory-block-user]").await?;
                d.wait_css("[data-testid=skill-skill-authoring]").await?;
                d.wait_text("[data-testid=skill-skill-authoring]", "built-in")
                    .await?;
                block.click().await?;
                block.send_keys("Name: Mira. Prefers metric units.").await?;
                d.click("[data-testid=memory-block-save-user]").await?;
                d.wait_text(".memory-block [role=status]", "Saved.").await?;
                d.screenshot("memory-block-saved").await?;

                // Skills: the built-in one is listed with its source and can be switched off.
                d.click("[data-testid=skill-toggle-skill-authoring]")
                    .await?;
                d.wait_css("[data-testid=skill-skill-authoring][data-enabled=false]")
                    .await?;
                d.client()
                    .execute(
                        // Scroll the page's own scroller (scrollIntoView would also shift
                        // the window's overflow-hidden root).
                        "const el = document.querySelector('[data-testid=skill-skill-authoring]'); \
                         let p = el.parentElement; \
                         while (p && p.scrollHeight <= p.clientHeight) p = p.parentElement; \
                         if (p) p.scrollTop += el.getBoundingClientRect().top \
                             - p.getBoundingClientRect().top - 200;",
                        Vec::new(),
                    )
                    .await?;
                d.screenshot("skill-disabled").await?;

                // The archive holds what the model stored; without an embedding model the
                // search says it is full-text only.
                let search = d.wait_css("[data-testid=memory-search]").await?;
                search.send_keys("release Friday").await?;
                d.click("[data-testid=memory-search-submit]").await?;
                d.wait_text(
                    "[data-testid=memory-hit]",
                    "The release notes for version 2.4 go out on Friday.",
                )
                .await?;
                d.wait_text("[data-testid=memory-hit-matched]", "text")
                    .await?;
                d.wait_text("[data-testid=memory-text-only]", "Full-text only")
                    .await?;
                // The page says so before any search too, and offers the local model.
                d.wait_text(
                    "[data-testid=memory-semantic-status]",
                    "Search by meaning: off: no embedding model yet",
                )
                .await?;
                d.wait_text(
                    "[data-testid=memory-download-model]",
                    "Download the local model (all-MiniLM-L6-v2, about 90 MB)",
                )
                .await?;
                d.screenshot("memory-saved-and-searched").await?;

                // Reopening the page shows the stored block.
                d.click("[data-testid=nav-chat]").await?;
                d.wait_css("[data-testid=composer-input]").await?;
                d.click("[data-testid=nav-memory]").await?;
                wait_value(
                    d,
                    "[data-testid=memory-block-user]",
                    "Name: Mira. Prefers metric units.",
                )
                .await?;
                d.wait_css("[data-testid=skill-skill-authoring][data-enabled=false]")
                    .await?;
                d.screenshot("memory-reopened").await?;

                // And the model sees it in the system prompt of the next turn.
                d.click("[data-testid=nav-chat]").await?;
                d.send("Hello again").await?;
                d.wait_text("[data-testid=message-assistant]", "Noted, Mira.")
                    .await?;
                let requests = d.requests();
                let last = requests.last().context("no model request")?;
                let prompt = system_prompt(last);
                assert!(
                    prompt.contains("<user>\nName: Mira. Prefers metric units.\n</user>"),
                    "the edited block is in the system prompt: {prompt}"
                );
                d.screenshot("memory-in-next-turn").await?;
                Ok(())
            })
        },
    );
}

#[test]
fn deleting_a_chat_removes_its_idle_time_summary_from_archival_memory() {
    support::desktop_test_with_extra_config(
        "content_summary_on_delete",
        vec![
            Turn::text("Noted: the vault code is 4711."),
            Turn::text("The user's vault code is 4711."),
        ],
        // A chat idle for one second counts as ended and is summarized by the sweep.
        "chat_summary_idle_secs = 1\n",
        |d| {
            Box::pin(async move {
                d.new_chat().await?;
                d.send("The vault code is 4711").await?;
                d.wait_text(
                    "[data-testid=message-assistant]",
                    "Noted: the vault code is 4711.",
                )
                .await?;
                let deadline = Instant::now() + UI_TIMEOUT;
                while d.requests().len() < 2 {
                    if Instant::now() > deadline {
                        bail!("no idle-time summary request after {UI_TIMEOUT:?}");
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
                }
                let requests = d.requests();
                assert!(
                    system_prompt(&requests[1]).starts_with("Summarize the following conversation"),
                    "the second request asks for the summary"
                );

                // The idle-time summary is in archival memory.
                d.click("[data-testid=nav-memory]").await?;
                let search = d.wait_css("[data-testid=memory-search]").await?;
                search.send_keys("vault code").await?;
                d.click("[data-testid=memory-search-submit]").await?;
                d.wait_text(
                    "[data-testid=memory-hit]",
                    // The chat was named after its first message (issue 19's automatic titles).
                    "Summary of chat 'The vault code is 4711': The user's vault code is 4711.",
                )
                .await?;
                d.screenshot("summary-found").await?;

                // Deleting the chat asks the model for nothing and removes its summary.
                d.click("[data-testid=nav-chat]").await?;
                if d.count("[data-testid=chat-delete]").await? == 0 {
                    d.click("[data-testid=chat-item]").await?;
                }
                d.click("[data-testid=chat-delete]").await?;
                d.screenshot("delete-confirm").await?;
                d.click("[data-testid=chat-delete-confirm]").await?;
                // The app opens a fresh chat in its place; the deleted one is gone from the list.
                d.wait_text_gone("[data-testid=chat-item]", "vault code")
                    .await?;
                assert_eq!(d.requests().len(), 2, "no summary request at deletion");

                d.click("[data-testid=nav-memory]").await?;
                let search = d.wait_css("[data-testid=memory-search]").await?;
                search.clear().await?;
                search.send_keys("vault code").await?;
                d.click("[data-testid=memory-search-submit]").await?;
                d.wait_text("[data-testid=memory-results]", "No memories match")
                    .await?;
                if d.count("[data-testid=memory-hit]").await? != 0 {
                    bail!("the deleted chat's summary is still in archival memory");
                }
                d.client()
                    .execute(
                        // Bring the results into view in the page's own scroller.
                        "const el = document.querySelector('[data-testid=memory-results]'); \
                         let p = el.parentElement; \
                         while (p && p.scrollHeight <= p.clientHeight) p = p.parentElement; \
                         if (p) p.scrollTop += el.getBoundingClientRect().top \
                             - p.getBoundingClientRect().top - 300;",
                        Vec::new(),
                    )
                    .await?;
                d.screenshot("summary-gone").await?;
                Ok(())
            })
        },
    );
}
