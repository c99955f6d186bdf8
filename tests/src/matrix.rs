//! A Matrix homeserver stand-in on loopback, speaking the client-server API as specified
//! (`https://spec.matrix.org/v1.11/client-server-api/`) for the endpoints a bot uses, with
//! `Authorization: Bearer TOKEN` and errors as `{"errcode","error"}`:
//! `GET /_matrix/client/v3/account/whoami`; `GET /_matrix/client/v3/sync` (`since` is the
//! previous `next_batch`; with nothing new it waits up to `timeout` milliseconds; rooms the bot
//! is invited to come under `rooms.invite`, joined rooms under `rooms.join` with their
//! timeline and member state, without a room `summary`, as Synapse answers a client that does
//! not lazy-load members); `POST /_matrix/client/v3/rooms/{roomId}/join`; `PUT
//! /_matrix/client/v3/rooms/{roomId}/send/m.room.message/{txnId}` (idempotent per transaction
//! id; an event above 65,536 bytes is `M_TOO_LARGE`); and `POST /_matrix/media/v3/upload`
//! (the raw bytes with their `Content-Type`, `filename` in the query; answers the
//! `content_uri`; above the limit a test sets, `413 M_TOO_LARGE`). An `m.audio` message naming
//! an uploaded `mxc://` URI is recorded as an upload of that file to the room.
//!
//! The Matrix tests run against a real homeserver, Synapse from PyPI ([`crate::synapse`]);
//! this stand-in answers in milliseconds and needs no Python, for the quick client and
//! runtime tests beside them. It does not cut timelines (`limited`) or read filters.

use crate::platform::{Delivered, Outbox, PlatformServer, UploadLimit, Uploaded, authorization};
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::Notify;

/// The server name of the test homeserver.
pub const MATRIX_SERVER: &str = "suzent.test";
/// The bot's user id.
pub const MATRIX_BOT: &str = "@suzent:suzent.test";
const MAX_EVENT_BYTES: usize = 65_536;

#[derive(Default)]
struct Room {
    joined: bool,
    name: Option<String>,
    /// Members other than the bot: (user id, display name).
    members: Vec<(String, String)>,
}

#[derive(Default)]
struct Inner {
    /// The event log: (stream position, room id, event).
    events: Vec<(u64, String, Value)>,
    position: u64,
    rooms: HashMap<String, Room>,
    /// Sent transaction ids with their event ids (a retried PUT is answered the same).
    txns: HashMap<(String, String), String>,
    /// Whether the bot's token was used with a `since` it was given (long polling).
    long_polls: usize,
    /// The media repository: `mxc://` URI to (file name, content type, bytes).
    media: HashMap<String, (String, String, Vec<u8>)>,
}

impl Inner {
    fn append(&mut self, room: &str, event: Value) -> u64 {
        self.position += 1;
        self.events.push((self.position, room.to_string(), event));
        self.position
    }
}

struct Shared {
    token: String,
    inner: Mutex<Inner>,
    changed: Notify,
    sent: Outbox<Delivered>,
    uploads: Outbox<Uploaded>,
    upload_limit: UploadLimit,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn authorized(&self, headers: &HeaderMap) -> bool {
        authorization(headers, "Bearer") == Some(self.token.as_str())
    }
}

/// The Matrix test server. It stops when dropped.
pub struct MatrixServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::AbortHandle,
}

impl Drop for MatrixServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn error(status: StatusCode, errcode: &str, text: &str) -> Response {
    (
        status,
        axum::Json(json!({"errcode": errcode, "error": text})),
    )
        .into_response()
}

fn unknown_token() -> Response {
    error(
        StatusCode::UNAUTHORIZED,
        "M_UNKNOWN_TOKEN",
        "Invalid access token passed.",
    )
}

fn member_event(user: &str, name: &str, membership: &str, position: u64) -> Value {
    json!({
        "type": "m.room.member",
        "state_key": user,
        "sender": user,
        "event_id": format!("$member{position}"),
        "origin_server_ts": 1_764_637_200_000u64 + position,
        "content": {"membership": membership, "displayname": name},
        "unsigned": {}
    })
}

fn text_event(sender: &str, body: &str, position: u64) -> Value {
    json!({
        "type": "m.room.message",
        "sender": sender,
        "event_id": format!("$event{position}"),
        "origin_server_ts": 1_764_637_200_000u64 + position,
        "content": {"msgtype": "m.text", "body": body},
        "unsigned": {}
    })
}

