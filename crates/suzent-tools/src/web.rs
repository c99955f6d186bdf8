//! HTTP for the web tools: one client with time and redirect limits, bounded bodies, and the
//! check that tells public addresses from the user's own machine and network.

use crate::tool::ToolError;
use std::net::{IpAddr, ToSocketAddrs};
use std::time::Duration;

/// Whole-request time limit.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// Most redirects followed.
pub const MAX_REDIRECTS: usize = 5;
/// User agent sent with every request.
pub const USER_AGENT: &str = concat!(
    "Mozilla/5.0 (compatible; Suzent/",
    env!("CARGO_PKG_VERSION"),
    ")"
);

/// Whether an address belongs to this machine or a private network: loopback, RFC 1918,
/// carrier-grade NAT, link-local, unique-local IPv6, unspecified, broadcast (and IPv4 mapped
/// into IPv6 the same way).
pub fn is_private_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || o[0] == 0
                || (o[0] == 100 && (o[1] & 0xc0) == 64)
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| is_private_ip(IpAddr::V4(v4)))
        }
    }
}

/// Whether a URL points at this machine or a private network. Host names are resolved; a name
/// that does not resolve is not private (the request will fail on its own).
pub fn is_private_target(url: &reqwest::Url) -> bool {
    let Some(host) = url.host() else {
        return false;
    };
    match host {
        url::Host::Ipv4(ip) => is_private_ip(IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => is_private_ip(IpAddr::V6(ip)),
        url::Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if name == "localhost" || name.ends_with(".localhost") || name.ends_with(".local") {
                return true;
            }
            let port = url.port_or_known_default().unwrap_or(80);
            match (name.as_str(), port).to_socket_addrs() {
                Ok(addrs) => addrs.into_iter().any(|a| is_private_ip(a.ip())),
                Err(_) => false,
            }
        }
    }
}

/// Parses an http(s) URL given by the model.
pub fn parse_web_url(text: &str) -> Result<reqwest::Url, ToolError> {
    let url = reqwest::Url::parse(text.trim()).map_err(|e| {
        ToolError::InvalidArguments(format!("field `url`: '{text}' is not a URL: {e}"))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::InvalidArguments(format!(
            "field `url`: only http and https URLs can be fetched, not '{}'",
            url.scheme()
        )));
    }
    if url.host().is_none() {
        return Err(ToolError::InvalidArguments(format!(
            "field `url`: '{text}' has no host"
        )));
    }
    Ok(url)
}

/// A client with the time limit and a redirect policy: at most [`MAX_REDIRECTS`], and, unless
/// `allow_private`, never onto a private address (a public page must not bounce the request
/// into the user's network without an approval of its own).
pub fn client(allow_private: bool) -> Result<reqwest::Client, ToolError> {
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else if !allow_private && is_private_target(attempt.url()) {
            let target = attempt.url().to_string();
            attempt.error(format!(
                "redirect to the private address {target} refused; fetch it directly so the user can approve it"
            ))
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(Duration::from_secs(10))
        .redirect(policy)
        .user_agent(USER_AGENT)
        .build()
        .map_err(|e| ToolError::Failed(format!("cannot set up the HTTP client: {e}")))
}

/// A request error as a message for the model.
pub fn request_failed(what: &str, e: &reqwest::Error) -> ToolError {
    let mut msg = format!("{what} failed: ");
    if e.is_timeout() {
        msg.push_str(&format!("no answer within {} s", REQUEST_TIMEOUT.as_secs()));
    } else {
        msg.push_str(&e.to_string());
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            msg.push_str(&format!(": {s}"));
            source = s.source();
        }
    }
    ToolError::Failed(msg)
}

/// Reads a response body up to `limit` bytes. Returns the bytes and whether more were cut off.
pub async fn read_limited(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = limit.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn loopback_lan_and_link_local_addresses_are_private_and_public_ones_are_not() {
        for url in [
            "http://127.0.0.1:8080/",
            "http://localhost/admin",
            "http://192.168.1.1/",
            "http://10.0.0.5/",
            "http://172.16.3.4/",
            "http://169.254.169.254/latest/meta-data",
            "http://[::1]/",
            "http://[fd00::1]/",
            "http://[::ffff:192.168.0.1]/",
            "http://100.64.0.1/",
            "http://printer.local/",
        ] {
            assert!(
                is_private_target(&reqwest::Url::parse(url).unwrap()),
                "{url}"
            );
        }
        for url in [
            "http://93.184.216.34/",
            "https://[2606:4700::1111]/",
            "http://8.8.8.8/",
        ] {
            assert!(
                !is_private_target(&reqwest::Url::parse(url).unwrap()),
                "{url}"
            );
        }
    }

    #[test]
    fn only_http_urls_with_a_host_are_accepted() {
        assert!(parse_web_url("file:///etc/passwd").is_err());
        assert!(parse_web_url("not a url").is_err());
        assert!(parse_web_url("https://example.org/a?b=c").is_ok());
    }
}
