//! Matrix through the client-server API (`ruma`'s request and event types over reqwest): an
//! access token, `GET /account/whoami` to connect; `GET /sync` long polling from the last
//! `next_batch` to receive (rooms the bot is invited to are joined with
//! `POST /rooms/{roomId}/join`, so a person can start a direct chat with it); `PUT
//! /rooms/{roomId}/send/m.room.message/{txnId}` to send. Only `m.text` messages of people other
//! than the bot are passed on. End-to-end encrypted rooms are not read (no keys here). Audio is
//! uploaded to the media repository (`POST /_matrix/media/v3/upload`), then sent as an
//! `m.audio` message naming its `mxc://` URI, MIME type, size and duration.
//!
//! Tested against a real homeserver (Synapse, `tests/src/synapse.rs`), which showed what a
//! client must not assume: room ids of room version 12 have no `:server` part; a sync carries a
//! room `summary` only to clients that lazy-load members, so who is in a room is counted from
//! its member events; and a sync cuts a room's timeline (at 10 events unless its filter asks
//! for more; `limited`), so what came between is read with `/rooms/{roomId}/messages` from the
//! sync's `prev_batch` back to the previous `next_batch`, or messages are lost.

use crate::receive::{Poller, Polling, stream_of};
use crate::{
    AudioFile, BotIdentity, Channel, ChannelError, ChannelPlatform, Incoming, LengthUnit,
    MessageLimit, Received, check_size, scrub,
};
use async_trait::async_trait;
use futures::stream::BoxStream;
use ruma::api::auth_scheme::{AuthScheme, SendAccessToken};
use ruma::api::client::account::whoami;
use ruma::api::client::filter::FilterDefinition;
use ruma::api::client::media::create_content;
use ruma::api::client::membership::join_room_by_id;
use ruma::api::client::message::get_message_events;
use ruma::api::client::message::send_message_event;
use ruma::api::client::sync::sync_events::v3 as sync;
use ruma::api::path_builder::PathBuilder;
use ruma::api::{
    IncomingResponseExt, MatrixVersion, OutgoingRequest, OutgoingRequestExt, SupportedVersions,
};
use ruma::events::room::member::MembershipState;
use ruma::events::room::message::{
    AudioInfo, AudioMessageEventContent, MessageType, RoomMessageEventContent,
};
use ruma::events::{
    AnySyncMessageLikeEvent, AnySyncStateEvent, AnySyncTimelineEvent, SyncMessageLikeEvent,
    SyncStateEvent,
};
use ruma::{OwnedRoomId, OwnedTransactionId, OwnedUserId};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Matrix's limit: an event must not exceed 65,536 bytes as JSON. A part holds at most 30,000
/// bytes of text, which stays below it even when escaping doubles the text.
pub const MATRIX_LIMIT: MessageLimit = MessageLimit {
    max: 30_000,
    unit: LengthUnit::Bytes,
};
/// The largest upload assumed when the homeserver does not refuse one first (Synapse's default
/// `max_upload_size`, 50 MiB); a homeserver with a smaller limit answers `M_TOO_LARGE`.
pub const MATRIX_UPLOAD_LIMIT: u64 = 50 * 1024 * 1024;
const PLATFORM: &str = "Matrix";
/// How many events of a room one sync (or one page of a room's messages) may hand out
/// (Synapse's default for a sync is 10).
const TIMELINE_LIMIT: u32 = 100;
/// How many pages of a room's messages are read to fill a sync's gap (at most 1,000 events).
const GAP_PAGES: usize = 10;

/// A Matrix account (its homeserver and an access token). `Debug` never shows the token.
pub struct MatrixChannel {
    http: reqwest::Client,
    base: String,
    token: String,
    versions: SupportedVersions,
    long_poll: Duration,
    /// Who the bot is, once known (`whoami`).
    me: Mutex<Option<OwnedUserId>>,
    /// Display names and room names seen in sync state, by user id and room id.
    names: Mutex<HashMap<String, String>>,
    /// The joined members of each room (by room id), from the member events seen.
    members: Mutex<HashMap<String, HashSet<String>>>,
}

impl std::fmt::Debug for MatrixChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatrixChannel")
            .field("homeserver", &self.base)
            .finish_non_exhaustive()
    }
}

