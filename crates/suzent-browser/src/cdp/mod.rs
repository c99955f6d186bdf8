//! The DevTools-protocol backend, used by `managed` mode (a Chromium Suzent starts) and `cdp`
//! mode (a browser the user started with a loopback DevTools endpoint).
//!
//! Tabs are page targets, each attached as a flat session; out-of-process iframes are attached
//! automatically (`Target.setAutoAttach`) as sessions of their own, so cross-origin frames are
//! reachable with site isolation on. The agent runs in an isolated world per frame
//! (`Page.createIsolatedWorld`), installed from [`crate::AGENT_JS`] and called through
//! `Runtime.callFunctionOn` with the function name and arguments as call arguments.

mod conn;
mod downloads;

pub(crate) use conn::Connection;
pub use downloads::{DownloadPolicy, is_executable_name, sanitize_file_name};

use crate::agent::{AGENT_CALL_FUNCTION, AGENT_JS, AgentCall};
use crate::backend::{
    BrowserBackend, BrowserError, DownloadReport, FrameInfo, InputEffects, InputEvent, Navigation,
    TabInfo,
};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use suzent_core::BrowserMode;

/// How long a navigation waits for the new document's load event before it returns anyway.
const LOAD_WAIT: Duration = Duration::from_secs(15);
/// The isolated world's name (visible in DevTools only).
const WORLD_NAME: &str = "suzent-agent";

#[derive(Debug, Default)]
struct State {
    /// Page target id -> its session.
    pages: HashMap<String, String>,
    /// Child (iframe) session -> its parent session.
    child_parent: HashMap<String, String>,
    /// Out-of-process frame id (= its target id) -> its session.
    frame_sessions: HashMap<String, String>,
    /// (session, frame) -> the agent's execution context.
    contexts: HashMap<(String, String), i64>,
    /// The tab last brought to the front.
    active: Option<String>,
}

/// A browser driven over the DevTools protocol.
#[derive(Debug)]
pub struct CdpBackend {
    mode: BrowserMode,
    conn: Connection,
    state: Arc<Mutex<State>>,
    downloads: Option<Arc<downloads::Downloads>>,
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    match state.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn is_missing_target(e: &BrowserError) -> bool {
    matches!(e, BrowserError::Protocol(m) if m.contains("No target with given id")
        || m.contains("No session with given id")
        || m.contains("Session with given id not found")
        || m.contains("target closed"))
}

fn is_missing_context(e: &BrowserError) -> bool {
    matches!(e, BrowserError::Protocol(m) if m.contains("Cannot find context")
        || m.contains("context with specified id")
        || m.contains("Execution context was destroyed")
        || m.contains("Cannot find execution context"))
}

impl CdpBackend {
    /// Connects to a browser's DevTools WebSocket. `downloads` (managed mode) makes the browser
    /// save downloads into the policy's directory and report them.
    pub async fn connect(
        mode: BrowserMode,
        ws_url: &str,
        downloads: Option<DownloadPolicy>,
    ) -> Result<CdpBackend, BrowserError> {
        let conn = Connection::connect(ws_url).await?;
        let state: Arc<Mutex<State>> = Arc::default();
        let downloads = match downloads {
            Some(policy) => Some(Arc::new(
                downloads::Downloads::start(conn.clone(), policy).await?,
            )),
            None => None,
        };
        let backend = CdpBackend {
            mode,
            conn,
            state,
            downloads,
        };
        backend.listen();
        Ok(backend)
    }

    /// Connects to the DevTools endpoint of a browser on this machine: `http://127.0.0.1:9222`,
    /// `localhost:9222` or a `ws://` URL. Other hosts are refused (the endpoint gives full
    /// control of the browser).
    pub async fn attach(endpoint: &str) -> Result<CdpBackend, BrowserError> {
        let ws = resolve_endpoint(endpoint).await?;
        CdpBackend::connect(BrowserMode::Cdp, &ws, None).await
    }

    /// Asks the browser to quit (cookies and the profile are written out first).
    pub async fn close_browser(&self) -> Result<(), BrowserError> {
        self.conn
            .call_with_timeout("Browser.close", json!({}), None, Duration::from_secs(5))
            .await
            .map(|_| ())
    }

    /// Whether the browser went away.
    pub fn is_closed(&self) -> bool {
        self.conn.is_closed()
    }

