//! The bridge's wire protocol: JSON text frames over the WebSocket at [`BRIDGE_PATH`], one
//! message per frame, tagged by `type` (camelCase). The extension's TypeScript types
//! (`extensions/browser/src/bindings.ts`) are generated from these (`cargo run -p suzent-server
//! --example gen-extension-bindings`); a test fails when the checked-in file differs.
//!
//! A connection, from the extension's side:
//! 1. `hello` (within 10 s of the upgrade), with its stored credential if it has one.
//! 2. With a credential the app knows for this extension id: `welcome`, then requests.
//!    With none: the extension sends `pairRequest`, the app answers `pairPending` with a short
//!    code that the popup and the app's dialog both show, and once the user decides, `paired`
//!    (carrying the new credential, sent only over this connection) or `pairRejected`.
//!    A wrong, revoked or already-used credential: the connection is closed (1008).
//! 3. The app sends `request {id, command}`; the extension answers `response {id, outcome}`
//!    once per request. A request the app stopped waiting for (timeout) is never resent and its
//!    late response is dropped.
//! 4. `revoked` then close (1008 "revoked") when the user revokes the pairing.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The WebSocket path of the bridge.
pub const BRIDGE_PATH: &str = "/v1/bridge";

/// The protocol version this app speaks; a `hello` with another one is refused.
pub const PROTOCOL_VERSION: u32 = 1;

/// Largest frame the bridge accepts (snapshots of large pages come in one frame).
pub const MAX_FRAME_BYTES: usize = 32 * 1024 * 1024;

/// A message from the extension to the app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ExtensionMessage {
    /// The first message of every connection.
    Hello {
        /// Must be [`PROTOCOL_VERSION`].
        protocol: u32,
        /// The browser's name (`Chrome`, `Edge`, `Chromium`), from its user-agent data.
        browser: String,
        /// The browser's version.
        browser_version: String,
        /// The extension's version (its manifest's).
        extension_version: String,
        /// The credential from an earlier pairing (`chrome.storage.local`); `None` to pair.
        credential: Option<String>,
    },
    /// Asks the app to pair (only after a `hello` without a credential).
    PairRequest {},
    /// The answer to the request with this id.
    Response {
        /// The request's id.
        id: u32,
        /// What happened.
        outcome: CommandOutcome,
    },
    /// Something the user did in the browser that the app shows (tabs shared or closed).
    TabsChanged {
        /// How many tabs are shared now.
        shared: u32,
    },
    /// The user revoked the pairing from the popup: the app revokes the credential and closes.
    Revoke {},
    /// Keeps the connection (and the extension's service worker) alive; ignored.
    Ping {},
}

/// A message from the app to the extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum AppMessage {
    /// The credential was accepted: the connection is live.
    Welcome {
        /// The app's device name ("connected to <device name>").
        device_name: String,
        /// The pairing the credential belongs to.
        pairing_id: String,
    },
    /// The pairing request waits for the user in the app; the popup shows `code`, the same
    /// code as the app's dialog.
    PairPending {
        /// The request's id.
        request_id: String,
        /// A short code (`482-913`) to compare with the app's dialog.
        code: String,
    },
    /// The user approved: keep `credential` in `chrome.storage.local`; the connection is live.
    Paired {
        /// The credential (sent once, only over this connection; the app keeps its hash).
        credential: String,
        /// The new pairing's id.
        pairing_id: String,
        /// The app's device name.
        device_name: String,
    },
    /// The user declined, or the request expired; the connection closes.
    PairRejected {
        /// Why, for the popup.
        reason: String,
    },
    /// A command to run; answer with one `response` of the same id.
    Request {
        /// Request id, unique on this connection.
        id: u32,
        /// What to do.
        command: BridgeCommand,
    },
    /// The pairing was revoked (in the app, the CLI or the popup): forget the credential.
    Revoked {},
}

/// A command the app sends. Each maps onto one method of browser-core's `BrowserBackend`; the
/// extension runs only its own shipped code for each (the agent's fixed functions, an
/// allow-list of `chrome.debugger` methods), never script text from the app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "op", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum BridgeCommand {
    /// Every tab; unshared tabs carry no URL or title. Result: `TabInfo[]`.
    Tabs {},
    /// Open a new shared tab at a checked URL and wait for its load. Result: `TabInfo`.
    OpenTab {
        /// http, https or about:blank.
        url: String,
    },
    /// Close a shared tab. Result: `null`.
    CloseTab {
        /// The tab id.
        tab: String,
    },
    /// Bring a shared tab to the front. Result: `null`.
    ActivateTab {
        /// The tab id.
        tab: String,
    },
    /// Navigate a shared tab and wait for the load. Result: `TabInfo`.
    Navigate {
        /// The tab id.
        tab: String,
        /// Where to (browser-core's `Navigation`: `{kind: url|back|forward|reload, ...}`).
        #[specta(type = NavigationWire)]
        to: Value,
    },
    /// The frames of a shared tab, top first. Result: `FrameInfo[]`.
    Frames {
        /// The tab id.
        tab: String,
    },
    /// Call one of the agent's fixed functions in a frame. Result: the function's JSON.
    CallAgent {
        /// The tab id.
        tab: String,
        /// The frame id (`"0"`: the top frame).
        frame: String,
        /// Which function.
        function: AgentFunctionName,
        /// Its JSON arguments.
        #[specta(type = specta_typescript::Unknown)]
        args: Value,
    },
    /// Dispatch trusted input through `chrome.debugger` (`Input.*`). Result: `InputEffectsWire`
    /// (what the input started in the tab, seen by the time the page handled it); `null` from
    /// an older extension.
    Input {
        /// The tab id.
        tab: String,
        /// browser-core's `InputEvent` (`{kind: mouse_move|click|key|insert_text, ...}`).
        #[specta(type = InputEventWire)]
        event: Value,
    },
}

