import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { PermissionsView } from "../components/PermissionsView";
import { RuleEditor } from "../components/RuleEditor";
import type { Rule } from "../types";
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
