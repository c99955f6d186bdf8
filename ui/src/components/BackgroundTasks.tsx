import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import { api } from "../api";
import { formatClock, formatTime } from "../format";
import { useStore } from "../store";
import type { BackgroundTask } from "../types";

function lastLines(text: string, n: number): string {
  const lines = text.replace(/\s+$/, "").split("\n");
  return lines.slice(-n).join("\n");
}

const DOT: Record<BackgroundTask["status"], string> = {
  running: "running",
  finished: "ok",
  failed: "error",
  stopped: "denied",
  timed_out: "error",
};

function statusText(status: BackgroundTask["status"], t: TFunction): string {
  switch (status) {
    case "running":
      return t("tasks.status.running");
    case "finished":
      return t("tasks.status.finished");
    case "failed":
      return t("tasks.status.failed");
    case "stopped":
      return t("tasks.status.stopped");
    case "timed_out":
      return t("tasks.status.timedOut");
  }
}

function TaskRow({ task }: { task: BackgroundTask }) {
  const { state, dispatch, actions } = useStore();
  const { t } = useTranslation();
  const [stopping, setStopping] = useState(false);
  const running = task.status === "running";
  const chatTitle = state.chats.find((c) => c.id === task.chatId)?.title;
  const failedExit = task.exitCode !== undefined && task.exitCode !== 0;

  const stop = async () => {
    setStopping(true);
    try {
      dispatch({ type: "tasks/upsert", task: await api.stopBackgroundTask(task.id) });
    } catch (e) {
      actions.reportError(e, t("tasks.stopFailed", { title: task.title }));
    } finally {
      setStopping(false);
    }
  };

  return (
    <li className="task" data-testid="background-task" data-status={task.status}>
      <div className="task-head">
        <span className={`status-dot ${task.status === "finished" && failedExit ? "error" : DOT[task.status]}`} aria-hidden="true" />
        <span className="task-label" title={task.title}>
          {task.title}
        </span>
      </div>
      <div className="task-meta muted small">
        {task.kind === "agent" ? t("tasks.kindAgent") : t("tasks.kindCommand")} · {statusText(task.status, t)}
        {task.exitCode !== undefined && ` · ${t("tasks.exit", { code: task.exitCode })}`}
      </div>
      <div
        className="task-meta muted small ellipsis"
        title={
          task.finishedAt
            ? t("tasks.startedEnded", { started: formatTime(task.startedAt), ended: formatTime(task.finishedAt) })
            : t("tasks.started", { started: formatTime(task.startedAt) })
        }
      >
        {chatTitle ?? t("tasks.unknownChat")} · {formatClock(task.startedAt)}
      </div>
      {task.recentOutput.trim() && <pre className="task-output">{lastLines(task.recentOutput, 6)}</pre>}
      {running && (
        <button
          type="button"
          className="btn tiny danger"
          data-testid="background-task-stop"
          disabled={stopping}
          onClick={() => void stop()}
        >
          {stopping ? t("tasks.stopping") : t("tasks.stop")}
        </button>
      )}
    </li>
  );
}

/** Right sidebar: background commands and sub-agents, from background_tasks() and runtime events. */
export function BackgroundTasks({ onClose, overlay = false }: { onClose: () => void; overlay?: boolean }) {
  const { state, actions } = useStore();
  const { t } = useTranslation();
  // Newest first, running ones on top.
  const tasks = [...state.tasks].sort(
    (a, b) => Number(b.status === "running") - Number(a.status === "running") || b.startedAt.localeCompare(a.startedAt),
  );
  return (
    <aside className={`tasks-panel${overlay ? " overlay" : ""}`} data-testid="background-tasks" aria-labelledby="tasks-h">
      <div className="sidebar-section-head">
        <span id="tasks-h">{t("tasks.heading")}</span>
        <span>
          <button type="button" className="icon-btn" title={t("tasks.refresh")} aria-label={t("tasks.refreshLabel")} onClick={() => void actions.refreshTasks()}>
            ↻
          </button>
          <button type="button" className="icon-btn" title={t("tasks.hide")} aria-label={t("tasks.hideLabel")} onClick={onClose}>
            ×
          </button>
        </span>
      </div>
      {tasks.length === 0 ? (
        <p className="muted small empty">{t("tasks.empty")}</p>
      ) : (
        <ul className="task-list">
          {tasks.map((t) => (
            <TaskRow key={t.id} task={t} />
          ))}
        </ul>
      )}
    </aside>
  );
}
