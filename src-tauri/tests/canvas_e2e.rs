//! End-to-end tests of the canvas (issue 8) in the real desktop app under Xvfb, driven through
//! WebDriver, against the scripted model server: the model renders a form with `render_ui`, the
//! user fills and submits it, the agent receives the values in its next turn and updates the
//! progress; and a surface survives an app restart. Screenshots of each step land under
//! `$CARGO_TARGET_DIR/e2e-screenshots/<test>/`.
//!
//! Skipped (with the reason printed) outside CI when the desktop prerequisites are missing, like
//! `desktop_e2e.rs`; build the UI first (`npm --prefix ui run build`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use support::desktop_test;
use suzent_tests::{Item, Turn};

/// The model's first call: a sign-up form on the canvas, progress at 0.
fn render_form(beacon: &str) -> Turn {
    Turn::tool_calls(vec![form_call(beacon)])
}

/// A 1x1 PNG as a data: URL (the one kind of image an HtmlFrame document may load).
const PIXEL: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// The agent's HTML in the form: styled by an inline `style` and a `<style>` block, with a
/// script that must not run and images that must not load (a remote one, one from `beacon`),
/// beside a data: image that must.
fn terms_html(beacon: &str) -> String {
    format!(
        "<style>#terms{{letter-spacing:1px;border:2px solid #15803d}}</style>\
         <div id=\"terms\" style=\"padding:8px 10px;border-radius:6px;background:#e8f6ec;color:#15803d;font:600 13px sans-serif\">Terms: be kind to the robots.</div>\
         <script>document.body.textContent='script ran'</script>\
         <img id=\"remote\" src=\"https://example.com/beacon.png\" alt=\"\">\
         <img id=\"local\" src=\"{beacon}\" alt=\"\">\
         <img id=\"pixel\" src=\"{PIXEL}\" alt=\"\" width=\"8\" height=\"8\">"
    )
}

fn form_call(beacon: &str) -> Item {
    let args = json!({
        "action": "render",
        "surface_id": "signup",
        "target": "canvas",
        "title": "Create your account",
        "root": "root",
        "components": [
            {"id": "root", "component": {"Column": {"children": {"explicitList":
                ["intro", "terms", "name", "agree", "status", "progress", "submit"]}}}},
            {"id": "intro", "component": {"Text": {"text": {"literalString":
                "Tell me **who you are** and I will set up the account."}}}},
            {"id": "terms", "component": {"HtmlFrame": {"title": "Terms", "height": 80, "html": {"literalString":
                terms_html(beacon)}}}},
            {"id": "name", "component": {"TextField": {
                "label": {"literalString": "Your name"}, "text": {"path": "/form/name"}}}},
            {"id": "agree", "component": {"CheckBox": {
                "label": {"literalString": "I agree to the terms"}, "value": {"path": "/form/agree"}}}},
            {"id": "status", "component": {"Badge": {"text": {"path": "/status"}, "tone": "info"}}},
            {"id": "progress", "component": {"Progress": {
                "value": {"path": "/progress"}, "max": 1, "label": {"literalString": "Account setup"}}}},
            {"id": "submit", "component": {"Button": {"child": "submit-label", "primary": true,
                "action": {"name": "submit", "context": [
                    {"key": "name", "value": {"path": "/form/name"}},
                    {"key": "agree", "value": {"path": "/form/agree"}}
                ]}}}},
            {"id": "submit-label", "component": {"Text": {"text": {"literalString": "Submit"}}}}
        ],
        "data_model": {"form": {"name": "", "agree": false}, "status": "waiting for you", "progress": 0}
    });
    Item::tool_call("call_form", "render_ui", args.to_string())
}

/// A table shown inline in the transcript, right after the call that rendered it.
fn plans_call() -> Item {
    let args = json!({
        "action": "render",
        "surface_id": "plans",
        "target": "inline",
        "title": "Plans",
        "root": "table",
        "components": [
            {"id": "table", "component": {"Table": {
                "columns": [{"header": "Plan", "key": "name"}, {"header": "Price", "key": "price"}],
                "rows": {"path": "/plans"}}}}
        ],
        "data_model": {"plans": [{"name": "Free", "price": "0 €"}, {"name": "Pro", "price": "8 €"}]}
    });
    Item::tool_call("call_plans", "render_ui", args.to_string())
}

/// The model's answer to the submitted form: the progress bar full, the badge updated.
fn update_progress() -> Turn {
    let args = json!({
        "action": "update_data",
        "surface_id": "signup",
        "data_updates": [
            {"path": "/progress", "value": 1},
            {"path": "/status", "value": "account ready"}
        ]
    });
    Turn::tool_call("call_progress", "render_ui", args.to_string())
}

