//! The `suzent-frame:` URI scheme: serves the HTML of canvas `HtmlFrame` components as documents
//! of their own, with their own Content-Security-Policy.
//!
//! A `srcdoc` iframe inherits the app's CSP (`style-src 'self'`), which refuses the agent's inline
//! styles; the app's CSP stays strict, and the frame document instead comes from this scheme with
//! a CSP that allows inline styles and `data:` images only and sandboxes the document (no scripts,
//! opaque origin, no network). The UI stages a document with the `stage_html_frame` command and
//! points the iframe at `suzent-frame://localhost/<token>` (`http://suzent-frame.localhost/<token>`
//! on Windows and Android, where Tauri maps custom schemes to that form). Pure presentation
//! plumbing: no agent logic here.

use crate::error::{AppError, AppErrorKind};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tauri::http::{Method, Request, Response, StatusCode, header};

/// The URI scheme name (`suzent-frame://localhost/<token>`).
pub const FRAME_SCHEME: &str = "suzent-frame";

/// How many staged documents are kept; staging one more evicts the least recently staged.
pub const MAX_FRAMES: usize = 64;

/// The largest staged document, in bytes of UTF-8.
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;

/// The Content-Security-Policy header of every frame document: nothing loads but `data:` images
/// and inline styles, and `sandbox` gives the document an opaque origin without scripts even if it
/// is opened outside its sandboxed iframe.
pub const FRAME_CSP: &str = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox";

/// Staged documents as `(token, html)`, least recently staged first.
type Staged = VecDeque<(String, Arc<str>)>;

/// The staged frame documents, shared by the `stage_html_frame` command and the scheme handler.
/// Cheap to clone (one shared store).
#[derive(Clone, Default)]
pub struct HtmlFrames {
    /// `(token, html)`, least recently staged first; at most [`MAX_FRAMES`] entries.
    frames: Arc<Mutex<Staged>>,
}

impl HtmlFrames {
    /// Stages `html` and returns its token (32 lowercase hex digits). Staging a document that is
    /// already staged returns its token again and marks it as the most recent. Errors (kind
    /// `invalid_input`, field `html`) when `html` is over [`MAX_FRAME_BYTES`].
    pub fn stage(&self, html: String) -> Result<String, AppError> {
        if html.len() > MAX_FRAME_BYTES {
            return Err(AppError::new(
                AppErrorKind::InvalidInput,
                format!(
                    "the HTML frame document is {} bytes, over the limit of {MAX_FRAME_BYTES} bytes",
                    html.len()
                ),
            )
            .with_field("html"));
        }
        let mut frames = self.lock();
        if let Some(i) = frames.iter().position(|(_, staged)| **staged == *html)
            && let Some(entry) = frames.remove(i)
        {
            let token = entry.0.clone();
            frames.push_back(entry);
            return Ok(token);
        }
        let token = uuid::Uuid::new_v4().simple().to_string();
        while frames.len() >= MAX_FRAMES {
            frames.pop_front();
        }
        frames.push_back((token.clone(), Arc::from(html)));
        Ok(token)
    }

    /// The staged document with `token`, if it was not evicted.
    pub fn get(&self, token: &str) -> Option<Arc<str>> {
        self.lock()
            .iter()
            .find(|(t, _)| t == token)
            .map(|(_, html)| html.clone())
    }

