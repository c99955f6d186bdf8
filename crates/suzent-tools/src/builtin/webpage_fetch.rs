//! `webpage_fetch`: a page as Markdown of its main content (readability + HTML-to-Markdown),
//! PDFs through the document converter, other types described rather than dumped. Requests to
//! this machine or a private network ask for approval first.

use crate::convert::{DocKind, convert_bytes};
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use crate::web;
use schemars::JsonSchema;
use serde::Deserialize;
use suzent_permissions::ToolAccess;

/// Largest body read.
pub const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;
/// Characters returned when no limit is given.
pub const DEFAULT_MAX_CHARS: usize = 20_000;
/// Largest `max_chars`.
pub const MAX_CHARS_LIMIT: usize = 100_000;

fn default_max_chars() -> usize {
    DEFAULT_MAX_CHARS
}

/// Arguments of `webpage_fetch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebpageFetchArgs {
    /// The http(s) URL to fetch.
    pub url: String,
    /// Most characters of Markdown to return (default 20000, max 100000).
    #[serde(default = "default_max_chars")]
    pub max_chars: usize,
    /// Characters to skip first, to read a long page in parts (default 0).
    #[serde(default)]
    pub offset: usize,
}

/// Fetches a web page as Markdown.
#[derive(Debug)]
pub struct WebpageFetchTool {
    spec: ToolSpec,
}

impl WebpageFetchTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<WebpageFetchArgs>(
                "webpage_fetch",
                "WebpageFetchTool",
                "web",
                "Fetch web page",
                "Fetch a URL and return its main content as Markdown (navigation and \
                 boilerplate dropped; headings, links and code kept). PDFs are converted to \
                 text; other files are described. Addresses on this machine or the local \
                 network need the user's approval.",
            ),
        }
    }
}

impl Default for WebpageFetchTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for WebpageFetchTool {
    type Args = WebpageFetchArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &WebpageFetchArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        web::parse_web_url(&args.url)?;
        Ok(ToolAccess::Other)
    }

    fn needs_approval(&self, args: &WebpageFetchArgs, _: &ToolContext) -> bool {
        web::parse_web_url(&args.url).is_ok_and(|u| web::is_private_target(&u))
    }

    async fn call(&self, args: WebpageFetchArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let url = web::parse_web_url(&args.url)?;
        if args.max_chars == 0 || args.max_chars > MAX_CHARS_LIMIT {
            return Err(ToolError::InvalidArguments(format!(
                "field `max_chars`: must be between 1 and {MAX_CHARS_LIMIT}, got {}",
                args.max_chars
            )));
        }
        // A private target was approved (or allowed by a rule) for this call; a public one may
        // not redirect into the private network.
        let allow_private = web::is_private_target(&url);
        let client = web::client(allow_private)?;
        let fetch = async {
            let response = client
                .get(url.clone())
                .header(
                    reqwest::header::ACCEPT,
                    "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.5",
                )
                .send()
                .await
                .map_err(|e| web::request_failed(&format!("fetching {url}"), &e))?;
            let status = response.status();
            let final_url = response.url().clone();
            let content_type = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase();
            let (body, truncated) = web::read_limited(response, MAX_BODY_BYTES)
                .await
                .map_err(|e| web::request_failed(&format!("reading {url}"), &e))?;
            Ok::<_, ToolError>((status, final_url, content_type, body, truncated))
        };
        let (status, final_url, content_type, body, truncated) = tokio::select! {
            r = fetch => r?,
            _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        if !status.is_success() {
            let hint = match status.as_u16() {
                401 | 403 => " (the site refuses access; it may need a login)",
                404 | 410 => " (no such page; check the URL or search for it)",
                429 => " (rate limited; try again later)",
                _ => "",
            };
            return Err(ToolError::Failed(format!(
                "{final_url} answered HTTP {status}{hint}"
            )));
        }
        let page = tokio::task::spawn_blocking(move || {
            to_markdown(&body, &content_type, &final_url, truncated)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("internal error: conversion task failed: {e}")))??;
        Ok(window(&page, args.offset, args.max_chars))
    }
}

