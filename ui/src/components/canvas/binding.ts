// A2UI v0.8 data binding for canvas surfaces: JSON Pointers (RFC 6901) into a surface's data
// model, BoundValues (a literal, a path, or a literal that initialises a path), template scopes
// (relative paths resolve against the array element being rendered) and action contexts.
import type { Action, BoundValue, ComponentEntry, JsonValue } from "../../types";

/** A surface's data model: a JSON object. */
export type DataModel = { [key: string]: JsonValue };

/** The pointer tokens of `pointer` ("" is the whole document; "~1" is "/", "~0" is "~"). */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new Error(`"${pointer}" is not a JSON Pointer (must start with "/")`);
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function escapeToken(token: string): string {
  return token.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Appends one token to a pointer. */
export function childPointer(pointer: string, token: string | number): string {
  return `${pointer}/${escapeToken(String(token))}`;
}

/**
 * The absolute pointer of a binding path: a path starting with "/" is absolute; any other path is
 * relative to `base` (the template element being rendered; "" at the surface's top level).
 */
export function absolutePath(path: string, base: string): string {
  if (path.startsWith("/")) return path;
  const rel = path.replace(/^\.\/?/, "");
  if (rel === "") return base;
  return `${base}/${rel}`;
}

/** The value at `pointer`, or undefined when any step is missing. */
export function getAt(doc: JsonValue | undefined, pointer: string): JsonValue | undefined {
  let cur: JsonValue | undefined = doc;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      cur = cur[Number(token)];
    } else if (cur !== null && typeof cur === "object") {
      cur = Object.prototype.hasOwnProperty.call(cur, token) ? cur[token] : undefined;
    } else {
      return undefined;
    }
    if (cur === undefined) return undefined;
  }
  return cur;
}

function setIn(doc: JsonValue | undefined, tokens: string[], value: JsonValue): JsonValue {
  if (tokens.length === 0) return value;
  const [head, ...rest] = tokens;
  if (Array.isArray(doc)) {
    const copy = doc.slice();
    const index = head === "-" ? copy.length : Number(head);
    if (!Number.isInteger(index) || index < 0) throw new Error(`"${head}" is not an array index`);
    // As RFC 6901 and the backend: an index past the end (other than appending) is an error, so a
    // pointer like /a/500000000 never grows an array.
    if (index > copy.length) throw new Error(`index ${index} is past the end of the array (length ${copy.length})`);
    copy[index] = setIn(copy[index], rest, value);
    return copy;
  }
  const obj: { [key: string]: JsonValue } = doc !== null && typeof doc === "object" ? { ...doc } : {};
  obj[head] = setIn(obj[head], rest, value);
  return obj;
}

/** A copy of `model` with `value` at `pointer` (missing objects on the way are created). */
export function setAt(model: DataModel, pointer: string, value: JsonValue): DataModel {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) {
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : model;
  }
  return setIn(model, tokens, value) as DataModel;
}

/** The literal of a BoundValue, if it has one. */
export function literalOf(bound: BoundValue | null | undefined): JsonValue | undefined {
  if (!bound) return undefined;
  if (bound.literalString != null) return bound.literalString;
  if (bound.literalNumber != null) return bound.literalNumber;
  if (bound.literalBoolean != null) return bound.literalBoolean;
  if (bound.literalArray != null) return bound.literalArray;
  return undefined;
}

/** Resolves a BoundValue: the value at its path (absolute, or relative to `base`), else its literal. */
export function resolve(bound: BoundValue | null | undefined, data: DataModel, base = ""): JsonValue | undefined {
  if (!bound) return undefined;
  if (bound.path != null) {
    const v = getAt(data, absolutePath(bound.path, base));
    if (v !== undefined) return v;
  }
  return literalOf(bound);
}

/** A resolved value shown as text (objects and arrays as JSON). */
export function asText(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/** A resolved value as a finite number, else `fallback`. */
export function asNumber(value: JsonValue | undefined, fallback: number): number {
  const n = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : NaN;
  return Number.isFinite(n) ? n : fallback;
}

/** Every BoundValue in a component's properties (recursively), for literal+path initialisation. */
function boundValuesIn(value: unknown, out: BoundValue[]) {
  if (Array.isArray(value)) {
    for (const v of value) boundValuesIn(v, out);
  } else if (value !== null && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (typeof o.path === "string" && ["literalString", "literalNumber", "literalBoolean", "literalArray"].some((k) => k in o)) {
      out.push(o as BoundValue);
    }
    for (const v of Object.values(o)) boundValuesIn(v, out);
  }
}

/**
 * A2UI "literal + path": the literal initialises the path. Only absolute paths that the model
 * does not have yet are set, so values the user entered (stored on submit) are kept.
 */
export function initialiseLiterals(components: ComponentEntry[], model: DataModel): DataModel {
  const bounds: BoundValue[] = [];
  for (const entry of components) boundValuesIn(entry.component, bounds);
  let out = model;
  for (const b of bounds) {
    const literal = literalOf(b);
    if (b.path == null || !b.path.startsWith("/") || literal === undefined) continue;
    try {
      if (getAt(out, b.path) === undefined) out = setAt(out, b.path, literal);
    } catch {
      // A path through a scalar cannot be initialised; the binding shows the literal instead.
    }
  }
  return out;
}

/** An action's context resolved against the data model: what `submit_surface_action` sends. */
export function resolveContext(action: Action, data: DataModel, base = ""): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {};
  for (const item of action.context ?? []) {
    const v = resolve(item.value, data, base);
    out[item.key] = v === undefined ? null : v;
  }
  return out;
}

/** Deep equality of JSON values. */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  const ao = a as { [key: string]: JsonValue };
  const bo = b as { [key: string]: JsonValue };
  const keys = Object.keys(ao);
  return keys.length === Object.keys(bo).length && keys.every((k) => k in bo && jsonEqual(ao[k], bo[k]));
}

/** A short, readable form of sent values: `{name: "Ada", agree: true}`. */
export function describeValues(values: { [key: string]: JsonValue }): string {
  const parts = Object.entries(values).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
  return `{${parts.join(", ")}}`;
}
