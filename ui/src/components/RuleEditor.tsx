import { useId, useState, type FormEvent } from "react";
import type { Behavior, ChatRecord, JsonValue, RuleDestination, RuleDraft, RuleMatcher } from "../types";

type MatcherKind = RuleMatcher["kind"];

export interface RuleEditorProps {
  /** Tool runtime names to suggest. */
  tools: string[];
  chats: ChatRecord[];
  /** Preselected chat for session rules. */
  chatId: string | null;
  onSubmit: (draft: RuleDraft, chatId: string | null) => Promise<void>;
}

interface Form {
  tool: string;
  behavior: Behavior;
  destination: RuleDestination;
  chatId: string;
  kind: MatcherKind;
  exact: string;
  prefix: string;
  glob: string;
  /** Destination pattern (recipient, #channel, owner/repo, agent id, host). */
  pattern: string;
  description: string;
}

type Errors = Partial<Record<"tool" | "chat" | "exact" | "prefix" | "glob" | "pattern", string>>;

/** Checks the form and builds the draft, or says which field is wrong. */
export function validateRule(f: Form): { draft: RuleDraft; chatId: string | null } | { errors: Errors } {
  const errors: Errors = {};
  const tool = f.tool.trim();
  if (!tool) errors.tool = "Tool is required: a runtime name such as write_file, or * for every tool.";
  else if (/\s/.test(tool)) errors.tool = "Tool must be a single name without spaces (e.g. run_command).";
  if (f.destination === "session" && !f.chatId) errors.chat = "Chat is required for a session rule: pick the chat it applies to.";
  let matcher: RuleMatcher = { kind: "all" };
  if (f.kind === "exact") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(f.exact);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
        errors.exact = 'Arguments must be a JSON object, e.g. {"file_path": "notes.txt"}.';
      } else {
        matcher = { kind: "exact", input: parsed as JsonValue };
      }
    } catch (e) {
      errors.exact = `Arguments are not valid JSON (${e instanceof Error ? e.message : String(e)}).`;
    }
  } else if (f.kind === "prefix") {
    const words = f.prefix.trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) errors.prefix = "Command prefix needs at least one word, e.g. git status.";
    else matcher = { kind: "prefix", words };
  } else if (f.kind === "path") {
    const glob = f.glob.trim();
    if (!glob) errors.glob = "Path glob is required, e.g. ~/project/**.";
    else matcher = { kind: "path", glob };
  } else if (f.kind === "destination") {
    const pattern = f.pattern.trim();
    if (!pattern) errors.pattern = "Recipient pattern is required, e.g. *@example.com, #general or octo/*.";
    else if (/\s/.test(pattern))
      errors.pattern = "Recipient pattern must not contain spaces: it matches one address, channel, repository or host.";
    else matcher = { kind: "destination", pattern };
  }
  if (Object.keys(errors).length > 0) return { errors };
  const description = f.description.trim();
  return {
    draft: { tool, behavior: f.behavior, matcher, destination: f.destination, description: description || null },
    chatId: f.destination === "session" ? f.chatId : null,
  };
}

const HELP: Record<MatcherKind, string> = {
  all: "Every call of the tool.",
  exact: "Only calls whose arguments are exactly this JSON object.",
  prefix: "Shell commands whose words start with these words.",
  path: "File paths matching a gitignore-style glob; ~ is your home folder.",
  destination:
    "Who or what a call addresses: e-mail recipients, #channels, chat or agent ids, owner/repo, URL hosts. * matches anything, \\* is a literal star; case does not matter. An allow rule never covers a call whose recipients cannot all be read.",
};

