-- Compactions (issue 13 item 4): how a long chat is fitted to its model's context window. The
-- transcript (messages) is never changed; requests built after a compaction send its summary in
-- place of the messages up to summary_through_seq, and tool outputs up to cut_through_seq cut to
-- their head and tail. The newest row of a chat applies; older rows stay as its history.
CREATE TABLE compactions (
    id                   TEXT PRIMARY KEY NOT NULL,
    chat_id              TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    -- 'auto', 'overflow' or 'manual'.
    trigger              TEXT NOT NULL,
    cut_through_seq      INTEGER NOT NULL,
    summary_through_seq  INTEGER NOT NULL,
    -- The summary of messages 1..=summary_through_seq (NULL when nothing is summarized yet).
    summary              TEXT,
    tool_outputs_cut     INTEGER NOT NULL,
    messages_summarized  INTEGER NOT NULL,
    tokens_before        INTEGER NOT NULL,
    tokens_after         INTEGER NOT NULL,
    context_window       INTEGER NOT NULL,
    created_at           TEXT NOT NULL
);
CREATE INDEX compactions_by_chat ON compactions (chat_id, created_at);
