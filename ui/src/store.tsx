// App state: one reducer fed by command results and the runtime event stream.
import { createContext, useContext, useEffect, useMemo, useReducer, useRef, type ReactNode } from "react";
import { t as translate } from "./i18n";
import { api, ApiError, errorMessage, listenRuntimeEvents } from "./api";
import { compactedItem, compactionBoundary, errorsFromNotes, itemsFromMessages, mergeErrors, mergeReloaded, userCount, withNotes, type InboxSource, type Item, type StopOutcome, type ToolItem, type TurnError } from "./model";
import type {
  ApprovalResponse,
  Attachment,
  BackgroundTask,
  Capability,
  ChatNotes,
  ChatRecord,
  CompactionInfo,
  PendingApproval,
  PermissionDecision,
  PermissionMode,
  Plan,
  RuntimeEvent,
  Settings,
  StoredMessage,
  Surface,
  SurfaceAction,
} from "./types";

export interface ChatView {
  items: Item[];
  loaded: boolean;
  /** A run is in progress (sent and not yet finished). */
  running: boolean;
  runId: string | null;
  /** Failed turns, which the backend does not store. */
  errors: TurnError[];
  /** Counts the chat's runtime events, so a transcript read that events overtook is not applied. */
  epoch: number;
  /** The provider failed and the runtime waits to ask again (`provider_retry`), until the step goes on. */
  retry?: { attempt: number; maxAttempts: number; waitMs: number; message: string } | null;
  /** Tokens and list price per run, as the providers reported them (`model_usage`, `chat_notes`). */
  usage?: Record<string, RunUsage>;
}

/** What one run's model steps used: tokens summed over steps; cost null when a step had no price. */
export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  steps: number;
}

export interface BannerError {
  id: number;
  message: string;
}

export interface State {
  chats: ChatRecord[];
  chatsLoaded: boolean;
  /** Listing the chats failed (the list is empty because it could not be read). */
  chatsFailed: boolean;
  activeChatId: string | null;
  views: Record<string, ChatView>;
  pending: Record<string, PendingApproval[]>;
  errors: BannerError[];
  /** The backend could not start (every command fails the same way until a restart). */
  startupError: string | null;
  tasks: BackgroundTask[];
  settings: Settings | null;
  /** Reading the settings failed: the app shows its pages (with the error) rather than waiting. */
  settingsFailed: boolean;
  catalog: Capability[] | null;
  /** Approvals answered in this window: a read that started before the answer must not bring them back. */
  answered: Record<string, true>;
  /** Tools the agent activated itself this session (tool_activated), per chat. */
  activated: Record<string, string[]>;
  /** Each loaded chat's plan (get_plan, then plan_updated); null when the chat has none. */
  plans: Record<string, Plan | null>;
  /** Live canvas surfaces per chat (list_surfaces, then surface_updated/surface_deleted), oldest first. */
  surfaces: Record<string, Surface[]>;
}

export const initialState: State = {
  chats: [],
  chatsLoaded: false,
  chatsFailed: false,
  activeChatId: null,
  views: {},
  pending: {},
  errors: [],
  startupError: null,
  tasks: [],
  settings: null,
  settingsFailed: false,
  catalog: null,
  answered: {},
  activated: {},
  plans: {},
  surfaces: {},
};

export type Action =
  | { type: "chats/set"; chats: ChatRecord[]; failed?: boolean }
  | { type: "chats/upsert"; chat: ChatRecord }
  | { type: "chats/remove"; chatId: string }
  | { type: "chat/select"; chatId: string | null }
  | { type: "chat/loaded"; chatId: string; messages: StoredMessage[]; pending: PendingApproval[]; notes: ChatNotes; epoch: number; compactions?: CompactionInfo[] }
  | { type: "chat/userSent"; chatId: string; text: string; attachments: Attachment[] }
  | { type: "chat/runStarting"; chatId: string }
  | { type: "chat/runEnded"; chatId: string }
  | { type: "chat/inlineError"; chatId: string; message: string }
  | { type: "pending/setAll"; pending: PendingApproval[] }
  | { type: "pending/set"; chatId: string; pending: PendingApproval[] }
  | { type: "pending/remove"; chatId: string; ids: string[] }
  | { type: "pending/unanswer"; ids: string[] }
  | { type: "event"; event: RuntimeEvent; epoch?: number }
  | { type: "error/push"; message: string }
  | { type: "error/dismiss"; id: number }
  | { type: "error/startup"; message: string }
  | { type: "tasks/set"; tasks: BackgroundTask[] }
  | { type: "tasks/upsert"; task: BackgroundTask }
  | { type: "settings/set"; settings: Settings }
  | { type: "settings/failed" }
  | { type: "catalog/set"; catalog: Capability[] }
  | { type: "plan/set"; chatId: string; plan: Plan | null }
  | { type: "surfaces/set"; chatId: string; surfaces: Surface[] }
  | { type: "chat/canvasActionSent"; chatId: string; source: InboxSource };

