//! web_search and webpage_fetch against local servers that replay recorded SearXNG JSON,
//! DuckDuckGo HTML and saved real pages (no live network).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use common::Env;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use suzent_tools::{SearchEndpoints, Tool, ToolError, WebSearchTool, WebpageFetchTool};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}")).unwrap()
}

/// What the replay server received.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    query: HashMap<String, String>,
    form: HashMap<String, String>,
}

#[derive(Clone, Default)]
struct Replay {
    seen: Arc<Mutex<Vec<Seen>>>,
    searxng_fails: bool,
}

async fn searxng(State(s): State<Replay>, Query(q): Query<HashMap<String, String>>) -> Response {
    s.seen.lock().unwrap().push(Seen {
        path: "/search".into(),
        query: q.clone(),
        form: HashMap::new(),
    });
    if s.searxng_fails {
        return (StatusCode::INTERNAL_SERVER_ERROR, "engine error").into_response();
    }
    let body = if q.get("categories").map(String::as_str) == Some("images") {
        fixture("searxng_images.json")
    } else {
        fixture("searxng_general.json")
    };
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn ddg(State(s): State<Replay>, body: Bytes) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    s.seen.lock().unwrap().push(Seen {
        path: "/html/".into(),
        query: HashMap::new(),
        form,
    });
    (
        [(header::CONTENT_TYPE, "text/html; charset=UTF-8")],
        fixture("duckduckgo_results.html"),
    )
        .into_response()
}

fn page(
    name: &'static str,
    mime: &'static str,
) -> impl Fn() -> std::future::Ready<Response> + Clone {
    move || std::future::ready(([(header::CONTENT_TYPE, mime)], fixture(name)).into_response())
}

async fn start(replay: Replay) -> String {
    let app = Router::new()
        .route("/search", get(searxng))
        .route("/html/", post(ddg))
        .route(
            "/news/manchin",
            get(page(
                "news_fivethirtyeight_manchin.html",
                "text/html; charset=UTF-8",
            )),
        )
        .route(
            "/book/vectors.html",
            get(page("docs_rust_book_vectors.html", "text/html")),
        )
        .route(
            "/old-docs",
            get(|| async { Redirect::temporary("/book/vectors.html") }),
        )
        .route("/loop", get(|| async { Redirect::temporary("/loop") }))
        .route(
            "/logo.png",
            get(|| async {
                let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
                png.extend(vec![0u8; 2048]);
                let mut headers = HeaderMap::new();
                headers.insert(header::CONTENT_TYPE, "image/png".parse().unwrap());
                (headers, png)
            }),
        )
        .route(
            "/report.pdf",
            get(|| async { ([(header::CONTENT_TYPE, "application/pdf")], two_page_pdf()) }),
        )
        .route("/missing", get(|| async { StatusCode::NOT_FOUND }))
        .with_state(replay);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.ok() });
    format!("http://{addr}")
}

/// A two-page PDF written by reportlab (installed by .ci/run).
fn two_page_pdf() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.pdf");
    let script = format!(
        "from reportlab.pdfgen import canvas\nc = canvas.Canvas({:?})\nc.drawString(72, 720, 'Quarterly report: revenue grew')\nc.showPage()\nc.drawString(72, 720, 'Appendix with the raw numbers')\nc.showPage()\nc.save()\n",
        out.display().to_string()
    );
    let status = std::process::Command::new("python3")
        .args(["-c", &script])
        .status()
        .unwrap();
    assert!(
        status.success(),
        "reportlab is installed (pip install reportlab)"
    );
    std::fs::read(out).unwrap()
}

fn search_tool(base: &str, searxng: bool) -> WebSearchTool {
    WebSearchTool::with_endpoints(SearchEndpoints {
        searxng: searxng.then(|| base.to_string()),
        duckduckgo: base.to_string(),
    })
}

