// A scripted stand-in for the Rust backend, for looking at the UI in a plain browser
// (`npm run build:mock`, then serve dist-mock/). Only `vite build --mode mock` includes it, and
// main.tsx installs it only when no Tauri backend is present. Query `?scenario=` picks a state:
// approval (a pending write_file), firstrun (nothing configured), error (commands fail).
import { emit } from "@tauri-apps/api/event";
import { mockIPC } from "@tauri-apps/api/mocks";
import { isMcpCommand, mcpCommand, mcpToolsets } from "./mockMcp";
import type {
  AgentEvent,
  AuditEntry,
  ApprovalResponse,
  BackgroundTask,
  Capability,
  ChatRecord,
  PendingApproval,
  MemoryBlock,
  PermissionDecision,
  Plan,
  Rule,
  RuleDraft,
  Settings,
  SettingsPatch,
  Skill,
  StoredMessage,
  Surface,
  SurfaceAction,
} from "../types";

const now = () => new Date().toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let seq = 100;
const id = (p: string) => `${p}-${seq++}`;

const catalog: Capability[] = [
  {
    id: "filesystem",
    label: "Filesystem",
    description: "Read, write, edit and search files in the workspace and the agent's storage.",
    tools: [
      { id: "ReadFileTool", name: "Read file", description: "Reads a text file, optionally a range of lines.", runtimeName: "read_file", requiresApproval: false },
      { id: "WriteFileTool", name: "Write file", description: "Creates or overwrites a file.", runtimeName: "write_file", requiresApproval: true },
      { id: "EditFileTool", name: "Edit file", description: "Replaces text in a file.", runtimeName: "edit_file", requiresApproval: true },
      { id: "GlobTool", name: "Find files", description: "Finds files matching a glob pattern.", runtimeName: "glob_search", requiresApproval: false },
      { id: "GrepTool", name: "Search text", description: "Searches file contents with a regular expression.", runtimeName: "grep_search", requiresApproval: false },
    ],
  },
  {
    id: "shell",
    label: "Shell",
    description: "Run shell commands in the workspace.",
    tools: [
      { id: "RunCommandTool", name: "Run command", description: "Runs a shell command and returns its output.", runtimeName: "run_command", requiresApproval: true },
    ],
  },
];

const scenario = new URLSearchParams(window.location.search).get("scenario") ?? "";

const settings: Settings = {
  defaultModel: scenario === "firstrun" ? null : "openai/gpt-4.1",
  defaultMode: "default",
  tools: ["ReadFileTool", "WriteFileTool", "EditFileTool", "GlobTool", "ShellTool"],
  workspace: "/home/me/projects/suzent-demo",
  maxSteps: 50,
  configFile: "/home/me/.config/suzent/config.toml",
  providers: { openai: { baseUrl: null }, anthropic: { baseUrl: null }, gemini: { baseUrl: null }, ollama: { baseUrl: "http://127.0.0.1:11434" } },
  keys: { openai: true, anthropic: false, gemini: false },
  speech: { model: "system", autoplay: false },
};

const chats: ChatRecord[] = [
  { id: "c1", title: "Tidy up the README", workspace: settings.workspace ?? "", model: null, mode: "default", tools: null, createdAt: now(), updatedAt: now() },
  { id: "c2", title: "Why do the tests fail?", workspace: settings.workspace ?? "", model: null, mode: "auto", tools: null, createdAt: now(), updatedAt: now() },
];

