import { useCallback, useEffect, useId, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import { api, errorMessage, listenRuntimeEvents } from "../api";
import { DEFAULT_BUILDER, builderOf, localTime, patternOf, timeZones, type BuilderState, type Preset } from "../schedule";
import type { CatchUpPolicy, Delivery, JobInput, JobView, OverlapPolicy, RunRecord, RunStatus, SchedulePreview } from "../types";

const PRESETS: Preset[] = ["every", "hourly", "daily", "weekdays", "weekly", "custom"];
const OVERLAPS: OverlapPolicy[] = ["skip", "queue_one", "allow"];
const CATCH_UPS: CatchUpPolicy[] = ["run_once", "skip"];

function presetLabel(p: Preset, t: TFunction): string {
  switch (p) {
    case "every":
      return t("schedules.preset.every");
    case "hourly":
      return t("schedules.preset.hourly");
    case "daily":
      return t("schedules.preset.daily");
    case "weekdays":
      return t("schedules.preset.weekdays");
    case "weekly":
      return t("schedules.preset.weekly");
    case "custom":
      return t("schedules.preset.custom");
  }
}

function overlapLabel(o: OverlapPolicy, t: TFunction): string {
  switch (o) {
    case "skip":
      return t("schedules.overlap.skip");
    case "queue_one":
      return t("schedules.overlap.queueOne");
    case "allow":
      return t("schedules.overlap.allow");
  }
}

function catchUpLabel(c: CatchUpPolicy, t: TFunction): string {
  switch (c) {
    case "run_once":
      return t("schedules.catchUp.runOnce");
    case "skip":
      return t("schedules.catchUp.skip");
  }
}

export function statusLabel(s: RunStatus, t: TFunction): string {
  switch (s) {
    case "requested":
      return t("schedules.status.requested");
    case "queued":
      return t("schedules.status.queued");
    case "running":
      return t("schedules.status.running");
    case "completed":
      return t("schedules.status.completed");
    case "failed":
      return t("schedules.status.failed");
    case "interrupted":
      return t("schedules.status.interrupted");
    case "skipped":
      return t("schedules.status.skipped");
    case "missed":
      return t("schedules.status.missed");
    case "timed_out":
      return t("schedules.status.timedOut");
    case "unknown":
      return t("schedules.status.unknown");
  }
}

function weekdayLabel(d: number, t: TFunction): string {
  switch (d) {
    case 0:
      return t("schedules.weekday.sun");
    case 1:
      return t("schedules.weekday.mon");
    case 2:
      return t("schedules.weekday.tue");
    case 3:
      return t("schedules.weekday.wed");
    case 4:
      return t("schedules.weekday.thu");
    case 5:
      return t("schedules.weekday.fri");
    default:
      return t("schedules.weekday.sat");
  }
}

function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** The schedule builder: common schedules, the cron they make, and the next five times. */
export function ScheduleEditor({ job, onSaved, onCancel }: { job: JobView | null; onSaved: () => void; onCancel: () => void }) {
  const { t } = useTranslation();
  const draft = job?.job;
  const [name, setName] = useState(draft?.name ?? "");
  const [prompt, setPrompt] = useState(draft?.prompt ?? "");
  const [workspace, setWorkspace] = useState(draft?.workspace ?? "");
  const [builder, setBuilder] = useState<BuilderState>(draft ? builderOf(draft.schedule) : DEFAULT_BUILDER);
  const [zone, setZone] = useState(draft?.timezone ?? "");
  const [delivery, setDelivery] = useState<Delivery>(draft?.delivery ?? "notify");
  const [overlap, setOverlap] = useState<OverlapPolicy>(draft?.overlap ?? "skip");
  const [catchUp, setCatchUp] = useState<CatchUpPolicy>(draft?.catchUp ?? "run_once");
  const [timeout, setTimeoutSecs] = useState(String(draft?.timeoutSecs ?? 1800));
  const [retries, setRetries] = useState(String(draft?.maxRetries ?? 0));
  const [preview, setPreview] = useState<SchedulePreview | null>(null);
  const [previewError, setPreviewError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const zones = useRef<string[]>(timeZones());
  const ids = { name: useId(), prompt: useId(), ws: useId(), preset: useId(), zone: useId(), zones: useId() };
  const pattern = patternOf(builder);

  useEffect(() => {
    if (zone) return;
    let live = true;
    void api.systemTimezone().then((z) => {
      if (live) setZone((current) => current || z);
    });
    return () => {
      live = false;
    };
  }, [zone]);

  // The preview follows the pattern and the zone (the backend parses both).
  useEffect(() => {
    if (!pattern) {
      setPreview(null);
      setPreviewError(null);
      return;
    }
    let live = true;
    const timer = window.setTimeout(() => {
      api
        .previewSchedule(pattern, zone || null)
        .then((p) => {
          if (!live) return;
          setPreview(p);
          setPreviewError(null);
        })
        .catch((e) => {
          if (!live) return;
          setPreview(null);
          setPreviewError(errorMessage(e));
        });
    }, 150);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [pattern, zone]);

  const set = (patch: Partial<BuilderState>) => setBuilder((b) => ({ ...b, ...patch }));

  const save = async () => {
    setSaving(true);
    setError(null);
    const input: JobInput = {
      id: draft?.id ?? null,
      name,
      kind: draft?.kind ?? "prompt",
      schedule: pattern,
      timezone: zone || null,
      prompt,
      workspace: workspace.trim() || null,
      model: draft?.model ?? null,
      delivery,
      overlap,
      catchUp,
      timeoutSecs: Number(timeout) || null,
      maxRetries: Number(retries) || 0,
      enabled: draft?.enabled ?? true,
    };
    try {
      await api.saveSchedule(input);
      onSaved();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setSaving(false);
    }
  };

  return (
    <form
      className="card schedule-editor"
      data-testid="schedule-editor"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <h2>{draft ? t("schedules.editTitle", { name: draft.name }) : t("schedules.newTitle")}</h2>
      <label htmlFor={ids.name}>{t("schedules.name")}</label>
      <input id={ids.name} data-testid="schedule-name" value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor={ids.prompt}>{t("schedules.prompt")}</label>
      <textarea id={ids.prompt} data-testid="schedule-prompt" rows={3} value={prompt} onChange={(e) => setPrompt(e.target.value)} />
      <label htmlFor={ids.ws}>{t("schedules.workspace")}</label>
      <input
        id={ids.ws}
        data-testid="schedule-workspace"
        placeholder={t("schedules.workspaceDefault")}
        value={workspace}
        onChange={(e) => setWorkspace(e.target.value)}
      />
      <fieldset className="schedule-builder">
        <legend>{t("schedules.when")}</legend>
        <label htmlFor={ids.preset}>{t("schedules.repeat")}</label>
        <select
          id={ids.preset}
          data-testid="schedule-preset"
          value={builder.preset}
          onChange={(e) => set({ preset: e.target.value as Preset, custom: builder.custom || pattern })}
        >
          {PRESETS.map((p) => (
            <option key={p} value={p}>
              {presetLabel(p, t)}
            </option>
          ))}
        </select>
        {builder.preset === "every" && (
          <label>
            {t("schedules.everyMinutes")}
            <input
              type="number"
              min={1}
              data-testid="schedule-every"
              value={builder.everyMinutes}
              onChange={(e) => set({ everyMinutes: Number(e.target.value) })}
            />
          </label>
        )}
        {builder.preset === "hourly" && (
          <label>
            {t("schedules.minutePast")}
            <input type="number" min={0} max={59} value={builder.minute} onChange={(e) => set({ minute: Number(e.target.value) })} />
          </label>
        )}
        {(builder.preset === "daily" || builder.preset === "weekdays" || builder.preset === "weekly") && (
          <label>
            {t("schedules.at")}
            <input type="time" data-testid="schedule-time" value={builder.time} onChange={(e) => set({ time: e.target.value })} />
          </label>
        )}
        {builder.preset === "weekly" && (
          <label>
            {t("schedules.on")}
            <select value={builder.weekday} onChange={(e) => set({ weekday: Number(e.target.value) })}>
              {[1, 2, 3, 4, 5, 6, 0].map((d) => (
                <option key={d} value={d}>
                  {weekdayLabel(d, t)}
                </option>
              ))}
            </select>
          </label>
        )}
        {builder.preset === "custom" && (
          <label>
            {t("schedules.cron")}
            <input data-testid="schedule-custom" value={builder.custom} placeholder="0 9 * * 1-5" onChange={(e) => set({ custom: e.target.value })} />
          </label>
        )}
        <label htmlFor={ids.zone}>{t("schedules.zone")}</label>
        <input id={ids.zone} data-testid="schedule-zone" list={ids.zones} value={zone} onChange={(e) => setZone(e.target.value)} />
        <datalist id={ids.zones}>
          {zones.current.map((z) => (
            <option key={z} value={z} />
          ))}
        </datalist>
        <p className="small">
          {t("schedules.makes")} <code data-testid="schedule-pattern">{pattern || "—"}</code>
        </p>
        {previewError && (
          <p className="error small" role="alert" data-testid="schedule-preview-error">
            {previewError}
          </p>
        )}
        {preview && (
          <div data-testid="schedule-preview">
            <p className="small muted">{t("schedules.nextFive", { zone: preview.timezone })}</p>
            <ol className="small">
              {preview.next.map((n) => (
                <li key={n}>{localTime(n)}</li>
              ))}
            </ol>
          </div>
        )}
      </fieldset>
      <fieldset className="schedule-policies">
        <legend>{t("schedules.policies")}</legend>
        <label>
          <input type="checkbox" data-testid="schedule-notify" checked={delivery === "notify"} onChange={(e) => setDelivery(e.target.checked ? "notify" : "silent")} />
          {t("schedules.notify")}
        </label>
        <label>
          {t("schedules.overlapLabel")}
          <select data-testid="schedule-overlap" value={overlap} onChange={(e) => setOverlap(e.target.value as OverlapPolicy)}>
            {OVERLAPS.map((o) => (
              <option key={o} value={o}>
                {overlapLabel(o, t)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t("schedules.catchUpLabel")}
          <select data-testid="schedule-catch-up" value={catchUp} onChange={(e) => setCatchUp(e.target.value as CatchUpPolicy)}>
            {CATCH_UPS.map((c) => (
              <option key={c} value={c}>
                {catchUpLabel(c, t)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t("schedules.timeout")}
          <input type="number" min={1} value={timeout} onChange={(e) => setTimeoutSecs(e.target.value)} />
        </label>
        <label>
          {t("schedules.retries")}
          <input type="number" min={0} max={5} value={retries} onChange={(e) => setRetries(e.target.value)} />
        </label>
      </fieldset>
      {error && (
        <p className="error" role="alert" data-testid="schedule-save-error">
          {error}
        </p>
      )}
      <div className="row">
        <button type="submit" className="btn primary" data-testid="schedule-save" disabled={saving || !pattern}>
          {t("schedules.save")}
        </button>
        <button type="button" className="btn ghost" onClick={onCancel}>
          {t("schedules.cancel")}
        </button>
      </div>
    </form>
  );
}

function RunHistory({ jobId, onOpenChat }: { jobId: string; onOpenChat: (chatId: string) => void }) {
  const { t } = useTranslation();
  const [runs, setRuns] = useState<RunRecord[] | null>(null);
  const load = useCallback(() => {
    void api.scheduleHistory(jobId, 50).then(setRuns).catch(() => setRuns([]));
  }, [jobId]);
  useEffect(() => {
    load();
    let un: (() => void) | null = null;
    let live = true;
    void listenRuntimeEvents((ev) => {
      if (ev.name === "scheduled_run_updated" && ev.value.jobId === jobId) load();
    }).then((u) => {
      if (live) un = u;
      else u();
    });
    return () => {
      live = false;
      un?.();
    };
  }, [jobId, load]);
  if (!runs) return <p className="muted small">{t("schedules.loading")}</p>;
  if (runs.length === 0) return <p className="muted small" data-testid="run-history-empty">{t("schedules.noRuns")}</p>;
  return (
    <table className="run-history" data-testid="run-history">
      <thead>
        <tr>
          <th>{t("schedules.col.started")}</th>
          <th>{t("schedules.col.outcome")}</th>
          <th>{t("schedules.col.steps")}</th>
          <th>{t("schedules.col.detail")}</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {runs.map((r) => (
          <tr key={r.id} data-testid="run-row" data-status={r.status}>
            <td>
              {when(r.startedAt ?? r.claimedAt)}
              {r.catchUp && <span className="badge">{t("schedules.catchUpBadge", { slot: when(r.slot) })}</span>}
            </td>
            <td>
              <span className={`badge status-${r.status}`}>{statusLabel(r.status, t)}</span>
            </td>
            <td>{r.steps}</td>
            <td className="small">
              {r.detail}
              {r.denied.map((d, i) => (
                <div key={i} className="denied" data-testid="run-denied">
                  {t("schedules.denied", { tool: d.tool, reason: d.reason })}
                </div>
              ))}
            </td>
            <td>
              {r.chatId && (
                <button type="button" className="btn tiny ghost" data-testid="run-open-chat" onClick={() => onOpenChat(r.chatId ?? "")}>
                  {t("schedules.openChat")}
                </button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The Schedules page: jobs with next run and last outcome, Run now, Pause, Edit, history. */
export function SchedulesView({ onOpenChat }: { onOpenChat: (chatId: string) => void }) {
  const { t } = useTranslation();
  const [jobs, setJobs] = useState<JobView[] | null>(null);
  const [editing, setEditing] = useState<JobView | "new" | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const reload = useCallback(() => {
    api
      .listSchedules()
      .then((j) => {
        setJobs(j);
        setError(null);
      })
      .catch((e) => setError(errorMessage(e)));
  }, []);

  useEffect(() => {
    reload();
    let un: (() => void) | null = null;
    let live = true;
    void listenRuntimeEvents((ev) => {
      if (ev.name === "scheduled_run_updated") reload();
    }).then((u) => {
      if (live) un = u;
      else u();
    });
    return () => {
      live = false;
      un?.();
    };
  }, [reload]);

  const act = async (f: () => Promise<unknown>) => {
    try {
      await f();
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
    reload();
  };

  return (
    <section className="page schedules" aria-label={t("schedules.title")}>
      <header className="page-head">
        <h1>{t("schedules.title")}</h1>
        <button type="button" className="btn primary" data-testid="schedule-new" onClick={() => setEditing("new")}>
          {t("schedules.new")}
        </button>
      </header>
      <p className="muted">{t("schedules.intro")}</p>
      {error && (
        <p className="error" role="alert" data-testid="error-banner">
          {error}
        </p>
      )}
      {editing && (
        <ScheduleEditor
          key={editing === "new" ? "new" : editing.job.id}
          job={editing === "new" ? null : editing}
          onCancel={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            reload();
          }}
        />
      )}
      {jobs && jobs.length === 0 && !editing && <p className="muted" data-testid="schedules-empty">{t("schedules.empty")}</p>}
      {jobs && jobs.length > 0 && (
        <table className="schedule-list" data-testid="schedule-list">
          <thead>
            <tr>
              <th>{t("schedules.col.name")}</th>
              <th>{t("schedules.col.schedule")}</th>
              <th>{t("schedules.col.next")}</th>
              <th>{t("schedules.col.last")}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {jobs.map((v) => {
              const j = v.job;
              return (
                <tr key={j.id} data-testid={`schedule-row-${j.id}`} data-job-name={j.name}>
                  <td>
                    <strong>{j.name}</strong>
                    {!j.enabled && <span className="badge">{t("schedules.paused")}</span>}
                  </td>
                  <td>
                    <code>{j.schedule}</code> <span className="muted small">{j.timezone}</span>
                  </td>
                  <td data-testid="schedule-next">{j.enabled ? when(v.nextRun) : t("schedules.paused")}</td>
                  <td data-testid="schedule-last">
                    {v.lastRun ? <span className={`badge status-${v.lastRun.status}`}>{statusLabel(v.lastRun.status, t)}</span> : "—"}
                  </td>
                  <td className="row-actions">
                    <button type="button" className="btn small" data-testid="schedule-run-now" onClick={() => void act(() => api.runScheduleNow(j.id))}>
                      {t("schedules.runNow")}
                    </button>
                    <button type="button" className="btn small ghost" data-testid="schedule-pause" onClick={() => void act(() => api.pauseSchedule(j.id, j.enabled))}>
                      {j.enabled ? t("schedules.pause") : t("schedules.resume")}
                    </button>
                    <button type="button" className="btn small ghost" data-testid="schedule-edit" onClick={() => setEditing(v)}>
                      {t("schedules.edit")}
                    </button>
                    <button
                      type="button"
                      className="btn small ghost"
                      data-testid="schedule-history"
                      aria-expanded={open === j.id}
                      onClick={() => setOpen(open === j.id ? null : j.id)}
                    >
                      {t("schedules.history")}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {open && (
        <div className="card">
          <h2>{t("schedules.historyOf", { name: jobs?.find((j) => j.job.id === open)?.job.name ?? open })}</h2>
          <RunHistory jobId={open} onOpenChat={onOpenChat} />
        </div>
      )}
    </section>
  );
}