/** Form that adds a permission rule. */
export function RuleEditor({ tools, chats, chatId, onSubmit }: RuleEditorProps) {
  const id = useId();
  const [f, setF] = useState<Form>({
    tool: "",
    behavior: "allow",
    destination: "global",
    chatId: chatId ?? "",
    kind: "all",
    exact: "",
    prefix: "",
    glob: "",
    pattern: "",
    description: "",
  });
  const [errors, setErrors] = useState<Errors>({});
  const [busy, setBusy] = useState(false);
  const set = <K extends keyof Form>(k: K, v: Form[K]) => setF((prev) => ({ ...prev, [k]: v }));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = validateRule(f);
    if ("errors" in r) {
      setErrors(r.errors);
      return;
    }
    setErrors({});
    setBusy(true);
    try {
      await onSubmit(r.draft, r.chatId);
      setF((prev) => ({ ...prev, tool: "", exact: "", prefix: "", glob: "", pattern: "", description: "" }));
    } finally {
      setBusy(false);
    }
  };

  const err = (k: keyof Errors) =>
    errors[k] ? (
      <span className="field-error" id={`${id}-${k}-err`} role="alert">
        {errors[k]}
      </span>
    ) : null;
  const described = (k: keyof Errors) => (errors[k] ? `${id}-${k}-err` : undefined);

  return (
    <form className="card rule-editor" onSubmit={(e) => void submit(e)} noValidate aria-label="Add a rule">
      <h3>Add a rule</h3>
      <div className="grid">
        <div className="field">
          <label htmlFor={`${id}-tool`}>Tool</label>
          <input
            id={`${id}-tool`}
            data-testid="rule-tool"
            list={`${id}-tools`}
            value={f.tool}
            placeholder="write_file or *"
            aria-invalid={!!errors.tool}
            aria-describedby={described("tool")}
            onChange={(e) => set("tool", e.target.value)}
          />
          <datalist id={`${id}-tools`}>
            <option value="*" />
            {tools.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
          {err("tool")}
        </div>
        <div className="field">
          <label htmlFor={`${id}-behavior`}>Behavior</label>
          <select id={`${id}-behavior`} data-testid="rule-behavior" value={f.behavior} onChange={(e) => set("behavior", e.target.value as Behavior)}>
            <option value="allow">Allow</option>
            <option value="ask">Ask</option>
            <option value="deny">Deny</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-dest`}>Applies to</label>
          <select
            id={`${id}-dest`}
            data-testid="rule-destination"
            value={f.destination}
            onChange={(e) => set("destination", e.target.value as RuleDestination)}
          >
            <option value="global">Every chat (global)</option>
            <option value="session">One chat (session)</option>
          </select>
        </div>
        {f.destination === "session" && (
          <div className="field">
            <label htmlFor={`${id}-chat`}>Chat</label>
            <select
              id={`${id}-chat`}
              data-testid="rule-chat"
              value={f.chatId}
              aria-invalid={!!errors.chat}
              aria-describedby={described("chat")}
              onChange={(e) => set("chatId", e.target.value)}
            >
              <option value="">Choose a chat…</option>
              {chats.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.title}
                </option>
              ))}
            </select>
            {err("chat")}
          </div>
        )}
        <div className="field">
          <label htmlFor={`${id}-kind`}>Matches</label>
          <select id={`${id}-kind`} data-testid="rule-matcher-kind" value={f.kind} onChange={(e) => set("kind", e.target.value as MatcherKind)}>
            <option value="all">All calls</option>
            <option value="exact">Exact arguments</option>
            <option value="prefix">Command prefix</option>
            <option value="path">Path glob</option>
            <option value="destination">Recipient / destination</option>
          </select>
          <small className="muted">{HELP[f.kind]}</small>
        </div>
        {f.kind === "exact" && (
          <div className="field wide">
            <label htmlFor={`${id}-exact`}>Arguments (JSON object)</label>
            <textarea
              id={`${id}-exact`}
              data-testid="rule-exact"
              rows={3}
              value={f.exact}
              placeholder='{"file_path": "notes.txt", "content": "hello"}'
              aria-invalid={!!errors.exact}
              aria-describedby={described("exact")}
              onChange={(e) => set("exact", e.target.value)}
            />
            {err("exact")}
          </div>
        )}
        {f.kind === "prefix" && (
          <div className="field wide">
            <label htmlFor={`${id}-prefix`}>Command prefix</label>
            <input
              id={`${id}-prefix`}
              data-testid="rule-prefix"
              value={f.prefix}
              placeholder="git status"
              aria-invalid={!!errors.prefix}
              aria-describedby={described("prefix")}
              onChange={(e) => set("prefix", e.target.value)}
            />
            {err("prefix")}
          </div>
        )}
        {f.kind === "path" && (
          <div className="field wide">
            <label htmlFor={`${id}-glob`}>Path glob</label>
            <input
              id={`${id}-glob`}
              data-testid="rule-path"
              value={f.glob}
              placeholder="~/project/**"
              aria-invalid={!!errors.glob}
              aria-describedby={described("glob")}
              onChange={(e) => set("glob", e.target.value)}
            />
            {err("glob")}
          </div>
        )}
        {f.kind === "destination" && (
          <div className="field wide">
            <label htmlFor={`${id}-pattern`}>Recipient pattern</label>
            <input
              id={`${id}-pattern`}
              data-testid="rule-recipient"
              value={f.pattern}
              placeholder="*@example.com, #general, octo/*, *.example.com"
              aria-invalid={!!errors.pattern}
              aria-describedby={described("pattern")}
              onChange={(e) => set("pattern", e.target.value)}
            />
            {err("pattern")}
          </div>
        )}
        <div className="field wide">
          <label htmlFor={`${id}-desc`}>Description (optional)</label>
          <input
            id={`${id}-desc`}
            data-testid="rule-description"
            value={f.description}
            placeholder="Why this rule exists"
            onChange={(e) => set("description", e.target.value)}
          />
        </div>
      </div>
      <div className="form-actions">
        <button type="submit" className="btn primary" data-testid="rule-add" disabled={busy}>
          Add rule
        </button>
      </div>
    </form>
  );
}