    /// How many documents are staged.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no document is staged.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Staged> {
        // A panic while holding the lock cannot leave the queue half-updated (each mutation is
        // one VecDeque call), so a poisoned lock is still usable.
        self.frames
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The scheme's answer to `request`: `GET <scheme>://localhost/<token>` (or
    /// `http://suzent-frame.localhost/<token>`) gives the document as `text/html; charset=utf-8`
    /// with the [`FRAME_CSP`] header; an unknown or evicted token gives 404, any other method 405.
    pub fn respond(&self, request: &Request<Vec<u8>>) -> Response<Vec<u8>> {
        if request.method() != Method::GET && request.method() != Method::HEAD {
            return plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "frame documents are only read (GET)",
            );
        }
        let token = request.uri().path().trim_start_matches('/');
        match self.get(token) {
            Some(html) => Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
                .header(header::CONTENT_SECURITY_POLICY, FRAME_CSP)
                .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
                .header(header::REFERRER_POLICY, "no-referrer")
                .body(if request.method() == Method::HEAD {
                    Vec::new()
                } else {
                    html.as_bytes().to_vec()
                })
                .unwrap_or_else(|e| {
                    plain(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        &format!("cannot build the frame response: {e}"),
                    )
                }),
            None => plain(
                StatusCode::NOT_FOUND,
                &format!("no staged HTML frame document with token \"{token}\""),
            ),
        }
    }
}

/// A plain-text response (also under the frame CSP, so an error page cannot load anything).
fn plain(status: StatusCode, message: &str) -> Response<Vec<u8>> {
    crate::scheme::plain(status, message, FRAME_CSP)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn get(frames: &HtmlFrames, uri: &str) -> Response<Vec<u8>> {
        frames.respond(&Request::builder().uri(uri).body(Vec::new()).unwrap())
    }

    #[test]
    fn a_staged_document_is_served_with_its_own_csp_in_both_url_forms() {
        let frames = HtmlFrames::default();
        let token = frames
            .stage("<p style=\"color:red\">hi</p>".into())
            .unwrap();
        assert_eq!(token.len(), 32);
        for uri in [
            format!("suzent-frame://localhost/{token}"),
            format!("http://suzent-frame.localhost/{token}"),
        ] {
            let response = get(&frames, &uri);
            assert_eq!(response.status(), StatusCode::OK, "{uri}");
            let h = response.headers();
            assert_eq!(h[header::CONTENT_TYPE], "text/html; charset=utf-8");
            assert_eq!(
                h[header::CONTENT_SECURITY_POLICY],
                "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox"
            );
            assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
            assert_eq!(response.body(), b"<p style=\"color:red\">hi</p>");
        }
    }

    #[test]
    fn unknown_tokens_are_404_and_writes_are_refused() {
        let frames = HtmlFrames::default();
        let token = frames.stage("x".into()).unwrap();
        let response = get(&frames, "suzent-frame://localhost/nope");
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert!(
            String::from_utf8_lossy(response.body()).contains("\"nope\""),
            "the error names the token"
        );
        let post = Request::builder()
            .method(Method::POST)
            .uri(format!("suzent-frame://localhost/{token}"))
            .body(Vec::new())
            .unwrap();
        assert_eq!(
            frames.respond(&post).status(),
            StatusCode::METHOD_NOT_ALLOWED
        );
    }

    #[test]
    fn the_store_is_bounded_and_evicts_the_least_recently_staged() {
        let frames = HtmlFrames::default();
        let first = frames.stage("doc 0".into()).unwrap();
        let second = frames.stage("doc 1".into()).unwrap();
        // Staging the first again keeps its token and makes it the most recent.
        assert_eq!(frames.stage("doc 0".into()).unwrap(), first);
        for i in 2..=MAX_FRAMES {
            frames.stage(format!("doc {i}")).unwrap();
        }
        assert_eq!(frames.len(), MAX_FRAMES);
        assert!(frames.get(&second).is_none(), "the oldest was evicted");
        assert_eq!(frames.get(&first).as_deref(), Some("doc 0"));
    }

    #[test]
    fn a_document_over_the_limit_is_refused_with_a_clear_error() {
        let frames = HtmlFrames::default();
        frames.stage("a".repeat(MAX_FRAME_BYTES)).unwrap();
        let e = frames.stage("a".repeat(MAX_FRAME_BYTES + 1)).unwrap_err();
        assert_eq!(e.kind, AppErrorKind::InvalidInput);
        assert_eq!(e.field.as_deref(), Some("html"));
        assert_eq!(
            e.message,
            "the HTML frame document is 1048577 bytes, over the limit of 1048576 bytes"
        );
    }
}
