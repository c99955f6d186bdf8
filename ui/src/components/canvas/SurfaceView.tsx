// One canvas surface: its component tree rendered against a local copy of its data model, which
// the inputs write to; a Button resolves its action context and submits it to the agent.
import { createContext, useCallback, useContext, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "../../api";
import { t as translate } from "../../i18n";
import { useStore } from "../../store";
import type { Action, Component, JsonValue, Surface } from "../../types";
import { childPointer, describeValues, getAt, initialiseLiterals, jsonEqual, resolveContext, setAt, type DataModel } from "./binding";
import { renderComponent } from "./components";

/** What every component of a surface reaches through context. */
export interface SurfaceCtx {
  surface: Surface;
  byId: Map<string, Component>;
  data: DataModel;
  /** Writes a value the user entered at an absolute pointer of the local data model. */
  write: (pointer: string, value: JsonValue) => void;
  /** Presses a Button: resolves `action.context` at `base` and sends it. */
  press: (sourceComponentId: string, action: Action, base: string) => void;
  /** An action is being sent (buttons are disabled meanwhile). */
  sending: boolean;
  /** A unique prefix for element ids inside this surface. */
  idPrefix: string;
}

export const SurfaceContext = createContext<SurfaceCtx | null>(null);

export function useSurface(): SurfaceCtx {
  const ctx = useContext(SurfaceContext);
  if (!ctx) throw new Error("canvas component outside a surface");
  return ctx;
}

/** How deep a tree may nest before rendering stops (the backend limits depth to 32 as well). */
const MAX_DEPTH = 40;

/** Rendering position of a node: its template scope and the ids above it (to stop cycles). */
export interface Scope {
  /** Absolute pointer that relative paths resolve against ("" outside templates). */
  base: string;
  /** Ids from the root to here. */
  trail: string[];
  /** Inside a Button: text renders inline. */
  inButton?: boolean;
}

/** Renders the component `id` at `scope`. */
export function Node({ id, scope }: { id: string; scope: Scope }) {
  const ctx = useSurface();
  const component = ctx.byId.get(id);
  if (!component) {
    return (
      <span className="a2ui-problem" role="note">
        {translate("canvas.missingComponent", { id })}
      </span>
    );
  }
  if (scope.trail.includes(id) || scope.trail.length >= MAX_DEPTH) {
    return (
      <span className="a2ui-problem" role="note">
        {translate("canvas.nestedInItself", { id })}
      </span>
    );
  }
  return renderComponent(id, component, { ...scope, trail: [...scope.trail, id] });
}

/** The data model the surface starts from: the stored model plus literal+path initialisations. */
function startingModel(surface: Surface): DataModel {
  const model = surface.dataModel;
  const base: DataModel = model !== null && typeof model === "object" && !Array.isArray(model) ? (model as DataModel) : {};
  return initialiseLiterals(surface.components, base);
}

interface Local {
  version: number;
  /** The model as the backend last sent it (after initialisation). */
  server: DataModel;
  /** The model the components show: `server` plus the user's edits. */
  data: DataModel;
  /** Pointers the user edited since the last sync, with their value. */
  edits: Map<string, JsonValue>;
}

function fresh(surface: Surface): Local {
  const server = startingModel(surface);
  return { version: surface.version, server, data: server, edits: new Map() };
}

/**
 * A new version from the backend replaces the local model, except that what the user typed is
 * kept where the backend did not change that value.
 */
function resync(local: Local, surface: Surface): Local {
  const server = startingModel(surface);
  let data = server;
  const edits = new Map<string, JsonValue>();
  for (const [pointer, value] of local.edits) {
    if (jsonEqual(getAt(local.server, pointer), getAt(server, pointer)) && !jsonEqual(getAt(server, pointer), value)) {
      try {
        data = setAt(data, pointer, value);
        edits.set(pointer, value);
      } catch {
        // The backend changed the shape under this pointer: its value wins.
      }
    }
  }
  return { version: surface.version, server, data, edits };
}

/** The line under a surface after a button press. */
interface SentNote {
  text: string;
  error: boolean;
}

/**
 * A rendered surface with its local data model: its title, its component tree from `root`, and a
 * line saying what the last button press sent (or why it was refused). `onClose` adds a close
 * button (canvas surfaces).
 */
export function SurfaceView({ surface, onClose }: { surface: Surface; onClose?: () => void }) {
  const { actions } = useStore();
  const { t } = useTranslation();
  const [local, setLocal] = useState<Local>(() => fresh(surface));
  const [sending, setSending] = useState(false);
  const [note, setNote] = useState<SentNote | null>(null);

  // Adopt a new version from the backend during render (no flash of the old model).
  let current = local;
  if (local.version !== surface.version) {
    current = resync(local, surface);
    setLocal(current);
  }

  const byId = useMemo(() => new Map(surface.components.map((c) => [c.id, c.component])), [surface.components]);

  const write = useCallback((pointer: string, value: JsonValue) => {
    setLocal((l) => {
      try {
        const edits = new Map(l.edits);
        edits.set(pointer, value);
        return { ...l, data: setAt(l.data, pointer, value), edits };
      } catch {
        return l;
      }
    });
  }, []);

  const data = current.data;
  const press = useCallback(
    (sourceComponentId: string, action: Action, base: string) => {
      const context = resolveContext(action, data, base);
      setSending(true);
      setNote(null);
      void actions
        .submitSurfaceAction(surface.chatId, { surfaceId: surface.surfaceId, name: action.name, sourceComponentId, context })
        .then(
          () => setNote({ text: translate("canvas.sent", { name: action.name, values: describeValues(context) }), error: false }),
          (e: unknown) => setNote({ text: translate("canvas.notSent", { error: errorMessage(e) }), error: true }),
        )
        .finally(() => setSending(false));
    },
    [actions, data, surface.chatId, surface.surfaceId],
  );

  const ctx = useMemo<SurfaceCtx>(
    () => ({ surface, byId, data, write, press, sending, idPrefix: `s-${surface.chatId}-${surface.surfaceId}` }),
    [surface, byId, data, write, press, sending],
  );

  const title = surface.title ?? null;
  const titleId = `${ctx.idPrefix}-title`;
  return (
    <SurfaceContext.Provider value={ctx}>
      <section
        className={`a2ui-surface target-${surface.target}`}
        data-testid={`surface-${surface.surfaceId}`}
        data-version={surface.version}
        aria-labelledby={title ? titleId : undefined}
        aria-label={title ? undefined : t("canvas.surface", { id: surface.surfaceId })}
      >
        {(title || onClose) && (
          <header className="a2ui-surface-head">
            {title && (
              <h2 id={titleId} className="a2ui-surface-title">
                {title}
              </h2>
            )}
            {onClose && (
              <button
                type="button"
                className="icon-btn"
                data-testid={`surface-close-${surface.surfaceId}`}
                aria-label={t("canvas.close", { title: title ?? surface.surfaceId })}
                title={t("canvas.closeTitle")}
                onClick={onClose}
              >
                ×
              </button>
            )}
          </header>
        )}
        <div className="a2ui-body">
          <Node id={surface.root} scope={{ base: "", trail: [] }} />
        </div>
        {note && (
          <p
            className={`a2ui-sent${note.error ? " error" : ""}`}
            data-testid={`surface-sent-${surface.surfaceId}`}
            role={note.error ? "alert" : "status"}
          >
            {note.text}
          </p>
        )}
      </section>
    </SurfaceContext.Provider>
  );
}

/** Element ids of a component inside a surface (unique per template element). */
export function elementId(ctx: SurfaceCtx, componentId: string, base: string, suffix = ""): string {
  const scope = base ? childPointer(base, componentId) : `/${componentId}`;
  return `${ctx.idPrefix}${scope}${suffix}`.replace(/[^A-Za-z0-9_-]/g, "_");
}