const msg = (runId: string, message: StoredMessage["message"]): StoredMessage => ({ seq: seq++, runId, message, createdAt: now() });
const transcripts: Record<string, StoredMessage[]> = {
  c1: [
    msg("r1", { role: "user", text: "Make the README's install section shorter and fix the typo in the title." }),
    msg("r1", {
      role: "assistant",
      text: "Let me look at the README first.",
      toolCalls: [{ id: "t1", name: "read_file", arguments: JSON.stringify({ file_path: "README.md" }) }],
    }),
    msg("r1", { role: "tool", toolCallId: "t1", toolName: "read_file", content: "1\t# Suzent Deom\n2\t\n3\tInstall it with:\n4\t...", isError: false }),
    msg("r1", {
      role: "assistant",
      text: "",
      toolCalls: [
        {
          id: "t2",
          name: "edit_file",
          arguments: JSON.stringify({ file_path: "README.md", old_string: "# Suzent Deom\n\nInstall it with:", new_string: "# Suzent Demo\n\nInstall:" }),
        },
      ],
    }),
    msg("r1", { role: "tool", toolCallId: "t2", toolName: "edit_file", content: "Replaced 1 occurrence in README.md", isError: false }),
    msg("r1", {
      role: "assistant",
      text: "",
      toolCalls: [{ id: "t3", name: "run_command", arguments: JSON.stringify({ content: "git push origin main" }) }],
    }),
    msg("r1", { role: "tool", toolCallId: "t3", toolName: "run_command", content: "Permission denied (rule_deny): A rule denies git push.", isError: true }),
    msg("r1", {
      role: "assistant",
      text:
        "Done. The title now reads **Suzent Demo** and the install section is one line:\n\n```sh\ncargo install --path crates/suzent-cli\n```\n\n| File | Change |\n| --- | --- |\n| `README.md` | title typo, shorter install |\n\nI did not push: a rule denies `git push`.",
      toolCalls: [],
    }),
  ],
  c2: [],
};

const writeDecision: PermissionDecision = {
  behavior: "ask",
  source: "tool_default",
  reason: "Writing files needs your approval in the default mode.",
  reasonCode: "tool_requires_approval",
  risk: "medium",
  actions: [
    { id: "allow_once", label: "Allow once", description: "Run this call only.", acceptsFeedback: false },
    {
      id: "allow_session",
      label: "Allow for this chat",
      description: "Run it, and allow writes under the workspace for the rest of this chat.",
      rule: { tool: "write_file", behavior: "allow", matcher: { kind: "path", glob: "/home/me/projects/suzent-demo/**" }, destination: "session", description: null },
      acceptsFeedback: false,
    },
    {
      id: "allow_global",
      label: "Always allow",
      description: "Run it, and always allow writes under the workspace.",
      rule: { tool: "write_file", behavior: "allow", matcher: { kind: "path", glob: "/home/me/projects/suzent-demo/**" }, destination: "global", description: null },
      acceptsFeedback: false,
    },
    { id: "reject", label: "Reject", description: "Do not run it; your feedback goes to the agent.", acceptsFeedback: true },
  ],
};

const pending: PendingApproval[] =
  scenario === "approval"
    ? [
        {
          id: "t9",
          chatId: "c1",
          runId: "r2",
          toolCallId: "t9",
          toolName: "write_file",
          args: { file_path: "CHANGELOG.md", content: "# Changelog\n\n- Shorter install section\n" },
          decision: writeDecision,
          createdAt: now(),
        },
      ]
    : [];
if (scenario === "approval") {
  transcripts.c1.push(
    msg("r2", { role: "user", text: "Add a changelog entry." }),
    msg("r2", { role: "assistant", text: "", toolCalls: [{ id: "t9", name: "write_file", arguments: JSON.stringify(pending[0].args) }] }),
  );
}

const rules: Rule[] = [
  { id: "r-1", tool: "run_command", behavior: "deny", matcher: { kind: "prefix", words: ["git", "push"] }, destination: "global", createdAt: now(), description: "Never push from the agent" },
  { id: "r-2", tool: "read_file", behavior: "allow", matcher: { kind: "path", glob: "~/notes/**" }, destination: "global", createdAt: now(), description: null },
];

const tasks: BackgroundTask[] = [
  { id: "b1", kind: "command", title: "npm run dev", status: "running", chatId: "c1", recentOutput: "VITE v8.3.8 ready in 312 ms\n➜ Local: http://127.0.0.1:5173/", outputBytes: 64, startedAt: now() },
  { id: "b2", kind: "command", title: "cargo test -p suzent-store", status: "finished", chatId: "c2", recentOutput: "test result: ok. 42 passed; 0 failed", outputBytes: 40, exitCode: 0, startedAt: now(), finishedAt: now() },
];

const entry = (e: Partial<AuditEntry>): AuditEntry => ({
  timestamp: now(), kind: "evaluation", chatId: null, runId: null, toolCallId: null, tool: null, decision: null, userAction: null,
  mode: null, source: null, reason: null, reasonCode: null, risk: null, args: null, feedback: null, ruleId: null, ...e,
});

