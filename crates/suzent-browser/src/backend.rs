//! What a browser backend must do. The three backends (`managed`, `cdp`, `extension`) only move
//! tabs, frames, agent calls and input; snapshots, refs, pagination and policy live once in
//! [`crate::BrowserSession`] and `js/agent.js`.

use crate::agent::AgentCall;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use suzent_core::BrowserMode;

/// A tab as a backend reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TabInfo {
    /// The backend's id for the tab (CDP target id; the extension's tab id as text).
    pub id: String,
    /// Current URL (empty while unknown). Empty for tabs that are not shared.
    pub url: String,
    /// Current title. Empty for tabs that are not shared.
    pub title: String,
    /// Whether this is the browser's active (focused) tab of its window.
    pub active: bool,
    /// Whether the user shares this tab with Suzent (always true for `managed` and `cdp`;
    /// the extension: tabs in the Suzent group). Commands on other tabs fail with
    /// [`BrowserError::TabNotShared`].
    pub shared: bool,
    /// The tab that opened this one (`target=_blank`, `window.open`), if known.
    pub opener: Option<String>,
}

/// What an input event started in its tab, as the browser had reported it by the time the
/// page finished handling the event (wire: `{"navigation": bool, "newTab": bool}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputEffects {
    /// The tab's top frame began a navigation: a new document, or a same-document URL change.
    pub navigation: bool,
    /// The event opened a new tab or window (`target=_blank`, `window.open`).
    pub new_tab: bool,
}

/// A frame of a tab. The top frame has no parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameInfo {
    /// The backend's id for the frame (CDP frame id; the extension's frame id as text; the top
    /// frame of the extension is `"0"`).
    pub id: String,
    /// The parent frame's id; `None` for the top frame.
    pub parent: Option<String>,
    /// The frame's document URL.
    pub url: String,
    /// Whether the agent can be called in this frame. An unreachable frame is shown as
    /// `iframe (not reachable: <reason>)` in snapshots, never left out.
    pub reachable: bool,
    /// Why the frame is not reachable (`cross-origin frame without access`), if it is not.
    pub reason: Option<String>,
}

/// Where a navigation goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Navigation {
    /// A new address (already checked: http, https or about:blank).
    Url {
        /// The address.
        url: String,
    },
    /// One step back in history.
    Back,
    /// One step forward in history.
    Forward,
    /// Reload the page.
    Reload {
        /// Bypass the cache.
        #[serde(rename = "ignoreCache")]
        ignore_cache: bool,
    },
}

/// Real input, dispatched to the tab as the user's own (trusted events). Coordinates are CSS
/// pixels relative to the top-left corner of the tab's viewport (the top frame).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InputEvent {
    /// Move the mouse to a point.
    MouseMove {
        /// Horizontal position.
        x: f64,
        /// Vertical position.
        y: f64,
    },
    /// Press and release the left button `count` times at a point (2: double click).
    Click {
        /// Horizontal position.
        x: f64,
        /// Vertical position.
        y: f64,
        /// 1 for a click, 2 for a double click.
        count: u8,
    },
    /// Press and release one key, with modifiers held.
    Key {
        /// The DOM `key` value (`Enter`, `a`, `ArrowDown`).
        key: String,
        /// The DOM `code` value (`Enter`, `KeyA`, `ArrowDown`).
        code: String,
        /// The Windows virtual key code (CDP `windowsVirtualKeyCode`; 13 for Enter).
        #[serde(rename = "keyCode")]
        key_code: u32,
        /// The text the key produces (`a`, `\r` for Enter), if any and no modifier but Shift
        /// is held.
        text: Option<String>,
        /// CDP modifier bits: Alt 1, Control 2, Meta 4, Shift 8.
        modifiers: u8,
    },
    /// Insert text at the focus as if typed (CDP `Input.insertText`).
    InsertText {
        /// The text.
        text: String,
    },
}

/// A file a backend saved for a download (managed mode: the session's download directory).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DownloadReport {
    /// The tab that started it, if known.
    pub tab: Option<String>,
    /// The URL it came from.
    pub url: String,
    /// The name the site suggested.
    pub suggested_name: String,
    /// Where it is now (absolute); `None` when it was refused or failed.
    pub path: Option<String>,
    /// Size in bytes.
    pub size: u64,
    /// MIME type, when the response named one.
    pub mime: Option<String>,
    /// What happened: `saved`, `refused: <why>`, `failed: <why>`, `in progress`, `started
    /// (the browser keeps it)` for the extension.
    pub state: String,
}

