import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { App } from "../App";
import type { BackgroundTask, RunSummary, RuntimeEvent } from "../types";
import { backend, chat, renderWithStore, sendEvent, settings } from "./backend";

const done: RunSummary = { runId: "r1", outcome: "completed", pending: [], text: "", error: null };

describe("error banner", () => {
  it("a rejected command shows its message, not a blank window", async () => {
    backend({
      list_chats: () => {
        throw { kind: "storage", message: "database is locked" };
      },
    });
    renderWithStore(<App />);
    expect(await screen.findByTestId("error-banner")).toHaveTextContent("Could not load chats: database is locked");
    // The rest of the app still works.
    expect(screen.getByTestId("nav-settings")).toBeInTheDocument();
    expect(screen.getByTestId("chat-new")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Dismiss error" }));
    expect(screen.queryByTestId("error-banner")).not.toBeInTheDocument();
  });

  it("a command rejected with a plain string shows that string", async () => {
    backend({
      get_catalog: () => {
        throw "catalog unavailable";
      },
    });
    renderWithStore(<App />);
    expect(await screen.findByTestId("error-banner")).toHaveTextContent("Could not load the tool catalog: catalog unavailable");
  });
});

describe("chat", () => {
  it("streams text deltas as markdown with highlighted code and shows tool cards with status, output and duration", async () => {
    let finish: (s: RunSummary) => void = () => {};
    const be = backend({
      list_chats: () => [chat()],
      send_message: () => new Promise<RunSummary>((r) => (finish = r)),
    });
    renderWithStore(<App />);
    const input = await screen.findByTestId("composer-input");
    await userEvent.type(input, "hello{Enter}");
    expect(be.callsOf("send_message")).toEqual([{ chatId: "c1", text: "hello", attachments: [] }]);
    expect(screen.getByTestId("message-user")).toHaveTextContent("hello");
    expect(screen.getByTestId("composer-stop")).toBeInTheDocument();

    await sendEvent({ name: "run_started", value: { chatId: "c1", runId: "r1", model: "openai/gpt-4.1" } });
    await sendEvent({ name: "text_delta", value: { chatId: "c1", runId: "r1", delta: "Here is **bold** and\n\n```rust\nfn " } });
    await sendEvent({ name: "text_delta", value: { chatId: "c1", runId: "r1", delta: "main() {}\n```\n" } });
    const msg = screen.getByTestId("message-assistant");
    expect(within(msg).getByText("bold").tagName).toBe("STRONG");
    expect(msg.querySelector("code.hljs.language-rust")).not.toBeNull();
    expect(msg.querySelector(".hljs-keyword")).toHaveTextContent("fn");

    await sendEvent({
      name: "tool_call_start",
      value: { chatId: "c1", runId: "r1", toolCallId: "t1", toolName: "edit_file", args: { file_path: "a.txt", old_string: "one\ntwo", new_string: "one\nthree" } },
    });
    const card = screen.getByTestId("tool-card");
    expect(card).toHaveAttribute("data-tool-name", "edit_file");
    expect(card).toHaveAttribute("data-status", "running");
    expect(card.querySelector(".diff .del")).toHaveTextContent("two");
    expect(card.querySelector(".diff .add")).toHaveTextContent("three");

    await sendEvent({
      name: "tool_call_end",
      value: { chatId: "c1", runId: "r1", toolCallId: "t1", toolName: "edit_file", ok: true, output: "Replaced 1 occurrence", durationMs: 1500 },
    });
    expect(card).toHaveAttribute("data-status", "ok");
    expect(card).toHaveTextContent("1.5 s");
    expect(card).toHaveTextContent("Replaced 1 occurrence");

    await sendEvent({ name: "text_delta", value: { chatId: "c1", runId: "r1", delta: "Done." } });
    expect(screen.getAllByTestId("message-assistant")).toHaveLength(2);

    await sendEvent({ name: "run_finished", value: { chatId: "c1", runId: "r1", outcome: "completed" } });
    await act(async () => finish(done));
    expect(screen.getByTestId("composer-send")).toBeInTheDocument();
    expect(screen.queryByTestId("composer-stop")).not.toBeInTheDocument();
  });

  it("marks denied and waiting calls and a write_file card shows the new content as a diff", async () => {
    backend({ list_chats: () => [chat()], send_message: () => new Promise(() => {}) });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "go{Enter}");
    await sendEvent({ name: "tool_call_start", value: { chatId: "c1", runId: "r1", toolCallId: "a", toolName: "run_command", args: { content: "git push" } } });
    // The wire shape: the decision's fields flattened into the event (serde flatten).
    await sendEvent({
      name: "tool_permission_decision",
      value: { chatId: "c1", toolCallId: "a", toolName: "run_command", behavior: "deny", source: "rule", reason: "A rule denies git push.", reasonCode: "rule_deny", risk: "high", actions: [] },
    } as unknown as RuntimeEvent);
    await sendEvent({ name: "tool_call_end", value: { chatId: "c1", runId: "r1", toolCallId: "a", toolName: "run_command", ok: false, output: "Permission denied", durationMs: 0 } });
    await sendEvent({ name: "tool_call_start", value: { chatId: "c1", runId: "r1", toolCallId: "b", toolName: "write_file", args: { file_path: "n.txt", content: "hi\n" } } });
    // The shape the bindings declare: a nested decision.
    await sendEvent({
      name: "tool_permission_decision",
      value: { chatId: "c1", toolCallId: "b", toolName: "write_file", decision: { behavior: "ask", source: "tool_default", reason: "r", reasonCode: "c", risk: "medium", actions: [] } },
    } as unknown as RuntimeEvent);
    const [denied, waiting] = screen.getAllByTestId("tool-card");
    expect(denied).toHaveAttribute("data-status", "denied");
    expect(denied).toHaveTextContent("Denied: A rule denies git push.");
    expect(waiting).toHaveAttribute("data-status", "waiting");
    expect(waiting.querySelector(".diff .add")).toHaveTextContent("hi");
  });

  it("a provider error shows in the chat and the chat stays usable", async () => {
    const be = backend({ list_chats: () => [chat()], send_message: () => ({ ...done, outcome: "failed", error: "boom" }) });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "first{Enter}");
    await sendEvent({ name: "run_error", value: { chatId: "c1", runId: "r1", message: "provider returned 500: overloaded" } });
    expect(screen.getByTestId("error-banner")).toHaveTextContent("provider returned 500: overloaded");
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeInTheDocument());
    await userEvent.type(screen.getByTestId("composer-input"), "again{Enter}");
    expect(be.callsOf("send_message")).toHaveLength(2);
  });

  it("Esc and the stop button cancel the run", async () => {
    const be = backend({ list_chats: () => [chat()], send_message: () => new Promise(() => {}), cancel_run: () => null });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "long task{Enter}");
    await userEvent.keyboard("{Escape}");
    await userEvent.click(screen.getByTestId("composer-stop"));
    expect(be.callsOf("cancel_run")).toEqual([{ chatId: "c1" }, { chatId: "c1" }]);
  });

  it("Shift+Enter adds a line, Ctrl+Enter sends", async () => {
    const be = backend({ list_chats: () => [chat()], send_message: () => done });
    renderWithStore(<App />);
    const input = await screen.findByTestId("composer-input");
    await userEvent.type(input, "a{Shift>}{Enter}{/Shift}b");
    expect(input).toHaveValue("a\nb");
    await userEvent.type(input, "{Control>}{Enter}{/Control}");
    expect(be.callsOf("send_message")).toEqual([{ chatId: "c1", text: "a\nb", attachments: [] }]);
  });

  it("switches the chat's permission mode and explains it in plain words", async () => {
    const be = backend({ list_chats: () => [chat()], set_chat_mode: (a) => chat({ mode: a.mode as "full_access" }) });
    renderWithStore(<App />);
    const select = await screen.findByTestId("mode-switch");
    expect([...(select as HTMLSelectElement).options].map((o) => o.value)).toEqual(["default", "auto", "full_access"]);
    expect(screen.getByText(/Asks you before it writes files/)).toBeInTheDocument();
    await userEvent.selectOptions(select, "full_access");
    expect(be.callsOf("set_chat_mode")).toEqual([{ chatId: "c1", mode: "full_access" }]);
    await waitFor(() => expect(screen.getAllByText(/Never asks/).length).toBeGreaterThan(0));
  });

  it("creates, renames and deletes chats", async () => {
    let chats = [chat()];
    const be = backend({
      list_chats: () => chats,
      create_chat: () => {
        const c = chat({ id: "c2", title: "New chat" });
        chats = [c, ...chats];
        return c;
      },
      rename_chat: (a) => chat({ id: a.chatId as string, title: a.title as string }),
      delete_chat: () => null,
    });
    renderWithStore(<App />);
    await screen.findByText("First chat", { selector: ".chat-item-title" });
    await userEvent.click(screen.getByTestId("chat-new"));
    await waitFor(() => expect(screen.getAllByTestId("chat-item")).toHaveLength(2));
    expect(be.callsOf("create_chat")).toEqual([{ args: {} }]);

    const first = screen.getAllByTestId("chat-item").find((li) => li.getAttribute("data-chat-id") === "c1") as HTMLElement;
    await userEvent.click(within(first).getByTestId("chat-rename"));
    const input = within(first).getByTestId("chat-rename-input");
    await userEvent.clear(input);
    await userEvent.type(input, "Renamed{Enter}");
    expect(be.callsOf("rename_chat")).toEqual([{ chatId: "c1", title: "Renamed" }]);
    await screen.findByText("Renamed", { selector: ".chat-item-title" });

    await userEvent.click(within(first).getByTestId("chat-delete"));
    await userEvent.click(within(first).getByTestId("chat-delete-confirm"));
    await waitFor(() => expect(screen.getAllByTestId("chat-item")).toHaveLength(1));
    expect(be.callsOf("delete_chat")).toEqual([{ chatId: "c1" }]);
  });

  it("shows the first-run screen without a default model and saves model and key", async () => {
    let s = settings({ defaultModel: null, keys: { openai: false, anthropic: false, gemini: false } });
    const be = backend({
      get_settings: () => s,
      set_api_key: () => null,
      save_settings: (a) => (s = { ...s, defaultModel: (a.patch as { defaultModel: string }).defaultModel }),
      create_chat: () => chat({ id: "first", title: "New chat" }),
    });
    renderWithStore(<App />);
    await screen.findByTestId("first-run");
    await userEvent.selectOptions(screen.getByTestId("first-run-provider"), "anthropic");
    await userEvent.type(screen.getByTestId("first-run-model"), "claude-sonnet-4-5");
    await userEvent.type(screen.getByTestId("first-run-key"), "sk-secret");
    await userEvent.click(screen.getByTestId("first-run-save"));
    await waitFor(() => expect(screen.queryByTestId("first-run")).not.toBeInTheDocument());
    expect(be.callsOf("set_api_key")).toEqual([{ provider: "anthropic", key: "sk-secret" }]);
    expect(be.callsOf("save_settings")).toEqual([{ patch: { defaultModel: "anthropic/claude-sonnet-4-5", workspace: "/work/space" } }]);
    expect(screen.getByTestId("nav-chat")).toBeInTheDocument();
    // The first chat is open and its composer focused, never "No chat selected".
    await waitFor(() => expect(screen.getByTestId("composer-input")).toHaveFocus());
    expect(be.callsOf("create_chat")).toHaveLength(1);
  });

  it("ignores runtime events it does not know", async () => {
    backend({ list_chats: () => [chat()] });
    renderWithStore(<App />);
    await screen.findByTestId("composer-input");
    await act(async () => {
      const { emit } = await import("@tauri-apps/api/event");
      await emit("runtime-event", { name: "plan_updated", value: { chatId: "c1" } });
    });
    expect(screen.queryByTestId("error-banner")).not.toBeInTheDocument();
    expect(screen.getByTestId("composer-input")).toBeInTheDocument();
  });
});