/// The agent's fixed functions (browser-core's `AgentFunction`), the only ones the extension
/// calls in a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum AgentFunctionName {
    /// `snapshot`.
    Snapshot,
    /// `act`.
    Act,
    /// `scrollPage`.
    ScrollPage,
    /// `frameRect`.
    FrameRect,
    /// `announceFrames`.
    AnnounceFrames,
    /// `frameSlot`.
    FrameSlot,
    /// `pageInfo`.
    PageInfo,
}

/// The result of one command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum CommandOutcome {
    /// It ran; `value` is the command's result.
    Ok {
        /// The result (shape per command, see [`BridgeCommand`]).
        #[specta(type = specta_typescript::Unknown)]
        value: Value,
    },
    /// It failed.
    Error {
        /// Which kind of failure.
        kind: FailureKind,
        /// For the model: lower-case, naming the value.
        message: String,
    },
}

/// Kinds of command failure, mapped onto browser-core's `BrowserError`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum FailureKind {
    /// The tab does not exist any more.
    TabClosed,
    /// The tab is not shared with Suzent.
    TabNotShared,
    /// The frame navigated away or was removed.
    FrameGone,
    /// Refused by the extension's policy (a `chrome://` page, a file input).
    Refused,
    /// The agent in the page failed.
    Agent,
    /// Anything else (a `chrome.*` API failed).
    Browser,
}

/// The TypeScript shape of a navigation (browser-core's `Navigation`), for the bindings only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NavigationWire {
    /// A new address.
    Url {
        /// The address.
        url: String,
    },
    /// One step back.
    Back,
    /// One step forward.
    Forward,
    /// Reload.
    Reload {
        /// Bypass the cache.
        #[serde(rename = "ignoreCache")]
        ignore_cache: bool,
    },
}

/// The TypeScript shape of trusted input (browser-core's `InputEvent`), for the bindings only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InputEventWire {
    /// Move the mouse.
    MouseMove {
        /// CSS px from the viewport's left.
        x: f64,
        /// CSS px from the viewport's top.
        y: f64,
    },
    /// Click `count` times.
    Click {
        /// CSS px from the viewport's left.
        x: f64,
        /// CSS px from the viewport's top.
        y: f64,
        /// 1 or 2.
        count: u8,
    },
    /// Press and release a key.
    Key {
        /// DOM `key`.
        key: String,
        /// DOM `code`.
        code: String,
        /// Windows virtual key code.
        #[serde(rename = "keyCode")]
        key_code: u32,
        /// The produced text, if any.
        text: Option<String>,
        /// Alt 1, Control 2, Meta 4, Shift 8.
        modifiers: u8,
    },
    /// Insert text at the focus.
    InsertText {
        /// The text.
        text: String,
    },
}

/// A tab as the extension reports it (browser-core's `TabInfo`), for the bindings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TabInfoWire {
    /// The tab id as text.
    pub id: String,
    /// Its URL; empty for tabs that are not shared.
    pub url: String,
    /// Its title; empty for tabs that are not shared.
    pub title: String,
    /// Whether it is the active tab of its window.
    pub active: bool,
    /// Whether the user shares it with Suzent.
    pub shared: bool,
    /// The tab that opened it, if known.
    pub opener: Option<String>,
}

/// What an input event started (browser-core's `InputEffects`), for the bindings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct InputEffectsWire {
    /// The tab's top frame began a navigation (`webNavigation.onBeforeNavigate`, or a
    /// same-document URL change).
    pub navigation: bool,
    /// A new tab was created with this tab as its opener.
    pub new_tab: bool,
}

/// A frame as the extension reports it (browser-core's `FrameInfo`), for the bindings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct FrameInfoWire {
    /// The frame id as text (`"0"`: the top frame).
    pub id: String,
    /// The parent frame's id; `None` for the top frame.
    pub parent: Option<String>,
    /// The document URL.
    pub url: String,
    /// Whether the agent can run in it.
    pub reachable: bool,
    /// Why not, if not.
    pub reason: Option<String>,
}

/// Where the extension's generated bindings live, relative to the repository root.
pub const BINDINGS_PATH: &str = "extensions/browser/src/bindings.ts";

/// The TypeScript of the extension's bridge types (what `gen-extension-bindings` writes).
///
/// Errors: the exporter's message (a type TypeScript cannot express).
pub fn typescript_bindings() -> Result<String, String> {
    let types = specta::Types::default()
        .register::<ExtensionMessage>()
        .register::<AppMessage>()
        .register::<BridgeCommand>()
        .register::<CommandOutcome>()
        .register::<TabInfoWire>()
        .register::<FrameInfoWire>()
        .register::<InputEffectsWire>()
        .register::<NavigationWire>()
        .register::<InputEventWire>();
    let header = "// Generated by `cargo run -p suzent-server --example gen-extension-bindings` from the \
                  Rust bridge protocol (crates/suzent-server/src/protocol.rs). Do not edit by hand.\n";
    specta_typescript::Typescript::default()
        .header(header)
        .export(&types, specta_serde::Format)
        .map_err(|e| format!("cannot export the extension bindings: {e}"))
}