impl MatrixChannel {
    /// An account with `token` on the homeserver at `homeserver` (its client-server API base,
    /// `https://matrix.example.org`), long polling `/sync` for at most `long_poll_secs`.
    ///
    /// Errors: [`ChannelError::Invalid`] naming `token` (empty, or with whitespace) or
    /// `base_url` (missing: Matrix has no default homeserver here; or not an http(s) URL), or
    /// the HTTP client cannot be built.
    pub fn new(
        token: &str,
        homeserver: Option<&str>,
        long_poll_secs: u32,
    ) -> Result<MatrixChannel, ChannelError> {
        let token = token.trim();
        if token.is_empty() || token.contains(char::is_whitespace) {
            return Err(ChannelError::Invalid {
                field: "token",
                message: "a Matrix access token is one word (Element: Settings → Help & About → \
                          Access Token)"
                    .into(),
            });
        }
        let base = homeserver
            .map(|h| h.trim().trim_end_matches('/').to_string())
            .filter(|h| !h.is_empty())
            .ok_or_else(|| ChannelError::Invalid {
                field: "base_url",
                message: "a Matrix channel needs its homeserver URL (https://matrix.example.org)"
                    .into(),
            })?;
        url::Url::parse(&base)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
            .ok_or_else(|| ChannelError::Invalid {
                field: "base_url",
                message: format!("'{base}' is not an http(s) URL"),
            })?;
        let long_poll = Duration::from_secs(u64::from(long_poll_secs.max(1)));
        let http = reqwest::Client::builder()
            .timeout(long_poll + Duration::from_secs(15))
            .build()
            .map_err(|e| ChannelError::Invalid {
                field: "client",
                message: format!("the HTTP client cannot be built: {e}"),
            })?;
        Ok(MatrixChannel {
            http,
            base,
            token: token.to_string(),
            versions: SupportedVersions {
                versions: [MatrixVersion::V1_1].into(),
                features: Default::default(),
            },
            long_poll,
            me: Mutex::new(None),
            names: Mutex::new(HashMap::new()),
            members: Mutex::new(HashMap::new()),
        })
    }

    fn network(&self, what: &str, e: impl std::fmt::Display) -> ChannelError {
        ChannelError::Network {
            platform: PLATFORM,
            message: scrub(&format!("{what}: {e}"), &self.token),
        }
    }

    /// Sends one ruma request with the access token; its response, or the homeserver's error
    /// (`errcode` and `error` of the standard error body).
    async fn call<R>(&self, request: R) -> Result<R::IncomingResponse, ChannelError>
    where
        R: OutgoingRequest,
        for<'a> R::Authentication: AuthScheme<Input<'a> = SendAccessToken<'a>>,
        for<'a> R::PathBuilder: PathBuilder<Input<'a> = Cow<'a, SupportedVersions>>,
    {
        let what = R::PATH_BUILDER
            .select_path(Cow::Borrowed(&self.versions))
            .unwrap_or("?");
        let request: http::Request<Vec<u8>> = request
            .try_into_http_request(
                &self.base,
                SendAccessToken::Always(&self.token),
                Cow::Borrowed(&self.versions),
            )
            .map_err(|e| self.network(what, e))?;
        let request = reqwest::Request::try_from(request).map_err(|e| self.network(what, e))?;
        let response = self
            .http
            .execute(request)
            .await
            .map_err(|e| self.network(what, e))?;
        let status = response.status();
        let body = response.bytes().await.map_err(|e| self.network(what, e))?;
        if !status.is_success() {
            let error: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let message = scrub(
                &format!(
                    "{what}: {} {} ({status})",
                    error["errcode"].as_str().unwrap_or("M_UNKNOWN"),
                    error["error"].as_str().unwrap_or_default()
                ),
                &self.token,
            );
            return Err(if status.as_u16() == 413 {
                ChannelError::TooLarge {
                    platform: PLATFORM,
                    bytes: 0,
                    limit: MATRIX_UPLOAD_LIMIT,
                }
            } else if status.as_u16() == 401 {
                ChannelError::Unauthorized {
                    platform: PLATFORM,
                    message,
                }
            } else {
                ChannelError::Api {
                    platform: PLATFORM,
                    message,
                }
            });
        }
        let response = http::Response::builder()
            .status(status.as_u16())
            .body(body.as_ref())
            .map_err(|e| self.network(what, e))?;
        R::IncomingResponse::try_from_http_response(response).map_err(|e| self.network(what, e))
    }

    async fn whoami(&self) -> Result<OwnedUserId, ChannelError> {
        let me = self.call(whoami::v3::Request::new()).await?.user_id;
        *self.me.lock().unwrap_or_else(PoisonError::into_inner) = Some(me.clone());
        Ok(me)
    }

