//! Which addresses the agent may open, and the origin a URL belongs to.

/// The origin of a URL (`https://docs.test`, `http://127.0.0.1:8080`), or `about:blank`;
/// `None` for URLs without a network origin.
pub fn origin_of(url: &str) -> Option<String> {
    if url == "about:blank" || url.is_empty() {
        return Some("about:blank".to_string());
    }
    let parsed = url::Url::parse(url).ok()?;
    match parsed.scheme() {
        "http" | "https" => Some(parsed.origin().ascii_serialization()),
        _ => None,
    }
}

/// Checks an address for `open`: `http` and `https` URLs with a host, and `about:blank`.
/// Everything else is refused with a message that names the scheme (`javascript:`, `data:`,
/// `file:`, `chrome:`, `chrome-extension:`, `blob:`, `view-source:`); an address that does not
/// parse is refused too, never matched loosely.
pub fn check_navigation(url: &str) -> Result<String, String> {
    let trimmed = url.trim();
    if trimmed == "about:blank" {
        return Ok(trimmed.to_string());
    }
    let scheme = trimmed
        .split_once(':')
        .map(|(s, _)| s.to_ascii_lowercase())
        .filter(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        });
    match scheme.as_deref() {
        Some("http") | Some("https") => {}
        Some(other) => {
            return Err(format!(
                "navigation refused: the scheme '{other}:' is not allowed (only http, https and about:blank)"
            ));
        }
        None => {
            return Err(format!(
                "navigation refused: '{}' is not an absolute http or https URL",
                clip(trimmed)
            ));
        }
    }
    let parsed = url::Url::parse(trimmed).map_err(|e| {
        format!(
            "navigation refused: '{}' is not a valid URL ({e})",
            clip(trimmed)
        )
    })?;
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!(
            "navigation refused: '{}' has no host",
            clip(trimmed)
        ));
    }
    Ok(parsed.to_string())
}

fn clip(s: &str) -> String {
    if s.chars().count() > 120 {
        let head: String = s.chars().take(120).collect();
        format!("{head}…")
    } else {
        s.to_string()
    }
}

/// Whether Suzent may control a tab showing this URL: web pages and blank tabs only, never
/// browser pages (`chrome://`), extension pages (the Suzent connect page) or local files.
pub fn is_controllable(url: &str) -> bool {
    url.is_empty()
        || url == "about:blank"
        || url.starts_with("http://")
        || url.starts_with("https://")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn only_http_https_and_about_blank_are_opened() {
        let refused = [
            ("javascript:alert(1)", "javascript:"),
            (
                "data:text/html,<script>fetch('http://127.0.0.1:1/x')</script>",
                "data:",
            ),
            ("file:///etc/passwd", "file:"),
            ("chrome://settings", "chrome:"),
            (
                "chrome-extension://abcdefghijklmnopabcdefghijklmnop/popup.html",
                "chrome-extension:",
            ),
            ("blob:https://docs.test/uuid", "blob:"),
            ("view-source:https://docs.test", "view-source:"),
            ("JavaScript:alert(1)", "javascript:"),
        ];
        for (url, scheme) in refused {
            let err = check_navigation(url).unwrap_err();
            assert!(err.contains(&format!("'{scheme}'")), "{url}: {err}");
        }
        assert!(check_navigation("http://[::1").is_err());
        assert!(check_navigation("docs.test/page").is_err());
        assert_eq!(check_navigation("about:blank").unwrap(), "about:blank");
        assert_eq!(
            check_navigation("https://docs.test/a?b=1").unwrap(),
            "https://docs.test/a?b=1"
        );
    }

    #[test]
    fn origins_keep_scheme_host_and_port() {
        assert_eq!(
            origin_of("http://127.0.0.1:8080/x/y?z").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            origin_of("https://docs.test/").as_deref(),
            Some("https://docs.test")
        );
        assert_eq!(origin_of("chrome://settings"), None);
        assert_eq!(origin_of("about:blank").as_deref(), Some("about:blank"));
    }
}
