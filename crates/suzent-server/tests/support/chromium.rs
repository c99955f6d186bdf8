//! Real Debian Chromium (`/usr/bin/chromium`, new headless, an isolated profile) with the
//! unpacked extension loaded, and a small DevTools client that plays the user: it opens pages,
//! opens the extension's popup as a tab and presses its buttons. (The extension itself never
//! gets script from anyone; this client is the test's own hands.)

use anyhow::Context;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{Mutex, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// The built extension (`npm --prefix extensions/browser run build`).
pub fn extension_dist() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../extensions/browser/dist")
}

/// A running Chromium; killed on drop.
pub struct Chromium {
    child: std::process::Child,
    pub cdp: Cdp,
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Chromium {
    /// Starts Chromium with `profile` as its user data directory and `home` as HOME (its
    /// `.config` holds the native messaging host manifests the bridge wrote), the extension
    /// loaded, and `*.test` host names resolving to 127.0.0.1.
    pub async fn start(home: &Path, profile: &Path) -> anyhow::Result<Chromium> {
        let dist = extension_dist();
        anyhow::ensure!(
            dist.join("manifest.json").is_file(),
            "the extension is not built: run `npm --prefix extensions/browser ci && npm --prefix extensions/browser run build`"
        );
        std::fs::create_dir_all(profile)?;
        let _ = std::fs::remove_file(profile.join("DevToolsActivePort"));
        let child = std::process::Command::new("/usr/bin/chromium")
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
                "--host-resolver-rules=MAP *.test 127.0.0.1",
                "--window-size=1200,900",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--load-extension={}", dist.display()))
            .arg(format!("--disable-extensions-except={}", dist.display()))
            .arg("about:blank")
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .context("cannot start /usr/bin/chromium (apt-get install chromium)")?;
        let mut chromium = Chromium {
            child,
            cdp: Cdp::placeholder(),
        };
        let port_file = profile.join("DevToolsActivePort");
        let mut endpoint = None;
        for _ in 0..200 {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                    endpoint = Some(format!("ws://127.0.0.1:{port}{path}"));
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let endpoint = endpoint.context("chromium did not write DevToolsActivePort")?;
        chromium.cdp = Cdp::connect(&endpoint).await?;
        Ok(chromium)
    }

    /// Evaluates the test's own expression in the extension's service worker (diagnostics).
    pub async fn worker_eval(&self, expression: &str) -> anyhow::Result<Value> {
        let targets = self.cdp.call(None, "Target.getTargets", json!({})).await?;
        let worker = targets["targetInfos"]
            .as_array()
            .and_then(|all| all.iter().find(|t| t["type"] == "service_worker"))
            .and_then(|t| t["targetId"].as_str())
            .context("no service worker target")?
            .to_string();
        let attached = self
            .cdp
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": worker, "flatten": true}),
            )
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .context("no sessionId")?
            .to_string();
        let out = self
            .cdp
            .call(
                Some(&session),
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .await?;
        Ok(out)
    }

    /// Opens `url` in a new tab and returns a session attached to it.
    pub async fn open(&self, url: &str) -> anyhow::Result<Page> {
        let target = self
            .cdp
            .call(None, "Target.createTarget", json!({"url": url}))
            .await?;
        let target_id = target["targetId"]
            .as_str()
            .context("no targetId")?
            .to_string();
        let attached = self
            .cdp
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .context("no sessionId")?
            .to_string();
        Ok(Page {
            cdp: self.cdp.clone(),
            session,
            target_id,
        })
    }
}

/// A tab the test drives.
pub struct Page {
    cdp: Cdp,
    session: String,
    pub target_id: String,
}

impl Page {
    /// Evaluates the test's own expression in the page and returns its value.
    pub async fn eval(&self, expression: &str) -> anyhow::Result<Value> {
        let out = self
            .cdp
            .call(
                Some(&self.session),
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .await?;
        if let Some(e) = out.get("exceptionDetails") {
            anyhow::bail!("page threw: {e}");
        }
        Ok(out["result"]["value"].clone())
    }

    /// Polls `expression` until it returns `true` (10 s at most).
    pub async fn wait_for(&self, expression: &str) -> anyhow::Result<()> {
        for _ in 0..200 {
            if self.eval(expression).await.ok() == Some(Value::Bool(true)) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        anyhow::bail!("timed out waiting for `{expression}`")
    }

    /// Brings the tab to the front.
    pub async fn activate(&self) -> anyhow::Result<()> {
        self.cdp
            .call(
                None,
                "Target.activateTarget",
                json!({"targetId": self.target_id}),
            )
            .await?;
        Ok(())
    }
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// A DevTools protocol connection (flattened sessions).
#[derive(Clone)]
pub struct Cdp {
    out: Option<tokio::sync::mpsc::Sender<String>>,
    pending: Pending,
    next: Arc<AtomicU64>,
}

impl Cdp {
    fn placeholder() -> Cdp {
        Cdp {
            out: None,
            pending: Arc::new(Mutex::new(HashMap::new())),
            next: Arc::new(AtomicU64::new(1)),
        }
    }

    async fn connect(endpoint: &str) -> anyhow::Result<Cdp> {
        let (ws, _) = tokio_tungstenite::connect_async(endpoint).await?;
        let (mut sink, mut stream) = ws.split();
        let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(64);
        let pending: Pending = Arc::new(Mutex::new(HashMap::new()));
        tokio::spawn(async move {
            while let Some(text) = rx.recv().await {
                if sink.send(Message::Text(text.into())).await.is_err() {
                    break;
                }
            }
        });
        let reader = Arc::clone(&pending);
        tokio::spawn(async move {
            while let Some(Ok(Message::Text(text))) = stream.next().await {
                let Ok(value) = serde_json::from_str::<Value>(text.as_str()) else {
                    continue;
                };
                if let Some(id) = value["id"].as_u64()
                    && let Some(tx) = reader.lock().await.remove(&id)
                {
                    let _ = tx.send(value);
                }
            }
        });
        Ok(Cdp {
            out: Some(tx),
            pending,
            next: Arc::new(AtomicU64::new(1)),
        })
    }

    /// Sends one command and waits (10 s) for its result.
    pub async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> anyhow::Result<Value> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().await.insert(id, tx);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        self.out
            .as_ref()
            .context("not connected")?
            .send(message.to_string())
            .await?;
        let answer = tokio::time::timeout(Duration::from_secs(10), rx)
            .await
            .with_context(|| format!("{method} timed out"))??;
        if let Some(e) = answer.get("error") {
            anyhow::bail!("{method} failed: {e}");
        }
        Ok(answer["result"].clone())
    }
}
