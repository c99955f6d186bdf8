-- What the transcript alone does not say and the app shows again after a restart (issue 19,
-- "durations and states kept after restart"): per tool call the engine's decision, the chat's
-- permission mode then, the user's answer and the tool's wall time; per run that stopped short
-- of an answer, its message and outcome, placed after the chat's message `after_seq`.
CREATE TABLE tool_call_notes (
    tool_call_id  TEXT PRIMARY KEY NOT NULL,
    chat_id       TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    decision      TEXT,                     -- JSON PermissionDecision
    mode          TEXT,                     -- JSON PermissionMode at the decision
    resolution    TEXT,                     -- JSON ToolResolutionNote
    duration_ms   INTEGER,
    updated_at    TEXT NOT NULL
);
CREATE INDEX tool_call_notes_by_chat ON tool_call_notes (chat_id);

CREATE TABLE turn_failures (
    run_id        TEXT PRIMARY KEY NOT NULL,
    chat_id       TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    message       TEXT NOT NULL,
    outcome       TEXT,                     -- JSON RunOutcome once the run finished
    after_seq     INTEGER NOT NULL,         -- the chat's last message seq when it failed (0: none)
    created_at    TEXT NOT NULL
);
CREATE INDEX turn_failures_by_chat ON turn_failures (chat_id, after_seq);

-- Per run, the tokens its model steps used as the providers reported them, and their list
-- price (NULL once a step's model had no price in the table).
CREATE TABLE turn_usage (
    run_id        TEXT PRIMARY KEY NOT NULL,
    chat_id       TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    model         TEXT NOT NULL,            -- the model of the last step
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd      REAL,
    steps         INTEGER NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX turn_usage_by_chat ON turn_usage (chat_id);
