import { useCallback, useEffect, useId, useState } from "react";
import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import { api, errorMessage, listenRuntimeEvents } from "../api";
import type { GoalRecord, GoalStatus, JobRecord } from "../types";

const BEATS = [0, 5, 15, 30, 60];

function goalStatusLabel(s: GoalStatus, t: TFunction): string {
  switch (s) {
    case "active":
      return t("schedules.goal.active");
    case "paused":
      return t("schedules.goal.paused");
    case "met":
      return t("schedules.goal.met");
    case "budget_spent":
      return t("schedules.goal.budgetSpent");
  }
}

/** Minutes of an `every N minutes` heartbeat schedule. */
function beatMinutes(job: JobRecord | null): number {
  const m = job ? /^every (\d+) minutes?$/.exec(job.schedule) : null;
  return m ? Number(m[1]) : 0;
}

/** The chat header's unattended controls: its heartbeat, its goal, and whether a job owns it. */
export function ChatAutomation({ chatId }: { chatId: string }) {
  const { t } = useTranslation();
  const id = useId();
  const [beat, setBeat] = useState<JobRecord | null>(null);
  const [goal, setGoal] = useState<GoalRecord | null>(null);
  const [scheduled, setScheduled] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(() => {
    void api.chatHeartbeat(chatId).then(setBeat).catch(() => setBeat(null));
    void api.chatGoal(chatId).then(setGoal).catch(() => setGoal(null));
    void api
      .listSchedules()
      .then((jobs) => setScheduled(jobs.find((j) => j.job.kind === "prompt" && j.job.chatId === chatId)?.job.name ?? null))
      .catch(() => setScheduled(null));
  }, [chatId]);

  useEffect(() => {
    load();
    let un: (() => void) | null = null;
    let live = true;
    void listenRuntimeEvents((ev) => {
      if (ev.name === "goal_updated" && ev.value.chatId === chatId) {
        const v = ev.value;
        setGoal((g) => (g ? { ...g, ...v } : null));
        void api.chatGoal(chatId).then(setGoal).catch(() => {});
      }
    }).then((u) => {
      if (live) un = u;
      else u();
    });
    return () => {
      live = false;
      un?.();
    };
  }, [chatId, load]);

  const act = async (f: () => Promise<unknown>) => {
    try {
      await f();
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
    load();
  };

  const minutes = beatMinutes(beat);
  return (
    <div className="chat-automation">
      {scheduled && (
        <span className="badge" data-testid="chat-scheduled" title={t("schedules.scheduledChatHelp", { name: scheduled })}>
          {t("schedules.scheduledChat")}
        </span>
      )}
      <label htmlFor={id} className="small">
        {t("schedules.heartbeat")}
      </label>
      <select
        id={id}
        data-testid="heartbeat-select"
        value={BEATS.includes(minutes) ? minutes : 0}
        title={t("schedules.heartbeatHelp")}
        onChange={(e) => {
          const n = Number(e.target.value);
          void act(() => api.setChatHeartbeat(chatId, n > 0 ? n : null));
        }}
      >
        {BEATS.map((n) => (
          <option key={n} value={n}>
            {n === 0 ? t("schedules.heartbeatOff") : t("schedules.heartbeatEvery", { count: n })}
          </option>
        ))}
      </select>
      {goal && (
        <span className="goal-controls" data-testid="goal-controls">
          <span className={`badge goal-${goal.status}`} data-testid="goal-status" title={goal.objective}>
            {t("schedules.goal.badge", { status: goalStatusLabel(goal.status, t), used: goal.turnsUsed, max: goal.maxTurns })}
          </span>
          {goal.status === "active" && (
            <button type="button" className="btn tiny ghost" data-testid="goal-pause" onClick={() => void act(() => api.pauseGoal(chatId))}>
              {t("schedules.goal.pause")}
            </button>
          )}
          {(goal.status === "paused" || goal.status === "budget_spent") && (
            <button type="button" className="btn tiny ghost" data-testid="goal-resume" onClick={() => void act(() => api.resumeGoal(chatId))}>
              {t("schedules.goal.resume")}
            </button>
          )}
          <button type="button" className="btn tiny ghost" data-testid="goal-clear" onClick={() => void act(() => api.clearGoal(chatId))}>
            {t("schedules.goal.clear")}
          </button>
          {goal.reason && goal.status !== "active" && (
            <span className="small muted" data-testid="goal-reason">
              {goal.reason}
            </span>
          )}
        </span>
      )}
      {error && (
        <span className="error small" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

/** In-app notices for notifying scheduled runs that ended (the system notification is Rust's). */
export function RunNotices({ onOpenChat }: { onOpenChat: (chatId: string) => void }) {
  const { t } = useTranslation();
  const [notices, setNotices] = useState<{ runId: string; name: string; status: string; chatId: string; detail: string | null }[]>([]);
  useEffect(() => {
    let un: (() => void) | null = null;
    let live = true;
    void listenRuntimeEvents((ev) => {
      if (ev.name !== "scheduled_run_updated" || !ev.value.notify) return;
      const v = ev.value;
      setNotices((n) => [...n.filter((x) => x.runId !== v.runId), { runId: v.runId, name: v.jobName, status: v.status, chatId: v.chatId, detail: v.detail }].slice(-3));
    }).then((u) => {
      if (live) un = u;
      else u();
    });
    return () => {
      live = false;
      un?.();
    };
  }, []);
  if (notices.length === 0) return null;
  return (
    <div className="run-notices" aria-live="polite">
      {notices.map((n) => (
        <div key={n.runId} className="card run-notice" role="status" data-testid="run-notice">
          <strong>{t("schedules.noticeTitle", { name: n.name, status: n.status.replace("_", " ") })}</strong>
          {n.detail && <p className="small">{n.detail}</p>}
          <div className="row">
            {n.chatId && (
              <button type="button" className="btn tiny" onClick={() => onOpenChat(n.chatId)}>
                {t("schedules.openChat")}
              </button>
            )}
            <button type="button" className="btn tiny ghost" onClick={() => setNotices((x) => x.filter((y) => y.runId !== n.runId))}>
              {t("schedules.dismiss")}
            </button>
          </div>
        </div>
      ))}
    </div>
  );
}
