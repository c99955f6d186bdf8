// Plain-words descriptions of backend values.
import type { JsonValue, PermissionMode, RuleDraft, RuleMatcher } from "./types";

export const MODE_LABELS: Record<PermissionMode, string> = {
  default: "Default",
  auto: "Auto",
  full_access: "Full access",
};

export const MODE_EXPLANATIONS: Record<PermissionMode, string> = {
  default: "Asks you before it writes files or runs a command that is not known to be read-only.",
  auto: "Lets safe, predictable actions run (edits inside the workspace, read-only commands) and asks you about the rest.",
  full_access:
    "Never asks. Your deny rules and the hard limits (nothing outside the workspace and the agent's storage) still apply.",
};

export function describeMatcher(m: RuleMatcher): string {
  switch (m.kind) {
    case "all":
      return "every call";
    case "exact":
      return `calls with exactly these arguments: ${JSON.stringify(m.input)}`;
    case "prefix":
      return `commands starting with “${m.words.join(" ")}”`;
    case "path":
      return `paths matching ${m.glob}`;
    case "destination":
      return `calls addressed to ${m.pattern}`;
  }
}

export function describeRule(r: Pick<RuleDraft, "tool" | "behavior" | "matcher" | "destination">): string {
  const verb = r.behavior === "allow" ? "Allow" : r.behavior === "deny" ? "Deny" : "Ask before";
  const tool = r.tool === "*" ? "any tool" : r.tool;
  const scope = r.destination === "session" ? "in this chat" : "in every chat";
  return `${verb} ${tool} for ${describeMatcher(r.matcher)}, ${scope}`;
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

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
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
