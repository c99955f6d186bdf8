//! The peer protocol's messages and framing.
//!
//! Each request is one QUIC bidirectional stream on a connection authenticated by both device
//! keys (ALPN [`PEER_ALPN`]): the caller writes one frame and finishes, the callee answers with
//! one frame. A frame is a 4-byte big-endian length and that many bytes of JSON, at most
//! [`MAX_FRAME`]. Pairing uses its own ALPN ([`PAIR_ALPN`]) and one stream of frames.
//!
//! Authentication is the connection itself (TLS 1.3 with raw public keys inside QUIC): a
//! captured request cannot be replayed on another connection, and no message carries a token.
//! Deliveries are idempotent by (sender device, `messageId`).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// ALPN of the peer protocol.
pub const PEER_ALPN: &[u8] = b"suzent/peer/1";
/// ALPN of pairing.
pub const PAIR_ALPN: &[u8] = b"suzent/pair/1";
/// Largest frame in bytes.
pub const MAX_FRAME: usize = 1 << 20;
/// Longest message text in characters.
pub const MAX_MESSAGE_CHARS: usize = 100_000;

/// QUIC close codes Suzent uses, so the other side knows why a connection ended.
pub mod close {
    /// A normal close (shutting down).
    pub const NORMAL: u32 = 0;
    /// This device revoked the pairing.
    pub const REVOKED: u32 = 4401;
    /// This device does not know the other (never paired).
    pub const NOT_PAIRED: u32 = 4403;
    /// A protocol violation.
    pub const PROTOCOL: u32 = 4400;
}

/// A request from one paired device to another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Request {
    /// Who I am now: my name, platform and addresses (sent after connecting).
    Hello {
        /// Device name.
        name: String,
        /// `linux`, `macos`, `windows`...
        platform: String,
        /// Direct addresses (`ip:port`).
        addrs: Vec<String>,
    },
    /// A message for one of the receiver's agents.
    Deliver {
        /// The sender's id for this message; a resend carries the same id.
        message_id: String,
        /// The receiving agent (a chat id), or none for the chat that receives this device's
        /// messages.
        target: Option<String>,
        /// The sending agent (shown to the receiver).
        from_agent: Option<String>,
        /// The message.
        text: String,
    },
    /// What became of a delivered message on the receiver (read by its agent, or failed).
    Status {
        /// The sender's message id.
        message_id: String,
        /// The new state.
        status: RemoteStatus,
        /// What the receiver wants the sender to know (refused tool calls, errors).
        note: Option<String>,
    },
    /// The receiver's agents this device may address.
    ListAgents,
    /// An agent's transcript (needs the `read` scope).
    ReadAgent {
        /// The agent (a chat id), or none for the chat that receives this device's messages.
        agent: Option<String>,
        /// Characters at most.
        budget_chars: usize,
    },
    /// Stop an agent's running turn (needs the `read` scope).
    StopAgent {
        /// The agent (a chat id), or none for the chat that receives this device's messages.
        agent: Option<String>,
    },
}

/// What became of a delivered message on the receiving device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemoteStatus {
    /// The receiving agent read it (it is in its transcript and its turn ran).
    Read,
    /// The receiving device gave up on it.
    Failed,
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// The receiving user paused this device.
    Paused,
    /// The device's scope does not allow this.
    Scope,
    /// No such agent.
    NotFound,
    /// The request is malformed or too large.
    Invalid,
    /// The receiver cannot take it now (try again later).
    Unavailable,
}

/// An agent as another device sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteAgent {
    /// The agent's id on its device (a chat id).
    pub id: String,
    /// Its title.
    pub title: String,
    /// `running` or `idle`.
    pub status: String,
    /// Last activity (RFC 3339).
    pub updated: String,
}

