//! The in-page agent: its source ([`AGENT_JS`]), the closed list of functions a backend may
//! call in a frame ([`AgentFunction`]), and the JSON shapes of their arguments and results.
//! `CONTRACT.md` beside this crate's `Cargo.toml` describes the same for backend authors.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The agent's source (`js/agent.js`). Evaluating it in a frame's isolated world (or bundling
/// it into the extension's content script) defines `globalThis.__suzentAgent` with
/// `call(name, args)`; evaluating it twice keeps the first instance.
pub const AGENT_JS: &str = include_str!("../js/agent.js");

/// The function a CDP backend calls once the agent is installed, as the declaration of
/// `Runtime.callFunctionOn` with the function name and arguments passed as call arguments
/// (never spliced into source text). It returns the result as JSON text: one string crosses
/// the protocol much faster than a large object graph (the 20,000-element snapshot).
pub const AGENT_CALL_FUNCTION: &str =
    "function (name, args) { return JSON.stringify(globalThis.__suzentAgent.call(name, args)); }";

/// The agent's fixed functions. Backends call them by this name only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AgentFunction {
    /// Reads the frame's document into [`FrameSnapshot`] and remembers its elements under
    /// the snapshot id (args: [`SnapshotArgs`]).
    Snapshot,
    /// Acts on one element of the frame's latest snapshot (args: [`ActArgs`], result:
    /// [`ActResult`]).
    Act,
    /// Scrolls the frame's window (args: [`ScrollPageArgs`], result: [`ScrollResult`]).
    ScrollPage,
    /// The content box of the iframe element at a slot of the frame's latest snapshot, in the
    /// frame's viewport coordinates (args: [`FrameRectArgs`], result: [`Rect`]).
    FrameRect,
    /// Posts `{suzentFrame: token, slot}` to the window of each iframe element of the latest
    /// snapshot, so that each child frame learns which slot of its parent it fills (args:
    /// [`AnnounceArgs`], result: `{"posted": n}`).
    AnnounceFrames,
    /// Which slot of its parent this frame learned for `token` (args: [`FrameSlotArgs`],
    /// result: [`FrameSlotResult`]).
    FrameSlot,
    /// URL, title and scroll position of the frame (args: `{}`, result: [`PageInfo`]).
    PageInfo,
}

impl AgentFunction {
    /// The name as the agent knows it (`snapshot`, `frameRect`).
    pub fn as_str(self) -> &'static str {
        match self {
            AgentFunction::Snapshot => "snapshot",
            AgentFunction::Act => "act",
            AgentFunction::ScrollPage => "scrollPage",
            AgentFunction::FrameRect => "frameRect",
            AgentFunction::AnnounceFrames => "announceFrames",
            AgentFunction::FrameSlot => "frameSlot",
            AgentFunction::PageInfo => "pageInfo",
        }
    }
}

/// One call of an agent function: `{"function": "snapshot", "args": {...}}` on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentCall {
    /// Which function.
    pub function: AgentFunction,
    /// Its arguments (one of the `*Args` shapes of this module).
    pub args: Value,
}

impl AgentCall {
    /// A call with typed arguments.
    pub fn new<A: Serialize>(function: AgentFunction, args: &A) -> AgentCall {
        AgentCall {
            function,
            args: serde_json::to_value(args).unwrap_or(Value::Null),
        }
    }
}

/// Arguments of `snapshot`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotArgs {
    /// The snapshot id (`s3`); element indices are remembered under it, replacing the frame's
    /// previous snapshot.
    pub snapshot_id: String,
    /// Longest name or value kept per node, in characters (longer ones end in `…`).
    pub max_text: u32,
}

/// One line of a frame's snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapNode {
    /// Nesting depth below the frame's root (0 = top level).
    pub depth: u32,
    /// ARIA role or the element kind (`button`, `link`, `textbox`, `heading`, `text`,
    /// `iframe`, `shadow-host`).
    pub role: String,
    /// Accessible name or the text.
    #[serde(default)]
    pub name: String,
    /// Element index for refs (interactive elements only), unique within the frame's
    /// snapshot.
    #[serde(default)]
    pub index: Option<u32>,
    /// Current value (text fields, selects). Never present for password fields.
    #[serde(default)]
    pub value: Option<String>,
    /// States and attributes (`checked`, `disabled`, `expanded`, `level=2`, `password`,
    /// `required`, `type=file`).
    #[serde(default)]
    pub props: Vec<String>,
    /// Link target (absolute URL) for links.
    #[serde(default)]
    pub href: Option<String>,
    /// For `iframe` nodes: the frame slot (the iframe's index in the snapshot's frame list).
    #[serde(default)]
    pub slot: Option<u32>,
    /// A remark shown after the node (`closed shadow root (not reachable)`).
    #[serde(default)]
    pub note: Option<String>,
}

