//! `web_search` (seed 000): SearXNG's JSON API when `SEARXNG_BASE_URL` is set, DuckDuckGo's HTML
//! endpoint otherwise and whenever SearXNG fails.

use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use crate::web;
use schemars::JsonSchema;
use serde::Deserialize;
use suzent_permissions::ToolAccess;

/// Environment variable with the SearXNG instance (`http://localhost:8888`).
pub const SEARXNG_ENV: &str = "SEARXNG_BASE_URL";
/// DuckDuckGo's HTML endpoint host.
pub const DUCKDUCKGO_BASE_URL: &str = "https://html.duckduckgo.com";
/// Most results one search may return.
pub const MAX_RESULTS: usize = 20;
/// Largest search response read.
const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// A search category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Web pages.
    #[default]
    General,
    /// News articles.
    News,
    /// Images.
    Images,
    /// Videos.
    Videos,
}

impl Category {
    fn name(self) -> &'static str {
        match self {
            Category::General => "general",
            Category::News => "news",
            Category::Images => "images",
            Category::Videos => "videos",
        }
    }
}

/// A time filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TimeRange {
    /// The last day.
    Day,
    /// The last week.
    Week,
    /// The last month.
    Month,
    /// The last year.
    Year,
}

impl TimeRange {
    fn name(self) -> &'static str {
        match self {
            TimeRange::Day => "day",
            TimeRange::Week => "week",
            TimeRange::Month => "month",
            TimeRange::Year => "year",
        }
    }

    /// DuckDuckGo's `df` value.
    fn ddg(self) -> &'static str {
        match self {
            TimeRange::Day => "d",
            TimeRange::Week => "w",
            TimeRange::Month => "m",
            TimeRange::Year => "y",
        }
    }
}

fn default_max_results() -> usize {
    10
}

fn default_page() -> u32 {
    1
}

/// Arguments of `web_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchArgs {
    /// The search query.
    pub query: String,
    /// Category: general (default), news, images or videos.
    #[serde(default)]
    pub categories: Category,
    /// Most results to return (default 10, at most 20).
    #[serde(default = "default_max_results")]
    pub max_results: usize,
    /// Only results from the last day, week, month or year.
    #[serde(default)]
    pub time_range: Option<TimeRange>,
    /// Result page, from 1 (default 1).
    #[serde(default = "default_page")]
    pub page: u32,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    /// Page title.
    pub title: String,
    /// Target URL.
    pub url: String,
    /// Snippet of the page.
    pub snippet: String,
    /// Engine that found it (`google`, `duckduckgo`...).
    pub engine: String,
}

/// Where the tool sends searches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchEndpoints {
    /// SearXNG base URL, if any.
    pub searxng: Option<String>,
    /// DuckDuckGo HTML base URL.
    pub duckduckgo: String,
}

impl SearchEndpoints {
    /// From `SEARXNG_BASE_URL`, with DuckDuckGo's public endpoint.
    pub fn from_env() -> Self {
        Self {
            searxng: std::env::var(SEARXNG_ENV)
                .ok()
                .filter(|v| !v.trim().is_empty()),
            duckduckgo: DUCKDUCKGO_BASE_URL.to_string(),
        }
    }
}

/// Searches the web.
#[derive(Debug)]
pub struct WebSearchTool {
    spec: ToolSpec,
    endpoints: Option<SearchEndpoints>,
}

impl WebSearchTool {
    /// The tool; endpoints come from the environment at each call.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<WebSearchArgs>(
                "web_search",
                "WebSearchTool",
                "web",
                "Web search",
                "Search the web (SearXNG when configured, DuckDuckGo otherwise). Returns \
                 numbered results with title, URL, snippet and engine. Use webpage_fetch to \
                 read a result.",
            ),
            endpoints: None,
        }
    }

    /// The tool with fixed endpoints (tests, embedding apps).
    pub fn with_endpoints(endpoints: SearchEndpoints) -> Self {
        Self {
            endpoints: Some(endpoints),
            ..Self::new()
        }
    }
}