let nextKey = 1;
const key = (p: string) => `${p}${nextKey++}`;

const emptyView: ChatView = { items: [], loaded: false, running: false, runId: null, errors: [], epoch: 0 };

function view(state: State, chatId: string): ChatView {
  return state.views[chatId] ?? emptyView;
}

function withView(state: State, chatId: string, f: (v: ChatView) => ChatView): State {
  return { ...state, views: { ...state.views, [chatId]: f(view(state, chatId)) } };
}

function updateTool(v: ChatView, id: string, f: (t: ToolItem) => ToolItem): ChatView {
  return { ...v, items: v.items.map((it) => (it.kind === "tool" && it.id === id ? f(it) : it)) };
}

function groupByChat(pending: PendingApproval[]): Record<string, PendingApproval[]> {
  const out: Record<string, PendingApproval[]> = {};
  for (const p of pending) (out[p.chatId] ??= []).push(p);
  return out;
}

function upsertTask(state: State, task: BackgroundTask): State {
  const exists = state.tasks.some((t) => t.id === task.id);
  return { ...state, tasks: exists ? state.tasks.map((t) => (t.id === task.id ? task : t)) : [...state.tasks, task] };
}

/**
 * Adds or replaces a surface, oldest first. A stale version never replaces a newer one of the same
 * surface; a surface created again under the same id (another `createdAt`) replaces the old one.
 */
