import { Fragment, useEffect, useId, useLayoutEffect, useRef, useState, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import { formatUsage, humanBytes, modeExplanation, modeLabel } from "../format";
import { CHAT_MIN_WIDTH, OVERLAY_BELOW, usePanel, useWindowWidth } from "../layout";
import { useActiveChat, useStore } from "../store";
import type { Attachment, PermissionMode } from "../types";
import { api, errorMessage } from "../api";
import { ApprovalDialog } from "./ApprovalDialog";
import { ChatAutomation } from "./ChatAutomation";
import { CANVAS_MIN_WIDTH, CanvasPanel } from "./canvas/CanvasPanel";
import { SurfaceView } from "./canvas/SurfaceView";
import { CopyButton } from "./CopyButton";
import { EventCard } from "./EventCard";
import { Icon } from "./Icon";
import { Markdown } from "./Markdown";
import { ModelPicker } from "./ModelPicker";
import { BrowserModePicker } from "./BrowserModePicker";
import { PlanView } from "./PlanView";
import { ToolCard } from "./ToolCard";

const MODES: PermissionMode[] = ["default", "auto", "full_access"];

function ModeSwitch({ chatId, mode }: { chatId: string; mode: PermissionMode }) {
  const { actions } = useStore();
  const { t } = useTranslation();
  const id = useId();
  return (
    <div className="mode-switch">
      <label htmlFor={id}>{t("chat.permissions")}</label>
      <select
        id={id}
        data-testid="mode-switch"
        value={mode}
        aria-describedby="mode-explain"
        onChange={(e) => void actions.setMode(chatId, e.target.value as PermissionMode)}
      >
        {MODES.map((m) => (
          <option key={m} value={m}>
            {modeLabel(m)}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A file on its way into the chat's next message. */
interface Pending {
  id: number;
  name: string;
  /** Set once the file is in the chat's workspace. */
  attachment?: Attachment;
  error?: string;
}

let nextPending = 1;

/** The bytes of `file` in base64 (what `add_attachment` takes). */
async function base64Of(file: Blob): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** A pasted image without a name gets one from its type and the time. */
function nameOf(file: File): string {
  if (file.name && file.name !== "image.png") return file.name;
  const ext = file.type.startsWith("image/") ? file.type.slice(6).replace("jpeg", "jpg") : "bin";
  return `pasted-${new Date().toISOString().replace(/[:.]/g, "-")}.${ext}`;
}

function Composer({ chatId, running, blocked }: { chatId: string; running: boolean; blocked: boolean }) {
  const { actions } = useStore();
  const { t } = useTranslation();
  const [text, setText] = useState("");
  const [files, setFiles] = useState<Pending[]>([]);
  const [dragging, setDragging] = useState(false);
  const ref = useRef<HTMLTextAreaElement>(null);
  const picker = useRef<HTMLInputElement>(null);
  const uploading = files.some((f) => !f.attachment && !f.error);
  const ready = files.flatMap((f) => (f.attachment ? [f.attachment] : []));
  const canSend = !running && !blocked && !uploading && (text.trim().length > 0 || ready.length > 0);

  // A new chat starts with no files.
  useEffect(() => setFiles([]), [chatId]);

  const addFiles = (list: FileList | File[]) => {
    for (const file of Array.from(list)) {
      const id = nextPending++;
      const name = nameOf(file);
      setFiles((now) => [...now, { id, name }]);
      void base64Of(file)
        .then((data) => api.addAttachment(chatId, name, data))
        .then(
          (attachment) => setFiles((now) => now.map((f) => (f.id === id ? { ...f, attachment, name: attachment.name } : f))),
          (e) => setFiles((now) => now.map((f) => (f.id === id ? { ...f, error: errorMessage(e) } : f))),
        );
    }
  };

  // Files dropped anywhere in the window go to this chat's next message.
  useEffect(() => {
    const hasFiles = (e: DragEvent) => Array.from(e.dataTransfer?.types ?? []).includes("Files");
    const over = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      setDragging(true);
    };
    const leave = (e: DragEvent) => {
      if (e.relatedTarget === null) setDragging(false);
    };
    const drop = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      setDragging(false);
      if (e.dataTransfer?.files.length) addFiles(e.dataTransfer.files);
    };
    window.addEventListener("dragover", over);
    window.addEventListener("dragleave", leave);
    window.addEventListener("drop", drop);
    return () => {
      window.removeEventListener("dragover", over);
      window.removeEventListener("dragleave", leave);
      window.removeEventListener("drop", drop);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [chatId]);

  // Focus the composer on a chat switch and when an approval prompt goes away.
  useEffect(() => {
    if (!blocked) ref.current?.focus();
  }, [chatId, blocked]);

  const send = () => {
    if (!canSend) return;
    const t = text;
    const sent = files;
    setText("");
    setFiles([]);
    // `/goal OBJECTIVE`: the agent works on its own until the judge says it is met.
    const goal = /^\s*\/goal(?:\s+([\s\S]*))?$/.exec(t);
    if (goal) {
      void api.startGoal(chatId, { objective: (goal[1] ?? "").trim(), maxTurns: null, maxTokens: null }).catch((e) => actions.reportError(e));
      return;
    }
    // A message the runtime did not accept comes back to the composer (unless the user typed anew).
    void actions.send(chatId, t, ready).then((accepted) => {
      if (!accepted) {
        setText((now) => (now.trim() ? now : t));
        setFiles((now) => (now.length ? now : sent));
      }
    });
  };

  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    // Enter or Ctrl/Cmd+Enter sends; Shift+Enter inserts a line break.
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      send();
    }
  };

  return (
    <form
      className={`composer${dragging ? " dragging" : ""}`}
      data-testid="composer"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      {dragging && (
        <div className="drop-hint" data-testid="drop-hint">
          {t("chat.dropHint")}
        </div>
      )}
      {files.length > 0 && (
        <ul className="attachments" aria-label={t("chat.attachments")} data-testid="composer-attachments">
          {files.map((f) => (
            <li
              key={f.id}
              className={`attachment-chip${f.error ? " error" : ""}`}
              data-testid="composer-attachment"
              data-state={f.error ? "error" : f.attachment ? "ready" : "uploading"}
              title={f.error ?? f.attachment?.path ?? t("chat.attaching")}
            >
              <span className="attachment-name">{f.name}</span>
              <span className="muted small">{f.error ? t("chat.attachFailed") : f.attachment ? humanBytes(f.attachment.bytes) : t("chat.attaching")}</span>
              <button
                type="button"
                className="icon-btn"
                aria-label={t("chat.removeAttachment", { name: f.name })}
                onClick={() => setFiles((now) => now.filter((x) => x.id !== f.id))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <label htmlFor="composer-input" className="sr-only">
        {t("chat.message")}
      </label>
      <input
        ref={picker}
        type="file"
        multiple
        hidden
        data-testid="attach-input"
        onChange={(e) => {
          if (e.target.files?.length) addFiles(e.target.files);
          e.target.value = "";
        }}
      />
      <button
        type="button"
        className="btn ghost attach-btn"
        data-testid="attach-button"
        aria-label={t("chat.attach")}
        title={t("chat.attachTitle")}
        onClick={() => picker.current?.click()}
      >
        <Icon name="paperclip" />
      </button>
      <textarea
        id="composer-input"
        ref={ref}
        data-testid="composer-input"
        rows={Math.min(8, Math.max(1, text.split("\n").length))}
        placeholder={blocked ? t("chat.answerFirst") : t("chat.placeholder")}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKey}
        onPaste={(e) => {
          // Pasted files (a screenshot, files copied in a file manager) are attached; text
          // pastes as usual.
          if (e.clipboardData.files.length) {
            e.preventDefault();
            addFiles(e.clipboardData.files);
          }
        }}
      />
      {running ? (
        <button
          type="button"
          className="btn danger"
          data-testid="composer-stop"
          title={t("chat.stopTitle")}
          onClick={() => void actions.stop(chatId)}
        >
          {t("chat.stop")}
        </button>
      ) : (
        <button type="submit" className="btn primary" data-testid="composer-send" disabled={!canSend} title={t("chat.sendTitle")}>
          {t("chat.send")}
        </button>
      )}
    </form>
  );
}

/** The measured width of an element (0 before layout), following resizes. */
function useWidth(): [(el: HTMLElement | null) => void, number] {
  const [el, setEl] = useState<HTMLElement | null>(null);
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    if (!el) return;
    const measure = () => setWidth(el.clientWidth);
    measure();
    const observer = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(measure);
    observer?.observe(el);
    window.addEventListener("resize", measure);
    return () => {
      observer?.disconnect();
      window.removeEventListener("resize", measure);
    };
  }, [el]);
  return [setEl, width];
}

export interface ChatViewProps {
  /** A chat is being opened (at start, the last or a new one): wait quietly instead of "No chat selected". */
  opening?: boolean;
  /** Whether the background tasks panel is open (the header has its toggle). */
  tasksOpen?: boolean;
  onTasks?: (open: boolean) => void;
  /** The active chat's background tasks. */
  taskCount?: number;
}

/** The active chat: transcript, composer, mode switch and approval prompts. */
export function ChatView({ opening = false, tasksOpen = false, onTasks, taskCount = 0 }: ChatViewProps = {}) {
  const { state, actions } = useStore();
  const { t } = useTranslation();
  const chat = useActiveChat();
  const view = chat ? state.views[chat.id] : undefined;
  const pending = chat ? (state.pending[chat.id] ?? []) : [];
  const plan = chat ? (state.plans[chat.id] ?? null) : null;
  const running = !!view?.running;
  // A failed turn offers Retry on its error while that error is the last thing in the chat.
  const lastKey = view?.items[view.items.length - 1]?.key;
  // Each run's last assistant item (where its token usage is shown).
  const lastAnswerOf: Record<string, string> = {};
  for (const it of view?.items ?? []) if (it.kind === "assistant" && it.runId) lastAnswerOf[it.runId] = it.key;
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const surfaces = chat ? (state.surfaces[chat.id] ?? []) : [];
  const canvasSurfaces = surfaces.filter((s) => s.target === "canvas");
  // Turn ids of heartbeat runs that found nothing to do, per chat (folded in the transcript).
  const [quiet, setQuiet] = useState<Record<string, string[]>>({});
  const chatKey = chat?.id;
  const itemCount = view?.items.length ?? 0;
  useEffect(() => {
    if (!chatKey) return;
    let live = true;
    void api
      .quietTurns(chatKey)
      .then((ids) => {
        if (live) setQuiet((q) => ({ ...q, [chatKey]: ids }));
      })
      .catch(() => {});
    return () => {
      live = false;
    };
  }, [chatKey, itemCount]);
  // The user's show/hide choice per chat (remembered); by default the canvas shows when it has surfaces.
  const [canvasOpen, setCanvasOpen] = usePanel(chat?.id ?? null, "canvas", canvasSurfaces.length > 0);
  const [layoutRef, layoutWidth] = useWidth();
  const windowWidth = useWindowWidth();
  // Beside the chat only when both fit; otherwise the canvas overlays the chat.
  const canvasOverlay = windowWidth < OVERLAY_BELOW || (layoutWidth > 0 && layoutWidth < CHAT_MIN_WIDTH + CANVAS_MIN_WIDTH);

  // Follow the stream while the user is at the bottom.
  useEffect(() => {
    const el = scroller.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [view?.items]);

  // Esc stops the running turn.
  useEffect(() => {
    if (!chat || !running) return;
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key === "Escape" && !e.defaultPrevented) {
        e.preventDefault();
        void actions.stop(chat.id);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [chat, running, actions]);

  if (!chat && opening) return <div className="empty-state" aria-busy="true" data-testid="chat-opening" />;
  if (!chat) {
    return (
      <div className="empty-state">
        <h2>{t("chat.noneSelected")}</h2>
        <p className="muted">{t("chat.noneSelectedHelp")}</p>
        <button type="button" className="btn primary" onClick={() => void actions.createChat()}>
          {t("chat.newChat")}
        </button>
      </div>
    );
  }

  const quietSet = new Set(quiet[chat.id] ?? []);
  const quietRun = (it: { kind: string; runId?: string | null }) =>
    (it.kind === "user" || it.kind === "assistant") && !!it.runId && quietSet.has(it.runId) ? it.runId : null;
  const toolIds = new Set(view?.items.flatMap((it) => (it.kind === "tool" ? [it.id] : [])) ?? []);
  const inlineOf = (toolCallId: string) => surfaces.filter((s) => s.target === "inline" && s.toolCallId === toolCallId);
  const canvasOf = (toolCallId: string) => canvasSurfaces.filter((s) => s.toolCallId === toolCallId);
  // Inline surfaces whose tool call is not (yet) in the transcript go at its end.
  const orphans = surfaces.filter((s) => s.target === "inline" && !(s.toolCallId && toolIds.has(s.toolCallId)));

  return (
    <div className={`chat-layout${canvasOpen && canvasOverlay ? " canvas-overlay" : ""}`} ref={layoutRef}>
      <section className="chat" aria-label={t("chat.label", { title: chat.title })}>
        <header className="chat-head">
          <div className="chat-title">
            <h1>{chat.title}</h1>
            <span className="muted small" title={chat.workspace}>
              {chat.workspace}
              {chat.model ? ` · ${chat.model}` : state.settings?.defaultModel ? ` · ${state.settings.defaultModel}` : ""}
            </span>
          </div>
          <div className="chat-head-actions">
            <ChatAutomation chatId={chat.id} />
            <ModeSwitch chatId={chat.id} mode={chat.mode} />
            {onTasks && (
              <button
                type="button"
                className="btn small ghost canvas-toggle"
                data-testid="tasks-toggle"
                aria-expanded={tasksOpen}
                onClick={() => onTasks(!tasksOpen)}
              >
                {taskCount > 0 ? t("chat.tasksCount", { count: taskCount }) : t("chat.tasks")}
              </button>
            )}
            <button
              type="button"
              className="btn small ghost canvas-toggle"
              data-testid="canvas-toggle"
              aria-expanded={canvasOpen}
              aria-controls={canvasOpen ? "canvas-panel" : undefined}
              title={canvasOpen ? t("chat.hideCanvas") : t("chat.showCanvas")}
              onClick={() => setCanvasOpen(!canvasOpen)}
            >
              {canvasSurfaces.length > 0 ? t("chat.canvasCount", { count: canvasSurfaces.length }) : t("chat.canvas")}
            </button>
          </div>
        </header>
        <p className="mode-explain" id="mode-explain">
          <strong>{t("chat.modeHeading", { mode: modeLabel(chat.mode) })}</strong> {modeExplanation(chat.mode)}
        </p>
        <div
          className="transcript"
          ref={scroller}
          aria-live="polite"
          aria-busy={running}
          onScroll={(e) => {
            const el = e.currentTarget;
            stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
          }}
        >
          {!view?.loaded && <p className="muted center">{t("chat.loading")}</p>}
          {view?.loaded && view.items.length === 0 && (
            <div className="empty-state small">
              <p className="muted">{t("chat.emptyHint")}</p>
            </div>
          )}
          {view?.items.map((it, index) => {
            // A heartbeat that found nothing to do: stored, shown folded (first message of the run).
            const folded = quietRun(it);
            if (folded) {
              const before = index > 0 ? view.items[index - 1] : null;
              if (before && quietRun(before) === folded) return null;
              const texts = view.items.filter((x) => quietRun(x) === folded).map((x) => ("text" in x ? x.text : ""));
              return (
                <details key={it.key} className="msg quiet-run" data-testid="quiet-run">
                  <summary>{t("schedules.quietSummary")}</summary>
                  {texts.map((x, i) => (
                    <p key={i} className="small muted">
                      {x}
                    </p>
                  ))}
                </details>
              );
            }
            switch (it.kind) {
              case "user":
                return (
                  <div key={it.key} className="msg user" data-testid="message-user">
                    <CopyButton text={it.text} />
                    <div className="bubble">
                      {it.text}
                      {it.attachments && (
                        <ul className="attachments" aria-label={t("chat.attachments")}>
                          {it.attachments.map((a) => (
                            <li key={a.path} className="attachment-chip" data-testid="message-attachment" title={a.path}>
                              <span className="attachment-name">{a.name}</span>
                              <span className="small">{humanBytes(a.bytes)}</span>
                            </li>
                          ))}
                        </ul>
                      )}
                    </div>
                  </div>
                );
              case "event":
                return <EventCard key={it.key} source={it.source} />;
              case "assistant": {
                // The run's tokens and price go under its last answer, once the run is over.
                const usage = it.runId && it.key === lastAnswerOf[it.runId] && !(running && it.runId === view?.runId) ? view?.usage?.[it.runId] : undefined;
                return (
                  <div key={it.key} className="msg assistant" data-testid="message-assistant">
                    <Markdown text={it.text} />
                    <CopyButton text={it.text} />
                    {usage && (
                      <p className="turn-usage muted small" data-testid="turn-usage" title={t("chat.usageTitle", { steps: usage.steps })}>
                        {formatUsage(usage)}
                      </p>
                    )}
                  </div>
                );
              }
              case "tool":
                return (
                  <Fragment key={it.key}>
                    <ToolCard item={it} chatId={chat.id} autoplaySpeech={state.settings?.speech.autoplay ?? false} />
                    {inlineOf(it.id).map((s) => (
                      <SurfaceView key={`inline-${s.surfaceId}`} surface={s} />
                    ))}
                    {canvasOf(it.id).map((s) => (
                      <button
                        key={`chip-${s.surfaceId}`}
                        type="button"
                        className="btn tiny ghost canvas-chip"
                        onClick={() => {
                          setCanvasOpen(true);
                          window.setTimeout(() =>
                            document.querySelector(`.canvas-panel [data-testid="surface-${s.surfaceId.replace(/["\\]/g, "\\$&")}"]`)?.scrollIntoView({ block: "nearest" }),
                          );
                        }}
                      >
                        {t("chat.onCanvas", { title: s.title ?? s.surfaceId })}
                      </button>
                    ))}
                  </Fragment>
                );
              case "compacted":
                return (
                  <div key={it.key} className="compacted-divider" role="separator" data-testid="compacted-divider" data-trigger={it.info.trigger}>
                    <span>{t("chat.compacted.title")}</span>
                    <small>
                      {t("chat.compacted.detail", {
                        summarized: it.info.messagesSummarized,
                        cut: it.info.toolOutputsCut,
                        before: it.info.tokensBefore,
                        after: it.info.tokensAfter,
                      })}
                    </small>
                  </div>
                );
              case "error":
                return (
                  <div key={it.key} className="msg inline-error" role="alert" data-testid="error-banner" data-scope="turn" data-outcome={it.outcome ?? "failed"}>
                    <strong>
                      {it.outcome === "max_steps"
                        ? t("chat.stopped.max_steps")
                        : it.outcome === "loop_detected"
                          ? t("chat.stopped.loop_detected")
                          : it.outcome === "context_overflow"
                            ? t("chat.stopped.context_overflow")
                            : it.outcome === "compaction_failed"
                              ? t("chat.stopped.compaction_failed")
                              : t("chat.turnFailed")}
                    </strong>{" "}
                    {it.message}
                    {!running && it.key === lastKey && (
                      <button type="button" className="btn tiny" data-testid="turn-retry" onClick={() => void actions.retry(chat.id)}>
                        {t("chat.retry")}
                      </button>
                    )}
                  </div>
                );
            }
          })}
          {orphans.map((s) => (
            <SurfaceView key={`inline-${s.surfaceId}`} surface={s} />
          ))}
          {running && view?.retry && (
            <div className="msg retry-notice" role="status" data-testid="provider-retry">
              {t("chat.retrying", {
                seconds: Math.round(view.retry.waitMs / 100) / 10,
                attempt: view.retry.attempt,
                max: view.retry.maxAttempts,
                message: view.retry.message,
              })}
            </div>
          )}
          {running && (
            <div className="typing" aria-label={t("chat.working")}>
              <span />
              <span />
              <span />
            </div>
          )}
        </div>
        {plan && <PlanView key={chat.id} plan={plan} />}
        <div className="composer-bar">
          <ModelPicker key={chat.id} chat={chat} />
          <BrowserModePicker key={`browser-${chat.id}`} chatId={chat.id} />
          <button type="button" className="btn tiny ghost" data-testid="shortcuts-open" onClick={() => window.dispatchEvent(new CustomEvent("suzent:help"))}>
            {t("shortcuts.open")}
          </button>
        </div>
        <Composer chatId={chat.id} running={running} blocked={pending.length > 0} />
        {pending.length > 0 && (
          <ApprovalDialog
            key={chat.id}
            approvals={pending}
            onResolve={(answers) => actions.answerApprovals(chat.id, answers)}
          />
        )}
      </section>
      {canvasOpen && (
        <CanvasPanel key={chat.id} surfaces={canvasSurfaces} overlay={canvasOverlay} onHide={() => setCanvasOpen(false)} />
      )}
    </div>
  );
}
