import { useCallback, useEffect, useId, useState, type FormEvent } from "react";
import { api, ApiError, errorMessage } from "../api";
import { describeMatcher, describeRule, formatShort, formatTime, MODE_EXPLANATIONS, MODE_LABELS } from "../format";
import { useStore } from "../store";
import type { AuditEntry, Explanation, JsonValue, PermissionMode, Rule, RuleDraft } from "../types";
import { InlineCode } from "./InlineCode";
import { RuleEditor } from "./RuleEditor";

const MODES: PermissionMode[] = ["default", "auto", "full_access"];

const ANSWER_LABELS: Record<string, string> = {
  allow_once: "you allowed once",
  allow_session: "you allowed for the chat",
  allow_global: "you always allowed",
  reject: "you rejected",
};

function RulesSection() {
  const { state, actions } = useStore();
  const [chatId, setChatId] = useState<string>(state.activeChatId ?? "");
  const [rules, setRules] = useState<Rule[] | null>(null);

  const load = useCallback(async () => {
    try {
      setRules(await api.listRules(chatId || null));
    } catch (e) {
      setRules([]);
      actions.reportError(e, "Could not load rules");
    }
  }, [chatId, actions]);

  useEffect(() => {
    void load();
  }, [load]);

  const add = async (draft: RuleDraft, forChat: string | null) => {
    try {
      await api.addRule(draft, forChat);
      await load();
    } catch (e) {
      actions.reportError(e, "Could not add the rule");
    }
  };

  const remove = async (rule: Rule) => {
    try {
      await api.deleteRule(rule.id);
      setRules((prev) => (prev ?? []).filter((r) => r.id !== rule.id));
    } catch (e) {
      actions.reportError(e, "Could not delete the rule");
    }
  };

  const title = (id: string | null | undefined) => state.chats.find((c) => c.id === id)?.title ?? id ?? "";
  const toolNames = (state.catalog ?? []).flatMap((c) => c.tools.map((t) => t.runtimeName));

  return (
    <section aria-labelledby="rules-h">
      <div className="section-head">
        <h2 id="rules-h">Rules</h2>
        <div className="field inline">
          <label htmlFor="rules-chat">Show</label>
          <select id="rules-chat" value={chatId} onChange={(e) => setChatId(e.target.value)}>
            <option value="">Every rule</option>
            {state.chats.map((c) => (
              <option key={c.id} value={c.id}>
                Global rules and those of “{c.title}”
              </option>
            ))}
          </select>
        </div>
      </div>
      <p className="muted">Deny beats ask beats allow, whatever the mode and scope.</p>
      <div className="table-wrap">
        <table className="table" data-testid="rules-list">
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Behavior</th>
              <th scope="col">Matches</th>
              <th scope="col">Scope</th>
              <th scope="col">Added</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rules === null && (
              <tr>
                <td colSpan={6} className="muted">
                  Loading…
                </td>
              </tr>
            )}
            {rules?.length === 0 && (
              <tr>
                <td colSpan={6} className="muted empty">
                  No rules yet. Rules are added here or when you answer an approval with “allow for this session” or
                  “always allow”.
                </td>
              </tr>
            )}
            {rules?.map((r) => (
              <tr key={r.id} data-testid="rule-row" data-rule-id={r.id}>
                <td className="break-any">
                  <code>{r.tool}</code>
                  {r.description && (
                    <div className="muted small">
                      <InlineCode text={r.description} />
                    </div>
                  )}
                </td>
                <td>
                  <span className={`badge behavior-${r.behavior}`}>{r.behavior}</span>
                </td>
                <td className="break-any">{describeMatcher(r.matcher)}</td>
                <td>{r.destination === "global" ? "Global" : `Chat: ${title(r.chatId)}`}</td>
                <td className="nowrap" title={formatTime(r.createdAt)}>
                  {formatShort(r.createdAt)}
                </td>
                <td>
                  <button
                    type="button"
                    className="btn small danger"
                    data-testid="rule-delete"
                    aria-label={`Delete rule for ${r.tool}`}
                    onClick={() => void remove(r)}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <RuleEditor tools={toolNames} chats={state.chats} chatId={chatId || null} onSubmit={add} />
    </section>
  );
}

function DefaultModeSection() {
  const { state, dispatch, actions } = useStore();
  const mode = state.settings?.defaultMode ?? "default";
  const change = async (m: PermissionMode) => {
    try {
      dispatch({ type: "settings/set", settings: await api.saveSettings({ defaultMode: m }) });
    } catch (e) {
      actions.reportError(e, "Could not save the default mode");
    }
  };
  return (
    <section aria-labelledby="mode-h">
      <h2 id="mode-h">Default mode for new chats</h2>
      <div className="mode-options" role="radiogroup" aria-labelledby="mode-h">
        {MODES.map((m) => (
          <label key={m} className={`card mode-option${m === mode ? " selected" : ""}`}>
            <input
              type="radio"
              name="default-mode"
              value={m}
              checked={m === mode}
              disabled={!state.settings}
              onChange={() => void change(m)}
            />
            <strong>{MODE_LABELS[m]}</strong>
            <span className="muted">{MODE_EXPLANATIONS[m]}</span>
          </label>
        ))}
      </div>
    </section>
  );
}

/** Example arguments offered when a tool is picked in the simulator (others start as `{}`). */
const EXAMPLE_ARGS: Record<string, JsonValue> = {
  run_command: { content: "ls && rm -rf /" },
  start_command: { content: "npm run dev" },
  read_file: { file_path: "README.md" },
  write_file: { file_path: "notes.txt", content: "hello" },
  edit_file: { file_path: "notes.txt", old_string: "hello", new_string: "hi" },
  glob_search: { pattern: "**/*.rs" },
  grep_search: { pattern: "fn main" },
  webpage_fetch: { url: "https://example.com/" },
  agent_send: { agent_id: "agent-1", message: "hello" },
};

const exampleArgs = (tool: string) => JSON.stringify(EXAMPLE_ARGS[tool] ?? {}, null, 2);

/** Parses the simulator's argument text: a JSON object, or a sentence saying what is wrong. */
export function parseArgs(text: string): { args: JsonValue } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { error: `Arguments are not valid JSON (${e instanceof Error ? e.message : String(e)}).` };
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { error: 'Arguments must be a JSON object, e.g. {"content": "ls"}.' };
  }
  return { args: parsed as JsonValue };
}

