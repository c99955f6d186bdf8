//! End-to-end tests of issue 19 ("the desktop app as people expect it") in the real app under
//! Xvfb through WebDriver, against the scripted model server: first run without a Secret
//! Service, approvals decided from the dialog with the keyboard, who allowed each call, events
//! instead of user bubbles, chat search, Simplified Chinese, a small window, and navigation that
//! never leaves the app. Screenshots of each step: `$CARGO_TARGET_DIR/e2e-screenshots/<test>/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::{Context, bail};
use serde_json::json;
use std::time::{Duration, Instant};
use support::{UI_TIMEOUT, desktop_test, desktop_test_with_config_and_turns};
use suzent_tests::Turn;

const TAB: &str = "\u{E004}";
const SHIFT_TAB: &str = "\u{E008}\u{E004}";
const ESCAPE: &str = "\u{E00C}";
const ENTER: &str = "\u{E007}";

fn write_call(id: &str, path: &str, content: &str) -> Turn {
    Turn::tool_call(
        id,
        "write_file",
        json!({"file_path": path, "content": content}).to_string(),
    )
}

#[test]
fn a_new_user_without_a_secret_service_gets_from_first_start_to_a_finished_turn() {
    // No default model and no workspace: the first-run screen. The harness runs the app in a
    // private D-Bus session with no keychain daemon, and OPENAI_API_KEY set.
    let config = "[providers.openai]\nbase_url = \"{openai_base}\"\n";
    desktop_test_with_config_and_turns(
        "first_run_no_secret_service",
        vec![Turn::text("OK"), Turn::text("Hello! Ready when you are.")],
        config,
        |d| {
            Box::pin(async move {
                d.wait_css("[data-testid=first-run]").await?;
                d.screenshot("first-run").await?;
                d.find("[data-testid=first-run-key]")
                    .await?
                    .send_keys("sk-typed-by-the-user")
                    .await?;
                d.click("[data-testid=first-run-load-models]").await?;
                // The keychain cannot store it: the app says why and offers the way out.
                d.wait_css("[data-testid=first-run-keychain-problem]")
                    .await?;
                d.screenshot("keychain-unavailable").await?;
                d.wait_text("[data-testid=first-run-keychain-problem]", "keychain")
                    .await?;
                d.click("[data-testid=first-run-use-env]").await?;
                d.wait_text("[data-testid=first-run-key-status]", "OPENAI_API_KEY")
                    .await?;
                d.click("[data-testid=first-run-load-models]").await?;
                d.wait_css("[data-testid=first-run-model-list]").await?;
                d.click("[data-testid=first-run-model-list] option[value=scripted-small]")
                    .await?;
                d.click("[data-testid=first-run-test]").await?;
                d.wait_text(
                    "[data-testid=first-run-test-result]",
                    "openai/scripted-small",
                )
                .await?;
                d.screenshot("model-listed-and-tested").await?;
                let workspace = d.workspace().display().to_string();
                d.find("[data-testid=first-run-workspace]")
                    .await?
                    .send_keys(&workspace)
                    .await?;
                d.click("[data-testid=first-run-save]").await?;
                // The first chat is open and its composer focused: no "No chat selected".
                d.wait_css("[data-testid=composer-input]").await?;
                let deadline = Instant::now() + UI_TIMEOUT;
                loop {
                    let focused = d
                        .js("return document.activeElement?.dataset?.testid ?? null")
                        .await?;
                    if focused == json!("composer-input") {
                        break;
                    }
                    if Instant::now() > deadline {
                        bail!("the composer is not focused after the first run: {focused}");
                    }
                    tokio::time::sleep(Duration::from_millis(150)).await;
                }
                d.screenshot("first-chat-open").await?;
                d.send("Are you there?").await?;
                d.wait_text("[data-testid=message-assistant]", "Ready when you are")
                    .await?;
                d.screenshot("finished-turn").await?;
                let requests = d.requests();
                assert_eq!(requests.len(), 2, "one connection test, one turn");
                assert_eq!(requests[1]["model"], "scripted-small");
                let saved =
                    std::fs::read_to_string(d.home.path().join("suzent/config/config.toml"))?;
                assert!(
                    saved.contains("default_model = \"openai/scripted-small\""),
                    "{saved}"
                );
                assert!(saved.contains(&workspace), "{saved}");
                assert!(
                    !saved.contains("sk-typed"),
                    "no key in the config file: {saved}"
                );
                Ok(())
            })
        },
    );
}