const audit: AuditEntry[] = [
  entry({ timestamp: new Date(Date.now() - 60_000).toISOString(), chatId: "c1", tool: "run_command", decision: "deny", reason: "A rule denies git push.", reasonCode: "rule_deny", mode: "default" }),
  entry({ timestamp: new Date(Date.now() - 120_000).toISOString(), kind: "resolution", chatId: "c1", tool: "edit_file", userAction: "allow_once" }),
  entry({ timestamp: new Date(Date.now() - 180_000).toISOString(), chatId: "c1", tool: "read_file", decision: "allow", reason: "Reading inside the workspace.", reasonCode: "read_only", mode: "default" }),
];

async function send(event: AgentEvent) {
  await emit("runtime-event", event);
}

async function scriptedTurn(chatId: string, text: string) {
  const runId = id("run");
  transcripts[chatId]?.push(msg(runId, { role: "user", text }));
  await send({ name: "run_started", value: { chatId, runId, model: settings.defaultModel ?? "" } });
  await advancePlan(chatId);
  const reply = `Here is what I found about “${text}”:\n\n1. The workspace has a \`README.md\`.\n2. Tests live in \`tests/\`.\n\n\`\`\`rust\nfn main() {\n    println!("hello");\n}\n\`\`\``;
  for (const piece of reply.match(/.{1,12}/gs) ?? []) {
    await sleep(25);
    await send({ name: "text_delta", value: { chatId, runId, delta: piece } });
  }
  await send({ name: "tool_call_start", value: { chatId, runId, toolCallId: id("tc"), toolName: "glob_search", args: { pattern: "**/*.md" } } });
  await send({ name: "run_finished", value: { chatId, runId, outcome: "completed" } });
  transcripts[chatId]?.push(msg(runId, { role: "assistant", text: reply, toolCalls: [] }));
  return { runId, outcome: "completed" as const, pending: [], text: reply, error: null };
}

// Plans, memory and skills (the Memory page and the chat's plan view).
const plans: Record<string, Plan> = {};
const memoryBlocks: MemoryBlock[] = [
  { name: "persona", content: "", maxChars: 2000 },
  { name: "user", content: "Name: Mira. Prefers metric units and short answers.", maxChars: 2000 },
  { name: "facts", content: "The release ships on Fridays.", maxChars: 2000 },
  { name: "context", content: "", maxChars: 2000 },
];
const archive = [
  { id: 1, content: "Summary of chat 'Release prep': the release ships Friday; notes in metric units.", createdAt: "2026-01-03T10:00:00Z" },
  { id: 2, content: "Mira's team deploys from the main branch only.", createdAt: "2026-01-02T09:00:00Z" },
];
/** The local embedding model: missing until "downloaded" (then two older memories get vectors). */
const embedding = { present: false, waiting: 2, backfilling: false };
const modelDir = "/home/me/.local/share/suzent/models/all-MiniLM-L6-v2";
const skills: Skill[] = [
  { name: "skill-authoring", description: "How to write a new skill: folder layout, SKILL.md front matter, scripts.", dir: "/home/me/.local/share/suzent/builtin-skills/skill-authoring", source: "built_in", enabled: true },
  { name: "release-notes", description: "Drafts release notes from the git log since the last tag.", dir: "/home/me/.config/suzent/skills/release-notes", source: "user", enabled: false },
];

/** Each scripted turn moves the chat's plan one phase on (and creates it on the first turn). */
async function advancePlan(chatId: string) {
  const old = plans[chatId];
  const at = old ? old.phases.findIndex((p) => p.status === "in_progress") : -1;
  const phases = (old?.phases ?? [
    { id: "explore", title: "Look at the workspace", capabilities: ["filesystem"], status: "pending" as const },
    { id: "change", title: "Make the change", capabilities: ["filesystem"], status: "pending" as const },
    { id: "verify", title: "Run the tests", capabilities: ["shell"], status: "pending" as const },
  ]).map((p, i) => ({ ...p, status: i <= at ? ("completed" as const) : i === at + 1 ? ("in_progress" as const) : ("pending" as const) }));
  plans[chatId] = { goal: "Answer the question and check it", phases, updatedAt: now() };
  await send({ name: "plan_updated", value: { chatId, plan: plans[chatId] } });
}