#[tokio::test]
async fn searxng_results_carry_title_url_snippet_and_engine_and_every_parameter_is_sent() {
    let replay = Replay::default();
    let base = start(replay.clone()).await;
    let env = Env::new();
    let out = search_tool(&base, true)
        .call(
            json!({"query": "rust async runtime", "categories": "news", "max_results": 2,
                   "time_range": "week", "page": 2}),
            &env.ctx,
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        "2 results for 'rust async runtime' (page 2, SearXNG):\n\
         \n1. Tokio - An asynchronous Rust runtime\n   https://tokio.rs/\n   Tokio is an asynchronous runtime for the Rust programming language. It provides the building blocks needed for writing networking applications.\n   [duckduckgo]\n\
         \n2. Asynchronous Programming in Rust\n   https://rust-lang.github.io/async-book/\n   This book aims to be a thorough guide to asynchronous programming in Rust, from beginner to advanced.\n   [google]"
    );
    let seen = replay.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let q = &seen[0].query;
    assert_eq!(
        [
            &q["q"],
            &q["format"],
            &q["categories"],
            &q["time_range"],
            &q["pageno"]
        ],
        ["rust async runtime", "json", "news", "week", "2"]
    );
}

#[tokio::test]
async fn searxng_image_results_name_the_image_and_dates_lead_snippets() {
    let base = start(Replay::default()).await;
    let env = Env::new();
    let out = search_tool(&base, true)
        .call(
            json!({"query": "ferris crab", "categories": "images"}),
            &env.ctx,
        )
        .await
        .unwrap();
    assert!(out.contains("(image: https://upload.wikimedia.org/wikipedia/commons/0/0f/Rustacean-orig-noshadow.svg)"), "{out}");
    assert!(out.contains("[wikicommons.images]"), "{out}");
    let out = search_tool(&base, true)
        .call(json!({"query": "rust async runtime"}), &env.ctx)
        .await
        .unwrap();
    assert!(
        out.contains("   2024-03-12 A small and fast async runtime."),
        "{out}"
    );
}

#[tokio::test]
async fn a_failing_searxng_falls_back_to_duckduckgo_with_ads_skipped_and_links_unwrapped() {
    let replay = Replay {
        searxng_fails: true,
        ..Default::default()
    };
    let base = start(replay.clone()).await;
    let env = Env::new();
    let out = search_tool(&base, true)
        .call(
            json!({"query": "rust sqlite fts5", "time_range": "month", "page": 3}),
            &env.ctx,
        )
        .await
        .unwrap();
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some(format!("[SearXNG failed (HTTP 500 Internal Server Error from {base}/search); results from DuckDuckGo]").as_str())
    );
    assert!(
        out.contains("3 results for 'rust sqlite fts5' (page 3, DuckDuckGo):"),
        "{out}"
    );
    assert!(out.contains("\n1. SQLite FTS5 Extension\n   https://www.sqlite.org/fts5.html\n   FTS5 is an SQLite virtual table module"), "{out}");
    assert!(
        out.contains(
            "\n2. sqlx::sqlite - Rust\n   https://docs.rs/sqlx/latest/sqlx/sqlite/index.html\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("Enable FTS5 with the bundled feature · Issue #1234 · rusqlite/rusqlite"),
        "{out}"
    );
    assert!(
        out.contains("virtual tables using fts5 work out of the box & need no extra flag."),
        "{out}"
    );
    assert!(
        !out.contains("Managed SQLite Hosting"),
        "the ad is skipped: {out}"
    );
    assert!(out.contains("[duckduckgo]"));
    let seen = replay.seen.lock().unwrap().clone();
    assert_eq!(
        seen.iter().map(|s| s.path.as_str()).collect::<Vec<_>>(),
        ["/search", "/html/"]
    );
    let form = &seen[1].form;
    assert_eq!(
        [&form["q"], &form["df"], &form["s"], &form["dc"]],
        ["rust sqlite fts5", "m", "25", "26"]
    );
}

#[tokio::test]
async fn without_searxng_duckduckgo_answers_and_says_it_has_no_news_category() {
    let replay = Replay::default();
    let base = start(replay.clone()).await;
    let env = Env::new();
    let out = search_tool(&base, false)
        .call(
            json!({"query": "rust sqlite fts5", "categories": "news", "max_results": 1}),
            &env.ctx,
        )
        .await
        .unwrap();
    assert!(out.starts_with("[DuckDuckGo's HTML search has no 'news' category; these are web results]\n1 results for"), "{out}");
    assert!(!out.contains("sqlx::sqlite"), "max_results applies: {out}");
    let seen = replay.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert!(!seen[0].form.contains_key("s"), "page 1 sends no offset");
}

