import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ConfigView } from "../components/ConfigView";
import { parsePairs } from "../components/McpServers";
import type { Capability, McpServerConfig, McpServerInfo, McpToolInfo } from "../types";
import { backend, catalog, chat, renderWithStore, sendEvent } from "./backend";

const everythingConfig: McpServerConfig = { command: "node", args: ["/opt/everything/index.js", "stdio"], env: { TOKEN: "***" } };

const server = (over: Partial<McpServerInfo> = {}): McpServerInfo => ({
  name: "everything",
  config: everythingConfig,
  transport: "stdio",
  state: "idle",
  lastError: null,
  tools: [],
  toolsFetchedAt: null,
  ...over,
});

const tool = (name: string, over: Partial<McpToolInfo> = {}): McpToolInfo => ({
  toolName: name,
  toolkitSlug: "everything",
  qualifiedName: `mcp__everything__${name}`,
  title: null,
  description: `The ${name} tool.`,
  status: "ACTIVE",
  schema: { type: "object" },
  readOnlyHint: null,
  requiresApproval: true,
  serverConfig: everythingConfig,
  ...over,
});

const mcpToolset = (tools: McpToolInfo[]): Capability => ({
  id: "mcp:everything",
  label: "MCP: everything",
  description: "Tools of the MCP server 'everything'.",
  tools: tools.map((t) => ({ id: t.qualifiedName, name: t.toolName, description: t.description, runtimeName: t.qualifiedName, requiresApproval: t.requiresApproval })),
});

/** A stateful fake of the MCP part of the backend: servers and tools change with the commands. */
function mcpBackend(initial: McpServerInfo[], initialTools: McpToolInfo[] = [], over: Record<string, (a: Record<string, unknown>) => unknown> = {}) {
  let servers = [...initial];
  let tools = [...initialTools];
  const find = (name: unknown) => {
    const s = servers.find((x) => x.name === name);
    if (!s) throw { kind: "mcp", message: `no MCP server named '${String(name)}'` };
    return s;
  };
  const update = (name: unknown, f: (s: McpServerInfo) => McpServerInfo) => {
    const next = f(find(name));
    servers = servers.map((s) => (s.name === next.name ? next : s));
    return next;
  };
  return backend({
    mcp_servers: () => servers,
    mcp_tools: () => tools,
    get_catalog: () => (tools.some((t) => t.status !== "DISABLED") ? [...catalog, mcpToolset(tools)] : catalog),
    add_mcp_server: (a) => {
      const config = a.config as McpServerConfig;
      const s = server({ name: a.name as string, config, transport: config.url ? "http" : "stdio" });
      servers = [...servers, s];
      return s;
    },
    remove_mcp_server: (a) => {
      find(a.name);
      servers = servers.filter((s) => s.name !== a.name);
      tools = tools.filter((t) => t.toolkitSlug !== a.name);
      return null;
    },
    set_mcp_server_enabled: (a) => {
      tools = tools.map((t) => (t.toolkitSlug === a.name ? { ...t, status: a.enabled ? "DISCOVERED" : "DISABLED" } : t));
      return update(a.name, (s) => ({ ...s, state: a.enabled ? "idle" : "disabled", config: { ...s.config, disabled: !a.enabled } }));
    },
    set_mcp_server_trusted: (a) => update(a.name, (s) => ({ ...s, config: { ...s.config, trusted: a.trusted as boolean } })),
    ...over,
  });
}

const box = (testId: string) => screen.getByTestId(testId) as HTMLInputElement;