// A canvas surface in the first chat: a release checklist with a table, a form and progress.
const surfaces: Surface[] = [
  {
    chatId: "c1",
    surfaceId: "release",
    target: "canvas",
    title: "Release checklist",
    root: "root",
    version: 1,
    toolCallId: "t2",
    createdAt: now(),
    updatedAt: now(),
    dataModel: {
      progress: 0.4,
      steps: [
        { step: "Fix the title typo", state: "done" },
        { step: "Shorten the install section", state: "done" },
        { step: "Push to main", state: "blocked by a rule" },
      ],
      form: { version: "0.2.0", notes: "", notify: true },
    },
    components: [
      { id: "root", component: { Column: { children: { explicitList: ["intro", "status", "progress", "steps", "tabs"] } } } },
      { id: "intro", component: { Text: { text: { literalString: "Two of three steps are **done**." } } } },
      { id: "status", component: { Badge: { text: { literalString: "needs you" }, tone: "warning" } } },
      { id: "progress", component: { Progress: { value: { path: "/progress" }, label: { literalString: "Release" } } } },
      {
        id: "steps",
        component: { Table: { columns: [{ header: "Step", key: "step" }, { header: "State", key: "state" }], rows: { path: "/steps" } } },
      },
      {
        id: "tabs",
        component: { Tabs: { tabItems: [{ title: { literalString: "Publish" }, child: "form" }, { title: { literalString: "Preview" }, child: "preview" }] } },
      },
      { id: "form", component: { Column: { children: { explicitList: ["version", "notes", "notify", "publish"] } } } },
      { id: "version", component: { TextField: { label: { literalString: "Version" }, text: { path: "/form/version" } } } },
      { id: "notes", component: { TextField: { label: { literalString: "Release notes" }, text: { path: "/form/notes" }, textFieldType: "longText" } } },
      { id: "notify", component: { CheckBox: { label: { literalString: "Tell the team" }, value: { path: "/form/notify" } } } },
      {
        id: "publish",
        component: {
          Button: {
            child: "publishText",
            primary: true,
            action: {
              name: "publish",
              context: [
                { key: "version", value: { path: "/form/version" } },
                { key: "notes", value: { path: "/form/notes" } },
                { key: "notify", value: { path: "/form/notify" } },
              ],
            },
          },
        },
      },
      { id: "publishText", component: { Text: { text: { literalString: "Publish" } } } },
      {
        id: "preview",
        component: {
          HtmlFrame: {
            html: { literalString: "<h3>Suzent Demo 0.2.0</h3><p style='color:#4f46e5'>Shorter install.</p>" },
            height: 120,
            title: "Release page preview",
          },
        },
      },
    ],
  },
];

function submitSurfaceAction(chatId: string, action: SurfaceAction) {
  const s = surfaces.find((x) => x.chatId === chatId && x.surfaceId === action.surfaceId) ?? fail(`no surface "${action.surfaceId}" in this chat`);
  const text = `[canvas] action "${action.name}" on surface "${s.surfaceId}" (button "${action.sourceComponentId}"): ${JSON.stringify(action.context ?? {})}`;
  const at = now();
  return { id: id("inbox"), target: chatId, sender: "canvas", kind: "canvas_action", text, status: "pending", attempts: 0, maxAttempts: 5, nextAttemptAt: at, leaseOwner: null, leaseUntil: null, lastError: null, createdAt: at, deliveredAt: null };
}

function fail(message: string): never {
  throw { kind: "invalid_input", message };
}