impl MatrixServer {
    /// Starts on `127.0.0.1` and a free port; only `token` is accepted.
    ///
    /// # Panics
    /// When no local port can be bound.
    #[allow(clippy::expect_used)]
    pub async fn start(token: &str) -> MatrixServer {
        let shared = Arc::new(Shared {
            token: token.to_string(),
            inner: Mutex::new(Inner::default()),
            changed: Notify::new(),
            sent: Outbox::default(),
            uploads: Outbox::default(),
            upload_limit: UploadLimit::default(),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let app = Router::new()
            .route("/_matrix/client/v3/account/whoami", get(whoami))
            .route("/_matrix/client/v3/sync", get(sync))
            .route("/_matrix/client/v3/rooms/{room}/join", post(join))
            .route(
                "/_matrix/client/v3/rooms/{room}/send/{kind}/{txn}",
                put(send),
            )
            .route("/_matrix/media/v3/upload", post(upload))
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MatrixServer {
            addr,
            shared,
            task: task.abort_handle(),
        }
    }

    /// `user` (display name `name`) writes `text` in `room`; a new room is created with them
    /// in it, named `room_name` (`None`: a direct chat), and the bot invited.
    pub fn push_in(&self, room: &str, room_name: Option<&str>, user: &str, name: &str, text: &str) {
        {
            let mut inner = self.shared.lock();
            let position = inner.position + 1;
            let known = inner.rooms.entry(room.to_string()).or_insert_with(|| Room {
                name: room_name.map(str::to_string),
                ..Room::default()
            });
            if !known.members.iter().any(|(u, _)| u == user) {
                known.members.push((user.to_string(), name.to_string()));
                inner.append(room, member_event(user, name, "join", position));
            }
            let position = inner.position + 1;
            inner.append(room, text_event(user, text, position));
        }
        self.shared.changed.notify_waiters();
    }

    /// How many `/sync` calls waited with a `since` (long polls).
    pub fn long_polls(&self) -> usize {
        self.shared.lock().long_polls
    }
}

impl PlatformServer for MatrixServer {
    fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn push_direct(&self, user: &str, name: &str, text: &str) -> String {
        let local = user
            .trim_start_matches('@')
            .split(':')
            .next()
            .unwrap_or("someone");
        let room = format!("!dm-{local}:{MATRIX_SERVER}");
        self.push_in(&room, None, user, name, text);
        room
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

/// `POST /_matrix/media/v3/upload`: stores the bytes, answers their `mxc://` URI.
async fn upload(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if !shared.authorized(&headers) {
        return unknown_token();
    }
    if shared.upload_limit.exceeded(body.len()) {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "M_TOO_LARGE",
            "Cannot upload files larger than the limit",
        );
    }
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream")
        .to_string();
    let name = query.get("filename").cloned().unwrap_or_default();
    let uri = {
        let mut inner = shared.lock();
        let uri = format!("mxc://{MATRIX_SERVER}/media{}", inner.media.len() + 1);
        inner
            .media
            .insert(uri.clone(), (name, content_type, body.to_vec()));
        uri
    };
    axum::Json(json!({"content_uri": uri})).into_response()
}

async fn whoami(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if !shared.authorized(&headers) {
        return unknown_token();
    }
    axum::Json(json!({"user_id": MATRIX_BOT, "device_id": "SUZENTDEV", "is_guest": false}))
        .into_response()
}

/// The sync response for everything after `since`.
fn sync_body(inner: &Inner, since: u64) -> Option<Value> {
    let mut join = serde_json::Map::new();
    let mut invite = serde_json::Map::new();
    for (room_id, room) in &inner.rooms {
        if !room.joined {
            let mut state: Vec<Value> = room
                .members
                .iter()
                .map(|(u, n)| json!({"type": "m.room.member", "state_key": u, "sender": u, "content": {"membership": "join", "displayname": n}}))
                .collect();
            state.push(json!({"type": "m.room.member", "state_key": MATRIX_BOT, "sender": room.members.first().map(|m| m.0.as_str()).unwrap_or(MATRIX_BOT), "content": {"membership": "invite"}}));
            invite.insert(room_id.clone(), json!({"invite_state": {"events": state}}));
            continue;
        }
        let timeline: Vec<Value> = inner
            .events
            .iter()
            .filter(|(p, r, _)| *p > since && r == room_id)
            .map(|(_, _, e)| e.clone())
            .collect();
        if timeline.is_empty() {
            continue;
        }
        let mut state = Vec::new();
        if let Some(name) = &room.name {
            state.push(json!({
                "type": "m.room.name", "state_key": "", "sender": MATRIX_BOT,
                "event_id": "$name", "origin_server_ts": 1_764_637_200_000u64,
                "content": {"name": name}, "unsigned": {}
            }));
        }
        join.insert(
            room_id.clone(),
            json!({
                "timeline": {"events": timeline, "limited": false},
                "state": {"events": state},
            }),
        );
    }
    if join.is_empty() && invite.is_empty() {
        return None;
    }
    Some(json!({
        "next_batch": format!("s{}", inner.position),
        "rooms": {"join": join, "invite": invite},
    }))
}

async fn sync(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if !shared.authorized(&headers) {
        return unknown_token();
    }
    let since = match query.get("since") {
        None => 0,
        Some(s) => match s.strip_prefix('s').and_then(|n| n.parse::<u64>().ok()) {
            Some(n) => n,
            None => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "M_INVALID_PARAM",
                    "bad since token",
                );
            }
        },
    };
    let timeout = query
        .get("timeout")
        .and_then(|t| t.parse::<u64>().ok())
        .unwrap_or(0)
        .min(60_000);
    if query.contains_key("since") && timeout > 0 {
        shared.lock().long_polls += 1;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout);
    loop {
        let notified = shared.changed.notified();
        let (body, position) = {
            let inner = shared.lock();
            (sync_body(&inner, since), inner.position)
        };
        if let Some(body) = body {
            return axum::Json(body).into_response();
        }
        if tokio::time::Instant::now() >= deadline {
            let next = format!("s{}", position.max(since));
            return axum::Json(json!({"next_batch": next, "rooms": {}})).into_response();
        }
        let _ = tokio::time::timeout_at(deadline, notified).await;
    }
}

async fn join(
    State(shared): State<Arc<Shared>>,
    Path(room): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !shared.authorized(&headers) {
        return unknown_token();
    }
    {
        let mut inner = shared.lock();
        let Some(known) = inner.rooms.get_mut(&room) else {
            return error(StatusCode::NOT_FOUND, "M_NOT_FOUND", "no such room");
        };
        if !known.joined {
            known.joined = true;
            // What was said before the bot joined is in its first timeline of the room.
            let earlier: Vec<Value> = inner
                .events
                .iter()
                .filter(|(_, r, _)| *r == room)
                .map(|(_, _, e)| e.clone())
                .collect();
            inner.events.retain(|(_, r, _)| *r != room);
            for event in earlier {
                inner.append(&room, event);
            }
            let position = inner.position + 1;
            inner.append(&room, member_event(MATRIX_BOT, "Suzent", "join", position));
        }
    }
    shared.changed.notify_waiters();
    axum::Json(json!({"room_id": room})).into_response()
}

async fn send(
    State(shared): State<Arc<Shared>>,
    Path((room, kind, txn)): Path<(String, String, String)>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if !shared.authorized(&headers) {
        return unknown_token();
    }
    if kind != "m.room.message" {
        return error(
            StatusCode::BAD_REQUEST,
            "M_UNRECOGNIZED",
            "only m.room.message",
        );
    }
    if body.len() > MAX_EVENT_BYTES {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "M_TOO_LARGE",
            "event too large",
        );
    }
    let Ok(content) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "M_NOT_JSON", "content is not JSON");
    };
    let text = content["body"].as_str().unwrap_or_default().to_string();
    let audio = if content["msgtype"] == "m.audio" {
        let uri = content["url"].as_str().unwrap_or_default();
        let Some((_, media_type, bytes)) = shared.lock().media.get(uri).cloned() else {
            return error(StatusCode::BAD_REQUEST, "M_INVALID_PARAM", "unknown media");
        };
        let declared = content["info"]["mimetype"]
            .as_str()
            .unwrap_or(&media_type)
            .to_string();
        Some(Uploaded {
            conversation: room.clone(),
            file_name: text.clone(),
            mime_type: declared,
            bytes,
            after_texts: shared.sent.len(),
            method: "m.audio".into(),
        })
    } else {
        None
    };
    let event_id = {
        let mut inner = shared.lock();
        if let Some(id) = inner.txns.get(&(room.clone(), txn.clone())) {
            return axum::Json(json!({"event_id": id})).into_response();
        }
        if !inner.rooms.get(&room).is_some_and(|r| r.joined) {
            return error(
                StatusCode::FORBIDDEN,
                "M_FORBIDDEN",
                "the bot is not in this room",
            );
        }
        let position = inner.position + 1;
        let event = text_event(MATRIX_BOT, &text, position);
        let id = event["event_id"].as_str().unwrap_or_default().to_string();
        inner.append(&room, event);
        inner.txns.insert((room.clone(), txn), id.clone());
        id
    };
    match audio {
        Some(upload) => {
            shared.uploads.push(upload);
        }
        None => {
            shared.sent.push(Delivered {
                conversation: room,
                text,
            });
        }
    }
    shared.changed.notify_waiters();
    axum::Json(json!({"event_id": event_id})).into_response()
}
