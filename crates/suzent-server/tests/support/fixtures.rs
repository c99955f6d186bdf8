//! Fixture pages served by the test from 127.0.0.1 on two ports (`a` and `b`).

use axum::Router;
use axum::extract::{Query, State};
use axum::response::Html;
use axum::routing::get;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PAGE: &str = r#"<!doctype html><html><head><title>Fixture page</title></head><body>
<h1>Checkout</h1>
<button id="pay" onclick="fetch('/hit?m=pay')">Pay</button>
<label>Name <input id="name" aria-label="Name"></label>
<a href="/other.html">Other</a>
<a href="/other.html?tab=new" target="_blank">Other in a new tab</a>
</body></html>"#;

const OTHER: &str = r#"<!doctype html><html><head><title>Other page</title></head><body>
<p>Another page</p><button onclick="fetch('/hit?m=other')">Other button</button></body></html>"#;

/// What a page on another port tries against the bridge (R2-B05 (a)): open the WebSocket and
/// send a hello and a forged answer, POST without CORS, POST with a preflight.
const EVIL: &str = r#"<!doctype html><html><head><title>Evil</title></head><body><script>
window.results = []; window.done = 0;
const note = (m) => { window.results.push(m); window.done += 1; };
const bridge = new URLSearchParams(location.search).get('bridge');
const ws = new WebSocket('ws://127.0.0.1:' + bridge + '/v1/bridge');
ws.onopen = () => {
  note('ws-open');
  ws.send(JSON.stringify({type: 'hello', protocol: 1, browser: 'Evil', browserVersion: '1', extensionVersion: '1', credential: 'szb1_' + '0'.repeat(64)}));
  ws.send(JSON.stringify({type: 'pairRequest'}));
};
ws.onerror = () => note('ws-error');
ws.onclose = (e) => note('close-' + e.code);
fetch('http://127.0.0.1:' + bridge + '/v1/bridge', {method: 'POST', mode: 'no-cors', body: '{"type":"pairRequest"}'})
  .then(() => note('no-cors-sent'), () => note('no-cors-failed'));
fetch('http://127.0.0.1:' + bridge + '/v1/bridge', {method: 'POST', headers: {'content-type': 'application/json'}, body: '{}'})
  .then((r) => note('cors-read-' + r.status), () => note('cors-blocked'));
</script></body></html>"#;

#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

/// The two fixture servers.
pub struct Fixtures {
    pub a: u16,
    pub b: u16,
    seen: Seen,
}

impl Fixtures {
    pub async fn start() -> anyhow::Result<Fixtures> {
        let seen = Seen::default();
        let router = Router::new()
            .route("/page.html", get(|| async { Html(PAGE) }))
            .route("/other.html", get(|| async { Html(OTHER) }))
            .route("/evil.html", get(|| async { Html(EVIL) }))
            .route(
                "/hit",
                get(|State(seen): State<Seen>, Query(q): Query<HashMap<String, String>>| async move {
                    if let Ok(mut s) = seen.0.lock() {
                        s.push(q.get("m").cloned().unwrap_or_default());
                    }
                    "ok"
                }),
            )
            .with_state(seen.clone());
        let mut ports = Vec::new();
        for _ in 0..2 {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            ports.push(listener.local_addr()?.port());
            let router = router.clone();
            tokio::spawn(async move {
                let _ = axum::serve(listener, router).await;
            });
        }
        Ok(Fixtures {
            a: ports[0],
            b: ports[1],
            seen,
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.a)
    }

    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.a)
    }

    pub fn hits(&self) -> Vec<String> {
        self.seen.0.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Waits up to 5 s for `count` hits.
    pub async fn wait_hits(&self, count: usize) -> Vec<String> {
        for _ in 0..100 {
            if self.hits().len() >= count {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.hits()
    }
}
