//! The browser vocabulary shared by the `browser_action` tool, the browser crate and the
//! runtime: which browser a chat drives ([`BrowserMode`]) and the commands the model sends
//! ([`BrowserCommand`], the tool's typed arguments; its JSON Schema is generated from it).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which browser `browser_action` drives (`[browser] mode` in `config.toml`, or per chat).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BrowserMode {
    /// The user's own Chrome or Edge, through the paired Suzent extension (tabs the user shared).
    #[default]
    Extension,
    /// A Chromium that Suzent starts itself, with a persistent profile under the data directory.
    Managed,
    /// A browser the user started with a DevTools endpoint on this machine (loopback only).
    Cdp,
}

impl BrowserMode {
    /// The name used in `config.toml` and the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            BrowserMode::Extension => "extension",
            BrowserMode::Managed => "managed",
            BrowserMode::Cdp => "cdp",
        }
    }

    /// Parses a name from `config.toml` or the CLI; errors name the value.
    pub fn parse(name: &str) -> Result<BrowserMode, String> {
        match name.trim() {
            "extension" => Ok(BrowserMode::Extension),
            "managed" => Ok(BrowserMode::Managed),
            "cdp" => Ok(BrowserMode::Cdp),
            other => Err(format!(
                "unknown browser mode '{other}' (expected extension, managed or cdp)"
            )),
        }
    }
}

impl std::fmt::Display for BrowserMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which way `scroll` moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScrollDirection {
    /// Towards the top.
    Up,
    /// Towards the bottom.
    Down,
    /// Towards the left edge.
    Left,
    /// Towards the right edge.
    Right,
}

/// One `browser_action` call: `command` names what to do, the other fields are that command's
/// arguments. Refs (`s3e12`, `s3f1e4`) come from the latest `snapshot` of the tab; a ref from an
/// older snapshot or another document fails with "stale ref — take a new snapshot".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
pub enum BrowserCommand {
    /// Lists the tabs Suzent may use (id, URL, title; the selected one marked).
    Tabs,
    /// Makes another tab the one the following commands act on.
    SelectTab {
        /// Tab id from `tabs`.
        tab: String,
    },
    /// Navigates the selected tab (or a new tab) to a URL (http, https or about:blank).
    Open {
        /// The address to open.
        url: String,
        /// Open it in a new tab (which becomes the selected tab) instead of the selected one.
        #[serde(default, rename = "newTab")]
        new_tab: bool,
    },
    /// The page as text with refs. Page 1 (the default) takes a new snapshot; page 2, 3, …
    /// continue the latest snapshot under the same refs.
    Snapshot {
        /// Which page of the snapshot (1-based); pages beyond 1 continue the latest snapshot.
        #[serde(default)]
        page: Option<u32>,
    },
    /// Clicks an element (real mouse input at its center).
    Click {
        /// Element ref from the latest snapshot.
        #[serde(rename = "ref")]
        target: String,
    },
    /// Double-clicks an element.
    Dblclick {
        /// Element ref from the latest snapshot.
        #[serde(rename = "ref")]
        target: String,
    },
    /// Moves the mouse over an element.
    Hover {
        /// Element ref from the latest snapshot.
        #[serde(rename = "ref")]
        target: String,
    },
    /// Replaces the value of a text field, text area, select or content-editable element.
    Fill {
        /// Element ref from the latest snapshot.
        #[serde(rename = "ref")]
        target: String,
        /// The new value (for a select: an option's value or label).
        value: String,
    },
    /// Types text as key input, into the element (focused first) or where the focus is.
    Type {
        /// The text to type.
        text: String,
        /// Element ref to focus first; omitted: the focused element.
        #[serde(default, rename = "ref")]
        target: Option<String>,
        /// Press Enter after the text.
        #[serde(default)]
        submit: bool,
    },
    /// Scrolls the page, or the element that contains the ref.
    Scroll {
        /// Which way.
        direction: ScrollDirection,
        /// How far, in CSS pixels (default: 80% of the visible height or width).
        #[serde(default)]
        amount: Option<u32>,
        /// Element ref to scroll; omitted: the page.
        #[serde(default, rename = "ref")]
        target: Option<String>,
    },
    /// Goes back in the tab's history.
    Back,
    /// Goes forward in the tab's history.
    Forward,
    /// Reloads the page.
    Reload,
    /// Reloads the page bypassing the cache.
    Refresh,
    /// Presses a key or a chord (`Enter`, `Tab`, `Escape`, `ArrowDown`, `Control+a`).
    Press {
        /// The key (`Enter`, `a`, `Shift+Tab`, `Control+a`).
        key: String,
        /// Element ref to focus first; omitted: the focused element.
        #[serde(default, rename = "ref")]
        target: Option<String>,
    },
    /// Clicks at a point of the visible page (CSS pixels from the top-left of the viewport).
    ClickCoords {
        /// Horizontal position.
        x: f64,
        /// Vertical position.
        y: f64,
    },
}

/// What a command does to the page, for the permission engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrowserCommandKind {
    /// Reads only (`tabs`, `snapshot`, `select_tab`).
    Read,
    /// Loads a new address (`open`).
    Navigate,
    /// Acts on the page of the selected tab (clicks, input, scrolling, history, reload).
    Act,
}

impl BrowserCommand {
    /// The command's wire name (`click_coords`).
    pub fn name(&self) -> &'static str {
        match self {
            BrowserCommand::Tabs => "tabs",
            BrowserCommand::SelectTab { .. } => "select_tab",
            BrowserCommand::Open { .. } => "open",
            BrowserCommand::Snapshot { .. } => "snapshot",
            BrowserCommand::Click { .. } => "click",
            BrowserCommand::Dblclick { .. } => "dblclick",
            BrowserCommand::Hover { .. } => "hover",
            BrowserCommand::Fill { .. } => "fill",
            BrowserCommand::Type { .. } => "type",
            BrowserCommand::Scroll { .. } => "scroll",
            BrowserCommand::Back => "back",
            BrowserCommand::Forward => "forward",
            BrowserCommand::Reload => "reload",
            BrowserCommand::Refresh => "refresh",
            BrowserCommand::Press { .. } => "press",
            BrowserCommand::ClickCoords { .. } => "click_coords",
        }
    }

    /// Whether the command reads, navigates or acts.
    pub fn kind(&self) -> BrowserCommandKind {
        match self {
            BrowserCommand::Tabs | BrowserCommand::Snapshot { .. } => BrowserCommandKind::Read,
            // Choosing a tab only changes what later commands address; those are checked on
            // the tab's origin when they run.
            BrowserCommand::SelectTab { .. } => BrowserCommandKind::Read,
            BrowserCommand::Open { .. } => BrowserCommandKind::Navigate,
            _ => BrowserCommandKind::Act,
        }
    }
}
