//! The scripted model server: each request consumes the next [`Turn`], whichever provider
//! endpoint it hits.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use futures::StreamExt;
use serde_json::Value;

use crate::wire;

/// What the model "says" in one turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// Streamed text.
    Text(String),
    /// A tool call; `arguments` is the raw text streamed, and may be malformed.
    ToolCall {
        /// Call id (OpenAI `call_...`, Anthropic `toolu_...`; Gemini sends none).
        id: String,
        /// Tool name.
        name: String,
        /// Raw argument text.
        arguments: String,
    },
}

impl Item {
    /// A text item.
    pub fn text(text: impl Into<String>) -> Item {
        Item::Text(text.into())
    }

    /// A tool-call item.
    pub fn tool_call(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Item {
        Item::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// How a turn is fragmented on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Chunking {
    /// Each text and each tool call's arguments in one piece.
    #[default]
    Whole,
    /// Text and arguments cut into pieces of `size` characters.
    Fragments {
        /// Characters per piece.
        size: usize,
    },
    /// Argument fragments of parallel tool calls interleaved (by index; each Anthropic block by
    /// its index; Gemini has no fragments and sends all calls in one chunk).
    InterleavedParallel,
    /// OpenAI: parallel calls all streamed at index 0, each starting with its own id. Anthropic:
    /// every tool block started at the same index, one after the other. Gemini: as Whole.
    SharedIndexDistinctIds,
}

impl Chunking {
    /// Piece size in characters (`None`: whole).
    pub(crate) fn piece_size(self) -> Option<usize> {
        match self {
            Chunking::Whole => None,
            Chunking::Fragments { size } => Some(size.max(1)),
            Chunking::InterleavedParallel | Chunking::SharedIndexDistinctIds => Some(3),
        }
    }
}

/// A failure reply instead of a stream.
#[derive(Debug, Clone, PartialEq)]
pub enum HttpFailure {
    /// This status with this body (sent as JSON when it parses as JSON).
    Status(u16, String),
}

/// One scripted model reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Turn {
    /// What is streamed, in order.
    pub items: Vec<Item>,
    /// How it is fragmented.
    pub chunking: Chunking,
    /// Pause before each frame (before the body of a failing turn's error reply), in
    /// milliseconds.
    pub delay_ms: u64,
    /// When set, this error reply is sent instead of a stream.
    pub failure: Option<HttpFailure>,
    /// Extra response headers of this reply (`Retry-After` on a 429).
    pub headers: Vec<(String, String)>,
}

impl Turn {
    /// A turn of these items.
    pub fn items(items: Vec<Item>) -> Turn {
        Turn {
            items,
            ..Turn::default()
        }
    }

    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Turn {
        Turn::items(vec![Item::text(text)])
    }

