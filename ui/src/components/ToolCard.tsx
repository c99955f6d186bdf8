import { diffLines } from "diff";
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import { api } from "../api";
import { argsSummary, describeRule, formatDuration, modeLabel, prettyJson } from "../format";
import type { ToolItem } from "../model";
import type { JsonValue } from "../types";
import { SpeechPlayer, speechClipOf } from "./SpeechPlayer";

function statusLabel(status: ToolItem["status"], t: TFunction): string {
  switch (status) {
    case "running":
      return t("tool.status.running");
    case "ok":
      return t("tool.status.ok");
    case "error":
      return t("tool.status.error");
    case "denied":
      return t("tool.status.denied");
    case "waiting":
      return t("tool.status.waiting");
  }
}

function field(args: JsonValue, k: string): string | null {
  if (args && typeof args === "object" && !Array.isArray(args)) {
    const v = args[k];
    if (typeof v === "string") return v;
  }
  return null;
}

/** Line diff of an edit (old → new) or of a new file's content. */
export function DiffView({ before, after }: { before: string; after: string }) {
  const { t } = useTranslation();
  const parts = diffLines(before, after);
  const lines: { sign: "+" | "-" | " "; text: string }[] = [];
  for (const p of parts) {
    const sign = p.added ? "+" : p.removed ? "-" : " ";
    const body = p.value.endsWith("\n") ? p.value.slice(0, -1) : p.value;
    for (const line of body.split("\n")) lines.push({ sign, text: line });
  }
  return (
    <pre className="diff" aria-label={t("tool.changes")}>
      {lines.map((l, i) => (
        <div key={i} className={l.sign === "+" ? "add" : l.sign === "-" ? "del" : "ctx"}>
          <span className="sign" aria-hidden="true">
            {l.sign}
          </span>
          {l.text || " "}
        </div>
      ))}
    </pre>
  );
}

/**
 * Who allowed (or stopped) a call and how, in words: the user's answer when there was one, else
 * the engine's decision by its reason code. "full access" is only ever said of full access.
 */
export function decisionText(item: Pick<ToolItem, "decision" | "resolution" | "mode">, t: TFunction, ruleText: (id: string) => string | null): string | null {
  const r = item.resolution;
  if (r) {
    switch (r.actionId) {
      case "allow_once":
        return t("tool.allowedBy.youOnce");
      case "allow_session":
        return t("tool.allowedBy.youChat");
      case "allow_global":
        return t("tool.allowedBy.youAlways");
      case "reject":
        return t("tool.allowedBy.youRejected");
    }
  }
  const d = item.decision;
  if (!d) return null;
  if (d.behavior === "deny") return t("tool.decision.denied", { reason: d.reason });
  if (d.behavior === "ask") return t("tool.decision.needsApproval", { reason: d.reason });
  const mode = item.mode ? modeLabel(item.mode) : null;
  switch (d.reasonCode) {
    case "full_access":
      return t("tool.decision.fullAccess");
    case "read_only":
    case "read_only_command":
      return mode ? t("tool.decision.readOnlyIn", { mode }) : t("tool.decision.readOnly");
    case "auto_workspace_write":
      return t("tool.decision.autoWorkspace");
    case "tool_default_allow":
      return t("tool.decision.toolDefault");
    case "rule_allow": {
      const rules = (d.matchedRules ?? []).map((id) => ruleText(id) ?? id);
      return rules.length ? t("tool.decision.ruleNamed", { rule: rules.join("; ") }) : t("tool.decision.rule");
    }
  }
  if (d.source === "auto_classifier")
    return d.reviewerModel ? t("tool.decision.reviewerModel", { model: d.reviewerModel }) : t("tool.decision.reviewer");
  if (d.source === "rule") return t("tool.decision.rule");
  return t("tool.decision.allowed");
}

// The rules a card names, read once per window (rule ids never change meaning).
const ruleCache = new Map<string, string>();
let ruleLoad: Promise<void> | null = null;

