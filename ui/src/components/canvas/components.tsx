// Renderers of the `suzent:canvas/v1` catalog: the A2UI v0.8 standard components plus Suzent's
// extensions (Heading, Stack, Badge, Progress, Table, HtmlFrame). Each puts
// `data-testid="a2ui-<componentId>"` on its root element (on the input element for inputs).
import { useEffect, useRef, useState, type CSSProperties, type KeyboardEvent, type ReactNode } from "react";
import { api, errorMessage } from "../../api";
import { t } from "../../i18n";
import type { BoundValue, Children, Component, JsonValue } from "../../types";
import { Markdown } from "../Markdown";
import { absolutePath, asNumber, asText, childPointer, getAt, resolve } from "./binding";
import { elementId, Node, useSurface, type Scope, type SurfaceCtx } from "./SurfaceView";

/** The properties of the component kind `K`. */
type Props<K extends string> = Component extends infer C ? (C extends { [P in K]: infer V } ? V : never) : never;

const tid = (id: string) => `a2ui-${id}`;

/** The Content-Security-Policy every HtmlFrame document carries (CANVAS.md). */
export const HTML_FRAME_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'";

/** The URI scheme the desktop shell serves staged HtmlFrame documents from (src-tauri/src/frames.rs). */
export const HTML_FRAME_SCHEME = "suzent-frame";

/**
 * The URL of a staged HtmlFrame document: `suzent-frame://localhost/<token>` on Linux and macOS,
 * `http://suzent-frame.localhost/<token>` on Windows and Android (where Tauri maps custom schemes
 * to that form). Like Tauri's `convertFileSrc`, which it uses when the app provides it;
 * `windowsForm` forces one form.
 */
export function htmlFrameUrl(token: string, windowsForm?: boolean): string {
  const internals = (window as { __TAURI_INTERNALS__?: { convertFileSrc?: (path: string, protocol?: string) => string } })
    .__TAURI_INTERNALS__;
  if (windowsForm === undefined && typeof internals?.convertFileSrc === "function") {
    return internals.convertFileSrc(token, HTML_FRAME_SCHEME);
  }
  const http = windowsForm ?? /Windows|Android/i.test(navigator.userAgent);
  const path = encodeURIComponent(token);
  return http ? `http://${HTML_FRAME_SCHEME}.localhost/${path}` : `${HTML_FRAME_SCHEME}://localhost/${path}`;
}

/** The document of an HtmlFrame: the CSP first (the scheme also sends it as a header), then the agent's HTML. */
export function frameDocument(html: string): string {
  return `<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="${HTML_FRAME_CSP}"><meta charset="utf-8"><meta name="color-scheme" content="light dark"><style>body{font-family:system-ui,sans-serif;margin:8px}</style></head><body>${html}</body></html>`;
}

/** Renders children: an explicit list, or a template once per element of a bound array/object. */
function renderChildren(ctx: SurfaceCtx, children: Children | null | undefined, scope: Scope): ReactNode[] {
  if (!children) return [];
  if (children.explicitList) {
    return children.explicitList.map((id, i) => <Node key={`${id}:${i}`} id={id} scope={scope} />);
  }
  if (!children.template) return [];
  const { componentId, dataBinding } = children.template;
  const at = absolutePath(dataBinding, scope.base);
  const items = getAt(ctx.data, at);
  const keys: (string | number)[] = Array.isArray(items)
    ? items.map((_, i) => i)
    : items !== null && typeof items === "object"
      ? Object.keys(items)
      : [];
  return keys.map((k) => <Node key={`${componentId}@${k}`} id={componentId} scope={{ ...scope, base: childPointer(at, k) }} />);
}

const JUSTIFY: Record<string, CSSProperties["justifyContent"]> = {
  start: "flex-start",
  center: "center",
  end: "flex-end",
  spaceBetween: "space-between",
  spaceAround: "space-around",
  spaceEvenly: "space-evenly",
};
const ALIGN: Record<string, CSSProperties["alignItems"]> = {
  start: "flex-start",
  center: "center",
  end: "flex-end",
  stretch: "stretch",
};

function flexStyle(distribution?: string | null, alignment?: string | null): CSSProperties {
  return {
    justifyContent: distribution ? JUSTIFY[distribution] : undefined,
    alignItems: alignment ? ALIGN[alignment] : undefined,
  };
}

/** The absolute pointer an input writes to, or null for a literal-only binding. */
function target(bound: BoundValue | null | undefined, base: string): string | null {
  return bound?.path != null ? absolutePath(bound.path, base) : null;
}