#[tokio::test]
async fn more_than_twenty_results_is_a_validation_error_not_a_clamp() {
    let replay = Replay::default();
    let base = start(replay.clone()).await;
    let env = Env::new();
    let err = search_tool(&base, true)
        .call(json!({"query": "x", "max_results": 21}), &env.ctx)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ToolError::InvalidArguments("field `max_results`: must be between 1 and 20, got 21".into())
    );
    let err = search_tool(&base, true)
        .call(json!({"query": "x", "time_range": "decade"}), &env.ctx)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("time_range"), "{err}");
    assert!(replay.seen.lock().unwrap().is_empty(), "nothing was sent");
}

async fn fetch(env: &Env, url: String) -> Result<String, ToolError> {
    WebpageFetchTool::new()
        .call(json!({"url": url, "max_chars": 100000}), &env.ctx)
        .await
}

#[tokio::test]
async fn a_saved_news_article_becomes_markdown_of_the_article_without_site_navigation() {
    let base = start(Replay::default()).await;
    let env = Env::new();
    let out = fetch(&env, format!("{base}/news/manchin")).await.unwrap();
    assert!(
        out.starts_with("# Could Manchin Actually Leave The Democratic Party?"),
        "{}",
        &out[..300.min(out.len())]
    );
    assert!(out.contains("bullshit"), "the article body is kept");
    assert!(
        out.contains("](https://"),
        "links are kept as Markdown links"
    );
    for nav in ["Latest Videos", "Newsletter", "Sign up for"] {
        assert!(!out.contains(nav), "site chrome '{nav}' is dropped");
    }
    assert!(!out.contains("NREUM"), "scripts are dropped");
}

#[tokio::test]
async fn a_saved_documentation_page_keeps_headings_links_and_code_blocks_and_drops_the_sidebar() {
    let base = start(Replay::default()).await;
    let env = Env::new();
    // Through a redirect, as an old link would be.
    let out = fetch(&env, format!("{base}/old-docs")).await.unwrap();
    assert!(
        out.contains(&format!("URL: {base}/book/vectors.html")),
        "the final URL is reported"
    );
    assert!(
        out.contains("\n### Creating a New Vector\n"),
        "headings are kept: {out}"
    );
    assert!(out.contains("```"), "code blocks are kept");
    assert!(
        out.contains("let v: Vec<i32> = Vec::new();"),
        "code is kept verbatim"
    );
    assert!(
        out.contains(&format!("]({base}/book/")),
        "relative links are made absolute"
    );
    assert!(
        !out.contains("Foreword"),
        "the table-of-contents sidebar is dropped"
    );
}

#[tokio::test]
async fn pdfs_are_converted_and_binary_files_are_described() {
    let base = start(Replay::default()).await;
    let env = Env::new();
    let out = fetch(&env, format!("{base}/report.pdf")).await.unwrap();
    assert!(
        out.contains("Type: PDF\n\n## Page 1\n\nQuarterly report: revenue grew"),
        "{out}"
    );
    assert!(
        out.contains("## Page 2\n\nAppendix with the raw numbers"),
        "{out}"
    );
    let out = fetch(&env, format!("{base}/logo.png")).await.unwrap();
    assert!(
        out.contains("Type: image/png, 2056 bytes. This is not a page or text file"),
        "{out}"
    );
}

#[tokio::test]
async fn http_errors_redirect_loops_and_other_schemes_fail_with_a_clear_message() {
    let base = start(Replay::default()).await;
    let env = Env::new();
    let err = fetch(&env, format!("{base}/missing"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with("answered HTTP 404 Not Found (no such page; check the URL or search for it)"),
        "{err}"
    );
    let err = fetch(&env, format!("{base}/loop"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("more than 5 redirects"), "{err}");
    let err = fetch(&env, "file:///etc/passwd".into())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("only http and https URLs can be fetched"),
        "{err}"
    );
}

#[test]
fn fetching_from_this_machine_or_the_lan_needs_approval_and_public_addresses_do_not() {
    let env = Env::new();
    let tool = WebpageFetchTool::new();
    for url in [
        "http://127.0.0.1:8080/admin",
        "http://localhost/",
        "http://192.168.1.10/router",
    ] {
        assert!(
            Tool::needs_approval(&tool, &json!({"url": url}), &env.ctx),
            "{url}"
        );
    }
    assert!(!Tool::needs_approval(
        &tool,
        &json!({"url": "https://93.184.216.34/page"}),
        &env.ctx
    ));
    assert!(
        !Tool::spec(&tool).requires_approval,
        "public pages do not ask"
    );
}