    /// One tool call with raw `arguments`.
    pub fn tool_call(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Turn {
        Turn::items(vec![Item::tool_call(id, name, arguments)])
    }

    /// Several (parallel) tool calls: items made with [`Item::tool_call`].
    pub fn tool_calls(calls: Vec<Item>) -> Turn {
        Turn::items(calls)
    }

    /// An HTTP error reply.
    pub fn error(status: u16, body: impl Into<String>) -> Turn {
        Turn {
            failure: Some(HttpFailure::Status(status, body.into())),
            ..Turn::default()
        }
    }

    /// The same turn with an extra response header (e.g. `Retry-After: 2` on a 429).
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Turn {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same turn, fragmented as `chunking` says.
    pub fn chunked(mut self, chunking: Chunking) -> Turn {
        self.chunking = chunking;
        self
    }

    /// The same turn with a pause before each frame.
    pub fn delayed(mut self, delay_ms: u64) -> Turn {
        self.delay_ms = delay_ms;
        self
    }

    /// The same turn with text streamed before its other items.
    pub fn with_text_first(mut self, text: impl Into<String>) -> Turn {
        self.items.insert(0, Item::text(text));
        self
    }

    /// What is sent when the script has no turns left.
    pub fn exhausted() -> Turn {
        Turn::text("script exhausted")
    }
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// Request path (`/v1/chat/completions`).
    pub path: String,
    /// Query string, if any.
    pub query: Option<String>,
    /// Headers, names lower-case, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (a JSON string when it was not JSON).
    pub body: Value,
    /// Whether the script was exhausted when it arrived.
    pub exhausted: bool,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A function that answers a request from its body (see [`ScriptedServer::set_responder`]).
pub type Responder = Arc<dyn Fn(&Value) -> Option<Turn> + Send + Sync>;

#[derive(Default)]
struct Script {
    turns: VecDeque<Turn>,
    /// Consulted before the queued turns: a `Some` answers the request.
    responder: Option<Responder>,
    requests: Vec<RecordedRequest>,
    /// What the model listings answer (`GET .../models`, Ollama's `/api/tags`).
    models: Vec<String>,
}

/// The models the server lists until a test sets others ([`ScriptedServer::set_models`]).
pub const DEFAULT_MODELS: &[&str] = &["scripted-large", "scripted-small"];

type Shared = Arc<Mutex<Script>>;

fn lock(shared: &Shared) -> MutexGuard<'_, Script> {
    // A panicking test thread must not hide the script from the others.
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

enum Stopper {
    Task(tokio::task::AbortHandle),
    Thread(Option<tokio::sync::oneshot::Sender<()>>),
}

/// A local model server replaying scripted turns over the real provider wire formats.
/// It stops when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    script: Shared,
    stopper: Stopper,
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl ScriptedServer {
    /// Starts on the current tokio runtime (for `#[tokio::test]`), on `127.0.0.1` and a free port.
    ///
    /// # Panics
    /// When no local port can be bound.
    #[allow(clippy::expect_used)]
    pub async fn start(turns: Vec<Turn>) -> ScriptedServer {
        let script: Shared = Arc::new(Mutex::new(Script {
            turns: turns.into(),
            responder: None,
            requests: Vec::new(),
            models: DEFAULT_MODELS.iter().map(|m| m.to_string()).collect(),
        }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let app = router(script.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        ScriptedServer {
            addr,
            script,
            stopper: Stopper::Task(task.abort_handle()),
        }
    }

    /// Starts on a dedicated thread with its own runtime: for plain `#[test]` functions and tests
    /// that spawn the `suzent` CLI as another process.
    ///
    /// # Panics
    /// When the thread, the runtime or the port cannot be set up.
    #[allow(clippy::expect_used)]
    pub fn start_blocking(turns: Vec<Turn>) -> ScriptedServer {
        let script: Shared = Arc::new(Mutex::new(Script {
            turns: turns.into(),
            responder: None,
            requests: Vec::new(),
            models: DEFAULT_MODELS.iter().map(|m| m.to_string()).collect(),
        }));
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread_script = script.clone();
        std::thread::Builder::new()
            .name("scripted-model-server".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                        .await
                        .expect("bind 127.0.0.1:0");
                    let _ = addr_tx.send(listener.local_addr().expect("local address"));
                    let app = router(thread_script);
                    tokio::select! {
                        _ = axum::serve(listener, app) => {}
                        _ = stop_rx => {}
                    }
                });
            })
            .expect("spawn the server thread");
        let addr = addr_rx
            .recv()
            .expect("the server thread reports its address");
        ScriptedServer {
            addr,
            script,
            stopper: Stopper::Thread(Some(stop_tx)),
        }
    }

    /// `http://127.0.0.1:PORT` (the Anthropic and Gemini base URL).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1` (the OpenAI base URL, as `OPENAI_BASE_URL` takes it).
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// Every request body received, in order.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.script)
            .requests
            .iter()
            .map(|r| r.body.clone())
            .collect()
    }

    /// Every request received with its path and headers, in order.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        lock(&self.script).requests.clone()
    }

    /// Appends turns to the script.
    pub fn push_turns(&self, more: Vec<Turn>) {
        lock(&self.script).turns.extend(more);
    }

    /// The model ids the listings answer from now on.
    pub fn set_models(&self, models: &[&str]) {
        lock(&self.script).models = models.iter().map(|m| m.to_string()).collect();
    }

    /// Answers each request with `responder(body)` when it returns a turn, before the queued
    /// turns (which answer the requests it declines): for long conversations scripted by rule
    /// (a 200-turn chat, summaries that depend on what the request holds).
    pub fn set_responder(
        &self,
        responder: impl Fn(&Value) -> Option<Turn> + Send + Sync + 'static,
    ) {
        lock(&self.script).responder = Some(Arc::new(responder));
    }

    /// Turns not yet consumed.
    pub fn remaining(&self) -> usize {
        lock(&self.script).turns.len()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        match &mut self.stopper {
            Stopper::Task(handle) => handle.abort(),
            Stopper::Thread(stop) => {
                if let Some(stop) = stop.take() {
                    let _ = stop.send(());
                }
            }
        }
    }
}

fn router(script: Shared) -> Router {
    Router::new().fallback(
        move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
            let script = script.clone();
            async move { handle(script, method, uri, headers, body) }
        },
    )
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    OpenAi,
    Anthropic,
    Gemini,
}

/// A model listing in the wire format its path asks for: OpenAI and Anthropic (`data[].id`),
/// Gemini (`models[].name` with `models/`), Ollama (`/api/tags`: `models[].name`).
fn model_listing(path: &str, models: &[String]) -> Option<String> {
    let value = if path.ends_with("/api/tags") {
        serde_json::json!({ "models": models.iter().map(|m| serde_json::json!({ "name": m })).collect::<Vec<_>>() })
    } else if path.ends_with("/v1beta/models") {
        serde_json::json!({ "models": models.iter().map(|m| serde_json::json!({
            "name": format!("models/{m}"),
            "supportedGenerationMethods": ["generateContent"],
        })).collect::<Vec<_>>() })
    } else if path.ends_with("/models") {
        serde_json::json!({ "object": "list", "data": models.iter().map(|m| serde_json::json!({ "id": m, "object": "model" })).collect::<Vec<_>>() })
    } else {
        return None;
    };
    Some(value.to_string())
}

fn handle(script: Shared, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let path = uri.path().to_string();
    if method == Method::GET {
        let listing = model_listing(&path, &lock(&script).models);
        if let Some(listing) = listing {
            return plain(StatusCode::OK, "application/json", listing);
        }
    }
    if method == Method::POST
        && let Some(response) = speech_response(&script, &path, &uri, &headers, &body)
    {
        return response;
    }
    let format = if path.ends_with("/chat/completions") {
        Some(Format::OpenAi)
    } else if path.ends_with("/messages") {
        Some(Format::Anthropic)
    } else if path.contains(":streamGenerateContent") {
        Some(Format::Gemini)
    } else {
        None
    };
    let (Some(format), true) = (format, method == Method::POST) else {
        return plain(
            StatusCode::NOT_FOUND,
            "application/json",
            wire::not_found(&path),
        );
    };
    let json: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let (turn, exhausted) = {
        let mut script = lock(&script);
        let answered = script.responder.as_ref().and_then(|r| r(&json));
        let next = answered.or_else(|| script.turns.pop_front());
        let exhausted = next.is_none();
        script.requests.push(RecordedRequest {
            path: path.clone(),
            query: uri.query().map(str::to_string),
            headers: headers
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: json.clone(),
            exhausted,
        });
        (next.unwrap_or_else(Turn::exhausted), exhausted)
    };
    if exhausted {
        eprintln!("scripted model server: script exhausted at request to {path}");
    }
    if let Some(HttpFailure::Status(status, body)) = &turn.failure {
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let content_type = if serde_json::from_str::<Value>(body).is_ok() {
            "application/json"
        } else {
            "text/plain; charset=utf-8"
        };
        let mut response = plain(status, content_type, body.clone());
        if turn.delay_ms > 0 {
            // The status line at once, the body after the pause.
            let delay = Duration::from_millis(turn.delay_ms);
            let body = Bytes::from(body.clone());
            *response.body_mut() = Body::from_stream(futures::stream::once(async move {
                tokio::time::sleep(delay).await;
                Ok::<Bytes, Infallible>(body)
            }));
        }
        for (name, value) in &turn.headers {
            if let (Ok(name), Ok(value)) = (
                axum::http::HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                response.headers_mut().insert(name, value);
            }
        }
        return response;
    }
    let frames = match format {
        Format::OpenAi => {
            let model = json
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("scripted");
            wire::openai_frames(&turn, model)
        }
        Format::Anthropic => {
            let model = json
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("scripted");
            wire::anthropic_frames(&turn, model)
        }
        Format::Gemini => {
            let model = path
                .rsplit('/')
                .next()
                .and_then(|last| last.split(':').next())
                .unwrap_or("scripted")
                .to_string();
            wire::gemini_frames(&turn, &model)
        }
    };
    let delay = Duration::from_millis(turn.delay_ms);
    let stream = futures::stream::iter(frames).then(move |frame| async move {
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        Ok::<Bytes, Infallible>(Bytes::from(frame))
    });
    let mut response = Response::new(Body::from_stream(stream));
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Milliseconds of audio the speech routes answer per character of input.
pub const SPEECH_MS_PER_CHAR: u64 = 60;
/// The sample rate of the speech routes' audio (OpenAI's and Gemini's 24 kHz).
pub const SPEECH_SAMPLE_RATE: u32 = 24_000;
/// A voice the speech routes refuse (OpenAI's 400 `invalid_request_error`), for error tests.
pub const REFUSED_VOICE: &str = "no-such-voice";

/// 16-bit mono PCM of a 440 Hz tone at half scale, [`SPEECH_MS_PER_CHAR`] per character of
/// `input`: real, audible audio whose length follows the text.
pub fn speech_tone(input: &str) -> Vec<u8> {
    let ms = input.chars().count() as u64 * SPEECH_MS_PER_CHAR;
    let samples = ms * u64::from(SPEECH_SAMPLE_RATE) / 1000;
    (0..samples)
        .flat_map(|i| {
            let t = i as f64 / f64::from(SPEECH_SAMPLE_RATE);
            let v = (t * 440.0 * std::f64::consts::TAU).sin() * 16_000.0;
            (v as i16).to_le_bytes()
        })
        .collect()
}

/// A WAV file as OpenAI's `/audio/speech` streams it: 16-bit mono PCM whose RIFF and data
/// sizes are the `0xFFFFFFFF` placeholders of a stream of unknown length.
pub fn streamed_wav(pcm: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(44 + pcm.len());
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&u32::MAX.to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&SPEECH_SAMPLE_RATE.to_le_bytes());
    out.extend_from_slice(&(SPEECH_SAMPLE_RATE * 2).to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&u32::MAX.to_le_bytes());
    out.extend_from_slice(pcm);
    out
}

/// The speech routes (they consume no scripted turn): OpenAI's `POST .../audio/speech` answers
/// `audio/wav` ([`streamed_wav`] of [`speech_tone`]), Gemini's `POST ...:generateContent` with
/// `responseModalities: ["AUDIO"]` answers base64 PCM in `inlineData`
/// (`audio/L16;codec=pcm;rate=24000`). Both record the request and refuse [`REFUSED_VOICE`]
/// and an empty input with the provider's error shape.
fn speech_response(
    script: &Shared,
    path: &str,
    uri: &Uri,
    headers: &HeaderMap,
    body: &Bytes,
) -> Option<Response> {
    let json: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let openai = path.ends_with("/audio/speech");
    let gemini = path.contains(":generateContent")
        && json
            .pointer("/generationConfig/responseModalities")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(|v| v == "AUDIO"));
    if !openai && !gemini {
        return None;
    }
    lock(script).requests.push(RecordedRequest {
        path: path.to_string(),
        query: uri.query().map(str::to_string),
        headers: headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: json.clone(),
        exhausted: false,
    });
    let (input, voice) = if openai {
        (
            json.get("input").and_then(Value::as_str).unwrap_or(""),
            json.get("voice").and_then(Value::as_str).unwrap_or(""),
        )
    } else {
        (
            json.pointer("/contents/0/parts/0/text")
                .and_then(Value::as_str)
                .unwrap_or(""),
            json.pointer(
                "/generationConfig/speechConfig/voiceConfig/prebuiltVoiceConfig/voiceName",
            )
            .and_then(Value::as_str)
            .unwrap_or(""),
        )
    };
    if input.is_empty() || voice == REFUSED_VOICE {
        let message = if input.is_empty() {
            "input is empty".to_string()
        } else {
            format!("Invalid voice '{voice}'")
        };
        let body = if openai {
            serde_json::json!({"error": {"message": message, "type": "invalid_request_error", "param": "voice", "code": null}})
        } else {
            serde_json::json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
        };
        return Some(plain(
            StatusCode::BAD_REQUEST,
            "application/json",
            body.to_string(),
        ));
    }
    let pcm = speech_tone(input);
    if openai {
        let mut response = Response::new(Body::from(streamed_wav(&pcm)));
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("audio/wav"));
        return Some(response);
    }
    use base64::Engine;
    let data = base64::engine::general_purpose::STANDARD.encode(&pcm);
    let body = serde_json::json!({
        "candidates": [{
            "content": {"role": "model", "parts": [{"inlineData": {"mimeType": "audio/L16;codec=pcm;rate=24000", "data": data}}]},
            "finishReason": "STOP",
            "index": 0
        }],
        "usageMetadata": {"promptTokenCount": input.len() / 4 + 1, "totalTokenCount": input.len() / 4 + 1}
    });
    Some(plain(StatusCode::OK, "application/json", body.to_string()))
}

fn plain(status: StatusCode, content_type: &'static str, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