function Text({ id, p, scope }: { id: string; p: Props<"Text">; scope: Scope }) {
  const ctx = useSurface();
  const text = asText(resolve(p.text, ctx.data, scope.base));
  if (scope.inButton) return <span data-testid={tid(id)}>{text}</span>;
  const hint = p.usageHint ?? "body";
  if (/^h[1-5]$/.test(hint)) {
    return (
      <div role="heading" aria-level={Number(hint.slice(1))} className={`a2ui-heading level-${hint.slice(1)}`} data-testid={tid(id)}>
        {text}
      </div>
    );
  }
  return (
    <div className={`a2ui-text${hint === "caption" ? " caption" : ""}`} data-testid={tid(id)}>
      <Markdown text={text} />
    </div>
  );
}

function Heading({ id, p, scope }: { id: string; p: Props<"Heading">; scope: Scope }) {
  const ctx = useSurface();
  const level = Math.min(6, Math.max(1, Math.round(asNumber(p.level, 2))));
  return (
    <div role="heading" aria-level={level} className={`a2ui-heading level-${level}`} data-testid={tid(id)}>
      {asText(resolve(p.text, ctx.data, scope.base))}
    </div>
  );
}

function Image({ id, p, scope }: { id: string; p: Props<"Image">; scope: Scope }) {
  const ctx = useSurface();
  const url = asText(resolve(p.url, ctx.data, scope.base));
  const alt = p.altText ?? "";
  // Only inline images: the webview never fetches what the agent names.
  if (!/^data:image\//i.test(url)) {
    return (
      <span className="a2ui-problem" role="img" aria-label={alt || t("canvas.imageNotShownLabel")} data-testid={tid(id)}>
        {t("canvas.imageNotShown")}
      </span>
    );
  }
  return <img className="a2ui-image" src={url} alt={alt} data-testid={tid(id)} />;
}

function Tabs({ id, p, scope }: { id: string; p: Props<"Tabs">; scope: Scope }) {
  const ctx = useSurface();
  const [active, setActive] = useState(0);
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);
  const items = p.tabItems ?? [];
  const current = Math.min(active, Math.max(0, items.length - 1));
  const base = elementId(ctx, id, scope.base);
  const focus = (i: number) => {
    setActive(i);
    tabs.current[i]?.focus();
  };
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const n = items.length;
    if (n === 0) return;
    let next: number | null = null;
    if (e.key === "ArrowRight") next = (current + 1) % n;
    else if (e.key === "ArrowLeft") next = (current - 1 + n) % n;
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = n - 1;
    if (next !== null) {
      e.preventDefault();
      focus(next);
    }
  };
  return (
    <div className="a2ui-tabs" data-testid={tid(id)}>
      <div role="tablist" className="a2ui-tablist" onKeyDown={onKey}>
        {items.map((t, i) => (
          <button
            key={i}
            ref={(el) => {
              tabs.current[i] = el;
            }}
            type="button"
            role="tab"
            id={`${base}-tab-${i}`}
            aria-selected={i === current}
            aria-controls={`${base}-panel-${i}`}
            tabIndex={i === current ? 0 : -1}
            className={i === current ? "active" : ""}
            onClick={() => setActive(i)}
          >
            {asText(resolve(t.title, ctx.data, scope.base))}
          </button>
        ))}
      </div>
      {items.map((t, i) => (
        <div
          key={i}
          role="tabpanel"
          id={`${base}-panel-${i}`}
          aria-labelledby={`${base}-tab-${i}`}
          className="a2ui-tabpanel"
          tabIndex={0}
          hidden={i !== current}
        >
          {i === current && <Node id={t.child} scope={scope} />}
        </div>
      ))}
    </div>
  );
}

function Button({ id, p, scope }: { id: string; p: Props<"Button">; scope: Scope }) {
  const ctx = useSurface();
  return (
    <button
      type="button"
      className={`btn${p.primary ? " primary" : ""} a2ui-button`}
      data-testid={tid(id)}
      disabled={ctx.sending}
      onClick={() => ctx.press(id, p.action, scope.base)}
    >
      <Node id={p.child} scope={{ ...scope, inButton: true }} />
    </button>
  );
}

