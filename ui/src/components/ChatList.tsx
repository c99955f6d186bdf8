import { useState } from "react";
import { useStore } from "../store";
import type { ChatRecord } from "../types";

function ChatItem({ chat, active, pending }: { chat: ChatRecord; active: boolean; pending: number }) {
  const { actions } = useStore();
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  // Deleting is a backend round trip (the chat, its transcript and its summaries in memory go).
  const [deleting, setDeleting] = useState(false);
  const [title, setTitle] = useState(chat.title);

  const commit = () => {
    const t = title.trim();
    setEditing(false);
    if (t && t !== chat.title) void actions.renameChat(chat.id, t);
    else setTitle(chat.title);
  };

  return (
    <li className={`chat-item${active ? " active" : ""}`} data-testid="chat-item" data-chat-id={chat.id}>
      {editing ? (
        <input
          className="rename-input"
          aria-label="Chat title"
          data-testid="chat-rename-input"
          autoFocus
          value={title}
          onChange={(e) => setTitle(e.target.value)}
          onBlur={commit}
          onKeyDown={(e) => {
            if (e.key === "Enter") commit();
            if (e.key === "Escape") {
              setTitle(chat.title);
              setEditing(false);
            }
          }}
        />
      ) : (
        <button
          type="button"
          className="chat-select"
          aria-current={active ? "page" : undefined}
          onClick={() => void actions.selectChat(chat.id)}
          onDoubleClick={() => setEditing(true)}
        >
          <span className="chat-item-title">{chat.title}</span>
          {pending > 0 && (
            <span className="badge warn" title={`${pending} approval(s) waiting`}>
              {pending}
            </span>
          )}
        </button>
      )}
      {confirming ? (
        <span className="chat-confirm">
          <button
            type="button"
            className="btn tiny danger"
            data-testid="chat-delete-confirm"
            disabled={deleting}
            title={deleting ? "Deleting the chat and its summaries in memory" : undefined}
            onClick={() => {
              setDeleting(true);
              void actions.deleteChat(chat.id).finally(() => setDeleting(false));
            }}
          >
            {deleting ? "Deleting…" : "Delete"}
          </button>
          <button type="button" className="btn tiny ghost" disabled={deleting} onClick={() => setConfirming(false)}>
            Keep
          </button>
        </span>
      ) : (
        !editing && (
          <span className="chat-item-actions">
            <button
              type="button"
              className="icon-btn"
              data-testid="chat-rename"
              aria-label={`Rename ${chat.title}`}
              title="Rename"
              onClick={() => {
                setTitle(chat.title);
                setEditing(true);
              }}
            >
              ✎
            </button>
            <button
              type="button"
              className="icon-btn"
              data-testid="chat-delete"
              aria-label={`Delete ${chat.title}`}
              title="Delete"
              onClick={() => setConfirming(true)}
            >
              ×
            </button>
          </span>
        )
      )}
    </li>
  );
}

/** The chat list: select, create, rename (✎ or double-click), delete (with a confirmation). */
export function ChatList() {
  const { state, actions } = useStore();
  return (
    <div className="chat-list-wrap">
      <div className="sidebar-section-head">
        <span>Chats</span>
        <button type="button" className="btn small" data-testid="chat-new" onClick={() => void actions.createChat()}>
          + New
        </button>
      </div>
      <ul className="chat-list" data-testid="chat-list" aria-label="Chats">
        {state.chatsLoaded && state.chats.length === 0 && <li className="muted small empty">No chats yet.</li>}
        {state.chats.map((c) => (
          <ChatItem key={c.id} chat={c} active={c.id === state.activeChatId} pending={state.pending[c.id]?.length ?? 0} />
        ))}
      </ul>
    </div>
  );
}