    fn name_of(&self, id: &str) -> Option<String> {
        self.names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// The events of `room` from `since` (a sync's `next_batch`) up to `until` (a cut
    /// timeline's `prev_batch`), oldest first, read backwards with `/rooms/{roomId}/messages`
    /// (at most [`GAP_PAGES`] pages). A failure is logged and ends the reading: what was
    /// read is returned.
    async fn between(
        &self,
        room: &OwnedRoomId,
        since: &str,
        until: &str,
    ) -> Vec<AnySyncTimelineEvent> {
        let mut found = Vec::new();
        let mut from = until.to_string();
        for _ in 0..GAP_PAGES {
            let mut request = get_message_events::v3::Request::backward(room.clone());
            request.from = Some(from);
            request.to = Some(since.to_string());
            request.limit = TIMELINE_LIMIT.into();
            let page = match self.call(request).await {
                Ok(page) => page,
                Err(e) => {
                    tracing::warn!(room = %room, "reading the messages a sync left out failed: {e}");
                    break;
                }
            };
            found.extend(
                page.chunk
                    .iter()
                    .filter_map(|raw| raw.deserialize_as::<AnySyncTimelineEvent>().ok()),
            );
            match page.end {
                Some(end) if !page.chunk.is_empty() => from = end,
                _ => break,
            }
        }
        found.reverse();
        found
    }

    /// How many members `room` has joined, as far as its member events told.
    fn joined_members(&self, room: &str) -> usize {
        self.members
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(room)
            .map_or(0, HashSet::len)
    }

    /// Remembers what a state event tells: a member's display name and whether they are in the
    /// room, a room's name.
    fn learn(&self, room: &str, event: &AnySyncStateEvent) {
        let mut names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        match event {
            AnySyncStateEvent::RoomMember(SyncStateEvent::Original(member)) => {
                if let Some(name) = member.content.displayname.clone() {
                    names.insert(member.state_key.to_string(), name);
                }
                let mut members = self.members.lock().unwrap_or_else(PoisonError::into_inner);
                let joined = members.entry(room.to_string()).or_default();
                if member.content.membership == MembershipState::Join {
                    joined.insert(member.state_key.to_string());
                } else {
                    joined.remove(member.state_key.as_str());
                }
            }
            AnySyncStateEvent::RoomName(SyncStateEvent::Original(name)) => {
                names.insert(room.to_string(), name.content.name.clone());
            }
            _ => {}
        }
    }
}

impl Poller for MatrixChannel {
    /// The last `next_batch` (none: the first sync).
    type Cursor = Option<String>;

    /// One `/sync` from `since`: the text messages in it and the next batch token. Invited
    /// rooms are joined (their messages come with a later sync).
    async fn poll(
        &self,
        since: Option<String>,
    ) -> Result<(Vec<Received>, Option<String>), ChannelError> {
        let known = self
            .me
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let me = match known {
            Some(me) => me,
            None => self.whoami().await?,
        };
        let mut request = sync::Request::new();
        let mut filter = FilterDefinition::default();
        filter.room.timeline.limit = Some(TIMELINE_LIMIT.into());
        request.filter = Some(sync::Filter::FilterDefinition(filter));
        request.timeout = since.as_ref().map(|_| self.long_poll);
        request.since = since.clone();
        let response = self.call(request).await?;
        for room in response.rooms.invite.into_keys() {
            if let Err(e) = self
                .call(join_room_by_id::v3::Request::new(room.clone()))
                .await
            {
                tracing::warn!(room = %room, "joining a room the bot was invited to failed: {e}");
            }
        }
        let mut out = Vec::new();
        for (room, joined) in response.rooms.join {
            let room_id = room.to_string();
            if let sync::State::Before(state) | sync::State::After(state) = &joined.state {
                for raw in &state.events {
                    if let Ok(event) = raw.deserialize() {
                        self.learn(&room_id, &event);
                    }
                }
            }
            let mut timeline: Vec<AnySyncTimelineEvent> = joined
                .timeline
                .events
                .iter()
                .filter_map(|raw| raw.deserialize().ok())
                .collect();
            // A cut timeline after `since`: what came between is fetched (a first sync hands
            // out recent messages only, by design).
            if let (true, Some(gap_end), Some(since)) =
                (joined.timeline.limited, &joined.timeline.prev_batch, &since)
            {
                let mut earlier = self.between(&room, since, gap_end).await;
                earlier.append(&mut timeline);
                timeline = earlier;
            }
            // Who is in the room after this batch (the bot's own join comes after the messages
            // that were waiting for it): the summary, which Synapse sends only to clients that
            // lazy-load members, or the member events seen.
            for event in &timeline {
                if let AnySyncTimelineEvent::State(state) = event {
                    self.learn(&room_id, state);
                }
            }
            let members = joined
                .summary
                .joined_member_count
                .and_then(|n| usize::try_from(u64::from(n)).ok())
                .unwrap_or_else(|| self.joined_members(&room_id));
            for event in timeline {
                match event {
                    AnySyncTimelineEvent::MessageLike(AnySyncMessageLikeEvent::RoomMessage(
                        SyncMessageLikeEvent::Original(message),
                    )) if message.sender != me => {
                        let MessageType::Text(text) = &message.content.msgtype else {
                            continue;
                        };
                        let sender = message.sender.to_string();
                        let sender_name = self
                            .name_of(&sender)
                            .unwrap_or_else(|| message.sender.localpart().to_string());
                        let room_name = self.name_of(&room_id);
                        let private = room_name.is_none() && members <= 2;
                        out.push(Received::Message(Incoming {
                            message_id: message.event_id.to_string(),
                            conversation: room_id.clone(),
                            conversation_name: room_name.unwrap_or_else(|| {
                                if private {
                                    sender_name.clone()
                                } else {
                                    format!("room {room_id}")
                                }
                            }),
                            sender,
                            sender_name,
                            text: text.body.clone(),
                            private,
                        }));
                    }
                    _ => {}
                }
            }
        }
        Ok((out, Some(response.next_batch)))
    }
}

#[async_trait]
impl Channel for MatrixChannel {
    fn platform(&self) -> ChannelPlatform {
        ChannelPlatform::Matrix
    }

