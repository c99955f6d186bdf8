// Test support: a fake backend behind the real Tauri IPC boundary (mockIPC), recording calls.
import { mockIPC } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import { act, render } from "@testing-library/react";
import type { ReactNode } from "react";
import { StoreProvider } from "../store";
import type { Capability, ChatRecord, EmbeddingStatus, PendingApproval, RuntimeEvent, Settings } from "../types";

export type Handler = (args: Record<string, unknown>) => unknown;

export interface Call {
  cmd: string;
  args: Record<string, unknown>;
}

export const catalog: Capability[] = [
  {
    id: "filesystem",
    label: "Filesystem",
    description: "Files in the workspace.",
    tools: [
      { id: "ReadFileTool", name: "Read file", description: "Reads a file.", runtimeName: "read_file", requiresApproval: false },
      { id: "WriteFileTool", name: "Write file", description: "Writes a file.", runtimeName: "write_file", requiresApproval: true },
      { id: "EditFileTool", name: "Edit file", description: "Edits a file.", runtimeName: "edit_file", requiresApproval: true },
    ],
  },
  {
    id: "shell",
    label: "Shell",
    description: "Commands.",
    tools: [{ id: "RunCommandTool", name: "Run command", description: "Runs a command.", runtimeName: "run_command", requiresApproval: true }],
  },
];

export const settings = (over: Partial<Settings> = {}): Settings => ({
  defaultModel: "openai/gpt-4.1",
  defaultMode: "default",
  // get_settings answers the selection expanded to runtime names.
  tools: ["read_file", "write_file", "edit_file", "run_command"],
  workspace: "/work/space",
  maxSteps: 50,
  configFile: "/home/u/.config/suzent/config.toml",
  providers: { openai: { baseUrl: null }, anthropic: { baseUrl: null }, gemini: { baseUrl: null }, ollama: { baseUrl: null } },
  keys: { openai: true, anthropic: false, gemini: false },
  speech: { model: "system", autoplay: false },
  ...over,
});

/** The Memory page's embedding status: by default no local model (full-text search only). */
export const embeddingStatus = (over: Partial<EmbeddingStatus> = {}): EmbeddingStatus => ({
  active: false,
  model: null,
  reason: "no embedding model at /data/models/all-MiniLM-L6-v2 (put the all-MiniLM-L6-v2 files there)",
  provider: false,
  modelDir: "/data/models/all-MiniLM-L6-v2",
  modelPresent: false,
  entriesWithoutVector: 0,
  backfilling: false,
  ...over,
});

export const chat = (over: Partial<ChatRecord> = {}): ChatRecord => ({
  id: "c1",
  title: "First chat",
  workspace: "/work/space",
  model: null,
  mode: "default",
  tools: null,
  createdAt: "2026-01-01T00:00:00Z",
  updatedAt: "2026-01-01T00:00:00Z",
  ...over,
});

export const writeApproval = (over: Partial<PendingApproval> = {}): PendingApproval => ({
  id: "call-1",
  chatId: "c1",
  runId: "run-1",
  toolCallId: "call-1",
  toolName: "write_file",
  args: { file_path: "notes.txt", content: "hello" },
  decision: {
    behavior: "ask",
    source: "tool_default",
    reason: "Writing files needs approval in the default mode.",
    reasonCode: "tool_requires_approval",
    risk: "medium",
    actions: [
      { id: "allow_once", label: "Allow once", description: "Run this call only.", acceptsFeedback: false },
      {
        id: "allow_session",
        label: "Allow for this chat",
        description: "Run it and remember for this chat.",
        rule: { tool: "write_file", behavior: "allow", matcher: { kind: "path", glob: "/work/space/**" }, destination: "session", description: null },
        acceptsFeedback: false,
      },
      {
        id: "allow_global",
        label: "Always allow",
        description: "Run it and remember everywhere.",
        rule: { tool: "write_file", behavior: "allow", matcher: { kind: "path", glob: "/work/space/**" }, destination: "global", description: null },
        acceptsFeedback: false,
      },
      { id: "reject", label: "Reject", description: "Do not run it.", acceptsFeedback: true },
    ],
  },
  createdAt: "2026-01-01T00:00:00Z",
  ...over,
});

