//! End to end with real Debian Chromium (new headless, an isolated profile) and the unpacked
//! extension: the extension finds the bridge through the native messaging host the bridge
//! installed, asks to pair, shows the same code as the app, is approved through the API, and
//! then runs browser-core's commands in the shared tab. A web page on another local port that
//! opens a WebSocket or POSTs to the bridge gets nowhere while the paired session stays.

mod support;

use pretty_assertions::assert_eq;
use std::sync::Arc;
use support::e2e::{BROWSER, E2e};
use suzent_browser::{BrowserBackend, BrowserError, BrowserSession, SessionConfig};
use suzent_core::BrowserCommand;

pub fn ref_of(snapshot: &str, needle: &str) -> anyhow::Result<String> {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle) && l.contains("[ref="))
        .ok_or_else(|| anyhow::anyhow!("no '{needle}' in\n{snapshot}"))?;
    let start = line.find("[ref=").map(|i| i + 5).unwrap_or(0);
    Ok(line[start..].trim_end_matches(']').to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extension_pairs_after_approval_and_runs_commands_in_the_shared_tab()
-> anyhow::Result<()> {
    let _one = BROWSER.lock().await;
    let e = E2e::start().await?;
    let page = e.chromium.open(&e.fixtures.url("/page.html")).await?;
    page.wait_for("document.readyState === 'complete'").await?;
    let popup = e.popup().await?;
    assert_eq!(
        popup
            .eval("document.getElementById('state').dataset.phase")
            .await?,
        "notPaired"
    );
    e.pair(&popup).await?;
    assert_eq!(
        popup
            .eval("document.getElementById('state').textContent")
            .await?,
        "Connected to test-box"
    );
    // The popup names the controlled tab.
    popup
        .wait_for("document.getElementById('tab').textContent.includes('Fixture page')")
        .await?;

    let backend: Arc<dyn BrowserBackend> = Arc::new(e.server.backend());
    let tabs = backend.tabs().await?;
    let shared: Vec<(&str, bool)> = tabs
        .iter()
        .filter(|t| t.shared)
        .map(|t| (t.url.as_str(), t.active))
        .collect();
    assert_eq!(shared.len(), 1, "{tabs:?}");
    assert_eq!(shared[0].0, e.fixtures.url("/page.html"));
    assert!(
        tabs.iter()
            .filter(|t| !t.shared)
            .all(|t| t.url.is_empty() && t.title.is_empty())
    );

    let mut session = BrowserSession::new(Arc::clone(&backend), SessionConfig::default());
    let snap = session
        .run(&BrowserCommand::Snapshot { page: None }, None)
        .await?;
    assert!(snap.text.contains("button \"Pay\""), "{}", snap.text);
    let pay = ref_of(&snap.text, "\"Pay\"")?;
    session
        .run(
            &BrowserCommand::Click { target: pay },
            Some(&e.fixtures.origin()),
        )
        .await?;
    assert_eq!(e.fixtures.wait_hits(1).await, vec!["pay".to_string()]);
    let name = ref_of(&snap.text, "\"Name\"")?;
    session
        .run(
            &BrowserCommand::Fill {
                target: name,
                value: "Ada".into(),
            },
            Some(&e.fixtures.origin()),
        )
        .await?;
    assert_eq!(
        page.eval("document.getElementById('name').value").await?,
        "Ada"
    );
    session
        .run(
            &BrowserCommand::Open {
                url: e.fixtures.url("/other.html"),
                new_tab: false,
            },
            None,
        )
        .await?;
    page.wait_for("location.pathname === '/other.html'").await?;
    session.run(&BrowserCommand::Back, None).await?;
    page.wait_for("location.pathname === '/page.html'").await?;

    // A tab the user did not share is refused by the extension itself.
    let unshared = tabs
        .iter()
        .find(|t| !t.shared)
        .map(|t| t.id.clone())
        .unwrap_or_default();
    let refused = backend.frames(&unshared).await.err();
    assert_eq!(refused, Some(BrowserError::TabNotShared(unshared.clone())));

    // Revoking in the app disconnects at once; the popup says so and the backend is gone.
    let pairing = e.server.pairings().list(false).await?.remove(0);
    e.server.revoke(&pairing.id).await?;
    popup
        .wait_for("document.getElementById('state').dataset.phase === 'revoked'")
        .await?;
    assert_eq!(backend.tabs().await.err(), Some(BrowserError::NotConnected));
    Ok(())
}

/// Through the extension a click reports what it started and waits for nothing else: a button
/// that only fetches, a `target=_blank` link (a new tab), a link (a navigation).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_through_the_extension_reports_the_new_tab_or_navigation_it_started()
-> anyhow::Result<()> {
    let _one = BROWSER.lock().await;
    let e = E2e::start().await?;
    let page = e.chromium.open(&e.fixtures.url("/page.html")).await?;
    page.wait_for("document.readyState === 'complete'").await?;
    let popup = e.popup().await?;
    e.pair(&popup).await?;
    let backend: Arc<dyn BrowserBackend> = Arc::new(e.server.backend());
    let mut session = BrowserSession::new(Arc::clone(&backend), SessionConfig::default());
    let origin = e.fixtures.origin();
    let snap = session
        .run(&BrowserCommand::Snapshot { page: None }, None)
        .await?;
    let mut click = async |needle: &str| -> anyhow::Result<String> {
        let target = ref_of(&snap.text, needle)?;
        Ok(session
            .run(&BrowserCommand::Click { target }, Some(&origin))
            .await?
            .text)
    };

    let pay = click("\"Pay\"").await?;
    assert!(
        !pay.contains("navigated") && !pay.contains("opened new tab"),
        "{pay}"
    );
    assert_eq!(e.fixtures.wait_hits(1).await, vec!["pay".to_string()]);

    let opened = click("\"Other in a new tab\"").await?;
    assert!(opened.contains("opened new tab"), "{opened}");
    assert!(
        opened.contains(&e.fixtures.url("/other.html?tab=new")),
        "{opened}"
    );
    assert!(!opened.contains("navigated"), "{opened}");

    let followed = click("\"Other\"").await?;
    let to = format!(
        "the tab navigated to {} \"Other page\"",
        e.fixtures.url("/other.html")
    );
    assert!(followed.contains(&to), "{followed}");
    assert!(!followed.contains("opened new tab"), "{followed}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_page_on_another_local_port_cannot_open_the_bridge_or_post_to_it()
-> anyhow::Result<()> {
    let _one = BROWSER.lock().await;
    let e = E2e::start().await?;
    let page = e.chromium.open(&e.fixtures.url("/page.html")).await?;
    page.wait_for("document.readyState === 'complete'").await?;
    let popup = e.popup().await?;
    e.pair(&popup).await?;
    let backend = e.server.backend();
    let before = backend.tabs().await?;

    for host in ["127.0.0.1", "evil.test"] {
        let url = format!(
            "http://{host}:{}/evil.html?bridge={}",
            e.fixtures.b,
            e.server.port()
        );
        let evil = e.chromium.open(&url).await?;
        evil.wait_for("window.done === 4").await?;
        let mut seen = evil.eval("window.results.slice().sort()").await?;
        let seen: Vec<String> = seen
            .as_array_mut()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        // The upgrade is refused (403): the socket never opens, so no frame is ever sent; the
        // POST gets no readable answer (no CORS headers).
        assert_eq!(
            seen,
            vec!["close-1006", "cors-blocked", "no-cors-sent", "ws-error"],
            "{host}"
        );
        assert_eq!(e.server.pairings().pending(), Vec::new());
    }
    // The paired session is intact and nothing ran in the shared tab.
    assert_eq!(
        backend.tabs().await?.iter().filter(|t| t.shared).count(),
        before.iter().filter(|t| t.shared).count()
    );
    assert_eq!(e.fixtures.hits(), Vec::<String>::new());
    assert_eq!(e.server.pairings().list(true).await?.len(), 1);
    Ok(())
}