/// The whole converted page: a header and the Markdown.
fn to_markdown(
    body: &[u8],
    content_type: &str,
    url: &reqwest::Url,
    truncated: bool,
) -> Result<String, ToolError> {
    let mime = content_type.split(';').next().unwrap_or("").trim();
    let looks_pdf = body.starts_with(b"%PDF-");
    let looks_html = {
        let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
        head.contains("<html") || head.contains("<!doctype html")
    };
    let cut_note = if truncated {
        format!("\n\n[the page was cut at {MAX_BODY_BYTES} bytes]")
    } else {
        String::new()
    };
    if mime == "application/pdf"
        || (mime.is_empty() || mime == "application/octet-stream") && looks_pdf
    {
        if truncated {
            return Err(ToolError::Failed(format!(
                "the PDF at {url} is larger than {MAX_BYTES} bytes; download it with run_command and read it with read_file",
                MAX_BYTES = MAX_BODY_BYTES
            )));
        }
        let text = convert_bytes(body, DocKind::Pdf)
            .map_err(|e| ToolError::Failed(format!("{url}: {e}")))?;
        return Ok(format!("URL: {url}\nType: PDF\n\n{text}"));
    }
    if matches!(mime, "text/html" | "application/xhtml+xml") || (mime.is_empty() && looks_html) {
        let html = String::from_utf8_lossy(body);
        let (title, markdown) = html_to_markdown(&html, url.as_str())?;
        return Ok(format!("# {title}\nURL: {url}\n\n{markdown}{cut_note}"));
    }
    let textual = mime.starts_with("text/")
        || matches!(
            mime,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-yaml"
        )
        || mime.ends_with("+json")
        || mime.ends_with("+xml");
    if textual {
        let text = String::from_utf8_lossy(body);
        return Ok(format!("URL: {url}\nType: {mime}\n\n{text}{cut_note}"));
    }
    let kind = if mime.is_empty() {
        "unknown type"
    } else {
        mime
    };
    Ok(format!(
        "URL: {url}\nType: {kind}, {} bytes{}. This is not a page or text file, so its content \
         is not shown; download it with run_command if you need it.",
        body.len(),
        if truncated { " or more" } else { "" }
    ))
}

/// The main content of an HTML page as Markdown, with its title. Readability picks the
/// article; when it finds none (short pages, listings), the whole body is converted with
/// navigation, scripts and forms removed.
pub fn html_to_markdown(html: &str, url: &str) -> Result<(String, String), ToolError> {
    let readability =
        dom_smoothie::Readability::new(html, Some(url), None).and_then(|mut r| r.parse());
    let (title, content_html) = match readability {
        Ok(article) if article.length > 0 => (article.title.clone(), article.content.to_string()),
        _ => {
            let doc = scraper::Html::parse_document(html);
            let title = scraper::Selector::parse("title")
                .ok()
                .and_then(|s| doc.select(&s).next().map(|t| t.text().collect::<String>()))
                .unwrap_or_default();
            (title, html.to_string())
        }
    };
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "nav", "header", "footer", "aside", "form", "noscript", "iframe",
            "svg", "button",
        ])
        .build();
    let markdown = converter
        .convert(&content_html)
        .map_err(|e| ToolError::Failed(format!("the page could not be converted: {e}")))?;
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    let title = if title.is_empty() {
        url.to_string()
    } else {
        title
    };
    let markdown = unlink_headings(markdown.trim());
    Ok((title, absolutize_links(&markdown, url)))
}

/// `### [Title](#anchor)` -> `### Title`: documentation sites wrap headings in links to
/// themselves, which is noise for the model.
fn unlink_headings(markdown: &str) -> String {
    let mut out = Vec::new();
    for line in markdown.lines() {
        let hashes = line.len() - line.trim_start_matches('#').len();
        let rest = &line[hashes..];
        if (1..=6).contains(&hashes)
            && let Some(inner) = rest.trim().strip_prefix('[')
            && let Some((text, target)) = inner.split_once("](#")
            && target.ends_with(')')
            && !target[..target.len() - 1].contains(')')
        {
            out.push(format!("{} {text}", &line[..hashes]));
        } else {
            out.push(line.to_string());
        }
    }
    out.join("\n")
}

/// Makes relative Markdown link targets (`](/docs/x)`) absolute against the page URL.
fn absolutize_links(markdown: &str, base: &str) -> String {
    let Ok(base) = reqwest::Url::parse(base) else {
        return markdown.to_string();
    };
    let mut out = String::with_capacity(markdown.len());
    let mut rest = markdown;
    while let Some(at) = rest.find("](") {
        out.push_str(&rest[..at + 2]);
        rest = &rest[at + 2..];
        let end = rest.find([')', ' ']).unwrap_or(rest.len());
        let target = &rest[..end];
        let absolute =
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                target.to_string()
            } else {
                base.join(target)
                    .map(|u| u.to_string())
                    .unwrap_or_else(|_| target.to_string())
            };
        out.push_str(&absolute);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `max_chars` characters from `offset`, with a note on what remains.
fn window(page: &str, offset: usize, max_chars: usize) -> String {
    let total = page.chars().count();
    if offset >= total && total > 0 {
        return format!("[offset {offset} is past the end; the page has {total} characters]");
    }
    let text: String = page.chars().skip(offset).take(max_chars).collect();
    let end = offset + text.chars().count();
    if end < total {
        format!(
            "{text}\n\n[showing characters {offset}-{end} of {total}; continue with offset {end}]"
        )
    } else {
        text
    }
}
