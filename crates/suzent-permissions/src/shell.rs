//! Shell analysis: finds every command a script runs, with tree-sitter-bash.
//!
//! The analyser is conservative: whatever it cannot follow (parse errors, `eval`, a command name
//! that is an expansion, a shell string that is not a literal, a redirect to a computed path)
//! makes [`ShellAnalysis::understood`] false, and callers then ask (fail closed).

use tree_sitter::{Node, Parser};

/// Named node kinds of tree-sitter-bash 0.25 that the walker follows by searching their children
/// (every command inside is found). Any other kind makes the script not understood.
const KNOWN_KINDS: &[&str] = &[
    "ansi_c_string",
    "arithmetic_expansion",
    "array",
    "binary_expression",
    "brace_expression",
    "case_item",
    "compound_statement",
    "concatenation",
    "do_group",
    "elif_clause",
    "else_clause",
    "expansion",
    "extglob_pattern",
    "file_descriptor",
    "file_redirect",
    "heredoc_body",
    "heredoc_content",
    "heredoc_redirect",
    "herestring_redirect",
    "list",
    "negated_command",
    "number",
    "parenthesized_expression",
    "pipeline",
    "postfix_expression",
    "program",
    "raw_string",
    "regex",
    "simple_expansion",
    "special_variable_name",
    "string",
    "string_content",
    "subscript",
    "subshell",
    "ternary_expression",
    "test_operator",
    "translated_string",
    "unary_expression",
    "variable_assignment",
    "variable_assignments",
    "variable_name",
    "word",
];

/// Deepest syntax tree analysed (real scripts stay far below).
const MAX_TREE_DEPTH: usize = 256;

/// Most nested `walk` calls on one thread, over all nested analyses of one script.
const MAX_WALK_LEVEL: usize = 512;

thread_local! {
    static WALK_LEVEL: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether the tree under `root` is deeper than `limit` (iterative: no recursion).
fn deeper_than(root: Node<'_>, limit: usize) -> bool {
    let mut cursor = root.walk();
    let mut depth = 0usize;
    loop {
        if depth > limit {
            return true;
        }
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return false;
            }
            depth -= 1;
        }
    }
}

/// How deep `sh -c '...'` strings, wrappers and substitutions are followed before giving up.
const MAX_NESTING: usize = 16;

/// The commands a script runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShellAnalysis {
    /// Every command, at every nesting, roughly in execution order: commands in substitutions
    /// come before the command that uses their output; inner commands of `xargs`, `find -exec`
    /// and `sh -c` follow the command that runs them.
    pub segments: Vec<CommandSegment>,
    /// More than one command joined by operators, pipes or newlines, or a command substitution,
    /// a control structure, a function definition or a nested shell script (`sh -c`). Inner
    /// commands of `xargs` and `find -exec` alone do not make a script compound.
    pub compound: bool,
    /// False when part of the script could not be analysed; callers must then fail closed.
    pub understood: bool,
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandSegment {
    /// The words after unquoting, with leading assignments and transparent wrappers (`env`,
    /// `sudo`, `timeout`, `nohup`, ...) removed: `words[0]` is the program that runs.
    pub words: Vec<String>,
    /// Leading `VAR=value` assignments (of the command and of an `env` wrapper).
    pub assignments: Vec<String>,
    /// Write-redirect targets as written (`>`, `>>`, `&>`, `>|`, `<>`); `2>&1`, `>&2` and
    /// `/dev/null` are not writes and are not listed.
    pub redirects: Vec<String>,
    /// Wrapper programs this command was found inside, outermost first: transparent wrappers
    /// that were stripped (`sudo`, `timeout`) and programs that run it (`xargs`, `find`, `sh`).
    pub wrappers: Vec<String>,
    /// The words including the transparent wrappers that were stripped (equal to `words` when
    /// there were none). Deny and ask rules match either form.
    pub full_words: Vec<String>,
    /// True for the inner command of `xargs`, `find -exec` or `sh -c`.
    pub nested: bool,
    /// Text fed to the command's standard input by here-documents and here-strings (an
    /// interpreter reads it as code).
    pub input: Vec<String>,
}

