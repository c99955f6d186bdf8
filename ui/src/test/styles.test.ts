// The stylesheet's shape: every rule is closed, and rules nest only inside at-rules (@media,
// @keyframes). A rule left open by a merge turns every later rule into a nested one (CSS
// nesting), which the browser applies to nothing: the speech player and other late sections lost
// their styles that way once.
import css from "../styles.css?raw";
import { describe, expect, it } from "vitest";

/** The blocks of `css` as [line, prelude, depth] with comments and strings removed; throws on a stray `}`. */
function blocks(css: string): { line: number; prelude: string; depth: number }[] {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " ")).replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, (s) => " ".repeat(s.length));
  const open: { line: number; prelude: string }[] = [];
  const out: { line: number; prelude: string; depth: number }[] = [];
  let line = 1;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\n") line++;
    else if (ch === "{") {
      const prelude = text.slice(start, i).split(/[;}]/).pop()!.trim();
      out.push({ line, prelude, depth: open.length });
      open.push({ line, prelude });
      start = i + 1;
    } else if (ch === "}") {
      if (!open.pop()) throw new Error(`a } without its { at line ${line}`);
      start = i + 1;
    } else if (ch === ";") start = i + 1;
  }
  if (open.length) throw new Error(`unclosed: ${open.map((o) => `"${o.prelude}" (line ${o.line})`).join(", ")}`);
  return out;
}

describe("styles.css", () => {
  it("closes every rule and nests rules only inside at-rules", () => {
    const all = blocks(css);
    const parents: string[] = [];
    const nested: string[] = [];
    for (const b of all) {
      parents.length = b.depth;
      const parent = parents[b.depth - 1];
      if (parent !== undefined && !parent.startsWith("@")) nested.push(`"${b.prelude}" (line ${b.line}) inside "${parent}"`);
      parents.push(b.prelude);
    }
    expect(nested).toEqual([]);
  });

  it("finds an unclosed rule and a stray brace", () => {
    expect(() => blocks("a { color: red;\n.b { color: blue; }")).toThrow('unclosed: "a" (line 1)');
    expect(() => blocks("a { color: red; } }")).toThrow("a } without its { at line 1");
  });
});
