-- The canvas (issue 8): live surfaces per chat and the history of every change.

-- One row per live surface; `body` is the JSON of suzent_core::Surface (components, data model).
-- `version` mirrors the body's and guards concurrent writers (update only from version - 1).
CREATE TABLE surfaces (
    chat_id     TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    surface_id  TEXT NOT NULL,
    version     INTEGER NOT NULL CHECK (version >= 1),
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (chat_id, surface_id)
);

-- Every render, data update, delete and user action, kept after the surface is deleted.
-- `payload` is JSON: the render_ui arguments, the user action, or {} for a delete by the user.
CREATE TABLE surface_history (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    chat_id      TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    surface_id   TEXT NOT NULL,
    version      INTEGER NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('render', 'update_data', 'delete', 'user_action')),
    tool_call_id TEXT,
    payload      TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX surface_history_surface ON surface_history (chat_id, surface_id, id);
