//! The end-to-end set-up shared by the extension tests and the click benchmark: a bridge whose
//! port the extension can only learn from the native messaging host, the fixture servers, and
//! Chromium with the unpacked extension; pairing through the popup and the app's approval.

use super::chromium::{Chromium, Page};
use super::fixtures::Fixtures;
use pretty_assertions::assert_eq;
use std::time::Duration;
use suzent_runtime::Paths;
use suzent_server::{
    BridgeOptions, BridgeServer, NativeHostPlan, PortChoice, SHIPPED_EXTENSION_ID,
};

/// One browser at a time on this 2-core machine.
pub static BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub struct E2e {
    _dir: tempfile::TempDir,
    pub server: BridgeServer,
    pub chromium: Chromium,
    pub fixtures: Fixtures,
}

impl E2e {
    pub async fn start() -> anyhow::Result<E2e> {
        let dir = tempfile::tempdir()?;
        let home = dir.path().join("home");
        let profile = home.join(".config/chromium");
        std::fs::create_dir_all(&profile)?;
        let paths = Paths::under(&dir.path().join("suzent"));
        let store = suzent_store::Store::open(&paths.database()).await?;
        let plan = NativeHostPlan {
            host_dir: paths.data_dir.join("browser/native-host"),
            browsers: vec![(
                "Chromium".into(),
                profile.clone(),
                profile.join("NativeMessagingHosts"),
            )],
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
        Ok(E2e {
            _dir: dir,
            server,
            chromium,
            fixtures,
        })
    }

    pub async fn popup(&self) -> anyhow::Result<Page> {
        let popup = self
            .chromium
            .open(&format!(
                "chrome-extension://{SHIPPED_EXTENSION_ID}/popup.html"
            ))
            .await?;
        if let Err(e) = popup
            .wait_for("!!document.getElementById('state').dataset.phase")
            .await
        {
            let body = popup.eval("document.documentElement.outerHTML").await;
            let answer = popup.eval("chrome.runtime.sendMessage({kind: 'getState'}).then(s => JSON.stringify(s), e => 'error: ' + e)").await;
            anyhow::bail!("{e}: the popup shows {body:?}; the worker answers {answer:?}");
        }
        Ok(popup)
    }

    /// Connect in the popup, the app's approval, until the popup says connected.
    pub async fn pair(&self, popup: &Page) -> anyhow::Result<()> {
        popup
            .eval("document.getElementById('connect').click(), true")
            .await?;
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
            (
                request.extension_id.as_str(),
                request.shipped_extension,
                request.browser.as_str()
            ),
            (SHIPPED_EXTENSION_ID, true, "Chromium")
        );
        popup
            .wait_for("document.getElementById('state').dataset.phase === 'waiting'")
            .await?;
        assert_eq!(
            popup
                .eval("document.getElementById('code').textContent")
                .await?,
            request.code
        );
        self.server.approve(&request.id).await?;
        popup
            .wait_for("document.getElementById('state').dataset.phase === 'connected'")
            .await?;
        Ok(())
    }
}

pub async fn wait<T>(mut f: impl FnMut() -> Option<T>) -> anyhow::Result<T> {
    for _ in 0..200 {
        if let Some(v) = f() {
            return Ok(v);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    anyhow::bail!("timed out")
}