function useRuleText(ids: string[], chatId: string | null): (id: string) => string | null {
  const [, setTick] = useState(0);
  const missing = ids.some((id) => !ruleCache.has(id));
  useEffect(() => {
    if (!missing || !chatId) return;
    ruleLoad ??= api
      .listRules(null)
      .then((rules) => {
        for (const r of rules) ruleCache.set(r.id, r.description?.trim() || describeRule(r));
      })
      .catch(() => {
        /* the card shows the rule id */
      })
      .finally(() => {
        ruleLoad = null;
      });
    void ruleLoad.then(() => setTick((n) => n + 1));
  }, [missing, chatId]);
  return (id) => ruleCache.get(id) ?? null;
}

function DecisionNote({ item, chatId }: { item: ToolItem; chatId: string | null }) {
  const { t } = useTranslation();
  const ruleText = useRuleText(item.resolution ? [] : (item.decision?.matchedRules ?? []), chatId);
  const text = decisionText(item, t, ruleText);
  if (!text) return null;
  return (
    <p className="decision-note" data-testid="tool-decision">
      {text} {item.decision && !item.resolution && <code className="reason-code">{item.decision.reasonCode}</code>}
    </p>
  );
}

const OUTPUT_PREVIEW = 4000;

/**
 * One tool call: name, arguments, status, output, duration; a diff for file edits; a player for
 * the audio of `speak`. With `autoplaySpeech` a clip plays by itself when the call finishes while
 * the card is shown (a clip loaded with the chat's history never does).
 */
export function ToolCard({ item, chatId = null, autoplaySpeech = false }: { item: ToolItem; chatId?: string | null; autoplaySpeech?: boolean }) {
  const { t } = useTranslation();
  const [full, setFull] = useState(false);
  const finishedWhenShown = useRef(item.status === "ok");
  const clip = speechClipOf(item);
  const summary = argsSummary(item.args);
  const isEdit = item.name === "edit_file";
  const isWrite = item.name === "write_file";
  const output = item.output ?? "";
  const shown = full || output.length <= OUTPUT_PREVIEW ? output : output.slice(0, OUTPUT_PREVIEW);
  return (
    <article className={`tool-card status-${item.status}`} data-testid="tool-card" data-tool-name={item.name} data-status={item.status}>
      <details open={item.status === "waiting" || item.status === "error" || item.status === "denied" || undefined}>
        <summary>
          <span className={`status-dot ${item.status}`} aria-hidden="true" />
          <code className="tool-name">{item.name}</code>
          <span className="tool-summary">{summary}</span>
          <span className={`pill ${item.status}`}>{statusLabel(item.status, t)}</span>
          {item.durationMs !== null && item.durationMs > 0 && (
            <span className="muted small" title={t("tool.duration")}>
              {formatDuration(item.durationMs)}
            </span>
          )}
        </summary>
        <div className="tool-body">
          <DecisionNote item={item} chatId={chatId} />
          {isEdit && field(item.args, "old_string") !== null ? (
            <DiffView before={field(item.args, "old_string") ?? ""} after={field(item.args, "new_string") ?? ""} />
          ) : isWrite && field(item.args, "content") !== null ? (
            <DiffView before="" after={field(item.args, "content") ?? ""} />
          ) : (
            <>
              <h4>{t("tool.arguments")}</h4>
              <pre className="code-block">{prettyJson(item.args)}</pre>
            </>
          )}
          {item.output !== null && (
            <>
              <h4>{t("tool.output")}</h4>
              <pre className={`code-block output${item.status === "error" || item.status === "denied" ? " error" : ""}`}>
                {shown || t("tool.noOutput")}
              </pre>
              {shown.length < output.length && (
                <button type="button" className="btn small ghost" onClick={() => setFull(true)}>
                  {t("tool.showAll", { count: output.length, formatted: output.length.toLocaleString() })}
                </button>
              )}
            </>
          )}
        </div>
      </details>
      {clip && <SpeechPlayer clip={clip} autoPlay={autoplaySpeech && !finishedWhenShown.current} />}
    </article>
  );
}
