import { useCallback, useEffect, useState } from "react";
import { api } from "../api";
import { describeMatcher, formatShort, formatTime, MODE_EXPLANATIONS, MODE_LABELS } from "../format";
import { useStore } from "../store";
import type { AuditEntry, PermissionMode, Rule, RuleDraft } from "../types";
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

/** Permissions page: rules, the default mode, the audit log. */
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
      <AuditSection />
    </section>
  );
}
