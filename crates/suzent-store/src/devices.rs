//! Paired devices, the peer outbox and received peer messages.
//!
//! The outbox is the inbox's machinery pointed the other way: sender-chosen idempotent ids (the
//! same id with the same content is the same message, with other content a
//! [`StoreError::Conflict`]), leases so one process sends a message at a time and a crashed
//! sender's message is taken up again, and retries after [`crate::backoff`] (capped at
//! [`crate::MAX_BACKOFF`]). Unlike the inbox, an unreachable device never uses up a message:
//! it stays queued until it is delivered, refused, revoked or older than the retention the
//! caller expires it after. Messages to one device go in order, one at a time.

use crate::error::DbContext;
use crate::inbox::delta;
use crate::{InboxStatus, Store, StoreError, decode_json, encode_json, parse_name, parse_ts, ts};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use std::time::Duration;

macro_rules! names {
    ($ty:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// The stored name.
            pub fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $name),+ }
            }
        }
        impl std::str::FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($name => Ok($ty::$variant),)+
                    other => Err(format!(concat!("unknown ", stringify!($ty), " '{}'"), other)),
                }
            }
        }
    };
}

/// What a paired device may do on this device.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceScope {
    /// Send messages to this device's agents (and list them).
    Send,
    /// Also read their transcripts and stop their turns.
    Read,
    /// Nothing: its requests are refused with the reason.
    Paused,
}
names!(DeviceScope { Send => "send", Read => "read", Paused => "paused" });

/// Where a pairing is.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceState {
    /// Paired.
    Active,
    /// Revoked here; the device is told so if it connects again.
    Revoked,
    /// The device revoked its pairing with this one.
    RevokedByPeer,
}
names!(DeviceState { Active => "active", Revoked => "revoked", RevokedByPeer => "revoked_by_peer" });

/// A device to store after pairing (replacing an earlier pairing of the same key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDevice {
    /// The pinned key (full device id).
    pub id: String,
    /// Its short id (`peer:<short>`).
    pub short_id: String,
    /// Its name.
    pub name: String,
    /// Its platform.
    pub platform: String,
    /// Its key fingerprint.
    pub fingerprint: String,
    /// Its direct addresses (`ip:port`).
    pub addrs: Vec<String>,
    /// Its relay URL.
    pub relay: Option<String>,
}

/// A stored pairing.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceRecord {
    /// The pinned key (full device id).
    pub id: String,
    /// The short id used in `peer:<short>`.
    pub short_id: String,
    /// Name (as the device called itself, or as the user renamed it).
    pub name: String,
    /// Platform.
    pub platform: String,
    /// Key fingerprint.
    pub fingerprint: String,
    /// What it may do here.
    pub scope: DeviceScope,
    /// Pairing state.
    pub state: DeviceState,
    /// Direct addresses last known.
    pub addrs: Vec<String>,
    /// Relay URL last known.
    pub relay: Option<String>,
    /// The chat that receives its messages (once one came).
    pub inbox_chat: Option<String>,
    /// What the device last said about this one (e.g. that it paused it).
    pub remote_note: Option<String>,
    /// When it was paired.
    pub paired_at: DateTime<Utc>,
    /// When a connection with it was last up.
    pub last_seen: Option<DateTime<Utc>>,
}

/// Where a message to a paired device is.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerMessageStatus {
    /// Waiting to be sent (maybe until `nextAttemptAt`).
    Queued,
    /// Being sent by one process.
    Sending,
    /// Stored by the receiving device.
    Delivered,
    /// Taken by the receiving agent.
    Read,
    /// Not delivered, or failed on the receiver: see `reason`.
    Failed,
}
names!(PeerMessageStatus {
    Queued => "queued", Sending => "sending", Delivered => "delivered", Read => "read", Failed => "failed"
});

impl PeerMessageStatus {
    /// Whether nothing more happens to the message.
    pub fn is_final(self) -> bool {
        matches!(self, PeerMessageStatus::Read | PeerMessageStatus::Failed)
    }
}

/// A message to queue for a paired device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPeerMessage {
    /// Message id (sent to the device, which deduplicates by our device and this id).
    pub id: String,
    /// The device's full id.
    pub device_id: String,
    /// The agent there (a chat id), or none for the chat that receives our messages.
    pub target: Option<String>,
    /// The sending chat.
    pub sender: String,
    /// The text.
    pub text: String,
}

