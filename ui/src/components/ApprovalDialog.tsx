import { useEffect, useId, useRef, useState, type KeyboardEvent as ReactKeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import { api } from "../api";
import { argsSummary, describeRule, prettyJson } from "../format";
import { matcherText, middleWildcardExample, parseMatcherText } from "../ruleText";
import { InlineCode } from "./InlineCode";
import { DiffView } from "./ToolCard";
import type {
  ApprovalAction,
  ApprovalResponse,
  JsonValue,
  PendingApproval,
  RuleDraft,
  RuleMatcher,
  SegmentView,
} from "../types";

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

/** A button's label: ours for the actions we know (so it is translated), else the backend's. */
function actionLabel(a: ApprovalAction, t: TFunction): string {
  switch (a.id) {
    case "allow_once":
      return t("approval.action.allowOnce");
    case "allow_session":
      return t("approval.action.allowSession");
    case "allow_global":
      return t("approval.action.allowGlobal");
    case "reject":
      return t("approval.action.reject");
    default:
      return a.label;
  }
}

function str(args: JsonValue, k: string): string | null {
  if (args && typeof args === "object" && !Array.isArray(args)) {
    const v = args[k];
    if (typeof v === "string") return v;
  }
  return null;
}

/** The shell command of a call: `command` or (Suzent's shell tools) `content`, for shell tools. */
export function commandOf(approval: Pick<PendingApproval, "toolName" | "args">): string | null {
  const shell = /command|shell|bash/.test(approval.toolName);
  if (!shell) return null;
  return str(approval.args, "command") ?? str(approval.args, "content");
}

/** Every http(s) URL among a call's string arguments (nested ones too), with its origin. */
export function urlsOf(args: JsonValue): { url: string; origin: string }[] {
  const out: { url: string; origin: string }[] = [];
  const visit = (v: JsonValue) => {
    if (typeof v === "string") {
      if (!/^https?:\/\//i.test(v.trim())) return;
      try {
        const u = new URL(v.trim());
        if (!out.some((x) => x.url === u.href)) out.push({ url: u.href, origin: u.origin });
      } catch {
        /* not a URL after all */
      }
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === "object") Object.values(v).forEach(visit);
  };
  visit(args);
  return out;
}

/** A `social_message` send: the channel and recipient (`CHANNEL:CONVERSATION`) and the text. */
export function socialOf(
  approval: Pick<PendingApproval, "toolName" | "args">,
): { channel: string; recipient: string; message: string } | null {
  if (approval.toolName !== "social_message") return null;
  const recipient = str(approval.args, "recipient");
  if (recipient === null) return null;
  const cut = recipient.indexOf(":");
  return {
    channel: cut > 0 ? recipient.slice(0, cut) : recipient,
    recipient,
    message: str(approval.args, "message") ?? "",
  };
}

/** What the call would change or run, shown so the user can decide without leaving the dialog. */
function Subject({ approval }: { approval: PendingApproval }) {
  const { t } = useTranslation();
  const path = str(approval.args, "file_path") ?? str(approval.args, "path");
  if (approval.toolName === "edit_file" && str(approval.args, "old_string") !== null) {
    return (
      <section className="approval-subject" data-testid="approval-diff">
        <h3>{t("approval.editOf", { path: path ?? "" })}</h3>
        <DiffView before={str(approval.args, "old_string") ?? ""} after={str(approval.args, "new_string") ?? ""} />
      </section>
    );
  }
  if (approval.toolName === "write_file" && str(approval.args, "content") !== null) {
    return (
      <section className="approval-subject" data-testid="approval-diff">
        <h3>{t("approval.writeOf", { path: path ?? "" })}</h3>
        <DiffView before="" after={str(approval.args, "content") ?? ""} />
      </section>
    );
  }
  const social = socialOf(approval);
  if (social !== null) {
    return (
      <section className="approval-subject" data-testid="approval-social">
        <h3>
          {t("approval.socialTo")} <code data-testid="approval-social-recipient">{social.recipient}</code>{" "}
          {t("approval.socialOn")} <code data-testid="approval-social-channel">{social.channel}</code>
        </h3>
        <pre className="approval-summary" data-testid="approval-social-message">
          {social.message}
        </pre>
      </section>
    );
  }
  const command = commandOf(approval);
  if (command !== null) return <CommandSubject approval={approval} command={command} />;
  const summary = argsSummary(approval.args);
  return summary ? <pre className="approval-summary">{summary}</pre> : null;
}

/** The full command, and each command of the script with what the policy says about it. */
function CommandSubject({ approval, command }: { approval: PendingApproval; command: string }) {
  const { t } = useTranslation();
  const [segments, setSegments] = useState<SegmentView[] | null>(null);
  useEffect(() => {
    let live = true;
    api.explainPermission(approval.toolName, approval.args, null, approval.chatId).then(
      (e) => live && setSegments(e.segments),
      () => live && setSegments([]),
    );
    return () => {
      live = false;
    };
  }, [approval.toolName, approval.args, approval.chatId]);
  return (
    <section className="approval-subject">
      <h3>{t("approval.command")}</h3>
      <pre className="approval-command" data-testid="approval-command">
        {command}
      </pre>
      {segments && segments.length > 1 && (
        <ol className="approval-segments" data-testid="approval-segments" aria-label={t("approval.segments")}>
          {segments.map((s, i) => (
            <li key={i} data-testid="approval-segment">
              <code>{s.words.join(" ")}</code>
              <span className={`badge behavior-${s.verdict}`}>{s.verdict}</span>
              <span className="muted small">{s.verdictReason}</span>
            </li>
          ))}
        </ol>
      )}
      {segments && segments.length === 1 && (
        <p className="muted small" data-testid="approval-segments">
          {segments[0].verdictReason}
        </p>
      )}
    </section>
  );
}

/**
 * What is wrong with an edited matcher text, in the user's language where we know the case; a
 * text that the engine's syntax cannot read (an unterminated quote, an empty word) keeps the
 * reader's own message, which names the problem.
 */
function ruleProblem(like: RuleMatcher, text: string, error: string, t: TFunction): string {
  const blank = text.trim() === "";
  switch (like.kind) {
    case "prefix":
      return blank ? t("approval.ruleEdit.prefixEmpty") : t("approval.ruleEdit.unreadable", { error });
    case "path":
      return t("approval.ruleEdit.globEmpty");
    case "destination":
      return blank ? t("approval.ruleEdit.patternEmpty") : t("approval.ruleEdit.patternSpaces");
    case "exact":
      return t("approval.ruleEdit.exactInvalid");
    case "all":
      return t("approval.ruleEdit.unreadable", { error });
  }
}

/** How the matcher text of a kind is written, shown under the rule editor. */
function ruleHint(kind: RuleMatcher["kind"], t: TFunction): string | null {
  switch (kind) {
    case "prefix":
      return t("approval.ruleEdit.hint.prefix");
    case "path":
      return t("approval.ruleEdit.hint.path");
    case "destination":
      return t("approval.ruleEdit.hint.destination");
    case "exact":
      return t("approval.ruleEdit.hint.exact");
    case "all":
      return null;
  }
}

/** A rule as the dialog shows it: a rule to save, or what is wrong with the edited text. */
type ShownRule = { rule: RuleDraft } | { problem: string };

/** The rule an action saves as the user sees it: the offered one, or the edited text read back. */
function shownRule(offered: RuleDraft, text: string | undefined, t: TFunction): ShownRule {
  if (text === undefined) return { rule: offered };
  const parsed = parseMatcherText(offered.matcher, text);
  if ("error" in parsed) return { problem: ruleProblem(offered.matcher, text, parsed.error, t) };
  return { rule: { ...offered, matcher: parsed.matcher } };
}

/**
 * The rule a remember action adds, in words, with an editor for its matcher in the engine's rule
 * text (the same text `suzent resume --rule` takes) and a warning when a prefix's wildcard stands
 * before its last word.
 */
function RuleProposal({
  actionId,
  offered,
  shown,
  text,
  editing,
  onToggle,
  onEdit,
  inputRef,
}: {
  actionId: string;
  offered: RuleDraft;
  shown: ShownRule;
  text: string;
  editing: boolean;
  onToggle: () => void;
  onEdit: (text: string) => void;
  inputRef: (el: HTMLInputElement | null) => void;
}) {
  const { t } = useTranslation();
  const id = useId();
  const editButton = useRef<HTMLButtonElement>(null);
  const kind = offered.matcher.kind;
  const rule = "rule" in shown ? shown.rule : null;
  const problem = "problem" in shown ? shown.problem : null;
  const example = rule?.matcher.kind === "prefix" ? middleWildcardExample(rule.matcher.words) : null;
  const hint = ruleHint(kind, t);
  const described = [hint && editing ? `${id}-hint` : "", problem ? `${id}-error` : "", example ? `${id}-warning` : ""].filter(Boolean).join(" ");
  return (
    <span className="rule-explain" data-testid={`approval-rule-${actionId}`}>
      {rule ? t("approval.addsRule", { rule: describeRule(rule) }) : t("approval.ruleEdit.invalid")}{" "}
      {kind !== "all" && (
        <button
          ref={editButton}
          type="button"
          className="btn tiny ghost"
          aria-expanded={editing}
          data-testid={`approval-rule-edit-${actionId}`}
          onClick={onToggle}
        >
          {editing ? t("approval.ruleEdit.done") : t("approval.ruleEdit.edit")}
        </button>
      )}
      {editing && (
        <span className="field rule-edit">
          <label htmlFor={id}>{t("approval.ruleEdit.label")}</label>
          <input
            id={id}
            ref={inputRef}
            data-testid={`approval-rule-input-${actionId}`}
            value={text}
            spellCheck={false}
            autoComplete="off"
            aria-invalid={!!problem}
            aria-describedby={described || undefined}
            onChange={(e) => onEdit(e.target.value)}
            onKeyDown={(e) => {
              // Esc closes the editor (the text stays as typed); a second Esc rejects the call.
              if (e.key === "Escape") {
                e.preventDefault();
                e.stopPropagation();
                onToggle();
                editButton.current?.focus();
              }
            }}
          />
          {hint && (
            <small className="muted" id={`${id}-hint`}>
              {hint}
            </small>
          )}
        </span>
      )}
      {problem && (
        <span className="field-error" role="alert" id={`${id}-error`}>
          {problem}
        </span>
      )}
      {example && (
        <small className="rule-warning" id={`${id}-warning`} data-testid={`approval-rule-warning-${actionId}`}>
          <InlineCode text={t("approval.middleWildcard", { example })} />
        </small>
      )}
    </span>
  );
}

const FOCUSABLE = 'button:not([disabled]), [href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex="-1"])';

/** Asks the user about one tool call at a time, with the actions the backend offers, in order. */
export function ApprovalDialog({ approvals, onResolve }: ApprovalDialogProps) {
  const { t } = useTranslation();
  const [answers, setAnswers] = useState<Record<string, ApprovalResponse>>({});
  const [feedback, setFeedback] = useState("");
  const [busy, setBusy] = useState(false);
  // Edited rule text per action of the current approval (absent: the rule as offered), and the
  // action whose rule editor is open.
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [editing, setEditing] = useState<string | null>(null);
  const ruleInputs = useRef<Record<string, HTMLInputElement | null>>({});
  // Set when an answer was refused for its rule: the rule's input gets the focus once rendered.
  const [focusRule, setFocusRule] = useState<{ actionId: string } | null>(null);
  const titleId = useId();
  const feedbackId = useId();
  const firstButton = useRef<HTMLButtonElement>(null);
  const dialog = useRef<HTMLDivElement>(null);

  const open = approvals.filter((a) => !answers[a.id]);
  const current = open[0] ?? null;
  const position = current ? approvals.indexOf(current) + 1 : 0;
  const actions: ApprovalAction[] = current?.decision.actions ?? [];
  const feedbackActions = actions.filter((a) => a.acceptsFeedback);

  useEffect(() => {
    firstButton.current?.focus();
    setEdits({});
    setEditing(null);
  }, [current?.id]);

  useEffect(() => {
    if (focusRule) ruleInputs.current[focusRule.actionId]?.focus();
  }, [focusRule]);

  const choose = async (action: ApprovalAction) => {
    if (!current || busy) return;
    const shown = action.rule ? shownRule(action.rule, edits[action.id], t) : null;
    if (shown && "problem" in shown) {
      // Nothing is sent: the editor opens (if it was closed) on the text to fix, whose problem
      // is shown under it.
      setEditing(action.id);
      setFocusRule({ actionId: action.id });
      return;
    }
    const rule = shown && "rule" in shown ? shown.rule : null;
    const text = feedback.trim();
    const answer: ApprovalResponse = {
      request_id: current.id,
      tool_call_id: current.toolCallId,
      action_id: action.id,
      feedback: action.acceptsFeedback && text ? text : null,
      // The rule exactly as shown (edited or not) is the one saved.
      ...(rule ? { rule } : {}),
    };
    const next = { ...answers, [current.id]: answer };
    setFeedback("");
    const sameRun = approvals.filter((a) => a.runId === current.runId);
    // An answer that adds a rule is sent at once, with the run's answers so far: the backend
    // decides the other waiting calls again, runs those the rule allows, and their dialogs go
    // away (tool_permission_resolution). Other answers wait until the whole run is answered.
    const now = rule ? sameRun.filter((a) => next[a.id]) : sameRun;
    if (rule || sameRun.every((a) => next[a.id])) {
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
  const d = current.decision;
  const urls = urlsOf(current.args);

  // Focus stays inside the dialog (Tab and Shift+Tab wrap around); Esc rejects.
  const onKeyDown = (e: ReactKeyboardEvent<HTMLDivElement>) => {
    if (e.key === "Escape") {
      const reject = actions.find((a) => a.id === "reject");
      e.preventDefault();
      e.stopPropagation();
      if (reject) void choose(reject);
      return;
    }
    if (e.key !== "Tab" || !dialog.current) return;
    const items = [...dialog.current.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => !el.closest("[hidden]"));
    if (items.length === 0) return;
    const first = items[0];
    const last = items[items.length - 1];
    const active = document.activeElement;
    if (e.shiftKey && (active === first || !dialog.current.contains(active))) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && (active === last || !dialog.current.contains(active))) {
      e.preventDefault();
      first.focus();
    }
  };

  return (
    <div className="modal-backdrop">
      <div
        ref={dialog}
        className="modal approval"
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        data-testid="approval-dialog"
        data-approval-id={current.id}
        onKeyDown={onKeyDown}
      >
        <header className="approval-head">
          <h2 id={titleId}>
            {t("approval.titleBefore")}
            <code>{current.toolName}</code>
            {t("approval.titleAfter")}
          </h2>
          {approvals.length > 1 && <span className="muted">{t("approval.position", { position, total: approvals.length })}</span>}
        </header>
        <div className="approval-body">
          <Subject approval={current} />
          {urls.length > 0 && (
            <ul className="approval-urls" aria-label={t("approval.urls")}>
              {urls.map((u) => (
                <li key={u.url}>
                  <span className="muted small">{t("approval.url")}</span> <code data-testid="approval-url">{u.url}</code>{" "}
                  <span className="muted small">{t("approval.origin")}</span> <code data-testid="approval-origin">{u.origin}</code>
                </li>
              ))}
            </ul>
          )}
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
              <small className="muted">{t("approval.sentWith", { actions: feedbackActions.map((a) => actionLabel(a, t)).join(", ") })}</small>
            </div>
          )}
        </div>
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
                {actionLabel(a, t)}
                {a.id === "allow_once" && <kbd>Ctrl+Shift+A</kbd>}
                {a.id === "reject" && <kbd>Ctrl+Shift+R</kbd>}
                {a.id === "reject" && <kbd>Esc</kbd>}
              </button>
              <span className="action-desc">
                {!a.rule && <InlineCode text={a.description} />}
                {a.rule && (
                  <RuleProposal
                    actionId={a.id}
                    offered={a.rule}
                    shown={shownRule(a.rule, edits[a.id], t)}
                    text={edits[a.id] ?? matcherText(a.rule.matcher)}
                    editing={editing === a.id}
                    onToggle={() => setEditing(editing === a.id ? null : a.id)}
                    onEdit={(value) => setEdits((prev) => ({ ...prev, [a.id]: value }))}
                    inputRef={(el) => {
                      ruleInputs.current[a.id] = el;
                    }}
                  />
                )}
              </span>
            </li>
          ))}
        </ul>
        {actions.length === 0 && <p className="muted">{t("approval.noActions")}</p>}
      </div>
    </div>
  );
}
