//! The first run of the real desktop app with a local model already in the models folder and no
//! account: "Use a local model (no account)" → a chat → a finished turn answered by the model
//! in process (SmolLM2-135M-Instruct, a GGUF from PyPI; see scripts/setup-tests), shown with no
//! tool-call markup.
//!
//! Screenshots of each step land in `$CARGO_TARGET_DIR/e2e-screenshots/<test>/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::{Context, bail};
use std::time::{Duration, Instant};
use support::desktop_test_seeded;

const MODEL_ID: &str = "SmolLM2-135M-Instruct.Q4_1";

#[test]
fn first_run_uses_the_local_model_already_present_and_finishes_a_turn() {
    // No default model, no provider: what a fresh install looks like.
    let config =
        "tools = []\n\n[providers.local]\ncontext_size = 2048\nthreads = 2\nmax_tokens = 32\n";
    let seed: support::Seed = Box::new(|home: &std::path::Path| {
        let models = home.join("data/models/gguf");
        std::fs::create_dir_all(&models)?;
        let target = models.join(format!("{MODEL_ID}.gguf"));
        if std::fs::hard_link(suzent_tests::smollm2_gguf(), &target).is_err() {
            std::fs::copy(suzent_tests::smollm2_gguf(), &target)?;
        }
        Ok(())
    });
    desktop_test_seeded("first_run_local_model", config, seed, |d| {
        Box::pin(async move {
            d.wait_css("[data-testid=first-run]").await?;
            d.wait_text("[data-testid=use-local-model]", "Smollm2 135M")
                .await?;
            d.screenshot("first-run-offers-the-local-model").await?;
            d.click("[data-testid=use-local-model]").await?;
            d.wait_gone("[data-testid=first-run]").await?;
            d.new_chat().await?;
            d.screenshot("chat-with-the-local-model").await?;
            d.send("Say hello.").await?;
            // The model loads and answers on the CPU; the turn ends with its text.
            let deadline = Instant::now() + Duration::from_secs(240);
            loop {
                let answered = d.count("[data-testid=message-assistant]").await? > 0;
                let running = d.count("[data-testid=composer-stop]").await? > 0;
                if answered && !running {
                    break;
                }
                if Instant::now() > deadline {
                    bail!("the local model did not finish a turn within 240 s");
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            let answer = d
                .find("[data-testid=message-assistant]")
                .await?
                .text()
                .await
                .context("reading the answer")?;
            if answer.trim().is_empty() {
                bail!("the answer is empty");
            }
            // `tools = []`: no tool (not even tool_search) is offered, so the model writes plain
            // text; and no tool-call markup is ever shown as an answer.
            if let Some(markup) = suzent_tests::tool_markup_in(&answer) {
                bail!("tool-call markup {markup} is shown in the answer: {answer}");
            }
            if d.count("[data-testid=error-banner]").await? > 0 {
                bail!("an error banner is shown");
            }
            d.screenshot("finished-turn").await?;
            Ok(())
        })
    });
}
