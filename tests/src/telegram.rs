//! A Telegram Bot API server on loopback for tests: the documented JSON over HTTP
//! (`https://core.telegram.org/bots/api`), `POST /bot<token>/<method>` with a JSON body,
//! (method names case-insensitive, as Telegram takes them) answers `{"ok":true,"result":...}` or `{"ok":false,"error_code":...,"description":...}`.
//! It serves `getMe`, `getUpdates` (long polling: updates below the offset are confirmed and
//! forgotten; with none pending it waits up to `timeout` seconds), `sendMessage` (with an
//! inline keyboard as `reply_markup`), the uploads `sendDocument`, `sendVoice` and `sendAudio`
//! (`multipart/form-data`, the file in the field named after the method's parameter; above
//! the limit a test sets, `413 Request Entity Too Large`) and `answerCallbackQuery`. Tests
//! push the messages people send and the inline buttons they press (`callback_query`
//! updates), and read what the bot sent.

use crate::platform::{
    ButtonServer, Delivered, Outbox, PlatformServer, PressAnswer, Prompt, UploadLimit, Uploaded,
    multipart_parts,
};
use axum::Router;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::post;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::Notify;

/// The test bot's user id (`getMe`).
pub const TEST_BOT_ID: i64 = 999_000;

/// A message the bot sent (`sendMessage`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentMessage {
    /// The `chat_id` it was sent to.
    pub chat_id: i64,
    /// Its text.
    pub text: String,
}

#[derive(Default)]
struct Inner {
    next_update: i64,
    next_message: i64,
    /// Updates not confirmed yet (id, JSON).
    pending: Vec<(i64, Value)>,
    sent: Vec<SentMessage>,
    /// Every method called, in order, with the token it was called with.
    calls: Vec<(String, String)>,
    /// Pushed-at instants of updates by id (for latency measurements).
    pushed: Vec<(i64, Instant)>,
}

struct Shared {
    token: String,
    inner: Mutex<Inner>,
    changed: Notify,
    uploads: Outbox<Uploaded>,
    /// The text messages, as the platform-neutral tests read them.
    delivered: Outbox<Delivered>,
    prompts: Outbox<Prompt>,
    answers: Outbox<PressAnswer>,
    upload_limit: UploadLimit,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The Bot API test server. It stops when dropped.
pub struct TelegramServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::AbortHandle,
}

impl Drop for TelegramServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

fn user(id: i64, first_name: &str, is_bot: bool) -> Value {
    json!({"id": id, "is_bot": is_bot, "first_name": first_name})
}

