//! The `suzent-audio:` URI scheme: serves the speech clips `speak` stored
//! (`suzent-audio://localhost/<chat id>/<file>`, `http://suzent-audio.localhost/...` on Windows
//! and Android) to the `<audio>` player on the tool card.
//!
//! Only files the runtime's speech service wrote are served: the runtime resolves the two names
//! (plain file names only, `.wav` only, the clip must exist in that chat's speech folder under
//! Suzent's data directory). Reads only (`GET`, `HEAD`), with byte ranges (`Range: bytes=...`, as
//! media players ask), `audio/wav`, `nosniff` and a CSP that lets the answer load nothing.
//!
//! The player reads a clip with `fetch` and plays it from a `blob:` URL: WebKitGTK's media
//! backend (GStreamer) cannot load a custom scheme at all (MEDIA_ERR_SRC_NOT_SUPPORTED, WebKit
//! bug 146351). So answers carry `Access-Control-Allow-Origin` for the app's own origin only
//! ([`APP_ORIGINS`]); a canvas frame (sandboxed, origin `null`) or any other origin gets none and
//! cannot read a clip. Pure presentation plumbing: no agent logic here.

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use tauri::http::{Method, Request, Response, StatusCode, header};

/// The URI scheme name.
pub const AUDIO_SCHEME: &str = "suzent-audio";

/// The CSP header of every answer: nothing loads from it.
const AUDIO_CSP: &str = "default-src 'none'; sandbox";

/// The origins of the app's own window that may read clips: Linux and macOS (`tauri://localhost`),
/// Windows and Android (`http(s)://tauri.localhost`), and in debug builds the Vite dev server of
/// `devUrl`.
pub const APP_ORIGINS: &[&str] = &[
    "tauri://localhost",
    "http://tauri.localhost",
    "https://tauri.localhost",
    #[cfg(debug_assertions)]
    "http://localhost:5173",
];

/// The answer to `request`; `lookup(chat_id, file)` names the clip's file or says why there is
/// none (an unknown clip or a bad name: 404).
pub fn respond(
    request: &Request<Vec<u8>>,
    lookup: impl Fn(&str, &str) -> Result<PathBuf, String>,
) -> Response<Vec<u8>> {
    let mut response = answer(request, lookup);
    let headers = response.headers_mut();
    headers.insert(header::VARY, header::HeaderValue::from_static("Origin"));
    if let Some(origin) = request.headers().get(header::ORIGIN).filter(|o| {
        APP_ORIGINS
            .iter()
            .any(|allowed| o.as_bytes() == allowed.as_bytes())
    }) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    }
    response
}

fn answer(
    request: &Request<Vec<u8>>,
    lookup: impl Fn(&str, &str) -> Result<PathBuf, String>,
) -> Response<Vec<u8>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "speech clips are only read (GET)",
        );
    }
    let path = request.uri().path().trim_start_matches('/');
    let decoded: Vec<String> = path
        .split('/')
        .map(|p| percent_decode(p).unwrap_or_else(|| "\u{0}".to_string()))
        .collect();
    let [chat_id, file] = decoded.as_slice() else {
        return plain(
            StatusCode::NOT_FOUND,
            "expected suzent-audio://localhost/<chat id>/<file>",
        );
    };
    let file_path = match lookup(chat_id, file) {
        Ok(p) => p,
        Err(message) => return plain(StatusCode::NOT_FOUND, &message),
    };
    match serve_file(&file_path, request) {
        Ok(response) => response,
        Err(e) => plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("cannot read the speech clip {file}: {e}"),
        ),
    }
}

/// `%XX` escapes decoded (UTF-8); `None` when they do not decode.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The byte range of a `Range: bytes=START-END` (or `START-`, `-SUFFIX`) header within `len`
/// bytes; `Err(())` when it cannot be satisfied.
fn parse_range(value: &str, len: u64) -> Option<Result<(u64, u64), ()>> {
    let spec = value.trim().strip_prefix("bytes=")?;
    // One range only; a list is answered whole.
    if spec.contains(',') {
        return None;
    }
    let (start, end) = spec.split_once('-')?;
    let (start, end) = match (start.trim(), end.trim()) {
        ("", suffix) => {
            let n: u64 = suffix.parse().ok()?;
            if n == 0 {
                return Some(Err(()));
            }
            (len.saturating_sub(n), len.checked_sub(1)?)
        }
        (s, "") => (s.parse().ok()?, len.checked_sub(1)?),
        (s, e) => (
            s.parse().ok()?,
            e.parse::<u64>().ok()?.min(len.checked_sub(1)?),
        ),
    };
    if start > end || start >= len {
        return Some(Err(()));
    }
    Some(Ok((start, end)))
}

fn serve_file(path: &PathBuf, request: &Request<Vec<u8>>) -> std::io::Result<Response<Vec<u8>>> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let range = request
        .headers()
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_range(v, len));
    let builder = Response::builder()
        .header(header::CONTENT_TYPE, "audio/wav")
        .header(header::ACCEPT_RANGES, "bytes")
        .header(header::CONTENT_SECURITY_POLICY, AUDIO_CSP)
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CACHE_CONTROL, "no-cache");
    let head = request.method() == Method::HEAD;
    let response = match range {
        Some(Err(())) => builder
            .status(StatusCode::RANGE_NOT_SATISFIABLE)
            .header(header::CONTENT_RANGE, format!("bytes */{len}"))
            .body(Vec::new()),
        Some(Ok((start, end))) => {
            let count = end - start + 1;
            let mut body = Vec::new();
            if !head {
                file.seek(SeekFrom::Start(start))?;
                file.take(count).read_to_end(&mut body)?;
            }
            builder
                .status(StatusCode::PARTIAL_CONTENT)
                .header(header::CONTENT_RANGE, format!("bytes {start}-{end}/{len}"))
                .header(header::CONTENT_LENGTH, count.to_string())
                .body(body)
        }
        None => {
            let mut body = Vec::new();
            if !head {
                file.read_to_end(&mut body)?;
            }
            builder
                .status(StatusCode::OK)
                .header(header::CONTENT_LENGTH, len.to_string())
                .body(body)
        }
    };
    response.map_err(std::io::Error::other)
}