/// A message in the peer outbox.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PeerMessage {
    /// Order of queueing.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub seq: i64,
    /// Message id.
    pub id: String,
    /// The device's full id.
    pub device_id: String,
    /// The agent there.
    pub target: Option<String>,
    /// The sending chat.
    pub sender: String,
    /// The text.
    pub text: String,
    /// Status.
    pub status: PeerMessageStatus,
    /// Send attempts started.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub attempts: i64,
    /// Not sent again before this time.
    pub next_attempt_at: DateTime<Utc>,
    /// The last transport error (while it waits for a retry).
    pub last_error: Option<String>,
    /// Why it failed, or the receiver's note on it.
    pub reason: Option<String>,
    /// Queued at.
    pub created_at: DateTime<Utc>,
    /// Stored by the receiver at.
    pub delivered_at: Option<DateTime<Utc>>,
    /// Read by the receiving agent at.
    pub read_at: Option<DateTime<Utc>>,
}

/// A received peer message whose fate the sender was not told yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreportedPeerMessage {
    /// The inbox message.
    pub inbox_id: String,
    /// The sending device.
    pub device_id: String,
    /// The sender's message id.
    pub message_id: String,
    /// The chat it went to.
    pub chat_id: String,
    /// The inbox status (delivered or failed).
    pub status: InboxStatus,
    /// The inbox's last error (when failed).
    pub last_error: Option<String>,
}

const DEVICE_COLUMNS: &str = "id, short_id, name, platform, fingerprint, scope, state, addrs, relay, \
    inbox_chat, remote_note, paired_at, last_seen";

fn row_to_device(row: &SqliteRow) -> Result<DeviceRecord, StoreError> {
    let read = || "reading a device".to_string();
    let id: String = row.try_get("id").db(read)?;
    let what = |col: &str| format!("devices row '{id}' ({col})");
    let scope: String = row.try_get("scope").db(read)?;
    let state: String = row.try_get("state").db(read)?;
    let addrs: String = row.try_get("addrs").db(read)?;
    let paired: String = row.try_get("paired_at").db(read)?;
    let seen: Option<String> = row.try_get("last_seen").db(read)?;
    Ok(DeviceRecord {
        short_id: row.try_get("short_id").db(read)?,
        name: row.try_get("name").db(read)?,
        platform: row.try_get("platform").db(read)?,
        fingerprint: row.try_get("fingerprint").db(read)?,
        scope: parse_name(&scope, || what("scope"))?,
        state: parse_name(&state, || what("state"))?,
        addrs: decode_json(&addrs, || what("addrs"))?,
        relay: row.try_get("relay").db(read)?,
        inbox_chat: row.try_get("inbox_chat").db(read)?,
        remote_note: row.try_get("remote_note").db(read)?,
        paired_at: parse_ts(&paired, || what("paired_at"))?,
        last_seen: seen
            .map(|t| parse_ts(&t, || what("last_seen")))
            .transpose()?,
        id,
    })
}

const MESSAGE_COLUMNS: &str = "seq, id, device_id, target, sender, body, status, attempts, \
    next_attempt_at, last_error, reason, created_at, delivered_at, read_at";

#[derive(Serialize, Deserialize)]
struct Body {
    text: String,
}

fn row_to_message(row: &SqliteRow) -> Result<PeerMessage, StoreError> {
    let read = || "reading a peer message".to_string();
    let id: String = row.try_get("id").db(read)?;
    let what = |col: &str| format!("peer_outbox row '{id}' ({col})");
    let body: String = row.try_get("body").db(read)?;
    let body: Body = decode_json(&body, || what("body"))?;
    let status: String = row.try_get("status").db(read)?;
    let opt = |col: &str| -> Result<Option<DateTime<Utc>>, StoreError> {
        let v: Option<String> = row.try_get(col).db(read)?;
        v.map(|t| parse_ts(&t, || what(col))).transpose()
    };
    let next: String = row.try_get("next_attempt_at").db(read)?;
    let created: String = row.try_get("created_at").db(read)?;
    Ok(PeerMessage {
        seq: row.try_get("seq").db(read)?,
        device_id: row.try_get("device_id").db(read)?,
        target: row.try_get("target").db(read)?,
        sender: row.try_get("sender").db(read)?,
        text: body.text,
        status: parse_name(&status, || what("status"))?,
        attempts: row.try_get("attempts").db(read)?,
        next_attempt_at: parse_ts(&next, || what("next_attempt_at"))?,
        last_error: row.try_get("last_error").db(read)?,
        reason: row.try_get("reason").db(read)?,
        created_at: parse_ts(&created, || what("created_at"))?,
        delivered_at: opt("delivered_at")?,
        read_at: opt("read_at")?,
        id,
    })
}

