import { useCallback, useEffect, useId, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import { t as translate } from "../i18n";
import { api, ApiError, errorMessage } from "../api";
import { describeMatcher, describeRule, formatShort, formatTime, modeExplanation, modeLabel } from "../format";
import { useStore } from "../store";
import type { AuditEntry, Explanation, JsonValue, PermissionMode, Rule, RuleDraft } from "../types";
import { InlineCode } from "./InlineCode";
import { RuleEditor } from "./RuleEditor";

const MODES: PermissionMode[] = ["default", "auto", "full_access"];

function answerLabel(action: string, t: TFunction): string {
  switch (action) {
    case "allow_once":
      return t("permissions.answer.allowOnce");
    case "allow_session":
      return t("permissions.answer.allowSession");
    case "allow_global":
      return t("permissions.answer.allowGlobal");
    case "reject":
      return t("permissions.answer.reject");
    default:
      return action;
  }
}

function behaviorLabel(b: string, t: TFunction): string {
  switch (b) {
    case "allow":
      return t("permissions.behavior.allow");
    case "ask":
      return t("permissions.behavior.ask");
    case "deny":
      return t("permissions.behavior.deny");
    default:
      return b;
  }
}

function RulesSection() {
  const { state, actions } = useStore();
  const { t } = useTranslation();
  const [chatId, setChatId] = useState<string>(state.activeChatId ?? "");
  const [rules, setRules] = useState<Rule[] | null>(null);

  const load = useCallback(async () => {
    try {
      setRules(await api.listRules(chatId || null));
    } catch (e) {
      setRules([]);
      actions.reportError(e, translate("permissions.rulesLoadFailed"));
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
      actions.reportError(e, t("permissions.ruleAddFailed"));
    }
  };

  const remove = async (rule: Rule) => {
    try {
      await api.deleteRule(rule.id);
      setRules((prev) => (prev ?? []).filter((r) => r.id !== rule.id));
    } catch (e) {
      actions.reportError(e, t("permissions.ruleDeleteFailed"));
    }
  };

  const title = (id: string | null | undefined) => state.chats.find((c) => c.id === id)?.title ?? id ?? "";
  const toolNames = (state.catalog ?? []).flatMap((c) => c.tools.map((tool) => tool.runtimeName));

  return (
    <section aria-labelledby="rules-h">
      <div className="section-head">
        <h2 id="rules-h">{t("permissions.rules")}</h2>
        <div className="field inline">
          <label htmlFor="rules-chat">{t("permissions.show")}</label>
          <select id="rules-chat" value={chatId} onChange={(e) => setChatId(e.target.value)}>
            <option value="">{t("permissions.everyRule")}</option>
            {state.chats.map((c) => (
              <option key={c.id} value={c.id}>
                {t("permissions.rulesOf", { title: c.title })}
              </option>
            ))}
          </select>
        </div>
      </div>
      <p className="muted">{t("permissions.precedence")}</p>
      <div className="table-wrap">
        <table className="table" data-testid="rules-list">
          <thead>
            <tr>
              <th scope="col">{t("permissions.col.tool")}</th>
              <th scope="col">{t("permissions.col.behavior")}</th>
              <th scope="col">{t("permissions.col.matches")}</th>
              <th scope="col">{t("permissions.col.scope")}</th>
              <th scope="col">{t("permissions.col.added")}</th>
              <th scope="col">
                <span className="sr-only">{t("permissions.col.actions")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rules === null && (
              <tr>
                <td colSpan={6} className="muted">
                  {t("permissions.loading")}
                </td>
              </tr>
            )}
            {rules?.length === 0 && (
              <tr>
                <td colSpan={6} className="muted empty">
                  {t("permissions.noRules")}
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
                  <span className={`badge behavior-${r.behavior}`}>{behaviorLabel(r.behavior, t)}</span>
                </td>
                <td className="break-any">{describeMatcher(r.matcher)}</td>
                <td>{r.destination === "global" ? t("permissions.global") : t("permissions.chatScope", { title: title(r.chatId) })}</td>
                <td className="nowrap" title={formatTime(r.createdAt)}>
                  {formatShort(r.createdAt)}
                </td>
                <td>
                  <button
                    type="button"
                    className="btn small danger"
                    data-testid="rule-delete"
                    aria-label={t("permissions.deleteRule", { tool: r.tool })}
                    onClick={() => void remove(r)}
                  >
                    {t("permissions.delete")}
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
  const { t } = useTranslation();
  const mode = state.settings?.defaultMode ?? "default";
  const change = async (m: PermissionMode) => {
    try {
      dispatch({ type: "settings/set", settings: await api.saveSettings({ defaultMode: m }) });
    } catch (e) {
      actions.reportError(e, t("permissions.modeSaveFailed"));
    }
  };
  return (
    <section aria-labelledby="mode-h">
      <h2 id="mode-h">{t("permissions.defaultMode")}</h2>
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
            <strong>{modeLabel(m)}</strong>
            <span className="muted">{modeExplanation(m)}</span>
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
    return { error: translate("permissions.argsJson", { error: e instanceof Error ? e.message : String(e) }) };
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { error: translate("permissions.argsObject") };
  }
  return { args: parsed as JsonValue };
}

function sourceLabel(source: string, t: TFunction): string {
  switch (source) {
    case "rule":
      return t("permissions.source.rule");
    case "mode":
      return t("permissions.source.mode");
    case "shell_policy":
      return t("permissions.source.shellPolicy");
    case "path_policy":
      return t("permissions.source.pathPolicy");
    case "tool_default":
      return t("permissions.source.toolDefault");
    case "auto_classifier":
      return t("permissions.source.autoClassifier");
    case "headless":
      return t("permissions.source.headless");
    case "user":
      return t("permissions.source.user");
    default:
      return source;
  }
}

function riskText(risk: string, t: TFunction): string {
  switch (risk) {
    case "low":
      return t("permissions.risk.low");
    case "medium":
      return t("permissions.risk.medium");
    case "high":
      return t("permissions.risk.high");
    default:
      return risk;
  }
}

function ExplanationView({ e }: { e: Explanation }) {
  const { t } = useTranslation();
  return (
    <div className="card explain-result" data-testid="explain-result" aria-live="polite">
      <div className="explain-verdict">
        <span className={`badge behavior-${e.behavior}`} data-testid="explain-behavior">
          {behaviorLabel(e.behavior, t)}
        </span>
        <code className="reason-code" data-testid="explain-reason-code">
          {e.reasonCode}
        </code>
        <span className={`risk risk-${e.risk}`} data-testid="explain-risk">
          {riskText(e.risk, t)}
        </span>
        <span className="muted small">
          {t("permissions.decidedBy", { source: sourceLabel(e.source, t), mode: modeLabel(e.mode) })}
        </span>
      </div>
      <p data-testid="explain-reason">
        <InlineCode text={e.reason} />
      </p>
      {e.reviewerWouldDecide && <p className="note small">{t("permissions.reviewerWould")}</p>}

      <h3>{t("permissions.matchedRules")}</h3>
      {e.matchedRules.length === 0 ? (
        <p className="muted" data-testid="explain-no-rules">
          {t("permissions.noMatch")}
        </p>
      ) : (
        <ul className="explain-list" data-testid="explain-rules">
          {e.matchedRules.map((m) => (
            <li key={m.rule.id} data-testid="explain-rule" data-decisive={m.decisive}>
              <span className={`badge behavior-${m.rule.behavior}`}>{behaviorLabel(m.rule.behavior, t)}</span>{" "}
              {m.decisive && <strong className="decisive">{t("permissions.decides")}</strong>}
              <span>{describeRule(m.rule)}</span> <code className="reason-code">{m.rule.id}</code>
              <div className="muted small">{m.why}</div>
            </li>
          ))}
        </ul>
      )}

      {e.segments.length > 0 && (
        <>
          <h3>{t("permissions.scriptCommands")}</h3>
          {e.understood === false && (
            <p className="note small">{t("permissions.notUnderstood")}</p>
          )}
          {e.compound && <p className="muted small">{t("permissions.compound")}</p>}
          <div className="table-wrap">
            <table className="table" data-testid="explain-segments">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">{t("permissions.col.command")}</th>
                  <th scope="col">{t("permissions.col.verdict")}</th>
                  <th scope="col">{t("permissions.col.why")}</th>
                </tr>
              </thead>
              <tbody>
                {e.segments.map((s, i) => (
                  <tr key={i} data-testid="explain-segment">
                    <td>{i + 1}</td>
                    <td className="break-any">
                      <code>{s.words.join(" ")}</code>
                      {s.wrappers.length > 0 && <div className="muted small">{t("permissions.segment.inside", { wrappers: s.wrappers.join(" › ") })}</div>}
                      {s.assignments.length > 0 && <div className="muted small">{t("permissions.segment.with", { assignments: s.assignments.join(" ") })}</div>}
                      {s.redirects.length > 0 && <div className="muted small">{t("permissions.segment.writes", { redirects: s.redirects.join(", ") })}</div>}
                      {s.nested && <div className="muted small">{t("permissions.segment.nested")}</div>}
                    </td>
                    <td>
                      <span className={`badge behavior-${s.verdict}`}>{behaviorLabel(s.verdict, t)}</span>
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
          <h3>{t("permissions.addressedTo")}</h3>
          <p data-testid="explain-destinations">
            {e.destinations.map((d) => (
              <code key={d} className="destination">
                {d}
              </code>
            ))}
          </p>
          {!e.destinationsComplete && (
            <p className="note small">{t("permissions.destinationsIncomplete")}</p>
          )}
        </>
      )}
    </div>
  );
}

/** The decision simulator: what the engine would decide for a call, and why. Nothing runs. */
function ExplainSection() {
  const { state } = useStore();
  const { t } = useTranslation();
  const id = useId();
  const tools = (state.catalog ?? []).flatMap((c) => c.tools.map((tool) => tool.runtimeName));
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
      setError(t("permissions.toolRequired"));
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
      setError(
        field
          ? t("permissions.explainFailedField", { error: errorMessage(e), field })
          : t("permissions.explainFailed", { error: errorMessage(e) }),
      );
      setArgsInvalid(field === "args");
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="explain-h" data-testid="explain-panel">
      <h2 id="explain-h">{t("permissions.explain")}</h2>
      <p className="muted">{t("permissions.explainIntro")}</p>
      <form className="card" onSubmit={(e) => void submit(e)} noValidate aria-label={t("permissions.explain")}>
        <div className="grid">
          <div className="field">
            <label htmlFor={`${id}-tool`}>{t("permissions.col.tool")}</label>
            <select id={`${id}-tool`} data-testid="explain-tool" value={tool} onChange={(e) => pickTool(e.target.value)}>
              {!tool && <option value="">{t("permissions.chooseTool")}</option>}
              {(state.catalog ?? []).map((c) => (
                <optgroup key={c.id} label={c.label}>
                  {c.tools.map((tool) => (
                    <option key={tool.runtimeName} value={tool.runtimeName}>
                      {tool.runtimeName}
                    </option>
                  ))}
                </optgroup>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={`${id}-mode`}>{t("permissions.mode")}</label>
            <select id={`${id}-mode`} data-testid="explain-mode" value={mode} onChange={(e) => setMode(e.target.value as PermissionMode | "")}>
              <option value="">{chatId ? t("permissions.chatMode") : t("permissions.theDefaultMode")}</option>
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {modeLabel(m)}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={`${id}-chat`}>{t("permissions.col.chat")}</label>
            <select id={`${id}-chat`} data-testid="explain-chat" value={chatId} onChange={(e) => setChatId(e.target.value)}>
              <option value="">{t("permissions.noChat")}</option>
              {state.chats.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.title}
                </option>
              ))}
            </select>
          </div>
          <div className="field wide">
            <label htmlFor={`${id}-args`}>{t("permissions.args")}</label>
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
            {busy ? t("permissions.explaining") : t("permissions.explainRun")}
          </button>
        </div>
      </form>
      {result && <ExplanationView e={result} />}
    </section>
  );
}

function AuditSection() {
  const { state, actions } = useStore();
  const { t } = useTranslation();
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
      actions.reportError(e, translate("permissions.auditFailed"));
    }
  }, [chatId, tool, decision, actions]);

  useEffect(() => {
    const timer = setTimeout(() => void load(), 200);
    return () => clearTimeout(timer);
  }, [load]);

  const title = (id: string) => state.chats.find((c) => c.id === id)?.title ?? id;

  return (
    <section aria-labelledby="audit-h">
      <div className="section-head">
        <h2 id="audit-h">{t("permissions.audit")}</h2>
        <button type="button" className="btn small" onClick={() => void load()}>
          {t("permissions.refresh")}
        </button>
      </div>
      <div className="filters">
        <div className="field inline">
          <label htmlFor="audit-chat">{t("permissions.col.chat")}</label>
          <select id="audit-chat" data-testid="audit-filter-chat" value={chatId} onChange={(e) => setChatId(e.target.value)}>
            <option value="">{t("permissions.allChats")}</option>
            {state.chats.map((c) => (
              <option key={c.id} value={c.id}>
                {c.title}
              </option>
            ))}
          </select>
        </div>
        <div className="field inline">
          <label htmlFor="audit-tool">{t("permissions.col.tool")}</label>
          <input id="audit-tool" data-testid="audit-filter-tool" value={tool} placeholder={t("permissions.anyTool")} onChange={(e) => setTool(e.target.value)} />
        </div>
        <div className="field inline">
          <label htmlFor="audit-decision">{t("permissions.col.decision")}</label>
          <select id="audit-decision" data-testid="audit-filter-decision" value={decision} onChange={(e) => setDecision(e.target.value)}>
            <option value="">{t("permissions.any")}</option>
            <optgroup label={t("permissions.engineDecision")}>
              <option value="allow">{t("permissions.behavior.allow")}</option>
              <option value="ask">{t("permissions.behavior.ask")}</option>
              <option value="deny">{t("permissions.behavior.deny")}</option>
            </optgroup>
            <optgroup label={t("permissions.yourAnswer")}>
              <option value="allow_once">{t("permissions.filter.allowOnce")}</option>
              <option value="allow_session">{t("permissions.filter.allowSession")}</option>
              <option value="allow_global">{t("permissions.filter.allowGlobal")}</option>
              <option value="reject">{t("permissions.filter.reject")}</option>
            </optgroup>
          </select>
        </div>
      </div>
      <div className="table-wrap">
        <table className="table" data-testid="audit-list">
          <thead>
            <tr>
              <th scope="col">{t("permissions.col.when")}</th>
              <th scope="col">{t("permissions.col.chat")}</th>
              <th scope="col">{t("permissions.col.tool")}</th>
              <th scope="col">{t("permissions.col.decision")}</th>
              <th scope="col">{t("permissions.col.why")}</th>
            </tr>
          </thead>
          <tbody>
            {entries?.length === 0 && (
              <tr>
                <td colSpan={5} className="muted empty">
                  {t("permissions.noEntries")}
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
                    <span className={`badge behavior-${verdict}`}>{isResolution ? answerLabel(verdict, t) : behaviorLabel(verdict, t)}</span>
                  </td>
                  <td>
                    {isResolution ? (e.feedback ? t("permissions.feedback", { feedback: e.feedback }) : t("permissions.answered")) : (e.reason ?? "")}
                    {e.reasonCode ? <code className="reason-code">{e.reasonCode}</code> : null}
                    {e.mode ? <span className="muted small"> · {t("permissions.modeIs", { mode: e.mode })}</span> : null}
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
  const { t } = useTranslation();
  return (
    <section className="page">
      <header className="page-head">
        <div>
          <h1>{t("permissions.title")}</h1>
          <p className="muted">{t("permissions.intro")}</p>
        </div>
      </header>
      <DefaultModeSection />
      <RulesSection />
      <ExplainSection />
      <AuditSection />
    </section>
  );
}