impl Default for WebSearchTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for WebSearchTool {
    type Args = WebSearchArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &WebSearchArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Other)
    }

    async fn call(&self, args: WebSearchArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        if args.query.trim().is_empty() {
            return Err(ToolError::InvalidArguments("field `query`: empty".into()));
        }
        if args.max_results == 0 || args.max_results > MAX_RESULTS {
            return Err(ToolError::InvalidArguments(format!(
                "field `max_results`: must be between 1 and {MAX_RESULTS}, got {}",
                args.max_results
            )));
        }
        if args.page == 0 {
            return Err(ToolError::InvalidArguments(
                "field `page`: pages start at 1".into(),
            ));
        }
        let endpoints = self
            .endpoints
            .clone()
            .unwrap_or_else(SearchEndpoints::from_env);
        let client = web::client(true)?;
        let mut notes = Vec::new();
        let mut source = "DuckDuckGo";
        let mut found = None;
        if let Some(base) = &endpoints.searxng {
            let search = searxng(&client, base, &args);
            let result = tokio::select! {
                r = search => r,
                _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            };
            match result {
                Ok(results) => {
                    source = "SearXNG";
                    found = Some(results);
                }
                Err(e) => notes.push(format!("SearXNG failed ({e}); results from DuckDuckGo")),
            }
        }
        let results = match found {
            Some(r) => r,
            None => {
                if args.categories != Category::General {
                    notes.push(format!(
                        "DuckDuckGo's HTML search has no '{}' category; these are web results",
                        args.categories.name()
                    ));
                }
                let search = duckduckgo(&client, &endpoints.duckduckgo, &args);
                tokio::select! {
                    r = search => r.map_err(|e| ToolError::Failed(format!("web search failed: {e}")))?,
                    _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                }
            }
        };
        Ok(render(&args, source, &notes, &results))
    }
}

fn render(
    args: &WebSearchArgs,
    source: &str,
    notes: &[String],
    results: &[SearchResult],
) -> String {
    let mut out = String::new();
    for n in notes {
        out.push_str(&format!("[{n}]\n"));
    }
    if results.is_empty() {
        out.push_str(&format!(
            "No results for '{}' (page {}, {source}).",
            args.query, args.page
        ));
        return out;
    }
    out.push_str(&format!(
        "{} results for '{}' (page {}, {source}):\n",
        results.len(),
        args.query,
        args.page
    ));
    for (i, r) in results.iter().enumerate() {
        out.push_str(&format!("\n{}. {}\n   {}\n", i + 1, r.title, r.url));
        if !r.snippet.is_empty() {
            out.push_str(&format!("   {}\n", r.snippet));
        }
        out.push_str(&format!("   [{}]\n", r.engine));
    }
    out.trim_end().to_string()
}

/// SearXNG's JSON API (`/search?format=json`).
async fn searxng(
    client: &reqwest::Client,
    base: &str,
    args: &WebSearchArgs,
) -> Result<Vec<SearchResult>, String> {
    let url = format!("{}/search", base.trim_end_matches('/'));
    let mut query = vec![
        ("q", args.query.clone()),
        ("format", "json".to_string()),
        ("categories", args.categories.name().to_string()),
        ("pageno", args.page.to_string()),
    ];
    if let Some(t) = args.time_range {
        query.push(("time_range", t.name().to_string()));
    }
    let response = client
        .get(&url)
        .query(&query)
        .send()
        .await
        .map_err(|e| web::request_failed("the request", &e).to_string())?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("HTTP {status} from {url}"));
    }
    let (body, _) = web::read_limited(response, MAX_RESPONSE_BYTES)
        .await
        .map_err(|e| e.to_string())?;
    parse_searxng(&body, args.max_results)
}

#[derive(Deserialize)]
struct SearxResponse {
    results: Vec<SearxResult>,
}

#[derive(Deserialize)]
struct SearxResult {
    #[serde(default)]
    title: String,
    url: String,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    engine: Option<String>,
    #[serde(default)]
    engines: Vec<String>,
    #[serde(default)]
    img_src: Option<String>,
    #[serde(default, rename = "publishedDate")]
    published_date: Option<String>,
}

