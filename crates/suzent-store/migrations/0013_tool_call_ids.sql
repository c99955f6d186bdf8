-- Tool-call step ids (issue 13 item 1): a provider's tool-call id is not a key (two chats, two
-- turns or two calls of one response may carry the same `call_0`, or an empty one). Each call of
-- a model step claims its id here before the step is stored; an id already claimed (by any chat)
-- is replaced with a fresh one, so tool_steps and approvals, keyed by it, never mix two calls.
CREATE TABLE tool_call_ids (
    id          TEXT PRIMARY KEY NOT NULL,
    chat_id     TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    claimed_at  TEXT NOT NULL
);
CREATE INDEX tool_call_ids_by_chat ON tool_call_ids (chat_id);

-- The ids already in use: every call of a stored model step, every step and approval.
INSERT OR IGNORE INTO tool_call_ids (id, chat_id, claimed_at)
    SELECT json_extract(call.value, '$.id'), m.chat_id, m.created_at
    FROM messages m, json_each(m.body, '$.toolCalls') AS call
    WHERE m.role = 'assistant' AND coalesce(json_extract(call.value, '$.id'), '') <> '';
INSERT OR IGNORE INTO tool_call_ids (id, chat_id, claimed_at)
    SELECT tool_call_id, chat_id, started_at FROM tool_steps;
INSERT OR IGNORE INTO tool_call_ids (id, chat_id, claimed_at)
    SELECT id, chat_id, created_at FROM approvals;