impl Store {
    /// Stores a confirmed pairing. Pairing a known key again replaces the old pairing (active
    /// again, scope `send`, name and addresses from now).
    ///
    /// Errors: [`StoreError::Conflict`] when another device has the same short id,
    /// [`StoreError::Database`].
    pub async fn pair_device(&self, new: &NewDevice) -> Result<DeviceRecord, StoreError> {
        let context = || format!("storing the pairing with device '{}'", new.short_id);
        let addrs = encode_json(&new.addrs, || {
            format!("device '{}' addresses", new.short_id)
        })?;
        let now = ts(&self.now());
        let mut tx = self.begin_write(context).await?;
        let clash: Option<String> =
            sqlx::query_scalar("SELECT id FROM devices WHERE short_id = ? AND id <> ?")
                .bind(&new.short_id)
                .bind(&new.id)
                .fetch_optional(&mut *tx)
                .await
                .db(context)?;
        if clash.is_some() {
            return Err(StoreError::Conflict {
                message: format!(
                    "another paired device already has the short id '{}'",
                    new.short_id
                ),
            });
        }
        sqlx::query(
            "INSERT INTO devices (id, short_id, name, platform, fingerprint, scope, state, addrs,
                                  relay, paired_at, last_seen, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 'send', 'active', ?6, ?7, ?8, ?8, ?8)
             ON CONFLICT (id) DO UPDATE SET name = ?3, platform = ?4, fingerprint = ?5,
                 scope = 'send', state = 'active', addrs = ?6, relay = ?7, remote_note = NULL,
                 paired_at = ?8, last_seen = ?8, updated_at = ?8",
        )
        .bind(&new.id)
        .bind(&new.short_id)
        .bind(&new.name)
        .bind(&new.platform)
        .bind(&new.fingerprint)
        .bind(&addrs)
        .bind(&new.relay)
        .bind(&now)
        .execute(&mut *tx)
        .await
        .db(context)?;
        let row = sqlx::query(&format!(
            "SELECT {DEVICE_COLUMNS} FROM devices WHERE id = ?"
        ))
        .bind(&new.id)
        .fetch_one(&mut *tx)
        .await
        .db(context)?;
        let device = row_to_device(&row)?;
        tx.commit().await.db(context)?;
        Ok(device)
    }

    /// Every pairing, oldest first.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn devices(&self) -> Result<Vec<DeviceRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {DEVICE_COLUMNS} FROM devices ORDER BY paired_at, id"
        ))
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing paired devices".to_string())?;
        rows.iter().map(row_to_device).collect()
    }

    /// One pairing, by full id or short id.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn device(&self, id_or_short: &str) -> Result<Option<DeviceRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {DEVICE_COLUMNS} FROM devices WHERE id = ?1 OR short_id = ?1"
        ))
        .bind(id_or_short)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading device '{id_or_short}'"))?;
        row.as_ref().map(row_to_device).transpose()
    }

    async fn update_device(
        &self,
        id: &str,
        set: &str,
        bind: Vec<Option<String>>,
    ) -> Result<DeviceRecord, StoreError> {
        let context = || format!("updating device '{id}'");
        let mut tx = self.begin_write(context).await?;
        let sql = format!("UPDATE devices SET {set}, updated_at = ? WHERE id = ?");
        let mut q = sqlx::query(&sql);
        for value in bind {
            q = q.bind(value);
        }
        let done = q
            .bind(ts(&self.now()))
            .bind(id)
            .execute(&mut *tx)
            .await
            .db(context)?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound {
                what: "device",
                id: id.to_string(),
            });
        }
        let row = sqlx::query(&format!(
            "SELECT {DEVICE_COLUMNS} FROM devices WHERE id = ?"
        ))
        .bind(id)
        .fetch_one(&mut *tx)
        .await
        .db(context)?;
        let device = row_to_device(&row)?;
        tx.commit().await.db(context)?;
        Ok(device)
    }

    /// Sets what a device may do here.
    ///
    /// Errors: [`StoreError::NotFound`], [`StoreError::Database`].
    pub async fn set_device_scope(
        &self,
        id: &str,
        scope: DeviceScope,
    ) -> Result<DeviceRecord, StoreError> {
        self.update_device(id, "scope = ?", vec![Some(scope.as_str().into())])
            .await
    }

    /// Renames a device.
    ///
    /// Errors: [`StoreError::NotFound`], [`StoreError::Database`].
    pub async fn rename_device(&self, id: &str, name: &str) -> Result<DeviceRecord, StoreError> {
        self.update_device(id, "name = ?", vec![Some(name.into())])
            .await
    }

    /// Sets a pairing's state and the note that explains it.
    ///
    /// Errors: [`StoreError::NotFound`], [`StoreError::Database`].
    pub async fn set_device_state(
        &self,
        id: &str,
        state: DeviceState,
        note: Option<&str>,
    ) -> Result<DeviceRecord, StoreError> {
        self.update_device(
            id,
            "state = ?, remote_note = ?",
            vec![Some(state.as_str().into()), note.map(str::to_string)],
        )
        .await
    }

    /// Records what a device said about this one (e.g. that it paused it), or clears it.
    ///
    /// Errors: [`StoreError::NotFound`], [`StoreError::Database`].
    pub async fn set_device_note(
        &self,
        id: &str,
        note: Option<&str>,
    ) -> Result<DeviceRecord, StoreError> {
        self.update_device(id, "remote_note = ?", vec![note.map(str::to_string)])
            .await
    }

    /// Records that a connection with the device is up now, with the addresses it reported.
    ///
    /// Errors: [`StoreError::NotFound`], [`StoreError::Database`].
    pub async fn device_seen(
        &self,
        id: &str,
        addrs: Option<&[String]>,
    ) -> Result<DeviceRecord, StoreError> {
        let now = ts(&self.now());
        match addrs {
            Some(a) => {
                let addrs = encode_json(&a, || format!("device '{id}' addresses"))?;
                self.update_device(id, "last_seen = ?, addrs = ?", vec![Some(now), Some(addrs)])
                    .await
            }
            None => {
                self.update_device(id, "last_seen = ?", vec![Some(now)])
                    .await
            }
        }
    }

    /// Sets the chat that receives a device's messages.
    ///
    /// Errors: [`StoreError::NotFound`], [`StoreError::Database`].
    pub async fn set_device_inbox_chat(
        &self,
        id: &str,
        chat_id: &str,
    ) -> Result<DeviceRecord, StoreError> {
        self.update_device(id, "inbox_chat = ?", vec![Some(chat_id.into())])
            .await
    }

    /// Queues a message for a paired device. The same id with the same device, target, sender
    /// and text returns the stored message; with other content it is a [`StoreError::Conflict`].
    ///
    /// Errors: [`StoreError::NotFound`] for an unknown device, [`StoreError::Conflict`],
    /// [`StoreError::Database`].
    pub async fn queue_peer_message(
        &self,
        new: &NewPeerMessage,
    ) -> Result<PeerMessage, StoreError> {
        let context = || format!("queueing peer message '{}'", new.id);
        let body = encode_json(
            &Body {
                text: new.text.clone(),
            },
            || format!("peer message '{}'", new.id),
        )?;
        let mut tx = self.begin_write(context).await?;
        let existing = sqlx::query(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM peer_outbox WHERE id = ?"
        ))
        .bind(&new.id)
        .fetch_optional(&mut *tx)
        .await
        .db(context)?;
        if let Some(row) = existing {
            let stored = row_to_message(&row)?;
            tx.commit().await.db(context)?;
            if stored.device_id == new.device_id
                && stored.target == new.target
                && stored.sender == new.sender
                && stored.text == new.text
            {
                return Ok(stored);
            }
            return Err(StoreError::Conflict {
                message: format!(
                    "peer message id '{}' is already used for a different message",
                    new.id
                ),
            });
        }
        let known: Option<i64> = sqlx::query_scalar("SELECT 1 FROM devices WHERE id = ?")
            .bind(&new.device_id)
            .fetch_optional(&mut *tx)
            .await
            .db(context)?;
        if known.is_none() {
            return Err(StoreError::NotFound {
                what: "device",
                id: new.device_id.clone(),
            });
        }
        let now = ts(&self.now());
        sqlx::query(
            "INSERT INTO peer_outbox (id, device_id, target, sender, body, status, attempts,
                                      next_attempt_at, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?)",
        )
        .bind(&new.id)
        .bind(&new.device_id)
        .bind(&new.target)
        .bind(&new.sender)
        .bind(body)
        .bind(&now)
        .bind(&now)
        .bind(&now)
        .execute(&mut *tx)
        .await
        .db(context)?;
        let row = sqlx::query(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM peer_outbox WHERE id = ?"
        ))
        .bind(&new.id)
        .fetch_one(&mut *tx)
        .await
        .db(context)?;
        let message = row_to_message(&row)?;
        tx.commit().await.db(context)?;
        Ok(message)
    }

    /// One outbox message.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn peer_message(&self, id: &str) -> Result<Option<PeerMessage>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM peer_outbox WHERE id = ?"
        ))
        .bind(id)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading peer message '{id}'"))?;
        row.as_ref().map(row_to_message).transpose()
    }

    /// Outbox messages (to one device, or all), oldest first.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn peer_outbox(
        &self,
        device_id: Option<&str>,
    ) -> Result<Vec<PeerMessage>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM peer_outbox WHERE (?1 IS NULL OR device_id = ?1) ORDER BY seq"
        ))
        .bind(device_id)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing the peer outbox".to_string())?;
        rows.iter().map(row_to_message).collect()
    }

    /// Leases the next message to send for `lease` to `owner`, counting an attempt: for each
    /// active device only its oldest unsent message (order is kept), when due (queued and its
    /// retry time came, or sending under an expired lease). `skip_devices` are left out (a send
    /// to them is in flight here).
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn claim_peer_message(
        &self,
        owner: &str,
        lease: Duration,
        skip_devices: &[String],
    ) -> Result<Option<PeerMessage>, StoreError> {
        let context = || "claiming a peer message".to_string();
        let now = self.now();
        let now_s = ts(&now);
        let skip = serde_json::to_string(skip_devices).unwrap_or_else(|_| "[]".into());
        let mut tx = self.begin_write(context).await?;
        let id: Option<String> = sqlx::query_scalar(
            "SELECT m.id FROM peer_outbox m JOIN devices d ON d.id = m.device_id
             WHERE d.state = 'active'
               AND m.device_id NOT IN (SELECT value FROM json_each(?2))
               AND m.seq = (SELECT MIN(o.seq) FROM peer_outbox o
                            WHERE o.device_id = m.device_id AND o.status IN ('queued', 'sending'))
               AND ((m.status = 'queued' AND m.next_attempt_at <= ?1)
                    OR (m.status = 'sending' AND m.lease_until <= ?1))
             ORDER BY m.seq LIMIT 1",
        )
        .bind(&now_s)
        .bind(&skip)
        .fetch_optional(&mut *tx)
        .await
        .db(context)?;
        let Some(id) = id else {
            tx.commit().await.db(context)?;
            return Ok(None);
        };
        sqlx::query(
            "UPDATE peer_outbox SET status = 'sending', attempts = attempts + 1, lease_owner = ?,
                                    lease_until = ?, updated_at = ?
             WHERE id = ?",
        )
        .bind(owner)
        .bind(ts(&(now + delta(lease))))
        .bind(&now_s)
        .bind(&id)
        .execute(&mut *tx)
        .await
        .db(context)?;
        let row = sqlx::query(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM peer_outbox WHERE id = ?"
        ))
        .bind(&id)
        .fetch_one(&mut *tx)
        .await
        .db(context)?;
        let message = row_to_message(&row)?;
        tx.commit().await.db(context)?;
        Ok(Some(message))
    }

    /// Marks `owner`'s leased message delivered (the device stored it). `false` when the lease
    /// is no longer theirs.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn peer_message_delivered(&self, id: &str, owner: &str) -> Result<bool, StoreError> {
        let now = ts(&self.now());
        let done = sqlx::query(
            "UPDATE peer_outbox SET status = 'delivered', lease_owner = NULL, lease_until = NULL,
                                    last_error = NULL, delivered_at = ?, updated_at = ?
             WHERE id = ? AND status = 'sending' AND lease_owner = ?",
        )
        .bind(&now)
        .bind(&now)
        .bind(id)
        .bind(owner)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("marking peer message '{id}' delivered"))?;
        Ok(done.rows_affected() == 1)
    }

    /// Puts `owner`'s leased message back in the queue after a transport error: due again after
    /// [`crate::backoff`]`(attempts)`. `false` when the lease is no longer theirs.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn peer_message_retry(
        &self,
        id: &str,
        owner: &str,
        error: &str,
    ) -> Result<bool, StoreError> {
        let context = || format!("scheduling a retry of peer message '{id}'");
        let now = self.now();
        let mut tx = self.begin_write(context).await?;
        let attempts: Option<i64> = sqlx::query_scalar(
            "SELECT attempts FROM peer_outbox WHERE id = ? AND status = 'sending' AND lease_owner = ?",
        )
        .bind(id)
        .bind(owner)
        .fetch_optional(&mut *tx)
        .await
        .db(context)?;
        let Some(attempts) = attempts else {
            tx.commit().await.db(context)?;
            return Ok(false);
        };
        sqlx::query(
            "UPDATE peer_outbox SET status = 'queued', lease_owner = NULL, lease_until = NULL,
                                    next_attempt_at = ?, last_error = ?, updated_at = ?
             WHERE id = ?",
        )
        .bind(ts(&(now + delta(crate::backoff(attempts)))))
        .bind(error)
        .bind(ts(&now))
        .bind(id)
        .execute(&mut *tx)
        .await
        .db(context)?;
        tx.commit().await.db(context)?;
        Ok(true)
    }

    /// Marks a message failed with `reason`: `owner`'s leased message, or (owner `None`) a
    /// queued or sending one whoever holds it. `false` when it is in neither state.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn peer_message_failed(
        &self,
        id: &str,
        owner: Option<&str>,
        reason: &str,
    ) -> Result<bool, StoreError> {
        let now = ts(&self.now());
        let done = sqlx::query(
            "UPDATE peer_outbox SET status = 'failed', lease_owner = NULL, lease_until = NULL,
                                    reason = ?, updated_at = ?
             WHERE id = ? AND status IN ('queued', 'sending')
               AND (?4 IS NULL OR (status = 'sending' AND lease_owner = ?4))",
        )
        .bind(reason)
        .bind(&now)
        .bind(id)
        .bind(owner)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("marking peer message '{id}' failed"))?;
        Ok(done.rows_affected() == 1)
    }

    /// Fails every unsent message to a device with `reason` (it revoked us, or we revoked it).
    /// Returns how many.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn fail_device_messages(
        &self,
        device_id: &str,
        reason: &str,
    ) -> Result<u64, StoreError> {
        let now = ts(&self.now());
        let done = sqlx::query(
            "UPDATE peer_outbox SET status = 'failed', lease_owner = NULL, lease_until = NULL,
                                    reason = ?, updated_at = ?
             WHERE device_id = ? AND status IN ('queued', 'sending')",
        )
        .bind(reason)
        .bind(&now)
        .bind(device_id)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("failing the messages to device '{device_id}'"))?;
        Ok(done.rows_affected())
    }

    /// Makes a device's queued messages due now (a connection to it just came up).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn wake_device_messages(&self, device_id: &str) -> Result<u64, StoreError> {
        let now = ts(&self.now());
        let done = sqlx::query(
            "UPDATE peer_outbox SET next_attempt_at = ?1, updated_at = ?1
             WHERE device_id = ?2 AND status = 'queued' AND next_attempt_at > ?1",
        )
        .bind(&now)
        .bind(device_id)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("waking the messages to device '{device_id}'"))?;
        Ok(done.rows_affected())
    }

    /// Records what the receiving device said became of a delivered message: read, or failed
    /// (with its note). Only for messages to that device. `false` when the message is unknown,
    /// to another device, or already final.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn peer_message_outcome(
        &self,
        device_id: &str,
        id: &str,
        status: PeerMessageStatus,
        note: Option<&str>,
    ) -> Result<bool, StoreError> {
        if !status.is_final() {
            return Ok(false);
        }
        let now = ts(&self.now());
        let done = sqlx::query(
            "UPDATE peer_outbox SET status = ?1, lease_owner = NULL, lease_until = NULL,
                                    reason = ?2, read_at = CASE WHEN ?1 = 'read' THEN ?3 ELSE read_at END,
                                    delivered_at = COALESCE(delivered_at, ?3), updated_at = ?3
             WHERE id = ?4 AND device_id = ?5 AND status IN ('queued', 'sending', 'delivered')",
        )
        .bind(status.as_str())
        .bind(note)
        .bind(&now)
        .bind(id)
        .bind(device_id)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("recording the outcome of peer message '{id}'"))?;
        Ok(done.rows_affected() == 1)
    }

    /// Fails unsent messages queued before `before` with `reason` (retention). Returns how many.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn expire_peer_messages(
        &self,
        before: DateTime<Utc>,
        reason: &str,
    ) -> Result<u64, StoreError> {
        let now = ts(&self.now());
        let done = sqlx::query(
            "UPDATE peer_outbox SET status = 'failed', lease_owner = NULL, lease_until = NULL,
                                    reason = ?, updated_at = ?
             WHERE status = 'queued' AND created_at < ?",
        )
        .bind(reason)
        .bind(&now)
        .bind(ts(&before))
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| "expiring old peer messages".to_string())?;
        Ok(done.rows_affected())
    }

    /// The earliest time a queued message to an active device becomes due or a lease expires.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn next_peer_wakeup(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        let next: Option<String> = sqlx::query_scalar(
            "SELECT MIN(CASE WHEN m.status = 'queued' THEN m.next_attempt_at ELSE m.lease_until END)
             FROM peer_outbox m JOIN devices d ON d.id = m.device_id
             WHERE d.state = 'active' AND m.status IN ('queued', 'sending')",
        )
        .fetch_one(&mut *self.read_conn().await?)
        .await
        .db(|| "reading the next peer outbox wake-up".to_string())?;
        next.map(|t| parse_ts(&t, || "peer_outbox (next wake-up)".to_string()))
            .transpose()
    }

    /// Records that inbox message `inbox_id` came from `device_id` as its `message_id`.
    /// Recording it again does nothing.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn record_peer_received(
        &self,
        inbox_id: &str,
        device_id: &str,
        message_id: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT OR IGNORE INTO peer_received (inbox_id, device_id, message_id, received_at)
             VALUES (?, ?, ?, ?)",
        )
        .bind(inbox_id)
        .bind(device_id)
        .bind(message_id)
        .bind(ts(&self.now()))
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("recording peer message '{message_id}' from '{device_id}'"))?;
        Ok(())
    }

    /// Received peer messages that the inbox finished (delivered into the transcript and run,
    /// or failed) and whose senders were not told yet, oldest first.
    ///
    /// Errors: [`StoreError::Database`], [`StoreError::Corrupt`].
    pub async fn unreported_peer_messages(&self) -> Result<Vec<UnreportedPeerMessage>, StoreError> {
        let rows = sqlx::query(
            "SELECT r.inbox_id, r.device_id, r.message_id, i.target, i.status, i.last_error
             FROM peer_received r JOIN inbox i ON i.id = r.inbox_id
             WHERE r.reported IS NULL AND i.status IN ('delivered', 'failed')
             ORDER BY r.received_at",
        )
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing unreported peer messages".to_string())?;
        rows.iter()
            .map(|row| {
                let read = || "reading an unreported peer message".to_string();
                let status: String = row.try_get("status").db(read)?;
                Ok(UnreportedPeerMessage {
                    inbox_id: row.try_get("inbox_id").db(read)?,
                    device_id: row.try_get("device_id").db(read)?,
                    message_id: row.try_get("message_id").db(read)?,
                    chat_id: row.try_get("target").db(read)?,
                    status: parse_name(&status, || "inbox (status)".to_string())?,
                    last_error: row.try_get("last_error").db(read)?,
                })
            })
            .collect()
    }

    /// Records that the sender of a received message was told its outcome.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn peer_received_reported(
        &self,
        inbox_id: &str,
        outcome: PeerMessageStatus,
    ) -> Result<(), StoreError> {
        let now = ts(&self.now());
        sqlx::query(
            "UPDATE peer_received SET reported = ?, reported_at = ? WHERE inbox_id = ? AND reported IS NULL",
        )
        .bind(outcome.as_str())
        .bind(&now)
        .bind(inbox_id)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("recording the report of inbox message '{inbox_id}'"))?;
        Ok(())
    }

    /// The transcript seq at which an inbox message was written into its chat.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn inbox_delivery_seq(&self, message_id: &str) -> Result<Option<i64>, StoreError> {
        sqlx::query_scalar("SELECT seq FROM inbox_deliveries WHERE message_id = ?")
            .bind(message_id)
            .fetch_optional(&mut *self.read_conn().await?)
            .await
            .db(|| format!("reading the delivery of inbox message '{message_id}'"))
    }
}
