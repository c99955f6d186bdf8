//! A Slack server on loopback for tests, speaking the documented wire format
//! (`https://api.slack.com/apis/socket-mode`, `https://api.slack.com/methods`): Web API methods
//! under `/api/METHOD` with `Authorization: Bearer TOKEN`, answering `{"ok":true,...}` or
//! `{"ok":false,"error":"..."}` (`auth.test` and `users.info` and `chat.postMessage` with the bot
//! token, `apps.connections.open` with the app-level token, returning a `ws://` URL to this
//! server); and Socket Mode over a WebSocket at `/link/`: a `hello`, then each message people
//! send as an `events_api` envelope (an `event_callback` with a `message` event), which the app
//! acknowledges with `{"envelope_id": ...}`. Envelopes not acknowledged when a connection ends
//! are delivered again on the next one (with `retry_attempt` counted up), as Slack does.
//! Files go as Slack's current upload flow has them: `files.getUploadURLExternal` (`filename`,
//! `length`; above the limit a test sets, `file_upload_size_restricted`) answers an upload URL
//! on this server and a file id, a `POST` of the bytes to that URL answers `OK - <length>`,
//! and `files.completeUploadExternal` (`files`, `channel_id`) shares the file in the channel.
//! A `chat.postMessage` with an `actions` block of buttons is recorded as a prompt; a press
//! tests push is an `interactive` envelope with a `block_actions` payload whose
//! `response_url` points at this server (`POST /respond/{id}` records the answer).

use crate::platform::{
    ButtonServer, Delivered, Inbound, Outbox, PlatformServer, PressAnswer, Prompt, UploadLimit,
    Uploaded, authorization,
};
use axum::Router;
use axum::extract::ws::{Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The test app's bot user id.
pub const SLACK_BOT_USER: &str = "U0SUZENTBOT";
/// Slack's hard limit of `chat.postMessage` text (`msg_too_long` above it).
const HARD_LIMIT: usize = 40_000;

/// One envelope waiting for its acknowledgement.
#[derive(Debug, Clone)]
struct Envelope {
    id: String,
    /// `events_api` or `interactive`.
    kind: &'static str,
    event: Value,
    attempt: u64,
}

struct Shared {
    bot_token: String,
    app_token: String,
    addr: SocketAddr,
    next: AtomicU64,
    pending: Inbound<Envelope>,
    sent: Outbox<Delivered>,
    acked: Mutex<Vec<String>>,
    names: Mutex<HashMap<String, String>>,
    /// Web API methods called, in order.
    methods: Mutex<Vec<String>>,
    /// Files by id: (name, announced length, MIME type and bytes once posted).
    files: Mutex<HashMap<String, PendingFile>>,
    uploads: Outbox<Uploaded>,
    upload_limit: UploadLimit,
    prompts: Outbox<Prompt>,
    answers: Outbox<PressAnswer>,
}

/// A file between `files.getUploadURLExternal` and `files.completeUploadExternal`.
#[derive(Debug, Clone, Default)]
struct PendingFile {
    name: String,
    length: usize,
    posted: Option<(String, Vec<u8>)>,
}

impl Shared {
    fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::SeqCst)
    }
}

/// The Slack test server. It stops when dropped.
pub struct SlackServer {
    shared: Arc<Shared>,
    task: tokio::task::AbortHandle,
}

impl Drop for SlackServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn failure(error: &str) -> Response {
    // Slack answers errors with status 200 and `ok: false`.
    axum::Json(json!({"ok": false, "error": error})).into_response()
}

fn ok(mut body: Value) -> Response {
    body["ok"] = json!(true);
    axum::Json(body).into_response()
}