impl TelegramServer {
    /// Starts on `127.0.0.1` and a free port; only `token` is accepted.
    ///
    /// # Panics
    /// When no local port can be bound.
    #[allow(clippy::expect_used)]
    pub async fn start(token: &str) -> TelegramServer {
        let shared = Arc::new(Shared {
            token: token.to_string(),
            inner: Mutex::new(Inner {
                next_update: 1,
                next_message: 1,
                ..Inner::default()
            }),
            changed: Notify::new(),
            uploads: Outbox::default(),
            delivered: Outbox::default(),
            prompts: Outbox::default(),
            answers: Outbox::default(),
            upload_limit: UploadLimit::default(),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let app = Router::new()
            .route("/{bot}/{method}", post(method).get(method))
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        TelegramServer {
            addr,
            shared,
            task: task.abort_handle(),
        }
    }

    /// `http://127.0.0.1:PORT`, the Bot API base URL.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A person (`from_id`, `name`) writes `text` to the bot in their private chat (whose id
    /// is theirs, as on Telegram). Returns the update id.
    pub fn push_private(&self, from_id: i64, name: &str, text: &str) -> i64 {
        self.push(
            json!({"id": from_id, "type": "private", "first_name": name}),
            user(from_id, name, false),
            text,
        )
    }

    /// A person writes `text` in the group `chat_id` titled `title`.
    pub fn push_group(
        &self,
        chat_id: i64,
        title: &str,
        from_id: i64,
        name: &str,
        text: &str,
    ) -> i64 {
        self.push(
            json!({"id": chat_id, "type": "group", "title": title}),
            user(from_id, name, false),
            text,
        )
    }

    /// Person `from_id` presses the inline button with `data` under message `message_id` in chat
    /// `chat_id` (which need not be where the bot sent it: tests forge presses too). Returns
    /// the callback query's id.
    pub fn push_press_at(
        &self,
        from_id: i64,
        name: &str,
        chat_id: i64,
        message_id: i64,
        data: &str,
    ) -> String {
        let query_id = {
            let mut inner = self.shared.lock();
            let id = inner.next_update;
            inner.next_update += 1;
            let query_id = format!("cq{id}");
            let chat = if chat_id > 0 {
                json!({"id": chat_id, "type": "private", "first_name": name})
            } else {
                json!({"id": chat_id, "type": "group", "title": "a group"})
            };
            let update = json!({
                "update_id": id,
                "callback_query": {
                    "id": query_id,
                    "from": user(from_id, name, false),
                    "message": {
                        "message_id": message_id,
                        "date": now_secs(),
                        "chat": chat,
                        "from": user(TEST_BOT_ID, "Suzent Test Bot", true),
                        "text": "an approval prompt",
                    },
                    "chat_instance": format!("ci{chat_id}"),
                    "data": data,
                }
            });
            inner.pending.push((id, update));
            query_id
        };
        self.shared.changed.notify_waiters();
        query_id
    }

    fn push(&self, chat: Value, from: Value, text: &str) -> i64 {
        let id = {
            let mut inner = self.shared.lock();
            let id = inner.next_update;
            inner.next_update += 1;
            let message_id = inner.next_message;
            inner.next_message += 1;
            let update = json!({
                "update_id": id,
                "message": {
                    "message_id": message_id,
                    "date": now_secs(),
                    "chat": chat,
                    "from": from,
                    "text": text,
                }
            });
            inner.pending.push((id, update));
            inner.pushed.push((id, Instant::now()));
            id
        };
        self.shared.changed.notify_waiters();
        id
    }

    /// When update `id` was pushed.
    pub fn pushed_at(&self, id: i64) -> Option<Instant> {
        self.shared
            .lock()
            .pushed
            .iter()
            .find(|(u, _)| *u == id)
            .map(|(_, at)| *at)
    }

    /// Every message the bot sent, in order.
    pub fn sent(&self) -> Vec<SentMessage> {
        self.shared.lock().sent.clone()
    }

    /// Waits until the bot has sent at least `n` messages (or `timeout` passed); returns them.
    pub async fn wait_sent(&self, n: usize, timeout: Duration) -> Vec<SentMessage> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.shared.changed.notified();
            let sent = self.sent();
            if sent.len() >= n || tokio::time::Instant::now() >= deadline {
                return sent;
            }
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    }

    /// The methods called, in order, as `(method, token)`.
    pub fn calls(&self) -> Vec<(String, String)> {
        self.shared.lock().calls.clone()
    }

    /// Updates pushed and not confirmed by a later `getUpdates` offset.
    pub fn unconfirmed(&self) -> usize {
        self.shared.lock().pending.len()
    }
}

impl PlatformServer for TelegramServer {
    fn base_url(&self) -> String {
        TelegramServer::base_url(self)
    }

    /// A private chat's id is the person's.
    fn push_direct(&self, user: &str, name: &str, text: &str) -> String {
        let id: i64 = user.parse().unwrap_or(1);
        self.push_private(id, name, text);
        id.to_string()
    }

    fn outbox(&self) -> &Outbox<Delivered> {
        &self.shared.delivered
    }

    /// `sendDocument`, `sendVoice`, `sendAudio`.
    fn uploads(&self) -> &Outbox<Uploaded> {
        &self.shared.uploads
    }

    /// Above it, the Bot API's `413 Request Entity Too Large`.
    fn limit_uploads(&self, bytes: usize) {
        self.shared.upload_limit.set(bytes);
    }
}

impl ButtonServer for TelegramServer {
    /// Messages with an inline keyboard.
    fn prompts(&self) -> &Outbox<Prompt> {
        &self.shared.prompts
    }

    /// A `callback_query` update (of a message in that chat); its id is the query's.
    fn push_press(&self, user: &str, name: &str, conversation: &str, data: &str) -> String {
        self.push_press_at(
            user.parse().unwrap_or(1),
            name,
            conversation.parse().unwrap_or(1),
            1,
            data,
        )
    }

