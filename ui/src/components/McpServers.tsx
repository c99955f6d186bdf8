import { useCallback, useEffect, useId, useRef, useState, type FormEvent, type ReactElement } from "react";
import { ApiError, api, errorMessage } from "../api";
import { useStore } from "../store";
import type { McpServerConfig, McpServerInfo, McpServerState, McpTestResult, McpToolInfo, McpToolStatus } from "../types";

/** How a server's state reads in the panel. */
const STATE_LABEL: Record<McpServerState, string> = {
  idle: "Not connected",
  running: "Connected",
  failed: "Failed",
  disabled: "Disabled",
};
const STATE_CLASS: Record<McpServerState, string> = { idle: "", running: "ok", failed: "error", disabled: "" };
const TOOL_STATUS_CLASS: Record<McpToolStatus, string> = { DISCOVERED: "", ACTIVE: "ok", FAILED: "error", DISABLED: "" };
const TOOL_STATUS_HELP: Record<McpToolStatus, string> = {
  DISCOVERED: "Known from the schema cache; the server is not connected now.",
  ACTIVE: "The server is connected and listed this tool.",
  FAILED: "The server failed; see its error.",
  DISABLED: "The server is disabled.",
};

/** A field of the add form whose error the backend can name. */
type AddField = "name" | "command" | "args" | "env" | "url" | "headers";
const ADD_FIELDS: readonly AddField[] = ["name", "command", "args", "env", "url", "headers"];

export class LineError extends Error {
  constructor(
    readonly field: AddField,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Parses `KEY=VALUE` lines (environment variables) or `Name: value` lines (HTTP headers) into a
 * map. Blank lines are skipped; a malformed line or a repeated key is an error naming the line.
 */
export function parsePairs(text: string, field: "env" | "headers"): Record<string, string> {
  const sep = field === "env" ? "=" : ":";
  const out: Record<string, string> = {};
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    const at = line.indexOf(sep);
    const key = at > 0 ? line.slice(0, at).trim() : "";
    if (!key) {
      const shape = field === "env" ? "KEY=VALUE" : "Name: value";
      throw new LineError(field, `line ${i + 1}: expected ${shape}, got '${line}'`);
    }
    if (field === "env" && /\s/.test(key)) throw new LineError(field, `line ${i + 1}: the variable name '${key}' contains a space`);
    if (key in out) throw new LineError(field, `line ${i + 1}: '${key}' is set twice`);
    out[key] = field === "env" ? line.slice(at + 1) : line.slice(at + 1).trim();
  });
  return out;
}

/** The configuration the add form describes (stdio: command, args, env; HTTP: url, headers). */
export function draftConfig(d: AddDraft): McpServerConfig {
  if (d.transport === "stdio") {
    return {
      command: d.command.trim(),
      args: d.args
        .split("\n")
        .map((a) => a.trim())
        .filter((a) => a.length > 0),
      env: parsePairs(d.env, "env"),
    };
  }
  return { url: d.url.trim(), headers: parsePairs(d.headers, "headers") };
}

export interface AddDraft {
  transport: "stdio" | "http";
  name: string;
  command: string;
  args: string;
  env: string;
  url: string;
  headers: string;
}
const EMPTY_DRAFT: AddDraft = { transport: "stdio", name: "", command: "", args: "", env: "", url: "", headers: "" };

/** What a Test press showed: running, the tools the server listed, or the error. */
type TestState =
  | { state: "running" }
  | { state: "ok"; result: McpTestResult; ms: number; registryError: string | null }
  | { state: "error"; message: string };