/// A plain-text answer that loads nothing.
fn plain(status: StatusCode, message: &str) -> Response<Vec<u8>> {
    crate::scheme::plain(status, message, AUDIO_CSP)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    struct Clip {
        _dir: tempfile::TempDir,
        path: PathBuf,
    }

    fn clip() -> Clip {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.wav");
        std::fs::write(&path, b"RIFF0123456789").unwrap();
        Clip { _dir: dir, path }
    }

    fn get(uri: &str, range: Option<&str>, clip: &Clip) -> Response<Vec<u8>> {
        let mut b = Request::builder().uri(uri);
        if let Some(r) = range {
            b = b.header(header::RANGE, r);
        }
        let path = clip.path.clone();
        respond(&b.body(Vec::new()).unwrap(), move |chat, file| {
            if chat == "chat-1" && file == "a.wav" {
                Ok(path.clone())
            } else {
                Err(format!("chat {chat} has no speech clip {file:?}"))
            }
        })
    }

    #[test]
    fn a_clip_is_served_as_wav_in_both_url_forms() {
        let c = clip();
        for uri in [
            "suzent-audio://localhost/chat-1/a.wav",
            "http://suzent-audio.localhost/chat-1/a.wav",
        ] {
            let r = get(uri, None, &c);
            assert_eq!(r.status(), StatusCode::OK, "{uri}");
            assert_eq!(r.headers()[header::CONTENT_TYPE], "audio/wav");
            assert_eq!(r.headers()[header::ACCEPT_RANGES], "bytes");
            assert_eq!(r.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
            assert_eq!(r.body(), b"RIFF0123456789");
        }
    }

    #[test]
    fn a_range_is_served_as_partial_content() {
        let c = clip();
        let r = get(
            "suzent-audio://localhost/chat-1/a.wav",
            Some("bytes=4-7"),
            &c,
        );
        assert_eq!(r.status(), StatusCode::PARTIAL_CONTENT);
        assert_eq!(r.headers()[header::CONTENT_RANGE], "bytes 4-7/14");
        assert_eq!(r.body(), b"0123");
        let r = get(
            "suzent-audio://localhost/chat-1/a.wav",
            Some("bytes=10-"),
            &c,
        );
        assert_eq!(r.body(), b"6789");
        let r = get(
            "suzent-audio://localhost/chat-1/a.wav",
            Some("bytes=-2"),
            &c,
        );
        assert_eq!(r.body(), b"89");
        let r = get(
            "suzent-audio://localhost/chat-1/a.wav",
            Some("bytes=99-"),
            &c,
        );
        assert_eq!(r.status(), StatusCode::RANGE_NOT_SATISFIABLE);
        assert_eq!(r.headers()[header::CONTENT_RANGE], "bytes */14");
    }

    #[test]
    fn unknown_clips_and_paths_outside_a_chat_folder_are_404() {
        let c = clip();
        for uri in [
            "suzent-audio://localhost/chat-1/b.wav",
            "suzent-audio://localhost/chat-2/a.wav",
            "suzent-audio://localhost/chat-1/..%2F..%2Fsuzent.db",
            "suzent-audio://localhost/a.wav",
            "suzent-audio://localhost/chat-1/x/a.wav",
        ] {
            assert_eq!(get(uri, None, &c).status(), StatusCode::NOT_FOUND, "{uri}");
        }
    }

    #[test]
    fn writes_are_refused() {
        let c = clip();
        let path = c.path.clone();
        let post = Request::builder()
            .method(Method::POST)
            .uri("suzent-audio://localhost/chat-1/a.wav")
            .body(Vec::new())
            .unwrap();
        let r = respond(&post, move |_, _| Ok(path.clone()));
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    #[test]
    fn only_the_apps_own_window_may_read_a_clip_across_origins() {
        let c = clip();
        let read = |origin: Option<&str>| {
            let mut b = Request::builder().uri("suzent-audio://localhost/chat-1/a.wav");
            if let Some(o) = origin {
                b = b.header(header::ORIGIN, o);
            }
            let path = c.path.clone();
            respond(&b.body(Vec::new()).unwrap(), move |_, _| Ok(path.clone()))
        };
        for app in ["tauri://localhost", "http://tauri.localhost"] {
            let r = read(Some(app));
            assert_eq!(r.status(), StatusCode::OK);
            assert_eq!(r.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], app);
            assert_eq!(r.headers()[header::VARY], "Origin");
        }
        // A sandboxed canvas frame (origin "null"), a web page, a look-alike, no origin at all.
        for other in [
            Some("null"),
            Some("https://evil.example"),
            Some("tauri://localhost.evil.example"),
            Some("suzent-frame://localhost"),
            None,
        ] {
            let r = read(other);
            assert!(
                !r.headers()
                    .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN),
                "{other:?}"
            );
        }
    }
}