/// Why a backend call failed. Messages are for the model: lower-case, naming the value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BrowserError {
    /// Extension mode without a connected, paired extension.
    #[error(
        "no browser extension is connected: install the Suzent extension and pair it in Settings → Browser, or switch this chat to the managed browser"
    )]
    NotConnected,
    /// No Chromium, Chrome or Edge binary was found (managed mode) or the CDP endpoint did not
    /// answer.
    #[error("no browser found: {0}")]
    NoBrowser(String),
    /// The tab no longer exists.
    #[error("tab closed: tab {0} no longer exists")]
    TabClosed(String),
    /// The user does not share this tab with Suzent (or stopped sharing it).
    #[error("tab {0} is not shared with Suzent: the user has to share it first")]
    TabNotShared(String),
    /// The frame went away or navigated.
    #[error("frame {0} is gone (it navigated or was removed)")]
    FrameGone(String),
    /// No answer in time: the command may or may not have run. Never retried.
    #[error(
        "timed out after {0} s waiting for the browser: the outcome is unknown and the command was not sent again; take a new snapshot before retrying"
    )]
    Timeout(u64),
    /// The agent in the page refused or failed (the message says why).
    #[error("{0}")]
    Agent(String),
    /// Refused by policy before anything was sent (bad scheme, file input, unsharable page).
    #[error("{0}")]
    Refused(String),
    /// The browser connection failed or answered something unexpected.
    #[error("browser error: {0}")]
    Protocol(String),
}

/// A browser Suzent can drive. Implementations are cheap to share (`Arc<dyn BrowserBackend>`)
/// and safe to call from several tasks; each call is one request to the browser, with the
/// backend's own time limit (20 s) giving [`BrowserError::Timeout`], never a retry.
///
/// A backend runs only Suzent's own code in pages: the agent (`js/agent.js`, embedded as
/// [`crate::AGENT_JS`]) and its fixed functions ([`crate::AgentFunction`]), called by name with
/// JSON arguments. It never evaluates text that came from the model or the app.
#[async_trait]
pub trait BrowserBackend: Send + Sync + std::fmt::Debug + 'static {
    /// Which mode this backend serves.
    fn mode(&self) -> BrowserMode;

    /// Every tab (shared or not; unshared tabs with empty URL and title).
    async fn tabs(&self) -> Result<Vec<TabInfo>, BrowserError>;

    /// Opens a new tab at `url` (already checked), waits for its load, and returns it.
    async fn open_tab(&self, url: &str) -> Result<TabInfo, BrowserError>;

    /// Closes a tab.
    async fn close_tab(&self, tab: &str) -> Result<(), BrowserError>;

    /// Brings a tab to the front of its window.
    async fn activate_tab(&self, tab: &str) -> Result<(), BrowserError>;

    /// Navigates a tab, waits for the new document's load (bounded), and returns the tab.
    async fn navigate(&self, tab: &str, to: &Navigation) -> Result<TabInfo, BrowserError>;

    /// The tab's frames, top frame first, parents before children.
    async fn frames(&self, tab: &str) -> Result<Vec<FrameInfo>, BrowserError>;

    /// Calls one of the agent's fixed functions in a frame of a tab, installing the agent in
    /// that frame first when it is not there yet (in a world the page's scripts cannot reach:
    /// a CDP isolated world, or the extension's content-script world). Returns the function's
    /// JSON result as is; the agent's own errors come back as `{"error": "..."}` inside it.
    async fn call_agent(
        &self,
        tab: &str,
        frame: &str,
        call: &AgentCall,
    ) -> Result<Value, BrowserError>;

    /// Dispatches real input to the tab.
    async fn input(&self, tab: &str, event: &InputEvent) -> Result<(), BrowserError>;

    /// Dispatches input like [`input`](Self::input), then reports what it started once the
    /// page has handled it, so a caller needs no fixed wait to learn that nothing happened.
    /// `None`: this backend cannot tell (the caller waits a moment instead).
    async fn input_watched(
        &self,
        tab: &str,
        event: &InputEvent,
    ) -> Result<Option<InputEffects>, BrowserError> {
        self.input(tab, event).await.map(|()| None)
    }

    /// Downloads that started or finished since the last call (drained). Backends that do not
    /// see downloads return none.
    async fn take_downloads(&self) -> Vec<DownloadReport> {
        Vec::new()
    }
}