describe("settings", () => {
  it("stores keys without showing them and saves model and base URLs", async () => {
    let s = settings();
    const be = backend({
      get_settings: () => s,
      set_api_key: (a) => {
        s = { ...s, keys: { ...s.keys, [a.provider as string]: true } };
        return null;
      },
      save_settings: () => s,
      pick_workspace: () => "/picked/folder",
    });
    renderWithStore(<App />);
    await userEvent.click(await screen.findByTestId("nav-settings"));
    expect(screen.getByTestId("settings-key-status-openai")).toHaveTextContent("stored");
    expect(screen.getByTestId("settings-key-status-anthropic")).toHaveTextContent("not set");
    const key = screen.getByTestId("settings-api-key-anthropic");
    expect(key).toHaveAttribute("type", "password");
    await userEvent.type(key, "sk-ant{Enter}");
    await waitFor(() => expect(screen.getByTestId("settings-key-status-anthropic")).toHaveTextContent("stored"));
    expect(be.callsOf("set_api_key")).toEqual([{ provider: "anthropic", key: "sk-ant" }]);
    expect(key).toHaveValue("");
    expect(document.body.textContent).not.toContain("sk-ant");

    const model = screen.getByTestId("settings-model");
    await userEvent.clear(model);
    await userEvent.type(model, "gpt-4.1");
    await userEvent.click(screen.getByTestId("settings-save"));
    expect(screen.getByRole("alert")).toHaveTextContent("Default model must look like provider/model");
    expect(be.callsOf("save_settings")).toEqual([]);
    await userEvent.clear(model);
    await userEvent.type(model, "ollama/qwen2.5");
    await userEvent.type(screen.getByTestId("settings-base-url-ollama"), "http://127.0.0.1:11434");
    await userEvent.click(screen.getByTestId("settings-save"));
    await waitFor(() => expect(be.callsOf("save_settings")).toHaveLength(1));
    expect(be.callsOf("save_settings")[0]).toEqual({
      patch: {
        defaultModel: "ollama/qwen2.5",
        maxSteps: 50,
        providers: { openai: { baseUrl: null }, anthropic: { baseUrl: null }, gemini: { baseUrl: null }, ollama: { baseUrl: "http://127.0.0.1:11434" } },
      },
    });

    await userEvent.click(screen.getByTestId("settings-workspace-pick"));
    await waitFor(() => expect(be.callsOf("save_settings")[1]).toEqual({ patch: { workspace: "/picked/folder" } }));
  });
});

