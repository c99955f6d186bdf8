import { useState } from "react";
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

function TaskRow({ task }: { task: BackgroundTask }) {
  const { state, dispatch, actions } = useStore();
  const [stopping, setStopping] = useState(false);
  const running = task.status === "running";
  const chatTitle = state.chats.find((c) => c.id === task.chatId)?.title;
  const failedExit = task.exitCode !== undefined && task.exitCode !== 0;

  const stop = async () => {
    setStopping(true);
    try {
      dispatch({ type: "tasks/upsert", task: await api.stopBackgroundTask(task.id) });
    } catch (e) {
      actions.reportError(e, `Could not stop “${task.title}”`);
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
        {task.kind === "agent" ? "sub-agent" : "command"} · {task.status.replace("_", " ")}
        {task.exitCode !== undefined && ` · exit ${task.exitCode}`}
      </div>
      <div
        className="task-meta muted small ellipsis"
        title={`started ${formatTime(task.startedAt)}${task.finishedAt ? `, ended ${formatTime(task.finishedAt)}` : ""}`}
      >
        {chatTitle ?? "unknown chat"} · {formatClock(task.startedAt)}
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
          {stopping ? "Stopping…" : "Stop"}
        </button>
      )}
    </li>
  );
}

/** Right sidebar: background commands and sub-agents, from background_tasks() and runtime events. */
export function BackgroundTasks({ onClose }: { onClose: () => void }) {
  const { state, actions } = useStore();
  // Newest first, running ones on top.
  const tasks = [...state.tasks].sort(
    (a, b) => Number(b.status === "running") - Number(a.status === "running") || b.startedAt.localeCompare(a.startedAt),
  );
  return (
    <aside className="tasks-panel" data-testid="background-tasks" aria-labelledby="tasks-h">
      <div className="sidebar-section-head">
        <span id="tasks-h">Background tasks</span>
        <span>
          <button type="button" className="icon-btn" title="Refresh" aria-label="Refresh background tasks" onClick={() => void actions.refreshTasks()}>
            ↻
          </button>
          <button type="button" className="icon-btn" title="Hide" aria-label="Hide background tasks" onClick={onClose}>
            ×
          </button>
        </span>
      </div>
      {tasks.length === 0 ? (
        <p className="muted small empty">
          No background tasks. Long-running commands and sub-agents the agent starts appear here with their output and
          exit code.
        </p>
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
