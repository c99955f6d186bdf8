//! `speak` in the real desktop app (issue 20 item 4) under Xvfb, driven through WebDriver,
//! against the scripted model server: the model calls `speak`, espeak-ng synthesizes the clip
//! (stored under the app's data directory), and the tool card shows a player whose `<audio>`
//! loads the clip through the app's `suzent-audio:` scheme (its metadata, so its length, is read
//! by the webview), while a script's fetch of the same URL is refused by the CSP. Screenshots land under
//! `$CARGO_TARGET_DIR/e2e-screenshots/speech_player/`.
//!
//! Skipped (with the reason printed) outside CI when the desktop prerequisites are missing, like
//! `desktop_e2e.rs`; build the UI first (`npm --prefix ui run build`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use suzent_tests::Turn;

const TEXT: &str = "Hello from Suzent. Your build is green.";

#[test]
#[ignore = "issue 20: WebKitGTK under Xvfb ends the player's <audio> with MEDIA_ERR_SRC_NOT_SUPPORTED (readyState 0) for a clip served by suzent-audio:; the cause (GStreamer sink or decoder, or the scheme's response) is not found yet"]
fn the_tool_card_of_speak_plays_the_stored_clip_through_the_app() {
    support::desktop_test_with_extra_config(
        "speech_player",
        vec![
            Turn::tool_call(
                "call_speak",
                "speak",
                json!({"text": TEXT, "voice": "en-us"}).to_string(),
            ),
            Turn::text("I said it out loud."),
        ],
        "tools = [\"SpeakTool\"]\n",
        |d| {
            Box::pin(async move {
                d.new_chat().await?;
                d.send("Say that the build is green").await?;
                d.wait_text("[data-testid=message-assistant]", "I said it out loud.")
                    .await?;
                let audio = d.wait_css("[data-testid=speech-audio]").await?;
                let src = audio.attr("src").await?.context("the player has a src")?;
                assert!(
                    src.starts_with("suzent-audio://localhost/") && src.ends_with(".wav"),
                    "{src}"
                );
                // The webview loads the clip's metadata through the scheme: its length is the
                // clip's (espeak-ng: a few seconds for this sentence).
                let deadline = Instant::now() + Duration::from_secs(30);
                let duration = loop {
                    let v: Value = d
                        .js(
                            "const a = document.querySelector('[data-testid=speech-audio]'); \
                             return [a.readyState, a.duration, a.error ? a.error.code : null];",
                        )
                        .await?;
                    if v[0].as_u64().unwrap_or(0) >= 1 {
                        break v[1].as_f64().unwrap_or(0.0);
                    }
                    if Instant::now() > deadline {
                        bail!("the audio element never loaded its metadata: {v}");
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                };
                assert!((1.0..10.0).contains(&duration), "duration {duration} s");
                d.click("[data-testid=tool-card] summary").await?;
                d.screenshot("player-on-tool-card").await?;

                // Scripts cannot read clips: the CSP allows the scheme for media only (not
                // connect-src), so a fetch of it fails.
                let fetched: Value = d
                    .js(&format!("return fetch({src:?}).then(r => 'status ' + r.status).catch(e => 'refused: ' + e.name);"))
                    .await?;
                assert!(
                    fetched.as_str().is_some_and(|s| s.starts_with("refused")),
                    "a script fetched the clip: {fetched}"
                );
                Ok(())
            })
        },
    );
}
