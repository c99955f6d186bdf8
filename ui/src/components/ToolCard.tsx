import { diffLines } from "diff";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import { argsSummary, formatDuration, prettyJson } from "../format";
import type { ToolItem } from "../model";
import type { JsonValue } from "../types";

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

function DecisionNote({ item }: { item: ToolItem }) {
  const { t } = useTranslation();
  const d = item.decision;
  if (!d) return null;
  let text: string;
  if (d.behavior === "allow" && d.source === "mode") text = t("tool.decision.fullAccess");
  else if (d.behavior === "allow" && d.source === "rule") text = t("tool.decision.rule");
  else if (d.behavior === "allow" && d.source === "auto_classifier")
    text = d.reviewerModel ? t("tool.decision.reviewerModel", { model: d.reviewerModel }) : t("tool.decision.reviewer");
  else if (d.behavior === "allow") text = t("tool.decision.allowed");
  else if (d.behavior === "deny") text = t("tool.decision.denied", { reason: d.reason });
  else text = t("tool.decision.needsApproval", { reason: d.reason });
  return (
    <p className="decision-note">
      {text} <code className="reason-code">{d.reasonCode}</code>
    </p>
  );
}

const OUTPUT_PREVIEW = 4000;

/** One tool call: name, arguments, status, output, duration; a diff for file edits. */
export function ToolCard({ item }: { item: ToolItem }) {
  const { t } = useTranslation();
  const [full, setFull] = useState(false);
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
          <DecisionNote item={item} />
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
    </article>
  );
}