/// The text of every user message the model received in `request` (OpenAI chat format).
fn user_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter(|m| m["role"] == "user")
                .map(|m| match &m["content"] {
                    Value::String(s) => s.clone(),
                    other => other
                        .as_array()
                        .map(|parts| {
                            parts
                                .iter()
                                .filter_map(|p| p["text"].as_str())
                                .collect::<Vec<_>>()
                                .join("\n")
                        })
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_agent_renders_a_form_the_user_submits_it_and_the_agent_updates_the_progress() {
    // A local HTTP listener the frame's <img> points at: it must never be asked for anything.
    let beacon = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let beacon_url = format!("http://{}/beacon.png", beacon.local_addr().unwrap());
    let beacon_hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    {
        let hits = beacon_hits.clone();
        std::thread::spawn(move || {
            for _ in beacon.incoming() {
                hits.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
    }
    desktop_test(
        "canvas_form",
        vec![
            render_form(&beacon_url),
            Turn::text("The form is on the canvas."),
            update_progress(),
            Turn::text("Thanks, Ada: your account is ready."),
        ],
        move |d| {
            Box::pin(async move {
                d.new_chat().await?;
                d.send("Help me create an account").await?;
                d.wait_css("[data-testid=canvas-panel] [data-testid=surface-signup]")
                    .await?;
                d.wait_text(
                    "[data-testid=message-assistant]",
                    "The form is on the canvas.",
                )
                .await?;
                let bar = d.find("[data-testid=a2ui-progress]").await?;
                assert_eq!(bar.attr("aria-valuenow").await?.as_deref(), Some("0"));
                assert_eq!(bar.attr("role").await?.as_deref(), Some("progressbar"));
                // The frame document comes from the shell's frame scheme (with a CSP of its
                // own), not a srcdoc that would inherit the app's CSP and lose the styles.
                let frame = d.wait_css("iframe[data-testid=a2ui-terms]").await?;
                assert_eq!(frame.attr("sandbox").await?.as_deref(), Some(""));
                let srcdoc = d
                    .client()
                    .execute(
                        "return document.querySelector('iframe[data-testid=a2ui-terms]').hasAttribute('srcdoc')",
                        Vec::new(),
                    )
                    .await?;
                assert_eq!(srcdoc, Value::Bool(false), "a srcdoc frame");
                let src = frame.attr("src").await?.unwrap_or_default();
                assert!(
                    src.starts_with("suzent-frame://localhost/")
                        || src.starts_with("http://suzent-frame.localhost/"),
                    "the frame loads {src:?}"
                );
                // Inside the frame: the agent's HTML is shown styled, its script did not run,
                // and only the data: image loaded.
                frame.enter_frame().await?;
                let inside = async {
                    let c = d.client();
                    let find = |css: &'static str| c.find(fantoccini::Locator::Css(css));
                    let body = find("body").await?.text().await?;
                    let terms = find("#terms").await?;
                    let styles = (
                        terms.css_value("background-color").await?,
                        terms.css_value("color").await?,
                        terms.css_value("padding-left").await?,
                        terms.css_value("letter-spacing").await?,
                        terms.css_value("border-top-width").await?,
                    );
                    let rect = terms.rectangle().await?;
                    let mut widths = Vec::new();
                    for id in ["#remote", "#local", "#pixel"] {
                        let img = serde_json::to_value(find(id).await?)?;
                        widths.push(
                            c.execute("return arguments[0].naturalWidth", vec![img])
                                .await?,
                        );
                    }
                    anyhow::Ok((body, styles, rect, widths))
                }
                .await;
                d.client().enter_parent_frame().await?;
                let (body, styles, (_, _, _, height), widths) = inside?;
                assert_eq!(
                    body.trim(),
                    "Terms: be kind to the robots.",
                    "the script ran"
                );
                assert_eq!(
                    styles,
                    (
                        "rgb(232, 246, 236)".to_string(),
                        "rgb(21, 128, 61)".to_string(),
                        "10px".to_string(),
                        "1px".to_string(),
                        "2px".to_string()
                    ),
                    "the inline style and the <style> block apply inside the frame"
                );
                assert!(height >= 30.0, "the padded box is {height} px high");
                assert_eq!(
                    widths,
                    [json!(0), json!(0), json!(1)],
                    "naturalWidth of the remote, the local http and the data: image"
                );
                d.screenshot("form-on-canvas").await?;

                let name = d.wait_css("[data-testid=a2ui-name]").await?;
                name.click().await?;
                name.send_keys("Ada").await?;
                d.click("[data-testid=a2ui-agree]").await?;
                assert_eq!(
                    d.find("[data-testid=a2ui-name]")
                        .await?
                        .prop("value")
                        .await?
                        .as_deref(),
                    Some("Ada")
                );
                d.screenshot("form-filled").await?;

                d.click("[data-testid=a2ui-submit]").await?;
                d.wait_text(
                    "[data-testid=surface-sent-signup]",
                    r#"Sent: submit {name: "Ada", agree: true}"#,
                )
                .await?;
                d.screenshot("form-submitted").await?;

                // The submit starts a turn of the idle chat: the model's update arrives.
                d.wait_css("[data-testid=a2ui-progress][aria-valuenow='1']")
                    .await
                    .context("the progress did not reach 1 after the agent's update")?;
                d.wait_text("[data-testid=a2ui-status]", "account ready")
                    .await?;
                d.wait_text(
                    "[data-testid=message-assistant]",
                    "Thanks, Ada: your account is ready.",
                )
                .await?;
                d.wait_text("[data-testid=message-canvas-action]", r#""name":"Ada""#)
                    .await?;
                // What the user typed is still in the form after the update.
                assert_eq!(
                    d.find("[data-testid=a2ui-name]")
                        .await?
                        .prop("value")
                        .await?
                        .as_deref(),
                    Some("Ada")
                );
                d.screenshot("progress-updated").await?;

                // The panel resizes from the keyboard and can be hidden and shown again.
                let handle = d.find("[data-testid=canvas-resize]").await?;
                let width = |v: Option<String>| -> anyhow::Result<i64> {
                    Ok(v.context("the resize handle has no aria-valuenow")?
                        .parse()?)
                };
                let before = width(handle.attr("aria-valuenow").await?)?;
                handle
                    .send_keys(&char::from(fantoccini::key::Key::Right).to_string())
                    .await?;
                let after = width(handle.attr("aria-valuenow").await?)?;
                assert_eq!(after, before - 16, "ArrowRight narrows the canvas by 16 px");
                d.click("[data-testid=canvas-toggle]").await?;
                d.wait_gone("[data-testid=canvas-panel]").await?;
                d.screenshot("canvas-hidden").await?;
                d.click("[data-testid=canvas-toggle]").await?;
                let shown = d.wait_css("[data-testid=canvas-resize]").await?;
                assert_eq!(
                    width(shown.attr("aria-valuenow").await?)?,
                    after,
                    "the width is remembered"
                );

                assert_eq!(
                    beacon_hits.load(std::sync::atomic::Ordering::SeqCst),
                    0,
                    "the frame's <img> reached the network"
                );
                let requests = d.requests();
                assert_eq!(requests.len(), 4, "two turns of two model steps each");
                let sent = user_texts(&requests[2]);
                let action = sent
                    .iter()
                    .find(|t| t.contains(r#"[canvas] action "submit" on surface "signup""#))
                    .with_context(|| {
                        format!("no canvas action among the user messages {sent:?}")
                    })?;
                if !(action.contains(r#""name":"Ada""#) && action.contains(r#""agree":true"#)) {
                    bail!("the agent did not receive the submitted values: {action}");
                }
                Ok(())
            })
        },
    );
}

#[test]
fn a_surface_survives_an_app_restart() {
    desktop_test(
        "canvas_restart",
        vec![
            Turn::tool_calls(vec![
                form_call("https://example.com/beacon.png"),
                plans_call(),
            ]),
            Turn::text("The form is on the canvas."),
            update_progress(),
            Turn::text("Thanks, Grace: your account is ready."),
        ],
        |d| {
            Box::pin(async move {
                d.new_chat().await?;
                d.send("Help me create an account").await?;
                d.wait_css("[data-testid=canvas-panel] [data-testid=surface-signup]")
                    .await?;
                d.wait_text("[data-testid=surface-plans]", "Pro").await?;
                assert_eq!(
                    d.count("[data-testid=canvas-panel] [data-testid=surface-plans]")
                        .await?,
                    0,
                    "an inline surface is not on the canvas"
                );
                let name = d.wait_css("[data-testid=a2ui-name]").await?;
                name.click().await?;
                name.send_keys("Grace").await?;
                d.click("[data-testid=a2ui-agree]").await?;
                d.click("[data-testid=a2ui-submit]").await?;
                d.wait_css("[data-testid=a2ui-progress][aria-valuenow='1']")
                    .await?;
                d.wait_text(
                    "[data-testid=message-assistant]",
                    "Thanks, Grace: your account is ready.",
                )
                .await?;
                d.screenshot("before-restart").await?;

                d.restart().await?;
                d.click("[data-testid=nav-chat]").await?;
                if d.count("[data-testid=surface-signup]").await? == 0 {
                    d.click("[data-testid=chat-item]").await?;
                }
                d.wait_css("[data-testid=canvas-panel] [data-testid=surface-signup]")
                    .await
                    .context("the canvas surface is not back after the restart")?;
                d.wait_text("[data-testid=surface-signup]", "Create your account")
                    .await?;
                // The agent's update and the values the user submitted were stored.
                d.wait_css("[data-testid=a2ui-progress][aria-valuenow='1']")
                    .await?;
                d.wait_text("[data-testid=a2ui-status]", "account ready")
                    .await?;
                let name = d.find("[data-testid=a2ui-name]").await?;
                assert_eq!(name.prop("value").await?.as_deref(), Some("Grace"));
                let agree = d.find("[data-testid=a2ui-agree]").await?;
                assert_eq!(agree.prop("checked").await?.as_deref(), Some("true"));
                d.wait_text("[data-testid=message-canvas-action]", r#""name":"Grace""#)
                    .await?;
                // The inline table is back right after the tool call that rendered it.
                d.wait_css(
                    "[data-testid=tool-card][data-tool-name=render_ui] + [data-testid=surface-plans]",
                )
                .await?;
                d.screenshot("after-restart").await?;
                assert_eq!(d.requests().len(), 4, "the restart asked the model nothing");
                Ok(())
            })
        },
    );
}
