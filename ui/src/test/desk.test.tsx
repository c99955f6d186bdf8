// Issue 19 in the UI: approvals decided inside the dialog, who allowed each call, inbox events,
// errors in their own chat, the layout at small widths, first-run model names.
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { App } from "../App";
import { ApprovalDialog, urlsOf } from "../components/ApprovalDialog";
import { modelName } from "../components/FirstRun";
import { decisionText } from "../components/ToolCard";
import i18n from "../i18n";
import { inboxSource, itemsFromMessages } from "../model";
import type { PendingApproval, PermissionDecision } from "../types";
import { backend, chat, renderWithStore, sendEvent, settings as settingsOf, writeApproval } from "./backend";

const t = i18n.t.bind(i18n);

function commandApproval(): PendingApproval {
  const a = writeApproval({ toolName: "run_command", args: { content: "ls -la && rm -rf build" } });
  a.decision.actions = [
    { id: "allow_once", label: "Allow once", description: "Run this call only.", acceptsFeedback: false },
    {
      id: "allow_session",
      label: "Allow for this chat",
      description: "Remember.",
      rule: { tool: "run_command", behavior: "allow", matcher: { kind: "prefix", words: ["ls", "-la"] }, destination: "session", description: null },
      acceptsFeedback: false,
    },
    { id: "reject", label: "Reject", description: "Do not run it.", acceptsFeedback: true },
  ];
  return a;
}

describe("approval dialog (issue 19)", () => {
  it("shows the diff of a write, and is modal", () => {
    render(<ApprovalDialog approvals={[writeApproval({ args: { file_path: "notes.txt", content: "one\ntwo" } })]} onResolve={() => {}} />);
    const dialog = screen.getByTestId("approval-dialog");
    expect(dialog).toHaveAttribute("aria-modal", "true");
    const diff = within(screen.getByTestId("approval-diff")).getByLabelText("Changes");
    expect(diff.querySelectorAll(".add")).toHaveLength(2);
    expect(screen.getByTestId("approval-diff")).toHaveTextContent("New content of notes.txt");
  });

  it("shows the whole command and each command of the script with what the policy says", async () => {
    backend({
      explain_permission: () => ({
        tool: "run_command", mode: "default", behavior: "ask", reasonCode: "x", reason: "r", risk: "high", source: "shell_policy",
        matchedRules: [], destinations: [], destinationsComplete: true, understood: true, compound: true, actions: [], reviewerWouldDecide: false,
        segments: [
          { words: ["ls", "-la"], wrappers: [], assignments: [], redirects: [], nested: false, verdict: "allow", verdictReason: "ls only reads" },
          { words: ["rm", "-rf", "build"], wrappers: [], assignments: [], redirects: [], nested: false, verdict: "ask", verdictReason: "rm deletes files" },
        ],
      }),
    });
    render(<ApprovalDialog approvals={[commandApproval()]} onResolve={() => {}} />);
    expect(screen.getByTestId("approval-command")).toHaveTextContent("ls -la && rm -rf build");
    const segments = await screen.findAllByTestId("approval-segment");
    expect(segments.map((s) => s.textContent)).toEqual(["ls -laallowls only reads", "rm -rf buildaskrm deletes files"]);
  });

  it("names the URL and the origin of a web call", () => {
    expect(urlsOf({ url: "https://docs.example.com/a/b?q=1", nested: { x: ["http://10.0.0.1:8080/x"] }, n: 1 })).toEqual([
      { url: "https://docs.example.com/a/b?q=1", origin: "https://docs.example.com" },
      { url: "http://10.0.0.1:8080/x", origin: "http://10.0.0.1:8080" },
    ]);
  });

  it("Esc rejects, and Tab and Shift+Tab keep the focus inside", async () => {
    const onResolve = vi.fn();
    render(
      <>
        <button type="button">outside</button>
        <ApprovalDialog approvals={[writeApproval()]} onResolve={onResolve} />
      </>,
    );
    const dialog = screen.getByTestId("approval-dialog");
    expect(document.activeElement).toBe(screen.getByTestId("approval-action-allow_once"));
    for (let i = 0; i < 12; i++) {
      await userEvent.tab();
      expect(dialog.contains(document.activeElement)).toBe(true);
    }
    for (let i = 0; i < 4; i++) {
      await userEvent.tab({ shift: true });
      expect(dialog.contains(document.activeElement)).toBe(true);
    }
    await userEvent.keyboard("{Escape}");
    expect(onResolve).toHaveBeenCalledWith([{ request_id: "call-1", tool_call_id: "call-1", action_id: "reject", feedback: null }]);
  });

  it("the rule a remember option adds is shown, editable, and sent as edited", async () => {
    backend({ explain_permission: () => { throw { kind: "invalid_input", message: "no" }; } });
    const onResolve = vi.fn();
    render(<ApprovalDialog approvals={[commandApproval()]} onResolve={onResolve} />);
    expect(screen.getByTestId("approval-rule-allow_session")).toHaveTextContent("commands starting with “ls -la”, in this chat");
    await userEvent.click(screen.getByTestId("approval-rule-edit-allow_session"));
    const input = screen.getByTestId("approval-rule-input-allow_session");
    await userEvent.clear(input);
    await userEvent.click(screen.getByTestId("approval-action-allow_session"));
    expect(onResolve).not.toHaveBeenCalled();
    expect(screen.getByRole("alert")).toHaveTextContent("needs at least one word");
    await userEvent.type(input, "ls");
    expect(screen.getByTestId("approval-rule-allow_session")).toHaveTextContent("commands starting with “ls”");
    await userEvent.click(screen.getByTestId("approval-action-allow_session"));
    expect(onResolve).toHaveBeenCalledWith([
      {
        request_id: "call-1",
        tool_call_id: "call-1",
        action_id: "allow_session",
        feedback: null,
        rule: { tool: "run_command", behavior: "allow", matcher: { kind: "prefix", words: ["ls"] }, destination: "session", description: null },
      },
    ]);
  });
});

