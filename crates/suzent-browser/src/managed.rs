//! The managed browser: a Chromium (or Chrome, Edge) that Suzent starts with a persistent
//! profile per named profile, driven over a loopback DevTools port that only this process
//! learns (Chromium writes it into the profile's `DevToolsActivePort` file).

use crate::backend::BrowserError;
use crate::cdp::{CdpBackend, DownloadPolicy};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use suzent_core::BrowserMode;

/// How to start the managed browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagedConfig {
    /// The browser binary; `None` looks for Chromium, Chrome and Edge in the usual places.
    pub binary: Option<PathBuf>,
    /// The profile directory (`<data>/browser/profiles/<name>`): cookies and logins persist
    /// there between runs.
    pub profile_dir: PathBuf,
    /// Start without a window.
    pub headless: bool,
    /// Extra command-line switches (`--host-resolver-rules=…` in tests).
    pub extra_args: Vec<String>,
    /// Where downloads go and how much they may take.
    pub downloads: DownloadPolicy,
}

/// A running managed browser. Dropping it kills the process; [`ManagedBrowser::shutdown`]
/// closes it cleanly (cookies written out).
#[derive(Debug)]
pub struct ManagedBrowser {
    backend: Arc<CdpBackend>,
    child: tokio::process::Child,
    profile_dir: PathBuf,
}

/// Where browsers usually are, first found wins.
fn candidates() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if cfg!(target_os = "macos") {
        for app in [
            "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
            "/Applications/Chromium.app/Contents/MacOS/Chromium",
            "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
        ] {
            out.push(PathBuf::from(app));
        }
    } else if cfg!(windows) {
        for base in ["PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA"] {
            if let Some(dir) = std::env::var_os(base) {
                let dir = PathBuf::from(dir);
                out.push(dir.join("Google/Chrome/Application/chrome.exe"));
                out.push(dir.join("Microsoft/Edge/Application/msedge.exe"));
                out.push(dir.join("Chromium/Application/chrome.exe"));
            }
        }
    } else {
        let names = [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
            "microsoft-edge",
            "microsoft-edge-stable",
        ];
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path) {
                for n in names {
                    out.push(dir.join(n));
                }
            }
        }
    }
    out
}

/// The browser binary to start: `configured` when given (it must exist), else the first
/// Chromium, Chrome or Edge found.
pub fn find_browser(configured: Option<&Path>) -> Result<PathBuf, BrowserError> {
    if let Some(p) = configured {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(BrowserError::NoBrowser(format!(
                "the configured browser '{}' does not exist",
                p.display()
            )))
        };
    }
    candidates().into_iter().find(|p| p.is_file()).ok_or_else(|| {
        BrowserError::NoBrowser(
            "no Chromium, Chrome or Edge was found: install one, or set [browser] binary in config.toml"
                .to_string(),
        )
    })
}

/// Whether this process runs as root (Linux: the owner of `/proc/self`; elsewhere `USER`).
#[cfg(unix)]
fn is_root() -> bool {
    match std::fs::metadata("/proc/self") {
        Ok(m) => std::os::unix::fs::MetadataExt::uid(&m) == 0,
        Err(_) => std::env::var("USER").is_ok_and(|u| u == "root"),
    }
}

#[cfg(not(unix))]
fn is_root() -> bool {
    false
}

impl ManagedBrowser {
    /// Starts the browser on its profile and connects to it. Fails with
    /// [`BrowserError::NoBrowser`] when no binary is found or it does not come up in 30 s
    /// (another Suzent may be using the same profile).
    pub async fn launch(config: &ManagedConfig) -> Result<ManagedBrowser, BrowserError> {
        let binary = find_browser(config.binary.as_deref())?;
        std::fs::create_dir_all(&config.profile_dir).map_err(|e| {
            BrowserError::NoBrowser(format!(
                "cannot create the profile directory {}: {e}",
                config.profile_dir.display()
            ))
        })?;
        let port_file = config.profile_dir.join("DevToolsActivePort");
        let _ = std::fs::remove_file(&port_file);
        let mut cmd = tokio::process::Command::new(&binary);
        cmd.arg(format!("--user-data-dir={}", config.profile_dir.display()))
            .arg("--remote-debugging-port=0")
            .arg("--remote-debugging-address=127.0.0.1")
            .args([
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-default-apps",
                "--disable-quic",
                "--password-store=basic",
                "--use-mock-keychain",
            ]);
        if config.headless {
            cmd.args(["--headless=new", "--disable-gpu"]);
        }
        if is_root() {
            // Chromium refuses to start as root with its sandbox on.
            cmd.arg("--no-sandbox");
        }
        cmd.args(&config.extra_args)
            .arg("about:blank")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| {
            BrowserError::NoBrowser(format!("cannot start {}: {e}", binary.display()))
        })?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let ws = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next())
                    && !port.trim().is_empty()
                {
                    break format!("ws://127.0.0.1:{}{}", port.trim(), path.trim());
                }
            }
            if let Ok(Some(status)) = child.try_wait() {
                return Err(BrowserError::NoBrowser(format!(
                    "{} exited at start ({status}); is another browser using the profile {}?",
                    binary.display(),
                    config.profile_dir.display()
                )));
            }
            if tokio::time::Instant::now() > deadline {
                let _ = child.kill().await;
                return Err(BrowserError::NoBrowser(format!(
                    "{} did not open its DevTools port within 30 s",
                    binary.display()
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let backend =
            CdpBackend::connect(BrowserMode::Managed, &ws, Some(config.downloads.clone())).await?;
        Ok(ManagedBrowser {
            backend: Arc::new(backend),
            child,
            profile_dir: config.profile_dir.clone(),
        })
    }

    /// The backend to drive it with.
    pub fn backend(&self) -> Arc<CdpBackend> {
        self.backend.clone()
    }

    /// The profile directory.
    pub fn profile_dir(&self) -> &Path {
        &self.profile_dir
    }

    /// Whether the browser is still running.
    pub fn is_running(&mut self) -> bool {
        !self.backend.is_closed() && matches!(self.child.try_wait(), Ok(None))
    }

    /// Closes the browser cleanly (it writes cookies and the profile out) and waits up to 10 s
    /// for it to exit, then kills it.
    pub async fn shutdown(mut self) {
        let _ = self.backend.close_browser().await;
        if tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}
