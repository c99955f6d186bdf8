//! Suzent's browser core: what a browser backend must do ([`BrowserBackend`]), the in-page
//! agent and its fixed functions ([`AGENT_JS`], [`AgentFunction`]), and the session logic that
//! turns `browser_action` commands into snapshots with refs and short action results, the same
//! for every backend.
//!
//! `CONTRACT.md` beside `Cargo.toml` is the contract for backend authors (the extension bridge).
#![deny(missing_docs)]

mod agent;
mod backend;
mod cdp;
mod keys;
mod managed;
mod policy;
mod render;
mod session;

pub use agent::{
    AGENT_CALL_FUNCTION, AGENT_JS, ActAction, ActArgs, ActResult, AgentCall, AgentFunction,
    AnnounceArgs, FrameRectArgs, FrameSlotArgs, FrameSlotResult, FrameSnapshot, PageInfo, Point,
    Rect, ScrollPageArgs, ScrollResult, SnapNode, SnapshotArgs,
};
pub use backend::{
    BrowserBackend, BrowserError, DownloadReport, FrameInfo, InputEffects, InputEvent, Navigation,
    TabInfo,
};
pub use cdp::{CdpBackend, DownloadPolicy, is_executable_name, sanitize_file_name};
pub use keys::key_event;
pub use managed::{ManagedBrowser, ManagedConfig, find_browser};
pub use policy::{check_navigation, is_controllable, origin_of};
pub use render::{ElementRef, RenderFrame, Rendered, paginate, render};
pub use session::{BrowserSession, CommandOutput, SessionConfig, format_tabs};
