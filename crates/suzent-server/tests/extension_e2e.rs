//! End to end with real Debian Chromium (new headless, an isolated profile) and the unpacked
//! extension: the extension finds the bridge through the native messaging host the bridge
//! installed, asks to pair, shows the same code as the app, is approved through the API, and
//! then runs browser-core's commands in the shared tab. A web page on another local port that
//! opens a WebSocket or POSTs to the bridge gets nowhere while the paired session stays.

mod support;

use pretty_assertions::assert_eq;
use std::sync::Arc;
use std::time::Duration;
use support::chromium::{Chromium, Page};
use support::fixtures::Fixtures;
use suzent_browser::{BrowserBackend, BrowserError, BrowserSession, SessionConfig};
use suzent_core::BrowserCommand;
use suzent_runtime::Paths;
use suzent_server::{BridgeOptions, BridgeServer, NativeHostPlan, PortChoice, SHIPPED_EXTENSION_ID};

/// One browser at a time on this 2-core machine.
static BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct E2e {
    _dir: tempfile::TempDir,
    server: BridgeServer,
    chromium: Chromium,
    fixtures: Fixtures,
}

impl E2e {
    async fn start() -> anyhow::Result<E2e> {
        let dir = tempfile::tempdir()?;
        let home = dir.path().join("home");
        let profile = home.join(".config/chromium");
        std::fs::create_dir_all(&profile)?;
        let paths = Paths::under(&dir.path().join("suzent"));
        let store = suzent_store::Store::open(&paths.database()).await?;
        let plan = NativeHostPlan {
            host_dir: paths.data_dir.join("browser/native-host"),
            browsers: vec![("Chromium".into(), profile.clone(), profile.join("NativeMessagingHosts"))],
        };
        // Any free port: the extension can only find it through the native messaging host.
        let server = BridgeServer::start_with(
            paths,
            store,
            None,
            BridgeOptions {
                port: PortChoice::Any,
                device_name: Some("test-box".into()),
                native_hosts: Some(plan),
                skip_native_hosts: false,
            },
        )
        .await?;
        let fixtures = Fixtures::start().await?;
        let chromium = Chromium::start(&home, &profile).await?;
        Ok(E2e { _dir: dir, server, chromium, fixtures })
    }

    async fn popup(&self) -> anyhow::Result<Page> {
        let popup = self
            .chromium
            .open(&format!("chrome-extension://{SHIPPED_EXTENSION_ID}/popup.html"))
            .await?;
        if let Err(e) = popup.wait_for("!!document.getElementById('state').dataset.phase").await {
            let body = popup.eval("document.documentElement.outerHTML").await;
            let answer = popup.eval("chrome.runtime.sendMessage({kind: 'getState'}).then(s => JSON.stringify(s), e => 'error: ' + e)").await;
            anyhow::bail!("{e}: the popup shows {body:?}; the worker answers {answer:?}");
        }
        Ok(popup)
    }

    /// Connect in the popup, the app's approval, until the popup says connected.
    async fn pair(&self, popup: &Page) -> anyhow::Result<()> {
        popup.eval("document.getElementById('connect').click(), true").await?;
        let request = match wait(|| self.server.pairings().pending().into_iter().next()).await {
            Ok(r) => r,
            Err(e) => {
                let worker = self
                    .chromium
                    .worker_eval("chrome.runtime.sendNativeMessage('dev.suzent.bridge', {}).then(a => JSON.stringify(a), e => 'native: ' + e)")
                    .await;
                anyhow::bail!("{e}: no pairing request; worker: {worker:?}");
            }
        };
        assert_eq!(
            (request.extension_id.as_str(), request.shipped_extension, request.browser.as_str()),
            (SHIPPED_EXTENSION_ID, true, "Chromium")
        );
        popup.wait_for("document.getElementById('state').dataset.phase === 'waiting'").await?;
        assert_eq!(popup.eval("document.getElementById('code').textContent").await?, request.code);
        self.server.approve(&request.id).await?;
        popup.wait_for("document.getElementById('state').dataset.phase === 'connected'").await?;
        Ok(())
    }
}