describe("who allowed a call", () => {
  const decision = (over: Partial<PermissionDecision>): PermissionDecision => ({
    behavior: "allow", source: "mode", reason: "r", reasonCode: "read_only", risk: "low", actions: [], ...over,
  });
  const label = (d: PermissionDecision | null, mode: "default" | "auto" | "full_access" | null, actionId?: "allow_once" | "allow_session" | "allow_global") =>
    decisionText({ decision: d, mode, resolution: actionId ? { actionId, rule: null } : null }, t, (id) => (id === "r1" ? "Allow git status" : null));

  it("says it in words for every kind of allow, and full access only in full access", () => {
    expect([
      label(decision({}), "default"),
      label(decision({ source: "shell_policy", reasonCode: "read_only_command" }), "auto"),
      label(decision({ reasonCode: "full_access" }), "full_access"),
      label(decision({ source: "rule", reasonCode: "rule_allow", matchedRules: ["r1"] }), "default"),
      label(decision({ behavior: "ask", reasonCode: "write_requires_approval", reason: "Changing files needs your approval." }), "default", "allow_session"),
      label(decision({ behavior: "ask" }), "default", "allow_once"),
      label(decision({ behavior: "ask" }), "default", "allow_global"),
      label(decision({ behavior: "ask", reason: "Changing files needs your approval." }), "default"),
    ]).toEqual([
      "Allowed: read-only in Default mode",
      "Allowed: read-only in Auto mode",
      "Allowed without review (full access)",
      "Allowed by rule Allow git status",
      "Allowed by you for this chat",
      "Allowed by you, once",
      "Allowed by you for every chat",
      "Needs approval: Changing files needs your approval.",
    ]);
  });

  it("an approved write stops saying it needs approval", async () => {
    backend({ list_chats: () => [chat()], send_message: () => new Promise(() => {}) });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "write it{Enter}");
    await sendEvent({ name: "tool_call_start", value: { chatId: "c1", runId: "r1", toolCallId: "w1", toolName: "write_file", args: { file_path: "a", content: "b" } } });
    await sendEvent({
      name: "tool_permission_decision",
      value: { chatId: "c1", toolCallId: "w1", toolName: "write_file", behavior: "ask", source: "mode", reason: "Changing files needs your approval.", reasonCode: "write_requires_approval", risk: "medium", actions: [] },
    });
    expect(screen.getByTestId("tool-decision")).toHaveTextContent("Needs approval");
    await sendEvent({ name: "tool_permission_resolution", value: { chatId: "c1", approvalId: "w1", toolCallId: "w1", actionId: "allow_session" } });
    expect(screen.getByTestId("tool-decision")).toHaveTextContent("Allowed by you for this chat");
  });
});