    /// `answerCallbackQuery`.
    fn press_answers(&self) -> &Outbox<PressAnswer> {
        &self.shared.answers
    }
}

fn failure(code: u16, description: &str) -> axum::response::Response {
    let body = json!({"ok": false, "error_code": code, "description": description});
    let status = axum::http::StatusCode::from_u16(code)
        .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(body)).into_response()
}

fn ok(result: Value) -> axum::response::Response {
    axum::Json(json!({"ok": true, "result": result})).into_response()
}

use axum::response::IntoResponse;

fn chat_json(chat_id: i64) -> Value {
    if chat_id > 0 {
        json!({"id": chat_id, "type": "private", "first_name": "someone"})
    } else {
        json!({"id": chat_id, "type": "group", "title": "a group"})
    }
}

/// A file the bot sent with an upload method: (file name, MIME type, bytes).
type FilePart = (String, String, Vec<u8>);

/// The arguments of a call (its JSON body, or the text fields of a multipart body with the
/// file parts beside them by field name).
async fn arguments(
    headers: &HeaderMap,
    body: axum::body::Bytes,
) -> Result<(Value, Vec<(String, FilePart)>), axum::response::Response> {
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    if content_type.starts_with("multipart/form-data") {
        let Some(parts) = multipart_parts(&content_type, body).await else {
            return Err(failure(400, "Bad Request: bad multipart body"));
        };
        let mut args = json!({});
        let mut files = Vec::new();
        for (name, file_name, mime, data) in parts {
            match file_name {
                Some(file_name) => files.push((name, (file_name, mime, data))),
                None => {
                    let text = String::from_utf8_lossy(&data).into_owned();
                    // Numbers and JSON objects arrive as their JSON text.
                    args[name] = serde_json::from_str(&text).unwrap_or(Value::String(text));
                }
            }
        }
        return Ok((args, files));
    }
    if body.is_empty() {
        return Ok((json!({}), Vec::new()));
    }
    serde_json::from_slice(&body)
        .map(|v| (v, Vec::new()))
        .map_err(|e| failure(400, &format!("Bad Request: {e}")))
}

/// `sendDocument`, `sendVoice`, `sendAudio`: the file in field `field` (an `attach://` name
/// points at another field, as the Bot API allows).
fn upload(
    shared: &Shared,
    method: &str,
    field: &str,
    args: &Value,
    mut files: Vec<(String, FilePart)>,
) -> axum::response::Response {
    let chat_id = args.get("chat_id").and_then(|v| {
        v.as_i64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
    });
    let Some(chat_id) = chat_id else {
        return failure(400, "Bad Request: chat_id is empty");
    };
    let wanted = args
        .get(field)
        .and_then(Value::as_str)
        .and_then(|v| v.strip_prefix("attach://"))
        .unwrap_or(field)
        .to_string();
    let Some(at) = files.iter().position(|(name, _)| *name == wanted) else {
        return failure(
            400,
            &format!("Bad Request: there is no {field} in the request"),
        );
    };
    let (_, (file_name, mime_type, bytes)) = files.swap_remove(at);
    if shared.upload_limit.exceeded(bytes.len()) {
        return failure(413, "Request Entity Too Large");
    }
    let size = bytes.len();
    let message_id = {
        let mut inner = shared.lock();
        let id = inner.next_message;
        inner.next_message += 1;
        let after_texts = inner.sent.len();
        shared.uploads.push(Uploaded {
            conversation: chat_id.to_string(),
            file_name: file_name.clone(),
            mime_type: mime_type.clone(),
            bytes,
            after_texts,
            method: method.to_string(),
        });
        id
    };
    shared.changed.notify_waiters();
    let file = json!({
        "file_id": format!("file{message_id}"),
        "file_unique_id": format!("u{message_id}"),
        "file_name": file_name,
        "mime_type": mime_type,
        "file_size": size,
        "duration": args.get("duration").and_then(Value::as_u64).unwrap_or(0),
    });
    ok(json!({
        "message_id": message_id,
        "date": now_secs(),
        "chat": chat_json(chat_id),
        "from": user(TEST_BOT_ID, "Suzent Test Bot", true),
        field: file,
    }))
}

