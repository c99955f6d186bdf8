-- Plans (planning_update) and memory (core blocks, archival entries with FTS5 and embeddings).

-- One plan per chat; `body` is the JSON of suzent_core::Plan.
CREATE TABLE plans (
    chat_id     TEXT PRIMARY KEY NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    body        TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

-- Core memory blocks (persona, user, facts, context), always in the system prompt.
CREATE TABLE memory_blocks (
    user_id     TEXT NOT NULL,
    block       TEXT NOT NULL CHECK (block IN ('persona', 'user', 'facts', 'context')),
    content     TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (user_id, block)
);

-- Archival memory. `embedding` is little-endian f32 values (NULL when no embedder was set up).
CREATE TABLE memory_archive (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id     TEXT NOT NULL,
    chat_id     TEXT,
    source      TEXT NOT NULL,
    content     TEXT NOT NULL,
    embedding   BLOB,
    created_at  TEXT NOT NULL
);
CREATE INDEX memory_archive_user ON memory_archive (user_id);

-- Full-text index over the archive (BM25 ranking), kept in step by triggers.
CREATE VIRTUAL TABLE memory_archive_fts USING fts5(
    content,
    content = 'memory_archive',
    content_rowid = 'id',
    tokenize = 'porter unicode61'
);
CREATE TRIGGER memory_archive_ai AFTER INSERT ON memory_archive BEGIN
    INSERT INTO memory_archive_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER memory_archive_ad AFTER DELETE ON memory_archive BEGIN
    INSERT INTO memory_archive_fts (memory_archive_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER memory_archive_au AFTER UPDATE OF content ON memory_archive BEGIN
    INSERT INTO memory_archive_fts (memory_archive_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO memory_archive_fts (rowid, content) VALUES (new.id, new.content);
END;
