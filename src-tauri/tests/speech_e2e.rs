//! `speak` in the real desktop app (issue 20 item 4) under Xvfb, driven through WebDriver,
//! against the scripted model server: the model calls `speak`, espeak-ng synthesizes the clip
//! (stored under the app's data directory), and the tool card shows a player that reads the clip
//! from the app's `suzent-audio:` scheme and plays it from a `blob:` URL (its metadata, so its
//! length, is decoded by the webview), while a path out of the chat's speech folder is refused.
//! Screenshots land under `$CARGO_TARGET_DIR/e2e-screenshots/speech_player/`.
//!
//! Skipped (with the reason printed) outside CI when the desktop prerequisites are missing, like
//! `desktop_e2e.rs`; build the UI first (`npm --prefix ui run build`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::bail;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use suzent_tests::Turn;

const TEXT: &str = "Hello from Suzent. Your build is green.";

#[test]
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
                // The player reads the clip from the app's audio scheme and plays it from a blob:
                // URL (WebKitGTK cannot play media from a custom scheme).
                let deadline = Instant::now() + Duration::from_secs(30);
                loop {
                    let src = audio.attr("src").await?.unwrap_or_default();
                    if src.starts_with("blob:") {
                        break;
                    }
                    if Instant::now() > deadline {
                        let error: Value = d
                            .js("return document.querySelector('[data-testid=speech-error]')?.textContent ?? null")
                            .await?;
                        bail!("the player never got its clip (src {src:?}, error {error})");
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                // The webview decodes the clip's metadata: its length is the clip's (espeak-ng:
                // a few seconds for this sentence).
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
                // It plays: the position moves (a click on the player's play button does the same).
                let played: Value = d
                    .js(
                        "const a = document.querySelector('[data-testid=speech-audio]'); \
                         return a.play().then(() => new Promise(r => setTimeout(() => r(['playing', a.currentTime, a.paused]), 1500)), \
                                              e => ['refused', e.name + ': ' + e.message]);",
                    )
                    .await?;
                assert_eq!(played[0], json!("playing"), "{played}");
                assert!(
                    played[1].as_f64().unwrap_or(0.0) > 0.2,
                    "the position did not move: {played}"
                );
                d.click("[data-testid=tool-card] summary").await?;
                d.screenshot("player-on-tool-card").await?;

                // The scheme serves only clips the runtime stored: a path out of the chat's
                // speech folder is refused, even to the app's own window.
                let escape: Value = d
                    .js("return fetch('suzent-audio://localhost/' + encodeURIComponent('..') + '/' + encodeURIComponent('suzent.db')) \
                         .then(r => 'status ' + r.status).catch(e => 'refused: ' + e.name);")
                    .await?;
                assert_eq!(escape, json!("status 404"), "{escape}");
                Ok(())
            })
        },
    );
}
