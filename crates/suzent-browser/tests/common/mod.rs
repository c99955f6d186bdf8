//! Test support: fixture pages served from 127.0.0.1 by the test itself, and a managed
//! Chromium (Debian's `/usr/bin/chromium`, headless, fresh profile) that maps `*.test` hosts to
//! 127.0.0.1.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use suzent_browser::{
    BrowserSession, DownloadPolicy, ManagedBrowser, ManagedConfig, SessionConfig,
};

/// What the fixture server saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// `m` values of `/hit?m=...`, in order.
    pub hits: Vec<String>,
    /// Every path requested.
    pub paths: Vec<String>,
}

#[derive(Clone)]
struct App {
    seen: Arc<Mutex<Seen>>,
    other_port: Arc<Mutex<u16>>,
}

/// Two fixture servers (ports `a` and `b`, same content) sharing one record.
pub struct Fixtures {
    pub a: u16,
    pub b: u16,
    pub seen: Arc<Mutex<Seen>>,
}

impl Fixtures {
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.a)
    }
    pub fn hits(&self) -> Vec<String> {
        self.seen.lock().unwrap().hits.clone()
    }
    pub fn paths(&self) -> Vec<String> {
        self.seen.lock().unwrap().paths.clone()
    }
    /// Waits up to 5 s for `count` hits.
    pub async fn wait_hits(&self, count: usize) -> Vec<String> {
        for _ in 0..100 {
            let h = self.hits();
            if h.len() >= count {
                return h;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        self.hits()
    }
}

fn fixture(name: &str) -> Option<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    std::fs::read_to_string(dir.join(name)).ok()
}

/// The 20,000-button page with a 5,000-row table (case R2-B01).
pub fn big_page() -> String {
    let mut s = String::with_capacity(1_500_000);
    s.push_str("<!doctype html><html><head><title>Big</title></head><body><h1>Items</h1>");
    for i in 0..20_000 {
        s.push_str(&format!("<button>Item {i}</button>"));
    }
    s.push_str("<table>");
    for i in 0..5_000 {
        s.push_str(&format!("<tr><td>Row {i}</td><td>{}</td></tr>", i * 7));
    }
    s.push_str("</table><script>document.addEventListener('click', (e) => { if (e.target.tagName === 'BUTTON') fetch('/hit?m=' + encodeURIComponent(e.target.textContent)); });</script></body></html>");
    s
}

async fn page(
    State(app): State<App>,
    axum::extract::Path(name): axum::extract::Path<String>,
    headers: HeaderMap,
) -> Response {
    app.seen.lock().unwrap().paths.push(format!("/{name}"));
    let other = *app.other_port.lock().unwrap();
    match name.as_str() {
        "big.html" => Html(big_page()).into_response(),
        "cookie-set" => (
            [(
                header::SET_COOKIE,
                "suzent=kept-across-runs; Max-Age=86400; Path=/",
            )],
            Html("<title>Set</title><p>cookie set</p>"),
        )
            .into_response(),
        "cookie-show" => {
            let cookie = headers
                .get(header::COOKIE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none")
                .to_string();
            Html(format!("<title>Show</title><p>cookie: {cookie}</p>")).into_response()
        }
        _ => match fixture(&name) {
            Some(text) => Html(text.replace("__B__", &other.to_string())).into_response(),
            None => StatusCode::NOT_FOUND.into_response(),
        },
    }
}

async fn hit(State(app): State<App>, Query(q): Query<HashMap<String, String>>) -> &'static str {
    let m = q.get("m").cloned().unwrap_or_default();
    let mut seen = app.seen.lock().unwrap();
    seen.paths.push(format!("/hit?m={m}"));
    seen.hits.push(m);
    "ok"
}

async fn download(
    State(app): State<App>,
    axum::extract::Path(name): axum::extract::Path<String>,
) -> Response {
    app.seen.lock().unwrap().paths.push(format!("/dl/{name}"));
    let (file, body): (&str, &[u8]) = match name.as_str() {
        "bashrc" => ("../../.bashrc", b"alias ll='ls -l'\n"),
        "invoice" => ("invoice.exe", b"MZ not really\n"),
        "report" => ("report.pdf", b"%PDF-1.4 fake\n"),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    (
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{file}\""),
            ),
        ],
        body.to_vec(),
    )
        .into_response()
}