function TextField({ id, p, scope }: { id: string; p: Props<"TextField">; scope: Scope }) {
  const ctx = useSurface();
  const [own, setOwn] = useState<string | null>(null);
  const path = target(p.text, scope.base);
  const value = path === null && own !== null ? own : asText(resolve(p.text, ctx.data, scope.base));
  const kind = p.textFieldType ?? "shortText";
  const inputId = elementId(ctx, id, scope.base);
  const onValue = (raw: string) => {
    let v: JsonValue = raw;
    if (kind === "number" && raw.trim() !== "" && Number.isFinite(Number(raw))) v = Number(raw);
    if (path === null) setOwn(raw);
    else ctx.write(path, v);
  };
  const label = asText(resolve(p.label, ctx.data, scope.base));
  return (
    <div className="field a2ui-field">
      <label htmlFor={inputId}>{label}</label>
      {kind === "longText" ? (
        <textarea id={inputId} data-testid={tid(id)} rows={4} value={value} onChange={(e) => onValue(e.target.value)} />
      ) : (
        <input
          id={inputId}
          data-testid={tid(id)}
          type={kind === "number" ? "number" : kind === "date" ? "date" : kind === "obscured" ? "password" : "text"}
          value={value}
          onChange={(e) => onValue(e.target.value)}
        />
      )}
    </div>
  );
}

function CheckBox({ id, p, scope }: { id: string; p: Props<"CheckBox">; scope: Scope }) {
  const ctx = useSurface();
  const [own, setOwn] = useState<boolean | null>(null);
  const path = target(p.value, scope.base);
  const checked = path === null && own !== null ? own : resolve(p.value, ctx.data, scope.base) === true;
  const inputId = elementId(ctx, id, scope.base);
  return (
    <div className="field inline a2ui-check">
      <input
        id={inputId}
        type="checkbox"
        data-testid={tid(id)}
        checked={checked}
        onChange={(e) => (path === null ? setOwn(e.target.checked) : ctx.write(path, e.target.checked))}
      />
      <label htmlFor={inputId}>{asText(resolve(p.label, ctx.data, scope.base))}</label>
    </div>
  );
}

function MultipleChoice({ id, p, scope }: { id: string; p: Props<"MultipleChoice">; scope: Scope }) {
  const ctx = useSurface();
  const [own, setOwn] = useState<string[] | null>(null);
  const path = target(p.selections, scope.base);
  const resolved = resolve(p.selections, ctx.data, scope.base);
  const selected: string[] =
    path === null && own !== null
      ? own
      : Array.isArray(resolved)
        ? resolved.map((v) => asText(v))
        : typeof resolved === "string" && resolved !== ""
          ? [resolved]
          : [];
  const max = p.maxAllowedSelections ?? null;
  const single = max === 1;
  const name = elementId(ctx, id, scope.base);
  const set = (next: string[]) => (path === null ? setOwn(next) : ctx.write(path, next));
  return (
    <div role={single ? "radiogroup" : "group"} className="a2ui-choice" data-testid={tid(id)} aria-label={t("canvas.choices")}>
      {(p.options ?? []).map((o, i) => {
        const optionId = `${name}-${i}`;
        const on = selected.includes(o.value);
        return (
          <div key={o.value} className="field inline">
            <input
              id={optionId}
              type={single ? "radio" : "checkbox"}
              name={name}
              value={o.value}
              data-testid={`${tid(id)}-${o.value}`}
              checked={on}
              disabled={!single && !on && max !== null && selected.length >= max}
              onChange={(e) => {
                if (single) set([o.value]);
                else set(e.target.checked ? [...selected, o.value] : selected.filter((s) => s !== o.value));
              }}
            />
            <label htmlFor={optionId}>{asText(resolve(o.label, ctx.data, scope.base))}</label>
          </div>
        );
      })}
    </div>
  );
}

function Slider({ id, p, scope }: { id: string; p: Props<"Slider">; scope: Scope }) {
  const ctx = useSurface();
  const [own, setOwn] = useState<number | null>(null);
  const min = p.minValue ?? 0;
  const max = p.maxValue ?? 100;
  const path = target(p.value, scope.base);
  const value = path === null && own !== null ? own : asNumber(resolve(p.value, ctx.data, scope.base), min);
  const inputId = elementId(ctx, id, scope.base);
  return (
    <div className="field a2ui-slider">
      <label htmlFor={inputId} className="sr-only">
        {t("canvas.value")}
      </label>
      <div className="a2ui-slider-row">
        <input
          id={inputId}
          type="range"
          data-testid={tid(id)}
          min={min}
          max={max}
          value={value}
          aria-valuemin={min}
          aria-valuemax={max}
          aria-valuenow={value}
          onChange={(e) => (path === null ? setOwn(Number(e.target.value)) : ctx.write(path, Number(e.target.value)))}
        />
        <output htmlFor={inputId}>{value}</output>
      </div>
    </div>
  );
}