impl SlackServer {
    /// Starts on `127.0.0.1` and a free port; only `bot_token` (`xoxb-…`) and `app_token`
    /// (`xapp-…`) are accepted, each for its own methods.
    ///
    /// # Panics
    /// When no local port can be bound.
    #[allow(clippy::expect_used)]
    pub async fn start(bot_token: &str, app_token: &str) -> SlackServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let shared = Arc::new(Shared {
            bot_token: bot_token.to_string(),
            app_token: app_token.to_string(),
            addr,
            next: AtomicU64::new(1),
            pending: Inbound::default(),
            sent: Outbox::default(),
            acked: Mutex::new(Vec::new()),
            names: Mutex::new(HashMap::new()),
            methods: Mutex::new(Vec::new()),
            files: Mutex::new(HashMap::new()),
            uploads: Outbox::default(),
            upload_limit: UploadLimit::default(),
            prompts: Outbox::default(),
            answers: Outbox::default(),
        });
        let app = Router::new()
            .route("/api/{method}", any(method))
            .route("/upload/{file}", post(upload))
            .route("/respond/{press}", post(respond))
            .route("/link/", get(link))
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        SlackServer {
            shared,
            task: task.abort_handle(),
        }
    }

    /// A person writes `text` in channel `channel` (`C…`).
    pub fn push_channel(&self, channel: &str, user: &str, name: &str, text: &str) {
        self.push(channel, "channel", user, name, text);
    }

    fn push(&self, channel: &str, channel_type: &str, user: &str, name: &str, text: &str) {
        self.shared
            .names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(user.to_string(), name.to_string());
        let n = self.shared.next();
        let ts = format!("1764637200.{n:06}");
        let event = json!({
            "token": "verification-token-unused",
            "team_id": "T0SUZENT",
            "api_app_id": "A0SUZENT",
            "type": "event_callback",
            "event_id": format!("Ev{n:08}"),
            "event_time": 1_764_637_200u64,
            "event": {
                "type": "message",
                "channel": channel,
                "channel_type": channel_type,
                "user": user,
                "text": text,
                "ts": ts,
                "event_ts": ts,
            },
        });
        self.shared.pending.push(Envelope {
            id: format!("env-{n:08}"),
            kind: "events_api",
            event,
            attempt: 0,
        });
    }

    /// The envelope ids the app acknowledged, in order.
    pub fn acked(&self) -> Vec<String> {
        self.shared
            .acked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The Web API methods called, in order.
    pub fn methods(&self) -> Vec<String> {
        self.shared
            .methods
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl PlatformServer for SlackServer {
    fn base_url(&self) -> String {
        format!("http://{}/api", self.shared.addr)
    }

    fn push_direct(&self, user: &str, name: &str, text: &str) -> String {
        let channel = format!("D{}", user.trim_start_matches('U'));
        self.push(&channel, "im", user, name, text);
        channel
    }

    fn outbox(&self) -> &Outbox<Delivered> {
        &self.shared.sent
    }

    fn uploads(&self) -> &Outbox<Uploaded> {
        &self.shared.uploads
    }

    fn limit_uploads(&self, bytes: usize) {
        self.shared.upload_limit.set(bytes);
    }
}

impl ButtonServer for SlackServer {
    fn prompts(&self) -> &Outbox<Prompt> {
        &self.shared.prompts
    }

    fn push_press(&self, user: &str, name: &str, conversation: &str, data: &str) -> String {
        let n = self.shared.next();
        let ts = format!("1764637400.{n:06}");
        let payload = json!({
            "type": "block_actions",
            "team": {"id": "T0SUZENT", "domain": "suzent-test"},
            "user": {"id": user, "username": name.to_lowercase(), "name": name, "team_id": "T0SUZENT"},
            "api_app_id": "A0SUZENT",
            "token": "verification-token-unused",
            "container": {
                "type": "message", "message_ts": ts, "channel_id": conversation,
                "is_ephemeral": false
            },
            "trigger_id": format!("{n}.trigger"),
            "channel": {"id": conversation, "name": "directmessage"},
            "response_url": format!("http://{}/respond/{n}", self.shared.addr),
            "actions": [{
                "type": "button",
                "action_id": "suzent-0",
                "block_id": "b0",
                "text": {"type": "plain_text", "text": "a button"},
                "value": data,
                "action_ts": ts,
            }],
        });
        self.shared.pending.push(Envelope {
            id: format!("env-{n:08}"),
            kind: "interactive",
            event: payload,
            attempt: 0,
        });
        n.to_string()
    }

    fn press_answers(&self) -> &Outbox<PressAnswer> {
        &self.shared.answers
    }
}

/// A press's `response_url`: the app's answer to it.
async fn respond(
    State(shared): State<Arc<Shared>>,
    Path(press): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let answer: Value = serde_json::from_slice(&body).unwrap_or_default();
    shared.answers.push(PressAnswer {
        press,
        text: answer["text"].as_str().unwrap_or_default().to_string(),
    });
    ok(json!({}))
}

/// The arguments of a Web API call: the query string, then a JSON or form body.
fn arguments(query: &HashMap<String, String>, headers: &HeaderMap, body: &[u8]) -> Value {
    let mut args = json!({});
    for (k, v) in query {
        args[k] = json!(v);
    }
    let json_body = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if json_body {
        if let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(body) {
            for (k, v) in fields {
                args[k] = v;
            }
        }
    } else {
        for pair in String::from_utf8_lossy(body).split('&') {
            if let Some((k, v)) = pair.split_once('=') {
                args[k] = json!(v);
            }
        }
    }
    args
}

async fn method(
    State(shared): State<Arc<Shared>>,
    Path(name): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    shared
        .methods
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(name.clone());
    let token = authorization(&headers, "Bearer")
        .unwrap_or_default()
        .to_string();
    let args = arguments(&query, &headers, &body);
    let bot = token == shared.bot_token;
    let app = token == shared.app_token;
    if !bot && !app {
        return failure(if token.is_empty() {
            "not_authed"
        } else {
            "invalid_auth"
        });
    }
    match name.as_str() {
        "apps.connections.open" if app => ok(json!({
            "url": format!("ws://{}/link/?ticket=t{}&app_id=A0SUZENT", shared.addr, shared.next())
        })),
        "auth.test" if bot => ok(json!({
            "url": "https://suzent-test.slack.com/",
            "team": "Suzent Test",
            "user": "suzent",
            "team_id": "T0SUZENT",
            "user_id": SLACK_BOT_USER,
            "bot_id": "B0SUZENT",
            "is_enterprise_install": false
        })),
        "users.info" if bot => {
            let user = args["user"].as_str().unwrap_or_default().to_string();
            let name = shared
                .names
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&user)
                .cloned();
            match name {
                Some(name) => ok(json!({"user": {
                    "id": user,
                    "team_id": "T0SUZENT",
                    "name": name.to_lowercase(),
                    "real_name": name,
                    "profile": {"display_name": name, "real_name": name}
                }})),
                None => failure("user_not_found"),
            }
        }
        "chat.postMessage" if bot => {
            let channel = args["channel"].as_str().unwrap_or_default().to_string();
            let text = args["text"].as_str().unwrap_or_default().to_string();
            if channel.is_empty() {
                return failure("channel_not_found");
            }
            if text.trim().is_empty() {
                return failure("no_text");
            }
            if text.chars().count() > HARD_LIMIT {
                return failure("msg_too_long");
            }
            let ts = format!("1764637300.{:06}", shared.next());
            let buttons: Vec<(String, String)> = args["blocks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "actions")
                .filter_map(|b| b["elements"].as_array())
                .flatten()
                .filter(|e| e["type"] == "button")
                .map(|e| {
                    (
                        e["text"]["text"].as_str().unwrap_or_default().to_string(),
                        e["value"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect();
            if buttons
                .iter()
                .any(|(_, value)| value.is_empty() || value.len() > 2000)
            {
                return failure("invalid_blocks");
            }
            if !buttons.is_empty() {
                shared.prompts.push(Prompt {
                    conversation: channel.clone(),
                    text: text.clone(),
                    buttons,
                });
            }
            shared.sent.push(Delivered {
                conversation: channel.clone(),
                text: text.clone(),
            });
            ok(json!({
                "channel": channel,
                "ts": ts,
                "message": {
                    "type": "message", "text": text, "user": SLACK_BOT_USER,
                    "bot_id": "B0SUZENT", "ts": ts
                }
            }))
        }
        "files.getUploadURLExternal" if bot => {
            let name = args["filename"].as_str().unwrap_or_default().to_string();
            let length = args["length"]
                .as_u64()
                .or_else(|| args["length"].as_str().and_then(|l| l.parse().ok()))
                .unwrap_or(0) as usize;
            if name.is_empty() || length == 0 {
                return failure("missing_argument");
            }
            if shared.upload_limit.exceeded(length) {
                return failure("file_upload_size_restricted");
            }
            let id = format!("F0{:08}", shared.next());
            shared
                .files
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(
                    id.clone(),
                    PendingFile {
                        name,
                        length,
                        posted: None,
                    },
                );
            ok(json!({
                "upload_url": format!("http://{}/upload/{id}", shared.addr),
                "file_id": id,
            }))
        }
        "files.completeUploadExternal" if bot => {
            let channel = args["channel_id"].as_str().unwrap_or_default().to_string();
            // A JSON body holds the array; a form body holds it as JSON text.
            let listed = match &args["files"] {
                Value::String(text) => serde_json::from_str(text).unwrap_or_default(),
                other => other.clone(),
            };
            let Some(wanted) = listed.as_array().filter(|f| !f.is_empty()) else {
                return failure("invalid_arguments");
            };
            let mut done = Vec::new();
            let mut files = shared.files.lock().unwrap_or_else(PoisonError::into_inner);
            for file in wanted {
                let id = file["id"].as_str().unwrap_or_default().to_string();
                let Some(PendingFile {
                    name,
                    posted: Some((mime, bytes)),
                    ..
                }) = files.get(&id).cloned()
                else {
                    return failure("file_not_found");
                };
                done.push((id, name, mime, bytes));
            }
            let mut answer = Vec::new();
            for (id, name, mime, bytes) in done {
                files.remove(&id);
                answer.push(json!({
                    "id": id, "name": name, "title": name, "mimetype": mime, "size": bytes.len()
                }));
                if !channel.is_empty() {
                    shared.uploads.push(Uploaded {
                        conversation: channel.clone(),
                        file_name: name,
                        mime_type: mime,
                        bytes,
                        after_texts: shared.sent.len(),
                        method: "files.completeUploadExternal".into(),
                    });
                }
            }
            ok(json!({"files": answer}))
        }
        "apps.connections.open"
        | "auth.test"
        | "users.info"
        | "chat.postMessage"
        | "files.getUploadURLExternal"
        | "files.completeUploadExternal" => failure("not_allowed_token_type"),
        _ => failure("unknown_method"),
    }
}

/// The upload URL of a file: its bytes, as long as `files.getUploadURLExternal` announced.
async fn upload(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let mime = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let mut files = shared.files.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(file) = files.get_mut(&id) else {
        return (axum::http::StatusCode::NOT_FOUND, "no such upload").into_response();
    };
    if file.length != body.len() {
        return (
            axum::http::StatusCode::BAD_REQUEST,
            format!(
                "length {} was announced, {} arrived",
                file.length,
                body.len()
            ),
        )
            .into_response();
    }
    file.posted = Some((mime, body.to_vec()));
    (
        [("content-type", "text/plain")],
        format!("OK - {}", body.len()),
    )
        .into_response()
}

async fn link(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
    upgrade: WebSocketUpgrade,
) -> Response {
    if !query.contains_key("ticket") {
        return failure("invalid_ticket");
    }
    upgrade.on_upgrade(move |socket| session(shared, socket))
}

fn text(payload: &Value) -> WsMessage {
    WsMessage::Text(payload.to_string().into())
}

/// One Socket Mode connection: `hello`, then envelopes, until the app closes it.
async fn session(shared: Arc<Shared>, mut socket: WebSocket) {
    let hello = json!({
        "type": "hello",
        "num_connections": 1,
        "debug_info": {"host": "applink-suzent-test", "approximate_connection_time": 18060},
        "connection_info": {"app_id": "A0SUZENT"}
    });
    if socket.send(text(&hello)).await.is_err() {
        return;
    }
    let mut in_flight: Vec<Envelope> = Vec::new();
    loop {
        for envelope in shared.pending.take() {
            let frame = json!({
                "envelope_id": envelope.id,
                "type": envelope.kind,
                "accepts_response_payload": false,
                "retry_attempt": envelope.attempt,
                "retry_reason": if envelope.attempt > 0 { "timeout" } else { "" },
                "payload": envelope.event,
            });
            if socket.send(text(&frame)).await.is_err() {
                break;
            }
            in_flight.push(envelope);
        }
        let received = tokio::select! {
            r = socket.recv() => r,
            () = shared.pending.pushed() => continue,
        };
        match received {
            Some(Ok(WsMessage::Text(frame))) => {
                let Ok(ack) = serde_json::from_str::<Value>(frame.as_str()) else {
                    continue;
                };
                if let Some(id) = ack["envelope_id"].as_str() {
                    in_flight.retain(|e| e.id != id);
                    shared
                        .acked
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(id.to_string());
                }
            }
            Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => break,
            Some(Ok(_)) => {}
        }
    }
    // Not acknowledged: delivered again on the next connection.
    let again = in_flight
        .into_iter()
        .map(|mut e| {
            e.attempt += 1;
            e
        })
        .collect();
    shared.pending.put_back(again);
}
