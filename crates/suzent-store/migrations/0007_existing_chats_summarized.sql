-- Chats that existed before end-of-chat summaries (0006) count as summarized up to their last
-- message: upgrading must not send every old conversation to the model at the first sweep.
-- Only what is said in them from now on is summarized, automatically or on demand.
INSERT OR IGNORE INTO chat_summaries (chat_id, through_seq, archival_id, summarized_at)
SELECT chat_id, MAX(seq), NULL, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
FROM messages
GROUP BY chat_id;