describe("inbox messages are events", () => {
  it("parses the transcript form and keeps the user's own text a message", () => {
    expect(inboxSource("[inbox message m1 from command:abc (command_finished)]\nexit 0\ndone")).toEqual({
      id: "m1", sender: "command:abc", kind: "command_finished", text: "exit 0\ndone",
    });
    expect(inboxSource("[inbox message] is what I typed")).toBeNull();
    const items = itemsFromMessages(
      [
        { seq: 1, runId: null, createdAt: "t", message: { role: "user", text: "hello" } },
        { seq: 2, runId: null, createdAt: "t", message: { role: "user", text: "[inbox message m2 from agent-7 (subagent_report)]\nfound 3 files" } },
      ],
      [],
    );
    expect(items.map((i) => i.kind)).toEqual(["user", "event"]);
  });

  it("renders a finished background command with its source, not as a user bubble", async () => {
    backend({
      list_chats: () => [chat()],
      get_messages: () => [{ seq: 1, runId: null, createdAt: "t", message: { role: "user", text: "[inbox message m1 from command:b7 (command_finished)]\nexit 0\nall good" } }],
    });
    renderWithStore(<App />);
    const event = await screen.findByTestId("message-event");
    expect(event).toHaveAttribute("data-kind", "command_finished");
    expect(event).toHaveTextContent("Background command finished");
    expect(event).toHaveTextContent("all good");
    expect(screen.queryByTestId("message-user")).not.toBeInTheDocument();
  });
});

describe("errors and layout", () => {
  it("a failed send shows once, in its own chat, and not in another chat", async () => {
    backend({
      list_chats: () => [chat(), chat({ id: "c2", title: "Second" })],
      send_message: () => {
        throw { kind: "provider", message: "no API key for openai" };
      },
    });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "hi{Enter}");
    await waitFor(() => expect(screen.getAllByTestId("error-banner")).toHaveLength(1));
    expect(screen.getByTestId("error-banner")).toHaveAttribute("data-scope", "turn");
    await userEvent.click(screen.getAllByRole("button", { name: "Second" })[0]);
    await waitFor(() => expect(screen.queryByTestId("error-banner")).not.toBeInTheDocument());
  });

  it("below 808 px the sidebar is a drawer and the panels overlay the chat", async () => {
    window.innerWidth = 800;
    backend({ list_chats: () => [chat()] });
    renderWithStore(<App />);
    await screen.findByTestId("composer-input");
    expect(screen.getByTestId("app")).toHaveAttribute("data-layout", "overlay");
    expect(screen.queryByTestId("sidebar")).not.toBeInTheDocument();
    await userEvent.click(screen.getByTestId("sidebar-open"));
    expect(screen.getByTestId("sidebar")).toHaveClass("drawer");
    await userEvent.click(screen.getByTestId("tasks-toggle"));
    expect(screen.getByTestId("background-tasks")).toHaveClass("overlay");
  });

  it("a panel opened before the chat list arrives stays open in the chat that opens", async () => {
    let release: (chats: ReturnType<typeof chat>[]) => void = () => {};
    backend({ list_chats: () => new Promise((resolve) => (release = resolve)) });
    renderWithStore(<App />);
    await userEvent.click(await screen.findByRole("button", { name: "Background tasks" }));
    expect(screen.getByTestId("background-tasks")).toBeInTheDocument();
    release([chat()]);
    await screen.findByTestId("composer-input");
    expect(screen.getByTestId("background-tasks")).toBeInTheDocument();
    expect(JSON.parse(window.localStorage.getItem("suzent.panels") ?? "{}")).toEqual({ "": {}, c1: { tasks: true } });
  });

  it("a chat remembers its panels; an empty canvas starts closed", async () => {
    backend({ list_chats: () => [chat()] });
    const { unmount } = renderWithStore(<App />);
    await screen.findByTestId("composer-input");
    expect(screen.queryByTestId("canvas-panel")).not.toBeInTheDocument();
    await userEvent.click(screen.getByTestId("canvas-toggle"));
    expect(screen.getByTestId("canvas-panel")).toBeInTheDocument();
    unmount();
    renderWithStore(<App />);
    expect(await screen.findByTestId("canvas-panel")).toBeInTheDocument();
  });
});

