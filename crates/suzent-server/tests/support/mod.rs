//! Test support: a bridge on a free port over a real SQLite file, and a WebSocket client that
//! plays the extension (any `Origin`, any `Host`).
#![allow(dead_code)]

pub mod chromium;
pub mod e2e;
pub mod fixtures;

use anyhow::Context;
use futures::{SinkExt, StreamExt};
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use suzent_runtime::{AuditLog, Paths};
use suzent_server::protocol::{AppMessage, BridgeCommand, CommandOutcome, ExtensionMessage};
use suzent_server::{BridgeOptions, BridgeServer, PortChoice};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// Two well-formed extension ids.
pub const EXT_A: &str = "abcdefghijklmnopabcdefghijklmnop";
pub const EXT_B: &str = "ponmlkjihgfedcbaponmlkjihgfedcba";

pub type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// How a connection attempt was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// At the upgrade, with this HTTP status.
    Http(u16),
    /// Something else.
    Other(String),
}

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub paths: Paths,
    pub audit: AuditLog,
    pub server: BridgeServer,
    pub port: u16,
}

pub struct Paired {
    pub ws: Ws,
    pub credential: String,
    pub pairing_id: String,
}

impl Harness {
    pub async fn start() -> anyhow::Result<Harness> {
        let dir = tempfile::tempdir()?;
        let paths = Paths::under(dir.path());
        let store = suzent_store::Store::open(&paths.database()).await?;
        let audit = AuditLog::start(paths.audit_log());
        let server = BridgeServer::start_with(
            paths.clone(),
            store,
            Some(audit.clone()),
            BridgeOptions {
                port: PortChoice::Any,
                device_name: Some("test-box".into()),
                native_hosts: None,
                skip_native_hosts: true,
            },
        )
        .await?;
        let port = server.port();
        Ok(Harness {
            dir,
            paths,
            audit,
            server,
            port,
        })
    }

    /// A WebSocket connection with these headers (`None`: no Origin / the right Host).
    pub async fn connect(&self, origin: Option<&str>, host: Option<&str>) -> Result<Ws, Refused> {
        let url = format!("ws://127.0.0.1:{}/v1/bridge", self.port);
        let mut request = url
            .into_client_request()
            .map_err(|e| Refused::Other(e.to_string()))?;
        if let Some(origin) = origin {
            request.headers_mut().insert(
                "origin",
                origin
                    .parse()
                    .map_err(|_| Refused::Other("origin".into()))?,
            );
        }
        if let Some(host) = host {
            request.headers_mut().insert(
                "host",
                host.parse().map_err(|_| Refused::Other("host".into()))?,
            );
        }
        match tokio_tungstenite::connect_async(request).await {
            Ok((ws, _)) => Ok(ws),
            Err(WsError::Http(response)) => Err(Refused::Http(response.status().as_u16())),
            Err(e) => Err(Refused::Other(e.to_string())),
        }
    }

    /// A connection with `chrome-extension://<id>` as its Origin.
    pub async fn extension(&self, id: &str) -> anyhow::Result<Ws> {
        self.connect(Some(&format!("chrome-extension://{id}")), None)
            .await
            .map_err(|e| anyhow::anyhow!("connect refused: {e:?}"))
    }