/// The answer to a [`Request`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Response {
    /// Done.
    Ok,
    /// The message is stored durably on the receiver (HTTP's 202). `duplicate` when it was
    /// already stored (a resend).
    Accepted {
        /// A resend of a stored message.
        duplicate: bool,
    },
    /// The message id is already used by this sender for other content (HTTP's 409); nothing
    /// was stored.
    Conflict {
        /// What to tell the sender.
        message: String,
    },
    /// Refused (HTTP's 403/404/400).
    Refused {
        /// Why, for programs.
        reason: Refusal,
        /// Why, for people.
        message: String,
    },
    /// The answer to [`Request::Hello`].
    Hello {
        /// Device name.
        name: String,
        /// Platform.
        platform: String,
    },
    /// The answer to [`Request::ListAgents`].
    Agents {
        /// The agents.
        agents: Vec<RemoteAgent>,
    },
    /// The answer to [`Request::ReadAgent`] and [`Request::StopAgent`].
    Text {
        /// The text.
        text: String,
    },
}

/// Pairing messages, in order: the joiner's [`PairMessage::Hello`], the host's
/// [`PairMessage::Accepted`] or [`PairMessage::Refused`], the joiner's
/// [`PairMessage::Confirm`], the host's [`PairMessage::Done`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum PairMessage {
    /// The joiner proves it saw the code and says who it is.
    Hello {
        /// [`crate::PairingTicket::proof`] in hex.
        proof: String,
        /// Joiner's device name.
        name: String,
        /// Joiner's platform.
        platform: String,
        /// Joiner's direct addresses.
        addrs: Vec<String>,
    },
    /// The code was right; both now show the words.
    Accepted {
        /// Host's device name.
        name: String,
        /// Host's platform.
        platform: String,
    },
    /// The code was wrong, expired, used or locked.
    Refused {
        /// Why.
        reason: String,
    },
    /// The joiner's user confirmed (or rejected) the words.
    Confirm {
        /// Whether the words matched.
        accept: bool,
    },
    /// The host's final answer: stored on both sides, or not paired.
    Done {
        /// Paired.
        accept: bool,
        /// Why not.
        reason: Option<String>,
    },
}

/// Why reading or writing a frame failed.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The stream failed.
    #[error("stream: {0}")]
    Stream(String),
    /// The frame is larger than [`MAX_FRAME`].
    #[error("frame of {0} bytes is larger than {MAX_FRAME}")]
    TooLarge(usize),
    /// The frame is not the expected JSON.
    #[error("malformed frame: {0}")]
    Malformed(String),
    /// The stream ended before a frame.
    #[error("the stream ended")]
    Ended,
}

/// Writes one frame.
pub async fn write_frame<T: Serialize>(
    send: &mut iroh::endpoint::SendStream,
    value: &T,
) -> Result<(), FrameError> {
    let body = serde_json::to_vec(value).map_err(|e| FrameError::Malformed(e.to_string()))?;
    if body.len() > MAX_FRAME {
        return Err(FrameError::TooLarge(body.len()));
    }
    let len = u32::try_from(body.len()).map_err(|_| FrameError::TooLarge(body.len()))?;
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&len.to_be_bytes());
    frame.extend_from_slice(&body);
    send.write_all(&frame)
        .await
        .map_err(|e| FrameError::Stream(e.to_string()))
}

/// Reads one frame.
pub async fn read_frame<T: DeserializeOwned>(
    recv: &mut iroh::endpoint::RecvStream,
) -> Result<T, FrameError> {
    let mut len = [0u8; 4];
    match recv.read_exact(&mut len).await {
        Ok(()) => {}
        Err(iroh::endpoint::ReadExactError::FinishedEarly(0)) => return Err(FrameError::Ended),
        Err(e) => return Err(FrameError::Stream(e.to_string())),
    }
    let len = usize::try_from(u32::from_be_bytes(len)).unwrap_or(usize::MAX);
    if len > MAX_FRAME {
        return Err(FrameError::TooLarge(len));
    }
    let mut body = vec![0u8; len];
    recv.read_exact(&mut body)
        .await
        .map_err(|e| FrameError::Stream(e.to_string()))?;
    serde_json::from_slice(&body).map_err(|e| FrameError::Malformed(e.to_string()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn requests_use_snake_case_tags_and_camel_case_fields() {
        let r = Request::Deliver {
            message_id: "m1".into(),
            target: None,
            from_agent: Some("chat-1".into()),
            text: "run report".into(),
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"type": "deliver", "messageId": "m1", "target": null, "fromAgent": "chat-1", "text": "run report"})
        );
    }
}