async fn wait<T>(mut f: impl FnMut() -> Option<T>) -> anyhow::Result<T> {
    for _ in 0..200 {
        if let Some(v) = f() {
            return Ok(v);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    anyhow::bail!("timed out")
}

fn ref_of(snapshot: &str, needle: &str) -> anyhow::Result<String> {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle) && l.contains("[ref="))
        .ok_or_else(|| anyhow::anyhow!("no '{needle}' in\n{snapshot}"))?;
    let start = line.find("[ref=").map(|i| i + 5).unwrap_or(0);
    Ok(line[start..].trim_end_matches(']').to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extension_pairs_after_approval_and_runs_commands_in_the_shared_tab() -> anyhow::Result<()> {
    let _one = BROWSER.lock().await;
    let e = E2e::start().await?;
    let page = e.chromium.open(&e.fixtures.url("/page.html")).await?;
    page.wait_for("document.readyState === 'complete'").await?;
    let popup = e.popup().await?;
    assert_eq!(popup.eval("document.getElementById('state').dataset.phase").await?, "notPaired");
    e.pair(&popup).await?;
    assert_eq!(
        popup.eval("document.getElementById('state').textContent").await?,
        "Connected to test-box"
    );
    // The popup names the controlled tab.
    popup.wait_for("document.getElementById('tab').textContent.includes('Fixture page')").await?;

    let backend: Arc<dyn BrowserBackend> = Arc::new(e.server.backend());
    let tabs = backend.tabs().await?;
    let shared: Vec<(&str, bool)> = tabs.iter().filter(|t| t.shared).map(|t| (t.url.as_str(), t.active)).collect();
    assert_eq!(shared.len(), 1, "{tabs:?}");
    assert_eq!(shared[0].0, e.fixtures.url("/page.html"));
    assert!(tabs.iter().filter(|t| !t.shared).all(|t| t.url.is_empty() && t.title.is_empty()));

    let mut session = BrowserSession::new(Arc::clone(&backend), SessionConfig::default());
    let snap = session.run(&BrowserCommand::Snapshot { page: None }, None).await?;
    assert!(snap.text.contains("button \"Pay\""), "{}", snap.text);
    let pay = ref_of(&snap.text, "\"Pay\"")?;
    session.run(&BrowserCommand::Click { target: pay }, Some(&e.fixtures.origin())).await?;
    assert_eq!(e.fixtures.wait_hits(1).await, vec!["pay".to_string()]);
    let name = ref_of(&snap.text, "\"Name\"")?;
    session
        .run(&BrowserCommand::Fill { target: name, value: "Ada".into() }, Some(&e.fixtures.origin()))
        .await?;
    assert_eq!(page.eval("document.getElementById('name').value").await?, "Ada");
    session
        .run(&BrowserCommand::Open { url: e.fixtures.url("/other.html"), new_tab: false }, None)
        .await?;
    page.wait_for("location.pathname === '/other.html'").await?;
    session.run(&BrowserCommand::Back, None).await?;
    page.wait_for("location.pathname === '/page.html'").await?;

    // A tab the user did not share is refused by the extension itself.
    let unshared = tabs.iter().find(|t| !t.shared).map(|t| t.id.clone()).unwrap_or_default();
    let refused = backend.frames(&unshared).await.err();
    assert_eq!(refused, Some(BrowserError::TabNotShared(unshared.clone())));

    // Revoking in the app disconnects at once; the popup says so and the backend is gone.
    let pairing = e.server.pairings().list(false).await?.remove(0);
    e.server.revoke(&pairing.id).await?;
    popup.wait_for("document.getElementById('state').dataset.phase === 'revoked'").await?;
    assert_eq!(backend.tabs().await.err(), Some(BrowserError::NotConnected));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_page_on_another_local_port_cannot_open_the_bridge_or_post_to_it() -> anyhow::Result<()> {
    let _one = BROWSER.lock().await;
    let e = E2e::start().await?;
    let page = e.chromium.open(&e.fixtures.url("/page.html")).await?;
    page.wait_for("document.readyState === 'complete'").await?;
    let popup = e.popup().await?;
    e.pair(&popup).await?;
    let backend = e.server.backend();
    let before = backend.tabs().await?;

    for host in ["127.0.0.1", "evil.test"] {
        let url = format!("http://{host}:{}/evil.html?bridge={}", e.fixtures.b, e.server.port());
        let evil = e.chromium.open(&url).await?;
        evil.wait_for("window.done === 4").await?;
        let mut seen = evil.eval("window.results.slice().sort()").await?;
        let seen: Vec<String> = seen
            .as_array_mut()
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
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
    assert_eq!(backend.tabs().await?.iter().filter(|t| t.shared).count(), before.iter().filter(|t| t.shared).count());
    assert_eq!(e.fixtures.hits(), Vec::<String>::new());
    assert_eq!(e.server.pairings().list(true).await?.len(), 1);
    Ok(())
}