/// Analyses a shell script. Never fails: problems show as `understood == false`.
pub fn analyze_command(script: &str) -> ShellAnalysis {
    let mut analysis = ShellAnalysis {
        segments: Vec::new(),
        compound: false,
        understood: true,
    };
    analyze_into(script, &mut analysis, &[], 0, false);
    let primary = analysis.segments.iter().filter(|s| !s.nested).count();
    if primary > 1 {
        analysis.compound = true;
    }
    if analysis.segments.is_empty() && !script.trim().is_empty() && analysis.understood {
        // Only comments or assignments: nothing runs, but say so plainly.
        analysis.compound = false;
    }
    analysis
}

thread_local! {
    /// One bash parser per thread, made once (creating one and loading the grammar costs more
    /// than parsing a typical command).
    static PARSER: std::cell::RefCell<Option<Parser>> = const { std::cell::RefCell::new(None) };
}

/// Parses `script` with this thread's parser (the tree outlives the borrow).
fn parse(script: &str) -> Option<tree_sitter::Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        parser.reset();
        parser.parse(script, None)
    })
}

/// Parses `script` and appends its commands to `out`.
fn analyze_into(
    script: &str,
    out: &mut ShellAnalysis,
    wrappers: &[String],
    depth: usize,
    nested: bool,
) {
    if depth > MAX_NESTING {
        out.understood = false;
        return;
    }
    // tree-sitter-bash 0.25's external scanner crashes (SIGSEGV) on some non-ASCII characters,
    // e.g. `{` followed by U+E018F. Bash treats every non-ASCII character as a word character,
    // so the parser is given a copy where each is replaced by as many `a` bytes as it has; byte
    // offsets stay the same and every text is still read from the original script.
    let ascii: std::borrow::Cow<'_, str> = if script.is_ascii() {
        std::borrow::Cow::Borrowed(script)
    } else {
        std::borrow::Cow::Owned(
            script
                .chars()
                .flat_map(|c| {
                    let n = if c.is_ascii() { 0 } else { c.len_utf8() };
                    let keep = c.is_ascii().then_some(c);
                    keep.into_iter().chain(std::iter::repeat_n('a', n))
                })
                .collect(),
        )
    };
    let Some(tree) = parse(ascii.as_ref()) else {
        out.understood = false;
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        out.understood = false;
    }
    // The walk below recurses along the tree: a script nested deeper than any real one (e.g.
    // thousands of parentheses) is not understood rather than allowed to exhaust the stack.
    if deeper_than(root, MAX_TREE_DEPTH) {
        out.understood = false;
        return;
    }
    let mut walker = Walker {
        src: script.as_bytes(),
        out,
        wrappers,
        depth,
        nested,
        input: Vec::new(),
    };
    walker.walk(root, &[]);
}

struct Walker<'a, 'b> {
    src: &'a [u8],
    out: &'b mut ShellAnalysis,
    wrappers: &'a [String],
    depth: usize,
    nested: bool,
    /// Here-document and here-string text for the next segment pushed.
    input: Vec<String>,
}

impl Walker<'_, '_> {
    fn text(&self, node: Node<'_>) -> String {
        String::from_utf8_lossy(&self.src[node.byte_range()]).into_owned()
    }

    /// Walks any node, emitting a segment for every command found. `redirects` are write
    /// targets that apply to every command inside (from an enclosing `redirected_statement`).
    fn walk(&mut self, node: Node<'_>, redirects: &[String]) {
        // Levels of `walk` on this thread, across nested `sh -c` analyses.
        let level = WALK_LEVEL.with(|l| {
            l.set(l.get() + 1);
            l.get()
        });
        if level > MAX_WALK_LEVEL {
            self.out.understood = false;
        } else {
            self.walk_node(node, redirects);
        }
        WALK_LEVEL.with(|l| l.set(l.get().saturating_sub(1)));
    }