export function installMockBackend() {
  mockIPC(
    async (cmd, raw) => {
      const args = (raw ?? {}) as Record<string, unknown>;
      if (scenario === "error" && cmd === "list_chats") fail("the database at ~/.local/share/suzent/suzent.db is locked by another process");
      switch (cmd) {
        case "list_chats":
          return chats;
        case "create_chat": {
          const c: ChatRecord = { id: id("c"), title: "New chat", workspace: settings.workspace ?? "", model: null, mode: settings.defaultMode, tools: null, createdAt: now(), updatedAt: now() };
          chats.unshift(c);
          transcripts[c.id] = [];
          return c;
        }
        case "rename_chat": {
          const c = chats.find((x) => x.id === args.chatId) ?? fail(`unknown chat '${String(args.chatId)}'`);
          c.title = String(args.title);
          return { ...c };
        }
        case "delete_chat": {
          const i = chats.findIndex((x) => x.id === args.chatId);
          if (i >= 0) chats.splice(i, 1);
          return null;
        }
        case "get_messages":
          return transcripts[String(args.chatId)] ?? [];
        case "chat_notes":
          return { tools: [], failures: [], usage: [] };
        case "send_message":
          return scriptedTurn(String(args.chatId), String(args.text));
        case "add_attachment": {
          const name = String(args.name);
          return { path: `.attachments/${String(args.chatId)}/${name}`, name, mime: "application/octet-stream", bytes: Math.floor((String(args.data).length * 3) / 4) };
        }
        case "resume_approvals": {
          const answers = args.answers as ApprovalResponse[];
          for (const a of answers) {
            const i = pending.findIndex((p) => p.id === a.request_id);
            if (i >= 0) pending.splice(i, 1);
          }
          return { runId: id("run"), outcome: "completed", pending: [], text: "", error: null };
        }
        case "pending_approvals":
          return pending.filter((p) => args.chatId == null || p.chatId === args.chatId);
        case "cancel_run":
          return null;
        case "set_chat_mode":
        case "set_chat_tools": {
          const c = chats.find((x) => x.id === args.chatId) ?? fail(`unknown chat '${String(args.chatId)}'`);
          if (cmd === "set_chat_mode") c.mode = args.mode as ChatRecord["mode"];
          else c.tools = (args.tools as string[] | null) ?? null;
          return { ...c };
        }
        case "get_catalog":
          return [...catalog, ...mcpToolsets()];
        case "get_settings":
          return settings;
        case "save_settings": {
          const p = args.patch as SettingsPatch;
          if (p.defaultModel !== undefined) settings.defaultModel = p.defaultModel ?? null;
          if (p.defaultMode) settings.defaultMode = p.defaultMode;
          if (p.tools) settings.tools = p.tools;
          if (p.workspace !== undefined) settings.workspace = p.workspace ?? null;
          if (p.providers) {
            const url = (x: { baseUrl?: string | null }) => ({ baseUrl: x.baseUrl ?? null });
            const q = p.providers;
            settings.providers = { openai: url(q.openai), anthropic: url(q.anthropic), gemini: url(q.gemini), ollama: url(q.ollama) };
          }
          return { ...settings };
        }
        case "set_api_key":
        case "delete_api_key":
          settings.keys = { ...settings.keys, [String(args.provider)]: cmd === "set_api_key" };
          return null;
        case "list_rules":
          return rules.filter((r) => r.destination === "global" || r.chatId === args.chatId);
        case "add_rule": {
          const d = args.draft as RuleDraft;
          const r: Rule = { ...d, id: id("rule"), chatId: d.destination === "session" ? (args.chatId as string) : undefined, createdAt: now(), description: d.description ?? null };
          rules.push(r);
          return r;
        }
        case "delete_rule": {
          const i = rules.findIndex((r) => r.id === args.ruleId);
          if (i >= 0) rules.splice(i, 1);
          return null;
        }
        case "read_audit_log":
          return audit;
        case "pick_workspace":
          return "/home/me/projects/other";
        case "background_tasks":
          return tasks;
        case "stop_background_task": {
          const t = tasks.find((x) => x.id === args.taskId) ?? fail(`unknown task '${String(args.taskId)}'`);
          Object.assign(t, { status: "stopped", exitCode: 143, finishedAt: now() });
          return { ...t };
        }
        case "get_plan":
          return plans[args.chatId as string] ?? null;
        case "memory_blocks":
          return memoryBlocks.map((b) => ({ ...b }));
        case "set_memory_block": {
          const b = memoryBlocks.find((x) => x.name === args.name) ?? fail(`unknown block '${String(args.name)}'`);
          const content = String(args.content).trim();
          if ([...content].length > b.maxChars) fail(`block '${b.name}' would hold ${[...content].length} characters; the limit is ${b.maxChars}`);
          b.content = content;
          return { ...b };
        }
        case "search_memory": {
          const words = String(args.query).toLowerCase().split(/\W+/).filter(Boolean);
          const hits = archive
            .filter((e) => words.some((w) => e.content.toLowerCase().includes(w)))
            .map((e, i) => ({ ...e, score: 1 / (61 + i), matchedBy: ["text"] }));
          return { hits, textOnlyReason: embedding.present ? null : `no embedding model at ${modelDir}` };
        }
        case "embedding_status":
          return {
            active: embedding.present,
            model: embedding.present ? "all-MiniLM-L6-v2 (local)" : null,
            reason: embedding.present ? null : `no embedding model at ${modelDir} (put the all-MiniLM-L6-v2 files there)`,
            provider: false,
            modelDir,
            modelPresent: embedding.present,
            entriesWithoutVector: embedding.waiting,
            backfilling: embedding.backfilling,
          };
        case "download_embedding_model": {
          const downloaded = !embedding.present;
          await new Promise((r) => setTimeout(r, 1200));
          embedding.present = true;
          embedding.backfilling = embedding.waiting > 0;
          setTimeout(() => Object.assign(embedding, { waiting: 0, backfilling: false }), 3000);
          return { folder: modelDir, downloaded };
        }
        case "local_models":
          // One small model already in the models folder (the first-run offer shows it).
          return {
            dir: "~/.local/share/suzent/models/gguf",
            installed: [
              {
                id: "SmolLM2-135M-Instruct.Q4_1",
                path: "~/.local/share/suzent/models/gguf/SmolLM2-135M-Instruct.Q4_1.gguf",
                sizeBytes: 98_362_432,
                sha256: null,
                source: "folder",
                architecture: "llama",
                name: "SmolLM2 135M Instruct",
                contextLength: 8192,
              },
            ],
            recommended: [],
          };
        case "list_skills":
          return skills.map((x) => ({ ...x }));
        case "set_skill_enabled": {
          const k = skills.find((x) => x.name === args.name) ?? fail(`no skill named '${String(args.name)}'`);
          k.enabled = Boolean(args.enabled);
          return skills.map((x) => ({ ...x }));
        }
        case "list_surfaces":
          return surfaces.filter((s) => s.chatId === args.chatId);
        case "submit_surface_action":
          return submitSurfaceAction(String(args.chatId), args.action as SurfaceAction);
        case "delete_surface": {
          const i = surfaces.findIndex((s) => s.chatId === args.chatId && s.surfaceId === args.surfaceId);
          if (i >= 0) surfaces.splice(i, 1);
          return i >= 0;
        }
        case "stage_html_frame":
          return stageHtmlFrame(String(args.html));
        case "this_device":
          return {
            id: "mockmockmockmockmockmockmockmockmockmockmockmockmock",
            shortId: "mockmockmock",
            name: "This browser (mock)",
            platform: "web",
            fingerprint: "0000 0000 0000 0000",
            keyStorage: "the mock backend has no device key",
            keyInKeychain: true,
            relay: false,
            discovery: false,
            running: false,
            addrs: [],
          };
        case "list_devices":
        case "nearby_devices":
          return [];
        // The desktop shell: no links, no update feed, no tray in the browser.
        case "deep_link_inbox":
          return { pending: [], notices: [] };
        case "update_status":
          return { currentVersion: "0.1.0", endpoint: "https://releases.suzent.dev/desktop/latest.json", state: { state: "idle" }, checkedAt: null };
        case "desktop_prefs":
          return { updateEndpoint: "https://releases.suzent.dev/desktop/latest.json", checkForUpdates: false, keepRunningInTray: false, trayNoticeShown: true };
        case "autostart_enabled":
          return false;
        case "cli_tool_status":
          return { supported: false, installed: false, cli: null, target: null, problem: null };
        case "tray_status":
          return { available: false, pendingApprovals: 0, enabledSchedules: 0, runningCommands: 0, pairedDevices: 0, label: "Suzent" };
        default:
          if (isMcpCommand(cmd)) return mcpCommand(cmd, args);
          fail(`the mock backend has no command '${cmd}'`);
      }
    },
    { shouldMockEvents: true },
  );
  // A plain browser has no `suzent-frame:` scheme: staged HtmlFrame documents become blob: URLs.
  const internals = (window as unknown as { __TAURI_INTERNALS__: { convertFileSrc: (path: string, protocol?: string) => string } })
    .__TAURI_INTERNALS__;
  internals.convertFileSrc = (path, protocol = "asset") =>
    protocol === "suzent-frame" ? (frameUrls.get(path) ?? "about:blank") : `${protocol}://localhost/${encodeURIComponent(path)}`;
}

// HtmlFrame documents staged by `stage_html_frame`: token -> blob: URL.
const frameUrls = new Map<string, string>();

function stageHtmlFrame(html: string): string {
  const token = `frame-${frameUrls.size + 1}`;
  frameUrls.set(token, URL.createObjectURL(new Blob([html], { type: "text/html" })));
  return token;
}