#[test]
fn the_approval_dialog_shows_the_diff_and_the_command_and_is_operated_by_keyboard() {
    desktop_test(
        "approval_keyboard",
        vec![
            write_call("call_w1", "notes.txt", "first line\nsecond line\n"),
            Turn::text("Understood, I will not write it."),
            Turn::tool_call(
                "call_c1",
                "run_command",
                json!({"content": "ls -la && touch made-by-agent.txt"}).to_string(),
            ),
            Turn::text("Done."),
        ],
        |d| {
            Box::pin(async move {
                d.wait_css("[data-testid=composer-input]").await?;
                d.send("Write my notes").await?;
                d.wait_css("[data-testid=approval-dialog][aria-modal=true]")
                    .await?;
                d.wait_text("[data-testid=approval-diff]", "second line")
                    .await?;
                d.screenshot("write-diff").await?;
                // Tab and Shift+Tab never leave the dialog.
                for keys in [TAB, TAB, TAB, TAB, TAB, TAB, TAB, TAB, SHIFT_TAB, SHIFT_TAB] {
                    d.keys(keys).await?;
                    let inside = d
                        .js("return !!document.activeElement.closest('[data-testid=approval-dialog]')")
                        .await?;
                    assert_eq!(inside, json!(true), "focus left the dialog after {keys:?}");
                }
                // Esc rejects.
                d.keys(ESCAPE).await?;
                d.wait_text("[data-testid=message-assistant]", "I will not write it")
                    .await?;
                assert!(!d.workspace().join("notes.txt").exists());
                d.send("Now run the command").await?;
                d.wait_text(
                    "[data-testid=approval-command]",
                    "ls -la && touch made-by-agent.txt",
                )
                .await?;
                d.wait_css("[data-testid=approval-segment]").await?;
                assert_eq!(d.count("[data-testid=approval-segment]").await?, 2);
                d.screenshot("command-segments").await?;
                // The first button (allow once) has the focus: Enter allows.
                d.keys(ENTER).await?;
                d.wait_text("[data-testid=message-assistant]", "Done.")
                    .await?;
                assert!(d.workspace().join("made-by-agent.txt").exists());
                d.screenshot("allowed-by-keyboard").await?;
                Ok(())
            })
        },
    );
}

#[test]
fn each_tool_card_says_who_allowed_the_call_and_how() {
    desktop_test(
        "allow_labels",
        vec![
            Turn::tool_call(
                "call_r1",
                "read_file",
                json!({"file_path": "seed.txt"}).to_string(),
            ),
            write_call("call_w1", "a.txt", "a"),
            write_call("call_w2", "b.txt", "b"),
            write_call("call_w3", "c.txt", "c"),
            Turn::text("All written."),
        ],
        |d| {
            Box::pin(async move {
                std::fs::write(d.workspace().join("seed.txt"), "seed")?;
                d.wait_css("[data-testid=composer-input]").await?;
                d.send("Read and write").await?;
                d.click("[data-testid=approval-action-allow_once]").await?;
                d.click("[data-testid=approval-action-allow_session]")
                    .await?;
                d.wait_text("[data-testid=message-assistant]", "All written.")
                    .await?;
                for summary in d
                    .client()
                    .find_all(fantoccini::Locator::Css("[data-testid=tool-card] summary"))
                    .await?
                {
                    summary.click().await?;
                }
                d.screenshot("labels").await?;
                let texts: Vec<String> = serde_json::from_value(
                    d.js("return [...document.querySelectorAll('[data-testid=tool-card]')].map(c => c.querySelector('[data-testid=tool-decision]')?.textContent ?? '')")
                        .await?,
                )?;
                assert_eq!(texts.len(), 4, "{texts:?}");
                assert!(
                    texts[0].starts_with("Allowed: read-only in Default mode"),
                    "{texts:?}"
                );
                assert!(texts[1].starts_with("Allowed by you, once"), "{texts:?}");
                assert!(
                    texts[2].starts_with("Allowed by you for this chat"),
                    "{texts:?}"
                );
                assert!(texts[3].starts_with("Allowed by rule"), "{texts:?}");
                assert!(
                    texts.iter().all(|t| !t.contains("full access")),
                    "full access is only said in full access: {texts:?}"
                );
                Ok(())
            })
        },
    );
}

