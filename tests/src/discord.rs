//! A Discord server on loopback for tests, speaking the documented wire format
//! (`https://discord.com/developers/docs`): REST under `/api/v10` with `Authorization: Bot
//! TOKEN` (`GET /users/@me`, `GET /gateway/bot`, `POST /channels/{id}/messages` with a JSON
//! body, or `multipart/form-data` with `payload_json` and the files as `files[n]`; above the
//! limit a test sets, `413` with code 40005; errors as `{"code","message"}`), and the JSON gateway over a WebSocket at `/`: Hello (op 10) with a
//! `heartbeat_interval`, Identify (op 2; a wrong token closes with 4004), Ready (op 0 `READY`),
//! Heartbeat (op 1) answered by Heartbeat ACK (op 11), and `MESSAGE_CREATE` dispatches of the
//! messages tests push. A message with an action row of buttons (`components`) is recorded as a
//! prompt; a button press tests push is an `INTERACTION_CREATE` dispatch (a message component
//! interaction with its `custom_id`), answered with `POST
//! /api/v10/interactions/{id}/{token}/callback`. A message pushed while no session is ready waits for the next one.

use crate::platform::{
    ButtonServer, Delivered, Inbound, Outbox, PlatformServer, PressAnswer, Prompt, UploadLimit,
    Uploaded, authorization, multipart_parts,
};
use axum::Router;
use axum::extract::ws::{CloseFrame, Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The test bot's user id.
pub const DISCORD_BOT_ID: u64 = 990_000_000_000_000_001;
/// The heartbeat interval the server's Hello asks for (milliseconds; short, so heartbeats and
/// their ACKs happen in every test).
pub const HEARTBEAT_INTERVAL_MS: u64 = 1_000;
/// The DM channel of user `u` is `DM_BASE + u`.
const DM_BASE: u64 = 800_000_000_000_000_000;

struct Shared {
    token: String,
    addr: SocketAddr,
    next_id: AtomicU64,
    /// Dispatches not sent yet: (event name, payload).
    pending: Inbound<(&'static str, Value)>,
    prompts: Outbox<Prompt>,
    answers: Outbox<PressAnswer>,
    sent: Outbox<Delivered>,
    uploads: Outbox<Uploaded>,
    upload_limit: UploadLimit,
    /// Opcodes received from the bot, in order.
    opcodes: Mutex<Vec<u64>>,
    /// `POST /channels/{id}/messages` calls so far, and the number of the one to fail.
    creates: AtomicU64,
    fail_create: Mutex<Option<u64>>,
}

impl Shared {
    fn id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::SeqCst)
    }

    fn authorized(&self, headers: &HeaderMap) -> bool {
        authorization(headers, "Bot") == Some(self.token.as_str())
    }
}

/// The Discord test server. It stops when dropped.
pub struct DiscordServer {
    shared: Arc<Shared>,
    /// Stops the server's thread when sent or dropped.
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for DiscordServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn user(id: u64, name: &str, bot: bool) -> Value {
    json!({
        "id": id.to_string(),
        "username": name.to_lowercase(),
        "global_name": name,
        "discriminator": "0",
        "avatar": null,
        "bot": bot,
    })
}

fn message(id: u64, channel: u64, guild: Option<u64>, author: Value, content: &str) -> Value {
    let mut m = json!({
        "id": id.to_string(),
        "channel_id": channel.to_string(),
        "author": author,
        "content": content,
        "timestamp": "2026-12-02T01:00:00.000000+00:00",
        "edited_timestamp": null,
        "tts": false,
        "mention_everyone": false,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": false,
        "type": 0,
    });
    if let Some(guild) = guild {
        m["guild_id"] = json!(guild.to_string());
    }
    m
}

fn error(status: StatusCode, code: u64, text: &str) -> Response {
    (status, axum::Json(json!({"code": code, "message": text}))).into_response()
}

impl DiscordServer {
    /// Starts on `127.0.0.1` and a free port; only `token` is accepted.
    ///
    /// # Panics
    /// When no local port can be bound.
    #[allow(clippy::expect_used)]
    pub async fn start(token: &str) -> DiscordServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let shared = Arc::new(Shared {
            token: token.to_string(),
            addr,
            next_id: AtomicU64::new(1_000_000_000_000_000_000),
            pending: Inbound::default(),
            prompts: Outbox::default(),
            answers: Outbox::default(),
            sent: Outbox::default(),
            uploads: Outbox::default(),
            upload_limit: UploadLimit::default(),
            opcodes: Mutex::new(Vec::new()),
            creates: AtomicU64::new(0),
            fail_create: Mutex::new(None),
        });
        let app = Router::new()
            .route("/", get(gateway))
            .route("/api/v10/users/@me", get(current_user))
            .route("/api/v10/gateway/bot", get(gateway_bot))
            .route("/api/v10/channels/{id}/messages", post(create_message))
            .route(
                "/api/v10/interactions/{id}/{token}/callback",
                post(interaction_callback),
            )
            .with_state(Arc::clone(&shared));
        // Discord is another program: the server runs on its own thread and runtime, where
        // nothing is logged, so that what the app's logs hold is the app's (the WebSocket
        // library traces every frame it receives, the bot's Identify with its token among them).
        let listener = listener.into_std().expect("a std listener");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let _quiet =
                tracing::subscriber::set_default(tracing::subscriber::NoSubscriber::default());
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        DiscordServer {
            shared,
            stop: Some(stop),
        }
    }