/** Installs the fake backend; commands without a handler fail like an unknown command would. */
export function backend(handlers: Record<string, Handler> = {}) {
  const calls: Call[] = [];
  const defaults: Record<string, Handler> = {
    list_chats: () => [],
    get_settings: () => settings(),
    get_catalog: () => catalog,
    pending_approvals: () => [],
    background_tasks: () => [],
    get_messages: () => [],
    chat_compactions: () => [],
    chat_notes: () => ({ tools: [], failures: [], usage: [] }),
    get_plan: () => null,
    embedding_status: () => embeddingStatus(),
    mcp_servers: () => [],
    mcp_tools: () => [],
    list_surfaces: () => [],
    local_models: () => ({ dir: "/data/models/gguf", installed: [], recommended: [] }),
    provider_keys: () => [
      { provider: "openai", envVar: "OPENAI_API_KEY", inEnvironment: false, inKeychain: false, inSession: false },
      { provider: "anthropic", envVar: "ANTHROPIC_API_KEY", inEnvironment: false, inKeychain: false, inSession: false },
      { provider: "gemini", envVar: "GEMINI_API_KEY", inEnvironment: false, inKeychain: false, inSession: false },
    ],
    log_file: () => ({ folder: "/data/logs", current: "/data/logs/suzent.log.2026-01-01" }),
    list_models: () => ["gpt-4.1", "gpt-4.1-mini"],
    // A new user's first chat is created at start (App), like "+ New" creates one.
    create_chat: () => chat({ id: "auto", title: "New chat" }),
    this_device: () => ({
      id: "aaaabbbbccccddddeeeeffffgggghhhhiiiijjjjkkkkllllmmmm",
      shortId: "aaaabbbbcccc",
      name: "This laptop",
      platform: "linux",
      fingerprint: "1A2B 3C4D 5E6F 7081",
      keyStorage: "the device key is in the OS keychain",
      keyInKeychain: true,
      relay: true,
      discovery: true,
      running: true,
      addrs: [],
    }),
    list_devices: () => [],
    list_channels: () => [],
    channel_requests: () => [],
    nearby_devices: () => [],
    list_schedules: () => [],
    chat_heartbeat: () => null,
    chat_browser_mode: () => ({ chosen: null, default: "extension", effective: "extension" }),
    chat_goal: () => null,
    quiet_turns: () => [],
    // Settings → Browser and the pairing dialog: nothing paired, nothing waiting.
    browser_status: () => ({
      state: "notInstalled",
      port: 17345,
      extensionVersion: "0.1.0",
      shippedExtensionId: "mkppgeflpnljcodnkejndlmnggmhgmme",
      pairings: [],
      pending: [],
      nativeHosts: [],
    }),
    // suzent:// links: nothing arrived.
    deep_link_inbox: () => ({ pending: [], notices: [] }),
    // Updates: not checked yet, from the default feed.
    update_status: () => ({ currentVersion: "0.1.0", endpoint: "https://releases.suzent.dev/desktop/latest.json", state: { state: "idle" }, checkedAt: null }),
    desktop_prefs: () => ({
      updateEndpoint: "https://releases.suzent.dev/desktop/latest.json",
      checkForUpdates: true,
      keepRunningInTray: true,
      trayNoticeShown: false,
    }),
    autostart_enabled: () => false,
    cli_tool_status: () => ({ supported: false, installed: false, cli: null, target: null, problem: null }),
    tray_status: () => ({ available: true, pendingApprovals: 0, enabledSchedules: 0, runningCommands: 0, pairedDevices: 0, label: "Suzent" }),
    // HtmlFrame documents: one token per staged document, in staging order.
    stage_html_frame: (a) => `frame-${calls.filter((c) => c.cmd === "stage_html_frame").length}-${String(a.html).length}`,
  };
  const all = { ...defaults, ...handlers };
  mockIPC(
    async (cmd, args) => {
      const a = (args ?? {}) as Record<string, unknown>;
      calls.push({ cmd, args: a });
      const h = all[cmd];
      if (!h) throw { kind: "unknown_command", message: `no handler for ${cmd}` };
      return h(a);
    },
    { shouldMockEvents: true },
  );
  return {
    calls,
    callsOf: (cmd: string) => calls.filter((c) => c.cmd === cmd).map((c) => c.args),
  };
}

export function renderWithStore(ui: ReactNode) {
  return render(<StoreProvider>{ui}</StoreProvider>);
}

export async function sendEvent(event: RuntimeEvent) {
  await act(async () => {
    await emit("runtime-event", event);
  });
}