    fn listen(&self) {
        let mut events = self.conn.subscribe();
        let state = self.state.clone();
        let conn = self.conn.clone();
        tokio::spawn(async move {
            loop {
                let ev = match events.recv().await {
                    Ok(ev) => ev,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(_) => break,
                };
                match ev.method.as_str() {
                    "Target.attachedToTarget" => {
                        let info = &ev.params["targetInfo"];
                        let session = str_field(&ev.params, "sessionId");
                        if info["type"].as_str() == Some("iframe") {
                            let frame = str_field(info, "targetId");
                            if let Some(parent) = ev.session.clone() {
                                let mut st = lock(&state);
                                st.child_parent.insert(session.clone(), parent);
                                st.frame_sessions.insert(frame, session.clone());
                            }
                            let conn = conn.clone();
                            tokio::spawn(async move {
                                let s = Some(session.as_str());
                                let _ = conn.call("Page.enable", json!({}), s).await;
                                let _ = conn
                                    .call(
                                        "Target.setAutoAttach",
                                        json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}),
                                        s,
                                    )
                                    .await;
                                let _ = conn
                                    .call("Runtime.runIfWaitingForDebugger", json!({}), s)
                                    .await;
                            });
                        }
                    }
                    "Target.detachedFromTarget" => {
                        let session = str_field(&ev.params, "sessionId");
                        let mut st = lock(&state);
                        st.child_parent.remove(&session);
                        st.frame_sessions.retain(|_, s| *s != session);
                        st.pages.retain(|_, s| *s != session);
                        st.contexts.retain(|(s, _), _| *s != session);
                    }
                    "Page.frameNavigated" => {
                        let frame = str_field(&ev.params["frame"], "id");
                        if let Some(session) = ev.session {
                            lock(&state).contexts.remove(&(session, frame));
                        }
                    }
                    "Page.frameDetached" => {
                        let frame = str_field(&ev.params, "frameId");
                        lock(&state).contexts.retain(|(_, f), _| *f != frame);
                    }
                    _ => {}
                }
            }
        });
    }

    /// The session of a page target, attaching on first use.
    async fn page_session(&self, tab: &str) -> Result<String, BrowserError> {
        if let Some(s) = lock(&self.state).pages.get(tab) {
            return Ok(s.clone());
        }
        let attached = self
            .conn
            .call(
                "Target.attachToTarget",
                json!({"targetId": tab, "flatten": true}),
                None,
            )
            .await
            .map_err(|e| {
                if is_missing_target(&e) {
                    BrowserError::TabClosed(tab.to_string())
                } else {
                    e
                }
            })?;
        let session = str_field(&attached, "sessionId");
        let s = Some(session.as_str());
        self.conn.call("Page.enable", json!({}), s).await?;
        self.conn
            .call(
                "Target.setAutoAttach",
                json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}),
                s,
            )
            .await?;
        lock(&self.state)
            .pages
            .insert(tab.to_string(), session.clone());
        Ok(session)
    }

    async fn target_info(&self, tab: &str) -> Result<TabInfo, BrowserError> {
        let tabs = self.tabs().await?;
        tabs.into_iter()
            .find(|t| t.id == tab)
            .ok_or_else(|| BrowserError::TabClosed(tab.to_string()))
    }

    /// The sessions of a tab: its page session and every iframe session below it.
    fn tab_sessions(&self, page_session: &str) -> Vec<String> {
        let st = lock(&self.state);
        let mut out = vec![page_session.to_string()];
        let mut i = 0;
        while i < out.len() {
            let parent = out[i].clone();
            for (child, p) in &st.child_parent {
                if *p == parent && !out.contains(child) {
                    out.push(child.clone());
                }
            }
            i += 1;
        }
        out
    }

    /// The session in which a frame of the tab runs.
    fn session_for_frame(&self, page_session: &str, frame: &str) -> String {
        let st = lock(&self.state);
        st.frame_sessions
            .get(frame)
            .cloned()
            .unwrap_or_else(|| page_session.to_string())
    }

    /// Finds which session's frame tree holds the frame (out-of-process frames nested below
    /// other out-of-process frames live in their root's session).
    async fn locate_frame(&self, tab: &str, frame: &str) -> Result<String, BrowserError> {
        let page = self.page_session(tab).await?;
        let direct = self.session_for_frame(&page, frame);
        if direct != page {
            return Ok(direct);
        }
        for session in self.tab_sessions(&page) {
            let tree = self
                .conn
                .call("Page.getFrameTree", json!({}), Some(&session))
                .await;
            if let Ok(tree) = tree
                && tree_contains(&tree["frameTree"], frame)
            {
                return Ok(session);
            }
        }
        Err(BrowserError::FrameGone(frame.to_string()))
    }

    async fn context(&self, session: &str, frame: &str) -> Result<i64, BrowserError> {
        let key = (session.to_string(), frame.to_string());
        if let Some(id) = lock(&self.state).contexts.get(&key) {
            return Ok(*id);
        }
        let world = self
            .conn
            .call(
                "Page.createIsolatedWorld",
                json!({"frameId": frame, "worldName": WORLD_NAME}),
                Some(session),
            )
            .await
            .map_err(|e| match e {
                BrowserError::Protocol(m) if m.contains("No frame") => {
                    BrowserError::FrameGone(frame.to_string())
                }
                other => other,
            })?;
        let id = world["executionContextId"]
            .as_i64()
            .ok_or_else(|| BrowserError::Protocol("no execution context for the frame".into()))?;
        let installed = self
            .conn
            .call(
                "Runtime.evaluate",
                json!({"expression": AGENT_JS, "contextId": id, "returnByValue": true}),
                Some(session),
            )
            .await?;
        if let Some(ex) = installed.get("exceptionDetails") {
            return Err(BrowserError::Agent(format!(
                "the agent did not start in frame {frame}: {}",
                exception_text(ex)
            )));
        }
        lock(&self.state).contexts.insert(key, id);
        Ok(id)
    }

    async fn call_in_context(
        &self,
        session: &str,
        context: i64,
        call: &AgentCall,
    ) -> Result<Value, BrowserError> {
        let result = self
            .conn
            .call(
                "Runtime.callFunctionOn",
                json!({
                    "functionDeclaration": AGENT_CALL_FUNCTION,
                    "executionContextId": context,
                    "arguments": [{"value": call.function.as_str()}, {"value": call.args}],
                    "returnByValue": true,
                    "awaitPromise": false,
                }),
                Some(session),
            )
            .await?;
        if let Some(ex) = result.get("exceptionDetails") {
            return Err(BrowserError::Agent(format!(
                "agent call {} failed: {}",
                call.function.as_str(),
                exception_text(ex)
            )));
        }
        match result["result"]["value"].as_str() {
            Some(text) => serde_json::from_str(text).map_err(|e| {
                BrowserError::Protocol(format!(
                    "agent call {} gave no JSON: {e}",
                    call.function.as_str()
                ))
            }),
            None => Ok(Value::Null),
        }
    }

    /// Waits for the load event of the tab's top document (bounded by [`LOAD_WAIT`]).
    async fn wait_for_load(
        &self,
        events: &mut tokio::sync::broadcast::Receiver<conn::CdpEvent>,
        session: &str,
    ) {
        let deadline = tokio::time::Instant::now() + LOAD_WAIT;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match tokio::time::timeout(left, events.recv()).await {
                Ok(Ok(ev)) => {
                    if ev.session.as_deref() == Some(session) && ev.method == "Page.loadEventFired"
                    {
                        return;
                    }
                }
                Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => continue,
                _ => return,
            }
        }
    }
}

