//! End-to-end test of attachments (issue 19 item 4) in the real app under Xvfb through
//! WebDriver: a file dropped on the window is copied into the chat's workspace, rides with the
//! next message, the model reads it with `read_file`, and the message still shows it after a
//! restart. Screenshots of each step: `$CARGO_TARGET_DIR/e2e-screenshots/attachments/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::desktop_test;
use suzent_tests::Turn;

/// Drops a text file on the window the way a file manager does (an HTML5 drop with a file).
const DROP: &str = r#"
const dt = new DataTransfer();
dt.items.add(new File(["The secret word is pumpernickel.\n"], "notes.txt", { type: "text/plain" }));
for (const type of ["dragenter", "dragover", "drop"]) {
  window.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
}
return dt.types;
"#;

/// The attachment chips on sent messages (name and size).
const CHIPS: &str = "return [...document.querySelectorAll('[data-testid=message-attachment]')].map(e => e.textContent)";

#[test]
fn a_dropped_file_is_sent_with_the_message_and_read_by_the_model() {
    desktop_test("attachments", Vec::new(), |d| {
        Box::pin(async move {
            d.wait_css("[data-testid=composer-input]").await?;
            let types = d.js(DROP).await?;
            assert_eq!(types, json!(["Files"]));
            d.wait_css("[data-testid=composer-attachment][data-state=ready]")
                .await?;
            d.screenshot("dropped").await?;
            let path = d
                .js("return document.querySelector('[data-testid=composer-attachment]').title")
                .await?;
            let path = path.as_str().unwrap().to_string();
            assert!(
                path.starts_with(".attachments/") && path.ends_with("/notes.txt"),
                "{path}"
            );
            // The file is in the chat's workspace.
            assert_eq!(
                std::fs::read_to_string(d.workspace().join(&path))?,
                "The secret word is pumpernickel.\n"
            );
            d.server.push_turns(vec![
                Turn::tool_call("c1", "read_file", json!({"file_path": path}).to_string()),
                Turn::text("The secret word is pumpernickel."),
            ]);
            d.send("What is the secret word?").await?;
            d.wait_text("[data-testid=message-assistant]", "pumpernickel")
                .await?;
            d.wait_css("[data-testid=message-attachment]").await?;
            assert_eq!(d.js(CHIPS).await?, json!(["notes.txt33 B"]));
            d.screenshot("answered").await?;
            let requests = d.requests();
            let user = requests[0]["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "user")
                .unwrap()["content"]
                .clone();
            assert_eq!(
                user,
                json!(format!(
                    "What is the secret word?\n[attached: {path} (text/plain, 33 B)]"
                ))
            );
            let read = requests[1]["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "tool")
                .unwrap()["content"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(read.contains("pumpernickel"), "{read}");
            // After a restart the message still shows its file.
            d.restart().await?;
            if d.count("[data-testid=message-user]").await? == 0 {
                d.click("[data-testid=chat-item]").await?;
            }
            d.wait_css("[data-testid=message-attachment]").await?;
            assert_eq!(d.js(CHIPS).await?, json!(["notes.txt33 B"]));
            d.screenshot("after-restart").await?;
            Ok(())
        })
    });
}
