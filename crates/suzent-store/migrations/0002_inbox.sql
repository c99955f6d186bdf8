-- Suzent store, schema version 2: the durable agent inbox and sub-agent links.

-- Messages to agents (command completions, agent_send, sub-agent reports). `id` is chosen by the
-- sender, so a retried send is the same message. Statuses: pending -> processing (leased by one
-- dispatcher) -> delivered, or back to pending with a later next_attempt_at, or failed after
-- max_attempts; cancelled when withdrawn before delivery.
CREATE TABLE inbox (
    id               TEXT PRIMARY KEY NOT NULL,
    target           TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    sender           TEXT NOT NULL,
    kind             TEXT NOT NULL,
    body             TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'delivered', 'failed', 'cancelled')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL,
    next_attempt_at  TEXT NOT NULL,
    lease_owner      TEXT,
    lease_until      TEXT,
    last_error       TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    delivered_at     TEXT,
    CHECK ((status = 'processing') = (lease_owner IS NOT NULL))
);
CREATE INDEX inbox_due ON inbox (status, next_attempt_at);
CREATE INDEX inbox_by_target ON inbox (target, status);

-- Which inbox message became which transcript message: written in the same transaction as the
-- message, so a redelivery after a crash finds it and does not add (or run) it twice.
CREATE TABLE inbox_deliveries (
    message_id   TEXT PRIMARY KEY NOT NULL,
    chat_id      TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    created_at   TEXT NOT NULL
);

-- Sub-agents: the chat that delegated the task, the profile, the nesting depth.
CREATE TABLE agent_links (
    chat_id      TEXT PRIMARY KEY NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    parent_id    TEXT NOT NULL,
    kind         TEXT NOT NULL,
    profile      TEXT,
    depth        INTEGER NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX agent_links_by_parent ON agent_links (parent_id);
