-- End-of-chat summaries: how far each chat's transcript is summarized into archival memory, so
-- that a summary is written once per new stretch of conversation (idle chats, deleted chats).
CREATE TABLE chat_summaries (
    chat_id        TEXT PRIMARY KEY NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    -- The last transcript position (messages.seq) the summaries cover.
    through_seq    INTEGER NOT NULL,
    -- The archival entry of the latest summary (NULL when that stretch had nothing to summarize).
    archival_id    INTEGER,
    summarized_at  TEXT NOT NULL
);
