import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { api, listenRuntimeEvents } from "../api";
import { Icon } from "./Icon";
import { useStore } from "../store";
import type { ChatRecord } from "../types";

/** The chats that scheduled jobs run in (their runs are marked in the list). */
function useScheduledChats(): Set<string> {
  const [ids, setIds] = useState<Set<string>>(new Set());
  useEffect(() => {
    const load = () =>
      void api
        .listSchedules()
        .then((jobs) => setIds(new Set(jobs.filter((j) => j.job.kind !== "heartbeat" && j.job.chatId).map((j) => j.job.chatId ?? ""))))
        .catch(() => {});
    load();
    let un: (() => void) | null = null;
    let live = true;
    void listenRuntimeEvents((ev) => {
      if (ev.name === "scheduled_run_updated") load();
    }).then((u) => {
      if (live) un = u;
      else u();
    });
    return () => {
      live = false;
      un?.();
    };
  }, []);
  return ids;
}

function ChatItem({ chat, active, pending, scheduled }: { chat: ChatRecord; active: boolean; pending: number; scheduled: boolean }) {
  const { actions } = useStore();
  const { t } = useTranslation();
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
          aria-label={t("chatList.titleInput")}
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
          {scheduled && (
            <span className="scheduled-mark" data-testid="chat-scheduled-mark" title={t("schedules.scheduledChat")}>
              <Icon name="clock" />
            </span>
          )}
          <span className="chat-item-title">{chat.title}</span>
          {pending > 0 && (
            <span className="badge warn" title={t("chatList.approvalsWaiting", { count: pending })}>
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
            title={deleting ? t("chatList.deletingHelp") : undefined}
            onClick={() => {
              setDeleting(true);
              void actions.deleteChat(chat.id).finally(() => setDeleting(false));
            }}
          >
            {deleting ? t("chatList.deleting") : t("chatList.delete")}
          </button>
          <button type="button" className="btn tiny ghost" disabled={deleting} onClick={() => setConfirming(false)}>
            {t("chatList.keep")}
          </button>
        </span>
      ) : (
        !editing && (
          <span className="chat-item-actions">
            <button
              type="button"
              className="icon-btn"
              data-testid="chat-rename"
              aria-label={t("chatList.renameLabel", { title: chat.title })}
              title={t("chatList.rename")}
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
              aria-label={t("chatList.deleteLabel", { title: chat.title })}
              title={t("chatList.delete")}
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
  const { t } = useTranslation();
  const scheduled = useScheduledChats();
  return (
    <div className="chat-list-wrap">
      <div className="sidebar-section-head">
        <span>{t("chatList.heading")}</span>
        <button type="button" className="btn small" data-testid="chat-new" onClick={() => void actions.createChat()}>
          {t("chatList.new")}
        </button>
      </div>
      <ul className="chat-list" data-testid="chat-list" aria-label={t("chatList.heading")}>
        {state.chatsLoaded && state.chats.length === 0 && <li className="muted small empty">{t("chatList.empty")}</li>}
        {state.chats.map((c) => (
          <ChatItem
            key={c.id}
            chat={c}
            active={c.id === state.activeChatId}
            pending={state.pending[c.id]?.length ?? 0}
            scheduled={scheduled.has(c.id)}
          />
        ))}
      </ul>
    </div>
  );
}