function upsertSurface(list: Surface[], surface: Surface): Surface[] {
  const old = list.find((s) => s.surfaceId === surface.surfaceId);
  if (old && old.createdAt === surface.createdAt && old.version > surface.version) return list;
  // A user action leaves no tool call: the surface stays after the call that rendered it.
  const placed = old && surface.toolCallId == null && old.toolCallId != null ? { ...surface, toolCallId: old.toolCallId } : surface;
  const next = old ? list.map((s) => (s.surfaceId === surface.surfaceId ? placed : s)) : [...list, placed];
  return next.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** The newer of two versions of a chat's plan (a read that an event overtook never wins). */
function newerPlan(current: Plan | null | undefined, incoming: Plan | null): Plan | null {
  if (!current) return incoming;
  if (!incoming) return current;
  // RFC 3339 with a varying number of fractional digits: compare as times, not as text.
  return Date.parse(incoming.updatedAt) >= Date.parse(current.updatedAt) ? incoming : current;
}

function addError(v: ChatView, message: string): ChatView {
  // The same failure reported twice (the command's answer and its run_error event) shows once.
  const turn = userCount(v.items);
  if (v.errors.some((x) => x.message === message && x.turn === turn)) return v;
  const e: TurnError = { key: key("e"), message, turn: userCount(v.items) };
  return { ...v, errors: [...v.errors, e], items: [...v.items, { kind: "error", key: e.key, message }] };
}

/**
 * The decision of a `tool_permission_decision` event. On the wire its fields are flattened into
 * the event (`#[serde(flatten)]` in suzent-core); a nested `decision` is accepted as well.
 */
function decisionOf(value: object): PermissionDecision {
  const nested = (value as { decision?: PermissionDecision }).decision;
  if (nested && typeof nested === "object") return nested;
  const { behavior, source, reason, reasonCode, risk, actions, matchedRules, confidence, riskCategories, reviewerModel } =
    value as PermissionDecision;
  return { behavior, source, reason, reasonCode, risk, actions, matchedRules, confidence, riskCategories, reviewerModel };
}

function isStopOutcome(outcome: string): outcome is StopOutcome {
  return (
    outcome === "failed" || outcome === "max_steps" || outcome === "loop_detected" || outcome === "context_overflow" || outcome === "compaction_failed"
  );
}

function applyEvent(state: State, event: RuntimeEvent): State {
  switch (event.name) {
    case "run_started": {
      const { chatId, runId } = event.value;
      return withView(state, chatId, (v) => ({ ...v, running: true, runId }));
    }
    case "model_usage": {
      const { chatId, runId, inputTokens, outputTokens, costUsd } = event.value;
      return withView(state, chatId, (v) => {
        const was = v.usage?.[runId];
        const next: RunUsage = was
          ? {
              inputTokens: was.inputTokens + inputTokens,
              outputTokens: was.outputTokens + outputTokens,
              costUsd: was.costUsd === null || costUsd === null ? null : was.costUsd + costUsd,
              steps: was.steps + 1,
            }
          : { inputTokens, outputTokens, costUsd, steps: 1 };
        return { ...v, usage: { ...v.usage, [runId]: next } };
      });
    }
    case "provider_retry": {
      const { chatId, attempt, maxAttempts, waitMs, message } = event.value;
      return withView(state, chatId, (v) => ({ ...v, retry: { attempt, maxAttempts, waitMs, message } }));
    }
    case "text_delta": {
      const { chatId, runId, delta } = event.value;
      return withView(state, chatId, (v) => {
        v = v.retry ? { ...v, retry: null } : v;
        const last = v.items[v.items.length - 1];
        if (last && last.kind === "assistant" && last.runId === runId) {
          return { ...v, items: [...v.items.slice(0, -1), { ...last, text: last.text + delta }] };
        }
        return { ...v, items: [...v.items, { kind: "assistant", key: key("a"), text: delta, runId }] };
      });
    }
    case "tool_call_start": {
      const { chatId, toolCallId, toolName, args } = event.value;
      return withView(state, chatId, (v) => {
        v = v.retry ? { ...v, retry: null } : v;
        if (v.items.some((it) => it.kind === "tool" && it.id === toolCallId)) {
          return updateTool(v, toolCallId, (t) => ({ ...t, args, status: "running" }));
        }
        const item: ToolItem = {
          kind: "tool",
          key: `t${toolCallId}`,
          id: toolCallId,
          name: toolName,
          args,
          status: "running",
          output: null,
          durationMs: null,
          decision: null,
          resolution: null,
          mode: null,
        };
        return { ...v, items: [...v.items, item] };
      });
    }
    case "tool_permission_decision": {
      const { chatId, toolCallId } = event.value;
      const decision = decisionOf(event.value);
      const mode = state.chats.find((c) => c.id === chatId)?.mode ?? null;
      return withView(state, chatId, (v) =>
        updateTool(v, toolCallId, (t) => ({
          ...t,
          decision,
          mode,
          status: decision.behavior === "deny" ? "denied" : decision.behavior === "ask" ? "waiting" : t.status,
        })),
      );
    }
    case "tool_approval_request": {
      const { chatId, runId, approvalId, toolCallId, toolName, args, decision } = event.value;
      const list = state.pending[chatId] ?? [];
      const p: PendingApproval = {
        id: approvalId,
        chatId,
        runId,
        toolCallId,
        toolName,
        args,
        decision,
        createdAt: new Date().toISOString(),
      };
      const next = list.some((x) => x.id === approvalId) ? list : [...list, p];
      const s = { ...state, pending: { ...state.pending, [chatId]: next } };
      return withView(s, chatId, (v) => updateTool(v, toolCallId, (t) => ({ ...t, status: "waiting", decision })));
    }
    case "tool_permission_resolution": {
      const { chatId, approvalId, toolCallId, actionId, rule } = event.value;
      const list = (state.pending[chatId] ?? []).filter((p) => p.id !== approvalId);
      const s = { ...state, pending: { ...state.pending, [chatId]: list } };
      return withView(s, chatId, (v) =>
        updateTool(v, toolCallId, (t) => ({
          ...t,
          status: actionId === "reject" ? "denied" : "running",
          resolution: { actionId, rule: rule ?? null },
        })),
      );
    }
    case "tool_call_end": {
      const { chatId, toolCallId, ok, output, durationMs } = event.value;
      return withView(state, chatId, (v) =>
        updateTool(v, toolCallId, (t) => ({
          ...t,
          output,
          durationMs,
          status: ok ? "ok" : t.status === "denied" ? "denied" : "error",
        })),
      );
    }
    case "run_finished": {
      const { chatId, outcome } = event.value;
      return withView(state, chatId, (v) => {
        // No card stays "running" after its run ended (the runtime closes them; an older one may not).
        let items = v.items.some((it) => it.kind === "tool" && it.status === "running")
          ? v.items.map((it) => (it.kind === "tool" && it.status === "running" ? { ...it, status: "error" as const } : it))
          : v.items;
        let errors = v.errors;
        // A run stopped short names its outcome on the error it reported (max_steps, loop, overflow).
        const last = items[items.length - 1];
        if (isStopOutcome(outcome) && last?.kind === "error") {
          items = [...items.slice(0, -1), { ...last, outcome }];
          errors = errors.map((e) => (e.key === last.key ? { ...e, outcome } : e));
        }
        return { ...v, running: false, runId: null, items, errors, retry: null };
      });
    }
    case "chat_compacted": {
      const { chatId, compaction } = event.value;
      return withView(state, chatId, (v) => {
        const divider = compactedItem(compaction);
        if (v.items.some((i) => i.key === divider.key)) return v;
        // After the message it reaches when that is shown from the store, else where the chat is now.
        const at = v.items.findIndex((i) => i.key === `m${compactionBoundary(compaction)}`);
        const items = at < 0 ? [...v.items, divider] : [...v.items.slice(0, at + 1), divider, ...v.items.slice(at + 1)];
        return { ...v, items };
      });
    }
    case "run_error": {
      const { chatId, message } = event.value;
      return withView(state, chatId, (v) => addError(v, message));
    }
    case "tool_activated": {
      const { chatId, toolName } = event.value;
      const list = state.activated[chatId] ?? [];
      return list.includes(toolName) ? state : { ...state, activated: { ...state.activated, [chatId]: [...list, toolName] } };
    }
    case "background_task_update":
      return upsertTask(state, event.value.task);
    case "surface_updated": {
      const { chatId, surface } = event.value;
      return { ...state, surfaces: { ...state.surfaces, [chatId]: upsertSurface(state.surfaces[chatId] ?? [], surface) } };
    }
    case "surface_deleted": {
      const { chatId, surfaceId } = event.value;
      const list = (state.surfaces[chatId] ?? []).filter((s) => s.surfaceId !== surfaceId);
      return { ...state, surfaces: { ...state.surfaces, [chatId]: list } };
    }
    case "plan_updated": {
      const { chatId, plan } = event.value;
      return { ...state, plans: { ...state.plans, [chatId]: newerPlan(state.plans[chatId], plan) } };
    }
    default:
      // Names added after this UI was built: nothing to show (yet).
      return state;
  }
}

export function reducer(state: State, action: Action): State {
  switch (action.type) {
    case "chats/set":
      return { ...state, chats: action.chats, chatsLoaded: true, chatsFailed: !!action.failed };
    case "chats/upsert": {
      const exists = state.chats.some((c) => c.id === action.chat.id);
      return {
        ...state,
        chats: exists ? state.chats.map((c) => (c.id === action.chat.id ? action.chat : c)) : [action.chat, ...state.chats],
      };
    }
    case "chats/remove": {
      const views = { ...state.views };
      delete views[action.chatId];
      const pending = { ...state.pending };
      delete pending[action.chatId];
      const surfaces = { ...state.surfaces };
      delete surfaces[action.chatId];
      const plans = { ...state.plans };
      delete plans[action.chatId];
      return {
        ...state,
        surfaces,
        plans,
        chats: state.chats.filter((c) => c.id !== action.chatId),
        activeChatId: state.activeChatId === action.chatId ? null : state.activeChatId,
        views,
        pending,
      };
    }
    case "chat/select":
      return { ...state, activeChatId: action.chatId };
    case "chat/loaded": {
      const v = view(state, action.chatId);
      // Events arrived while reading: they are newer than what was read; the next run end re-reads.
      if (v.loaded && v.epoch !== action.epoch) return state;
      const pending = action.pending.filter((p) => !state.answered[p.id]);
      return {
        ...withView(state, action.chatId, (cv) => {
          const errors = mergeErrors(cv.errors, errorsFromNotes(action.messages, action.notes));
          // Stored totals, unless the live ones have seen more steps (the notes are written after).
          const usage: Record<string, RunUsage> = { ...cv.usage };
          for (const u of action.notes.usage ?? []) {
            if ((usage[u.runId]?.steps ?? 0) < u.steps)
              usage[u.runId] = { inputTokens: u.inputTokens, outputTokens: u.outputTokens, costUsd: u.costUsd, steps: u.steps };
          }
          return {
            ...cv,
            loaded: true,
            errors,
            usage,
            items: mergeReloaded(withNotes(itemsFromMessages(action.messages, pending, action.compactions ?? []), action.notes), cv.items, errors),
          };
        }),
        pending: { ...state.pending, [action.chatId]: pending },
      };
    }
    case "chat/userSent":
      return withView(state, action.chatId, (v) => ({
        ...v,
        running: true,
        items: [
          ...v.items,
          { kind: "user", key: key("u"), text: action.text, ...(action.attachments.length ? { attachments: action.attachments } : {}) },
        ],
      }));
    case "chat/runStarting":
      return withView(state, action.chatId, (v) => ({ ...v, running: true }));
    case "chat/runEnded":
      return withView(state, action.chatId, (v) => ({ ...v, running: false, runId: null }));
    case "chat/inlineError":
      return withView(state, action.chatId, (v) => addError(v, action.message));
    case "pending/setAll":
      return { ...state, pending: groupByChat(action.pending.filter((p) => !state.answered[p.id])) };
    case "pending/set":
      return {
        ...state,
        pending: { ...state.pending, [action.chatId]: action.pending.filter((p) => !state.answered[p.id]) },
      };
    case "pending/unanswer": {
      const answered = { ...state.answered };
      for (const id of action.ids) delete answered[id];
      return { ...state, answered };
    }
    case "pending/remove":
      return {
        ...state,
        answered: { ...state.answered, ...Object.fromEntries(action.ids.map((id) => [id, true as const])) },
        pending: {
          ...state.pending,
          [action.chatId]: (state.pending[action.chatId] ?? []).filter((p) => !action.ids.includes(p.id)),
        },
      };
    case "event": {
      const next = applyEvent(state, action.event);
      const chatId = action.event.value.chatId;
      return withView(next, chatId, (v) => ({ ...v, epoch: action.epoch ?? v.epoch + 1 }));
    }
    case "error/push":
      if (state.errors.some((e) => e.message === action.message)) return state;
      return { ...state, errors: [...state.errors, { id: nextKey++, message: action.message }] };
    case "error/startup":
      return state.startupError ? state : { ...state, startupError: action.message };
    case "error/dismiss":
      return { ...state, errors: state.errors.filter((e) => e.id !== action.id) };
    case "tasks/set":
      return { ...state, tasks: action.tasks };
    case "tasks/upsert":
      return upsertTask(state, action.task);
    case "settings/set":
      return { ...state, settings: action.settings, settingsFailed: false };
    case "settings/failed":
      return state.settings ? state : { ...state, settingsFailed: true };
    case "catalog/set":
      return { ...state, catalog: action.catalog };
    case "plan/set":
      return { ...state, plans: { ...state.plans, [action.chatId]: newerPlan(state.plans[action.chatId], action.plan) } };
    case "surfaces/set": {
      // What an event brought that is newer than the read (same surface, higher version) stays.
      const known = new Map((state.surfaces[action.chatId] ?? []).map((s) => [s.surfaceId, s]));
      const list = action.surfaces
        .map((read) => {
          const live = known.get(read.surfaceId);
          return live && live.createdAt === read.createdAt && live.version > read.version ? live : read;
        })
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      return { ...state, surfaces: { ...state.surfaces, [action.chatId]: list } };
    }
    case "chat/canvasActionSent":
      return withView(state, action.chatId, (v) => ({
        ...v,
        items: [...v.items, { kind: "event", key: key("i"), source: action.source }],
      }));
  }
}

export interface Actions {
  /** Shows a failed command in the error banner. */
  reportError: (error: unknown, context?: string) => void;
  selectChat: (chatId: string | null) => Promise<void>;
  /** Re-reads the chat list (a scheduled run made a chat). */
  refreshChats: () => Promise<void>;
  createChat: () => Promise<void>;
  renameChat: (chatId: string, title: string) => Promise<void>;
  deleteChat: (chatId: string) => Promise<void>;
  /** Sends a message; resolves `false` when it was not accepted (the text was not stored). */
  /** Sends a message with the files attached to it (from `api.addAttachment`). */
  send: (chatId: string, text: string, attachments?: Attachment[]) => Promise<boolean>;
  /** Retries the chat's failed turn (the model is asked again from the transcript). */
  retry: (chatId: string) => Promise<void>;
  stop: (chatId: string) => Promise<void>;
  answerApprovals: (chatId: string, answers: ApprovalResponse[]) => Promise<void>;
  setMode: (chatId: string, mode: PermissionMode) => Promise<void>;
  refreshSettings: () => Promise<void>;
  refreshTasks: () => Promise<void>;
  /** Re-reads a chat's transcript and pending approvals. */
  reloadChat: (chatId: string) => Promise<void>;
  /** Re-reads a chat's canvas surfaces. */
  loadSurfaces: (chatId: string) => Promise<void>;
  /** Re-reads a chat's plan (planning_update). */
  loadPlan: (chatId: string) => Promise<void>;
  /**
   * Sends a canvas action (a Button press with its resolved context) to the agent through the
   * inbox; rejects with the backend's error (the surface shows it). The chat shows what was sent.
   */
  submitSurfaceAction: (chatId: string, action: SurfaceAction) => Promise<void>;
  /** Removes a surface (the user's close button). */
  deleteSurface: (chatId: string, surfaceId: string) => Promise<void>;
}

interface Ctx {
  state: State;
  dispatch: React.Dispatch<Action>;
  actions: Actions;
}

const StoreContext = createContext<Ctx | null>(null);

export function useStore(): Ctx {
  const ctx = useContext(StoreContext);
  if (!ctx) throw new Error("useStore outside <StoreProvider>");
  return ctx;
}

export function StoreProvider({ children, initial }: { children: ReactNode; initial?: Partial<State> }) {
  const [state, dispatch] = useReducer(reducer, { ...initialState, ...initial });
  const stateRef = useRef(state);
  stateRef.current = state;
  // Per-chat event counts, kept outside React so a read can note the count when it starts.
  const epochs = useRef(new Map<string, number>());

  const actions = useMemo<Actions>(() => {
    const reportError = (error: unknown, context?: string) => {
      if (error instanceof ApiError && error.kind === "startup") {
        dispatch({ type: "error/startup", message: error.message });
        return;
      }
      dispatch({ type: "error/push", message: context ? translate("store.withContext", { context, error: errorMessage(error) }) : errorMessage(error) });
    };

    const loadChat = async (chatId: string) => {
      const epoch = epochs.current.get(chatId) ?? 0;
      const [messages, pending, notes, compactions] = await Promise.all([
        api.getMessages(chatId),
        api.pendingApprovals(chatId),
        // The cards' decisions and durations and the failed turns; the transcript shows without them.
        api.chatNotes(chatId).catch((e: unknown): ChatNotes => {
          reportError(e, translate("store.loadNotes"));
          return { tools: [], failures: [], usage: [] };
        }),
        // The compaction dividers are a hint: the transcript shows without them when they cannot be read.
        Promise.resolve()
          .then(() => api.chatCompactions(chatId))
          .catch(() => [] as CompactionInfo[]),
      ]);
      dispatch({ type: "chat/loaded", chatId, messages, pending, notes, epoch, compactions });
    };

    const refreshTasks = async () => {
      try {
        dispatch({ type: "tasks/set", tasks: await api.backgroundTasks() });
      } catch (e) {
        reportError(e, translate("store.loadBackgroundTasks"));
      }
    };

    const loadSurfaces = async (chatId: string) => {
      try {
        // A read that events overtook may miss a surface they created: read again (bounded).
        for (let attempt = 1; ; attempt++) {
          const epoch = epochs.current.get(chatId) ?? 0;
          const surfaces = await api.listSurfaces(chatId);
          if ((epochs.current.get(chatId) ?? 0) === epoch || attempt === 3) {
            dispatch({ type: "surfaces/set", chatId, surfaces });
            return;
          }
        }
      } catch (e) {
        reportError(e, translate("store.loadTheCanvas"));
      }
    };

    const loadPlan = async (chatId: string) => {
      try {
        dispatch({ type: "plan/set", chatId, plan: await api.getPlan(chatId) });
      } catch (e) {
        reportError(e, translate("store.loadThePlan"));
      }
    };

    return {
      reportError,
      refreshTasks,
      loadSurfaces,
      loadPlan,
      submitSurfaceAction: async (chatId, action) => {
        const message = await api.submitSurfaceAction(chatId, action);
        dispatch({
          type: "chat/canvasActionSent",
          chatId,
          source: { id: message.id, sender: message.sender, kind: message.kind, text: message.text },
        });
      },
      deleteSurface: async (chatId, surfaceId) => {
        try {
          await api.deleteSurface(chatId, surfaceId);
          dispatch({
            type: "surfaces/set",
            chatId,
            surfaces: (stateRef.current.surfaces[chatId] ?? []).filter((s) => s.surfaceId !== surfaceId),
          });
        } catch (e) {
          reportError(e, translate("store.closeTheSurface"));
        }
      },
      reloadChat: async (chatId) => {
        void loadSurfaces(chatId);
        void loadPlan(chatId);
        try {
          await loadChat(chatId);
        } catch (e) {
          reportError(e, translate("store.reloadTheChat"));
        }
      },
      refreshChats: async () => {
        try {
          dispatch({ type: "chats/set", chats: await api.listChats() });
        } catch (e) {
          reportError(e, translate("store.loadChats"));
        }
      },
      selectChat: async (chatId) => {
        dispatch({ type: "chat/select", chatId });
        if (!chatId) return;
        void loadSurfaces(chatId);
        void loadPlan(chatId);
        try {
          await loadChat(chatId);
        } catch (e) {
          reportError(e, translate("store.loadTheChat"));
        }
      },
      createChat: async () => {
        try {
          const chat = await api.createChat({});
          dispatch({ type: "chats/upsert", chat });
          dispatch({ type: "chat/select", chatId: chat.id });
          dispatch({ type: "chat/loaded", chatId: chat.id, messages: [], pending: [], notes: { tools: [], failures: [], usage: [] }, epoch: 0 });
        } catch (e) {
          reportError(e, translate("store.createAChat"));
        }
      },
      renameChat: async (chatId, title) => {
        try {
          dispatch({ type: "chats/upsert", chat: await api.renameChat(chatId, title) });
        } catch (e) {
          reportError(e, translate("store.renameTheChat"));
        }
      },
      deleteChat: async (chatId) => {
        try {
          await api.deleteChat(chatId);
          const wasActive = stateRef.current.activeChatId === chatId;
          const next = stateRef.current.chats.find((c) => c.id !== chatId);
          dispatch({ type: "chats/remove", chatId });
          if (wasActive && next) {
            dispatch({ type: "chat/select", chatId: next.id });
            await loadChat(next.id);
          }
        } catch (e) {
          reportError(e, translate("store.deleteTheChat"));
        }
      },
      send: async (chatId, text, attachments = []) => {
        dispatch({ type: "chat/userSent", chatId, text, attachments });
        try {
          const summary = await api.sendMessage(chatId, text, attachments);
          if (summary.outcome === "suspended") dispatch({ type: "pending/set", chatId, pending: summary.pending });
          return true;
        } catch (e) {
          // Shown once, in the chat it belongs to (not in the window-wide banner).
          if (e instanceof ApiError && e.kind === "startup") reportError(e);
          else dispatch({ type: "chat/inlineError", chatId, message: translate("store.notSent", { error: errorMessage(e) }) });
          return false;
        } finally {
          dispatch({ type: "chat/runEnded", chatId });
        }
      },
      retry: async (chatId) => {
        dispatch({ type: "chat/runStarting", chatId });
        try {
          const summary = await api.retryTurn(chatId);
          if (summary.outcome === "suspended") dispatch({ type: "pending/set", chatId, pending: summary.pending });
        } catch (e) {
          if (e instanceof ApiError && e.kind === "startup") reportError(e);
          else
            dispatch({
              type: "chat/inlineError",
              chatId,
              message: translate("store.withContext", { context: translate("store.retryTheTurn"), error: errorMessage(e) }),
            });
        } finally {
          dispatch({ type: "chat/runEnded", chatId });
        }
      },
      stop: async (chatId) => {
        try {
          await api.cancelRun(chatId);
        } catch (e) {
          reportError(e, translate("store.stopTheRun"));
        }
      },
      answerApprovals: async (chatId, answers) => {
        dispatch({ type: "pending/remove", chatId, ids: answers.map((a) => a.request_id) });
        dispatch({ type: "chat/runStarting", chatId });
        try {
          const summary = await api.resumeApprovals(chatId, answers);
          if (summary.outcome === "suspended") dispatch({ type: "pending/set", chatId, pending: summary.pending });
        } catch (e) {
          if (e instanceof ApiError && e.kind === "startup") reportError(e);
          else
            dispatch({
              type: "chat/inlineError",
              chatId,
              message: translate("store.withContext", { context: translate("store.answerTheApproval"), error: errorMessage(e) }),
            });
          dispatch({ type: "pending/unanswer", ids: answers.map((a) => a.request_id) });
          try {
            dispatch({ type: "pending/set", chatId, pending: await api.pendingApprovals(chatId) });
          } catch (e2) {
            reportError(e2, translate("store.reloadPendingApprovals"));
          }
        } finally {
          dispatch({ type: "chat/runEnded", chatId });
        }
      },
      setMode: async (chatId, mode) => {
        try {
          dispatch({ type: "chats/upsert", chat: await api.setChatMode(chatId, mode) });
        } catch (e) {
          reportError(e, translate("store.changeThePermissionMode"));
        }
      },
      refreshSettings: async () => {
        try {
          dispatch({ type: "settings/set", settings: await api.getSettings() });
        } catch (e) {
          dispatch({ type: "settings/failed" });
          reportError(e, translate("store.loadSettings"));
        }
      },
    };
  }, []);

  // Runtime events: subscribe once for the lifetime of the window.
  useEffect(() => {
    let unlisten: (() => void) | null = null;
    let disposed = false;
    listenRuntimeEvents((event) => {
      const chatId = event.value.chatId;
      const epoch = (epochs.current.get(chatId) ?? 0) + 1;
      epochs.current.set(chatId, epoch);
      dispatch({ type: "event", event, epoch });
      // A new chat is named after its first message when the run starts: read the new title.
      if (event.name === "run_started" && stateRef.current.chats.find((c) => c.id === chatId)?.title === "New chat") {
        api.listChats().then(
          (chats) => dispatch({ type: "chats/set", chats }),
          () => {
            /* the old title stays until the next read */
          },
        );
      }
      // A lagging event stream loses events; the transcript is stored before anything is
      // announced, so re-reading it at the end of a run repairs what was missed.
      if (event.name === "run_finished" && stateRef.current.views[event.value.chatId]?.loaded) {
        void actions.reloadChat(event.value.chatId);
      }
      // A scheduled run in a chat the list does not show yet (its first run made it).
      if (event.name === "scheduled_run_updated" && chatId && !stateRef.current.chats.some((c) => c.id === chatId)) {
        void actions.refreshChats();
      }
    })
      .then((u) => {
        if (disposed) u();
        else unlisten = u;
      })
      .catch((e) => actions.reportError(e, translate("store.subscribeToRuntimeEvents")));
    return () => {
      disposed = true;
      unlisten?.();
    };
  }, [actions]);

  // Initial load: chats, settings, catalog, every pending approval, background tasks.
  useEffect(() => {
    (async () => {
      try {
        const chats = await api.listChats();
        dispatch({ type: "chats/set", chats });
      } catch (e) {
        dispatch({ type: "chats/set", chats: [], failed: true });
        actions.reportError(e, translate("store.loadChats"));
      }
    })();
    void actions.refreshSettings();
    (async () => {
      try {
        dispatch({ type: "catalog/set", catalog: await api.getCatalog() });
      } catch (e) {
        actions.reportError(e, translate("store.loadTheToolCatalog"));
      }
    })();
    (async () => {
      try {
        dispatch({ type: "pending/setAll", pending: await api.pendingApprovals(null) });
      } catch (e) {
        actions.reportError(e, translate("store.loadPendingApprovals"));
      }
    })();
    void actions.refreshTasks();
  }, [actions]);

  const value = useMemo(() => ({ state, dispatch, actions }), [state, actions]);
  return <StoreContext.Provider value={value}>{children}</StoreContext.Provider>;
}

/** The active chat record, if any. */
export function useActiveChat(): ChatRecord | null {
  const { state } = useStore();
  return state.chats.find((c) => c.id === state.activeChatId) ?? null;
}