function DateTimeInput({ id, p, scope }: { id: string; p: Props<"DateTimeInput">; scope: Scope }) {
  const ctx = useSurface();
  const [own, setOwn] = useState<string | null>(null);
  const enableDate = p.enableDate ?? true;
  const enableTime = p.enableTime ?? false;
  const type = enableDate && enableTime ? "datetime-local" : enableTime ? "time" : "date";
  const path = target(p.value, scope.base);
  const value = path === null && own !== null ? own : asText(resolve(p.value, ctx.data, scope.base));
  const inputId = elementId(ctx, id, scope.base);
  return (
    <div className="field a2ui-field">
      <label htmlFor={inputId}>{type === "time" ? t("canvas.time") : type === "date" ? t("canvas.date") : t("canvas.dateTime")}</label>
      <input
        id={inputId}
        type={type}
        data-testid={tid(id)}
        value={value}
        onChange={(e) => (path === null ? setOwn(e.target.value) : ctx.write(path, e.target.value))}
      />
    </div>
  );
}

function Progress({ id, p, scope }: { id: string; p: Props<"Progress">; scope: Scope }) {
  const ctx = useSurface();
  const max = p.max != null && p.max > 0 ? p.max : 1;
  const value = Math.min(max, Math.max(0, asNumber(resolve(p.value, ctx.data, scope.base), 0)));
  const label = p.label ? asText(resolve(p.label, ctx.data, scope.base)) : "";
  const percent = Math.round((value / max) * 100);
  const labelId = elementId(ctx, id, scope.base, "-label");
  return (
    <div className="a2ui-progress">
      <div className="a2ui-progress-text">
        <span id={labelId}>{label || t("canvas.progress")}</span>
        <span className="muted">{percent}%</span>
      </div>
      <div
        className="a2ui-progress-track"
        role="progressbar"
        data-testid={tid(id)}
        aria-labelledby={labelId}
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={value}
        aria-valuetext={`${percent}%`}
      >
        <div className="a2ui-progress-fill" style={{ width: `${percent}%` }} />
      </div>
    </div>
  );
}