describe("first run", () => {
  it("never doubles the provider prefix, and keeps a listed id as it is", () => {
    expect([
      modelName("openai", "openai/mock", []),
      modelName("openai", " gpt-4.1 ", []),
      modelName("openai", "openai/gpt-4o", ["openai/gpt-4o"]),
      modelName("anthropic", "anthropic/anthropic/claude", []),
      modelName("openai", "meta-llama/Llama-3", []),
    ]).toEqual(["mock", "gpt-4.1", "openai/gpt-4o", "claude", "meta-llama/Llama-3"]);
  });
});

describe("first run without a keychain", () => {
  it("says why the key cannot be stored and keeps it for the session on request", async () => {
    let s = { defaultModel: null as string | null };
    const be = backend({
      get_settings: () => ({ ...settingsOf(), ...s }),
      set_api_key: () => {
        throw { kind: "keychain", message: "the system keychain is not available here (no Secret Service)" };
      },
      set_session_key: () => null,
      test_connection: () => ({ model: "openai/gpt-4.1-mini", latencyMs: 12, reply: "OK" }),
      save_settings: (a) => {
        s = { defaultModel: (a.patch as { defaultModel: string }).defaultModel };
        return { ...settingsOf(), ...s };
      },
      create_chat: () => chat({ id: "first" }),
    });
    renderWithStore(<App />);
    await screen.findByTestId("first-run");
    await userEvent.type(screen.getByTestId("first-run-key"), "sk-typed");
    await userEvent.click(screen.getByTestId("first-run-load-models"));
    expect(await screen.findByTestId("first-run-keychain-problem")).toHaveTextContent("no Secret Service");
    await userEvent.click(screen.getByTestId("first-run-session-key"));
    expect(be.callsOf("set_session_key")).toEqual([{ provider: "openai", key: "sk-typed" }]);
    expect(screen.getByTestId("first-run-key-status")).toHaveTextContent("this session only");
    await userEvent.click(screen.getByTestId("first-run-load-models"));
    await userEvent.selectOptions(await screen.findByTestId("first-run-model-list"), "gpt-4.1-mini");
    await userEvent.click(screen.getByTestId("first-run-test"));
    expect(await screen.findByText("Connected: openai/gpt-4.1-mini answered in 12 ms.")).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("first-run-save"));
    await waitFor(() => expect(screen.getByTestId("composer-input")).toHaveFocus());
    expect(be.callsOf("save_settings")[0]).toEqual({ patch: { defaultModel: "openai/gpt-4.1-mini", workspace: "/work/space" } });
  });
});