/// Parses a SearXNG JSON answer.
pub fn parse_searxng(body: &[u8], max: usize) -> Result<Vec<SearchResult>, String> {
    let parsed: SearxResponse = serde_json::from_slice(body)
        .map_err(|e| format!("not a SearXNG JSON answer (is format=json enabled?): {e}"))?;
    Ok(parsed
        .results
        .into_iter()
        .take(max)
        .map(|r| {
            let mut snippet = r.content.unwrap_or_default().trim().to_string();
            if let Some(img) = r.img_src.filter(|s| !s.is_empty()) {
                snippet = format!("{snippet} (image: {img})").trim().to_string();
            }
            if let Some(date) = r.published_date.filter(|s| !s.is_empty()) {
                snippet = format!("{} {snippet}", date.get(..10).unwrap_or(&date))
                    .trim()
                    .to_string();
            }
            let engine = r
                .engine
                .or_else(|| r.engines.first().cloned())
                .unwrap_or_else(|| "searxng".into());
            SearchResult {
                title: r.title.trim().to_string(),
                url: r.url,
                snippet,
                engine,
            }
        })
        .collect())
}

/// DuckDuckGo's HTML endpoint (`POST /html/`).
async fn duckduckgo(
    client: &reqwest::Client,
    base: &str,
    args: &WebSearchArgs,
) -> Result<Vec<SearchResult>, String> {
    let url = format!("{}/html/", base.trim_end_matches('/'));
    let mut form = vec![("q", args.query.clone()), ("b", String::new())];
    if args.page > 1 {
        // The HTML endpoint pages by result offset: 10 on the first page, then 15 more per page.
        let offset = 10 + (args.page - 2) * 15;
        form.push(("s", offset.to_string()));
        form.push(("dc", (offset + 1).to_string()));
    }
    if let Some(t) = args.time_range {
        form.push(("df", t.ddg().to_string()));
    }
    let response = client
        .post(&url)
        .form(&form)
        .send()
        .await
        .map_err(|e| web::request_failed("the request", &e).to_string())?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("HTTP {status} from DuckDuckGo"));
    }
    let (body, _) = web::read_limited(response, MAX_RESPONSE_BYTES)
        .await
        .map_err(|e| e.to_string())?;
    let html = String::from_utf8_lossy(&body);
    let results = parse_duckduckgo(&html, args.max_results);
    if results.is_empty() && html.contains("anomaly-modal") {
        return Err("DuckDuckGo answered with a bot check instead of results".into());
    }
    Ok(results)
}

/// Parses DuckDuckGo's HTML results page: organic results only (ads are skipped), with the
/// redirect links (`//duckduckgo.com/l/?uddg=...`) unwrapped.
pub fn parse_duckduckgo(html: &str, max: usize) -> Vec<SearchResult> {
    use scraper::{Html, Selector};
    let doc = Html::parse_document(html);
    let (Ok(result_sel), Ok(link_sel), Ok(snippet_sel)) = (
        Selector::parse("div.result"),
        Selector::parse("a.result__a"),
        Selector::parse(".result__snippet"),
    ) else {
        return Vec::new();
    };
    let text = |el: scraper::ElementRef<'_>| {
        el.text()
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = Vec::new();
    for result in doc.select(&result_sel) {
        let classes: Vec<&str> = result.value().classes().collect();
        if classes.contains(&"result--ad") {
            continue;
        }
        let Some(link) = result.select(&link_sel).next() else {
            continue;
        };
        let Some(url) = link.value().attr("href").and_then(unwrap_ddg_link) else {
            continue;
        };
        let snippet = result
            .select(&snippet_sel)
            .next()
            .map(text)
            .unwrap_or_default();
        out.push(SearchResult {
            title: text(link),
            url,
            snippet,
            engine: "duckduckgo".into(),
        });
        if out.len() == max {
            break;
        }
    }
    out
}

/// The target of a DuckDuckGo result link; `None` for links that are not http(s).
fn unwrap_ddg_link(href: &str) -> Option<String> {
    let absolute = if href.starts_with("//") {
        format!("https:{href}")
    } else {
        href.to_string()
    };
    let url = reqwest::Url::parse(&absolute).ok()?;
    if url.path().starts_with("/l/")
        && url
            .host_str()
            .is_some_and(|h| h.ends_with("duckduckgo.com"))
    {
        let target = url.query_pairs().find(|(k, _)| k == "uddg")?.1.into_owned();
        return unwrap_ddg_link(&target);
    }
    matches!(url.scheme(), "http" | "https").then(|| url.to_string())
}
