//! What the app's own URI schemes (`suzent-frame:`, `suzent-audio:`) share.

use tauri::http::{Response, StatusCode, header};

/// A plain-text answer under `csp` (the scheme's own policy, so an error page loads nothing),
/// never sniffed as another type.
pub(crate) fn plain(status: StatusCode, message: &str, csp: &'static str) -> Response<Vec<u8>> {
    let mut response = Response::new(message.as_bytes().to_vec());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static(csp),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    response
}