#[test]
fn a_finished_background_command_is_shown_as_an_event_not_as_a_user_message() {
    desktop_test(
        "background_event",
        vec![
            Turn::tool_call(
                "call_s1",
                "start_command",
                json!({"content": "echo background-finished-marker"}).to_string(),
            ),
            Turn::text("Started it."),
            Turn::text("The command finished."),
        ],
        |d| {
            Box::pin(async move {
                d.wait_css("[data-testid=composer-input]").await?;
                d.click("[data-testid=mode-switch]").await?;
                d.click("[data-testid=mode-switch] option[value=full_access]")
                    .await?;
                d.send("Start it in the background").await?;
                d.wait_text(
                    "[data-testid=message-event][data-kind=command_finished]",
                    "background-finished-marker",
                )
                .await?;
                d.screenshot("command-event").await?;
                let bubbles = d
                    .js("return [...document.querySelectorAll('[data-testid=message-user] .bubble')].map(e => e.textContent)")
                    .await?;
                assert_eq!(bubbles, json!(["Start it in the background"]));
                Ok(())
            })
        },
    );
}

#[test]
fn a_chat_is_found_by_a_word_from_its_third_message() {
    desktop_test(
        "chat_search",
        vec![
            Turn::text("Noted."),
            Turn::text("Pomegranates are in season."),
            Turn::text("Hi."),
        ],
        |d| {
            Box::pin(async move {
                d.wait_css("[data-testid=composer-input]").await?;
                d.send("Let us talk about fruit").await?;
                d.wait_text("[data-testid=message-assistant]", "Noted.")
                    .await?;
                d.send("What about the pomegranate harvest?").await?;
                d.wait_text("[data-testid=message-assistant]", "in season")
                    .await?;
                let wanted = d
                    .find("[data-testid=chat-item][class*=active]")
                    .await?
                    .attr("data-chat-id")
                    .await?
                    .context("the active chat has an id")?;
                d.new_chat().await?;
                d.send("Something else").await?;
                d.wait_text("[data-testid=message-assistant]", "Hi.")
                    .await?;
                d.keys("\u{E009}k").await?;
                d.wait_css("[data-testid=search-input]")
                    .await?
                    .send_keys("harvest")
                    .await?;
                d.wait_css("[data-testid=search-hit]").await?;
                d.screenshot("search-results").await?;
                let hits = d
                    .js("return [...document.querySelectorAll('[data-testid=search-hit]')].map(e => e.dataset.chatId)")
                    .await?;
                assert_eq!(hits, json!([wanted.clone()]));
                d.click("[data-testid=search-hit]").await?;
                d.wait_text("[data-testid=message-user]", "pomegranate harvest")
                    .await?;
                d.screenshot("found-chat-open").await?;
                Ok(())
            })
        },
    );
}

