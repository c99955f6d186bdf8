//! One DevTools protocol connection: JSON messages over a WebSocket, requests matched to
//! responses by id, flat sessions (`sessionId`) for tabs and out-of-process iframes, and events
//! fanned out to subscribers.

use crate::backend::BrowserError;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// The time one request may take before it counts as timed out (outcome unknown).
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// A protocol event.
#[derive(Debug, Clone)]
pub(crate) struct CdpEvent {
    /// `Page.loadEventFired`.
    pub method: String,
    /// The event's parameters.
    pub params: Value,
    /// The session it came from (`None`: the browser).
    pub session: Option<String>,
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;

/// A live connection. Cloning shares it.
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    out: mpsc::UnboundedSender<String>,
    pending: Pending,
    next_id: Arc<AtomicU64>,
    events: broadcast::Sender<CdpEvent>,
    closed: Arc<std::sync::atomic::AtomicBool>,
}

impl Connection {
    /// Connects to a browser's DevTools WebSocket (`ws://127.0.0.1:PORT/devtools/browser/ID`).
    pub(crate) async fn connect(ws_url: &str) -> Result<Connection, BrowserError> {
        let (stream, _) = tokio::time::timeout(
            Duration::from_secs(10),
            tokio_tungstenite::connect_async(ws_url),
        )
        .await
        .map_err(|_| BrowserError::NoBrowser(format!("no answer from {ws_url}")))?
        .map_err(|e| BrowserError::NoBrowser(format!("cannot connect to {ws_url}: {e}")))?;
        let (mut sink, mut source) = stream.split();
        let (out, mut out_rx) = mpsc::unbounded_channel::<String>();
        let pending: Pending = Arc::default();
        let (events, _) = broadcast::channel(4096);
        let closed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        tokio::spawn(async move {
            while let Some(text) = out_rx.recv().await {
                if sink.send(Message::Text(text.into())).await.is_err() {
                    break;
                }
            }
            let _ = sink.close().await;
        });
        let reader_pending = pending.clone();
        let reader_events = events.clone();
        let reader_closed = closed.clone();
        tokio::spawn(async move {
            while let Some(msg) = source.next().await {
                let text = match msg {
                    Ok(Message::Text(t)) => t.to_string(),
                    Ok(Message::Binary(b)) => String::from_utf8_lossy(&b).into_owned(),
                    Ok(Message::Close(_)) | Err(_) => break,
                    Ok(_) => continue,
                };
                let Ok(value) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                if let Some(id) = value.get("id").and_then(Value::as_u64) {
                    let waiter = reader_pending.lock().ok().and_then(|mut p| p.remove(&id));
                    if let Some(tx) = waiter {
                        let result = match value.get("error") {
                            Some(err) => Err(err
                                .get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("unknown error")
                                .to_string()),
                            None => Ok(value.get("result").cloned().unwrap_or(Value::Null)),
                        };
                        let _ = tx.send(result);
                    }
                    // A reply whose request is no longer pending (it timed out) is dropped.
                } else if let Some(method) = value.get("method").and_then(Value::as_str) {
                    let _ = reader_events.send(CdpEvent {
                        method: method.to_string(),
                        params: value.get("params").cloned().unwrap_or(Value::Null),
                        session: value
                            .get("sessionId")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    });
                }
            }
            reader_closed.store(true, Ordering::SeqCst);
            if let Ok(mut p) = reader_pending.lock() {
                for (_, tx) in p.drain() {
                    let _ = tx.send(Err("the browser connection closed".to_string()));
                }
            }
        });
        Ok(Connection {
            out,
            pending,
            next_id: Arc::new(AtomicU64::new(1)),
            events,
            closed,
        })
    }

    /// Whether the browser closed the connection.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Subscribes to events from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<CdpEvent> {
        self.events.subscribe()
    }

    /// Sends one request and waits for its result. A protocol error comes back as
    /// [`BrowserError::Protocol`] with the browser's message; no reply within
    /// [`REQUEST_TIMEOUT`] is [`BrowserError::Timeout`] (the request is not sent again).
    pub(crate) async fn call(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
    ) -> Result<Value, BrowserError> {
        self.call_with_timeout(method, params, session, REQUEST_TIMEOUT)
            .await
    }

    /// [`Connection::call`] with another time limit.
    pub(crate) async fn call_with_timeout(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
        limit: Duration,
    ) -> Result<Value, BrowserError> {
        if self.is_closed() {
            return Err(BrowserError::NoBrowser(
                "the browser connection closed (was the browser quit?)".to_string(),
            ));
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = Value::String(s.to_string());
        }
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id, tx);
        }
        if self.out.send(message.to_string()).is_err() {
            self.forget(id);
            return Err(BrowserError::NoBrowser(
                "the browser connection closed".to_string(),
            ));
        }
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err(message))) => Err(BrowserError::Protocol(format!("{method}: {message}"))),
            Ok(Err(_)) => Err(BrowserError::Protocol(format!(
                "{method}: the browser connection closed"
            ))),
            Err(_) => {
                self.forget(id);
                Err(BrowserError::Timeout(limit.as_secs()))
            }
        }
    }

    fn forget(&self, id: u64) {
        if let Ok(mut p) = self.pending.lock() {
            p.remove(&id);
        }
    }
}
