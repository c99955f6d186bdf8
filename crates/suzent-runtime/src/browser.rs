//! The browser service: which browser each chat drives (`[browser] mode` in `config.toml`, or
//! the chat's own choice), one [`BrowserSession`] per chat, the managed Chromium (started on
//! first use, one per profile), the attached DevTools endpoint, and the slot the extension
//! bridge plugs its backend into. It is the [`BrowserHost`] of `browser_action`.

use async_trait::async_trait;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use suzent_browser::{
    BrowserBackend, BrowserError, BrowserSession, CdpBackend, DownloadPolicy, ManagedBrowser,
    ManagedConfig, SessionConfig,
};
use suzent_core::{BrowserCommand, BrowserConfig, BrowserMode};
use suzent_store::Store;
use suzent_tools::BrowserHost;

/// A chat's browser mode: its own choice (`None` follows `[browser] mode`), the configured
/// default, and the mode `browser_action` uses in that chat.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatBrowserMode {
    /// The chat's own choice, `None` when it follows the configuration.
    pub chosen: Option<BrowserMode>,
    /// `[browser] mode` from `config.toml`.
    pub default: BrowserMode,
    /// What `browser_action` drives in this chat.
    pub effective: BrowserMode,
}

/// Settings key of a chat's browser mode.
fn mode_key(chat_id: &str) -> String {
    format!("browser.mode.{chat_id}")
}

#[derive(Debug)]
struct ChatBrowser {
    mode: BrowserMode,
    session: BrowserSession,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The runtime's browser service. Cheap to share (`Arc`).
#[derive(Debug)]
pub struct BrowserService {
    data_dir: PathBuf,
    store: Store,
    config: Mutex<BrowserConfig>,
    modes: Mutex<HashMap<String, BrowserMode>>,
    extension: Mutex<Option<Arc<dyn BrowserBackend>>>,
    managed: tokio::sync::Mutex<Option<ManagedBrowser>>,
    cdp: tokio::sync::Mutex<Option<Arc<CdpBackend>>>,
    sessions: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<ChatBrowser>>>>>,
    urls: Mutex<HashMap<String, String>>,
}

impl BrowserService {
    /// A service over the data directory (profiles and downloads live under
    /// `<data>/browser/`) and the store (per-chat modes).
    pub fn new(data_dir: PathBuf, store: Store, config: BrowserConfig) -> BrowserService {
        BrowserService {
            data_dir,
            store,
            config: Mutex::new(config),
            modes: Mutex::default(),
            extension: Mutex::default(),
            managed: tokio::sync::Mutex::default(),
            cdp: tokio::sync::Mutex::default(),
            sessions: Mutex::default(),
            urls: Mutex::default(),
        }
    }

    /// Takes a new `[browser]` configuration; sessions switch at their next command.
    pub fn set_config(&self, config: BrowserConfig) {
        *lock(&self.config) = config;
    }

    /// The paired extension's backend, once its session is established (browser-bridge).
    pub fn connect_extension(&self, backend: Arc<dyn BrowserBackend>) {
        *lock(&self.extension) = Some(backend);
    }

    /// The extension disconnected or was revoked: extension-mode chats answer "no browser
    /// extension is connected" from now on.
    pub fn disconnect_extension(&self) {
        *lock(&self.extension) = None;
    }

    /// Whether an extension backend is connected.
    pub fn extension_connected(&self) -> bool {
        lock(&self.extension).is_some()
    }

    /// The chat's browser mode: its own choice, else `[browser] mode`.
    pub async fn chat_mode(&self, chat_id: &str) -> BrowserMode {
        match self.own_chat_mode(chat_id).await {
            Some(m) => m,
            None => lock(&self.config).mode,
        }
    }

