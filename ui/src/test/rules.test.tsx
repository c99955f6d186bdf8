import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { PermissionsView } from "../components/PermissionsView";
import { RuleEditor } from "../components/RuleEditor";
import type { Explanation, Rule } from "../types";
import { backend, chat, renderWithStore } from "./backend";

function editor() {
  const onSubmit = vi.fn(async () => {});
  render(<RuleEditor tools={["write_file", "run_command"]} chats={[chat()]} chatId={null} onSubmit={onSubmit} />);
  return onSubmit;
}

const add = () => userEvent.click(screen.getByTestId("rule-add"));

describe("rule editor", () => {
  it("names the tool field when it is empty", async () => {
    const onSubmit = editor();
    await add();
    expect(screen.getByRole("alert")).toHaveTextContent(/^Tool is required/);
    expect(screen.getByTestId("rule-tool")).toHaveAttribute("aria-invalid", "true");
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it("builds an 'all' rule", async () => {
    const onSubmit = editor();
    await userEvent.type(screen.getByTestId("rule-tool"), "read_file");
    await userEvent.selectOptions(screen.getByTestId("rule-behavior"), "deny");
    await add();
    expect(onSubmit).toHaveBeenCalledWith(
      { tool: "read_file", behavior: "deny", matcher: { kind: "all" }, destination: "global", description: null },
      null,
    );
  });

  it("checks exact arguments are a JSON object", async () => {
    const onSubmit = editor();
    await userEvent.type(screen.getByTestId("rule-tool"), "write_file");
    await userEvent.selectOptions(screen.getByTestId("rule-matcher-kind"), "exact");
    await userEvent.type(screen.getByTestId("rule-exact"), "{{not json");
    await add();
    expect(screen.getByRole("alert")).toHaveTextContent(/^Arguments are not valid JSON/);
    await userEvent.clear(screen.getByTestId("rule-exact"));
    await userEvent.type(screen.getByTestId("rule-exact"), "[[1]");
    await add();
    expect(screen.getByRole("alert")).toHaveTextContent(/^Arguments must be a JSON object/);
    await userEvent.clear(screen.getByTestId("rule-exact"));
    await userEvent.type(screen.getByTestId("rule-exact"), '{{"file_path": "a.txt"}');
    await add();
    expect(onSubmit).toHaveBeenCalledWith(
      { tool: "write_file", behavior: "allow", matcher: { kind: "exact", input: { file_path: "a.txt" } }, destination: "global", description: null },
      null,
    );
  });

  it("builds a prefix rule from words and names the field when empty", async () => {
    const onSubmit = editor();
    await userEvent.type(screen.getByTestId("rule-tool"), "run_command");
    await userEvent.selectOptions(screen.getByTestId("rule-matcher-kind"), "prefix");
    await add();
    expect(screen.getByRole("alert")).toHaveTextContent(/^Command prefix needs at least one word/);
    await userEvent.type(screen.getByTestId("rule-prefix"), "  git   status ");
    await userEvent.type(screen.getByTestId("rule-description"), "read-only git");
    await add();
    expect(onSubmit).toHaveBeenCalledWith(
      { tool: "run_command", behavior: "allow", matcher: { kind: "prefix", words: ["git", "status"] }, destination: "global", description: "read-only git" },
      null,
    );
  });

  it("builds a session path rule and requires its chat", async () => {
    const onSubmit = editor();
    await userEvent.type(screen.getByTestId("rule-tool"), "write_file");
    await userEvent.selectOptions(screen.getByTestId("rule-matcher-kind"), "path");
    await userEvent.selectOptions(screen.getByTestId("rule-destination"), "session");
    await add();
    const messages = screen.getAllByRole("alert").map((a) => a.textContent);
    expect(messages).toContain("Chat is required for a session rule: pick the chat it applies to.");
    expect(messages).toContain("Path glob is required, e.g. ~/project/**.");
    await userEvent.selectOptions(screen.getByTestId("rule-chat"), "c1");
    await userEvent.type(screen.getByTestId("rule-path"), "~/project/**");
    await add();
    expect(onSubmit).toHaveBeenCalledWith(
      { tool: "write_file", behavior: "allow", matcher: { kind: "path", glob: "~/project/**" }, destination: "session", description: null },
      "c1",
    );
  });
});

describe("rule editor: recipients", () => {
  it("refuses a path glob the engine could not compile, saying why, before saving", async () => {
    const onSubmit = editor();
    await userEvent.type(screen.getByTestId("rule-tool"), "write_file");
    await userEvent.selectOptions(screen.getByTestId("rule-matcher-kind"), "path");
    // `{` opens a key in user-event's typing syntax: `{{` types one.
    await userEvent.type(screen.getByTestId("rule-path"), "src/{{a,b/**");
    await add();
    expect(screen.getAllByRole("alert").map((a) => a.textContent)).toContain(
      "Not a valid glob: '{' without a closing '}' (write '[{]' for a literal brace).",
    );
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it("builds a destination rule and names the field when empty or spaced", async () => {
    const onSubmit = editor();
    await userEvent.type(screen.getByTestId("rule-tool"), "*");
    await userEvent.selectOptions(screen.getByTestId("rule-behavior"), "deny");
    await userEvent.selectOptions(screen.getByTestId("rule-matcher-kind"), "destination");
    expect(screen.getByText(/e-mail recipients, #channels/)).toBeInTheDocument();
    await add();
    expect(screen.getByRole("alert")).toHaveTextContent(/^Recipient pattern is required/);
    expect(screen.getByTestId("rule-recipient")).toHaveAttribute("aria-invalid", "true");
    await userEvent.type(screen.getByTestId("rule-recipient"), "a@example.com b@example.com");
    await add();
    expect(screen.getByRole("alert")).toHaveTextContent(/^Recipient pattern must not contain spaces/);
    expect(onSubmit).not.toHaveBeenCalled();
    await userEvent.clear(screen.getByTestId("rule-recipient"));
    await userEvent.type(screen.getByTestId("rule-recipient"), " *@evil.com ");
    await add();
    expect(onSubmit).toHaveBeenCalledWith(
      { tool: "*", behavior: "deny", matcher: { kind: "destination", pattern: "*@evil.com" }, destination: "global", description: null },
      null,
    );
  });
});

const explanation = (over: Partial<Explanation> = {}): Explanation => ({
  tool: "run_command",
  mode: "default",
  behavior: "deny",
  reasonCode: "dangerous_command",
  reason: "This command is never run by the agent: recursive removal of '/' (`rm -rf /`).",
  risk: "high",
  source: "shell_policy",
  matchedRules: [
    {
      rule: { id: "r9", tool: "run_command", behavior: "allow", matcher: { kind: "prefix", words: ["ls"] }, destination: "global", createdAt: "2026-01-01T00:00:00Z", description: null },
      why: "allow global rule: prefix 'ls' matches segment 1: ls",
      decisive: false,
    },
  ],
  segments: [
    { words: ["ls"], fullWords: ["ls"], assignments: [], redirects: [], wrappers: [], nested: false, verdict: "allow", verdictReason: "allow rule r9: prefix 'ls'" },
    { words: ["rm", "-rf", "/"], fullWords: ["rm", "-rf", "/"], assignments: [], redirects: [], wrappers: [], nested: false, verdict: "deny", verdictReason: "never run: recursive removal of '/'" },
  ],
  destinations: [],
  destinationsComplete: true,
  understood: true,
  compound: true,
  actions: [],
  reviewerWouldDecide: false,
  ...over,
});

describe("decision simulator", () => {
  const setup = (explain: (a: Record<string, unknown>) => unknown) => {
    const be = backend({ list_chats: () => [chat()], list_rules: () => [], read_audit_log: () => [], explain_permission: explain });
    renderWithStore(<PermissionsView />);
    return be;
  };
  const args = () => screen.getByTestId("explain-args");
  const run = () => userEvent.click(screen.getByTestId("explain-run"));

  it("refuses arguments that are not a JSON object, saying why, without calling the backend", async () => {
    const be = setup(() => explanation());
    await waitFor(() => expect(screen.getByTestId("explain-tool")).toHaveValue("run_command"));
    await userEvent.clear(args());
    await userEvent.type(args(), "{{content: ls");
    await run();
    expect(screen.getByTestId("explain-error")).toHaveTextContent(/^Arguments are not valid JSON \(/);
    expect(args()).toHaveAttribute("aria-invalid", "true");
    await userEvent.clear(args());
    await userEvent.type(args(), '[["ls"]');
    await run();
    expect(screen.getByTestId("explain-error")).toHaveTextContent('Arguments must be a JSON object, e.g. {"content": "ls"}.');
    expect(be.callsOf("explain_permission")).toEqual([]);
  });

  it("shows the decision, every matched rule, each segment with its verdict", async () => {
    const be = setup(() => explanation());
    await waitFor(() => expect(screen.getByTestId("explain-tool")).toHaveValue("run_command"));
    // The example arguments of the default tool are the dangerous script.
    expect(JSON.parse((args() as HTMLTextAreaElement).value)).toEqual({ content: "ls && rm -rf /" });
    await userEvent.selectOptions(screen.getByTestId("explain-mode"), "full_access");
    await userEvent.selectOptions(screen.getByTestId("explain-chat"), "c1");
    await run();
    expect(await screen.findByTestId("explain-behavior")).toHaveTextContent("deny");
    expect(be.callsOf("explain_permission")).toEqual([
      { tool: "run_command", args: { content: "ls && rm -rf /" }, mode: "full_access", chatId: "c1" },
    ]);
    expect(screen.getByTestId("explain-reason-code")).toHaveTextContent("dangerous_command");
    expect(screen.getByTestId("explain-risk")).toHaveTextContent("high risk");
    expect(screen.getByTestId("explain-reason")).toHaveTextContent("recursive removal of '/'");
    const rules = screen.getAllByTestId("explain-rule");
    expect(rules).toHaveLength(1);
    expect(rules[0]).toHaveTextContent("allow global rule: prefix 'ls' matches segment 1: ls");
    expect(rules[0]).toHaveAttribute("data-decisive", "false");
    const segments = screen.getAllByTestId("explain-segment");
    expect(segments.map((s) => s.textContent)).toEqual([
      "1lsallowallow rule r9: prefix 'ls'",
      "2rm -rf /denynever run: recursive removal of '/'",
    ]);
    expect(screen.queryByTestId("explain-destinations")).toBeNull();
  });

  it("shows the destinations and the decisive rule of a messaging call, and a backend error naming the field", async () => {
    let fail = false;
    const be = setup((a) => {
      if (fail) throw { kind: "invalid_input", message: "invalid args: unknown field `command`", field: "args" };
      return explanation({
        tool: a.tool as string,
        behavior: "allow",
        reasonCode: "rule_allow",
        reason: "Allowed by your permission rules.",
        risk: "low",
        source: "rule",
        segments: [],
        understood: null,
        compound: null,
        destinations: ["bob@example.com", "#general"],
        destinationsComplete: false,
        matchedRules: [
          {
            rule: { id: "r1", tool: "agent_send", behavior: "allow", matcher: { kind: "destination", pattern: "*@example.com" }, destination: "global", createdAt: "2026-01-01T00:00:00Z", description: null },
            why: "allow global rule: destination '*@example.com' matches bob@example.com",
            decisive: true,
          },
        ],
      });
    });
    await waitFor(() => expect(screen.getByTestId("explain-tool")).toHaveValue("run_command"));
    await userEvent.selectOptions(screen.getByTestId("explain-tool"), "write_file");
    // Untouched example arguments follow the picked tool.
    expect(JSON.parse((args() as HTMLTextAreaElement).value)).toEqual({ file_path: "notes.txt", content: "hello" });
    await userEvent.clear(args());
    await userEvent.type(args(), '{{"to": "bob@example.com", "channel": "general"}');
    await run();
    expect(await screen.findByTestId("explain-behavior")).toHaveTextContent("allow");
    expect(be.callsOf("explain_permission")[0]).toEqual({
      tool: "write_file",
      args: { to: "bob@example.com", channel: "general" },
      mode: null,
      chatId: null,
    });
    const rule = screen.getByTestId("explain-rule");
    expect(rule).toHaveAttribute("data-decisive", "true");
    expect(rule).toHaveTextContent("decides");
    expect(rule).toHaveTextContent("calls addressed to *@example.com");
    expect(screen.getByTestId("explain-destinations")).toHaveTextContent("bob@example.com#general");
    expect(screen.getByText(/Some recipients could not be read/)).toBeInTheDocument();
    expect(screen.queryByTestId("explain-segments")).toBeNull();

    fail = true;
    await run();
    expect(await screen.findByTestId("explain-error")).toHaveTextContent(
      "The decision could not be explained: invalid args: unknown field `command` (field: args)",
    );
    expect(args()).toHaveAttribute("aria-invalid", "true");
    expect(screen.queryByTestId("explain-result")).toBeNull();
  });
});

describe("permissions page", () => {
  const rule: Rule = {
    id: "r1",
    tool: "run_command",
    behavior: "deny",
    matcher: { kind: "prefix", words: ["git", "push"] },
    destination: "global",
    createdAt: "2026-01-01T00:00:00Z",
    description: null,
  };

  it("lists rules, adds through add_rule, deletes through delete_rule", async () => {
    let rules: Rule[] = [rule];
    const be = backend({
      list_rules: () => rules,
      add_rule: (a) => {
        const r = { ...(a.draft as Rule), id: "r2", createdAt: "2026-01-02T00:00:00Z" };
        rules = [...rules, r];
        return r;
      },
      delete_rule: (a) => {
        rules = rules.filter((r) => r.id !== a.ruleId);
        return null;
      },
      read_audit_log: () => [],
    });
    renderWithStore(<PermissionsView />);
    expect(await screen.findAllByTestId("rule-row")).toHaveLength(1);
    expect(screen.getByTestId("rules-list")).toHaveTextContent("commands starting with “git push”");
    await userEvent.type(screen.getByTestId("rule-tool"), "read_file");
    await userEvent.click(screen.getByTestId("rule-add"));
    await waitFor(() => expect(screen.getAllByTestId("rule-row")).toHaveLength(2));
    expect(be.callsOf("add_rule")).toEqual([
      { draft: { tool: "read_file", behavior: "allow", matcher: { kind: "all" }, destination: "global", description: null }, chatId: null },
    ]);
    await userEvent.click(screen.getAllByTestId("rule-delete")[0]);
    await waitFor(() => expect(screen.getAllByTestId("rule-row")).toHaveLength(1));
    expect(be.callsOf("delete_rule")).toEqual([{ ruleId: "r1" }]);
  });

  it("describes a destination rule by what it addresses", async () => {
    backend({
      list_rules: () => [{ ...rule, tool: "*", matcher: { kind: "destination", pattern: "*@evil.com" } }],
      read_audit_log: () => [],
    });
    renderWithStore(<PermissionsView />);
    expect(await screen.findByTestId("rule-row")).toHaveTextContent("calls addressed to *@evil.com");
  });

  it("shows the audit log newest first and passes the filters", async () => {
    const be = backend({
      list_chats: () => [chat()],
      list_rules: () => [],
      read_audit_log: () => [
        { timestamp: "2026-01-01T10:00:00Z", kind: "evaluation", chatId: "c1", tool: "read_file", decision: "allow", reason: "old" },
        { timestamp: "2026-01-01T12:00:00Z", kind: "evaluation", chatId: "c1", tool: "write_file", decision: "ask", reason: "new" },
      ],
    });
    renderWithStore(<PermissionsView />);
    const rows = await screen.findAllByTestId("audit-row");
    expect(rows[0]).toHaveTextContent("write_file");
    expect(rows[1]).toHaveTextContent("read_file");
    await userEvent.selectOptions(screen.getByTestId("audit-filter-decision"), "deny");
    await userEvent.type(screen.getByTestId("audit-filter-tool"), "write_file");
    await userEvent.selectOptions(screen.getByTestId("audit-filter-chat"), "c1");
    await waitFor(() =>
      expect(be.callsOf("read_audit_log").at(-1)).toEqual({ filter: { chatId: "c1", tool: "write_file", decision: "deny", limit: 200 } }),
    );
  });
});