    fn walk_node(&mut self, node: Node<'_>, redirects: &[String]) {
        match node.kind() {
            "command" => self.command(node, redirects),
            "redirected_statement" => {
                let mut targets = redirects.to_vec();
                let mut extra_args = Vec::new();
                let mut cursor = node.walk();
                for child in node.children_by_field_name("redirect", &mut cursor) {
                    self.redirect(child, &mut targets, &mut extra_args);
                }
                match node.child_by_field_name("body") {
                    Some(body) if body.kind() == "command" => {
                        self.command_with(body, &targets, extra_args);
                    }
                    Some(body) => {
                        if !extra_args.is_empty() {
                            self.out.understood = false;
                        }
                        self.walk(body, &targets);
                    }
                    None => {
                        // A bare redirect (`> file`) truncates a file: keep it as a segment.
                        self.push_segment(Vec::new(), Vec::new(), targets);
                    }
                }
            }
            "command_substitution" | "process_substitution" => {
                self.out.compound = true;
                self.walk_children(node, &[]);
            }
            "if_statement"
            | "while_statement"
            | "for_statement"
            | "c_style_for_statement"
            | "case_statement"
            | "function_definition" => {
                self.out.compound = true;
                self.walk_children(node, redirects);
            }
            "declaration_command" | "unset_command" => {
                // `export A=$(...)`: the substitution runs; the builtin itself changes nothing on disk.
                let words = self.plain_words(node);
                self.push_segment(words, Vec::new(), redirects.to_vec());
                self.walk_children(node, &[]);
            }
            "test_command" => {
                let mut words = vec!["[[".to_string()];
                words.extend(self.plain_words(node));
                self.push_segment(words, Vec::new(), redirects.to_vec());
                self.walk_children(node, &[]);
            }
            "ERROR" => {
                self.out.understood = false;
                self.walk_children(node, redirects);
            }
            "comment" | "heredoc_start" | "heredoc_end" => {}
            kind => {
                // A node kind this analyser was not written for (a newer grammar): fail closed.
                if !KNOWN_KINDS.contains(&kind) {
                    self.out.understood = false;
                }
                self.walk_children(node, redirects)
            }
        }
    }

