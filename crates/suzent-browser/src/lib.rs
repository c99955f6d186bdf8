//! Suzent's browser core: what a browser backend must do ([`BrowserBackend`]), the in-page
//! agent and its fixed functions ([`AGENT_JS`], [`AgentFunction`]), and the session logic that
//! turns `browser_action` commands into snapshots with refs and short action results, the same
//! for every backend.
//!
//! `CONTRACT.md` beside `Cargo.toml` is the contract for backend authors (the extension bridge).
#![deny(missing_docs)]

mod agent;
mod backend;

pub use agent::{
    AGENT_CALL_FUNCTION, AGENT_JS, ActAction, ActArgs, ActResult, AgentCall, AgentFunction,
    AnnounceArgs, FrameRectArgs, FrameSlotArgs, FrameSlotResult, FrameSnapshot, PageInfo, Point,
    Rect, ScrollPageArgs, ScrollResult, SnapNode, SnapshotArgs,
};
pub use backend::{
    BrowserBackend, BrowserError, DownloadReport, FrameInfo, InputEvent, Navigation, TabInfo,
};
