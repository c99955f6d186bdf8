import { useCallback, useEffect, useId, useRef, useState, type FormEvent, type ReactElement } from "react";
import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import { ApiError, api, errorMessage } from "../api";
import { t as translate } from "../i18n";
import { useStore } from "../store";
import type { McpServerConfig, McpServerInfo, McpServerState, McpTestResult, McpToolInfo, McpToolStatus } from "../types";

/** How a server's state reads in the panel. */
function stateLabel(s: McpServerState, t: TFunction): string {
  switch (s) {
    case "idle":
      return t("mcp.state.idle");
    case "running":
      return t("mcp.state.running");
    case "failed":
      return t("mcp.state.failed");
    case "disabled":
      return t("mcp.state.disabled");
  }
}
const STATE_CLASS: Record<McpServerState, string> = { idle: "", running: "ok", failed: "error", disabled: "" };
const TOOL_STATUS_CLASS: Record<McpToolStatus, string> = { DISCOVERED: "", ACTIVE: "ok", FAILED: "error", DISABLED: "" };
function toolStatusHelp(s: McpToolStatus, t: TFunction): string {
  switch (s) {
    case "DISCOVERED":
      return t("mcp.toolStatus.discovered");
    case "ACTIVE":
      return t("mcp.toolStatus.active");
    case "FAILED":
      return t("mcp.toolStatus.failed");
    case "DISABLED":
      return t("mcp.toolStatus.disabled");
  }
}

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
      throw new LineError(field, translate("mcp.parse.expected", { line: i + 1, shape, got: line }));
    }
    if (field === "env" && /\s/.test(key)) throw new LineError(field, translate("mcp.parse.space", { line: i + 1, key }));
    if (key in out) throw new LineError(field, translate("mcp.parse.twice", { line: i + 1, key }));
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
  const { t } = useTranslation();
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
      <h3 id="mcp-add-title">{t("mcp.addTitle")}</h3>
      <fieldset className="mcp-transport">
        <legend>{t("mcp.transport")}</legend>
        <label>
          <input
            type="radio"
            name="mcp-transport"
            data-testid="mcp-add-transport-stdio"
            checked={d.transport === "stdio"}
            onChange={() => setD({ ...d, transport: "stdio" })}
          />
          {t("mcp.transportStdio")}
        </label>
        <label>
          <input
            type="radio"
            name="mcp-transport"
            data-testid="mcp-add-transport-http"
            checked={d.transport === "http"}
            onChange={() => setD({ ...d, transport: "http" })}
          />
          {t("mcp.transportHttp")}
        </label>
      </fieldset>
      <Field id="mcp-add-name" label={t("mcp.name")} hint={t("mcp.nameHint")} error={errors.name}>
        {(p) => <input {...p} ref={nameRef} data-testid="mcp-add-name" value={d.name} onChange={set("name")} autoComplete="off" placeholder="filesystem" />}
      </Field>
      {d.transport === "stdio" ? (
        <>
          <Field id="mcp-add-command" label={t("mcp.command")} hint={t("mcp.commandHint")} error={errors.command}>
            {(p) => <input {...p} data-testid="mcp-add-command" value={d.command} onChange={set("command")} autoComplete="off" placeholder="npx" />}
          </Field>
          <Field id="mcp-add-args" label={t("mcp.args")} hint={t("mcp.argsHint")} error={errors.args}>
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
          <Field id="mcp-add-env" label={t("mcp.env")} hint={t("mcp.envHint")} error={errors.env}>
            {(p) => <textarea {...p} data-testid="mcp-add-env" rows={2} value={d.env} onChange={set("env")} placeholder="API_TOKEN=${keychain:my-token}" />}
          </Field>
        </>
      ) : (
        <>
          <Field id="mcp-add-url" label={t("mcp.url")} error={errors.url}>
            {(p) => <input {...p} data-testid="mcp-add-url" type="url" value={d.url} onChange={set("url")} autoComplete="off" placeholder="https://mcp.example.com/mcp" />}
          </Field>
          <Field id="mcp-add-headers" label={t("mcp.headers")} hint={t("mcp.headersHint")} error={errors.headers}>
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
          {t("mcp.cancel")}
        </button>
        <button type="submit" className="btn primary" data-testid="mcp-add-submit" disabled={busy}>
          {busy ? t("mcp.adding") : t("mcp.addServer")}
        </button>
      </div>
    </form>
  );
}

