// The locale contract: every language has the same keys (plural forms aside), the same
// {{placeholders}} in each string, and every key the code uses exists. A new string goes into
// `src/locales/en/<area>.json` and `src/locales/zh-CN/<area>.json` together, or this fails.
import { describe, expect, it } from "vitest";
import { LANGUAGES, localeResources, matchLanguage } from "../i18n";

type Tree = { [key: string]: string | Tree };

const PLURAL = /_(zero|one|two|few|many|other)$/;

function flatten(tree: Tree, prefix = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(tree)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === "string") out.set(key, v);
    else for (const [k2, v2] of flatten(v, key)) out.set(k2, v2);
  }
  return out;
}

const resources = localeResources();
const flat = Object.fromEntries(LANGUAGES.map((l) => [l, flatten((resources[l] ?? {}) as Tree)])) as Record<string, Map<string, string>>;

/** Keys with plural suffixes folded into their base (`n_one`, `n_other` -> `n`). */
function baseKeys(m: Map<string, string>): Set<string> {
  return new Set([...m.keys()].map((k) => k.replace(PLURAL, "")));
}

function placeholders(s: string): string[] {
  return [...s.matchAll(/\{\{\s*([\w.]+)[^}]*\}\}/g)].map((m) => m[1]).filter((p) => p !== "count").sort();
}

/** A key as the code names it resolves in a language (directly or through its plural forms). */
function resolves(lang: string, key: string): boolean {
  const m = flat[lang];
  return m.has(key) || m.has(`${key}_other`);
}

// The app's sources as text (tests, the generated bindings and the dev mock backend aside).
const SOURCES = Object.entries(
  import.meta.glob<string>(["../**/*.ts", "../**/*.tsx", "!../test/**", "!../bindings.ts", "!../dev/**"], {
    eager: true,
    query: "?raw",
    import: "default",
  }),
).map(([path, text]) => ({ file: path.replace(/^\.\.\//, ""), text }));

/** `t("a.b")`, `translate("a.b")`, `i18n.t("a.b")`, `i18nKey="a.b"` in the app's sources. */
function usedKeys(): { key: string; where: string }[] {
  const out: { key: string; where: string }[] = [];
  for (const { file, text } of SOURCES) {
    for (const m of text.matchAll(/(?:\b(?:t|translate)\(|i18nKey=)\s*(["'`])([^"'`]*)\1/g)) {
      out.push({ key: m[2], where: file });
    }
  }
  return out;
}

/** Calls whose key is not a plain string literal (a template or a variable): they cannot be checked. */
function dynamicKeyCalls(): string[] {
  const out: string[] = [];
  for (const { file, text } of SOURCES) {
    for (const m of text.matchAll(/\b(?:t|translate)\(\s*(?!["'`])([^)\s][^,)]*)/g)) out.push(`${file}: t(${m[1]}`);
    for (const m of text.matchAll(/\b(?:t|translate)\(\s*`[^`]*\$\{/g)) out.push(`${file}: ${m[0]}`);
  }
  return out;
}

describe("locales", () => {
  it("every language has every area file", () => {
    const areas = (lang: string) => Object.keys(resources[lang] ?? {}).sort();
    for (const lang of LANGUAGES) expect(areas(lang)).toEqual(areas("en"));
  });

  it("every key exists in every language", () => {
    const en = baseKeys(flat.en);
    for (const lang of LANGUAGES) {
      const other = baseKeys(flat[lang]);
      expect({ lang, missing: [...en].filter((k) => !other.has(k)), extra: [...other].filter((k) => !en.has(k)) }).toEqual({
        lang,
        missing: [],
        extra: [],
      });
    }
  });

  it("every plural key has its other form in every language", () => {
    for (const lang of LANGUAGES) {
      const bases = [...flat[lang].keys()].filter((k) => PLURAL.test(k)).map((k) => k.replace(PLURAL, ""));
      expect({ lang, without: bases.filter((b) => !flat[lang].has(`${b}_other`)) }).toEqual({ lang, without: [] });
    }
  });

  it("translations keep the placeholders of the English string", () => {
    const mismatched: string[] = [];
    for (const lang of LANGUAGES) {
      for (const [key, text] of flat[lang]) {
        const base = key.replace(PLURAL, "");
        const english = flat.en.get(key) ?? flat.en.get(`${base}_other`) ?? flat.en.get(base);
        if (english === undefined) continue;
        if (JSON.stringify(placeholders(text)) !== JSON.stringify(placeholders(english))) mismatched.push(`${lang} ${key}`);
      }
    }
    expect(mismatched).toEqual([]);
  });

  it("no string is empty", () => {
    const empty = LANGUAGES.flatMap((lang) => [...flat[lang]].filter(([, v]) => v === "").map(([k]) => `${lang} ${k}`));
    expect(empty).toEqual([]);
  });

  it("every key the code uses exists in every language", () => {
    const used = usedKeys();
    expect(used.length).toBeGreaterThan(300);
    const missing = used.flatMap(({ key, where }) => LANGUAGES.filter((l) => !resolves(l, key)).map((l) => `${where}: ${key} (${l})`));
    expect(missing).toEqual([]);
  });

  it("the code names its keys literally, so they can be checked", () => {
    expect(dynamicKeyCalls()).toEqual([]);
  });

  it("system languages map to the closest translation", () => {
    expect([
      matchLanguage(["zh-CN"]),
      matchLanguage(["zh-Hans-CN", "en-US"]),
      matchLanguage(["zh_TW"]),
      matchLanguage(["de-DE", "en-GB"]),
      matchLanguage(["fr-FR"]),
      matchLanguage([]),
    ]).toEqual(["zh-CN", "zh-CN", "zh-CN", "en", "en", "en"]);
  });
});
