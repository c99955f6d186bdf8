import { useEffect, useRef, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { api, errorMessage } from "../api";
import type { ChatSearchHit } from "../types";

/** Marks in a snippet: the backend wraps each matched term in U+0002 … U+0003. */
function highlighted(snippet: string): ReactNode[] {
  return snippet.split(/(\u0002[^\u0003]*\u0003)/).map((part, i) =>
    part.startsWith("\u0002") ? <mark key={i}>{part.slice(1, -1)}</mark> : part,
  );
}

/**
 * Search over chat titles and messages (SQLite FTS5): type, see the chats with the matching
 * message, open one with Enter or a click. Esc closes.
 */
export function SearchDialog({ onClose, onOpen }: { onClose: () => void; onOpen: (chatId: string) => void }) {
  const { t } = useTranslation();
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<ChatSearchHit[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  useEffect(() => {
    const q = query.trim();
    if (!q) {
      setHits(null);
      setError(null);
      return;
    }
    let live = true;
    const timer = window.setTimeout(() => {
      api.searchChats(q, 30).then(
        (found) => {
          if (!live) return;
          setHits(found);
          setError(null);
          setActive(0);
        },
        (e: unknown) => live && setError(errorMessage(e)),
      );
    }, 150);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [query]);

  const list = hits ?? [];
  return (
    <div className="modal-backdrop" onClick={onClose}>
      <div
        className="modal search-dialog"
        role="dialog"
        aria-modal="true"
        aria-label={t("search.title")}
        data-testid="search-dialog"
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            onClose();
          } else if (e.key === "ArrowDown") {
            e.preventDefault();
            setActive((a) => Math.min(list.length - 1, a + 1));
          } else if (e.key === "ArrowUp") {
            e.preventDefault();
            setActive((a) => Math.max(0, a - 1));
          } else if (e.key === "Enter" && list[active]) {
            e.preventDefault();
            onOpen(list[active].chatId);
          } else if (e.key === "Tab") {
            e.preventDefault();
          }
        }}
      >
        <label htmlFor="search-input" className="sr-only">
          {t("search.title")}
        </label>
        <input
          id="search-input"
          ref={input}
          type="search"
          data-testid="search-input"
          placeholder={t("search.placeholder")}
          value={query}
          autoComplete="off"
          onChange={(e) => setQuery(e.target.value)}
          aria-controls="search-results"
        />
        {error && (
          <p className="field-error" role="alert" data-testid="search-error">
            {t("search.failed", { error })}
          </p>
        )}
        {hits && hits.length === 0 && !error && (
          <p className="muted" data-testid="search-empty">
            {t("search.none", { query: query.trim() })}
          </p>
        )}
        {list.length > 0 && (
          <ul className="search-results" id="search-results" role="listbox" aria-label={t("search.results")}>
            {list.map((h, i) => (
              <li key={`${h.chatId}-${h.seq ?? "title"}`} role="option" aria-selected={i === active}>
                <button
                  type="button"
                  className={`search-hit${i === active ? " active" : ""}`}
                  data-testid="search-hit"
                  data-chat-id={h.chatId}
                  onMouseEnter={() => setActive(i)}
                  onClick={() => onOpen(h.chatId)}
                >
                  <strong>{h.seq === null ? highlighted(h.snippet) : h.title}</strong>
                  {h.seq !== null && <span className="muted small">{highlighted(h.snippet)}</span>}
                </button>
              </li>
            ))}
          </ul>
        )}
        <p className="muted small">{t("search.help")}</p>
      </div>
    </div>
  );
}
