// View model of a chat transcript, built from stored messages and runtime events. These are UI
// shapes (what a card shows), not backend types: those come from ./types.
import type { ApprovalActionId, Attachment, ChatNotes, CompactionInfo, JsonValue, PendingApproval, PermissionDecision, PermissionMode, Rule, StoredMessage } from "./types";

/** How the user answered a tool call's approval (`tool_permission_resolution`). */
export interface Resolution {
  actionId: ApprovalActionId;
  /** The rule the answer added, if any. */
  rule: Rule | null;
}

export type ToolStatus = "running" | "ok" | "error" | "denied" | "waiting";

export type Item =
  | { kind: "user"; key: string; text: string; runId?: string | null; attachments?: Attachment[] }
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
      /** The user's answer to its approval, when it had one. */
      resolution: Resolution | null;
      /** The chat's permission mode when the decision was made (labels name it). */
      mode: PermissionMode | null;
    }
  | { kind: "error"; key: string; message: string; outcome?: StopOutcome }
  | { kind: "event"; key: string; source: InboxSource }
  /** Where the chat was compacted to fit the model's context: requests send a summary of what came before. */
  | { kind: "compacted"; key: string; info: CompactionInfo };

/** Where a message that reached the chat through the inbox came from (not the user). */
export interface InboxSource {
  /** The inbox message id. */
  id: string;
  /** Who sent it: `canvas`, `command:<id>`, a sub-agent's or another agent's chat id, a peer. */
  sender: string;
  /** What it is: `command_finished`, `subagent_report`, `agent_message`, `canvas_action`, ... */
  kind: string;
  /** The message itself. */
  text: string;
}

/**
 * An inbox message as the transcript stores it (suzent-runtime `transcript_text`):
 * `[inbox message ID from SENDER (KIND)]` then the text. Null for what the user typed.
 */
export function inboxSource(text: string): InboxSource | null {
  const m = /^\[inbox message (\S+) from (.+?) \(([^()\n]*)\)\]\n([\s\S]*)$/.exec(text);
  if (!m) return null;
  return { id: m[1], sender: m[2], kind: m[3], text: m[4] };
}

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

/** The transcript position after which a compaction's divider shows: the end of what it summarized, else of what it cut. */
export function compactionBoundary(c: CompactionInfo): number {
  return c.summaryThroughSeq > 0 ? c.summaryThroughSeq : c.cutThroughSeq;
}

/** The divider item of a compaction. */
export function compactedItem(info: CompactionInfo): Item {
  return { kind: "compacted", key: `c${info.id}`, info };
}

/**
 * Builds the transcript from stored messages; calls waiting for approval show as waiting. Each
 * compaction shows as a divider after the message it reaches (the messages stay: the full
 * transcript is kept).
 */
export function itemsFromMessages(messages: StoredMessage[], pending: PendingApproval[], compactions: CompactionInfo[] = []): Item[] {
  const items: Item[] = [];
  const dividers = (seq: number) => {
    for (const c of compactions) if (compactionBoundary(c) === seq) items.push(compactedItem(c));
  };
  const tools = new Map<string, ToolItem>();
  const waiting = new Set(pending.map((p) => p.toolCallId));
  for (const m of messages) {
    const msg = m.message;
    if (msg.role === "user") {
      const source = inboxSource(msg.text);
      const attachments = msg.attachments ?? [];
      items.push(
        source
          ? { kind: "event", key: `m${m.seq}`, source }
          : { kind: "user", key: `m${m.seq}`, text: msg.text, runId: m.runId, ...(attachments.length ? { attachments } : {}) },
      );
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
          resolution: null,
          mode: null,
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
    dividers(m.seq);
  }
  return items;
}

/**
 * Puts what the backend noted beside the transcript (`chat_notes`) on the tool cards: the
 * decision, the mode then, the user's answer and the duration survive a restart.
 */
export function withNotes(items: Item[], notes: ChatNotes): Item[] {
  if (notes.tools.length === 0) return items;
  const byId = new Map(notes.tools.map((n) => [n.toolCallId, n]));
  return items.map((it) => {
    const n = it.kind === "tool" ? byId.get(it.id) : undefined;
    if (!n || it.kind !== "tool") return it;
    return {
      ...it,
      durationMs: it.durationMs ?? n.durationMs,
      decision: it.decision ?? n.decision,
      mode: it.mode ?? n.mode,
      resolution: it.resolution ?? (n.resolution ? { actionId: n.resolution.actionId, rule: n.resolution.rule ?? null } : null),
    };
  });
}

/** The stored failures of runs as turn errors, each after the user message it followed. */
export function errorsFromNotes(messages: StoredMessage[], notes: ChatNotes): TurnError[] {
  return notes.failures.map((f) => ({
    key: `f${f.runId}`,
    message: f.message,
    outcome: f.outcome && f.outcome !== "completed" && f.outcome !== "suspended" && f.outcome !== "cancelled" ? f.outcome : undefined,
    turn: messages.filter((m) => m.seq <= f.afterSeq && m.message.role === "user" && !inboxSource(m.message.text)).length,
    afterSeq: f.afterSeq,
  }));
}

/** Live errors and stored ones, each failure once (the same message after the same turn). */
export function mergeErrors(live: TurnError[], stored: TurnError[]): TurnError[] {
  const out = [...live];
  for (const e of stored) {
    const i = out.findIndex((x) => x.key === e.key || (x.message === e.message && x.turn === e.turn));
    // The live error learns where it stands in the stored transcript.
    if (i >= 0) out[i] = { ...out[i], afterSeq: e.afterSeq, outcome: out[i].outcome ?? e.outcome };
    else out.push(e);
  }
  return out.sort((a, b) => a.turn - b.turn);
}

/** A failed turn shown in the chat; kept beside the transcript (the backend notes it too). */
/** Run outcomes that stop a turn short of an answer, each shown with its own heading. */
export type StopOutcome = "failed" | "max_steps" | "loop_detected" | "context_overflow" | "compaction_failed";

export interface TurnError {
  key: string;
  message: string;
  /** The run's outcome once it finished (the heading names it). */
  outcome?: StopOutcome;
  /** How many user messages the chat had when it failed: it shows after that turn. */
  turn: number;
  /** The chat's last message seq when it failed, when known (read back from the store): it
   * shows right after that message, before what a retry answered. */
  afterSeq?: number;
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
  const placed = new Set<string>();
  const put = (e: TurnError) => {
    if (placed.has(e.key)) return;
    placed.add(e.key);
    out.push({ kind: "error", key: e.key, message: e.message, outcome: e.outcome });
  };
  const flush = (turn: number, orLater = false) => {
    for (const e of errors) if (e.afterSeq === undefined && (e.turn === turn || (orLater && e.turn > turn))) put(e);
  };
  let users = 0;
  for (const it of fresh) {
    // An error read back from the store goes right after the message it followed.
    const seq = /^m(\d+)$/.exec(it.key);
    if (seq) for (const e of errors) if (e.afterSeq !== undefined && e.afterSeq < Number(seq[1])) put(e);
    if (it.kind === "user") {
      // Errors of turn N go right before user message N + 1.
      flush(users);
      users++;
    }
    const before = it.kind === "tool" ? old.get(it.id) : undefined;
    out.push(
      before && it.kind === "tool"
        ? {
            ...it,
            durationMs: before.durationMs ?? it.durationMs,
            decision: before.decision ?? it.decision,
            resolution: before.resolution ?? it.resolution,
            mode: before.mode ?? it.mode,
          }
        : it,
    );
  }
  flush(users, true);
  for (const e of errors) put(e);
  return out;
}