function ImportForm({ onImported }: { onImported: () => void }) {
  const { t } = useTranslation();
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
        r.added.length ? t("mcp.imported", { names: r.added.join(", ") }) : t("mcp.importedNone"),
        r.skipped.length ? t("mcp.importSkipped", { names: r.skipped.join(", ") }) : "",
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
    <form className="mcp-import" onSubmit={(e) => void submit(e)} aria-label={t("mcp.importLabel")}>
      <Field
        id="mcp-import-path"
        label={t("mcp.importField")}
        hint={t("mcp.importHint")}
        error={error ?? undefined}
      >
        {(p) => (
          <div className="mcp-import-row">
            <input {...p} data-testid="mcp-import-path" value={path} onChange={(e) => setPath(e.target.value)} placeholder="/path/to/claude_desktop_config.json" />
            <button type="submit" className="btn" data-testid="mcp-import-submit" disabled={busy}>
              {busy ? t("mcp.importing") : t("mcp.import")}
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
  const { t } = useTranslation();
  return (
    <li className="mcp-tool" data-testid={`mcp-tool-${tool.qualifiedName}`}>
      <div className="tool-title">
        <strong>{tool.title ?? tool.toolName}</strong> <code>{tool.qualifiedName}</code>
        <span className={`pill ${TOOL_STATUS_CLASS[tool.status]}`} title={toolStatusHelp(tool.status, t)} data-testid={`mcp-tool-status-${tool.qualifiedName}`}>
          {tool.status}
        </span>
        {tool.readOnlyHint === true && (
          <span className={`badge ${trusted ? "ok" : ""}`} title={trusted ? t("mcp.readOnlyTrusted") : t("mcp.readOnlyIgnored")}>
            {trusted ? t("mcp.readOnly") : t("mcp.readOnlyHintIgnored")}
          </span>
        )}
        {tool.requiresApproval && <span className="badge warn">{t("mcp.needsApproval")}</span>}
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
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const trustHelp = useId();
  const enabled = server.state !== "disabled";
  const trusted = server.config.trusted === true;
  const n = server.name;

  const run = async (failure: string, f: () => Promise<void>) => {
    setBusy(true);
    try {
      await f();
    } catch (e) {
      actions.reportError(e, failure);
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
          {stateLabel(server.state, t)}
        </span>
        {trusted && <span className="badge ok">{t("mcp.trustedBadge")}</span>}
      </div>
      <p className="mcp-transport-line">
        <code data-testid={`mcp-transport-${n}`}>{transportLine(server)}</code>
      </p>
      {(envKeys.length > 0 || headerKeys.length > 0) && (
        <p className="muted small">
          {envKeys.length > 0 && <>{t("mcp.envKeys", { keys: envKeys.join(", ") })} </>}
          {headerKeys.length > 0 && <>{t("mcp.headerKeys", { keys: headerKeys.join(", ") })}</>}
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
              void run(on ? t("mcp.enableFailed", { name: n }) : t("mcp.disableFailed", { name: n }), async () =>
                onChanged(await api.setMcpServerEnabled(n, on)),
              );
            }}
          />
          {t("mcp.enabled")}
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
              void run(on ? t("mcp.trustFailed", { name: n }) : t("mcp.distrustFailed", { name: n }), async () =>
                onChanged(await api.setMcpServerTrusted(n, on)),
              );
            }}
          />
          {t("mcp.trusted")}
        </label>
        <span className="mcp-actions">
          <button type="button" className="btn small" data-testid={`mcp-test-${n}`} onClick={onTest} disabled={test?.state === "running"}>
            {test?.state === "running" ? t("mcp.testing") : t("mcp.test")}
          </button>
          {confirming ? (
            <span className="chat-confirm" role="group" aria-label={t("mcp.removeConfirmLabel", { name: n })}>
              <span className="small">{t("mcp.removeConfirm")}</span>
              <button
                type="button"
                className="btn small danger"
                data-testid={`mcp-remove-confirm-${n}`}
                autoFocus
                disabled={busy}
                onClick={() =>
                  void run(t("mcp.removeFailed", { name: n }), async () => {
                    await api.removeMcpServer(n);
                    onRemoved();
                  })
                }
              >
                {t("mcp.remove")}
              </button>
              <button type="button" className="btn small" data-testid={`mcp-remove-cancel-${n}`} onClick={() => setConfirming(false)}>
                {t("mcp.keep")}
              </button>
            </span>
          ) : (
            <button type="button" className="btn small danger" data-testid={`mcp-remove-${n}`} onClick={() => setConfirming(true)}>
              {t("mcp.remove")}
            </button>
          )}
        </span>
      </div>
      <p id={trustHelp} className="muted small">
        {t("mcp.trustHelp")}
      </p>
      <div aria-live="polite" data-testid={`mcp-test-result-${n}`}>
        {test?.state === "running" && <p className="muted small">{t("mcp.connecting", { name: n })}</p>}
        {test?.state === "ok" && (
          <p className="ok-text small">
            {t("mcp.testPassed", { count: test.result.tools.length, seconds: (test.ms / 1000).toFixed(1) })}
          </p>
        )}
        {test?.state === "ok" && test.registryError && (
          <p className="field-error" role="alert">
            {t("mcp.registryError", { error: test.registryError })}
          </p>
        )}
        {test?.state === "error" && (
          <p className="field-error" role="alert" data-testid={`mcp-test-error-${n}`}>
            {t("mcp.testFailed", { error: test.message })}
          </p>
        )}
      </div>
      <h4 className="mcp-tools-head">{t("mcp.tools")}</h4>
      {tools.length > 0 ? (
        <ul className="mcp-tools" aria-label={t("mcp.toolsOf", { name: n })}>
          {tools.map((tool) => (
            <ToolItem key={tool.qualifiedName} tool={tool} trusted={trusted} />
          ))}
        </ul>
      ) : test?.state === "ok" && test.result.tools.length > 0 ? (
        <>
          <p className="muted small">{t("mcp.listedByTest")}</p>
          <ul className="mcp-tools" aria-label={t("mcp.toolsOf", { name: n })}>
            {test.result.tools.map((tool) => (
              <li className="mcp-tool" key={tool.qualifiedName} data-testid={`mcp-tool-${tool.qualifiedName}`}>
                <div className="tool-title">
                  <strong>{tool.name}</strong> <code>{tool.qualifiedName}</code>
                  {tool.readOnlyHint === true && <span className="badge">{trusted ? t("mcp.readOnly") : t("mcp.readOnlyHintIgnored")}</span>}
                </div>
                {tool.description && <div className="muted small">{tool.description}</div>}
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p className="muted small" data-testid={`mcp-no-tools-${n}`}>
          {t("mcp.noTools")}
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
  const { t } = useTranslation();
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
      report.current(e, translate("mcp.catalogFailed"));
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
    setTests((all) => ({ ...all, [name]: { state: "running" } }));
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
    setTests((all) => ({ ...all, [name]: next }));
    await reload();
  };

  const replace = (s: McpServerInfo) => {
    setServers((all) => (all ?? []).map((x) => (x.name === s.name ? s : x)));
    void reload();
  };

  return (
    <section className="mcp-servers" aria-labelledby="mcp-title" data-testid="mcp-servers">
      <div className="section-head">
        <h2 id="mcp-title">{t("mcp.title")}</h2>
        <span className="mcp-actions">
          <button type="button" className="btn small" data-testid="mcp-reload" onClick={() => void reload()}>
            {t("mcp.reload")}
          </button>
          <button
            type="button"
            ref={addRef}
            className="btn small primary"
            data-testid="mcp-add"
            aria-expanded={adding}
            onClick={() => setAdding((a) => !a)}
          >
            {t("mcp.addServer")}
          </button>
        </span>
      </div>
      <p className="muted">
        {t("mcp.intro")}
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
          {t("mcp.loadFailed", { error: loadError })}
        </p>
      )}
      {servers === null && !loadError && <p className="muted">{t("mcp.loading")}</p>}
      {servers && servers.length === 0 && (
        <p className="muted" data-testid="mcp-empty">
          {t("mcp.empty")}
        </p>
      )}
      {servers && servers.length > 0 && (
        <ul className="mcp-server-list">
          {servers.map((s) => (
            <ServerCard
              key={s.name}
              server={s}
              tools={tools.filter((tool) => tool.toolkitSlug === s.name)}
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
