import { useEffect, useMemo, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { api } from "../api";
import { useStore } from "../store";
import { InlineCode } from "./InlineCode";
import { McpServers } from "./McpServers";
import type { Capability, CatalogTool } from "../types";

/** Whether a catalog capability is an MCP server's toolset (`mcp:SERVER`). */
export const isMcpToolset = (cap: Capability) => cap.id.startsWith("mcp:");

/**
 * An MCP server's toolset in the catalog: its tools are never part of the selection (MCP tools
 * are deferred: the agent activates them with tool_search), so the rows are read-only.
 */
function McpToolset({ cap, activated }: { cap: Capability; activated: Set<string> }) {
  const { t } = useTranslation();
  const server = cap.id.slice("mcp:".length);
  return (
    <section className="card capability mcp-toolset" data-testid={`config-toolset-mcp-${server}`} aria-label={cap.label}>
      <div className="cap-header">
        <span className="cap-title">
          <strong>{cap.label}</strong>
          <span className="muted">
            {t("config.mcpToolCount", { count: cap.tools.length })}
          </span>
        </span>
        {cap.description && <span className="cap-desc">{cap.description}</span>}
      </div>
      <ul className="tool-list">
        {cap.tools.map((tool) => (
          <li key={tool.id}>
            <div className="tool-row" data-testid={`config-mcp-tool-${tool.runtimeName}`}>
              <span className="tool-text">
                <span className="tool-title">
                  <strong>{tool.name}</strong> <code>{tool.runtimeName}</code>
                  {tool.requiresApproval && <span className="badge warn">{t("config.needsApproval")}</span>}
                  {activated.has(tool.runtimeName) && <span className="badge">{t("config.activated")}</span>}
                </span>
                {tool.description && (
                  <span className="muted">
                    <InlineCode text={tool.description} />
                  </span>
                )}
              </span>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

// Legacy selection names that stand for a whole capability (suzent-tools LEGACY_GROUPS): configs
// written before the Shell capability was split still say `ShellTool`.
const LEGACY_GROUPS: Record<string, string> = { ShellTool: "shell", BashTool: "shell", ProcessTool: "shell" };

/** The catalog tools a stored selection names (class names, runtime names or legacy groups). */
export function selectedIds(catalog: Capability[], selection: string[]): Set<string> {
  const out = new Set<string>();
  const names = new Set(selection);
  for (const cap of catalog) {
    const legacy = selection.some((s) => LEGACY_GROUPS[s] === cap.id);
    for (const t of cap.tools) if (legacy || names.has(t.id) || names.has(t.runtimeName)) out.add(t.id);
  }
  return out;
}

/** The selection to save: class names in catalog order, plus names the catalog does not know. */
export function selectionToSave(catalog: Capability[], previous: string[], selected: Set<string>): string[] {
  const known = new Set<string>(Object.keys(LEGACY_GROUPS));
  const out: string[] = [];
  for (const cap of catalog)
    for (const t of cap.tools) {
      known.add(t.id);
      known.add(t.runtimeName);
      if (selected.has(t.id)) out.push(t.id);
    }
  for (const s of previous) if (!known.has(s) && !out.includes(s)) out.push(s);
  return out;
}

function CapabilityHeader({
  cap,
  selected,
  onToggle,
}: {
  cap: Capability;
  selected: Set<string>;
  onToggle: (on: boolean) => void;
}) {
  const { t } = useTranslation();
  const ref = useRef<HTMLInputElement>(null);
  const count = cap.tools.filter((t) => selected.has(t.id)).length;
  const all = count === cap.tools.length && count > 0;
  const partial = count > 0 && !all;
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = partial;
  }, [partial]);
  return (
    <label className="cap-header">
      <input
        ref={ref}
        type="checkbox"
        data-testid={`config-capability-${cap.id}`}
        checked={all}
        aria-checked={partial ? "mixed" : all}
        onChange={() => onToggle(!all)}
      />
      <span className="cap-title">
        <strong>{cap.label}</strong>
        <span className="muted">
          {t("config.selectedCount", { count, total: cap.tools.length })}
        </span>
      </span>
      {cap.description && <span className="cap-desc">{cap.description}</span>}
    </label>
  );
}

function ToolRow({
  tool,
  checked,
  activated,
  onChange,
}: {
  tool: CatalogTool;
  checked: boolean;
  activated: boolean;
  onChange: (on: boolean) => void;
}) {
  const { t } = useTranslation();
  return (
    <li>
      <label className="tool-row">
        <input
          type="checkbox"
          data-testid={`config-tool-${tool.runtimeName}`}
          checked={checked}
          onChange={(e) => onChange(e.target.checked)}
        />
        <span className="tool-text">
          <span className="tool-title">
            <strong>{tool.name}</strong> <code>{tool.runtimeName}</code>
            {tool.requiresApproval && <span className="badge warn">{t("config.needsApproval")}</span>}
            {activated && <span className="badge">{t("config.activated")}</span>}
          </span>
          <span className="muted">
            <InlineCode text={tool.description} />
          </span>
        </span>
      </label>
    </li>
  );
}

interface SaveJob {
  /** The chat to override, or null for the user's default selection. */
  chatId: string | null;
  tools: string[];
}

/**
 * ConfigView: which tools the agent gets, by default or for one chat. Every change is saved at
 * once (save_settings / set_chat_tools), one save at a time, always the newest selection.
 */
export function ConfigView() {
  const { state, dispatch, actions } = useStore();
  const { t } = useTranslation();
  const { catalog, settings, chats } = state;
  // "" = the user's default selection, which every chat without its own selection uses.
  const [scope, setScope] = useState<string>("");
  const chat = chats.find((c) => c.id === scope) ?? null;
  const stored: string[] = useMemo(
    () => (chat ? (chat.tools ?? settings?.tools ?? []) : (settings?.tools ?? [])),
    [chat, settings],
  );
  const [selected, setSelected] = useState<Set<string> | null>(null);
  const [status, setStatus] = useState<"idle" | "saving" | "saved" | "failed">("idle");
  const queue = useRef<{ busy: boolean; next: SaveJob | null }>({ busy: false, next: null });

  // Follow the stored selection (scope change, a save's answer) unless newer changes are queued.
  useEffect(() => {
    if (queue.current.busy || queue.current.next) return;
    setSelected(catalog ? selectedIds(catalog, stored) : null);
  }, [catalog, stored]);

  useEffect(() => setStatus("idle"), [scope]);

  if (!catalog || !settings || !selected) {
    return (
      <section className="page">
        <h1>{t("config.title")}</h1>
        <p className="muted">{t("config.loading")}</p>
      </section>
    );
  }

  const activated = new Set(chat ? (state.activated[chat.id] ?? []) : []);

  const drain = async () => {
    const q = queue.current;
    if (q.busy) return;
    q.busy = true;
    setStatus("saving");
    let failed = false;
    while (q.next) {
      const job = q.next;
      q.next = null;
      try {
        if (job.chatId) dispatch({ type: "chats/upsert", chat: await api.setChatTools(job.chatId, job.tools) });
        else dispatch({ type: "settings/set", settings: await api.saveSettings({ tools: job.tools }) });
        failed = false;
      } catch (e) {
        failed = true;
        actions.reportError(e, t("config.saveFailed"));
      }
    }
    q.busy = false;
    setStatus(failed ? "failed" : "saved");
    // Show what is stored now (after a failure: the last selection that was saved).
    if (failed) setSelected(selectedIds(catalog, stored));
  };

  const setMany = (ids: string[], on: boolean) => {
    const next = new Set(selected);
    for (const id of ids) if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
    queue.current.next = { chatId: chat?.id ?? null, tools: selectionToSave(catalog, stored, next) };
    void drain();
  };

  const resetToDefaults = async () => {
    if (!chat) return;
    try {
      dispatch({ type: "chats/upsert", chat: await api.setChatTools(chat.id, null) });
      setStatus("saved");
    } catch (e) {
      actions.reportError(e, t("config.resetFailed"));
    }
  };

  return (
    <section className="page">
      <header className="page-head">
        <div>
          <h1>{t("config.title")}</h1>
          <p className="muted">{t("config.intro")}</p>
        </div>
        <div className="field inline">
          <label htmlFor="config-scope">{t("config.appliesTo")}</label>
          <select id="config-scope" data-testid="config-scope" value={scope} onChange={(e) => setScope(e.target.value)}>
            <option value="">{t("config.scopeDefault")}</option>
            {chats.map((c) => (
              <option key={c.id} value={c.id}>
                {t("config.scopeChat", { title: c.title })}
              </option>
            ))}
          </select>
        </div>
      </header>
      {chat && (
        <p className="note">
          {chat.tools === null
            ? t("config.usesDefault")
            : t("config.hasOwn")}
        </p>
      )}
      <div className="capabilities">
        {catalog.filter((cap) => !isMcpToolset(cap)).map((cap) => (
          <fieldset key={cap.id} className="card capability">
            <legend className="sr-only">{cap.label}</legend>
            <CapabilityHeader cap={cap} selected={selected} onToggle={(on) => setMany(cap.tools.map((t) => t.id), on)} />
            <ul className="tool-list">
              {cap.tools.map((t) => (
                <ToolRow
                  key={t.id}
                  tool={t}
                  checked={selected.has(t.id)}
                  activated={activated.has(t.runtimeName) || activated.has(t.id)}
                  onChange={(on) => setMany([t.id], on)}
                />
              ))}
            </ul>
          </fieldset>
        ))}
        {catalog.filter(isMcpToolset).map((cap) => (
          <McpToolset key={cap.id} cap={cap} activated={activated} />
        ))}
      </div>
      <footer className="page-actions">
        <span className={status === "failed" ? "field-error" : "muted"} role="status" data-testid="config-status">
          {status === "saving"
            ? t("config.saving")
            : status === "saved"
              ? chat
                ? chat.tools === null
                  ? t("config.savedUsesDefault")
                  : t("config.savedChat")
                : t("config.savedDefault")
              : status === "failed"
                ? t("config.notSaved")
                : t("config.autosave")}
        </span>
        {chat && chat.tools !== null && (
          <button type="button" className="btn" onClick={() => void resetToDefaults()} disabled={status === "saving"}>
            {t("config.useDefaults")}
          </button>
        )}
      </footer>
      <McpServers />
    </section>
  );
}
