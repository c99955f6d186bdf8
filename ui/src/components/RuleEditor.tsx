import { useId, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { t as translate } from "../i18n";
import type { Behavior, ChatRecord, JsonValue, RuleDestination, RuleDraft, RuleMatcher } from "../types";
import { globProblem } from "../ruleText";

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
  const t = translate;
  const errors: Errors = {};
  const tool = f.tool.trim();
  if (!tool) errors.tool = t("ruleEditor.error.toolRequired");
  else if (/\s/.test(tool)) errors.tool = t("ruleEditor.error.toolSpaces");
  if (f.destination === "session" && !f.chatId) errors.chat = t("ruleEditor.error.chatRequired");
  let matcher: RuleMatcher = { kind: "all" };
  if (f.kind === "exact") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(f.exact);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
        errors.exact = t("ruleEditor.error.exactObject");
      } else {
        matcher = { kind: "exact", input: parsed as JsonValue };
      }
    } catch (e) {
      errors.exact = t("ruleEditor.error.exactJson", { error: e instanceof Error ? e.message : String(e) });
    }
  } else if (f.kind === "prefix") {
    const words = f.prefix.trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) errors.prefix = t("ruleEditor.error.prefix");
    else matcher = { kind: "prefix", words };
  } else if (f.kind === "path") {
    const glob = f.glob.trim();
    const problem = glob ? globProblem(glob) : null;
    if (!glob) errors.glob = t("ruleEditor.error.glob");
    else if (problem) errors.glob = t("ruleEditor.error.globSyntax", { error: problem });
    else matcher = { kind: "path", glob };
  } else if (f.kind === "destination") {
    const pattern = f.pattern.trim();
    if (!pattern) errors.pattern = t("ruleEditor.error.patternRequired");
    else if (/\s/.test(pattern)) errors.pattern = t("ruleEditor.error.patternSpaces");
    else matcher = { kind: "destination", pattern };
  }
  if (Object.keys(errors).length > 0) return { errors };
  const description = f.description.trim();
  return {
    draft: { tool, behavior: f.behavior, matcher, destination: f.destination, description: description || null },
    chatId: f.destination === "session" ? f.chatId : null,
  };
}

function matcherHelp(kind: MatcherKind): string {
  const t = translate;
  switch (kind) {
    case "all":
      return t("ruleEditor.help.all");
    case "exact":
      return t("ruleEditor.help.exact");
    case "prefix":
      return t("ruleEditor.help.prefix");
    case "path":
      return t("ruleEditor.help.path");
    case "destination":
      return t("ruleEditor.help.destination");
  }
}

/** Form that adds a permission rule. */
export function RuleEditor({ tools, chats, chatId, onSubmit }: RuleEditorProps) {
  const { t } = useTranslation();
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
    <form className="card rule-editor" onSubmit={(e) => void submit(e)} noValidate aria-label={t("ruleEditor.title")}>
      <h3>{t("ruleEditor.title")}</h3>
      <div className="grid">
        <div className="field">
          <label htmlFor={`${id}-tool`}>{t("ruleEditor.tool")}</label>
          <input
            id={`${id}-tool`}
            data-testid="rule-tool"
            list={`${id}-tools`}
            value={f.tool}
            placeholder={t("ruleEditor.toolPlaceholder")}
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
          <label htmlFor={`${id}-behavior`}>{t("ruleEditor.behavior")}</label>
          <select id={`${id}-behavior`} data-testid="rule-behavior" value={f.behavior} onChange={(e) => set("behavior", e.target.value as Behavior)}>
            <option value="allow">{t("ruleEditor.allow")}</option>
            <option value="ask">{t("ruleEditor.ask")}</option>
            <option value="deny">{t("ruleEditor.deny")}</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-dest`}>{t("ruleEditor.appliesTo")}</label>
          <select
            id={`${id}-dest`}
            data-testid="rule-destination"
            value={f.destination}
            onChange={(e) => set("destination", e.target.value as RuleDestination)}
          >
            <option value="global">{t("ruleEditor.global")}</option>
            <option value="session">{t("ruleEditor.session")}</option>
          </select>
        </div>
        {f.destination === "session" && (
          <div className="field">
            <label htmlFor={`${id}-chat`}>{t("ruleEditor.chat")}</label>
            <select
              id={`${id}-chat`}
              data-testid="rule-chat"
              value={f.chatId}
              aria-invalid={!!errors.chat}
              aria-describedby={described("chat")}
              onChange={(e) => set("chatId", e.target.value)}
            >
              <option value="">{t("ruleEditor.chooseChat")}</option>
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
          <label htmlFor={`${id}-kind`}>{t("ruleEditor.matches")}</label>
          <select id={`${id}-kind`} data-testid="rule-matcher-kind" value={f.kind} onChange={(e) => set("kind", e.target.value as MatcherKind)}>
            <option value="all">{t("ruleEditor.kind.all")}</option>
            <option value="exact">{t("ruleEditor.kind.exact")}</option>
            <option value="prefix">{t("ruleEditor.kind.prefix")}</option>
            <option value="path">{t("ruleEditor.kind.path")}</option>
            <option value="destination">{t("ruleEditor.kind.destination")}</option>
          </select>
          <small className="muted">{matcherHelp(f.kind)}</small>
        </div>
        {f.kind === "exact" && (
          <div className="field wide">
            <label htmlFor={`${id}-exact`}>{t("ruleEditor.exact")}</label>
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
            <label htmlFor={`${id}-prefix`}>{t("ruleEditor.kind.prefix")}</label>
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
            <label htmlFor={`${id}-glob`}>{t("ruleEditor.kind.path")}</label>
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
            <label htmlFor={`${id}-pattern`}>{t("ruleEditor.pattern")}</label>
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
          <label htmlFor={`${id}-desc`}>{t("ruleEditor.description")}</label>
          <input
            id={`${id}-desc`}
            data-testid="rule-description"
            value={f.description}
            placeholder={t("ruleEditor.descriptionPlaceholder")}
            onChange={(e) => set("description", e.target.value)}
          />
        </div>
      </div>
      <div className="form-actions">
        <button type="submit" className="btn primary" data-testid="rule-add" disabled={busy}>
          {t("ruleEditor.add")}
        </button>
      </div>
    </form>
  );
}