describe("MCP servers in ConfigView", () => {
  it("lists each server with its transport, state, switches, error and tools with status and read-only hint", async () => {
    mcpBackend(
      [
        server({ state: "running", tools: ["mcp__everything__echo", "mcp__everything__add"] }),
        server({ name: "remote", transport: "http", config: { url: "https://mcp.example.com/mcp", headers: { Authorization: "***" }, trusted: true } }),
        server({ name: "broken", config: { command: "/bin/false" }, state: "failed", lastError: "MCP server 'broken' failed to start: the process exited (status 1)" }),
      ],
      [tool("echo", { readOnlyHint: true, requiresApproval: true }), tool("add", { status: "ACTIVE" })],
    );
    renderWithStore(<ConfigView />);
    const card = await screen.findByTestId("mcp-server-everything");
    expect(screen.getByTestId("mcp-transport-everything")).toHaveTextContent("node /opt/everything/index.js stdio");
    expect(card).toHaveTextContent("stdio");
    expect(card).toHaveTextContent("Environment: TOKEN.");
    expect(screen.getByTestId("mcp-state-everything")).toHaveTextContent("Connected");
    expect(box("mcp-enabled-everything").checked).toBe(true);
    expect(box("mcp-trusted-everything").checked).toBe(false);

    const echo = screen.getByTestId("mcp-tool-mcp__everything__echo");
    expect(echo).toHaveTextContent("echo");
    expect(echo).toHaveTextContent("The echo tool.");
    expect(screen.getByTestId("mcp-tool-status-mcp__everything__echo")).toHaveTextContent("ACTIVE");
    // The server is not trusted: its read-only hint is shown as ignored.
    expect(echo).toHaveTextContent("read-only (hint ignored)");
    expect(echo).toHaveTextContent("needs approval");

    expect(screen.getByTestId("mcp-transport-remote")).toHaveTextContent("https://mcp.example.com/mcp");
    expect(screen.getByTestId("mcp-server-remote")).toHaveTextContent("HTTP");
    expect(box("mcp-trusted-remote").checked).toBe(true);
    expect(screen.getByTestId("mcp-no-tools-remote")).toHaveTextContent("No tools listed yet");

    expect(screen.getByTestId("mcp-state-broken")).toHaveTextContent("Failed");
    expect(screen.getByTestId("mcp-error-broken")).toHaveTextContent("the process exited (status 1)");
    expect(screen.getByTestId("mcp-error-broken")).toHaveAttribute("role", "alert");
    // The trust switch explains what it changes.
    expect(box("mcp-trusted-everything")).toHaveAccessibleDescription(/readOnlyHint.*without asking.*untrusted server are ignored/);
  });

  it("adds a stdio server with arguments one per line and KEY=VALUE environment lines", async () => {
    const be = mcpBackend([]);
    renderWithStore(<ConfigView />);
    await screen.findByTestId("mcp-empty");
    await userEvent.click(screen.getByTestId("mcp-add"));
    // The form opens with the name focused, and every field has a label.
    expect(screen.getByLabelText("Name")).toHaveFocus();
    await userEvent.type(screen.getByLabelText("Name"), "fs");
    await userEvent.type(screen.getByLabelText("Command"), "npx");
    await userEvent.type(screen.getByLabelText("Arguments"), "-y{enter}@modelcontextprotocol/server-filesystem{enter}{enter}/home/me/my notes");
    await userEvent.type(screen.getByLabelText("Environment"), "A=1{enter}B=x=y");
    await userEvent.click(screen.getByTestId("mcp-add-submit"));
    await screen.findByTestId("mcp-server-fs");
    expect(be.callsOf("add_mcp_server")).toEqual([
      {
        name: "fs",
        config: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/my notes"], env: { A: "1", B: "x=y" } },
      },
    ]);
    expect(screen.queryByTestId("mcp-add-form")).toBeNull();
    // Arguments with spaces are shown quoted.
    expect(screen.getByTestId("mcp-transport-fs")).toHaveTextContent('npx -y @modelcontextprotocol/server-filesystem "/home/me/my notes"');
  });

  it("adds an HTTP server with headers", async () => {
    const be = mcpBackend([]);
    renderWithStore(<ConfigView />);
    await userEvent.click(await screen.findByTestId("mcp-add"));
    await userEvent.click(screen.getByTestId("mcp-add-transport-http"));
    expect(screen.queryByLabelText("Command")).toBeNull();
    await userEvent.type(screen.getByLabelText("Name"), "remote");
    await userEvent.type(screen.getByLabelText("URL"), "https://mcp.example.com/mcp");
    await userEvent.type(screen.getByLabelText("Headers"), "Authorization: Bearer ${{keychain:remote}");
    await userEvent.click(screen.getByTestId("mcp-add-submit"));
    await screen.findByTestId("mcp-server-remote");
    expect(be.callsOf("add_mcp_server")).toEqual([
      { name: "remote", config: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ${keychain:remote}" } } },
    ]);
  });

  it("shows a validation error next to the field the backend names", async () => {
    const be = mcpBackend([], [], {
      add_mcp_server: (a) => {
        if (a.name === "") throw { kind: "mcp", message: "MCP server '': a server name has 1 to 64 characters and no control characters", field: "name" };
        throw { kind: "mcp", message: "MCP server 'x': neither command (stdio) nor url (HTTP) is set", field: "command" };
      },
    });
    renderWithStore(<ConfigView />);
    await userEvent.click(await screen.findByTestId("mcp-add"));
    await userEvent.click(screen.getByTestId("mcp-add-submit"));
    const nameError = await screen.findByTestId("mcp-add-name-error");
    expect(nameError).toHaveTextContent("a server name has 1 to 64 characters");
    expect(screen.getByLabelText("Name")).toHaveAttribute("aria-invalid", "true");
    expect(screen.getByLabelText("Name")).toHaveAccessibleDescription(/a server name has 1 to 64 characters/);
    expect(screen.queryByTestId("mcp-add-command-error")).toBeNull();

    await userEvent.type(screen.getByLabelText("Name"), "x");
    // Editing the field clears its error.
    expect(screen.queryByTestId("mcp-add-name-error")).toBeNull();
    expect(screen.getByLabelText("Name")).toHaveAttribute("aria-invalid", "false");
    await userEvent.click(screen.getByTestId("mcp-add-submit"));
    expect(await screen.findByTestId("mcp-add-command-error")).toHaveTextContent("neither command");
    expect(screen.queryByTestId("mcp-add-name-error")).toBeNull();
    expect(screen.getByTestId("mcp-add-form")).toBeInTheDocument();
    expect(be.callsOf("add_mcp_server")).toHaveLength(2);
  });

  it("a malformed environment line is an error naming the line, and nothing is sent", async () => {
    const be = mcpBackend([]);
    renderWithStore(<ConfigView />);
    await userEvent.click(await screen.findByTestId("mcp-add"));
    await userEvent.type(screen.getByLabelText("Name"), "fs");
    await userEvent.type(screen.getByLabelText("Command"), "npx");
    await userEvent.type(screen.getByLabelText("Environment"), "A=1{enter}no equals sign");
    await userEvent.click(screen.getByTestId("mcp-add-submit"));
    expect(await screen.findByTestId("mcp-add-env-error")).toHaveTextContent("line 2: expected KEY=VALUE, got 'no equals sign'");
    expect(be.callsOf("add_mcp_server")).toEqual([]);
  });

  it("parses KEY=VALUE and Name: value lines and rejects repeated keys", () => {
    expect(parsePairs("A=1\n\n B = 2 \nC=", "env")).toEqual({ A: "1", B: " 2", C: "" });
    expect(parsePairs("X-Key: a:b", "headers")).toEqual({ "X-Key": "a:b" });
    expect(() => parsePairs("A=1\nA=2", "env")).toThrow("line 2: 'A' is set twice");
    expect(() => parsePairs("=1", "env")).toThrow("line 1: expected KEY=VALUE");
    expect(() => parsePairs("MY VAR=1", "env")).toThrow("contains a space");
    expect(() => parsePairs("Authorization Bearer x", "headers")).toThrow("line 1: expected Name: value");
  });

  it("removes a server only after the confirmation", async () => {
    const be = mcpBackend([server()]);
    renderWithStore(<ConfigView />);
    await userEvent.click(await screen.findByTestId("mcp-remove-everything"));
    await userEvent.click(screen.getByTestId("mcp-remove-cancel-everything"));
    expect(be.callsOf("remove_mcp_server")).toEqual([]);
    expect(screen.getByTestId("mcp-server-everything")).toBeInTheDocument();

    await userEvent.click(screen.getByTestId("mcp-remove-everything"));
    expect(screen.getByTestId("mcp-remove-confirm-everything")).toHaveFocus();
    await userEvent.keyboard("{Enter}");
    await waitFor(() => expect(screen.queryByTestId("mcp-server-everything")).toBeNull());
    expect(be.callsOf("remove_mcp_server")).toEqual([{ name: "everything" }]);
    expect(screen.getByTestId("mcp-empty")).toBeInTheDocument();
  });

  it("disabling a server changes its state and its tools' status; the toolset leaves the catalog", async () => {
    const be = mcpBackend([server({ state: "running" })], [tool("echo")]);
    renderWithStore(<ConfigView />);
    await screen.findByTestId("config-toolset-mcp-everything");
    await userEvent.click(await screen.findByTestId("mcp-enabled-everything"));
    await waitFor(() => expect(screen.getByTestId("mcp-state-everything")).toHaveTextContent("Disabled"));
    expect(be.callsOf("set_mcp_server_enabled")).toEqual([{ name: "everything", enabled: false }]);
    expect(box("mcp-enabled-everything").checked).toBe(false);
    await waitFor(() => expect(screen.getByTestId("mcp-tool-status-mcp__everything__echo")).toHaveTextContent("DISABLED"));
    await waitFor(() => expect(screen.queryByTestId("config-toolset-mcp-everything")).toBeNull());

    await userEvent.click(box("mcp-enabled-everything"));
    await waitFor(() => expect(screen.getByTestId("mcp-state-everything")).toHaveTextContent("Not connected"));
    expect(be.callsOf("set_mcp_server_enabled")[1]).toEqual({ name: "everything", enabled: true });
  });

  it("the trust switch is keyboard operable and saves the trust", async () => {
    const be = mcpBackend([server()], [tool("echo", { readOnlyHint: true })]);
    renderWithStore(<ConfigView />);
    const trust = await screen.findByTestId("mcp-trusted-everything");
    trust.focus();
    await userEvent.keyboard(" ");
    await waitFor(() => expect(box("mcp-trusted-everything").checked).toBe(true));
    expect(be.callsOf("set_mcp_server_trusted")).toEqual([{ name: "everything", trusted: true }]);
    expect(screen.getByTestId("mcp-server-everything")).toHaveTextContent("trusted");
    expect(screen.getByTestId("mcp-tool-mcp__everything__echo")).not.toHaveTextContent("hint ignored");
  });

  it("Test connects, lists the tools, loads them for the agent and reloads the catalog", async () => {
    let tools: McpToolInfo[] = [];
    const be = mcpBackend([server()], [], {
      mcp_tools: () => tools,
      get_catalog: () => (tools.length ? [...catalog, mcpToolset(tools)] : catalog),
      test_mcp_server: () => ({
        server: "everything",
        tools: [
          { name: "echo", qualifiedName: "mcp__everything__echo", description: "Echoes.", readOnlyHint: true },
          { name: "add", qualifiedName: "mcp__everything__add", description: "Adds.", readOnlyHint: null },
        ],
      }),
      refresh_mcp_server: () => {
        tools = [tool("echo"), tool("add")];
        return tools;
      },
    });
    renderWithStore(<ConfigView />);
    await screen.findByTestId("mcp-no-tools-everything");
    expect(screen.queryByTestId("config-toolset-mcp-everything")).toBeNull();
    await userEvent.click(screen.getByTestId("mcp-test-everything"));
    await waitFor(() => expect(screen.getByTestId("mcp-test-result-everything")).toHaveTextContent("Test passed: connected and listed 2 tools"));
    expect(be.callsOf("test_mcp_server")).toEqual([{ name: "everything" }]);
    expect(be.callsOf("refresh_mcp_server")).toEqual([{ name: "everything" }]);
    await screen.findByTestId("mcp-tool-mcp__everything__add");
    // The catalog now shows the server's toolset, read-only.
    const toolset = await screen.findByTestId("config-toolset-mcp-everything");
    expect(toolset).toHaveTextContent("MCP: everything");
    expect(within(toolset).getByTestId("config-mcp-tool-mcp__everything__echo")).toHaveTextContent("mcp__everything__echo");
    expect(within(toolset).queryByRole("checkbox")).toBeNull();
  });

  it("a failed Test shows the error clearly and the server's recorded failure", async () => {
    let state: McpServerInfo = server({ name: "broken", config: { command: "/bin/false" } });
    mcpBackend([], [], {
      mcp_servers: () => [state],
      test_mcp_server: () => {
        throw { kind: "mcp", message: "MCP server 'broken' failed to start: connection closed: initialize response" };
      },
      refresh_mcp_server: () => {
        state = { ...state, state: "failed", lastError: "MCP server 'broken' failed to start: connection closed: initialize response" };
        throw { kind: "mcp", message: state.lastError };
      },
    });
    renderWithStore(<ConfigView />);
    await userEvent.click(await screen.findByTestId("mcp-test-broken"));
    const error = await screen.findByTestId("mcp-test-error-broken");
    expect(error).toHaveTextContent("Test failed: MCP server 'broken' failed to start: connection closed");
    expect(error).toHaveAttribute("role", "alert");
    await waitFor(() => expect(screen.getByTestId("mcp-state-broken")).toHaveTextContent("Failed"));
    expect(screen.getByTestId("mcp-error-broken")).toHaveTextContent("failed to start");
  });

  it("testing a disabled server lists its tools without loading them for the agent", async () => {
    const be = mcpBackend([server({ state: "disabled", config: { ...everythingConfig, disabled: true } })], [], {
      test_mcp_server: () => ({ server: "everything", tools: [{ name: "echo", qualifiedName: "mcp__everything__echo", description: "Echoes.", readOnlyHint: true }] }),
    });
    renderWithStore(<ConfigView />);
    await userEvent.click(await screen.findByTestId("mcp-test-everything"));
    expect(await screen.findByTestId("mcp-tool-mcp__everything__echo")).toHaveTextContent("Echoes.");
    expect(screen.getByTestId("mcp-server-everything")).toHaveTextContent("Enable the server to let the agent use them.");
    expect(be.callsOf("refresh_mcp_server")).toEqual([]);
  });

  it("imports Claude Desktop's servers, and an unreadable file is an error next to the path", async () => {
    const be = mcpBackend([], [], {
      import_mcp_servers: (a) => {
        if (a.path === "/missing.json") throw { kind: "mcp", message: "MCP configuration /missing.json: No such file or directory (os error 2)", field: "path" };
        return { added: ["everything"], skipped: ["fs"] };
      },
    });
    renderWithStore(<ConfigView />);
    const path = await screen.findByLabelText("Import from a Claude Desktop configuration");
    await userEvent.type(path, "/missing.json");
    await userEvent.click(screen.getByTestId("mcp-import-submit"));
    expect(await screen.findByTestId("mcp-import-path-error")).toHaveTextContent("No such file or directory");
    expect(path).toHaveAttribute("aria-invalid", "true");

    await userEvent.clear(path);
    await userEvent.type(path, "/home/me/.config/Claude/claude_desktop_config.json{enter}");
    expect(await screen.findByTestId("mcp-import-result")).toHaveTextContent("Added everything. Skipped fs (a server with that name exists).");
    expect(be.callsOf("import_mcp_servers")).toEqual([{ path: "/missing.json" }, { path: "/home/me/.config/Claude/claude_desktop_config.json" }]);
    expect(screen.queryByTestId("mcp-import-path-error")).toBeNull();
  });

  it("marks an MCP tool the agent activated in the chat's catalog and reloads the servers", async () => {
    const be = mcpBackend([server({ state: "running" })], [tool("echo")], { list_chats: () => [chat()] });
    renderWithStore(<ConfigView />);
    await screen.findByTestId("config-toolset-mcp-everything");
    await userEvent.selectOptions(screen.getByTestId("config-scope"), "c1");
    const row = screen.getByTestId("config-mcp-tool-mcp__everything__echo");
    expect(row).not.toHaveTextContent("activated by the agent");
    const before = be.callsOf("mcp_servers").length;
    await sendEvent({
      name: "tool_activated",
      value: { chatId: "c1", toolName: "mcp__everything__echo", className: "mcp__everything__echo", displayName: "echo", capability: "mcp:everything" },
    });
    expect(screen.getByTestId("config-mcp-tool-mcp__everything__echo")).toHaveTextContent("activated by the agent");
    await waitFor(() => expect(be.callsOf("mcp_servers")).toHaveLength(before + 1));
  });
});
