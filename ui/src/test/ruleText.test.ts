import { describe, expect, it } from "vitest";
import { matcherText, middleWildcardExample, parseMatcherText, quoteWord, splitRuleWords, globProblem } from "../ruleText";

// The same rows as crates/suzent-permissions/tests/rule_syntax.rs: the UI reads rule text the
// way the engine and the CLI do.
describe("rule text", () => {
  it("splits prefix text with shell quoting like the engine", () => {
    const rows: [string, string[]][] = [
      ["git status", ["git", "status"]],
      ["git commit -m 'a b'", ["git", "commit", "-m", "a b"]],
      ['echo "x  y" z', ["echo", "x  y", "z"]],
      ["grep 'a*b' *", ["grep", "a\\*b", "*"]],
      ['ls "*"', ["ls", "\\*"]],
      ["ls \\*", ["ls", "\\*"]],
      ["rm -rf *", ["rm", "-rf", "*"]],
      ["echo it\\'s", ["echo", "it's"]],
      ['a"b c"d', ["ab cd"]],
      ["  spaced   out  ", ["spaced", "out"]],
      ["printf '%s\\n'", ["printf", "%s\\\\n"]],
      ["''", [""]],
    ];
    for (const [text, words] of rows) expect(splitRuleWords(text), text).toEqual({ words });
    expect(splitRuleWords("git commit -m 'unterminated")).toEqual({
      error: "unterminated single quote in 'git commit -m 'unterminated'",
    });
  });

  it("writes words so that they read back unchanged", () => {
    for (const words of [["npm", "run", "test", "*"], ["grep", "a\\*b", "x y"], ["echo", "it's", "$HOME"], [""]]) {
      const text = words.map(quoteWord).join(" ");
      expect(splitRuleWords(text), text).toEqual({ words });
    }
  });

  it("reads edited text back into a matcher of the same kind or names the problem", () => {
    expect(parseMatcherText({ kind: "prefix", words: ["x"] }, "npm run 'test' *")).toEqual({
      matcher: { kind: "prefix", words: ["npm", "run", "test", "*"] },
    });
    expect(parseMatcherText({ kind: "path", glob: "/a/**" }, "/w/src/**")).toEqual({ matcher: { kind: "path", glob: "/w/src/**" } });
    expect(parseMatcherText({ kind: "exact", input: {} }, '{"content": "git push"}')).toEqual({
      matcher: { kind: "exact", input: { content: "git push" } },
    });
    expect(parseMatcherText({ kind: "exact", input: {} }, "[1]")).toEqual({ error: "not a JSON object" });
    expect(parseMatcherText({ kind: "prefix", words: ["x"] }, "   ")).toEqual({ error: "empty prefix" });
    expect(matcherText({ kind: "prefix", words: ["grep", "\\*", "*"] })).toBe("grep \\* *");
  });

  it("shows a command that a middle wildcard also covers, as the engine's warning does", () => {
    expect(middleWildcardExample(["git", "*", "main"])).toBe("git --force anything main");
    expect(middleWildcardExample(["docker", "run", "*", "--privileged"])).toBe("docker run --force anything --privileged");
    expect(middleWildcardExample(["npm", "run*", "test"])).toBe("npm run-anything- test");
    for (const quiet of [["git", "status", "*"], ["git", "status"], ["grep", "\\*", "x"]]) {
      expect(middleWildcardExample(quiet)).toBeNull();
    }
  });

  it("refuses what the engine's validate_rule refuses: an empty prefix word, a destination with a space", () => {
    expect(parseMatcherText({ kind: "prefix", words: ["x"] }, "git '' push")).toEqual({ error: "word 2 is empty" });
    expect(parseMatcherText({ kind: "destination", pattern: "x" }, "a b.example.com")).toEqual({
      error: "'a b.example.com' contains a space or a control character",
    });
    expect(parseMatcherText({ kind: "destination", pattern: "x" }, "*.example.com")).toEqual({
      matcher: { kind: "destination", pattern: "*.example.com" },
    });
  });
});

describe("globProblem", () => {
  // The syntax errors of globset 0.4 (its own test cases), which the engine compiles rules with.
  it.each([
    ["[", "'[' without a closing ']'"],
    ["[]", "'[' without a closing ']'"],
    ["[!", "'[' without a closing ']'"],
    ["[!]", "'[' without a closing ']'"],
    ["[z-a]", "invalid range 'z-a'"],
    ["[z--]", "invalid range 'z--'"],
    ["{a,b", "'{' without a closing '}'"],
    ["{a,{b,c}", "'{' without a closing '}'"],
    ["a,b}", "'}' without an opening '{'"],
    ["{a,b}}", "'}' without an opening '{'"],
    ["src/\\", "dangling '\\'"],
  ])("%s is refused", (glob, problem) => {
    expect(globProblem(glob)).toContain(problem);
  });

  it.each(["~/project/**", "src/**/*.{ts,tsx}", "[]]", "[-a]", "[a-]", "[!a-c]x", "[[:alpha:]]", "a\\*b", "{a,{b,c}}", "*.[ch]"])(
    "%s is a glob",
    (glob) => {
      expect(globProblem(glob)).toBeNull();
    },
  );

  it("an edited path rule with a broken glob is refused before it is saved", () => {
    expect(parseMatcherText({ kind: "path", glob: "/w/**" }, "/w/{a,b")).toEqual({ error: "'{' without a closing '}' (write '[{]' for a literal brace)" });
  });
});
