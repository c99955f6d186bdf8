import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import type { PhaseStatus, Plan } from "../types";

function statusText(status: PhaseStatus, t: TFunction): string {
  switch (status) {
    case "completed":
      return t("plan.status.completed");
    case "in_progress":
      return t("plan.status.inProgress");
    case "pending":
      return t("plan.status.pending");
  }
}

function StatusIcon({ status }: { status: PhaseStatus }) {
  // Inline SVG: a check in a filled circle, a ring with a dot, an empty ring.
  return (
    <svg className="plan-icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">
      {status === "completed" && (
        <>
          <circle cx="8" cy="8" r="7" className="fill" />
          <path d="M4.8 8.3 7 10.4l4.2-4.6" fill="none" className="mark" strokeWidth="1.8" strokeLinecap="round" strokeLinejoin="round" />
        </>
      )}
      {status === "in_progress" && (
        <>
          <circle cx="8" cy="8" r="6.2" fill="none" className="ring" strokeWidth="1.6" />
          <circle cx="8" cy="8" r="3" className="fill" />
        </>
      )}
      {status === "pending" && <circle cx="8" cy="8" r="6.2" fill="none" className="ring" strokeWidth="1.6" />}
    </svg>
  );
}

/**
 * The chat's plan (planning_update): the goal, each phase with its status, the phase in progress
 * highlighted, and how many are done. Collapsible; collapsed it still shows the progress and the
 * current phase.
 */
export function PlanView({ plan }: { plan: Plan }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(true);
  const total = plan.phases.length;
  const done = plan.phases.filter((p) => p.status === "completed").length;
  const current = plan.phases.find((p) => p.status === "in_progress") ?? null;
  const finished = total > 0 && done === total;
  const bodyId = "plan-steps";
  return (
    <section className={`plan-view${finished ? " finished" : ""}`} data-testid="plan-view" aria-label={t("plan.label")}>
      <button
        type="button"
        className="plan-head"
        aria-expanded={open}
        aria-controls={bodyId}
        data-testid="plan-toggle"
        onClick={() => setOpen(!open)}
      >
        <span className="plan-label">{t("plan.label")}</span>
        <span className="plan-goal" data-testid="plan-goal" title={plan.goal}>
          {plan.goal}
        </span>
        <span className="plan-progress" data-testid="plan-progress">
          {t("plan.progress", { done, total })}
        </span>
        <span className="plan-chevron" aria-hidden="true">
          {open ? "▾" : "▸"}
        </span>
      </button>
      <div
        className="plan-bar"
        role="progressbar"
        aria-label={t("plan.progressLabel")}
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={done}
      >
        <span style={{ width: total ? `${(100 * done) / total}%` : "0%" }} />
      </div>
      {!open && current && (
        <p className="plan-current muted small">
          {t("plan.now")} <strong>{current.title}</strong>
        </p>
      )}
      {open && (
        <ol className="plan-steps" id={bodyId}>
          {plan.phases.map((p, i) => (
            <li
              key={p.id}
              className={`plan-step ${p.status}`}
              data-testid={`plan-step-${i}`}
              data-status={p.status}
              aria-current={p.status === "in_progress" ? "step" : undefined}
            >
              <StatusIcon status={p.status} />
              <span className="plan-step-title">{p.title}</span>
              {(p.capabilities ?? []).length > 0 && (
                <span className="plan-step-caps muted small">{(p.capabilities ?? []).join(", ")}</span>
              )}
              <span className="plan-step-status small">{statusText(p.status, t)}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
