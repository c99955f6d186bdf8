import { useEffect, useId, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import { argsSummary, describeRule, prettyJson } from "../format";
import { matcherText, middleWildcardExample, parseMatcherText } from "../ruleText";
import { InlineCode } from "./InlineCode";
import type { ApprovalAction, ApprovalResponse, PendingApproval, RuleDraft } from "../types";

export interface ApprovalDialogProps {
  /** Pending approvals of one chat, oldest first. */
  approvals: PendingApproval[];
  /** Called once every approval of a run has an answer (the runtime resumes a run as a whole). */
  onResolve: (answers: ApprovalResponse[]) => void | Promise<void>;
}

function riskLabel(risk: PendingApproval["decision"]["risk"], t: TFunction): string {
  switch (risk) {
    case "low":
      return t("approval.risk.low");
    case "medium":
      return t("approval.risk.medium");
    case "high":
      return t("approval.risk.high");
  }
}

/** Asks the user about one tool call at a time, with the actions the backend offers, in order. */
export function ApprovalDialog({ approvals, onResolve }: ApprovalDialogProps) {
  const { t } = useTranslation();
  const [answers, setAnswers] = useState<Record<string, ApprovalResponse>>({});
  const [feedback, setFeedback] = useState("");
  const [busy, setBusy] = useState(false);
  // Edited rule text per action of the current approval (absent: the rule as offered).
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [editing, setEditing] = useState<string | null>(null);
  const [ruleError, setRuleError] = useState<string | null>(null);
  const titleId = useId();
  const feedbackId = useId();
  const firstButton = useRef<HTMLButtonElement>(null);

  const open = approvals.filter((a) => !answers[a.id]);
  const current = open[0] ?? null;
  const position = current ? approvals.indexOf(current) + 1 : 0;
  const actions: ApprovalAction[] = current?.decision.actions ?? [];
  const feedbackActions = actions.filter((a) => a.acceptsFeedback);

  useEffect(() => {
    firstButton.current?.focus();
    setEdits({});
    setEditing(null);
    setRuleError(null);
  }, [current?.id]);

  /** The rule an action saves as the user sees it: the offered one, or the edited text read back. */
  const shownRule = (action: ApprovalAction): { rule: RuleDraft | null } | { error: string } => {
    if (!action.rule) return { rule: null };
    const text = edits[action.id];
    if (text === undefined) return { rule: action.rule };
    const parsed = parseMatcherText(action.rule.matcher, text);
    if ("error" in parsed) return parsed;
    return { rule: { ...action.rule, matcher: parsed.matcher } };
  };

  const choose = async (action: ApprovalAction) => {
    if (!current || busy) return;
    const text = feedback.trim();
    const shown = shownRule(action);
    if ("error" in shown) {
      setRuleError(shown.error);
      return;
    }
    const answer: ApprovalResponse = {
      request_id: current.id,
      tool_call_id: current.toolCallId,
      action_id: action.id,
      feedback: action.acceptsFeedback && text ? text : null,
      // The rule exactly as shown (edited or not) is the one saved.
      ...(shown.rule ? { rule: shown.rule } : {}),
    };
    const next = { ...answers, [current.id]: answer };
    setFeedback("");
    const sameRun = approvals.filter((a) => a.runId === current.runId);
    // An answer that adds a rule is sent at once: the backend decides the other waiting calls
    // again, runs those the rule allows, and their dialogs go away (tool_permission_resolution).
    const now = shown.rule ? sameRun.filter((a) => next[a.id]) : sameRun;
    if (shown.rule || sameRun.every((a) => next[a.id])) {
      setBusy(true);
      try {
        await onResolve(now.map((a) => next[a.id]));
      } finally {
        setBusy(false);
        setAnswers((prev) => {
          const copy = { ...prev };
          for (const a of sameRun) delete copy[a.id];
          return copy;
        });
      }
    } else {
      setAnswers(next);
    }
  };

  // Ctrl+Shift+A approves once, Ctrl+Shift+R rejects (when the backend offers them).
  const chooseRef = useRef(choose);
  chooseRef.current = choose;
  useEffect(() => {
    if (!current) return;
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || !e.shiftKey) return;
      const k = e.key.toLowerCase();
      const id = k === "a" ? "allow_once" : k === "r" ? "reject" : null;
      const action = id && actions.find((a) => a.id === id);
      if (action) {
        e.preventDefault();
        void chooseRef.current(action);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [current, actions]);

  if (!current) return null;
  const summary = argsSummary(current.args);
  const d = current.decision;

  return (
    <div className="modal-backdrop">
      <div className="modal approval" role="dialog" aria-labelledby={titleId} data-testid="approval-dialog">
        <header className="approval-head">
          <h2 id={titleId}>
            {t("approval.titleBefore")}
            <code>{current.toolName}</code>
            {t("approval.titleAfter")}
          </h2>
          {approvals.length > 1 && (
            <span className="muted">
              {t("approval.position", { position, total: approvals.length })}
            </span>
          )}
        </header>
        {summary && <pre className="approval-summary">{summary}</pre>}
        <details className="approval-args">
          <summary>{t("approval.allArguments")}</summary>
          <pre>{prettyJson(current.args)}</pre>
        </details>
        <div className="approval-why">
          <span className={`risk risk-${d.risk}`} data-testid="approval-risk" data-risk={d.risk}>
            {riskLabel(d.risk, t)}
          </span>
          <p data-testid="approval-reason">
            <InlineCode text={d.reason} />
          </p>
          <code className="reason-code" title={t("approval.reasonCode")}>
            {d.reasonCode}
          </code>
        </div>
        {feedbackActions.length > 0 && (
          <div className="field">
            <label htmlFor={feedbackId}>{t("approval.feedback")}</label>
            <textarea
              id={feedbackId}
              data-testid="approval-feedback"
              rows={2}
              value={feedback}
              placeholder={t("approval.feedbackPlaceholder")}
              onChange={(e) => setFeedback(e.target.value)}
            />
            <small className="muted">{t("approval.sentWith", { actions: feedbackActions.map((a) => a.label).join(", ") })}</small>
          </div>
        )}
        <ul className="approval-actions">
          {actions.map((a, i) => (
            <li key={a.id}>
              <button
                ref={i === 0 ? firstButton : undefined}
                type="button"
                className={a.id === "reject" ? "btn danger" : i === 0 ? "btn primary" : "btn"}
                data-testid={`approval-action-${a.id}`}
                disabled={busy}
                onClick={() => void choose(a)}
              >
                {a.label}
                {a.id === "allow_once" && <kbd>Ctrl+Shift+A</kbd>}
                {a.id === "reject" && <kbd>Ctrl+Shift+R</kbd>}
              </button>
              <span className="action-desc">
                <InlineCode text={a.description} />
                {a.rule && (
                  <RuleLine
                    action={a}
                    shown={shownRule(a)}
                    text={edits[a.id] ?? matcherText(a.rule.matcher)}
                    editing={editing === a.id}
                    error={editing === a.id ? ruleError : null}
                    onEdit={() => setEditing(editing === a.id ? null : a.id)}
                    onChange={(value) => {
                      setRuleError(null);
                      setEdits((prev) => ({ ...prev, [a.id]: value }));
                    }}
                  />
                )}
              </span>
            </li>
          ))}
        </ul>
        {actions.length === 0 && (
          <p className="muted">{t("approval.noActions")}</p>
        )}
      </div>
    </div>
  );
}

/** The rule an action saves, with an editor for its matcher and a warning for a middle wildcard. */
function RuleLine(props: {
  action: ApprovalAction;
  shown: { rule: RuleDraft | null } | { error: string };
  text: string;
  editing: boolean;
  error: string | null;
  onEdit: () => void;
  onChange: (value: string) => void;
}) {
  const { t } = useTranslation();
  const { action, shown, text, editing, error, onEdit, onChange } = props;
  const rule = "rule" in shown ? shown.rule : null;
  const editable = action.rule?.matcher.kind !== "all";
  const example = rule?.matcher.kind === "prefix" ? middleWildcardExample(rule.matcher.words) : null;
  return (
    <span className="rule-explain" data-testid={`approval-rule-${action.id}`}>
      {rule ? t("approval.addsRule", { rule: describeRule(rule) }) : t("approval.ruleInvalid", { error: "error" in shown ? shown.error : "" })}
      {editable && (
        <button type="button" className="btn link" data-testid={`approval-edit-${action.id}`} onClick={onEdit}>
          {editing ? t("approval.doneEditing") : t("approval.editRule")}
        </button>
      )}
      {editing && (
        <input
          data-testid={`approval-rule-input-${action.id}`}
          aria-label={t("approval.ruleInput")}
          value={text}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
      {example && (
        <small className="warning" data-testid={`approval-rule-warning-${action.id}`}>
          {t("approval.middleWildcard", { example })}
        </small>
      )}
      {error && <small className="error">{error}</small>}
    </span>
  );
}
