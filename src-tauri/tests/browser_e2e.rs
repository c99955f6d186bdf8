//! End-to-end test of Settings → Browser and the pairing dialog in the real desktop app
//! (WebDriver under Xvfb, see `desktop_e2e.rs`): the app runs the browser bridge on 127.0.0.1; a
//! WebSocket client with the shipped extension's `Origin` plays the extension. The page shows
//! "not installed", the dialog shows the extension's code, approving sends the extension its
//! credential and the page says connected, revoking closes the extension's connection at once,
//! and "Show the folder" unpacks a loadable extension. Screenshots under
//! `$CARGO_TARGET_DIR/e2e-screenshots/browser_settings/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::{Context, Result};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use support::desktop_test;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const SHIPPED: &str = "mkppgeflpnljcodnkejndlmnggmhgmme";

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn recv(ws: &mut Ws) -> Result<Value> {
    loop {
        match tokio::time::timeout(Duration::from_secs(20), ws.next()).await? {
            Some(Ok(Message::Text(t))) => return Ok(serde_json::from_str(t.as_str())?),
            Some(Ok(Message::Close(frame))) => anyhow::bail!("closed: {frame:?}"),
            Some(Ok(_)) => continue,
            other => anyhow::bail!("connection ended: {other:?}"),
        }
    }
}

#[test]
fn settings_browser_shows_the_states_and_the_pairing_dialog_approves_and_revokes() {
    desktop_test("browser_settings", vec![], |d| {
        Box::pin(async move {
            d.click("[data-testid=nav-settings]").await?;
            d.wait_text("[data-testid=browser-state]", "Not installed")
                .await?;
            d.screenshot("not-installed").await?;

            // The bridge's port, from the state file the running bridge refreshes.
            let state_file = d.home.path().join("suzent/data/browser/bridge.json");
            let mut port = None;
            for _ in 0..100 {
                if let Ok(text) = std::fs::read_to_string(&state_file)
                    && let Ok(v) = serde_json::from_str::<Value>(&text)
                {
                    port = v["port"].as_u64();
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let port = port.context("no bridge state file")?;
            let mut request = format!("ws://127.0.0.1:{port}/v1/bridge").into_client_request()?;
            request
                .headers_mut()
                .insert("origin", format!("chrome-extension://{SHIPPED}").parse()?);
            let (mut ws, _) = tokio_tungstenite::connect_async(request).await?;
            let hello = json!({"type": "hello", "protocol": 1, "browser": "Chromium", "browserVersion": "156.0",
                "extensionVersion": "0.1.0", "credential": null});
            ws.send(Message::Text(hello.to_string().into())).await?;
            ws.send(Message::Text(
                json!({"type": "pairRequest"}).to_string().into(),
            ))
            .await?;
            let pending = recv(&mut ws).await?;
            assert_eq!(pending["type"], "pairPending");
            let code = pending["code"].as_str().unwrap().to_string();

            d.wait_css("[data-testid=browser-pairing-dialog]").await?;
            d.wait_text("[data-testid=browser-pairing-code]", &code)
                .await?;
            d.wait_text("[data-testid=browser-pairing-extension]", SHIPPED)
                .await?;
            d.screenshot("pairing-dialog").await?;
            d.click("[data-testid=browser-pairing-approve]").await?;
            let paired = recv(&mut ws).await?;
            assert_eq!(paired["type"], "paired");
            assert!(paired["credential"].as_str().unwrap().starts_with("szb1_"));
            d.wait_gone("[data-testid=browser-pairing-dialog]").await?;
            d.wait_text("[data-testid=browser-state]", "Connected")
                .await?;
            d.wait_text("[data-testid=browser-pairing-state]", "connected")
                .await?;
            d.screenshot("connected").await?;

            d.click("[data-testid=browser-revoke]").await?;
            assert_eq!(recv(&mut ws).await?["type"], "revoked");
            d.wait_text("[data-testid=browser-state]", "Not installed")
                .await?;
            d.screenshot("revoked").await?;

            d.click("[data-testid=browser-show-folder]").await?;
            d.wait_text("[data-testid=browser-note]", "The extension folder:")
                .await?;
            let note = d.find("[data-testid=browser-note]").await?.text().await?;
            let folder = note
                .trim_start_matches("The extension folder:")
                .trim()
                .to_string();
            let manifest: Value = serde_json::from_str(&std::fs::read_to_string(
                std::path::Path::new(&folder).join("manifest.json"),
            )?)?;
            assert_eq!(manifest["manifest_version"], 3);
            assert!(
                std::path::Path::new(&folder)
                    .join("background.js")
                    .is_file()
            );
            d.screenshot("folder").await?;
            Ok(())
        })
    });
}