async fn serve(app: App) -> u16 {
    let router = Router::new()
        .route("/hit", get(hit))
        .route("/dl/{name}", get(download))
        .route("/{name}", get(page))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    port
}

/// Starts the two fixture servers.
pub async fn fixtures() -> Fixtures {
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let a_other = Arc::new(Mutex::new(0));
    let b_other = Arc::new(Mutex::new(0));
    let a = serve(App {
        seen: seen.clone(),
        other_port: a_other.clone(),
    })
    .await;
    let b = serve(App {
        seen: seen.clone(),
        other_port: b_other.clone(),
    })
    .await;
    *a_other.lock().unwrap() = b;
    *b_other.lock().unwrap() = a;
    Fixtures { a, b, seen }
}

/// A managed Chromium config: headless, the profile and downloads in `dir`.
pub fn managed_config(dir: &Path) -> ManagedConfig {
    ManagedConfig {
        binary: std::env::var_os("SUZENT_TEST_CHROMIUM").map(PathBuf::from),
        profile_dir: dir.join("profile"),
        headless: true,
        extra_args: vec![
            "--host-resolver-rules=MAP *.test 127.0.0.1".to_string(),
            "--window-size=1280,900".to_string(),
        ],
        downloads: DownloadPolicy {
            dir: dir.join("downloads"),
            quota_bytes: 100_000_000,
        },
    }
}

/// One browser per test binary at a time keeps the 2-core machine responsive.
pub static BROWSER_LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A launched browser, a session over it, and the fixtures.
pub struct Harness {
    pub browser: Option<ManagedBrowser>,
    pub session: BrowserSession,
    pub fx: Fixtures,
    pub dir: tempfile::TempDir,
    _guard: tokio::sync::MutexGuard<'static, ()>,
}

pub async fn harness() -> Harness {
    harness_with(SessionConfig::default()).await
}

pub async fn harness_with(config: SessionConfig) -> Harness {
    let guard = BROWSER_LOCK.lock().await;
    let fx = fixtures().await;
    let dir = tempfile::tempdir().unwrap();
    let browser = ManagedBrowser::launch(&managed_config(dir.path()))
        .await
        .expect("chromium starts (apt-get install chromium)");
    let session = BrowserSession::new(browser.backend(), config);
    Harness {
        browser: Some(browser),
        session,
        fx,
        dir,
        _guard: guard,
    }
}

impl Harness {
    /// Runs a command from its JSON form.
    pub async fn run(&mut self, json: serde_json::Value) -> Result<String, String> {
        let cmd: suzent_core::BrowserCommand =
            serde_json::from_value(json.clone()).unwrap_or_else(|e| panic!("{json}: {e}"));
        self.session
            .run(&cmd, None)
            .await
            .map(|o| o.text)
            .map_err(|e| e.to_string())
    }

    pub async fn ok(&mut self, json: serde_json::Value) -> String {
        match self.run(json.clone()).await {
            Ok(t) => t,
            Err(e) => panic!("{json} failed: {e}"),
        }
    }

    pub async fn open(&mut self, path: &str) -> String {
        let url = self.fx.url(path);
        self.ok(serde_json::json!({"command": "open", "url": url}))
            .await
    }

    pub async fn snapshot(&mut self) -> String {
        self.ok(serde_json::json!({"command": "snapshot"})).await
    }

    pub async fn shutdown(mut self) {
        if let Some(b) = self.browser.take() {
            b.shutdown().await;
        }
    }
}

/// The ref on the line that contains `needle`.
pub fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle) && l.contains("[ref="))
        .unwrap_or_else(|| panic!("no line with {needle:?} and a ref in:\n{snapshot}"));
    let start = line.find("[ref=").unwrap() + 5;
    let end = line[start..].find(']').unwrap() + start;
    line[start..end].to_string()
}

/// Every ref in a text.
pub fn refs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("[ref=") {
        let after = &rest[i + 5..];
        let end = after.find(']').unwrap();
        out.push(after[..end].to_string());
        rest = &after[end..];
    }
    out
}
