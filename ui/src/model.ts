// View model of a chat transcript, built from stored messages and runtime events. These are UI
// shapes (what a card shows), not backend types: those come from ./types.
import type { JsonValue, PendingApproval, PermissionDecision, StoredMessage } from "./types";

export type ToolStatus = "running" | "ok" | "error" | "denied" | "waiting";

export type Item =
  | { kind: "user"; key: string; text: string; runId?: string | null }
  | { kind: "assistant"; key: string; text: string; runId: string | null }
  | {
      kind: "tool";
      key: string;
      id: string;
      name: string;
      args: JsonValue;
      status: ToolStatus;
      output: string | null;
      durationMs: number | null;
      decision: PermissionDecision | null;
    }
  | { kind: "error"; key: string; message: string };

export type ToolItem = Extract<Item, { kind: "tool" }>;

/** Parses a tool call's raw argument text for display; the raw text when it is not JSON. */
export function parseArgs(raw: string): JsonValue {
  if (!raw.trim()) return {};
  try {
    return JSON.parse(raw) as JsonValue;
  } catch {
    return raw;
  }
}

// The runtime stores refused and rejected calls as error results with these openings
// (suzent-runtime `finish`); a stored transcript has no other trace of the decision.
function looksDenied(content: string): boolean {
  return content.startsWith("Permission denied (") || content.startsWith("The user rejected this");
}

/** Builds the transcript from stored messages; calls waiting for approval show as waiting. */
export function itemsFromMessages(messages: StoredMessage[], pending: PendingApproval[]): Item[] {
  const items: Item[] = [];
  const tools = new Map<string, ToolItem>();
  const waiting = new Set(pending.map((p) => p.toolCallId));
  for (const m of messages) {
    const msg = m.message;
    if (msg.role === "user") {
      items.push({ kind: "user", key: `m${m.seq}`, text: msg.text, runId: m.runId });
    } else if (msg.role === "assistant") {
      if (msg.text) items.push({ kind: "assistant", key: `m${m.seq}`, text: msg.text, runId: m.runId });
      for (const call of msg.toolCalls ?? []) {
        const item: ToolItem = {
          kind: "tool",
          key: `t${call.id}`,
          id: call.id,
          name: call.name,
          args: parseArgs(call.arguments),
          status: waiting.has(call.id) ? "waiting" : "running",
          output: null,
          durationMs: null,
          decision: null,
        };
        tools.set(call.id, item);
        items.push(item);
      }
    } else if (msg.role === "tool") {
      const item = tools.get(msg.toolCallId);
      if (item) {
        item.output = msg.content;
        item.status = msg.isError ? (looksDenied(msg.content) ? "denied" : "error") : "ok";
      }
    }
  }
  return items;
}

/** A failed turn shown in the chat; not stored by the backend, so kept beside the transcript. */
export interface TurnError {
  key: string;
  message: string;
  /** How many user messages the chat had when it failed: it shows after that turn. */
  turn: number;
}

export function userCount(items: Item[]): number {
  return items.filter((i) => i.kind === "user").length;
}

/**
 * Rebuilds a transcript after a reload: places turn errors after their turn and keeps what only
 * events carried (tool durations and permission decisions).
 */
export function mergeReloaded(fresh: Item[], previous: Item[], errors: TurnError[]): Item[] {
  const old = new Map<string, ToolItem>();
  for (const it of previous) if (it.kind === "tool") old.set(it.id, it);
  const out: Item[] = [];
  const flush = (turn: number, orLater = false) => {
    for (const e of errors)
      if (e.turn === turn || (orLater && e.turn > turn)) out.push({ kind: "error", key: e.key, message: e.message });
  };
  let users = 0;
  for (const it of fresh) {
    if (it.kind === "user") {
      // Errors of turn N go right before user message N + 1.
      flush(users);
      users++;
    }
    const before = it.kind === "tool" ? old.get(it.id) : undefined;
    out.push(before && it.kind === "tool" ? { ...it, durationMs: before.durationMs, decision: before.decision } : it);
  }
  flush(users, true);
  return out;
}
