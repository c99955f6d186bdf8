//! End-to-end tests of the tray's approval count and Start at login in the real desktop app
//! (WebDriver under Xvfb, see `support`). The tray's menu cannot be clicked through WebDriver;
//! its state is read through the app's `tray_status` command, which is what the icon shows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::{Context, Result, bail};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Instant;
use support::{Desktop, UI_TIMEOUT, desktop_test};
use suzent_tests::Turn;

/// Calls an app command from the window, as the UI does.
async fn invoke(d: &Desktop, command: &str) -> Result<Value> {
    let value = d
        .client()
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             window.__TAURI_INTERNALS__.invoke(arguments[0], {}) \
               .then((v) => done({ ok: v }), (e) => done({ err: e }));",
            vec![Value::String(command.into())],
        )
        .await
        .with_context(|| format!("invoking {command}"))?;
    match value.get("ok") {
        Some(ok) => Ok(ok.clone()),
        None => bail!("{command} failed: {value}"),
    }
}

/// Waits until the tray's count of waiting approvals is `n`.
async fn wait_tray_count(d: &Desktop, n: u64) -> Result<Value> {
    let deadline = Instant::now() + UI_TIMEOUT;
    loop {
        let status = invoke(d, "tray_status").await?;
        if status["pendingApprovals"] == json!(n) {
            return Ok(status);
        }
        if Instant::now() > deadline {
            bail!("the tray still shows {status} after {UI_TIMEOUT:?}, expected {n} approvals");
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[test]
fn the_tray_count_follows_an_approval() {
    desktop_test(
        "tray_count",
        vec![
            Turn::tool_call(
                "call_t1",
                "write_file",
                json!({"file_path": "tray.txt", "content": "hi"}).to_string(),
            ),
            Turn::text("Wrote tray.txt."),
        ],
        |d| {
            Box::pin(async move {
                let status = wait_tray_count(d, 0).await?;
                assert_eq!(
                    (status["available"].clone(), status["label"].clone()),
                    (json!(true), json!("Suzent"))
                );
                d.new_chat().await?;
                d.send("Write tray.txt").await?;
                d.wait_css("[data-testid=approval-dialog]").await?;
                let status = wait_tray_count(d, 1).await?;
                assert_eq!(status["label"], json!("Suzent: 1 approval waiting"));
                d.screenshot("approval-waiting").await?;
                d.click("[data-testid=approval-action-allow_once]").await?;
                d.wait_text("[data-testid=message-assistant]", "Wrote tray.txt.")
                    .await?;
                let status = wait_tray_count(d, 0).await?;
                assert_eq!(status["label"], json!("Suzent"));
                d.screenshot("approved").await?;
                Ok(())
            })
        },
    );
}

/// The autostart entries under the test's XDG config folder and `~/.config`.
fn autostart_entries(home: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in [
        home.join("xdg-config/autostart"),
        home.join(".config/autostart"),
    ] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            found.push(entry.path());
        }
    }
    found
}

#[test]
fn start_at_login_is_off_by_default_and_writes_then_removes_the_autostart_entry() {
    desktop_test("autostart", Vec::new(), |d| {
        Box::pin(async move {
            d.click("[data-testid=nav-settings]").await?;
            d.wait_css("[data-testid=settings-desktop]").await?;
            d.js("document.querySelector('[data-testid=settings-desktop]').scrollIntoView({block: 'start'}); return true;")
                .await?;
            assert_eq!(invoke(d, "autostart_enabled").await?, json!(false));
            assert_eq!(autostart_entries(d.home.path()), Vec::<PathBuf>::new());
            d.screenshot("autostart-off").await?;

            d.click("[data-testid=autostart-toggle]").await?;
            let deadline = Instant::now() + UI_TIMEOUT;
            while autostart_entries(d.home.path()).is_empty() {
                if Instant::now() > deadline {
                    bail!("no autostart entry after turning Start at login on");
                }
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            let entries = autostart_entries(d.home.path());
            assert_eq!(entries.len(), 1, "{entries:?}");
            let text = std::fs::read_to_string(&entries[0])?;
            let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_suzent-desktop"))?;
            assert!(
                text.contains("[Desktop Entry]") && text.contains(&exe.display().to_string()),
                "the entry starts this app: {text}"
            );
            assert_eq!(invoke(d, "autostart_enabled").await?, json!(true));
            d.screenshot("autostart-on").await?;

            d.click("[data-testid=autostart-toggle]").await?;
            let deadline = Instant::now() + UI_TIMEOUT;
            while !autostart_entries(d.home.path()).is_empty() {
                if Instant::now() > deadline {
                    bail!("the autostart entry is still there after turning Start at login off");
                }
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            assert_eq!(invoke(d, "autostart_enabled").await?, json!(false));
            Ok(())
        })
    });
}