describe("background tasks", () => {
  const task = (over: Partial<BackgroundTask> = {}): BackgroundTask => ({
    id: "b1",
    kind: "command",
    chatId: "c1",
    title: "npm test",
    status: "running",
    recentOutput: "PASS a.test.ts\n",
    outputBytes: 15,
    startedAt: "2026-01-01T00:00:00Z",
    ...over,
  });

  it("shows an empty state, then tasks from background_tasks with status, output and exit code", async () => {
    let tasks: BackgroundTask[] = [];
    backend({ background_tasks: () => tasks });
    renderWithStore(<App />);
    // Empty, the panel starts closed.
    await userEvent.click(await screen.findByRole("button", { name: "Background tasks" }));
    const panel = await screen.findByTestId("background-tasks");
    expect(panel).toHaveTextContent("No background tasks.");
    tasks = [task({ status: "finished", exitCode: 1 })];
    await userEvent.click(within(panel).getByRole("button", { name: "Refresh background tasks" }));
    const row = await within(panel).findByTestId("background-task");
    expect(row).toHaveTextContent("exit 1");
    expect(row).toHaveTextContent("npm test");
    expect(row).toHaveTextContent("PASS a.test.ts");
    expect(within(row).queryByTestId("background-task-stop")).not.toBeInTheDocument();
  });

  it("follows background_task_update events and stops a running task", async () => {
    const be = backend({ stop_background_task: () => task({ status: "stopped", exitCode: 143 }) });
    renderWithStore(<App />);
    await userEvent.click(await screen.findByRole("button", { name: "Background tasks" }));
    const panel = await screen.findByTestId("background-tasks");
    await sendEvent({ name: "background_task_update", value: { chatId: "c1", task: task() } });
    const row = within(panel).getByTestId("background-task");
    expect(row).toHaveAttribute("data-status", "running");
    await sendEvent({
      name: "background_task_update",
      value: { chatId: "c1", task: task({ recentOutput: "PASS a.test.ts\nPASS b.test.ts\n" }) },
    });
    expect(within(panel).getAllByTestId("background-task")).toHaveLength(1);
    expect(row).toHaveTextContent("PASS b.test.ts");
    await userEvent.click(within(row).getByTestId("background-task-stop"));
    expect(be.callsOf("stop_background_task")).toEqual([{ taskId: "b1" }]);
    await waitFor(() => expect(within(panel).getByTestId("background-task")).toHaveAttribute("data-status", "stopped"));
    expect(panel).toHaveTextContent("exit 143");
  });
});

