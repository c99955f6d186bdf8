//! What the platform test servers share: the messages and files a bot sent ([`Outbox`], waited
//! on by tests) and the [`PlatformServer`] view the platform-neutral channel tests drive.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::Notify;

/// A message a bot sent, as any platform's test server records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    /// The conversation it was sent to (a Discord channel id, a Slack channel id, a Matrix
    /// room id).
    pub conversation: String,
    /// Its text.
    pub text: String,
}

/// A file a bot uploaded to a conversation, as any platform's test server records it once
/// the platform would show it there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uploaded {
    /// The conversation it was shared in.
    pub conversation: String,
    /// The file name the upload gave.
    pub file_name: String,
    /// The MIME type the upload declared (empty when it declared none).
    pub mime_type: String,
    /// The bytes that arrived.
    pub bytes: Vec<u8>,
    /// How many text messages the bot had sent before it (so tests can check the order).
    pub after_texts: usize,
    /// How it was sent: the platform's method (`sendDocument`, `files[0]`,
    /// `files.completeUploadExternal`, `m.audio`).
    pub method: String,
}

/// The messages a bot sent, in order, with a wait for more.
#[derive(Debug)]
pub struct Outbox<T> {
    sent: Mutex<Vec<T>>,
    changed: Notify,
}

impl<T> Default for Outbox<T> {
    fn default() -> Self {
        Outbox {
            sent: Mutex::new(Vec::new()),
            changed: Notify::new(),
        }
    }
}

impl<T: Clone> Outbox<T> {
    /// Records one sent message; returns how many there are now.
    pub fn push(&self, message: T) -> usize {
        let n = {
            let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
            sent.push(message);
            sent.len()
        };
        self.changed.notify_waiters();
        n
    }

    /// How many messages were sent.
    pub fn len(&self) -> usize {
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether none was sent.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every message sent, in order.
    pub fn all(&self) -> Vec<T> {
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits until at least `n` messages were sent (or `timeout` passed); returns them.
    pub async fn wait(&self, n: usize, timeout: Duration) -> Vec<T> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.changed.notified();
            let sent = self.all();
            if sent.len() >= n || tokio::time::Instant::now() >= deadline {
                return sent;
            }
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    }
}

/// A messaging platform's test server as the platform-neutral channel tests see it.
pub trait PlatformServer: Send + Sync + 'static {
    /// The base URL to configure the channel with.
    fn base_url(&self) -> String;

    /// Person `user` (display name `name`) writes `text` to the bot in their one-to-one
    /// conversation; returns that conversation's id (what replies must go to).
    fn push_direct(&self, user: &str, name: &str, text: &str) -> String;

    /// The messages the bot sent.
    fn outbox(&self) -> &Outbox<Delivered>;

    /// The files the bot uploaded to conversations.
    fn uploads(&self) -> &Outbox<Uploaded>;

    /// From now on, uploads larger than `bytes` are refused with the platform's own answer
    /// for a file that is too large.
    fn limit_uploads(&self, bytes: usize);

    /// Every message the bot sent, in order.
    fn delivered(&self) -> Vec<Delivered> {
        self.outbox().all()
    }

    /// Waits until the bot uploaded at least `n` files (or `timeout` passed); returns them.
    fn wait_uploaded(
        &self,
        n: usize,
        timeout: Duration,
    ) -> impl std::future::Future<Output = Vec<Uploaded>> + Send {
        self.uploads().wait(n, timeout)
    }

    /// Waits until the bot sent at least `n` messages (or `timeout` passed); returns them.
    fn wait_delivered(
        &self,
        n: usize,
        timeout: Duration,
    ) -> impl std::future::Future<Output = Vec<Delivered>> + Send {
        self.outbox().wait(n, timeout)
    }
}

/// The credential of an `Authorization: SCHEME CREDENTIAL` header (`Bot` for Discord,
/// `Bearer` for Slack and Matrix).
pub fn authorization<'a>(headers: &'a axum::http::HeaderMap, scheme: &str) -> Option<&'a str> {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix(scheme))
        .and_then(|v| v.strip_prefix(' '))
}

