// A rule's matcher as editable text, read back the way the engine reads rule text
// (crates/suzent-permissions/src/rules.rs `split_rule_words` and `rule_warnings`; the CLI's
// `--rule` takes the same text): prefix words with shell quoting, a `*` inside quotes (or `\*`)
// a literal star; globs, patterns and exact JSON as written.
import type { JsonValue, RuleMatcher } from "./types";

/**
 * Why a path glob would not compile, or `null` when it would: the syntax errors of the engine's
 * glob library (globset 0.4, with `\\` escapes, as `compile_glob` in
 * crates/suzent-permissions/src/rules.rs builds it), found while the user types. The engine
 * checks again when the rule is saved.
 */
export function globProblem(glob: string): string | null {
  const chars = [...glob];
  let depth = 0;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === "\\") {
      if (i + 1 >= chars.length) return "dangling '\\' at the end (write '\\\\' for a backslash)";
      i++;
    } else if (c === "{") {
      if (++depth > 100) return "more than 100 nested '{' groups";
    } else if (c === "}") {
      if (depth === 0) return "'}' without an opening '{' (write '[}]' for a literal brace)";
      depth--;
    } else if (c === "[") {
      let j = i + 1;
      if (chars[j] === "!" || chars[j] === "^") j++;
      let first = true;
      let inRange = false;
      let start: string | null = null;
      let closed = false;
      for (; j < chars.length; j++) {
        const d = chars[j];
        if (d === "]" && !first) {
          closed = true;
          break;
        }
        if (d === "-" && !first && !inRange) {
          inRange = true;
        } else if (d === "[" && !inRange && chars[j + 1] === ":" && chars.slice(j).join("").match(/^\[:[a-z]+:\]/)) {
          j += chars.slice(j).join("").indexOf(":]") + 1;
          start = null;
        } else if (inRange) {
          if (start !== null && d < start) return `invalid range '${start}-${d}' in '[…]' ('${d}' comes before '${start}')`;
          inRange = false;
        } else {
          start = d;
        }
        first = false;
      }
      if (!closed) return "'[' without a closing ']' (write '[[]' for a literal bracket)";
      i = j;
    }
  }
  if (depth > 0) return "'{' without a closing '}' (write '[{]' for a literal brace)";
  return null;
}

/** Splits prefix text into rule words: quotes removed, literal stars (and backslashes) escaped. */
export function splitRuleWords(text: string): { words: string[] } | { error: string } {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  const literal = (c: string) => {
    if (c === "*" || c === "\\") word += "\\";
    word += c;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (/\s/.test(c)) {
      if (inWord) {
        words.push(word);
        word = "";
        inWord = false;
      }
    } else if (c === "'") {
      inWord = true;
      const end = text.indexOf("'", i + 1);
      if (end < 0) return { error: `unterminated single quote in '${text}'` };
      for (const q of text.slice(i + 1, end)) literal(q);
      i = end;
    } else if (c === '"') {
      inWord = true;
      let j = i + 1;
      for (;;) {
        if (j >= text.length) return { error: `unterminated double quote in '${text}'` };
        const d = text[j];
        if (d === '"') break;
        if (d === "\\") {
          const n = text[j + 1];
          if (n === undefined) return { error: `unterminated double quote in '${text}'` };
          if (n === '"' || n === "\\" || n === "$" || n === "`") literal(n);
          else {
            literal("\\");
            literal(n);
          }
          j += 2;
          continue;
        }
        literal(d);
        j++;
      }
      i = j;
    } else if (c === "\\") {
      inWord = true;
      const n = text[i + 1];
      if (n === undefined) literal("\\");
      else {
        literal(n);
        i++;
      }
    } else {
      inWord = true;
      word += c;
    }
  }
  if (inWord) words.push(word);
  return { words };
}

/** One rule word written so that `splitRuleWords` reads it back unchanged. */
export function quoteWord(word: string): string {
  let out = "";
  for (let i = 0; i < word.length; i++) {
    const c = word[i];
    if (c === "\\") {
      const n = word[i + 1];
      if (n === undefined) out += "\\\\";
      else {
        out += "\\" + n;
        i++;
      }
    } else if (c === "*" || /[A-Za-z0-9\-_./=:@%+,]/.test(c)) out += c;
    else out += "\\" + c;
  }
  return out === "" ? "''" : out;
}

/** The editable text of a matcher. */
export function matcherText(m: RuleMatcher): string {
  switch (m.kind) {
    case "all":
      return "";
    case "exact":
      return JSON.stringify(m.input);
    case "prefix":
      return m.words.map(quoteWord).join(" ");
    case "path":
      return m.glob;
    case "destination":
      return m.pattern;
  }
}

/** The matcher of the same kind as `like`, read from edited text; an error names the problem. */
export function parseMatcherText(like: RuleMatcher, text: string): { matcher: RuleMatcher } | { error: string } {
  switch (like.kind) {
    case "all":
      return { matcher: like };
    case "exact": {
      try {
        const input = JSON.parse(text) as JsonValue;
        if (!input || typeof input !== "object" || Array.isArray(input)) return { error: "not a JSON object" };
        return { matcher: { kind: "exact", input } };
      } catch {
        return { error: `'${text}' is not JSON` };
      }
    }
    case "prefix": {
      const r = splitRuleWords(text);
      if ("error" in r) return r;
      if (r.words.length === 0) return { error: "empty prefix" };
      // The engine refuses an empty word (`validate_rule`: `matcher.words[i]: empty word`).
      const empty = r.words.indexOf("");
      if (empty >= 0) return { error: `word ${empty + 1} is empty` };
      return { matcher: { kind: "prefix", words: r.words } };
    }
    case "path": {
      if (!text.trim()) return { error: "empty glob" };
      const problem = globProblem(text);
      return problem ? { error: problem } : { matcher: { kind: "path", glob: text } };
    }
    case "destination":
      if (!text.trim()) return { error: "empty pattern" };
      // As the engine's `validate_pattern`: a destination never holds spaces or control characters.
      if (/[\s\p{Cc}]/u.test(text)) return { error: `'${text}' contains a space or a control character` };
      return { matcher: { kind: "destination", pattern: text } };
  }
}

/** Whether a rule word holds an unescaped `*`. */
function wild(word: string): boolean {
  let escaped = false;
  for (const c of word) {
    if (c === "\\" && !escaped) escaped = true;
    else if (c === "*" && !escaped) return true;
    else escaped = false;
  }
  return false;
}

/**
 * The warning about a prefix whose wildcard stands before its last word, with a command it also
 * covers (the same text as the engine's `rule_warnings`), or null.
 */
export function middleWildcardExample(words: string[]): string | null {
  const last = words.length - 1;
  const i = words.slice(0, Math.max(last, 0)).findIndex(wild);
  if (i < 0) return null;
  return words
    .map((w, k) => {
      const v = k === i && w === "*" ? "--force anything" : wild(w) ? w.replace("*", "-anything-") : w;
      return v.replaceAll("\\*", "*").replaceAll("*", "");
    })
    .join(" ");
}
