-- Channels (issue 20): how many parts of the next reply (the chat's first message after
-- replied_seq) already reached the platform, so that a send that failed midway is resumed
-- with the parts not yet delivered instead of sending the whole reply again.
ALTER TABLE channel_conversations ADD COLUMN replied_parts INTEGER NOT NULL DEFAULT 0;