    fn walk_children(&mut self, node: Node<'_>, redirects: &[String]) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.walk(child, redirects);
        }
    }

    fn plain_words(&self, node: Node<'_>) -> Vec<String> {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .map(|c| self.unquote(c).0)
            .collect()
    }

    /// A `file_redirect` / `heredoc_redirect` / `herestring_redirect`: records write targets
    /// and walks substitutions inside. Extra destination words (`echo a > b c`) are arguments.
    fn redirect(
        &mut self,
        node: Node<'_>,
        targets: &mut Vec<String>,
        extra_args: &mut Vec<String>,
    ) {
        match node.kind() {
            "file_redirect" => {
                let mut op = String::new();
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if !child.is_named() {
                        op.push_str(child.kind());
                    }
                }
                let mut cursor = node.walk();
                let dests: Vec<Node<'_>> = node
                    .children_by_field_name("destination", &mut cursor)
                    .collect();
                for (i, dest) in dests.iter().enumerate() {
                    // Substitutions in a destination run too.
                    self.walk(*dest, &[]);
                    let (text, dynamic) = self.unquote(*dest);
                    if i > 0 {
                        extra_args.push(text);
                        continue;
                    }
                    if dest.kind() == "process_substitution" {
                        continue;
                    }
                    let writes = matches!(
                        op.as_str(),
                        ">" | ">>" | "&>" | "&>>" | ">|" | "<>" | ">&" | "&>|"
                    );
                    if !writes {
                        continue;
                    }
                    if op == ">&" && (text == "-" || text.chars().all(|c| c.is_ascii_digit())) {
                        continue; // fd duplication, not a file
                    }
                    if is_harmless_device(&text) {
                        continue;
                    }
                    if dynamic && !is_home_prefixed_only(&text) {
                        self.out.understood = false;
                    }
                    targets.push(text);
                }
            }
            "heredoc_redirect" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    match child.kind() {
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                            self.redirect(child, targets, extra_args)
                        }
                        kind => {
                            self.walk(child, &[]);
                            if kind == "heredoc_body" {
                                let text = self.text(child);
                                self.input.push(text);
                            }
                        }
                    }
                }
            }
            "herestring_redirect" => {
                self.walk(node, &[]);
                let text = self.text(node);
                let text = text.trim_start().trim_start_matches("<<<").trim_start();
                self.input.push(text.to_string());
            }
            _ => self.walk(node, &[]),
        }
    }

    fn command(&mut self, node: Node<'_>, redirects: &[String]) {
        self.command_with(node, redirects, Vec::new());
    }

    fn command_with(&mut self, node: Node<'_>, redirects: &[String], extra_args: Vec<String>) {
        let mut assignments = Vec::new();
        let mut words = Vec::new();
        let mut targets = redirects.to_vec();
        let mut name_dynamic = false;
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "variable_assignment" => {
                    assignments.push(self.unquote(child).0);
                    self.walk_children(child, &[]);
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    let mut extra = Vec::new();
                    self.redirect(child, &mut targets, &mut extra);
                    words.extend(extra);
                }
                "command_name" => {
                    let (text, dynamic) = self.unquote(child);
                    name_dynamic = dynamic;
                    self.walk_children(child, &[]);
                    words.push(text);
                }
                "comment" => {}
                _ => {
                    let (text, _) = self.unquote(child);
                    self.walk(child, &[]);
                    words.push(text);
                }
            }
        }
        words.extend(extra_args);
        if name_dynamic {
            self.out.understood = false;
        }
        self.push_segment(words, assignments, targets);
    }

    /// Unwraps wrappers and pushes the segment (and inner segments).
    fn push_segment(
        &mut self,
        words: Vec<String>,
        assignments: Vec<String>,
        redirects: Vec<String>,
    ) {
        let wrappers = self.wrappers.to_vec();
        let nested = self.nested;
        let input = std::mem::take(&mut self.input);
        emit(
            self.out,
            Emitted {
                words,
                assignments,
                redirects,
                input,
            },
            wrappers,
            nested,
            self.depth,
        );
    }

    /// The unquoted text of a word-like node, and whether it contains an expansion.
    fn unquote(&self, node: Node<'_>) -> (String, bool) {
        match node.kind() {
            "word" | "command_name" if node.named_child_count() == 0 => {
                (unescape_word(&self.text(node)), false)
            }
            "command_name" => match node.named_child(0) {
                Some(child) => self.unquote(child),
                None => (self.text(node), false),
            },
            "raw_string" => {
                let t = self.text(node);
                (
                    t.trim_start_matches('\'')
                        .trim_end_matches('\'')
                        .to_string(),
                    false,
                )
            }
            "ansi_c_string" => {
                let t = self.text(node);
                let inner = t
                    .strip_prefix("$'")
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or(&t);
                (unescape_ansi_c(inner), false)
            }
            "string" | "translated_string" => {
                let t = self.text(node);
                let t = t.strip_prefix('$').unwrap_or(&t);
                let inner = t
                    .strip_prefix('"')
                    .and_then(|s| s.strip_suffix('"'))
                    .unwrap_or(t);
                let dynamic = has_expansion(node);
                (unescape_double_quoted(inner), dynamic)
            }
            "concatenation" => {
                let mut text = String::new();
                let mut dynamic = false;
                let mut cursor = node.walk();
                let mut last_end = node.start_byte();
                for child in node.named_children(&mut cursor) {
                    if child.start_byte() > last_end {
                        text.push_str(&String::from_utf8_lossy(
                            &self.src[last_end..child.start_byte()],
                        ));
                    }
                    let (t, d) = self.unquote(child);
                    text.push_str(&t);
                    dynamic |= d;
                    last_end = child.end_byte();
                }
                if node.end_byte() > last_end {
                    text.push_str(&String::from_utf8_lossy(
                        &self.src[last_end..node.end_byte()],
                    ));
                }
                (text, dynamic)
            }
            "variable_assignment" => (self.text(node), has_expansion(node)),
            "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
            | "brace_expression" => (self.text(node), true),
            _ => (self.text(node), has_expansion(node)),
        }
    }
}