/// What people sent that a server has not delivered to the bot yet (a gateway or socket
/// session takes it when one is up).
#[derive(Debug)]
pub struct Inbound<T> {
    queue: Mutex<Vec<T>>,
    pushed: Notify,
}

impl<T> Default for Inbound<T> {
    fn default() -> Self {
        Inbound {
            queue: Mutex::new(Vec::new()),
            pushed: Notify::new(),
        }
    }
}

impl<T> Inbound<T> {
    /// Queues one item and wakes the session.
    pub fn push(&self, item: T) {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(item);
        self.pushed.notify_waiters();
    }

    /// Puts items back in front (a session ended before they were acknowledged).
    pub fn put_back(&self, mut items: Vec<T>) {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        items.append(&mut queue);
        *queue = items;
    }

    /// Takes everything queued, in order.
    pub fn take(&self) -> Vec<T> {
        std::mem::take(&mut *self.queue.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// How many items wait.
    pub fn len(&self) -> usize {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Resolves after the next push, or after a short while (a push that raced the
    /// notification is then picked up).
    pub async fn pushed(&self) {
        let _ = tokio::time::timeout(Duration::from_millis(200), self.pushed.notified()).await;
    }
}

/// A message the bot sent with buttons under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// The conversation it went to.
    pub conversation: String,
    /// Its text.
    pub text: String,
    /// The buttons in order: (label, the data a press hands back).
    pub buttons: Vec<(String, String)>,
}

/// The bot's answer to a button press.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PressAnswer {
    /// The press it answers (Telegram's callback query id, Discord's interaction id).
    pub press: String,
    /// The text shown to the person who pressed.
    pub text: String,
}

/// A platform test server whose messages can carry buttons.
pub trait ButtonServer: PlatformServer {
    /// The messages the bot sent with buttons, in order.
    fn prompts(&self) -> &Outbox<Prompt>;

    /// Person `user` (display name `name`) presses the button with `data` in `conversation`
    /// (which need not be where the bot sent it: tests forge presses too). Returns the
    /// press's id.
    fn push_press(&self, user: &str, name: &str, conversation: &str, data: &str) -> String;

    /// The bot's answers to presses, in order.
    fn press_answers(&self) -> &Outbox<PressAnswer>;
}

/// A limit on upload sizes that a test sets (none until then).
#[derive(Debug, Default)]
pub struct UploadLimit(std::sync::atomic::AtomicUsize);

impl UploadLimit {
    /// Sets the limit.
    pub fn set(&self, bytes: usize) {
        self.0.store(bytes, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether `len` bytes are above the limit.
    pub fn exceeded(&self, len: usize) -> bool {
        let limit = self.0.load(std::sync::atomic::Ordering::SeqCst);
        limit > 0 && len > limit
    }
}

/// The file parts of a `multipart/form-data` body (`content_type` is the request's header):
/// each part's field name, file name (when it has one), declared MIME type (empty when none)
/// and bytes; plain fields come with no file name. `None` when the body is not multipart.
pub async fn multipart_parts(
    content_type: &str,
    body: bytes::Bytes,
) -> Option<Vec<(String, Option<String>, String, Vec<u8>)>> {
    let boundary = multer::parse_boundary(content_type).ok()?;
    let stream = futures::stream::once(async move { Ok::<_, std::io::Error>(body) });
    let mut form = multer::Multipart::new(stream, boundary);
    let mut parts = Vec::new();
    while let Ok(Some(field)) = form.next_field().await {
        let name = field.name().unwrap_or_default().to_string();
        let file_name = field.file_name().map(str::to_string);
        let mime = field
            .content_type()
            .map(ToString::to_string)
            .unwrap_or_default();
        let data = field.bytes().await.ok()?;
        parts.push((name, file_name, mime, data.to_vec()));
    }
    Some(parts)
}