function Table({ id, p, scope }: { id: string; p: Props<"Table">; scope: Scope }) {
  const ctx = useSurface();
  const rows = resolve(p.rows, ctx.data, scope.base);
  const list = Array.isArray(rows) ? rows : [];
  const columns = p.columns ?? [];
  return (
    <div className="table-wrap a2ui-table" data-testid={tid(id)}>
      <table className="table">
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.key} scope="col">
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {list.length === 0 ? (
            <tr>
              <td className="empty muted" colSpan={Math.max(1, columns.length)}>
                {t("canvas.noRows")}
              </td>
            </tr>
          ) : (
            list.map((row, i) => (
              <tr key={i}>
                {columns.map((c) => (
                  <td key={c.key}>
                    {row !== null && typeof row === "object" && !Array.isArray(row) ? asText(row[c.key]) : ""}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

type FrameState = { doc: string } & ({ status: "staging" } | { status: "ready"; url: string } | { status: "error"; message: string });

function HtmlFrame({ id, p, scope }: { id: string; p: Props<"HtmlFrame">; scope: Scope }) {
  const ctx = useSurface();
  const doc = frameDocument(asText(resolve(p.html, ctx.data, scope.base)));
  const [frame, setFrame] = useState<FrameState>({ doc, status: "staging" });
  // The document is served by the shell's `suzent-frame:` scheme with a CSP of its own (a srcdoc
  // frame would inherit the app's CSP, which refuses inline styles); staged again when it changes.
  useEffect(() => {
    let current = true;
    api.stageHtmlFrame(doc).then(
      (token) => current && setFrame({ doc, status: "ready", url: htmlFrameUrl(token) }),
      (e: unknown) => current && setFrame({ doc, status: "error", message: errorMessage(e) }),
    );
    return () => {
      current = false;
    };
  }, [doc]);
  const title = p.title ?? t("canvas.embedded");
  const height = p.height != null ? `${p.height}px` : undefined;
  if (frame.status !== "ready" || frame.doc !== doc) {
    const failed = frame.status === "error" && frame.doc === doc;
    return (
      <div
        className={`a2ui-frame a2ui-frame-placeholder${failed ? " a2ui-frame-error" : ""}`}
        data-testid={tid(id)}
        role={failed ? "alert" : "status"}
        aria-label={title}
        style={{ height }}
      >
        {failed ? t("canvas.frameFailed", { title, error: frame.message }) : t("canvas.framePreparing", { title })}
      </div>
    );
  }
  return (
    <iframe
      className="a2ui-frame"
      data-testid={tid(id)}
      title={title}
      // No scripts, no same-origin access, no forms or popups; the document's CSP blocks the network.
      sandbox=""
      referrerPolicy="no-referrer"
      src={frame.url}
      style={{ height }}
    />
  );
}

const TONES = ["neutral", "info", "success", "warning", "danger"];

/** Renders one component of a surface. */
export function renderComponent(id: string, component: Component, scope: Scope): ReactNode {
  const entries = Object.entries(component) as [string, unknown][];
  if (entries.length !== 1) return <span className="a2ui-problem">component “{id}” has no single kind</span>;
  const [kind, props] = entries[0];
  switch (kind) {
    case "Text":
      return <Text id={id} p={props as Props<"Text">} scope={scope} />;
    case "Heading":
      return <Heading id={id} p={props as Props<"Heading">} scope={scope} />;
    case "Image":
      return <Image id={id} p={props as Props<"Image">} scope={scope} />;
    case "Row":
    case "Column": {
      const p = props as Props<"Row">;
      return (
        <Container id={id} className={`a2ui-${kind.toLowerCase()}`} style={flexStyle(p.distribution, p.alignment)} children={p.children} scope={scope} />
      );
    }
    case "List": {
      const p = props as Props<"List">;
      return <ListView id={id} p={p} scope={scope} />;
    }
    case "Stack":
      return <Container id={id} className="a2ui-stack" children={(props as Props<"Stack">).children} scope={scope} />;
    case "Card":
      return (
        <div className="a2ui-card" data-testid={tid(id)}>
          <Node id={(props as Props<"Card">).child} scope={scope} />
        </div>
      );
    case "Tabs":
      return <Tabs id={id} p={props as Props<"Tabs">} scope={scope} />;
    case "Divider": {
      const axis = (props as Props<"Divider">).axis ?? "horizontal";
      return <div role="separator" aria-orientation={axis} className={`a2ui-divider ${axis}`} data-testid={tid(id)} />;
    }
    case "Button":
      return <Button id={id} p={props as Props<"Button">} scope={scope} />;
    case "TextField":
      return <TextField id={id} p={props as Props<"TextField">} scope={scope} />;
    case "CheckBox":
      return <CheckBox id={id} p={props as Props<"CheckBox">} scope={scope} />;
    case "MultipleChoice":
      return <MultipleChoice id={id} p={props as Props<"MultipleChoice">} scope={scope} />;
    case "Slider":
      return <Slider id={id} p={props as Props<"Slider">} scope={scope} />;
    case "DateTimeInput":
      return <DateTimeInput id={id} p={props as Props<"DateTimeInput">} scope={scope} />;
    case "Badge": {
      const p = props as Props<"Badge">;
      const tone = p.tone && TONES.includes(p.tone) ? p.tone : "neutral";
      return <BadgeView id={id} bound={p.text} tone={tone} scope={scope} />;
    }
    case "Progress":
      return <Progress id={id} p={props as Props<"Progress">} scope={scope} />;
    case "Table":
      return <Table id={id} p={props as Props<"Table">} scope={scope} />;
    case "HtmlFrame":
      return <HtmlFrame id={id} p={props as Props<"HtmlFrame">} scope={scope} />;
    default:
      return (
        <span className="a2ui-problem" role="note" data-testid={tid(id)}>
          unsupported component “{kind}”
        </span>
      );
  }
}

function Container({
  id,
  className,
  style,
  children,
  scope,
}: {
  id: string;
  className: string;
  style?: CSSProperties;
  children: Children;
  scope: Scope;
}) {
  const ctx = useSurface();
  return (
    <div className={className} style={style} data-testid={tid(id)}>
      {renderChildren(ctx, children, scope)}
    </div>
  );
}

function ListView({ id, p, scope }: { id: string; p: Props<"List">; scope: Scope }) {
  const ctx = useSurface();
  const direction = p.direction ?? "vertical";
  return (
    <ul className={`a2ui-list ${direction}`} data-testid={tid(id)}>
      {renderChildren(ctx, p.children, scope).map((child, i) => (
        <li key={i}>{child}</li>
      ))}
    </ul>
  );
}

function BadgeView({ id, bound, tone, scope }: { id: string; bound: BoundValue; tone: string; scope: Scope }) {
  const ctx = useSurface();
  return (
    <span className={`badge a2ui-badge tone-${tone}`} data-testid={tid(id)}>
      {asText(resolve(bound, ctx.data, scope.base))}
    </span>
  );
}
