// The MCP part of the scripted dev backend (`npm run build:mock`): two configured servers, one
// connected with its tools and one that fails to start, plus add/remove/enable/trust/test/import.
import type { Capability, McpServerConfig, McpServerInfo, McpTestResult, McpToolInfo } from "../types";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fail = (message: string, field?: string): never => {
  throw { kind: "mcp", message, ...(field ? { field } : {}) };
};

const filesystemConfig: McpServerConfig = {
  command: "npx",
  args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"],
  trusted: true,
};
const servers: McpServerInfo[] = [
  { name: "filesystem", config: filesystemConfig, transport: "stdio", state: "running", lastError: null, tools: [], toolsFetchedAt: new Date().toISOString() },
  {
    name: "weather",
    config: { command: "uvx", args: ["mcp-weather"], env: { WEATHER_KEY: "***" } },
    transport: "stdio",
    state: "failed",
    lastError: "MCP server 'weather' failed to start: cannot start 'uvx': No such file or directory (os error 2)",
    tools: [],
    toolsFetchedAt: null,
  },
];

const remote = (name: string, description: string, readOnly: boolean) => ({ name, description, readOnly });
const listed: Record<string, ReturnType<typeof remote>[]> = {
  filesystem: [
    remote("read_text_file", "Read the complete contents of a file as text.", true),
    remote("list_directory", "Get a detailed listing of all files and directories in a specified path.", true),
    remote("write_file", "Create a new file or completely overwrite an existing file.", false),
  ],
};

function tools(): McpToolInfo[] {
  return servers.flatMap((s) =>
    (s.state === "idle" && !listed[s.name] ? [] : (listed[s.name] ?? [])).map((t) => ({
      toolName: t.name,
      toolkitSlug: s.name,
      qualifiedName: `mcp__${s.name}__${t.name}`,
      title: null,
      description: t.description,
      status: s.state === "disabled" ? "DISABLED" : s.state === "failed" ? "FAILED" : s.state === "running" ? "ACTIVE" : "DISCOVERED",
      schema: { type: "object" },
      readOnlyHint: t.readOnly,
      requiresApproval: !(t.readOnly && s.config.trusted),
      serverConfig: s.config,
    })),
  );
}

/** The catalog's MCP toolsets (enabled servers with known tools). */
export function mcpToolsets(): Capability[] {
  return servers
    .filter((s) => s.state !== "disabled")
    .map((s) => ({
      id: `mcp:${s.name}`,
      label: `MCP: ${s.name}`,
      description: `Tools of the MCP server '${s.name}'. The agent activates them with tool_search when it needs them.`,
      tools: tools()
        .filter((t) => t.toolkitSlug === s.name)
        .map((t) => ({ id: t.qualifiedName, name: t.toolName, description: t.description, runtimeName: t.qualifiedName, requiresApproval: t.requiresApproval })),
    }))
    .filter((c) => c.tools.length > 0);
}

const find = (name: unknown) => servers.find((s) => s.name === name) ?? fail(`no MCP server named '${String(name)}' (see \`suzent mcp list\`)`);
const info = (s: McpServerInfo): McpServerInfo => ({ ...s, tools: tools().filter((t) => t.toolkitSlug === s.name).map((t) => t.qualifiedName) });

/** Answers an MCP command, or returns `undefined` when `cmd` is not one. */
export async function mcpCommand(cmd: string, args: Record<string, unknown>): Promise<unknown> {
  switch (cmd) {
    case "mcp_servers":
      return servers.map(info);
    case "mcp_tools":
      return tools();
    case "add_mcp_server": {
      const name = String(args.name ?? "");
      const config = args.config as McpServerConfig;
      if (!name.trim()) fail(`MCP server '${name}': a server name has 1 to 64 characters and no control characters`, "name");
      if (servers.some((s) => s.name === name)) fail(`an MCP server named '${name}' already exists (remove it first with \`suzent mcp rm\`)`, "name");
      if (config.url !== undefined && !/^https?:\/\//.test(config.url ?? "")) fail(`MCP server '${name}': url '${config.url}' is not an http(s) URL`, "url");
      if (config.url === undefined && !config.command?.trim()) fail(`MCP server '${name}': neither command (stdio) nor url (HTTP) is set`, "command");
      const s: McpServerInfo = { name, config, transport: config.url ? "http" : "stdio", state: "idle", lastError: null, tools: [], toolsFetchedAt: null };
      servers.push(s);
      servers.sort((a, b) => a.name.localeCompare(b.name));
      return info(s);
    }
    case "remove_mcp_server": {
      find(args.name);
      servers.splice(servers.findIndex((s) => s.name === args.name), 1);
      return null;
    }
    case "set_mcp_server_enabled": {
      const s = find(args.name);
      s.config = { ...s.config, disabled: !args.enabled };
      s.state = args.enabled ? "idle" : "disabled";
      s.lastError = null;
      return info(s);
    }
    case "set_mcp_server_trusted": {
      const s = find(args.name);
      s.config = { ...s.config, trusted: Boolean(args.trusted) };
      return info(s);
    }
    case "test_mcp_server":
    case "refresh_mcp_server": {
      const s = find(args.name);
      await sleep(600);
      if (s.name === "weather") {
        if (cmd === "refresh_mcp_server") s.state = "failed";
        fail(s.lastError ?? "failed to start");
      }
      listed[s.name] ??= [remote("echo", "Echoes back the input.", true), remote("add", "Adds two numbers.", false)];
      if (cmd === "test_mcp_server") {
        const result: McpTestResult = {
          server: s.name,
          tools: (listed[s.name] ?? []).map((t) => ({ name: t.name, qualifiedName: `mcp__${s.name}__${t.name}`, description: t.description, readOnlyHint: t.readOnly })),
        };
        return result;
      }
      s.state = "running";
      return tools().filter((t) => t.toolkitSlug === s.name);
    }
    case "import_mcp_servers": {
      const path = String(args.path ?? "").trim();
      if (!path.endsWith(".json")) fail(`MCP configuration ${path}: No such file or directory (os error 2)`, "path");
      const added: string[] = [];
      const skipped: string[] = [];
      for (const name of ["everything", "filesystem"]) {
        if (servers.some((s) => s.name === name)) skipped.push(name);
        else {
          servers.push({ name, config: { command: "npx", args: ["-y", `@modelcontextprotocol/server-${name}`] }, transport: "stdio", state: "idle", lastError: null, tools: [], toolsFetchedAt: null });
          added.push(name);
        }
      }
      servers.sort((a, b) => a.name.localeCompare(b.name));
      return { added, skipped };
    }
    default:
      return undefined;
  }
}

/** Whether `cmd` is one of the MCP commands. */
export const isMcpCommand = (cmd: string) =>
  [
    "mcp_servers",
    "mcp_tools",
    "add_mcp_server",
    "remove_mcp_server",
    "set_mcp_server_enabled",
    "set_mcp_server_trusted",
    "test_mcp_server",
    "refresh_mcp_server",
    "import_mcp_servers",
  ].includes(cmd);