    /// Pairs extension `id` (the user approves through the API) and returns its live session.
    pub async fn pair(&self, id: &str) -> anyhow::Result<Paired> {
        let mut ws = self.extension(id).await?;
        send(&mut ws, &hello(None)).await?;
        send(&mut ws, &ExtensionMessage::PairRequest {}).await?;
        let AppMessage::PairPending { request_id, .. } = recv(&mut ws).await? else {
            anyhow::bail!("no pairPending");
        };
        self.server.approve(&request_id).await?;
        let AppMessage::Paired {
            credential,
            pairing_id,
            device_name,
        } = recv(&mut ws).await?
        else {
            anyhow::bail!("not paired");
        };
        anyhow::ensure!(device_name == "test-box");
        // Wait until the session is registered.
        for _ in 0..100 {
            if self.server.hub().active().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(Paired {
            ws,
            credential,
            pairing_id,
        })
    }

    /// The app sends `tabs` through the hub; the paired extension answers `[]`.
    pub async fn round_trip(&self, paired: &mut Paired) -> anyhow::Result<Value> {
        let link = self.server.hub().active().context("no live link")?;
        let waiting = tokio::spawn(async move {
            link.request(BridgeCommand::Tabs {}, Duration::from_secs(5))
                .await
        });
        let AppMessage::Request { id, command } = recv(&mut paired.ws).await? else {
            anyhow::bail!("no request");
        };
        anyhow::ensure!(command == BridgeCommand::Tabs {});
        send(
            &mut paired.ws,
            &ExtensionMessage::Response {
                id,
                outcome: CommandOutcome::Ok {
                    value: Value::Array(vec![]),
                },
            },
        )
        .await?;
        Ok(waiting.await??)
    }

    pub async fn pairings_in_store(&self) -> anyhow::Result<usize> {
        Ok(self.server.pairings().list(true).await?.len())
    }
}

pub fn hello(credential: Option<&str>) -> ExtensionMessage {
    ExtensionMessage::Hello {
        protocol: suzent_server::protocol::PROTOCOL_VERSION,
        browser: "Chromium".into(),
        browser_version: "156".into(),
        extension_version: "0.1.0".into(),
        credential: credential.map(str::to_string),
    }
}

pub async fn send(ws: &mut Ws, message: &ExtensionMessage) -> anyhow::Result<()> {
    ws.send(Message::Text(serde_json::to_string(message)?.into()))
        .await?;
    Ok(())
}

/// The next app message (5 s at most).
pub async fn recv(ws: &mut Ws) -> anyhow::Result<AppMessage> {
    recv_within(ws, Duration::from_secs(5))
        .await?
        .context("no message within 5 s")
}

/// The next app message, `None` when none arrives within `limit`.
pub async fn recv_within(ws: &mut Ws, limit: Duration) -> anyhow::Result<Option<AppMessage>> {
    match tokio::time::timeout(limit, ws.next()).await {
        Err(_) => Ok(None),
        Ok(Some(Ok(Message::Text(text)))) => Ok(Some(serde_json::from_str(text.as_str())?)),
        Ok(other) => anyhow::bail!("expected a text frame, got {other:?}"),
    }
}

/// Reads until the server's close frame: its code and reason.
pub async fn closed(ws: &mut Ws) -> anyhow::Result<(u16, String)> {
    loop {
        match tokio::time::timeout(Duration::from_secs(5), ws.next()).await? {
            Some(Ok(Message::Close(Some(frame)))) => {
                return Ok((u16::from(frame.code), frame.reason.to_string()));
            }
            Some(Ok(Message::Close(None))) => {
                return Ok((u16::from(CloseCode::Status), String::new()));
            }
            Some(Ok(Message::Text(text))) => anyhow::bail!("expected a close, got {text}"),
            Some(Ok(_)) => continue,
            Some(Err(e)) => anyhow::bail!("read failed before a close frame: {e}"),
            None => anyhow::bail!("closed without a close frame"),
        }
    }
}

/// Files under `dir` (recursively) whose bytes contain `needle`.
pub fn grep_dir(dir: &Path, needle: &[u8]) -> anyhow::Result<Vec<String>> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)?
                .windows(needle.len())
                .any(|w| w == needle)
            {
                hits.push(path.display().to_string());
            }
        }
    }
    Ok(hits)
}

/// Everything logged (at every level) while the guard lives.
#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().map(|b| b.clone()).unwrap_or_default()).into_owned()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut b) = self.0.lock() {
            b.extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub fn capture_logs() -> (Logs, tracing::subscriber::DefaultGuard) {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    (logs, tracing::subscriber::set_default(subscriber))
}