fn tree_contains(tree: &Value, frame: &str) -> bool {
    if tree["frame"]["id"].as_str() == Some(frame) {
        return true;
    }
    tree["childFrames"]
        .as_array()
        .is_some_and(|kids| kids.iter().any(|k| tree_contains(k, frame)))
}

fn exception_text(ex: &Value) -> String {
    ex["exception"]["description"]
        .as_str()
        .or_else(|| ex["text"].as_str())
        .unwrap_or("exception")
        .to_string()
}

/// Collects `(frame, parent)` pairs of a frame tree, parents first.
fn walk_tree(tree: &Value, parent: Option<&str>, out: &mut Vec<(Value, Option<String>)>) {
    let frame = tree["frame"].clone();
    let id = str_field(&frame, "id");
    let parent = frame["parentId"]
        .as_str()
        .map(str::to_string)
        .or_else(|| parent.map(str::to_string));
    out.push((frame, parent));
    if let Some(kids) = tree["childFrames"].as_array() {
        for k in kids {
            walk_tree(k, Some(&id), out);
        }
    }
}

#[async_trait]
impl BrowserBackend for CdpBackend {
    fn mode(&self) -> BrowserMode {
        self.mode
    }

    async fn tabs(&self) -> Result<Vec<TabInfo>, BrowserError> {
        let targets = self.conn.call("Target.getTargets", json!({}), None).await?;
        let active = lock(&self.state).active.clone();
        let list = targets["targetInfos"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        Ok(list
            .iter()
            .filter(|t| t["type"].as_str() == Some("page"))
            .map(|t| {
                let id = str_field(t, "targetId");
                TabInfo {
                    active: active.as_deref() == Some(id.as_str()),
                    url: str_field(t, "url"),
                    title: str_field(t, "title"),
                    shared: true,
                    opener: t["openerId"].as_str().map(str::to_string),
                    id,
                }
            })
            .collect())
    }

    async fn open_tab(&self, url: &str) -> Result<TabInfo, BrowserError> {
        let created = self
            .conn
            .call("Target.createTarget", json!({"url": "about:blank"}), None)
            .await?;
        let tab = str_field(&created, "targetId");
        self.page_session(&tab).await?;
        lock(&self.state).active = Some(tab.clone());
        if url != "about:blank" {
            return self
                .navigate(
                    &tab,
                    &Navigation::Url {
                        url: url.to_string(),
                    },
                )
                .await;
        }
        self.target_info(&tab).await
    }

    async fn close_tab(&self, tab: &str) -> Result<(), BrowserError> {
        if !self.tabs().await?.iter().any(|t| t.id == tab) {
            return Err(BrowserError::TabClosed(tab.to_string()));
        }
        // The page closes itself (as `window.close()` would); the reply may come before or
        // after it is gone, so the tab list decides.
        let session = self.page_session(tab).await?;
        let _ = self
            .conn
            .call_with_timeout(
                "Page.close",
                json!({}),
                Some(&session),
                Duration::from_secs(5),
            )
            .await;
        let mut gone = false;
        for _ in 0..50 {
            if !self.tabs().await?.iter().any(|t| t.id == tab) {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if !gone {
            return Err(BrowserError::Protocol(format!("tab {tab} did not close")));
        }
        let mut st = lock(&self.state);
        st.pages.remove(tab);
        if st.active.as_deref() == Some(tab) {
            st.active = None;
        }
        Ok(())
    }

    async fn activate_tab(&self, tab: &str) -> Result<(), BrowserError> {
        self.conn
            .call("Target.activateTarget", json!({"targetId": tab}), None)
            .await
            .map_err(|e| {
                if is_missing_target(&e) {
                    BrowserError::TabClosed(tab.to_string())
                } else {
                    e
                }
            })?;
        lock(&self.state).active = Some(tab.to_string());
        Ok(())
    }

    async fn navigate(&self, tab: &str, to: &Navigation) -> Result<TabInfo, BrowserError> {
        let session = self.page_session(tab).await?;
        let s = Some(session.as_str());
        let mut events = self.conn.subscribe();
        let wait = match to {
            Navigation::Url { url } => {
                let r = self
                    .conn
                    .call("Page.navigate", json!({"url": url}), s)
                    .await?;
                if let Some(err) = r["errorText"].as_str().filter(|e| !e.is_empty()) {
                    return Err(BrowserError::Agent(format!("could not open {url}: {err}")));
                }
                r.get("loaderId").is_some()
            }
            Navigation::Reload { ignore_cache } => {
                self.conn
                    .call("Page.reload", json!({"ignoreCache": ignore_cache}), s)
                    .await?;
                true
            }
            Navigation::Back | Navigation::Forward => {
                let history = self
                    .conn
                    .call("Page.getNavigationHistory", json!({}), s)
                    .await?;
                let current = history["currentIndex"].as_i64().unwrap_or(0);
                let entries = history["entries"].as_array().cloned().unwrap_or_default();
                let target = if *to == Navigation::Back {
                    current - 1
                } else {
                    current + 1
                };
                let entry = usize::try_from(target)
                    .ok()
                    .and_then(|i| entries.get(i))
                    .ok_or_else(|| {
                        BrowserError::Agent(if *to == Navigation::Back {
                            "there is no earlier page in this tab's history".to_string()
                        } else {
                            "there is no later page in this tab's history".to_string()
                        })
                    })?;
                self.conn
                    .call(
                        "Page.navigateToHistoryEntry",
                        json!({"entryId": entry["id"]}),
                        s,
                    )
                    .await?;
                true
            }
        };
        if wait {
            self.wait_for_load(&mut events, &session).await;
        }
        self.target_info(tab).await
    }

    async fn frames(&self, tab: &str) -> Result<Vec<FrameInfo>, BrowserError> {
        let page = self.page_session(tab).await?;
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut out: Vec<FrameInfo> = Vec::new();
        for session in self.tab_sessions(&page) {
            let tree = match self
                .conn
                .call("Page.getFrameTree", json!({}), Some(&session))
                .await
            {
                Ok(t) => t,
                Err(e) if session == page => return Err(e),
                Err(_) => continue,
            };
            let mut frames = Vec::new();
            walk_tree(&tree["frameTree"], None, &mut frames);
            for (frame, parent) in frames {
                let id = str_field(&frame, "id");
                let url = str_field(&frame, "url");
                let failed = url.starts_with("chrome-error:");
                let info = FrameInfo {
                    id: id.clone(),
                    parent,
                    url,
                    reachable: !failed,
                    reason: failed.then(|| "the frame failed to load".to_string()),
                };
                match seen.get(&id) {
                    // An out-of-process frame also shows in its parent's tree: keep the
                    // entry of the session that runs it, at the parent's position.
                    Some(&i) => {
                        let parent = out[i].parent.clone();
                        out[i] = FrameInfo { parent, ..info };
                    }
                    None => {
                        seen.insert(id, out.len());
                        out.push(info);
                    }
                }
            }
        }
        Ok(out)
    }

    async fn call_agent(
        &self,
        tab: &str,
        frame: &str,
        call: &AgentCall,
    ) -> Result<Value, BrowserError> {
        let session = self.locate_frame(tab, frame).await?;
        let context = self.context(&session, frame).await?;
        match self.call_in_context(&session, context, call).await {
            Err(e) if is_missing_context(&e) => {
                // The document changed: nothing ran. A fresh agent answers (an old snapshot's
                // refs are then stale there).
                lock(&self.state)
                    .contexts
                    .remove(&(session.clone(), frame.to_string()));
                let context = self.context(&session, frame).await?;
                self.call_in_context(&session, context, call).await
            }
            other => other,
        }
    }

    async fn input(&self, tab: &str, event: &InputEvent) -> Result<(), BrowserError> {
        let session = self.page_session(tab).await?;
        let s = Some(session.as_str());
        match event {
            InputEvent::MouseMove { x, y } => {
                self.conn
                    .call(
                        "Input.dispatchMouseEvent",
                        json!({"type": "mouseMoved", "x": x, "y": y}),
                        s,
                    )
                    .await?;
            }
            InputEvent::Click { x, y, count } => {
                self.conn
                    .call(
                        "Input.dispatchMouseEvent",
                        json!({"type": "mouseMoved", "x": x, "y": y}),
                        s,
                    )
                    .await?;
                for n in 1..=(*count).max(1) {
                    for kind in ["mousePressed", "mouseReleased"] {
                        self.conn
                            .call(
                                "Input.dispatchMouseEvent",
                                json!({"type": kind, "x": x, "y": y, "button": "left",
                                       "buttons": if kind == "mousePressed" { 1 } else { 0 },
                                       "clickCount": n}),
                                s,
                            )
                            .await?;
                    }
                }
            }
            InputEvent::Key {
                key,
                code,
                key_code,
                text,
                modifiers,
            } => {
                let mut down = json!({
                    "type": if text.is_some() { "keyDown" } else { "rawKeyDown" },
                    "key": key, "code": code, "windowsVirtualKeyCode": key_code,
                    "nativeVirtualKeyCode": key_code, "modifiers": modifiers,
                });
                if let Some(t) = text {
                    down["text"] = json!(t);
                    down["unmodifiedText"] = json!(t);
                }
                self.conn.call("Input.dispatchKeyEvent", down, s).await?;
                self.conn
                    .call(
                        "Input.dispatchKeyEvent",
                        json!({"type": "keyUp", "key": key, "code": code,
                               "windowsVirtualKeyCode": key_code, "nativeVirtualKeyCode": key_code,
                               "modifiers": modifiers}),
                        s,
                    )
                    .await?;
            }
            InputEvent::InsertText { text } => {
                self.conn
                    .call("Input.insertText", json!({"text": text}), s)
                    .await?;
            }
        }
        Ok(())
    }

    /// Listens on the tab's session while the input is dispatched, then makes one round trip
    /// through the renderer (`Page.getFrameTree`). The renderer handled the event before it
    /// acknowledged the input, so the events the event started (`Page.frameRequestedNavigation`,
    /// `Page.windowOpen`, ...) were sent on the same session before that answer.
    async fn input_watched(
        &self,
        tab: &str,
        event: &InputEvent,
    ) -> Result<Option<InputEffects>, BrowserError> {
        let session = self.page_session(tab).await?;
        let mut events = self.conn.subscribe();
        self.input(tab, event).await?;
        let mut effects = InputEffects::default();
        if self
            .conn
            .call("Page.getFrameTree", json!({}), Some(session.as_str()))
            .await
            .is_err()
        {
            // The document is going away: treat it as the navigation it most likely is.
            effects.navigation = true;
        }
        loop {
            let ev = match events.try_recv() {
                Ok(ev) => ev,
                Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => {
                    return Ok(None);
                }
                Err(_) => break,
            };
            if ev.session.as_deref() != Some(session.as_str()) {
                continue;
            }
            let top = |key: &str| ev.params[key].as_str() == Some(tab);
            match ev.method.as_str() {
                "Page.windowOpen" => effects.new_tab = true,
                "Page.frameRequestedNavigation"
                | "Page.frameStartedNavigating"
                | "Page.frameStartedLoading"
                | "Page.navigatedWithinDocument"
                    if top("frameId") =>
                {
                    effects.navigation = true
                }
                "Page.frameNavigated" if ev.params["frame"]["id"].as_str() == Some(tab) => {
                    effects.navigation = true
                }
                _ => {}
            }
        }
        Ok(Some(effects))
    }

    async fn take_downloads(&self) -> Vec<DownloadReport> {
        match &self.downloads {
            Some(d) => d.take().await,
            None => Vec::new(),
        }
    }
}

/// Turns a DevTools endpoint on this machine into its browser WebSocket URL.
async fn resolve_endpoint(endpoint: &str) -> Result<String, BrowserError> {
    let endpoint = endpoint.trim();
    let with_scheme = if endpoint.contains("://") {
        endpoint.to_string()
    } else {
        format!("http://{endpoint}")
    };
    let parsed = url::Url::parse(&with_scheme)
        .map_err(|e| BrowserError::NoBrowser(format!("bad DevTools endpoint '{endpoint}': {e}")))?;
    let host = parsed.host_str().unwrap_or_default().to_ascii_lowercase();
    let loopback = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    if !loopback {
        return Err(BrowserError::Refused(format!(
            "the DevTools endpoint '{endpoint}' is not on this machine: only 127.0.0.1, ::1 and localhost are allowed"
        )));
    }
    match parsed.scheme() {
        "ws" => return Ok(with_scheme),
        "http" => {}
        other => {
            return Err(BrowserError::NoBrowser(format!(
                "bad DevTools endpoint '{endpoint}': scheme '{other}' (use http://127.0.0.1:PORT or ws://…)"
            )));
        }
    }
    let port = parsed.port().unwrap_or(80);
    let addr = if host.contains(':') {
        format!("[{}]:{port}", host.trim_matches(|c| c == '[' || c == ']'))
    } else {
        format!("{host}:{port}")
    };
    let body = http_get(&addr, &host, "/json/version").await?;
    let v: Value = serde_json::from_str(&body).map_err(|e| {
        BrowserError::NoBrowser(format!("{endpoint}/json/version is not DevTools JSON: {e}"))
    })?;
    let ws = v["webSocketDebuggerUrl"].as_str().ok_or_else(|| {
        BrowserError::NoBrowser(format!("{endpoint} named no webSocketDebuggerUrl"))
    })?;
    Ok(ws.to_string())
}

/// A bounded HTTP/1.1 GET on loopback (the DevTools endpoint's JSON).
async fn http_get(addr: &str, host: &str, path: &str) -> Result<String, BrowserError> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let fut = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        stream.write_all(req.as_bytes()).await?;
        let mut buf = Vec::new();
        stream.take(1 << 20).read_to_end(&mut buf).await?;
        Ok::<_, std::io::Error>(buf)
    };
    let buf = tokio::time::timeout(Duration::from_secs(5), fut)
        .await
        .map_err(|_| BrowserError::NoBrowser(format!("no answer from {addr}")))?
        .map_err(|e| BrowserError::NoBrowser(format!("cannot reach {addr}: {e}")))?;
    let text = String::from_utf8_lossy(&buf);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or_default();
    Ok(body.to_string())
}