    /// The chat's own browser mode, `None` when it follows `[browser] mode`.
    pub async fn own_chat_mode(&self, chat_id: &str) -> Option<BrowserMode> {
        if let Some(m) = lock(&self.modes).get(chat_id) {
            return Some(*m);
        }
        let stored = self
            .store
            .get_setting(&mode_key(chat_id))
            .await
            .ok()
            .flatten()
            .and_then(|v| v.as_str().and_then(|s| BrowserMode::parse(s).ok()));
        if let Some(m) = stored {
            lock(&self.modes).insert(chat_id.to_string(), m);
        }
        stored
    }

    /// The chat's browser mode as Settings and the CLI show it: its own choice and the mode in
    /// force.
    pub async fn chat_mode_choice(&self, chat_id: &str) -> ChatBrowserMode {
        let chosen = self.own_chat_mode(chat_id).await;
        let default = lock(&self.config).mode;
        ChatBrowserMode {
            chosen,
            default,
            effective: chosen.unwrap_or(default),
        }
    }

    /// Sets the chat's browser mode (stored; `None` returns to `[browser] mode`).
    pub async fn set_chat_mode(
        &self,
        chat_id: &str,
        mode: Option<BrowserMode>,
    ) -> Result<(), suzent_store::StoreError> {
        let value = match mode {
            Some(m) => serde_json::Value::String(m.as_str().to_string()),
            None => serde_json::Value::Null,
        };
        self.store.set_setting(&mode_key(chat_id), &value).await?;
        match mode {
            Some(m) => lock(&self.modes).insert(chat_id.to_string(), m),
            None => lock(&self.modes).remove(chat_id),
        };
        Ok(())
    }

    /// Closes the managed browser cleanly (cookies written out), if it runs.
    pub async fn shutdown(&self) {
        if let Some(browser) = self.managed.lock().await.take() {
            browser.shutdown().await;
        }
    }

    fn managed_config(&self, config: &BrowserConfig) -> ManagedConfig {
        let root = self.data_dir.join("browser");
        ManagedConfig {
            binary: config.binary.clone(),
            profile_dir: root.join("profiles").join(&config.profile),
            headless: config.headless,
            extra_args: config.extra_args.clone(),
            downloads: DownloadPolicy {
                dir: root.join("downloads").join(&config.profile),
                quota_bytes: u64::from(config.download_quota_mb) * 1_000_000,
            },
        }
    }

    async fn backend(&self, mode: BrowserMode) -> Result<Arc<dyn BrowserBackend>, BrowserError> {
        let config = lock(&self.config).clone();
        match mode {
            BrowserMode::Extension => lock(&self.extension)
                .clone()
                .ok_or(BrowserError::NotConnected),
            BrowserMode::Managed => {
                let mut managed = self.managed.lock().await;
                if let Some(b) = managed.as_mut()
                    && !b.is_running()
                {
                    *managed = None;
                }
                if managed.is_none() {
                    *managed = Some(ManagedBrowser::launch(&self.managed_config(&config)).await?);
                }
                match managed.as_ref() {
                    Some(b) => Ok(b.backend()),
                    None => Err(BrowserError::NoBrowser(
                        "the managed browser did not start".into(),
                    )),
                }
            }
            BrowserMode::Cdp => {
                let mut cdp = self.cdp.lock().await;
                if cdp.as_ref().is_some_and(|c| c.is_closed()) {
                    *cdp = None;
                }
                if cdp.is_none() {
                    let endpoint = config.cdp_endpoint.clone().ok_or_else(|| {
                        BrowserError::NoBrowser(
                            "cdp mode needs [browser] cdp_endpoint in config.toml (a DevTools endpoint on this machine, e.g. http://127.0.0.1:9222)".into(),
                        )
                    })?;
                    *cdp = Some(Arc::new(CdpBackend::attach(&endpoint).await?));
                }
                match cdp.as_ref() {
                    Some(c) => Ok(c.clone()),
                    None => Err(BrowserError::NoBrowser("no DevTools connection".into())),
                }
            }
        }
    }

    fn chat_slot(&self, chat_id: &str) -> Arc<tokio::sync::Mutex<Option<ChatBrowser>>> {
        lock(&self.sessions)
            .entry(chat_id.to_string())
            .or_default()
            .clone()
    }

