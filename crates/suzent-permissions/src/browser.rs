//! Browser calls (`browser_action`): reading a page is allowed, navigating is checked against
//! destination rules (http and https only), acting on a page asks unless a rule allows its
//! origin. A browser call's destination is the page's origin (`https://docs.test`,
//! `http://127.0.0.1:8080`): a host pattern (`docs.test`, `*.docs.test`) covers every origin on
//! that host, an origin pattern only that origin. "Allow for this chat" remembers the origin
//! ("allow browser actions on http://127.0.0.1:8080 in this chat": another port, or http
//! instead of https, still asks). Every decision names the origin.

use crate::destinations::Destinations;
use suzent_core::{Behavior, DecisionSource, PermissionDecision, PermissionMode, Risk};

/// What a browser call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrowserAccessKind {
    /// Reads only: the tab list, a snapshot, choosing a tab.
    Read,
    /// Loads a new address in a tab.
    Navigate,
    /// Acts on the page (clicks, input, scrolling, history, reload).
    Act,
}

/// A browser call as the engine sees it ([`crate::ToolAccess::Browser`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserAccess {
    /// Reads, navigates or acts.
    pub kind: BrowserAccessKind,
    /// The command's name (`click`), for messages.
    pub command: String,
    /// For [`BrowserAccessKind::Navigate`]: the address to open, as given. Otherwise the
    /// selected tab's current URL, `None` when no tab is known yet.
    pub url: Option<String>,
}

/// Reason codes of browser decisions.
pub mod codes {
    use suzent_core::ReasonCode;

    /// A navigation to a scheme other than http, https or about:blank.
    pub const SCHEME_REFUSED: ReasonCode = ReasonCode::BrowserSchemeRefused;
    /// A navigation to an address that does not parse.
    pub const BAD_URL: ReasonCode = ReasonCode::BrowserBadUrl;
    /// Reading a page.
    pub const READ: ReasonCode = ReasonCode::BrowserRead;
    /// Acting on a page or opening an address needs approval.
    pub const NEEDS_APPROVAL: ReasonCode = ReasonCode::BrowserRequiresApproval;
}

/// The origin (`https://docs.test`, `http://127.0.0.1:8080`) of an http(s) URL.
fn origin(url: &str) -> Option<(String, String)> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = parsed.host_str().filter(|h| !h.is_empty())?.to_string();
    Some((parsed.origin().ascii_serialization(), host))
}

/// The scheme of a URL-like text, lower-case, if it has one.
fn scheme(url: &str) -> Option<String> {
    let (s, _) = url.trim().split_once(':')?;
    (!s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then(|| s.to_ascii_lowercase())
}

impl BrowserAccess {
    /// What the decision names: the origin, or the address, or "an unknown page".
    pub fn target(&self) -> String {
        match self.url.as_deref() {
            Some(u) if u.trim() == "about:blank" => "about:blank".to_string(),
            Some(u) => origin(u)
                .map(|(o, _)| o)
                .unwrap_or_else(|| u.chars().take(120).collect()),
            None => "an unknown page (no tab is selected yet)".to_string(),
        }
    }

    /// The origin the call addresses, for destination rules: complete with one origin for
    /// http(s) URLs, empty and incomplete otherwise (no allow rule covers it; `about:blank` has
    /// none).
    pub(crate) fn destinations(&self) -> Destinations {
        match self.url.as_deref().and_then(origin) {
            Some((o, _)) => Destinations {
                found: vec![o],
                complete: true,
            },
            None => Destinations {
                found: Vec::new(),
                complete: false,
            },
        }
    }

    /// A refusal that no rule or mode can lift: navigations to other schemes, or to
    /// addresses that do not parse.
    pub(crate) fn refusal(&self) -> Option<PermissionDecision> {
        if self.kind != BrowserAccessKind::Navigate {
            return None;
        }
        let url = self.url.as_deref().unwrap_or_default().trim();
        if url == "about:blank" {
            return None;
        }
        match scheme(url).as_deref() {
            Some("http" | "https") => {}
            Some(other) => {
                return Some(PermissionDecision::new(
                    Behavior::Deny,
                    DecisionSource::ToolDefault,
                    codes::SCHEME_REFUSED,
                    format!(
                        "Opening '{other}:' addresses is never allowed: browser_action opens only http, https and about:blank."
                    ),
                    Risk::High,
                ));
            }
            None => {}
        }
        if origin(url).is_none() {
            let shown: String = url.chars().take(120).collect();
            return Some(PermissionDecision::new(
                Behavior::Deny,
                DecisionSource::ToolDefault,
                codes::BAD_URL,
                format!("'{shown}' is not a valid http or https address, so it cannot be checked."),
                Risk::High,
            ));
        }
        None
    }

    /// The mode's default when no rule decides (full access is handled before).
    pub(crate) fn mode_default(&self, mode: PermissionMode) -> PermissionDecision {
        let target = self.target();
        let blank = self.url.as_deref().map(str::trim) == Some("about:blank");
        if self.kind == BrowserAccessKind::Read
            || (self.kind == BrowserAccessKind::Navigate && blank)
        {
            return PermissionDecision::new(
                Behavior::Allow,
                DecisionSource::ToolDefault,
                codes::READ,
                format!(
                    "Reading the browser ({}) is allowed; the page is {target}.",
                    self.command
                ),
                Risk::Low,
            );
        }
        let what = match self.kind {
            BrowserAccessKind::Navigate => format!("Opening {target} in the browser"),
            _ => format!("browser_action {} on {target}", self.command),
        };
        let _ = mode;
        PermissionDecision::new(
            Behavior::Ask,
            DecisionSource::ToolDefault,
            codes::NEEDS_APPROVAL,
            format!("{what} needs your approval."),
            Risk::Medium,
        )
    }

    /// The origin a remembered approval allows, when there is one.
    pub(crate) fn grant_origin(&self) -> Option<String> {
        let d = self.destinations();
        match d.found.as_slice() {
            [only] if d.complete => Some(only.clone()),
            _ => None,
        }
    }
}