async fn method(
    State(shared): State<Arc<Shared>>,
    Path((bot, method)): Path<(String, String)>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> axum::response::Response {
    let token = bot.strip_prefix("bot").unwrap_or_default().to_string();
    shared.lock().calls.push((method.clone(), token.clone()));
    if token != shared.token {
        return failure(401, "Unauthorized");
    }
    let (args, files) = match arguments(&headers, body).await {
        Ok(parsed) => parsed,
        Err(refused) => return refused,
    };
    // Bot API method names are case-insensitive (teloxide sends `GetMe`).
    match method.to_ascii_lowercase().as_str() {
        "getme" => ok(json!({
            "id": TEST_BOT_ID,
            "is_bot": true,
            "first_name": "Suzent Test Bot",
            "username": "suzent_test_bot",
            "can_join_groups": true,
            "can_read_all_group_messages": false,
            "supports_inline_queries": false,
            "can_connect_to_business": false,
            "has_main_web_app": false
        })),
        "getupdates" => {
            let offset = args.get("offset").and_then(Value::as_i64).unwrap_or(0);
            let timeout = args.get("timeout").and_then(Value::as_u64).unwrap_or(0);
            let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout.min(60));
            loop {
                let notified = shared.changed.notified();
                let ready: Vec<Value> = {
                    let mut inner = shared.lock();
                    if offset > 0 {
                        inner.pending.retain(|(id, _)| *id >= offset);
                    }
                    inner.pending.iter().map(|(_, u)| u.clone()).collect()
                };
                if !ready.is_empty() || tokio::time::Instant::now() >= deadline {
                    return ok(Value::Array(ready));
                }
                let _ = tokio::time::timeout_at(deadline, notified).await;
            }
        }
        "sendmessage" => {
            let Some(chat_id) = args.get("chat_id").and_then(Value::as_i64) else {
                return failure(400, "Bad Request: chat_id is empty");
            };
            let text = args
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if text.trim().is_empty() {
                return failure(400, "Bad Request: message text is empty");
            }
            if text.encode_utf16().count() > 4096 {
                return failure(400, "Bad Request: message is too long");
            }
            let buttons: Vec<(String, String)> = args["reply_markup"]["inline_keyboard"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_array)
                .flatten()
                .map(|b| {
                    (
                        b["text"].as_str().unwrap_or_default().to_string(),
                        b["callback_data"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect();
            if buttons
                .iter()
                .any(|(_, data)| data.is_empty() || data.len() > 64)
            {
                return failure(400, "Bad Request: BUTTON_DATA_INVALID");
            }
            let message_id = {
                let mut inner = shared.lock();
                let id = inner.next_message;
                inner.next_message += 1;
                inner.sent.push(SentMessage {
                    chat_id,
                    text: text.clone(),
                });
                id
            };
            shared.delivered.push(Delivered {
                conversation: chat_id.to_string(),
                text: text.clone(),
            });
            if !buttons.is_empty() {
                shared.prompts.push(Prompt {
                    conversation: chat_id.to_string(),
                    text: text.clone(),
                    buttons,
                });
            }
            shared.changed.notify_waiters();
            ok(json!({
                "message_id": message_id,
                "date": now_secs(),
                "chat": chat_json(chat_id),
                "from": user(TEST_BOT_ID, "Suzent Test Bot", true),
                "text": text,
            }))
        }
        "senddocument" => upload(&shared, "sendDocument", "document", &args, files),
        "sendvoice" => upload(&shared, "sendVoice", "voice", &args, files),
        "sendaudio" => upload(&shared, "sendAudio", "audio", &args, files),
        "answercallbackquery" => {
            let Some(id) = args.get("callback_query_id").and_then(Value::as_str) else {
                return failure(400, "Bad Request: query is too old or query ID is invalid");
            };
            shared.answers.push(PressAnswer {
                press: id.to_string(),
                text: args["text"].as_str().unwrap_or_default().to_string(),
            });
            ok(json!(true))
        }
        other => failure(404, &format!("Not Found: method {other}")),
    }
}
