-- Storing a message is one statement (issue 14, step overhead): the triggers do what a
-- transaction of several statements did.

-- A message bumps its chat's updated_at.
CREATE TRIGGER messages_bump_chat AFTER INSERT ON messages BEGIN
    UPDATE chats SET updated_at = NEW.created_at WHERE id = NEW.chat_id;
END;

-- A tool call's stored result marks its step done (a step never begun gets a row without args).
CREATE TRIGGER messages_finish_tool_step AFTER INSERT ON messages WHEN NEW.role = 'tool' BEGIN
    INSERT INTO tool_steps (tool_call_id, chat_id, tool_name, args, status, started_at, finished_at)
    VALUES (NEW.tool_call_id, NEW.chat_id, COALESCE(json_extract(NEW.body, '$.toolName'), ''),
            NULL, 'done', NEW.created_at, NEW.created_at)
    ON CONFLICT (tool_call_id) DO UPDATE SET status = 'done', finished_at = excluded.finished_at;
END;