/** How the server is reached, as one line (secrets are already `***` from the backend). */
function transportLine(s: McpServerInfo): string {
  if (s.config.url) return s.config.url;
  const quote = (a: string) => (/[\s"'\\]/.test(a) || a === "" ? JSON.stringify(a) : a);
  return [s.config.command ?? "", ...(s.config.args ?? [])].map(quote).join(" ");
}

function Field({
  id,
  label,
  hint,
  error,
  children,
}: {
  id: string;
  label: string;
  hint?: string;
  error?: string;
  children: (props: { id: string; "aria-invalid": boolean; "aria-describedby"?: string }) => ReactElement;
}) {
  const described = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-invalid": !!error, "aria-describedby": described || undefined })}
      {hint && (
        <span id={`${id}-hint`} className="muted small">
          {hint}
        </span>
      )}
      {error && (
        <p id={`${id}-error`} className="field-error" role="alert" data-testid={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

function AddServerForm({ onAdded, onCancel }: { onAdded: (s: McpServerInfo) => void; onCancel: () => void }) {
  const [d, setD] = useState<AddDraft>(EMPTY_DRAFT);
  const [errors, setErrors] = useState<Partial<Record<AddField, string>>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const nameRef = useRef<HTMLInputElement>(null);
  useEffect(() => nameRef.current?.focus(), []);
  // Editing a field clears its error (the next submit checks it again).
  const set = (k: AddField) => (e: { target: { value: string } }) => {
    setD({ ...d, [k]: e.target.value });
    if (errors[k]) setErrors({ ...errors, [k]: undefined });
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    let config: McpServerConfig;
    try {
      config = draftConfig(d);
    } catch (err) {
      if (err instanceof LineError) setErrors({ [err.field]: err.message });
      else setFormError(errorMessage(err));
      return;
    }
    setBusy(true);
    try {
      const added = await api.addMcpServer(d.name.trim(), config);
      setD(EMPTY_DRAFT);
      onAdded(added);
    } catch (err) {
      const field = err instanceof ApiError ? err.field : null;
      const shown = field === "command" && d.transport === "http" ? "url" : field === "url" && d.transport === "stdio" ? "command" : field;
      if (shown && (ADD_FIELDS as readonly string[]).includes(shown)) setErrors({ [shown as AddField]: errorMessage(err) });
      else setFormError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card mcp-add-form" data-testid="mcp-add-form" onSubmit={(e) => void submit(e)} aria-labelledby="mcp-add-title" noValidate>
      <h3 id="mcp-add-title">Add an MCP server</h3>
      <fieldset className="mcp-transport">
        <legend>Transport</legend>
        <label>
          <input
            type="radio"
            name="mcp-transport"
            data-testid="mcp-add-transport-stdio"
            checked={d.transport === "stdio"}
            onChange={() => setD({ ...d, transport: "stdio" })}
          />
          Command (stdio)
        </label>
        <label>
          <input
            type="radio"
            name="mcp-transport"
            data-testid="mcp-add-transport-http"
            checked={d.transport === "http"}
            onChange={() => setD({ ...d, transport: "http" })}
          />
          URL (streamable HTTP)
        </label>
      </fieldset>
      <Field id="mcp-add-name" label="Name" hint="Tools reach the model as mcp__NAME__TOOL." error={errors.name}>
        {(p) => <input {...p} ref={nameRef} data-testid="mcp-add-name" value={d.name} onChange={set("name")} autoComplete="off" placeholder="filesystem" />}
      </Field>
      {d.transport === "stdio" ? (
        <>
          <Field id="mcp-add-command" label="Command" hint="npx, uvx, node or a path; found on your login shell's PATH." error={errors.command}>
            {(p) => <input {...p} data-testid="mcp-add-command" value={d.command} onChange={set("command")} autoComplete="off" placeholder="npx" />}
          </Field>
          <Field id="mcp-add-args" label="Arguments" hint="One argument per line." error={errors.args}>
            {(p) => (
              <textarea
                {...p}
                data-testid="mcp-add-args"
                rows={3}
                value={d.args}
                onChange={set("args")}
                placeholder={"-y\n@modelcontextprotocol/server-filesystem\n/home/me/notes"}
              />
            )}
          </Field>
          <Field id="mcp-add-env" label="Environment" hint="KEY=VALUE, one per line. ${keychain:ENTRY} reads a value from the OS keychain." error={errors.env}>
            {(p) => <textarea {...p} data-testid="mcp-add-env" rows={2} value={d.env} onChange={set("env")} placeholder="API_TOKEN=${keychain:my-token}" />}
          </Field>
        </>
      ) : (
        <>
          <Field id="mcp-add-url" label="URL" error={errors.url}>
            {(p) => <input {...p} data-testid="mcp-add-url" type="url" value={d.url} onChange={set("url")} autoComplete="off" placeholder="https://mcp.example.com/mcp" />}
          </Field>
          <Field id="mcp-add-headers" label="Headers" hint="Name: value, one per line. ${keychain:ENTRY} reads a value from the OS keychain." error={errors.headers}>
            {(p) => (
              <textarea {...p} data-testid="mcp-add-headers" rows={2} value={d.headers} onChange={set("headers")} placeholder="Authorization: Bearer ${keychain:example}" />
            )}
          </Field>
        </>
      )}
      {formError && (
        <p className="field-error" role="alert" data-testid="mcp-add-error">
          {formError}
        </p>
      )}
      <div className="form-actions">
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="btn primary" data-testid="mcp-add-submit" disabled={busy}>
          {busy ? "Adding…" : "Add server"}
        </button>
      </div>
    </form>
  );
}

function ImportForm({ onImported }: { onImported: () => void }) {
  const [path, setPath] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setResult(null);
    setBusy(true);
    try {
      const r = await api.importMcpServers(path);
      const parts = [
        r.added.length ? `Added ${r.added.join(", ")}.` : "No new servers.",
        r.skipped.length ? `Skipped ${r.skipped.join(", ")} (a server with that name exists).` : "",
      ];
      setResult(parts.filter(Boolean).join(" "));
      onImported();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="mcp-import" onSubmit={(e) => void submit(e)} aria-label="Import from Claude Desktop">
      <Field
        id="mcp-import-path"
        label="Import from a Claude Desktop configuration"
        hint="Its mcpServers are added; names that exist already are skipped. Linux: ~/.config/Claude/claude_desktop_config.json; macOS: ~/Library/Application Support/Claude/claude_desktop_config.json."
        error={error ?? undefined}
      >
        {(p) => (
          <div className="mcp-import-row">
            <input {...p} data-testid="mcp-import-path" value={path} onChange={(e) => setPath(e.target.value)} placeholder="/path/to/claude_desktop_config.json" />
            <button type="submit" className="btn" data-testid="mcp-import-submit" disabled={busy}>
              {busy ? "Importing…" : "Import"}
            </button>
          </div>
        )}
      </Field>
      {result && (
        <p className="ok-text small" role="status" data-testid="mcp-import-result">
          {result}
        </p>
      )}
    </form>
  );
}

function ToolItem({ tool, trusted }: { tool: McpToolInfo; trusted: boolean }) {
  return (
    <li className="mcp-tool" data-testid={`mcp-tool-${tool.qualifiedName}`}>
      <div className="tool-title">
        <strong>{tool.title ?? tool.toolName}</strong> <code>{tool.qualifiedName}</code>
        <span className={`pill ${TOOL_STATUS_CLASS[tool.status]}`} title={TOOL_STATUS_HELP[tool.status]} data-testid={`mcp-tool-status-${tool.qualifiedName}`}>
          {tool.status}
        </span>
        {tool.readOnlyHint === true && (
          <span className={`badge ${trusted ? "ok" : ""}`} title={trusted ? "Runs without asking in the default mode." : "Ignored: the server is not trusted."}>
            read-only{trusted ? "" : " (hint ignored)"}
          </span>
        )}
        {tool.requiresApproval && <span className="badge warn">needs approval</span>}
      </div>
      {tool.description && <div className="muted small">{tool.description}</div>}
    </li>
  );
}

function ServerCard({
  server,
  tools,
  test,
  onTest,
  onChanged,
  onRemoved,
}: {
  server: McpServerInfo;
  tools: McpToolInfo[];
  test: TestState | undefined;
  onTest: () => void;
  onChanged: (s: McpServerInfo) => void;
  onRemoved: () => void;
}) {
  const { actions } = useStore();
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const trustHelp = useId();
  const enabled = server.state !== "disabled";
  const trusted = server.config.trusted === true;
  const n = server.name;

  const run = async (what: string, f: () => Promise<void>) => {
    setBusy(true);
    try {
      await f();
    } catch (e) {
      actions.reportError(e, `${what} '${n}' failed`);
    } finally {
      setBusy(false);
    }
  };
  const envKeys = Object.keys(server.config.env ?? {});
  const headerKeys = Object.keys(server.config.headers ?? {});

  return (
    <li className="card mcp-server" data-testid={`mcp-server-${n}`} aria-labelledby={`mcp-name-${n}`}>
      <div className="mcp-server-head">
        <h3 id={`mcp-name-${n}`}>{n}</h3>
        <span className="badge">{server.transport === "http" ? "HTTP" : "stdio"}</span>
        <span className={`pill ${STATE_CLASS[server.state]}`} data-testid={`mcp-state-${n}`}>
          {STATE_LABEL[server.state]}
        </span>
        {trusted && <span className="badge ok">trusted</span>}
      </div>
      <p className="mcp-transport-line">
        <code data-testid={`mcp-transport-${n}`}>{transportLine(server)}</code>
      </p>
      {(envKeys.length > 0 || headerKeys.length > 0) && (
        <p className="muted small">
          {envKeys.length > 0 && <>Environment: {envKeys.join(", ")}. </>}
          {headerKeys.length > 0 && <>Headers: {headerKeys.join(", ")}.</>}
        </p>
      )}
      {server.state === "failed" && server.lastError && (
        <p className="field-error mcp-error" role="alert" data-testid={`mcp-error-${n}`}>
          {server.lastError}
        </p>
      )}
      <div className="mcp-controls">
        <label className="mcp-switch">
          <input
            type="checkbox"
            data-testid={`mcp-enabled-${n}`}
            checked={enabled}
            disabled={busy}
            onChange={(e) => {
              const on = e.target.checked;
              void run(on ? "Enabling" : "Disabling", async () => onChanged(await api.setMcpServerEnabled(n, on)));
            }}
          />
          Enabled
        </label>
        <label className="mcp-switch">
          <input
            type="checkbox"
            data-testid={`mcp-trusted-${n}`}
            checked={trusted}
            disabled={busy}
            aria-describedby={trustHelp}
            onChange={(e) => {
              const on = e.target.checked;
              void run(on ? "Trusting" : "Distrusting", async () => onChanged(await api.setMcpServerTrusted(n, on)));
            }}
          />
          Trusted
        </label>
        <span className="mcp-actions">
          <button type="button" className="btn small" data-testid={`mcp-test-${n}`} onClick={onTest} disabled={test?.state === "running"}>
            {test?.state === "running" ? "Testing…" : "Test"}
          </button>
          {confirming ? (
            <span className="chat-confirm" role="group" aria-label={`Remove ${n}?`}>
              <span className="small">Remove?</span>
              <button
                type="button"
                className="btn small danger"
                data-testid={`mcp-remove-confirm-${n}`}
                autoFocus
                disabled={busy}
                onClick={() =>
                  void run("Removing", async () => {
                    await api.removeMcpServer(n);
                    onRemoved();
                  })
                }
              >
                Remove
              </button>
              <button type="button" className="btn small" data-testid={`mcp-remove-cancel-${n}`} onClick={() => setConfirming(false)}>
                Keep
              </button>
            </span>
          ) : (
            <button type="button" className="btn small danger" data-testid={`mcp-remove-${n}`} onClick={() => setConfirming(true)}>
              Remove
            </button>
          )}
        </span>
      </div>
      <p id={trustHelp} className="muted small">
        Trusted: tools this server marks read-only (readOnlyHint) run without asking in the default mode. The hints of an untrusted server are ignored, so every
        call of its tools asks first.
      </p>
      <div aria-live="polite" data-testid={`mcp-test-result-${n}`}>
        {test?.state === "running" && <p className="muted small">Connecting to {n} and listing its tools…</p>}
        {test?.state === "ok" && (
          <p className="ok-text small">
            Test passed: connected and listed {test.result.tools.length} tool{test.result.tools.length === 1 ? "" : "s"} in {(test.ms / 1000).toFixed(1)} s.
          </p>
        )}
        {test?.state === "ok" && test.registryError && (
          <p className="field-error" role="alert">
            The tools could not be loaded for the agent: {test.registryError}
          </p>
        )}
        {test?.state === "error" && (
          <p className="field-error" role="alert" data-testid={`mcp-test-error-${n}`}>
            Test failed: {test.message}
          </p>
        )}
      </div>
      <h4 className="mcp-tools-head">Tools</h4>
      {tools.length > 0 ? (
        <ul className="mcp-tools" aria-label={`Tools of ${n}`}>
          {tools.map((t) => (
            <ToolItem key={t.qualifiedName} tool={t} trusted={trusted} />
          ))}
        </ul>
      ) : test?.state === "ok" && test.result.tools.length > 0 ? (
        <>
          <p className="muted small">Listed by the test. Enable the server to let the agent use them.</p>
          <ul className="mcp-tools" aria-label={`Tools of ${n}`}>
            {test.result.tools.map((t) => (
              <li className="mcp-tool" key={t.qualifiedName} data-testid={`mcp-tool-${t.qualifiedName}`}>
                <div className="tool-title">
                  <strong>{t.name}</strong> <code>{t.qualifiedName}</code>
                  {t.readOnlyHint === true && <span className="badge">read-only{trusted ? "" : " (hint ignored)"}</span>}
                </div>
                {t.description && <div className="muted small">{t.description}</div>}
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p className="muted small" data-testid={`mcp-no-tools-${n}`}>
          No tools listed yet. Press Test to connect and list them; the agent also lists them when it first needs them.
        </p>
      )}
    </li>
  );
}

/**
 * The MCP servers of `mcp.json`: each with its transport, state, last error and tools, and
 * enable, trust, test and remove; plus adding a server and importing Claude Desktop's. Every
 * change reloads the servers, their tools and the tool catalog (where MCP toolsets appear).
 */
export function McpServers() {
  const { state, dispatch, actions } = useStore();
  const [servers, setServers] = useState<McpServerInfo[] | null>(null);
  const [tools, setTools] = useState<McpToolInfo[]>([]);
  const [tests, setTests] = useState<Record<string, TestState>>({});
  const [adding, setAdding] = useState(false);
  const [loadError, setLoadError] = useState<string | null>(null);
  const addRef = useRef<HTMLButtonElement>(null);

  const report = useRef(actions.reportError);
  report.current = actions.reportError;

  const reload = useCallback(async () => {
    try {
      const [s, t] = await Promise.all([api.mcpServers(), api.mcpTools(null, false)]);
      setServers(s);
      setTools(t);
      setLoadError(null);
    } catch (e) {
      setLoadError(errorMessage(e));
      return;
    }
    try {
      dispatch({ type: "catalog/set", catalog: await api.getCatalog() });
    } catch (e) {
      report.current(e, "Could not reload the tool catalog");
    }
  }, [dispatch]);

  // Activating a tool connects its server (and may list servers for the first time): reload on
  // every tool_activated event so states, statuses and the catalog stay live.
  const activations = Object.values(state.activated).reduce((n, list) => n + list.length, 0);
  useEffect(() => {
    void reload();
  }, [reload, activations]);

  const test = async (server: McpServerInfo) => {
    const name = server.name;
    setTests((t) => ({ ...t, [name]: { state: "running" } }));
    const started = performance.now();
    let next: TestState;
    try {
      const result = await api.testMcpServer(name);
      next = { state: "ok", result, ms: performance.now() - started, registryError: null };
    } catch (e) {
      next = { state: "error", message: errorMessage(e) };
    }
    // Load the tools into the registry too (enabled servers), so their status and toolset show;
    // a failure is recorded on the server and shown as its error.
    if (server.state !== "disabled") {
      try {
        await api.refreshMcpServer(name);
      } catch (e) {
        if (next.state === "ok") next = { ...next, registryError: errorMessage(e) };
      }
    }
    setTests((t) => ({ ...t, [name]: next }));
    await reload();
  };

  const replace = (s: McpServerInfo) => {
    setServers((all) => (all ?? []).map((x) => (x.name === s.name ? s : x)));
    void reload();
  };

  return (
    <section className="mcp-servers" aria-labelledby="mcp-title" data-testid="mcp-servers">
      <div className="section-head">
        <h2 id="mcp-title">MCP servers</h2>
        <span className="mcp-actions">
          <button type="button" className="btn small" data-testid="mcp-reload" onClick={() => void reload()}>
            Reload
          </button>
          <button
            type="button"
            ref={addRef}
            className="btn small primary"
            data-testid="mcp-add"
            aria-expanded={adding}
            onClick={() => setAdding((a) => !a)}
          >
            Add server
          </button>
        </span>
      </div>
      <p className="muted">
        Tools of Model Context Protocol servers. The agent does not get them by default: it finds and activates them with tool_search when it needs them.
        Every call goes through your permission rules.
      </p>
      {adding && (
        <AddServerForm
          onAdded={(s) => {
            setAdding(false);
            setServers((all) => [...(all ?? []).filter((x) => x.name !== s.name), s].sort((a, b) => a.name.localeCompare(b.name)));
            void reload();
            addRef.current?.focus();
          }}
          onCancel={() => {
            setAdding(false);
            addRef.current?.focus();
          }}
        />
      )}
      {loadError && (
        <p className="field-error" role="alert" data-testid="mcp-load-error">
          Could not load the MCP servers: {loadError}
        </p>
      )}
      {servers === null && !loadError && <p className="muted">Loading the MCP servers…</p>}
      {servers && servers.length === 0 && (
        <p className="muted" data-testid="mcp-empty">
          No MCP servers yet. Add one, or import the servers of Claude Desktop.
        </p>
      )}
      {servers && servers.length > 0 && (
        <ul className="mcp-server-list">
          {servers.map((s) => (
            <ServerCard
              key={s.name}
              server={s}
              tools={tools.filter((t) => t.toolkitSlug === s.name)}
              test={tests[s.name]}
              onTest={() => void test(s)}
              onChanged={replace}
              onRemoved={() => {
                setServers((all) => (all ?? []).filter((x) => x.name !== s.name));
                setTests((all) => {
                  const rest = { ...all };
                  delete rest[s.name];
                  return rest;
                });
                void reload();
              }}
            />
          ))}
        </ul>
      )}
      <ImportForm onImported={() => void reload()} />
    </section>
  );
}
