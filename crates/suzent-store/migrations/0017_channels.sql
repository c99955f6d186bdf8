-- Channels (issue 20): conversations on messaging platforms (Telegram, Slack, ...), one chat
-- each, and the requests of people who wrote to a channel without being on its allow-list.
-- Tokens are never stored here (they live in the OS keychain).
CREATE TABLE channel_conversations (
    channel       TEXT NOT NULL,            -- the channel's name in config.toml
    conversation  TEXT NOT NULL,            -- the platform's conversation id (Telegram chat id)
    platform      TEXT NOT NULL,            -- telegram, slack, discord, matrix
    chat_id       TEXT NOT NULL UNIQUE REFERENCES chats (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,            -- who or what the conversation is with
    replied_seq   INTEGER NOT NULL DEFAULT 0, -- the chat's last message seq whose reply was sent
    created_at    TEXT NOT NULL,
    last_seen     TEXT NOT NULL,            -- the last message received in it
    PRIMARY KEY (channel, conversation)
);
CREATE INDEX channel_conversations_by_seen ON channel_conversations (last_seen);

CREATE TABLE channel_requests (
    channel       TEXT NOT NULL,
    user_id       TEXT NOT NULL,            -- the platform's user id
    name          TEXT NOT NULL,            -- their display name as the platform gave it
    conversation  TEXT NOT NULL,            -- where they wrote from
    status        TEXT NOT NULL,            -- pending, approved, dismissed
    messages      INTEGER NOT NULL,         -- how many messages they sent (none reached a chat)
    first_seen    TEXT NOT NULL,
    last_seen     TEXT NOT NULL,
    PRIMARY KEY (channel, user_id)
);
