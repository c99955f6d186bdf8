//! A real Matrix homeserver for tests: Synapse (the PyPI package `matrix-synapse`, installed by
//! `scripts/setup-tests` into `$SUZENT_TEST_ASSETS/synapse-venv`), started per test in a
//! temporary directory on a free `127.0.0.1` port: a generated configuration with SQLite, the
//! client API only (no federation listener), registration closed except through the shared
//! secret (`/_synapse/admin/v1/register`), and rate limits raised so that tests are never
//! throttled. The process runs in its own process group, killed and reaped when [`Synapse`] is
//! dropped (also when a test panics).
//!
//! [`SynapseUser`] acts as a person through the client-server API (create a room, invite, send,
//! read a room's messages); [`SynapseServer`] puts a bot account and its people behind the
//! [`PlatformServer`] view of the platform-neutral channel tests, reading what the bot sent
//! back through Synapse.
//!
//! ```no_run
//! # async fn example() {
//! use suzent_tests::synapse::{Synapse, synapse_missing};
//! if let Some(reason) = synapse_missing() {
//!     eprintln!("skipping: {reason}");
//!     return;
//! }
//! let synapse = Synapse::start().await;
//! let ada = synapse.register("ada", "Ada").await;
//! let bot = synapse.register("suzent", "Suzent").await;
//! let room = ada.create_room(None, &[&bot.user_id]).await;
//! ada.send_text(&room, "hello").await;
//! # }
//! ```

use crate::platform::{Delivered, Outbox, PlatformServer, Uploaded};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::future::Future;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The server name of the test homeserver (user ids are `@name:suzent.test`).
pub const SYNAPSE_SERVER_NAME: &str = "suzent.test";
/// The version `scripts/setup-tests` installs (pinned there too).
pub const SYNAPSE_VERSION: &str = "1.163.2";
/// How long Synapse may take to answer `/versions` after it was started.
const STARTUP: Duration = Duration::from_secs(90);
/// Every rate limit of the configuration: high enough that tests are never throttled.
const UNLIMITED: &str = "{per_second: 10000, burst_count: 10000}";

/// The Python of the virtual environment that holds Synapse
/// (`$SUZENT_TEST_ASSETS/synapse-venv/bin/python`).
pub fn synapse_python() -> PathBuf {
    crate::test_assets_dir().join("synapse-venv/bin/python")
}

/// Why Synapse cannot run here, if it cannot: its virtual environment is missing or does not
/// import `synapse` (checked once per process).
pub fn synapse_missing() -> Option<String> {
    static MISSING: OnceLock<Option<String>> = OnceLock::new();
    MISSING
        .get_or_init(|| {
            let python = synapse_python();
            let fix = format!(
                "run ./scripts/setup-tests (it installs matrix-synapse=={SYNAPSE_VERSION} from PyPI)"
            );
            if !python.is_file() {
                return Some(format!("{} is missing: {fix}", python.display()));
            }
            match Command::new(&python)
                .args(["-c", "import synapse"])
                .stdin(Stdio::null())
                .output()
            {
                Ok(out) if out.status.success() => None,
                Ok(out) => Some(format!(
                    "{} cannot import synapse ({}): {fix}",
                    python.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                )),
                Err(e) => Some(format!("{} does not run ({e}): {fix}", python.display())),
            }
        })
        .clone()
}

/// Whether a test that needs Synapse must stop here: in CI a missing Synapse fails the test
/// (panics with the reason); elsewhere the reason is printed and `true` returned.
///
/// # Panics
/// In CI, when Synapse is missing.
pub fn skip_without_synapse(test: &str) -> bool {
    let Some(reason) = synapse_missing() else {
        return false;
    };
    assert!(!crate::in_ci(), "'{test}' needs Synapse in CI: {reason}");
    eprintln!("skipping '{test}': {reason}");
    true
}

