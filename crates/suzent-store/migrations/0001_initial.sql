-- Suzent store, schema version 1.
-- Timestamps are RFC 3339 UTC text with nine fractional digits (sortable as text).
-- JSON columns are TEXT written by serde_json.

CREATE TABLE chats (
    id          TEXT PRIMARY KEY NOT NULL,
    title       TEXT NOT NULL,
    workspace   TEXT NOT NULL,
    model       TEXT,
    mode        TEXT NOT NULL CHECK (mode IN ('default', 'auto', 'full_access')),
    tools       TEXT,                       -- JSON array of tool ids, NULL = the default selection
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX chats_by_updated ON chats (updated_at DESC);

CREATE TABLE messages (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    chat_id       TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    run_id        TEXT,
    role          TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    tool_call_id  TEXT,                     -- set for role = 'tool' only
    body          TEXT NOT NULL,            -- JSON ChatMessage
    created_at    TEXT NOT NULL,
    UNIQUE (chat_id, seq),
    CHECK ((role = 'tool') = (tool_call_id IS NOT NULL))
);
-- At most one result per tool call in a chat: a duplicate result cannot be stored.
CREATE UNIQUE INDEX messages_one_result_per_call ON messages (chat_id, tool_call_id) WHERE role = 'tool';

CREATE TABLE tool_steps (
    tool_call_id  TEXT PRIMARY KEY NOT NULL,
    chat_id       TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    tool_name     TEXT NOT NULL,
    args          TEXT,                     -- raw argument text; NULL when the step was never begun
    status        TEXT NOT NULL CHECK (status IN ('running', 'done')),
    started_at    TEXT NOT NULL,
    finished_at   TEXT
);
CREATE INDEX tool_steps_by_chat ON tool_steps (chat_id);

CREATE TABLE approvals (
    id            TEXT PRIMARY KEY NOT NULL,
    chat_id       TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    run_id        TEXT NOT NULL,
    tool_call_id  TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    args          TEXT NOT NULL,            -- JSON
    decision      TEXT NOT NULL,            -- JSON PermissionDecision
    status        TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'resolved')),
    action        TEXT CHECK (action IS NULL OR action IN ('allow_once', 'allow_session', 'allow_global', 'reject')),
    feedback      TEXT,
    created_at    TEXT NOT NULL,
    resolved_at   TEXT
);
CREATE INDEX approvals_by_status ON approvals (status, created_at);
CREATE INDEX approvals_by_chat ON approvals (chat_id);

CREATE TABLE rules (
    id           TEXT PRIMARY KEY NOT NULL,
    chat_id      TEXT REFERENCES chats (id) ON DELETE CASCADE,
    destination  TEXT NOT NULL CHECK (destination IN ('session', 'global')),
    tool         TEXT NOT NULL,
    behavior     TEXT NOT NULL CHECK (behavior IN ('allow', 'ask', 'deny')),
    matcher      TEXT NOT NULL,             -- JSON RuleMatcher
    description  TEXT,
    created_at   TEXT NOT NULL,
    CHECK ((destination = 'session') = (chat_id IS NOT NULL))
);
CREATE INDEX rules_by_chat ON rules (chat_id);

CREATE TABLE settings (
    key         TEXT PRIMARY KEY NOT NULL,
    value       TEXT NOT NULL,              -- JSON
    updated_at  TEXT NOT NULL
);