describe("transcript reload", () => {
  it("re-reads the transcript at run end, keeping tool durations and the failed turn's error", async () => {
    let stored: unknown[] = [];
    const be = backend({
      list_chats: () => [chat()],
      get_messages: () => stored,
      send_message: () => new Promise(() => {}),
    });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "read it{Enter}");
    await sendEvent({ name: "tool_call_start", value: { chatId: "c1", runId: "r1", toolCallId: "t1", toolName: "read_file", args: { file_path: "a" } } });
    await sendEvent({ name: "tool_call_end", value: { chatId: "c1", runId: "r1", toolCallId: "t1", toolName: "read_file", ok: true, output: "x", durationMs: 2500 } });
    await sendEvent({ name: "run_error", value: { chatId: "c1", runId: "r1", message: "provider timed out" } });
    stored = [
      { seq: 1, runId: "r1", createdAt: "2026-01-01T00:00:00Z", message: { role: "user", text: "read it" } },
      { seq: 2, runId: "r1", createdAt: "2026-01-01T00:00:00Z", message: { role: "assistant", text: "", toolCalls: [{ id: "t1", name: "read_file", arguments: '{"file_path":"a"}' }] } },
      { seq: 3, runId: "r1", createdAt: "2026-01-01T00:00:00Z", message: { role: "tool", toolCallId: "t1", toolName: "read_file", content: "x", isError: false } },
      { seq: 4, runId: "r1", createdAt: "2026-01-01T00:00:00Z", message: { role: "assistant", text: "missed while lagging" } },
    ];
    const before = be.callsOf("get_messages").length;
    await sendEvent({ name: "run_finished", value: { chatId: "c1", runId: "r1", outcome: "failed" } });
    await waitFor(() => expect(be.callsOf("get_messages").length).toBe(before + 1));
    expect(await screen.findByText("missed while lagging")).toBeInTheDocument();
    expect(screen.getByTestId("tool-card")).toHaveTextContent("2.5 s");
    expect(screen.getByTestId("error-banner")).toHaveTextContent("provider timed out");
    expect(screen.getAllByTestId("message-user")).toHaveLength(1);
  });
});

describe("startup failure", () => {
  it("shows the backend's startup error once, readably", async () => {
    const startup = () => {
      throw { kind: "startup", message: "invalid config file /home/u/.config/suzent/config.toml: unknown field `modle`" };
    };
    backend({ list_chats: startup, get_settings: startup, get_catalog: startup, pending_approvals: startup, background_tasks: startup });
    renderWithStore(<App />);
    const banner = await screen.findByTestId("error-banner");
    expect(banner).toHaveTextContent("Suzent could not start");
    expect(banner).toHaveTextContent("unknown field `modle`");
    expect(screen.getAllByTestId("error-banner")).toHaveLength(1);
  });
});