    /// Runs a command in the chat's session (see [`BrowserHost::run`]).
    pub async fn run_command(
        &self,
        chat_id: &str,
        command: &BrowserCommand,
        expected_origin: Option<&str>,
    ) -> Result<String, BrowserError> {
        let mode = self.chat_mode(chat_id).await;
        let slot = self.chat_slot(chat_id);
        let mut guard = slot.lock().await;
        let backend = self.backend(mode).await?;
        // A new backend (mode changed, browser restarted, extension reconnected) starts a new
        // session: old refs and tab ids mean nothing there.
        let reuse = guard
            .as_ref()
            .is_some_and(|c| c.mode == mode && Arc::ptr_eq(c.session.backend(), &backend));
        if !reuse {
            let page_budget = lock(&self.config).snapshot_page_chars as usize;
            *guard = Some(ChatBrowser {
                mode,
                session: BrowserSession::new(
                    backend,
                    SessionConfig {
                        page_budget,
                        ..SessionConfig::default()
                    },
                ),
            });
            lock(&self.urls).remove(chat_id);
        }
        let Some(chat) = guard.as_mut() else {
            return Err(BrowserError::Protocol("no browser session".into()));
        };
        let out = chat.session.run(command, expected_origin).await;
        let url = chat.session.url().map(str::to_string);
        match url {
            Some(u) => lock(&self.urls).insert(chat_id.to_string(), u),
            None => lock(&self.urls).remove(chat_id),
        };
        out.map(|o| o.text)
    }
}

#[async_trait]
impl BrowserHost for BrowserService {
    fn current_url(&self, chat_id: &str) -> Option<String> {
        lock(&self.urls).get(chat_id).cloned()
    }

    async fn run(
        &self,
        chat_id: &str,
        command: &BrowserCommand,
        expected_origin: Option<&str>,
    ) -> Result<String, String> {
        self.run_command(chat_id, command, expected_origin)
            .await
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    async fn service(config: BrowserConfig) -> (tempfile::TempDir, BrowserService) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
        let service = BrowserService::new(dir.path().to_path_buf(), store, config);
        (dir, service)
    }

    async fn tabs(service: &BrowserService, chat: &str) -> String {
        service
            .run_command(chat, &BrowserCommand::Tabs, None)
            .await
            .unwrap_err()
            .to_string()
    }

    #[tokio::test]
    async fn each_mode_says_clearly_what_is_missing() {
        let (_d, s) = service(BrowserConfig::default()).await;
        assert_eq!(
            tabs(&s, "c1").await,
            "no browser extension is connected: install the Suzent extension and pair it in Settings → Browser, or switch this chat to the managed browser"
        );
        s.set_chat_mode("c1", Some(BrowserMode::Cdp)).await.unwrap();
        assert!(
            tabs(&s, "c1")
                .await
                .starts_with("no browser found: cdp mode needs [browser] cdp_endpoint")
        );
        s.set_config(BrowserConfig {
            cdp_endpoint: Some("http://192.0.2.1:9222".into()),
            binary: Some("/nonexistent/chromium".into()),
            ..BrowserConfig::default()
        });
        assert_eq!(
            tabs(&s, "c1").await,
            "the DevTools endpoint 'http://192.0.2.1:9222' is not on this machine: only 127.0.0.1, ::1 and localhost are allowed"
        );
        s.set_chat_mode("c1", Some(BrowserMode::Managed))
            .await
            .unwrap();
        assert_eq!(
            tabs(&s, "c1").await,
            "no browser found: the configured browser '/nonexistent/chromium' does not exist"
        );
        // Other chats keep the configured mode; the choice is stored.
        assert_eq!(s.chat_mode("c2").await, BrowserMode::Extension);
        assert_eq!(
            s.store.get_setting("browser.mode.c1").await.unwrap(),
            Some(serde_json::json!("managed"))
        );
        s.set_chat_mode("c1", None).await.unwrap();
        assert_eq!(s.chat_mode("c1").await, BrowserMode::Extension);
    }
}