fn has_expansion(node: Node<'_>) -> bool {
    if matches!(
        node.kind(),
        "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
    ) {
        return true;
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    children.into_iter().any(has_expansion)
}

fn unescape_word(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn unescape_double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('"') | Some('\\') | Some('$') | Some('`') => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn unescape_ansi_c(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some(n) => out.push(n),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn is_harmless_device(target: &str) -> bool {
    matches!(
        target,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    ) || target
        .strip_prefix("/dev/fd/")
        .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
}

/// `$HOME/x`, `${HOME}/x`: the only expansions the engine resolves itself.
fn is_home_prefixed_only(target: &str) -> bool {
    let rest = target
        .strip_prefix("$HOME")
        .or_else(|| target.strip_prefix("${HOME}"));
    match rest {
        Some(rest) => {
            (rest.is_empty() || rest.starts_with('/')) && !rest.contains('$') && !rest.contains('`')
        }
        None => false,
    }
}

/// The directory argument of `cd`/`pushd` words (`~` when there is none), options skipped.
pub(crate) fn cd_target(words: &[String]) -> Option<String> {
    let prog = words.first().map(|w| program_name(w))?;
    if !matches!(prog, "cd" | "pushd") {
        return None;
    }
    let mut rest = words[1..]
        .iter()
        .skip_while(|w| matches!(w.as_str(), "-P" | "-L" | "-e" | "-@"));
    match rest.next() {
        Some(w) if w == "--" => Some(rest.next().cloned().unwrap_or_else(|| "~".to_string())),
        Some(w) => Some(w.clone()),
        None => Some("~".to_string()),
    }
}

/// The program name of a word, for wrapper detection: `/usr/bin/env` is `env`.
fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// What a command contributes before its wrappers are unwrapped.
struct Emitted {
    words: Vec<String>,
    assignments: Vec<String>,
    redirects: Vec<String>,
    input: Vec<String>,
}

impl Emitted {
    fn words(words: Vec<String>) -> Emitted {
        Emitted {
            words,
            assignments: Vec::new(),
            redirects: Vec::new(),
            input: Vec::new(),
        }
    }
}

/// Pushes a segment for `words`, unwrapping transparent wrappers and adding inner segments for
/// programs that run other commands.
fn emit(
    out: &mut ShellAnalysis,
    emitted: Emitted,
    mut wrappers: Vec<String>,
    nested: bool,
    depth: usize,
) {
    let Emitted {
        words,
        mut assignments,
        redirects,
        input,
    } = emitted;
    if depth > MAX_NESTING {
        out.understood = false;
        return;
    }
    let full_words = words.clone();
    let mut start = 0;
    // Strip transparent wrappers.
    while let Some(first) = words.get(start) {
        let prog = program_name(first);
        let next = match prog {
            "env" => skip_env(&words, start + 1, &mut assignments, out),
            "sudo" => skip_options(
                &words,
                start + 1,
                &[
                    "-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "-R",
                ],
                out,
            ),
            "doas" => skip_options(&words, start + 1, &["-u", "-C"], out),
            "timeout" => skip_options(
                &words,
                start + 1,
                &["-s", "-k", "--signal", "--kill-after"],
                out,
            )
            .map(|i| i + 1),
            "nohup" | "builtin" | "exec" => skip_options(&words, start + 1, &["-a"], out),
            "nice" => skip_options(&words, start + 1, &["-n", "--adjustment"], out),
            "stdbuf" => skip_options(
                &words,
                start + 1,
                &["-i", "-o", "-e", "--input", "--output", "--error"],
                out,
            ),
            "time" => skip_options(
                &words,
                start + 1,
                &["-f", "-o", "--format", "--output"],
                out,
            ),
            "command" => skip_options(&words, start + 1, &[], out),
            // `busybox rm ...` runs the applet named by its first argument.
            "busybox" | "toybox" => match words.get(start + 1) {
                Some(w) if !w.starts_with('-') => Some(start + 1),
                _ => None,
            },
            "setsid" | "unbuffer" => skip_options(&words, start + 1, &[], out),
            "ionice" => skip_options(
                &words,
                start + 1,
                &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
                out,
            ),
            "taskset" => skip_options(&words, start + 1, &["-c", "--cpu-list"], out).map(|i| {
                // Without `-c`, the first word is the CPU mask.
                if words[start + 1..]
                    .iter()
                    .any(|w| w == "-c" || w.starts_with("--cpu-list"))
                {
                    i
                } else {
                    i + 1
                }
            }),
            "chrt" => skip_options(&words, start + 1, &["-T", "-P", "-D"], out).map(|i| i + 1),
            "eval" => {
                out.understood = false;
                None
            }
            _ => None,
        };
        match next {
            Some(i) if i < words.len() => {
                wrappers.push(prog.to_string());
                start = i;
            }
            _ => break,
        }
    }
    let mut redirects = redirects;
    // `time -o FILE` writes FILE.
    for (i, w) in full_words[..start].iter().enumerate() {
        if (w == "-o" || w == "--output")
            && full_words[..i].iter().any(|p| program_name(p) == "time")
            && let Some(f) = full_words.get(i + 1)
        {
            redirects.push(f.clone());
        }
    }
    let words: Vec<String> = words[start..].to_vec();
    let inner_wrappers = {
        let mut w = wrappers.clone();
        if let Some(first) = words.first() {
            w.push(program_name(first).to_string());
        }
        w
    };
    let prog = words
        .first()
        .map(|w| program_name(w).to_string())
        .unwrap_or_default();
    let is_shell = matches!(
        prog.as_str(),
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish" | "ash" | "mksh"
    );
    // `tee FILE...` writes its file arguments: they are write targets like redirects.
    if prog == "tee" {
        let mut options_done = false;
        for w in words.iter().skip(1) {
            if !options_done && w == "--" {
                options_done = true;
            } else if !options_done && w.starts_with('-') && w.len() > 1 {
                continue;
            } else if !is_harmless_device(w) {
                if (w.contains('$') || w.contains('`')) && !is_home_prefixed_only(w) {
                    out.understood = false;
                }
                redirects.push(w.clone());
            }
        }
    }
    // `cd`/`pushd` change where later relative redirect targets land (see `cd_targets`); a
    // target that cannot be known (`cd -`, an expansion) makes the script not understood.
    if matches!(prog.as_str(), "cd" | "pushd")
        && let Some(target) = cd_target(&words)
        && (target == "-"
            || ((target.contains('$') || target.contains('`')) && !is_home_prefixed_only(&target)))
    {
        out.understood = false;
    }
    out.segments.push(CommandSegment {
        words: words.clone(),
        assignments,
        redirects,
        wrappers: wrappers.clone(),
        full_words,
        nested,
        input,
    });

    // Programs that run other commands.
    if prog == "xargs" {
        if let Some(i) = skip_xargs(&words, 1, out)
            && i < words.len()
        {
            emit(
                out,
                Emitted::words(words[i..].to_vec()),
                inner_wrappers,
                true,
                depth + 1,
            );
        }
    } else if prog == "find" {
        let mut i = 1;
        while i < words.len() {
            if matches!(words[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                let begin = i + 1;
                let mut end = begin;
                while end < words.len() && words[end] != ";" && words[end] != "+" {
                    end += 1;
                }
                if end >= words.len() || end == begin {
                    out.understood = false;
                    break;
                }
                emit(
                    out,
                    Emitted::words(words[begin..end].to_vec()),
                    inner_wrappers.clone(),
                    true,
                    depth + 1,
                );
                i = end + 1;
            } else {
                i += 1;
            }
        }
    } else if is_shell {
        // `sh -c 'script'`, `bash -lc '...'`: the script is analysed as its own commands.
        let mut i = 1;
        let mut script = None;
        while i < words.len() {
            let w = &words[i];
            if w == "--" {
                break;
            }
            if w.starts_with('-') && w.len() > 1 && !w.starts_with("--") {
                if w[1..].contains('c') {
                    script = words.get(i + 1).cloned();
                    break;
                }
                if w == "-o" || w == "-O" {
                    i += 1;
                }
            } else if !w.starts_with("--") {
                break;
            }
            i += 1;
        }
        if let Some(script) = script {
            out.compound = true;
            analyze_into(&script, out, &inner_wrappers, depth + 1, true);
        }
        // `bash script.sh`: runs something we cannot see; the interpreter is never known-safe,
        // so callers ask anyway.
    }
}

/// Skips `env` options and assignments; returns the index of the command, if any.
fn skip_env(
    words: &[String],
    mut i: usize,
    assignments: &mut Vec<String>,
    out: &mut ShellAnalysis,
) -> Option<usize> {
    while i < words.len() {
        let w = &words[i];
        if w == "--" {
            return Some(i + 1);
        }
        if w == "-S"
            || w.starts_with("--split-string")
            || (w.starts_with("-S") && !w.starts_with("--"))
        {
            out.understood = false;
            return None;
        }
        if w == "-u" || w == "-C" || w == "--unset" || w == "--chdir" {
            i += 2;
            continue;
        }
        if w.starts_with('-') {
            i += 1;
            continue;
        }
        if is_assignment(w) {
            assignments.push(w.clone());
            i += 1;
            continue;
        }
        return Some(i);
    }
    None
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Skips options (those in `with_arg` take the next word unless written `--opt=value` or
/// attached `-uroot`); returns the index of the first non-option word.
fn skip_options(
    words: &[String],
    mut i: usize,
    with_arg: &[&str],
    _out: &mut ShellAnalysis,
) -> Option<usize> {
    while i < words.len() {
        let w = words[i].as_str();
        if w == "--" {
            return Some(i + 1);
        }
        if !w.starts_with('-') || w == "-" {
            return Some(i);
        }
        if w.starts_with("--") {
            if w.contains('=') || !with_arg.contains(&w) {
                i += 1;
            } else {
                i += 2;
            }
            continue;
        }
        // Short option; `nice -10` style numbers are options too.
        if with_arg.contains(&w) {
            i += 2;
        } else {
            i += 1;
        }
    }
    None
}

/// Skips `xargs` options; returns the index of the command (none: xargs runs `echo`).
fn skip_xargs(words: &[String], mut i: usize, _out: &mut ShellAnalysis) -> Option<usize> {
    const WITH_ARG: &[&str] = &["-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a"];
    const LONG_WITH_ARG: &[&str] = &[
        "--arg-file",
        "--delimiter",
        "--eof",
        "--replace",
        "--max-lines",
        "--max-args",
        "--max-procs",
        "--max-chars",
        "--process-slot-var",
    ];
    while i < words.len() {
        let w = words[i].as_str();
        if w == "--" {
            return Some(i + 1);
        }
        if !w.starts_with('-') || w == "-" {
            return Some(i);
        }
        if w.starts_with("--") {
            if !w.contains('=') && LONG_WITH_ARG.contains(&w) {
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        if WITH_ARG.contains(&w) {
            i += 2;
        } else {
            // `-I{}`, `-n1`, `-0`, `-r`, `-t`, `-i[R]`, `-l[N]`, `-e[EOF]`.
            i += 1;
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(script: &str) -> Vec<Vec<String>> {
        analyze_command(script)
            .segments
            .into_iter()
            .map(|s| s.words)
            .collect()
    }

    fn w(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_simple_command_is_one_understood_segment() {
        let a = analyze_command("ls -la 'my dir'");
        assert_eq!(a.segments.len(), 1);
        assert_eq!(a.segments[0].words, w(&["ls", "-la", "my dir"]));
        assert!(a.understood);
        assert!(!a.compound);
    }

    #[test]
    fn operators_pipes_background_and_newlines_split_commands() {
        assert_eq!(
            words("git status && rm -rf /x; a || b | c & d\ne"),
            vec![
                w(&["git", "status"]),
                w(&["rm", "-rf", "/x"]),
                w(&["a"]),
                w(&["b"]),
                w(&["c"]),
                w(&["d"]),
                w(&["e"])
            ]
        );
        assert!(analyze_command("a && b").compound);
    }

    #[test]
    fn subshells_groups_and_substitutions_are_searched() {
        assert_eq!(words("(rm -rf x)"), vec![w(&["rm", "-rf", "x"])]);
        assert_eq!(words("{ rm -rf x; }"), vec![w(&["rm", "-rf", "x"])]);
        assert_eq!(
            words("echo $(rm -rf x)"),
            vec![w(&["rm", "-rf", "x"]), w(&["echo", "$(rm -rf x)"])]
        );
        assert_eq!(
            words("echo `rm x`"),
            vec![w(&["rm", "x"]), w(&["echo", "`rm x`"])]
        );
        assert!(analyze_command("echo $(ls)").compound);
    }

    #[test]
    fn leading_assignments_are_separated_from_words() {
        let a = analyze_command("FOO=1 BAR='a b' make test");
        assert_eq!(a.segments[0].words, w(&["make", "test"]));
        assert_eq!(a.segments[0].assignments, w(&["FOO=1", "BAR='a b'"]));
    }

    #[test]
    fn a_script_nested_thousands_deep_is_not_understood_and_does_not_overflow() {
        let deep = format!("{}rm -rf x{}", "(".repeat(5000), ")".repeat(5000));
        assert!(!analyze_command(&deep).understood);
        let subst = format!("{}id{}", "$(echo ".repeat(3000), ")".repeat(3000));
        assert!(!analyze_command(&subst).understood);
        // `sh -c` strings nested deeper than MAX_NESTING are not followed.
        let nested_sh = (0..20).fold("rm -rf x".to_string(), |acc, _| {
            format!("sh -c {}", shell_quote(&acc))
        });
        assert!(nested_sh.len() < 10_000_000);
        assert!(!analyze_command(&nested_sh).understood);
        // An ordinary script is still understood after those.
        assert!(analyze_command("git status && ls").understood);
    }

    /// Quotes with backslashes only (linear growth per level).
    fn shell_quote(s: &str) -> String {
        let mut out = String::with_capacity(s.len() * 2);
        for c in s.chars() {
            if !c.is_ascii_alphanumeric() {
                out.push('\\');
            }
            out.push(c);
        }
        out
    }

    #[test]
    fn non_ascii_text_that_crashes_the_bash_scanner_is_analysed_safely() {
        // `{` + U+E018F segfaulted tree-sitter-bash 0.25's scanner (found by the property tests).
        let a = analyze_command("echo {\u{E018F} && rm -rf x");
        assert!(
            a.segments.iter().any(|s| s.words == w(&["rm", "-rf", "x"])),
            "{a:?}"
        );
        let a = analyze_command("cat 'résumé.txt' > ünïcode/日本.txt");
        assert_eq!(a.segments[0].words, w(&["cat", "résumé.txt"]));
        assert_eq!(a.segments[0].redirects, w(&["ünïcode/日本.txt"]));
    }

    #[test]
    fn a_read_write_redirect_is_a_write_or_not_understood() {
        let a = analyze_command("cat <> /etc/hosts");
        assert!(
            !a.understood || a.segments[0].redirects == vec!["/etc/hosts".to_string()],
            "{a:?}"
        );
        let a = analyze_command("cat 1<> /etc/hosts");
        assert!(
            !a.understood || a.segments[0].redirects == vec!["/etc/hosts".to_string()],
            "{a:?}"
        );
    }

    #[test]
    fn write_redirects_are_listed_and_fd_duplications_are_not() {
        let a = analyze_command("git show > out.txt 2>&1 >>log >/dev/null >&2");
        assert_eq!(a.segments[0].redirects, w(&["out.txt", "log"]));
        assert_eq!(a.segments[0].words, w(&["git", "show"]));
    }

    #[test]
    fn transparent_wrappers_are_stripped() {
        let a = analyze_command("sudo -u root env A=1 timeout -s KILL 10 nice -n 5 nohup rm -rf x");
        assert_eq!(a.segments.len(), 1);
        assert_eq!(a.segments[0].words, w(&["rm", "-rf", "x"]));
        assert_eq!(
            a.segments[0].wrappers,
            w(&["sudo", "env", "timeout", "nice", "nohup"])
        );
        assert_eq!(a.segments[0].assignments, w(&["A=1"]));
    }

    #[test]
    fn xargs_inner_command_is_its_own_segment() {
        let a = analyze_command("echo x | xargs -I{} -0 gh api -X DELETE r/{}");
        assert_eq!(a.segments.len(), 3);
        assert_eq!(
            a.segments[2].words,
            w(&["gh", "api", "-X", "DELETE", "r/{}"])
        );
        assert!(a.segments[2].nested);
    }

    #[test]
    fn find_exec_commands_are_segments_but_not_compound() {
        let a = analyze_command("find . -name '*.rs' -exec grep -n foo {} + -execdir rm {} \\;");
        let ws: Vec<_> = a.segments.iter().map(|s| s.words.clone()).collect();
        assert_eq!(ws[1], w(&["grep", "-n", "foo", "{}"]));
        assert_eq!(ws[2], w(&["rm", "{}"]));
        assert!(!a.compound);
        assert!(a.understood);
    }

    #[test]
    fn shell_c_strings_are_analysed_recursively() {
        let a = analyze_command("find . -exec sh -c 'curl https://example.com && rm -rf y' \\;");
        let ws: Vec<_> = a.segments.iter().map(|s| s.words.clone()).collect();
        assert!(ws.contains(&w(&["curl", "https://example.com"])));
        assert!(ws.contains(&w(&["rm", "-rf", "y"])));
        assert!(a.compound);
        assert!(a.understood);
    }

    #[test]
    fn unbalanced_quotes_and_eval_are_not_understood() {
        assert!(!analyze_command("echo \"unbalanced").understood);
        assert!(!analyze_command("eval \"$X\"").understood);
        assert!(!analyze_command("$CMD -rf x").understood);
        assert!(!analyze_command("echo x > $OUT").understood);
        assert!(analyze_command("echo x > $HOME/out").understood);
    }

    #[test]
    fn heredoc_substitutions_and_redirects_are_found() {
        let a = analyze_command("cat <<EOF > out\nhi $(rm y)\nEOF\nls");
        let ws: Vec<_> = a.segments.iter().map(|s| s.words.clone()).collect();
        assert!(ws.contains(&w(&["rm", "y"])));
        assert!(a.segments.iter().any(|s| s.redirects == w(&["out"])));
    }
}