/// `n` random bytes from the operating system.
#[allow(clippy::expect_used)]
fn random_bytes(n: usize) -> Vec<u8> {
    let mut bytes = vec![0; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("/dev/urandom is readable");
    bytes
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A YAML string (JSON's quoting is YAML's).
fn quoted(s: &str) -> String {
    Value::from(s).to_string()
}

/// The configuration of a test homeserver under `dir`, listening on `port`.
fn config(dir: &Path, port: u16, shared_secret: &str) -> String {
    use base64::Engine as _;
    let seed = base64::engine::general_purpose::STANDARD_NO_PAD.encode(random_bytes(32));
    let path = |name: &str| quoted(&dir.join(name).display().to_string());
    format!(
        "server_name: {server}
pid_file: {pid}
listeners:
  - port: {port}
    bind_addresses: ['127.0.0.1']
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: {db}
media_store_path: {media}
signing_key: {signing_key}
registration_shared_secret: {shared_secret}
macaroon_secret_key: {macaroon}
form_secret: {form}
report_stats: false
enable_registration: false
trusted_key_servers: []
suppress_key_server_warning: true
presence:
  enabled: false
rc_message: {UNLIMITED}
rc_registration: {UNLIMITED}
rc_login:
  address: {UNLIMITED}
  account: {UNLIMITED}
  failed_attempts: {UNLIMITED}
rc_joins:
  local: {UNLIMITED}
rc_joins_per_room: {UNLIMITED}
rc_invites:
  per_room: {UNLIMITED}
  per_user: {UNLIMITED}
  per_issuer: {UNLIMITED}
rc_room_creation: {UNLIMITED}
",
        server = quoted(SYNAPSE_SERVER_NAME),
        pid = path("homeserver.pid"),
        db = path("homeserver.db"),
        media = path("media_store"),
        signing_key = quoted(&format!("ed25519 a_test {seed}")),
        shared_secret = quoted(shared_secret),
        macaroon = quoted(&hex(&random_bytes(32))),
        form = quoted(&hex(&random_bytes(32))),
    )
}

/// An HTTP client for talking to Synapse. It keeps no idle connections, so that it may be used
/// from several Tokio runtimes (the [`PlatformServer`] methods that are not async run their
/// requests on a runtime of their own).
#[allow(clippy::expect_used)]
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(60))
        .build()
        .expect("an HTTP client")
}

/// Sends a request and returns the JSON body of a success.
///
/// # Panics
/// When Synapse cannot be reached or answers with an error (its `errcode` and `error`).
async fn call(request: reqwest::RequestBuilder, what: &str) -> Value {
    let response = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{what}: Synapse does not answer: {e}"));
    let status = response.status();
    let body: Value = response.json().await.unwrap_or_default();
    assert!(
        status.is_success(),
        "{what}: Synapse answered {status}: {body}"
    );
    body
}

/// A unique transaction id for a `PUT /send` of this process.
fn transaction_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "suzent-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A Synapse homeserver in a temporary directory. It is killed (with its process group) and
/// reaped when dropped.
pub struct Synapse {
    child: Child,
    base: String,
    shared_secret: String,
    http: reqwest::Client,
    dir: tempfile::TempDir,
}

impl std::fmt::Debug for Synapse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Synapse")
            .field("base", &self.base)
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

