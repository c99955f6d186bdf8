//! The checks every request passes before any route runs: the `Host` header (against DNS
//! rebinding: only `127.0.0.1:<port>` or `localhost:<port>`) and the `Origin` (only a Chrome/Edge
//! extension, `chrome-extension://` plus 32 letters `a`-`p`). A web page, a request with no
//! `Origin` (a bare local process) or a bad `Host` gets 403 before the WebSocket upgrade, so no
//! frame is ever read from it. There are no CORS headers at all: a browser never lets a page
//! read a response.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Why a request was refused before it reached a route.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No `Host` header, or one that is not this server's loopback address.
    #[error("bad host header '{0}'")]
    BadHost(String),
    /// No `Origin` header (a plain local process).
    #[error("missing origin")]
    MissingOrigin,
    /// An `Origin` that is not a browser extension's (a web page).
    #[error("origin '{0}' is not a browser extension")]
    NotAnExtension(String),
}

/// Accepts `Host: 127.0.0.1:<port>` and `Host: localhost:<port>` (any letter case) only.
///
/// Errors: [`Refusal::BadHost`] naming the header (`<missing>` when absent).
pub fn check_host(headers: &HeaderMap, port: u16) -> Result<(), Refusal> {
    let Some(value) = headers.get(header::HOST) else {
        return Err(Refusal::BadHost("<missing>".into()));
    };
    let host = value
        .to_str()
        .map_err(|_| Refusal::BadHost(String::from_utf8_lossy(value.as_bytes()).into_owned()))?;
    let ok = [format!("127.0.0.1:{port}"), format!("localhost:{port}")]
        .iter()
        .any(|allowed| host.eq_ignore_ascii_case(allowed));
    if ok {
        Ok(())
    } else {
        Err(Refusal::BadHost(host.to_string()))
    }
}

/// The extension id of a `chrome-extension://<id>` origin: exactly 32 letters `a`-`p`, nothing
/// after it (no path, no port).
pub fn extension_id_of_origin(origin: &str) -> Option<&str> {
    let id = origin.strip_prefix("chrome-extension://")?;
    is_extension_id(id).then_some(id)
}

/// Whether `id` has the form of a Chrome/Edge extension id (32 letters `a`-`p`).
pub fn is_extension_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| (b'a'..=b'p').contains(&b))
}

/// The extension id from the request's single `Origin` header.
///
/// Errors: [`Refusal::MissingOrigin`], [`Refusal::NotAnExtension`] (also for two `Origin`
/// headers or one that is not text).
pub fn check_origin(headers: &HeaderMap) -> Result<String, Refusal> {
    let mut values = headers.get_all(header::ORIGIN).iter();
    let Some(value) = values.next() else {
        return Err(Refusal::MissingOrigin);
    };
    let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
    if values.next().is_some() {
        return Err(Refusal::NotAnExtension(format!("{text} (twice)")));
    }
    extension_id_of_origin(&text)
        .map(str::to_string)
        .ok_or(Refusal::NotAnExtension(text))
}

/// The extension id a request passed the guard with (a request extension set by [`guard`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionOrigin(pub String);

/// The middleware on every route: Host, then Origin; 403 with a short plain-text reason
/// otherwise. The extension id goes to the route as an [`ExtensionOrigin`] extension.
pub async fn guard(State(port): State<u16>, mut request: Request, next: Next) -> Response {
    let checked =
        check_host(request.headers(), port).and_then(|()| check_origin(request.headers()));
    match checked {
        Ok(id) => {
            request.extensions_mut().insert(ExtensionOrigin(id));
            next.run(request).await
        }
        Err(refusal) => {
            tracing::warn!(
                method = %request.method(),
                path = %request.uri().path(),
                "browser bridge refused a request: {refusal}"
            );
            forbidden(&refusal)
        }
    }
}

fn forbidden(refusal: &Refusal) -> Response {
    let mut response = (
        StatusCode::FORBIDDEN,
        Body::from(format!("forbidden: {refusal}\n")),
    )
        .into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use pretty_assertions::assert_eq;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            if let Ok(v) = HeaderValue::from_str(value) {
                map.append(*name, v);
            }
        }
        map
    }

    #[test]
    fn only_this_servers_loopback_host_passes() {
        let cases = [
            ("127.0.0.1:4000", Ok(())),
            ("LOCALHOST:4000", Ok(())),
            (
                "127.0.0.1:4001",
                Err(Refusal::BadHost("127.0.0.1:4001".into())),
            ),
            (
                "evil.test:4000",
                Err(Refusal::BadHost("evil.test:4000".into())),
            ),
            ("127.0.0.1", Err(Refusal::BadHost("127.0.0.1".into()))),
            (
                "127.0.0.1.evil.test:4000",
                Err(Refusal::BadHost("127.0.0.1.evil.test:4000".into())),
            ),
        ];
        for (host, want) in cases {
            assert_eq!(
                check_host(&headers(&[("host", host)]), 4000),
                want,
                "{host}"
            );
        }
        assert_eq!(
            check_host(&HeaderMap::new(), 4000),
            Err(Refusal::BadHost("<missing>".into()))
        );
    }

    #[test]
    fn only_an_extension_origin_passes() {
        let id = "abcdefghijklmnopabcdefghijklmnop";
        assert_eq!(
            check_origin(&headers(&[("origin", &format!("chrome-extension://{id}"))])),
            Ok(id.to_string())
        );
        for bad in [
            "http://127.0.0.1:9999",
            "null",
            "chrome-extension://abcdefghijklmnopabcdefghijklmnoq",
            "chrome-extension://abcdefghijklmnopabcdefghijklmnop/",
            "chrome-extension://ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOP",
            "moz-extension://abcdefghijklmnopabcdefghijklmnop",
        ] {
            assert_eq!(
                check_origin(&headers(&[("origin", bad)])),
                Err(Refusal::NotAnExtension(bad.to_string())),
                "{bad}"
            );
        }
        assert_eq!(check_origin(&HeaderMap::new()), Err(Refusal::MissingOrigin));
        let twice = format!("chrome-extension://{id}");
        assert_eq!(
            check_origin(&headers(&[("origin", &twice), ("origin", &twice)])),
            Err(Refusal::NotAnExtension(format!("{twice} (twice)")))
        );
    }
}