/// What `snapshot` returns for one frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameSnapshot {
    /// The document URL.
    pub url: String,
    /// The document title.
    pub title: String,
    /// The lines, in document order (open shadow roots and slotted content where they
    /// render).
    pub nodes: Vec<SnapNode>,
    /// How many iframe slots the snapshot has (`slot` values are `0..frame_slots`).
    pub frame_slots: u32,
    /// How many elements the traversal visited.
    pub elements: u32,
}

/// How `act` acts on an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActAction {
    /// Scroll the element into view and return the point to click (its center, checked to be
    /// the element or inside it by hit testing).
    Point,
    /// Set the value (text fields, text areas, selects, content-editable) and fire `input`
    /// and `change`. File inputs are refused.
    Fill,
    /// Focus the element (for `type` and `press`).
    Focus,
    /// Scroll the element's nearest scrollable ancestor (or itself) by `dx`, `dy`.
    Scroll,
}

/// Arguments of `act`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActArgs {
    /// The snapshot the index comes from; another id fails with code `stale`.
    pub snapshot_id: String,
    /// The element's index in that snapshot.
    pub index: u32,
    /// What to do.
    pub action: ActAction,
    /// The value for `fill`.
    #[serde(default)]
    pub value: Option<String>,
    /// Horizontal distance for `scroll` (CSS px).
    #[serde(default)]
    pub dx: f64,
    /// Vertical distance for `scroll` (CSS px).
    #[serde(default)]
    pub dy: f64,
    /// For `point`: measure only, do not scroll the element into view first.
    #[serde(default)]
    pub no_scroll: bool,
}

/// A point in a frame's viewport (CSS px).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Horizontal position.
    pub x: f64,
    /// Vertical position.
    pub y: f64,
}

/// What `act` returns. On failure `error` says why and `code` is one of `stale`, `hidden`,
/// `covered`, `disabled`, `file_input`, `not_editable`, `no_option`, `bad_args`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActResult {
    /// For `point`: where to click.
    #[serde(default)]
    pub point: Option<Point>,
    /// For `point`: whether bringing the element into view moved it.
    #[serde(default)]
    pub scrolled: bool,
    /// A short description of the element (`button "Pay"`).
    #[serde(default)]
    pub element: Option<String>,
    /// What happened, short (`value set`, `scrolled to 0,800`).
    #[serde(default)]
    pub info: Option<String>,
    /// Failure message.
    #[serde(default)]
    pub error: Option<String>,
    /// Failure code.
    #[serde(default)]
    pub code: Option<String>,
}

/// Arguments of `scrollPage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScrollPageArgs {
    /// Horizontal distance (CSS px); negative scrolls left.
    pub dx: f64,
    /// Vertical distance (CSS px); negative scrolls up.
    pub dy: f64,
}

/// What `scrollPage` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScrollResult {
    /// Horizontal scroll position after scrolling.
    pub x: f64,
    /// Vertical scroll position after scrolling.
    pub y: f64,
    /// Largest horizontal position.
    pub max_x: f64,
    /// Largest vertical position.
    pub max_y: f64,
    /// The visible height.
    pub view_height: f64,
    /// The visible width.
    pub view_width: f64,
}

/// Arguments of `frameRect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameRectArgs {
    /// The snapshot the slot comes from.
    pub snapshot_id: String,
    /// The iframe's slot.
    pub slot: u32,
    /// Scroll the iframe into view first (the nearest edge).
    #[serde(default)]
    pub reveal: bool,
}

/// A rectangle in a frame's viewport (CSS px).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
    /// For `frameRect` with `reveal`: whether the iframe moved into view.
    #[serde(default)]
    pub scrolled: bool,
}

/// Arguments of `announceFrames`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnnounceArgs {
    /// The snapshot whose iframe slots are announced.
    pub snapshot_id: String,
    /// A random token for this announcement.
    pub token: String,
}

/// Arguments of `frameSlot`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameSlotArgs {
    /// The token of the parent's announcement.
    pub token: String,
}

/// What `frameSlot` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameSlotResult {
    /// The slot announced by the parent under the token, if one arrived.
    pub slot: Option<u32>,
}

/// What `pageInfo` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageInfo {
    /// The document URL.
    pub url: String,
    /// The document title.
    pub title: String,
    /// `document.readyState`.
    pub ready_state: String,
}
