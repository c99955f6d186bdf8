//! Settings -> Devices in the real desktop app (WebDriver under Xvfb, see `desktop_e2e.rs`):
//! the app shows a pairing code, a second install (a runtime with its own home in this test
//! process, relays off, direct loopback addresses) enters it; both show the same words, the user
//! confirms in the window, and the device is listed with its name, platform and fingerprint and
//! goes online; Revoke in the window closes the other install's connection. Screenshots of each
//! step land under `$CARGO_TARGET_DIR/e2e-screenshots/devices_pairing/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::{Context, Result, bail};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{Desktop, desktop_test_with_extra_config};
use suzent_core::Config;
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{DeviceState, Paths, Runtime, RuntimeOptions};

const DEVICES: &str =
    "[devices]\nname = \"Desktop A\"\nrelay = false\ndiscovery = false\nbind = [\"127.0.0.1:0\"]\n";

/// Scrolls the page so `css` is in view (the Devices card sits below the other settings).
async fn show(d: &Desktop, css: &str) -> Result<()> {
    d.wait_css(css).await?;
    d.client()
        .execute(
            "const e = document.querySelector(arguments[0]); if (e) e.scrollIntoView({block: 'center'}); return true;",
            vec![serde_json::Value::String(css.into())],
        )
        .await
        .with_context(|| format!("scrolling {css} into view"))?;
    Ok(())
}

async fn text_of(d: &Desktop, css: &str) -> Result<String> {
    Ok(d.wait_css(css).await?.text().await?)
}

async fn other_install(dir: &std::path::Path) -> Result<Runtime> {
    let mut config = Config::default();
    config.devices.name = Some("Phone B".into());
    config.devices.relay = false;
    config.devices.discovery = false;
    config.devices.bind = vec!["127.0.0.1:0".into()];
    let rt = Runtime::open(RuntimeOptions {
        paths: Paths::under(dir),
        keys: Arc::new(StaticKeys::new()),
        config: Some(config),
    })
    .await?;
    rt.devices().start().await?;
    Ok(rt)
}

#[test]
fn pairing_from_settings_shows_the_same_words_lists_the_device_and_revoke_closes_it() {
    desktop_test_with_extra_config("devices_pairing", vec![], DEVICES, |d| {
        Box::pin(async move {
            d.click("[data-testid=nav-settings]").await?;
            show(d, "[data-testid=devices-settings]").await?;
            d.wait_text("[data-testid=devices-this]", "Desktop A")
                .await?;
            d.wait_css("[data-testid=devices-empty]").await?;
            d.screenshot("devices-empty").await?;

            d.click("[data-testid=devices-pair]").await?;
            let code = text_of(d, "[data-testid=devices-pair-code]").await?;
            if !code.starts_with("sz1-") {
                bail!("unexpected code {code:?}");
            }
            show(d, "[data-testid=devices-pair-panel]").await?;
            d.screenshot("code-and-qr").await?;

            // The other install enters the code.
            let other_home = tempfile::tempdir()?;
            let b = other_install(other_home.path()).await?;
            let join = b.devices().join(&code).await?;
            d.wait_css("[data-testid=devices-pair-words]").await?;
            let shown = text_of(d, "[data-testid=devices-pair-words]").await?;
            let shown: Vec<String> = shown.split_whitespace().map(str::to_string).collect();
            if shown != join.words {
                bail!(
                    "the window shows {shown:?}, the other install {:?}",
                    join.words
                );
            }
            d.wait_text("[data-testid=devices-pair-peer]", "Phone B")
                .await?;
            show(d, "[data-testid=devices-pair-words]").await?;
            d.screenshot("words").await?;

            d.click("[data-testid=devices-pair-confirm]").await?;
            let paired = b.devices().finish_join(true).await?;
            if paired.map(|r| r.name) != Some("Desktop A".to_string()) {
                bail!("the other install did not store the pairing");
            }
            let b_me = b.devices().this_device().await?;
            let row = format!("[data-testid=devices-row-{}]", b_me.short_id);
            d.wait_text(&row, "Phone B").await?;
            d.wait_text(&row, &b_me.fingerprint).await?;
            d.wait_text(&row, "linux").await?;
            // The other install dials the app; the row goes online.
            d.wait_text(
                &format!("[data-testid=devices-state-{}]", b_me.short_id),
                "online",
            )
            .await?;
            show(d, &row).await?;
            d.screenshot("paired-online").await?;

            // Revoke in the window: the other install's connection is closed with "revoked".
            d.click(&format!("[data-testid=devices-revoke-{}]", b_me.short_id))
                .await?;
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let list = b.devices().list().await?;
                if list
                    .first()
                    .is_some_and(|v| v.device.state == DeviceState::RevokedByPeer)
                {
                    break;
                }
                if Instant::now() > deadline {
                    bail!("the other install never saw the revocation: {list:?}");
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            d.wait_text(
                &format!("[data-testid=devices-state-{}]", b_me.short_id),
                "revoked",
            )
            .await?;
            d.screenshot("revoked").await?;
            b.shutdown().await;
            Ok(())
        })
    });
}
