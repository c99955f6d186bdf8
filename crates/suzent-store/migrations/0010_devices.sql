-- Suzent store, schema version 10: paired devices, the peer outbox and received peer messages.

-- Paired devices. `id` is the device's public key (the pinned key, base32): the only thing that
-- identifies it; nothing secret about a device is stored (its key is public, ours lives in the
-- OS keychain). `scope` is what the device may do here: send messages to our agents, also read
-- their transcripts and stop their turns, or nothing (paused). `state` revoked: we revoked it
-- (kept so a later connection is told "revoked"); revoked_by_peer: it revoked us.
CREATE TABLE devices (
    id           TEXT PRIMARY KEY NOT NULL,
    short_id     TEXT NOT NULL UNIQUE,
    name         TEXT NOT NULL,
    platform     TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    scope        TEXT NOT NULL CHECK (scope IN ('send', 'read', 'paused')),
    state        TEXT NOT NULL CHECK (state IN ('active', 'revoked', 'revoked_by_peer')),
    addrs        TEXT NOT NULL,
    relay        TEXT,
    inbox_chat   TEXT,
    remote_note  TEXT,
    paired_at    TEXT NOT NULL,
    last_seen    TEXT,
    updated_at   TEXT NOT NULL
);

-- Messages to agents on paired devices. `id` is the message id the receiver deduplicates by
-- (with our device id). queued -> sending (leased by one process) -> delivered (the receiver
-- stored it) -> read (its agent took it), or failed with `reason`; a transport failure puts a
-- sending message back to queued after a capped backoff. Sent in `seq` order per device, one
-- at a time.
CREATE TABLE peer_outbox (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT NOT NULL UNIQUE,
    device_id        TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    target           TEXT,
    sender           TEXT NOT NULL,
    body             TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('queued', 'sending', 'delivered', 'read', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT NOT NULL,
    lease_owner      TEXT,
    lease_until      TEXT,
    last_error       TEXT,
    reason           TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    delivered_at     TEXT,
    read_at          TEXT,
    CHECK ((status = 'sending') = (lease_owner IS NOT NULL))
);
CREATE INDEX peer_outbox_by_device ON peer_outbox (device_id, status, seq);

-- Messages received from paired devices: which inbox message each became (the inbox id is
-- `peer:<device id>:<message id>`, so the inbox's idempotency is per sender), and whether the
-- sender was told what became of it.
CREATE TABLE peer_received (
    inbox_id     TEXT PRIMARY KEY NOT NULL,
    device_id    TEXT NOT NULL,
    message_id   TEXT NOT NULL,
    received_at  TEXT NOT NULL,
    reported     TEXT CHECK (reported IN ('read', 'failed')),
    reported_at  TEXT,
    UNIQUE (device_id, message_id)
);