const SOURCE_LABELS: Record<string, string> = {
  rule: "a rule",
  mode: "the mode",
  shell_policy: "the shell policy",
  path_policy: "the path policy",
  tool_default: "the tool's default",
  auto_classifier: "the reviewer model",
  headless: "a headless run",
  user: "you",
};

function ExplanationView({ e }: { e: Explanation }) {
  return (
    <div className="card explain-result" data-testid="explain-result" aria-live="polite">
      <div className="explain-verdict">
        <span className={`badge behavior-${e.behavior}`} data-testid="explain-behavior">
          {e.behavior}
        </span>
        <code className="reason-code" data-testid="explain-reason-code">
          {e.reasonCode}
        </code>
        <span className={`risk risk-${e.risk}`} data-testid="explain-risk">
          {e.risk} risk
        </span>
        <span className="muted small">
          decided by {SOURCE_LABELS[e.source] ?? e.source} · mode {MODE_LABELS[e.mode]}
        </span>
      </div>
      <p data-testid="explain-reason">
        <InlineCode text={e.reason} />
      </p>
      {e.reviewerWouldDecide && <p className="note small">In Auto mode this call goes to the reviewer model instead of asking you.</p>}

      <h3>Rules that matched</h3>
      {e.matchedRules.length === 0 ? (
        <p className="muted" data-testid="explain-no-rules">
          No rule matched this call.
        </p>
      ) : (
        <ul className="explain-list" data-testid="explain-rules">
          {e.matchedRules.map((m) => (
            <li key={m.rule.id} data-testid="explain-rule" data-decisive={m.decisive}>
              <span className={`badge behavior-${m.rule.behavior}`}>{m.rule.behavior}</span>{" "}
              {m.decisive && <strong className="decisive">decides · </strong>}
              <span>{describeRule(m.rule)}</span> <code className="reason-code">{m.rule.id}</code>
              <div className="muted small">{m.why}</div>
            </li>
          ))}
        </ul>
      )}

      {e.segments.length > 0 && (
        <>
          <h3>Commands in the script</h3>
          {e.understood === false && (
            <p className="note small">The analyser could not follow the whole script, so it cannot be allowed without approval.</p>
          )}
          {e.compound && <p className="muted small">The script runs several commands; each is checked and any deny denies the call.</p>}
          <div className="table-wrap">
            <table className="table" data-testid="explain-segments">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Command</th>
                  <th scope="col">Verdict</th>
                  <th scope="col">Why</th>
                </tr>
              </thead>
              <tbody>
                {e.segments.map((s, i) => (
                  <tr key={i} data-testid="explain-segment">
                    <td>{i + 1}</td>
                    <td className="break-any">
                      <code>{s.words.join(" ")}</code>
                      {s.wrappers.length > 0 && <div className="muted small">inside {s.wrappers.join(" › ")}</div>}
                      {s.assignments.length > 0 && <div className="muted small">with {s.assignments.join(" ")}</div>}
                      {s.redirects.length > 0 && <div className="muted small">writes {s.redirects.join(", ")}</div>}
                      {s.nested && <div className="muted small">nested command</div>}
                    </td>
                    <td>
                      <span className={`badge behavior-${s.verdict}`}>{s.verdict}</span>
                    </td>
                    <td>{s.verdictReason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}

      {(e.destinations.length > 0 || !e.destinationsComplete) && (
        <>
          <h3>Addressed to</h3>
          <p data-testid="explain-destinations">
            {e.destinations.map((d) => (
              <code key={d} className="destination">
                {d}
              </code>
            ))}
          </p>
          {!e.destinationsComplete && (
            <p className="note small">Some recipients could not be read, so recipient allow rules do not cover this call.</p>
          )}
        </>
      )}
    </div>
  );
}

/** The decision simulator: what the engine would decide for a call, and why. Nothing runs. */
function ExplainSection() {
  const { state } = useStore();
  const id = useId();
  const tools = (state.catalog ?? []).flatMap((c) => c.tools.map((t) => t.runtimeName));
  const firstTool = tools.includes("run_command") ? "run_command" : (tools[0] ?? "");
  const [tool, setTool] = useState(firstTool);
  const [argsText, setArgsText] = useState(exampleArgs(firstTool));
  const [mode, setMode] = useState<PermissionMode | "">("");
  const [chatId, setChatId] = useState("");
  const [error, setError] = useState<string | null>(null);
  // Whether the error is about the arguments (marks the text area invalid).
  const [argsInvalid, setArgsInvalid] = useState(false);
  const [result, setResult] = useState<Explanation | null>(null);
  const [busy, setBusy] = useState(false);

  // The catalog loads after the first render: pick a tool once it is there.
  useEffect(() => {
    if (!tool && firstTool) {
      setTool(firstTool);
      setArgsText(exampleArgs(firstTool));
    }
  }, [tool, firstTool]);

  const pickTool = (next: string) => {
    // Untouched example arguments follow the tool; edited ones are kept.
    if (argsText === exampleArgs(tool)) setArgsText(exampleArgs(next));
    setTool(next);
  };

  const submit = async (ev: FormEvent) => {
    ev.preventDefault();
    setResult(null);
    if (!tool) {
      setError("Tool is required: pick the tool to simulate.");
      setArgsInvalid(false);
      return;
    }
    const parsed = parseArgs(argsText);
    if ("error" in parsed) {
      setError(parsed.error);
      setArgsInvalid(true);
      return;
    }
    setError(null);
    setArgsInvalid(false);
    setBusy(true);
    try {
      setResult(await api.explainPermission(tool, parsed.args, mode || null, chatId || null));
    } catch (e) {
      const field = e instanceof ApiError ? e.field : null;
      setError(`The decision could not be explained: ${errorMessage(e)}${field ? ` (field: ${field})` : ""}`);
      setArgsInvalid(field === "args");
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="explain-h" data-testid="explain-panel">
      <h2 id="explain-h">Explain a decision</h2>
      <p className="muted">
        What the permission engine would decide for a tool call: the decision, every rule that matched, each command of a
        script and who the call addresses. Nothing runs and nothing is recorded.
      </p>
      <form className="card" onSubmit={(e) => void submit(e)} noValidate aria-label="Explain a decision">
        <div className="grid">
          <div className="field">
            <label htmlFor={`${id}-tool`}>Tool</label>
            <select id={`${id}-tool`} data-testid="explain-tool" value={tool} onChange={(e) => pickTool(e.target.value)}>
              {!tool && <option value="">Choose a tool…</option>}
              {(state.catalog ?? []).map((c) => (
                <optgroup key={c.id} label={c.label}>
                  {c.tools.map((t) => (
                    <option key={t.runtimeName} value={t.runtimeName}>
                      {t.runtimeName}
                    </option>
                  ))}
                </optgroup>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={`${id}-mode`}>Mode</label>
            <select id={`${id}-mode`} data-testid="explain-mode" value={mode} onChange={(e) => setMode(e.target.value as PermissionMode | "")}>
              <option value="">{chatId ? "The chat's mode" : "The default mode"}</option>
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {MODE_LABELS[m]}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={`${id}-chat`}>Chat</label>
            <select id={`${id}-chat`} data-testid="explain-chat" value={chatId} onChange={(e) => setChatId(e.target.value)}>
              <option value="">No chat (global rules only)</option>
              {state.chats.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.title}
                </option>
              ))}
            </select>
          </div>
          <div className="field wide">
            <label htmlFor={`${id}-args`}>Arguments (JSON object)</label>
            <textarea
              id={`${id}-args`}
              data-testid="explain-args"
              className="mono"
              rows={4}
              spellCheck={false}
              value={argsText}
              aria-invalid={argsInvalid}
              aria-describedby={error ? `${id}-err` : undefined}
              onChange={(e) => setArgsText(e.target.value)}
            />
            {error && (
              <span className="field-error" id={`${id}-err`} role="alert" data-testid="explain-error">
                {error}
              </span>
            )}
          </div>
        </div>
        <div className="form-actions">
          <button type="submit" className="btn primary" data-testid="explain-run" disabled={busy}>
            {busy ? "Explaining…" : "Explain"}
          </button>
        </div>
      </form>
      {result && <ExplanationView e={result} />}
    </section>
  );
}

function AuditSection() {
  const { state, actions } = useStore();
  const [chatId, setChatId] = useState("");
  const [tool, setTool] = useState("");
  const [decision, setDecision] = useState("");
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);

  const load = useCallback(async () => {
    try {
      const rows = await api.readAuditLog({
        chatId: chatId || null,
        tool: tool.trim() || null,
        decision: decision || null,
        limit: 200,
      });
      // The backend reads newest first; sorting again keeps that true whatever the file order.
      setEntries([...rows].sort((a, b) => (b.timestamp ?? "").localeCompare(a.timestamp ?? "")));
    } catch (e) {
      setEntries([]);
      actions.reportError(e, "Could not read the audit log");
    }
  }, [chatId, tool, decision, actions]);

  useEffect(() => {
    const t = setTimeout(() => void load(), 200);
    return () => clearTimeout(t);
  }, [load]);

  const title = (id: string) => state.chats.find((c) => c.id === id)?.title ?? id;

  return (
    <section aria-labelledby="audit-h">
      <div className="section-head">
        <h2 id="audit-h">Audit log</h2>
        <button type="button" className="btn small" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <div className="filters">
        <div className="field inline">
          <label htmlFor="audit-chat">Chat</label>
          <select id="audit-chat" data-testid="audit-filter-chat" value={chatId} onChange={(e) => setChatId(e.target.value)}>
            <option value="">All chats</option>
            {state.chats.map((c) => (
              <option key={c.id} value={c.id}>
                {c.title}
              </option>
            ))}
          </select>
        </div>
        <div className="field inline">
          <label htmlFor="audit-tool">Tool</label>
          <input id="audit-tool" data-testid="audit-filter-tool" value={tool} placeholder="any" onChange={(e) => setTool(e.target.value)} />
        </div>
        <div className="field inline">
          <label htmlFor="audit-decision">Decision</label>
          <select id="audit-decision" data-testid="audit-filter-decision" value={decision} onChange={(e) => setDecision(e.target.value)}>
            <option value="">Any</option>
            <optgroup label="Engine decision">
              <option value="allow">Allow</option>
              <option value="ask">Ask</option>
              <option value="deny">Deny</option>
            </optgroup>
            <optgroup label="Your answer">
              <option value="allow_once">Allowed once</option>
              <option value="allow_session">Allowed for the chat</option>
              <option value="allow_global">Always allowed</option>
              <option value="reject">Rejected</option>
            </optgroup>
          </select>
        </div>
      </div>
      <div className="table-wrap">
        <table className="table" data-testid="audit-list">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Chat</th>
              <th scope="col">Tool</th>
              <th scope="col">Decision</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {entries?.length === 0 && (
              <tr>
                <td colSpan={5} className="muted empty">
                  No entries match. Every permission decision and every answer to an approval is recorded here.
                </td>
              </tr>
            )}
            {entries?.map((e, i) => {
              const isResolution = e.kind === "resolution";
              const verdict = (isResolution ? e.userAction : e.decision) ?? "";
              return (
                <tr key={`${e.timestamp}-${e.toolCallId ?? ""}-${i}`} data-testid="audit-row">
                  <td className="nowrap" title={e.timestamp ? formatTime(e.timestamp) : undefined}>
                    {e.timestamp ? formatShort(e.timestamp) : ""}
                  </td>
                  <td>{e.chatId ? title(e.chatId) : ""}</td>
                  <td>
                    <code>{e.tool ?? ""}</code>
                  </td>
                  <td>
                    <span className={`badge behavior-${verdict}`}>{isResolution ? (ANSWER_LABELS[verdict] ?? verdict) : verdict}</span>
                  </td>
                  <td>
                    {isResolution ? (e.feedback ? `Feedback: ${e.feedback}` : "Answered an approval") : (e.reason ?? "")}
                    {e.reasonCode ? <code className="reason-code">{e.reasonCode}</code> : null}
                    {e.mode ? <span className="muted small"> · mode {e.mode}</span> : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Permissions page: the default mode, rules, the decision simulator, the audit log. */
export function PermissionsView() {
  return (
    <section className="page">
      <header className="page-head">
        <div>
          <h1>Permissions</h1>
          <p className="muted">What the agent may do without asking, and a record of every decision.</p>
        </div>
      </header>
      <DefaultModeSection />
      <RulesSection />
      <ExplainSection />
      <AuditSection />
    </section>
  );
}
