//! The main window never leaves the app (case R2-D02): a navigation to another origin — a link
//! in a model's answer, a script setting `location` — is refused, logged, and (for `http`,
//! `https` and `mailto` links) opened in the system browser instead, where it has no IPC.

use tauri::plugin::{Builder, TauriPlugin};
use tauri::{Manager, Runtime, Url};
use tauri_plugin_opener::OpenerExt;

/// What happens to a navigation of an app webview.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NavigationVerdict {
    /// The app's own pages (the bundled UI, the dev server in debug builds, canvas frames).
    Allow,
    /// Another origin a person may want to see: refused here, opened in the system browser.
    OpenInBrowser,
    /// Refused, and nothing is opened (`javascript:`, `file:`, `data:`, unknown schemes).
    Block,
}

/// The verdict for `url`. `dev_url` is the dev server's origin in debug builds (`None` in
/// release builds, where the UI comes from the `tauri:` scheme only).
pub fn navigation_verdict(url: &Url, dev_url: Option<&Url>) -> NavigationVerdict {
    let app_origin = match url.scheme() {
        // The bundled UI (Linux, macOS) and its Windows/Android form.
        "tauri" => url.host_str() == Some("localhost"),
        "http" | "https" if url.host_str() == Some("tauri.localhost") => true,
        // Canvas HtmlFrame documents (sandboxed, served with their own CSP by `frames`).
        s if s == crate::FRAME_SCHEME => true,
        "http" if url.host_str() == Some(format!("{}.localhost", crate::FRAME_SCHEME).as_str()) => {
            true
        }
        "about" => url.as_str() == "about:blank" || url.as_str() == "about:srcdoc",
        _ => false,
    };
    if app_origin {
        return NavigationVerdict::Allow;
    }
    if let Some(dev) = dev_url
        && url.scheme() == dev.scheme()
        && url.host_str() == dev.host_str()
        && url.port_or_known_default() == dev.port_or_known_default()
    {
        return NavigationVerdict::Allow;
    }
    match url.scheme() {
        "http" | "https" | "mailto" => NavigationVerdict::OpenInBrowser,
        _ => NavigationVerdict::Block,
    }
}

/// The plugin that applies [`navigation_verdict`] to every navigation of every webview.
pub fn guard<R: Runtime>() -> TauriPlugin<R> {
    Builder::new("navigation-guard")
        .on_navigation(|webview, url| {
            let dev = if cfg!(debug_assertions) {
                webview.app_handle().config().build.dev_url.clone()
            } else {
                None
            };
            match navigation_verdict(url, dev.as_ref()) {
                NavigationVerdict::Allow => true,
                NavigationVerdict::OpenInBrowser => {
                    tracing::warn!(url = %url, webview = webview.label(), "navigation to another origin refused; opening it in the system browser");
                    if let Err(e) = webview.app_handle().opener().open_url(url.as_str(), None::<&str>) {
                        tracing::warn!(url = %url, "cannot open the system browser: {e}");
                    }
                    false
                }
                NavigationVerdict::Block => {
                    tracing::warn!(url = %url, webview = webview.label(), "navigation refused");
                    false
                }
            }
        })
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn verdict(url: &str, dev: Option<&str>) -> NavigationVerdict {
        let url = Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
        let dev = dev.map(|d| Url::parse(d).unwrap_or_else(|e| panic!("{d}: {e}")));
        navigation_verdict(&url, dev.as_ref())
    }

    #[test]
    fn the_app_and_its_frames_may_load_and_other_origins_go_to_the_browser() {
        use NavigationVerdict::*;
        assert_eq!(
            [
                verdict("tauri://localhost/index.html#/chat", None),
                verdict("http://tauri.localhost/", None),
                verdict("suzent-frame://localhost/abc", None),
                verdict("http://suzent-frame.localhost/abc", None),
                verdict("https://evil.test/", None),
                verdict("http://127.0.0.1:8080/", None),
                verdict("mailto:a@b.test", None),
                verdict("javascript:alert(1)", None),
                verdict("file:///etc/passwd", None),
                verdict("tauri://evil.test/", None),
                verdict("http://localhost:5173/", Some("http://localhost:5173")),
                verdict("http://localhost:5173/", None),
                verdict("http://localhost:5174/", Some("http://localhost:5173")),
            ],
            [
                Allow,
                Allow,
                Allow,
                Allow,
                OpenInBrowser,
                OpenInBrowser,
                OpenInBrowser,
                Block,
                Block,
                Block,
                Allow,
                OpenInBrowser,
                OpenInBrowser,
            ]
        );
    }
}
