// Plain-words descriptions of backend values.
import i18n, { t } from "./i18n";
import type { JsonValue, PermissionMode, RuleDraft, RuleMatcher } from "./types";

/** A permission mode's name, in the current language. */
export function modeLabel(m: PermissionMode): string {
  switch (m) {
    case "default":
      return t("format.mode.default");
    case "auto":
      return t("format.mode.auto");
    case "full_access":
      return t("format.mode.fullAccess");
  }
}

/** What a permission mode does, in one sentence. */
export function modeExplanation(m: PermissionMode): string {
  switch (m) {
    case "default":
      return t("format.modeExplain.default");
    case "auto":
      return t("format.modeExplain.auto");
    case "full_access":
      return t("format.modeExplain.fullAccess");
  }
}

export function describeMatcher(m: RuleMatcher): string {
  switch (m.kind) {
    case "all":
      return t("format.matcher.all");
    case "exact":
      return t("format.matcher.exact", { input: JSON.stringify(m.input) });
    case "prefix":
      return t("format.matcher.prefix", { words: m.words.join(" ") });
    case "path":
      return t("format.matcher.path", { glob: m.glob });
    case "destination":
      return t("format.matcher.destination", { pattern: m.pattern });
  }
}

export function describeRule(r: Pick<RuleDraft, "tool" | "behavior" | "matcher" | "destination">): string {
  const tool = r.tool === "*" ? t("format.rule.anyTool") : r.tool;
  const scope = r.destination === "session" ? t("format.rule.thisChat") : t("format.rule.everyChat");
  const vars = { tool, matcher: describeMatcher(r.matcher), scope };
  switch (r.behavior) {
    case "allow":
      return t("format.rule.allow", vars);
    case "deny":
      return t("format.rule.deny", vars);
    case "ask":
      return t("format.rule.ask", vars);
  }
}

/** A one-line summary of a tool call's arguments (the command, the path, ...). */
export function argsSummary(args: JsonValue): string {
  if (typeof args === "string") return args;
  if (args && typeof args === "object" && !Array.isArray(args)) {
    for (const k of ["content", "command", "file_path", "path", "pattern", "query", "url"]) {
      const v = args[k];
      if (typeof v === "string" && k !== "content") return v;
      if (typeof v === "string" && k === "content" && !("file_path" in args)) return v;
    }
    const fp = args["file_path"];
    if (typeof fp === "string") return fp;
  }
  return "";
}

export function prettyJson(v: JsonValue): string {
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
}

/** A turn's tokens and list price: "1,234 in · 56 out · $0.0031" (cost left out when unknown). */
export function formatUsage(u: { inputTokens: number; outputTokens: number; costUsd: number | null }): string {
  const n = (x: number) => x.toLocaleString(i18n.language);
  const tokens = t("format.usage.tokens", { input: n(u.inputTokens), output: n(u.outputTokens) });
  if (u.costUsd === null) return tokens;
  const cost = u.costUsd < 0.01 ? u.costUsd.toFixed(4) : u.costUsd.toFixed(2);
  return t("format.usage.withCost", { tokens, cost });
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return t("format.duration.ms", { ms });
  if (ms < 60_000) return t("format.duration.s", { s: (ms / 1000).toFixed(1) });
  return t("format.duration.min", { min: Math.floor(ms / 60_000), s: Math.round((ms % 60_000) / 1000) });
}

export function formatTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function formatClock(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

/** Date and time, compact: today's entries show the time only. */
export function formatShort(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const today = new Date();
  if (d.toDateString() === today.toDateString()) return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return d.toLocaleString([], { dateStyle: "short", timeStyle: "short" });
}

/** A size for people in SI units, as the backend writes them: `512 B`, `1.2 kB`, `3.1 MB`. */
export function humanBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 999.95 && unit + 1 < units.length) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
