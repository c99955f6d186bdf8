-- Chat search (the desktop app's search box): chat titles and the text of user and assistant
-- messages in one FTS5 index. The trigram tokenizer matches any substring of three or more
-- characters in any script (Chinese has no spaces between words), ranked by BM25.
-- Row ids: a message's row is its messages.id; a title's row is minus the chat's rowid.
CREATE VIRTUAL TABLE chat_search USING fts5(
    body,
    chat_id UNINDEXED,
    seq UNINDEXED,               -- the message's seq; NULL for a title
    tokenize = 'trigram'
);

INSERT INTO chat_search (rowid, body, chat_id, seq)
    SELECT -rowid, title, id, NULL FROM chats;
INSERT INTO chat_search (rowid, body, chat_id, seq)
    SELECT id, json_extract(body, '$.text'), chat_id, seq FROM messages
    WHERE role IN ('user', 'assistant') AND coalesce(json_extract(body, '$.text'), '') <> '';

CREATE TRIGGER chat_search_title_ai AFTER INSERT ON chats BEGIN
    INSERT INTO chat_search (rowid, body, chat_id, seq) VALUES (-new.rowid, new.title, new.id, NULL);
END;
CREATE TRIGGER chat_search_title_au AFTER UPDATE OF title ON chats BEGIN
    DELETE FROM chat_search WHERE rowid = -old.rowid;
    INSERT INTO chat_search (rowid, body, chat_id, seq) VALUES (-new.rowid, new.title, new.id, NULL);
END;
CREATE TRIGGER chat_search_title_ad AFTER DELETE ON chats BEGIN
    DELETE FROM chat_search WHERE rowid = -old.rowid;
END;
CREATE TRIGGER chat_search_message_ai AFTER INSERT ON messages
    WHEN new.role IN ('user', 'assistant') AND coalesce(json_extract(new.body, '$.text'), '') <> ''
BEGIN
    INSERT INTO chat_search (rowid, body, chat_id, seq)
        VALUES (new.id, json_extract(new.body, '$.text'), new.chat_id, new.seq);
END;
CREATE TRIGGER chat_search_message_ad AFTER DELETE ON messages BEGIN
    DELETE FROM chat_search WHERE rowid = old.id;
END;