#[test]
fn the_whole_window_switches_to_simplified_chinese() {
    desktop_test("zh_cn", vec![], |d| {
        Box::pin(async move {
            d.click("[data-testid=nav-settings]").await?;
            d.click("[data-testid=settings-language] option[value=zh-CN]")
                .await?;
            d.wait_text("h1", "设置").await?;
            d.screenshot("settings-zh").await?;
            d.click("[data-testid=nav-chat]").await?;
            d.wait_text("[data-testid=composer-send]", "发送").await?;
            d.wait_text("[data-testid=nav-permissions]", "权限").await?;
            d.screenshot("chat-zh").await?;
            Ok(())
        })
    });
}

#[test]
fn at_800_by_600_the_chat_stays_readable_with_the_canvas_open() {
    let surface = json!({
        "action": "render",
        "surface_id": "report",
        "target": "canvas",
        "title": "Build report",
        "root": "t",
        "components": [{"id": "t", "component": {"Text": {"text": {"literalString": "All 12 checks passed."}}}}],
    });
    desktop_test(
        "small_window",
        vec![
            Turn::tool_call("call_u1", "render_ui", surface.to_string()),
            Turn::text("The report is on the canvas."),
        ],
        |d| {
            Box::pin(async move {
                d.client().set_window_size(800, 600).await?;
                d.wait_css("[data-testid=composer-input]").await?;
                d.send("Show the report").await?;
                d.wait_text("[data-testid=canvas-panel]", "All 12 checks passed.")
                    .await?;
                d.wait_text("[data-testid=message-assistant]", "on the canvas")
                    .await?;
                d.screenshot("canvas-open-800x600").await?;
                let widths = d
                    .js("return { chat: document.querySelector('.chat').getBoundingClientRect().width, window: innerWidth, overlay: document.querySelector('[data-testid=canvas-panel]').dataset.overlay }")
                    .await?;
                assert_eq!(widths["overlay"], json!("true"), "{widths}");
                assert!(widths["chat"].as_f64().unwrap_or(0.0) >= 560.0, "{widths}");
                Ok(())
            })
        },
    );
}

#[test]
fn a_pending_approval_survives_a_window_reload_and_shows_once() {
    desktop_test(
        "approval_reopen",
        vec![
            write_call("call_w1", "kept.txt", "kept"),
            Turn::text("Wrote it."),
        ],
        |d| {
            Box::pin(async move {
                d.wait_css("[data-testid=composer-input]").await?;
                d.send("Write kept.txt").await?;
                d.wait_css("[data-testid=approval-dialog]").await?;
                d.client().refresh().await?;
                d.wait_css("[data-testid=approval-dialog]").await?;
                tokio::time::sleep(Duration::from_millis(800)).await;
                assert_eq!(d.count("[data-testid=approval-dialog]").await?, 1);
                d.screenshot("after-reload").await?;
                d.click("[data-testid=approval-action-allow_once]").await?;
                d.wait_text("[data-testid=message-assistant]", "Wrote it.")
                    .await?;
                assert_eq!(
                    std::fs::read_to_string(d.workspace().join("kept.txt"))?,
                    "kept"
                );
                Ok(())
            })
        },
    );
}

#[test]
fn the_main_window_never_navigates_to_another_origin() {
    desktop_test("navigation_guard", vec![], |d| {
        Box::pin(async move {
            d.wait_css("[data-testid=chat-list]").await?;
            let before = d.js("return location.origin").await?;
            d.js("location.href = 'https://evil.test/'; return true")
                .await?;
            tokio::time::sleep(Duration::from_secs(2)).await;
            assert_eq!(d.js("return location.origin").await?, before);
            d.wait_css("[data-testid=chat-list]").await?;
            // No IPC bridge is exposed to page scripts as a global.
            assert_eq!(
                d.js("return typeof window.__TAURI__").await?,
                json!("undefined")
            );
            d.screenshot("still-in-the-app").await?;
            let logs = d.logs();
            assert!(
                logs.contains("navigation to another origin refused"),
                "{logs}"
            );
            Ok(())
        })
    });
}