    fn limit(&self) -> MessageLimit {
        MATRIX_LIMIT
    }

    async fn connect(&self) -> Result<BotIdentity, ChannelError> {
        let me = self.whoami().await?;
        Ok(BotIdentity {
            id: me.to_string(),
            name: me.to_string(),
            username: Some(me.localpart().to_string()),
        })
    }

    /// The first `/sync` of a stream has no `since`: it hands out the recent messages of the
    /// joined rooms again (the runtime's inbox ids make that harmless); later ones go on from
    /// the last `next_batch`, which acknowledges what was handed out before.
    fn receive(self: Arc<Self>) -> BoxStream<'static, Result<Received, ChannelError>> {
        stream_of(Polling::new(self))
    }

    async fn send_one(&self, conversation: &str, text: &str) -> Result<String, ChannelError> {
        self.send_content(conversation, &RoomMessageEventContent::text_plain(text))
            .await
    }

    fn upload_limit(&self) -> u64 {
        MATRIX_UPLOAD_LIMIT
    }

    async fn send_audio(
        &self,
        conversation: &str,
        audio: &AudioFile,
    ) -> Result<String, ChannelError> {
        check_size(PLATFORM, audio, MATRIX_UPLOAD_LIMIT)?;
        room_id(conversation)?;
        let mut upload = create_content::v3::Request::new(audio.bytes.clone());
        upload.filename = Some(audio.file_name.clone());
        upload.content_type = Some(audio.mime_type.clone());
        let uri = self
            .call(upload)
            .await
            .map_err(|e| e.with_size(audio.bytes.len() as u64))?
            .content_uri;
        let mut info = AudioInfo::new();
        info.mimetype = Some(audio.mime_type.clone());
        info.size = ruma::UInt::new(audio.bytes.len() as u64);
        info.duration = Some(Duration::from_millis(audio.duration_ms));
        let content = AudioMessageEventContent::plain(audio.file_name.clone(), uri)
            .info(Some(Box::new(info)));
        self.send_content(
            conversation,
            &RoomMessageEventContent::new(MessageType::Audio(content)),
        )
        .await
    }
}

fn room_id(conversation: &str) -> Result<OwnedRoomId, ChannelError> {
    OwnedRoomId::try_from(conversation).map_err(|_| ChannelError::Invalid {
        field: "conversation",
        message: format!("'{conversation}' is not a Matrix room id (!room:server)"),
    })
}

impl MatrixChannel {
    /// Sends one `m.room.message` event to room `conversation`; returns its event id.
    async fn send_content(
        &self,
        conversation: &str,
        content: &RoomMessageEventContent,
    ) -> Result<String, ChannelError> {
        let request = send_message_event::v3::Request::new(
            room_id(conversation)?,
            // Each attempt is a new transaction (a retry after a failure is a new message).
            OwnedTransactionId::from(uuid::Uuid::new_v4().simple().to_string()),
            content,
        )
        .map_err(|e| self.network("building the message", e))?;
        Ok(self.call(request).await?.event_id.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_homeserver_is_required_and_debug_never_shows_the_token() {
        assert!(matches!(
            MatrixChannel::new("syt_SECRET", None, 1),
            Err(ChannelError::Invalid {
                field: "base_url",
                ..
            })
        ));
        let account = MatrixChannel::new("syt_SECRET", Some("http://127.0.0.1:9"), 1);
        let shown = format!("{account:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
    }
}