impl Drop for Synapse {
    fn drop(&mut self) {
        kill_group(&self.child);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Makes the process that `command` starts lead a process group of its own.
#[cfg(unix)]
fn own_process_group(command: &mut Command) {
    std::os::unix::process::CommandExt::process_group(command, 0);
}

#[cfg(not(unix))]
fn own_process_group(_command: &mut Command) {}

/// Kills the process group that `child` leads (it was started with `process_group(0)`, so its
/// pid is the group id).
#[cfg(unix)]
fn kill_group(child: &Child) {
    // pgid > 1 never addresses init or every process.
    if let Ok(pgid) = i32::try_from(child.id())
        && pgid > 1
    {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

#[cfg(not(unix))]
fn kill_group(_child: &Child) {}

impl Synapse {
    /// Generates a configuration in a new temporary directory, starts Synapse on a free
    /// `127.0.0.1` port and waits until `/_matrix/client/versions` answers (a few seconds).
    ///
    /// # Panics
    /// When Synapse is missing (see [`synapse_missing`]; tests call [`skip_without_synapse`]
    /// first), exits while starting (the panic shows the end of its log), or does not answer
    /// within 90 seconds.
    #[allow(clippy::expect_used)]
    pub async fn start() -> Synapse {
        if let Some(reason) = synapse_missing() {
            panic!("Synapse cannot start: {reason}");
        }
        let dir = tempfile::Builder::new()
            .prefix("synapse-")
            .tempdir()
            .expect("a temporary directory");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port on 127.0.0.1")
            .port();
        let shared_secret = hex(&random_bytes(32));
        let config_path = dir.path().join("homeserver.yaml");
        std::fs::write(&config_path, config(dir.path(), port, &shared_secret))
            .expect("the configuration is written");
        let log = std::fs::File::create(dir.path().join("synapse.log")).expect("a log file");
        let mut command = Command::new(synapse_python());
        command
            .args(["-m", "synapse.app.homeserver", "-c"])
            .arg(&config_path)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the log file"))
            .stderr(log);
        own_process_group(&mut command);
        let child = command.spawn().expect("Synapse's Python runs");
        let mut synapse = Synapse {
            child,
            base: format!("http://127.0.0.1:{port}"),
            shared_secret,
            http: client(),
            dir,
        };
        synapse.wait_ready().await;
        synapse
    }

    async fn wait_ready(&mut self) {
        let deadline = Instant::now() + STARTUP;
        let url = format!("{}/_matrix/client/versions", self.base);
        loop {
            if let Ok(r) = self.http.get(&url).send().await
                && r.status().is_success()
            {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "Synapse exited while starting ({status}); its log ends:\n{}",
                    self.log_tail()
                );
            }
            assert!(
                Instant::now() < deadline,
                "Synapse did not answer /versions within {STARTUP:?}; its log ends:\n{}",
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The last lines of Synapse's log (for failure messages).
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("synapse.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// The homeserver's base URL (`http://127.0.0.1:PORT`), what a Matrix client is configured
    /// with.
    pub fn base_url(&self) -> String {
        self.base.clone()
    }

    /// Registers `@localpart:suzent.test` with display name `name` through the shared secret
    /// (the way `register_new_matrix_user` does), and logs them in with their password.
    ///
    /// # Panics
    /// When Synapse refuses (the user exists, say).
    pub async fn register(&self, localpart: &str, name: &str) -> SynapseUser {
        let url = format!("{}/_synapse/admin/v1/register", self.base);
        let nonce = call(self.http.get(&url), "registration nonce").await["nonce"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let password = hex(&random_bytes(16));
        let mac = {
            #[allow(clippy::expect_used)]
            let mut mac = Hmac::<sha1::Sha1>::new_from_slice(self.shared_secret.as_bytes())
                .expect("HMAC takes a key of any length");
            for (i, part) in [nonce.as_str(), localpart, &password, "notadmin"]
                .iter()
                .enumerate()
            {
                if i > 0 {
                    mac.update(b"\0");
                }
                mac.update(part.as_bytes());
            }
            hex(&mac.finalize().into_bytes())
        };
        let registered = call(
            self.http.post(&url).json(&json!({
                "nonce": nonce,
                "username": localpart,
                "displayname": name,
                "password": password,
                "admin": false,
                "mac": mac,
            })),
            &format!("registering {localpart}"),
        )
        .await;
        let user_id = registered["user_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let token = self.login(localpart, &password).await;
        SynapseUser {
            user_id,
            token,
            base: self.base.clone(),
            http: self.http.clone(),
        }
    }

    /// Logs `localpart` in with `password` (`m.login.password`); their new access token.
    ///
    /// # Panics
    /// When Synapse refuses.
    pub async fn login(&self, localpart: &str, password: &str) -> String {
        let body = call(
            self.http
                .post(format!("{}/_matrix/client/v3/login", self.base))
                .json(&json!({
                    "type": "m.login.password",
                    "identifier": {"type": "m.id.user", "user": localpart},
                    "password": password,
                })),
            &format!("logging {localpart} in"),
        )
        .await;
        body["access_token"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// A message event of a room, as a member reads it (`/rooms/{roomId}/messages`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomMessage {
    /// Its event id.
    pub event_id: String,
    /// Who sent it.
    pub sender: String,
    /// Its `body`.
    pub body: String,
    /// When the homeserver received it (milliseconds since the epoch).
    pub origin_server_ts: u64,
}

/// A Matrix account on the test homeserver, acting as a person through the client-server API.
/// `Debug` never shows the token.
#[derive(Clone)]
pub struct SynapseUser {
    /// Its user id (`@ada:suzent.test`).
    pub user_id: String,
    /// Its access token.
    pub token: String,
    base: String,
    http: reqwest::Client,
}

impl std::fmt::Debug for SynapseUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SynapseUser")
            .field("user_id", &self.user_id)
            .finish_non_exhaustive()
    }
}

impl SynapseUser {
    fn url(&self, path: &str) -> String {
        format!("{}/_matrix/client/v3{path}", self.base)
    }

    /// Creates a room with `invite` invited: with a `name`, a private group room; without one,
    /// a direct chat (`is_direct`, as Element creates them). Its room id.
    ///
    /// # Panics
    /// When Synapse refuses.
    pub async fn create_room(&self, name: Option<&str>, invite: &[&str]) -> String {
        let mut body = json!({
            "preset": if name.is_some() { "private_chat" } else { "trusted_private_chat" },
            "is_direct": name.is_none(),
            "invite": invite,
        });
        if let Some(name) = name {
            body["name"] = name.into();
        }
        let created = call(
            self.http
                .post(self.url("/createRoom"))
                .bearer_auth(&self.token)
                .json(&body),
            &format!("{} creating a room", self.user_id),
        )
        .await;
        created["room_id"].as_str().unwrap_or_default().to_string()
    }

    /// Invites `user` to `room`.
    ///
    /// # Panics
    /// When Synapse refuses.
    pub async fn invite(&self, room: &str, user: &str) {
        call(
            self.http
                .post(self.url(&format!("/rooms/{}/invite", encode(room))))
                .bearer_auth(&self.token)
                .json(&json!({"user_id": user})),
            &format!("{} inviting {user}", self.user_id),
        )
        .await;
    }

    /// Joins `room` (after an invitation).
    ///
    /// # Panics
    /// When Synapse refuses.
    pub async fn join(&self, room: &str) {
        call(
            self.http
                .post(self.url(&format!("/rooms/{}/join", encode(room))))
                .bearer_auth(&self.token)
                .json(&json!({})),
            &format!("{} joining {room}", self.user_id),
        )
        .await;
    }

    /// Sends the `m.text` message `text` to `room`; its event id.
    ///
    /// # Panics
    /// When Synapse refuses.
    pub async fn send_text(&self, room: &str, text: &str) -> String {
        let sent = call(
            self.http
                .put(self.url(&format!(
                    "/rooms/{}/send/m.room.message/{}",
                    encode(room),
                    transaction_id()
                )))
                .bearer_auth(&self.token)
                .json(&json!({"msgtype": "m.text", "body": text})),
            &format!("{} sending to {room}", self.user_id),
        )
        .await;
        sent["event_id"].as_str().unwrap_or_default().to_string()
    }

    /// Every `m.room.message` of `room` this member may see, oldest first
    /// (`GET /rooms/{roomId}/messages?dir=f`, page after page).
    ///
    /// # Panics
    /// When Synapse refuses.
    pub async fn messages(&self, room: &str) -> Vec<RoomMessage> {
        let mut out = Vec::new();
        let mut from: Option<String> = None;
        loop {
            let mut url = self.url(&format!("/rooms/{}/messages?dir=f&limit=100", encode(room)));
            if let Some(from) = &from {
                url.push_str(&format!("&from={}", encode(from)));
            }
            let page = call(
                self.http.get(url).bearer_auth(&self.token),
                &format!("{} reading {room}", self.user_id),
            )
            .await;
            let chunk = page["chunk"].as_array().cloned().unwrap_or_default();
            out.extend(
                chunk
                    .iter()
                    .filter(|e| e["type"] == "m.room.message")
                    .map(|e| RoomMessage {
                        event_id: e["event_id"].as_str().unwrap_or_default().into(),
                        sender: e["sender"].as_str().unwrap_or_default().into(),
                        body: e["content"]["body"].as_str().unwrap_or_default().into(),
                        origin_server_ts: e["origin_server_ts"].as_u64().unwrap_or_default(),
                    }),
            );
            match page["end"].as_str() {
                Some(end) if !chunk.is_empty() => from = Some(end.to_string()),
                _ => return out,
            }
        }
    }
}

/// A room id (or any path segment) percent-encoded for a URL path.
fn encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Runs `future` to completion on a runtime of its own, in a thread of its own: how the
/// [`PlatformServer`] methods that are not async talk to Synapse from within a test's runtime
/// (which they block meanwhile; Synapse is another process, so nothing waits on that runtime).
#[allow(clippy::expect_used)]
fn block_on<T: Send>(future: impl Future<Output = T> + Send) -> T {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a Tokio runtime")
                    .block_on(future)
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// The bot's user id on a [`SynapseServer`].
pub const SYNAPSE_BOT: &str = "@suzent:suzent.test";

/// Synapse with a bot account (`@suzent:suzent.test`, display name Suzent) and the people who
/// write to it, as the platform-neutral channel tests drive a platform: a person
/// ([`PlatformServer::push_direct`]) is registered when first named, creates a direct chat with
/// the bot (inviting it) and writes there; what the bot sent is read back from those rooms
/// through Synapse, as the people see it.
pub struct SynapseServer {
    synapse: Synapse,
    bot: SynapseUser,
    /// The people by user id, each with their direct chat with the bot.
    people: tokio::sync::Mutex<HashMap<String, (SynapseUser, String)>>,
    /// The bot's messages read so far, in the order Synapse received them.
    read: Outbox<Delivered>,
    /// Audio uploads are tested on the stand-in ([`crate::MatrixServer`]), which records them:
    /// reading them back from Synapse's media repository is not built, so this stays empty.
    uploads: Outbox<Uploaded>,
}

impl std::fmt::Debug for SynapseServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SynapseServer")
            .field("synapse", &self.synapse)
            .finish_non_exhaustive()
    }
}

impl SynapseServer {
    /// Starts Synapse and registers the bot.
    ///
    /// # Panics
    /// As [`Synapse::start`] does.
    pub async fn start() -> SynapseServer {
        let synapse = Synapse::start().await;
        let bot = synapse.register("suzent", "Suzent").await;
        debug_assert_eq!(bot.user_id, SYNAPSE_BOT);
        SynapseServer {
            synapse,
            bot,
            people: tokio::sync::Mutex::new(HashMap::new()),
            read: Outbox::default(),
            uploads: Outbox::default(),
        }
    }

    /// The homeserver.
    pub fn synapse(&self) -> &Synapse {
        &self.synapse
    }

    /// The bot's account; its token is what the channel is configured with.
    pub fn bot(&self) -> &SynapseUser {
        &self.bot
    }

    /// `user` (`@ada:suzent.test`, display name `name`) and their direct chat with the bot:
    /// registered and created (the bot invited) when first asked for.
    ///
    /// # Panics
    /// When `user` is not a user id of this homeserver, or Synapse refuses.
    pub async fn direct_chat(&self, user: &str, name: &str) -> (SynapseUser, String) {
        let mut people = self.people.lock().await;
        if let Some(known) = people.get(user) {
            return known.clone();
        }
        let localpart = user
            .strip_prefix('@')
            .and_then(|u| u.strip_suffix(&format!(":{SYNAPSE_SERVER_NAME}")))
            .unwrap_or_else(|| panic!("'{user}' is not a user of {SYNAPSE_SERVER_NAME}"));
        let person = self.synapse.register(localpart, name).await;
        let room = person.create_room(None, &[&self.bot.user_id]).await;
        people.insert(user.to_string(), (person.clone(), room.clone()));
        (person, room)
    }

    /// Every message the bot sent to the people's direct chats, read through Synapse as they
    /// see it, in the order Synapse received them.
    pub async fn bot_messages(&self) -> Vec<Delivered> {
        let people: Vec<(SynapseUser, String)> =
            self.people.lock().await.values().cloned().collect();
        let mut found = Vec::new();
        for (person, room) in people {
            for m in person.messages(&room).await {
                if m.sender == self.bot.user_id {
                    found.push((
                        m.origin_server_ts,
                        Delivered {
                            conversation: room.clone(),
                            text: m.body,
                        },
                    ));
                }
            }
        }
        found.sort_by_key(|(ts, _)| *ts);
        // What was read before keeps its place; what is new is appended.
        let known = self.read.all().len();
        for (_, message) in found.into_iter().skip(known) {
            self.read.push(message);
        }
        self.read.all()
    }
}

impl PlatformServer for SynapseServer {
    fn base_url(&self) -> String {
        self.synapse.base_url()
    }

    fn push_direct(&self, user: &str, name: &str, text: &str) -> String {
        block_on(async {
            let (person, room) = self.direct_chat(user, name).await;
            person.send_text(&room, text).await;
            room
        })
    }

    /// The bot's messages read so far (refreshed by [`PlatformServer::delivered`] and
    /// [`PlatformServer::wait_delivered`], which read them from Synapse).
    fn outbox(&self) -> &Outbox<Delivered> {
        &self.read
    }

    fn delivered(&self) -> Vec<Delivered> {
        block_on(self.bot_messages())
    }

    fn uploads(&self) -> &Outbox<Uploaded> {
        &self.uploads
    }

    /// Synapse's `max_upload_size` is fixed in its config at start; the upload-limit tests run
    /// on the stand-in.
    fn limit_uploads(&self, _bytes: usize) {
        panic!(
            "SynapseServer cannot change its upload limit while running; test uploads on MatrixServer"
        );
    }

    async fn wait_delivered(&self, n: usize, timeout: Duration) -> Vec<Delivered> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let sent = self.bot_messages().await;
            if sent.len() >= n || tokio::time::Instant::now() >= deadline {
                return sent;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