    /// A person writes `text` in channel `channel` of guild `guild`.
    pub fn push_guild(&self, guild: u64, channel: u64, user_id: u64, name: &str, text: &str) {
        let id = self.shared.id();
        self.push(message(
            id,
            channel,
            Some(guild),
            user(user_id, name, false),
            text,
        ));
    }

    fn push(&self, payload: Value) {
        self.shared.pending.push(("MESSAGE_CREATE", payload));
    }

    /// Makes the `n`-th `POST /channels/{id}/messages` from now (1-based) fail once with a
    /// 500, as a platform outage midway through a long reply would.
    pub fn fail_create(&self, n: u64) {
        let next = self.shared.creates.load(Ordering::SeqCst) + n;
        *self
            .shared
            .fail_create
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(next);
    }

    /// The gateway opcodes the bot sent, in order (2 Identify, 1 Heartbeat, …).
    pub fn opcodes(&self) -> Vec<u64> {
        self.shared
            .opcodes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl PlatformServer for DiscordServer {
    fn base_url(&self) -> String {
        format!("http://{}", self.shared.addr)
    }

    fn push_direct(&self, user_id: &str, name: &str, text: &str) -> String {
        let user_id: u64 = user_id.parse().unwrap_or(1);
        let channel = DM_BASE + user_id;
        let id = self.shared.id();
        self.push(message(id, channel, None, user(user_id, name, false), text));
        channel.to_string()
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

impl ButtonServer for DiscordServer {
    fn prompts(&self) -> &Outbox<Prompt> {
        &self.shared.prompts
    }

    fn push_press(&self, user_id: &str, name: &str, conversation: &str, data: &str) -> String {
        let id = self.shared.id();
        let user_id: u64 = user_id.parse().unwrap_or(1);
        let interaction = json!({
            "id": id.to_string(),
            "application_id": DISCORD_BOT_ID.to_string(),
            "type": 3,
            "token": format!("interaction-token-{id}"),
            "version": 1,
            "attachment_size_limit": 10_485_760u64,
            "authorizing_integration_owners": {"1": user_id.to_string()},
            "entitlements": [],
            "app_permissions": "0",
            "locale": "en-US",
            "context": 1,
            "channel": {"id": conversation, "type": 1},
            "channel_id": conversation,
            "user": user(user_id, name, false),
            "data": {"custom_id": data, "component_type": 2},
        });
        self.shared
            .pending
            .push(("INTERACTION_CREATE", interaction));
        id.to_string()
    }

    fn press_answers(&self) -> &Outbox<PressAnswer> {
        &self.shared.answers
    }
}

/// `POST /interactions/{id}/{token}/callback`: the bot's answer to a press.
async fn interaction_callback(
    State(shared): State<Arc<Shared>>,
    Path((id, token)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> Response {
    // Interaction callbacks carry the interaction's token in the path, not the bot's.
    if token != format!("interaction-token-{id}") {
        return error(StatusCode::UNAUTHORIZED, 50027, "Invalid Webhook Token");
    }
    let answer: Value = serde_json::from_slice(&body).unwrap_or_default();
    shared.answers.push(PressAnswer {
        press: id,
        text: answer["data"]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    });
    StatusCode::NO_CONTENT.into_response()
}

async fn current_user(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if !shared.authorized(&headers) {
        return error(StatusCode::UNAUTHORIZED, 0, "401: Unauthorized");
    }
    let mut me = user(DISCORD_BOT_ID, "Suzent Test Bot", true);
    me["mfa_enabled"] = json!(false);
    axum::Json(me).into_response()
}

async fn gateway_bot(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if !shared.authorized(&headers) {
        return error(StatusCode::UNAUTHORIZED, 0, "401: Unauthorized");
    }
    axum::Json(json!({
        "url": format!("ws://{}", shared.addr),
        "shards": 1,
        "session_start_limit": {
            "total": 1000, "remaining": 999, "reset_after": 14_400_000, "max_concurrency": 1
        }
    }))
    .into_response()
}

async fn create_message(
    State(shared): State<Arc<Shared>>,
    Path(channel): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if !shared.authorized(&headers) {
        return error(StatusCode::UNAUTHORIZED, 0, "401: Unauthorized");
    }
    let Ok(channel_id) = channel.parse::<u64>() else {
        return error(StatusCode::NOT_FOUND, 10003, "Unknown Channel");
    };
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let (args, files) = if content_type.starts_with("multipart/form-data") {
        let Some(parts) = multipart_parts(&content_type, body).await else {
            return error(
                StatusCode::BAD_REQUEST,
                50109,
                "The request body contains invalid JSON.",
            );
        };
        let mut args = Value::Null;
        let mut files = Vec::new();
        for (name, file_name, mime, data) in parts {
            if name == "payload_json" {
                args = serde_json::from_slice(&data).unwrap_or_default();
            } else if name.starts_with("files[") {
                files.push((name, file_name.unwrap_or_default(), mime, data));
            }
        }
        (args, files)
    } else {
        (
            serde_json::from_slice(&body).unwrap_or_default(),
            Vec::new(),
        )
    };
    let content = args["content"].as_str().unwrap_or_default().to_string();
    if !files.is_empty() {
        return attach(&shared, channel, channel_id, &content, files);
    }
    if content.trim().is_empty() {
        return error(
            StatusCode::BAD_REQUEST,
            50006,
            "Cannot send an empty message",
        );
    }
    if content.chars().count() > 2000 {
        return error(
            StatusCode::BAD_REQUEST,
            50035,
            "Invalid Form Body (content: Must be 2000 or fewer in length.)",
        );
    }
    let number = shared.creates.fetch_add(1, Ordering::SeqCst) + 1;
    {
        let mut fail = shared
            .fail_create
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if *fail == Some(number) {
            *fail = None;
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                0,
                "500: Internal Server Error",
            );
        }
    }
    let id = shared.id();
    let buttons: Vec<(String, String)> = args["components"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|row| row["components"].as_array())
        .flatten()
        .map(|b| {
            (
                b["label"].as_str().unwrap_or_default().to_string(),
                b["custom_id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    if buttons
        .iter()
        .any(|(_, data)| data.is_empty() || data.len() > 100)
    {
        return error(
            StatusCode::BAD_REQUEST,
            50035,
            "Invalid Form Body (components: custom_id must be 1 to 100 characters)",
        );
    }
    if !buttons.is_empty() {
        shared.prompts.push(Prompt {
            conversation: channel.clone(),
            text: content.clone(),
            buttons,
        });
    }
    shared.sent.push(Delivered {
        conversation: channel,
        text: content.clone(),
    });
    axum::Json(message(
        id,
        channel_id,
        None,
        user(DISCORD_BOT_ID, "Suzent Test Bot", true),
        &content,
    ))
    .into_response()
}

/// A message with files (and perhaps text): recorded as uploads.
fn attach(
    shared: &Shared,
    channel: String,
    channel_id: u64,
    content: &str,
    files: Vec<(String, String, String, Vec<u8>)>,
) -> Response {
    if files
        .iter()
        .any(|(_, _, _, data)| shared.upload_limit.exceeded(data.len()))
    {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            40005,
            "Request entity too large",
        );
    }
    let id = shared.id();
    let mut attachments = Vec::new();
    for (field, file_name, mime, data) in files {
        attachments.push(json!({
            "id": shared.id().to_string(),
            "filename": file_name,
            "size": data.len(),
            "url": format!("https://cdn.discordapp.invalid/{id}/{file_name}"),
            "proxy_url": format!("https://media.discordapp.invalid/{id}/{file_name}"),
            "content_type": mime,
        }));
        shared.uploads.push(Uploaded {
            conversation: channel.clone(),
            file_name,
            mime_type: mime,
            bytes: data,
            after_texts: shared.sent.len(),
            method: field,
        });
    }
    let mut sent = message(
        id,
        channel_id,
        None,
        user(DISCORD_BOT_ID, "Suzent Test Bot", true),
        content,
    );
    sent["attachments"] = json!(attachments);
    axum::Json(sent).into_response()
}

async fn gateway(State(shared): State<Arc<Shared>>, upgrade: WebSocketUpgrade) -> Response {
    upgrade.on_upgrade(move |socket| session(shared, socket))
}

fn frame(payload: Value) -> WsMessage {
    WsMessage::Text(payload.to_string().into())
}

/// One gateway session: Hello, Identify, Ready, then heartbeats and dispatches until the bot
/// closes it.
async fn session(shared: Arc<Shared>, mut socket: WebSocket) {
    let hello =
        json!({"op": 10, "d": {"heartbeat_interval": HEARTBEAT_INTERVAL_MS}, "s": null, "t": null});
    if socket.send(frame(hello)).await.is_err() {
        return;
    }
    let mut seq = 0u64;
    let mut ready = false;
    loop {
        if ready {
            for (event, payload) in shared.pending.take() {
                seq += 1;
                let dispatch = json!({"op": 0, "t": event, "s": seq, "d": payload});
                if socket.send(frame(dispatch)).await.is_err() {
                    return;
                }
            }
        }
        let received = tokio::select! {
            r = socket.recv() => r,
            () = shared.pending.pushed() => continue,
        };
        let text = match received {
            Some(Ok(WsMessage::Text(text))) => text,
            Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => return,
            Some(Ok(_)) => continue,
        };
        let Ok(payload) = serde_json::from_str::<Value>(text.as_str()) else {
            let _ = socket
                .send(WsMessage::Close(Some(CloseFrame {
                    code: 4002,
                    reason: "Error while decoding payload.".into(),
                })))
                .await;
            return;
        };
        let op = payload["op"].as_u64().unwrap_or(u64::MAX);
        shared
            .opcodes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(op);
        match op {
            1 => {
                if socket
                    .send(frame(json!({"op": 11, "d": null, "s": null, "t": null})))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            2 => {
                let token = payload["d"]["token"].as_str().unwrap_or_default();
                if token.strip_prefix("Bot ").unwrap_or(token) != shared.token {
                    let _ = socket
                        .send(WsMessage::Close(Some(CloseFrame {
                            code: 4004,
                            reason: "Authentication failed.".into(),
                        })))
                        .await;
                    return;
                }
                seq += 1;
                let mut me = user(DISCORD_BOT_ID, "Suzent Test Bot", true);
                me["mfa_enabled"] = json!(false);
                let ready_event = json!({
                    "op": 0, "t": "READY", "s": seq,
                    "d": {
                        "v": 10,
                        "user": me,
                        "guilds": [],
                        "session_id": format!("session-{seq}"),
                        "resume_gateway_url": format!("ws://{}", shared.addr),
                        "shard": [0, 1],
                        "application": {"id": DISCORD_BOT_ID.to_string(), "flags": 0}
                    }
                });
                if socket.send(frame(ready_event)).await.is_err() {
                    return;
                }
                ready = true;
            }
            _ => {}
        }
    }
}
