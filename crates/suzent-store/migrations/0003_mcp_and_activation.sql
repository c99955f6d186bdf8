-- Suzent store, schema version 3: tools activated with tool_search per chat, and the MCP schema
-- cache (seed 003 "MCP Schema Caching", 24 h TTL enforced by the reader).

CREATE TABLE tool_activations (
    chat_id       TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    tool_name     TEXT NOT NULL,            -- runtime name (built-in) or qualified MCP name
    activated_at  TEXT NOT NULL,
    PRIMARY KEY (chat_id, tool_name)
);

CREATE TABLE mcp_schema_cache (
    server        TEXT PRIMARY KEY NOT NULL, -- server name in mcp.json
    fingerprint   TEXT NOT NULL,             -- of the server configuration the tools came from
    tools         TEXT NOT NULL,             -- JSON array of the server's tools
    fetched_at    TEXT NOT NULL
);
