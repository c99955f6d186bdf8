//! Path operands of commands that create, change or delete files: one table, one place.
//!
//! `rm`, `mv`, `cp`, `tar -x -C DIR`, ... write to the paths named by some of their arguments.
//! [`write_operands`] lists those arguments for one command segment, each with how far the
//! change reaches ([`Reach::Itself`] for `touch f`, [`Reach::Tree`] for `rm -r d` or a copy
//! into `d`). The engine resolves them like redirect targets ([`resolve_word`]): `~`, `$HOME`,
//! `${HOME}` and other known variables, relative to `cwd` and to every directory an earlier
//! `cd` may have moved to. A word whose value cannot be known (an unknown variable, a command
//! substitution, `~user`) resolves to nothing, and callers count it as outside every root.

use crate::paths::home_dir;
use crate::shell::CommandSegment;
use std::path::{Path, PathBuf};

/// How far a change to an operand reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Only the named path (`touch f`, `mkdir d`, `chmod 600 f`).
    Itself,
    /// The named path and everything under it (`rm -r d`, `mv d x`, a copy or an archive
    /// extracted into `d`, `chmod -R`).
    Tree,
}

/// One path argument a command writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Operand {
    /// The word as written (after unquoting).
    pub word: String,
    /// How far the change reaches.
    pub reach: Reach,
}

/// Splits `args` into positional arguments, skipping options. `short_with_arg` are options
/// that take the next word (or an attached value: `-tDIR`), `long_with_arg` likewise
/// (`--target-directory DIR`; `--x=v` never takes the next word). Returns the positionals and
/// the values of the options (option, value) in order.
fn split_args<'a>(
    args: &'a [String],
    short_with_arg: &[char],
    long_with_arg: &[&str],
) -> (Vec<&'a str>, Vec<(String, &'a str)>) {
    let mut positionals = Vec::new();
    let mut values = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let w = args[i].as_str();
        if options_done || w == "-" || !w.starts_with('-') {
            positionals.push(w);
            i += 1;
            continue;
        }
        if w == "--" {
            options_done = true;
            i += 1;
            continue;
        }
        if let Some(long) = w.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => values.push((format!("--{name}"), value)),
                None if long_with_arg.contains(&long) => {
                    if let Some(v) = args.get(i + 1) {
                        values.push((w.to_string(), v.as_str()));
                    }
                    i += 1;
                }
                None => {}
            }
            i += 1;
            continue;
        }
        // A cluster of short options: the first that takes an argument ends the cluster.
        let cluster: Vec<char> = w[1..].chars().collect();
        let mut consumed_next = false;
        for (k, c) in cluster.iter().enumerate() {
            if short_with_arg.contains(c) {
                let rest: String = cluster[k + 1..].iter().collect();
                if rest.is_empty() {
                    if let Some(v) = args.get(i + 1) {
                        values.push((format!("-{c}"), v.as_str()));
                    }
                    consumed_next = true;
                } else {
                    // Attached value: borrow it from the original word.
                    let start = w.len() - rest.len();
                    values.push((format!("-{c}"), &w[start..]));
                }
                break;
            }
        }
        i += if consumed_next { 2 } else { 1 };
    }
    (positionals, values)
}

/// Whether a short-option cluster (`-rf`) or a long option in `args` sets one of `short` or
/// `long`, before `--`.
fn has_flag(args: &[String], short: &[char], long: &[&str]) -> bool {
    for w in args {
        if w == "--" {
            break;
        }
        if let Some(l) = w.strip_prefix("--") {
            let name = l.split_once('=').map_or(l, |(n, _)| n);
            if long.contains(&name) {
                return true;
            }
        } else if let Some(cluster) = w.strip_prefix('-')
            && cluster.chars().any(|c| short.contains(&c))
        {
            return true;
        }
    }
    false
}

fn op(word: &str, reach: Reach) -> Operand {
    Operand {
        word: word.to_string(),
        reach,
    }
}

fn values_of<'a>(values: &[(String, &'a str)], names: &[&str]) -> Vec<&'a str> {
    values
        .iter()
        .filter(|(n, _)| names.contains(&n.as_str()))
        .map(|(_, v)| *v)
        .collect()
}

/// A `host:path` argument of `scp`/`rsync` (remote, not a local write).
fn is_remote(word: &str) -> bool {
    match word.find(':') {
        Some(i) => !word[..i].contains('/') && i > 0,
        None => false,
    }
}

/// The program of a segment, by basename (`/bin/rm` is `rm`).
fn program(segment: &CommandSegment) -> &str {
    segment
        .words
        .first()
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .unwrap_or("")
}

/// The commands whose path operands [`write_operands`] knows, for documentation and tests.
pub const WRITING_COMMANDS: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "mv",
    "cp",
    "ln",
    "link",
    "touch",
    "mkdir",
    "mkfifo",
    "mknod",
    "chmod",
    "chown",
    "chgrp",
    "chattr",
    "setfacl",
    "truncate",
    "install",
    "rsync",
    "scp",
    "dd",
    "tar",
    "unzip",
    "git clone",
    "git init",
    "git worktree add",
    "sed -i",
    "perl -i",
    "sort -o",
    "curl -o",
    "wget -O",
    "find -delete",
];

/// The path operands `segment` creates, changes or deletes (empty for commands outside the
/// table). `cwd`-implied targets (`tar -x` without `-C`, `unzip` without `-d`, `git clone URL`)
/// are listed as `.` or the derived name.
pub(crate) fn write_operands(segment: &CommandSegment) -> Vec<Operand> {
    let args = segment.words.get(1..).unwrap_or(&[]);
    let prog = program(segment);
    let mut out = Vec::new();
    match prog {
        "rm" => {
            let recursive = has_flag(args, &['r', 'R'], &["recursive"]);
            let (pos, _) = split_args(args, &[], &[]);
            let reach = if recursive {
                Reach::Tree
            } else {
                Reach::Itself
            };
            out.extend(pos.iter().map(|p| op(p, reach)));
        }
        "rmdir" | "unlink" | "mkfifo" => {
            let (pos, _) = split_args(args, &['m'], &["mode"]);
            out.extend(pos.iter().map(|p| op(p, Reach::Itself)));
        }
        "shred" => {
            let (pos, _) = split_args(args, &['n', 's'], &["iterations", "size", "random-source"]);
            out.extend(pos.iter().map(|p| op(p, Reach::Itself)));
        }
        "mknod" => {
            let (pos, _) = split_args(args, &['m', 'Z'], &["mode", "context"]);
            out.extend(pos.first().map(|p| op(p, Reach::Itself)));
        }
        "touch" => {
            let (pos, _) = split_args(args, &['d', 't', 'r'], &["date", "reference", "time"]);
            out.extend(pos.iter().map(|p| op(p, Reach::Itself)));
        }
        "mkdir" => {
            let (pos, _) = split_args(args, &['m', 'Z'], &["mode", "context"]);
            out.extend(pos.iter().map(|p| op(p, Reach::Itself)));
        }
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => {
            let recursive = has_flag(args, &['R'], &["recursive"]);
            let reach = if recursive {
                Reach::Tree
            } else {
                Reach::Itself
            };
            let (short, long): (&[char], &[&str]) = match prog {
                "setfacl" => (
                    &['m', 'x', 'M', 'X'],
                    &["modify", "remove", "set", "set-file"],
                ),
                _ => (&[], &["from"]),
            };
            let (pos, values) = split_args(args, short, long);
            let has_reference = values.iter().any(|(n, _)| n == "--reference");
            // The first positional is the mode or owner (chattr: `+i`, which starts with `+`
            // or `-` and is then not positional).
            let skip = match prog {
                "setfacl" => 0,
                "chattr" => usize::from(pos.first().is_some_and(|p| p.starts_with(['=', '+']))),
                _ => usize::from(!has_reference),
            };
            let skip = if prog == "chmod" && !has_reference {
                // `chmod -w f` puts the mode in an option-looking word.
                usize::from(!args.iter().any(|a| is_symbolic_mode_option(a)))
            } else {
                skip
            };
            out.extend(pos.iter().skip(skip).map(|p| op(p, reach)));
        }
        "truncate" => {
            let (pos, _) = split_args(args, &['s', 'r', 'o'], &["size", "reference"]);
            out.extend(pos.iter().map(|p| op(p, Reach::Itself)));
        }
        "mv" | "cp" | "ln" | "link" | "install" => {
            let (pos, values) = split_args(
                args,
                &['t', 'S', 'm', 'o', 'g', 'b'],
                &[
                    "target-directory",
                    "suffix",
                    "mode",
                    "owner",
                    "group",
                    "backup",
                    "reflink",
                    "sparse",
                    "preserve",
                    "no-preserve",
                    "context",
                ],
            );
            let targets = values_of(&values, &["-t", "--target-directory"]);
            let directories = prog == "install" && has_flag(args, &['d'], &["directory"]);
            if directories {
                out.extend(pos.iter().map(|p| op(p, Reach::Itself)));
            } else if !targets.is_empty() {
                out.extend(targets.iter().map(|t| op(t, Reach::Tree)));
                if prog == "mv" {
                    out.extend(pos.iter().map(|p| op(p, Reach::Tree)));
                }
            } else if let Some((last, rest)) = pos.split_last() {
                if pos.len() == 1 && matches!(prog, "ln" | "link") {
                    // `ln -s TARGET` creates the link in the current directory.
                    out.push(op(".", Reach::Tree));
                } else {
                    out.push(op(last, Reach::Tree));
                }
                if prog == "mv" {
                    out.extend(rest.iter().map(|p| op(p, Reach::Tree)));
                }
            }
        }
        "rsync" | "scp" => {
            let (pos, values) = split_args(
                args,
                &[
                    'e', 'f', 'T', 'M', 'i', 'F', 'c', 'o', 'P', 'l', 'S', 'J', 'D',
                ],
                &[
                    "rsh",
                    "exclude",
                    "include",
                    "filter",
                    "exclude-from",
                    "include-from",
                    "files-from",
                    "log-file",
                    "password-file",
                    "rsync-path",
                    "temp-dir",
                    "partial-dir",
                    "backup-dir",
                    "link-dest",
                    "compare-dest",
                    "copy-dest",
                    "chmod",
                    "chown",
                    "remote-option",
                    "out-format",
                    "suffix",
                ],
            );
            if prog == "rsync" {
                // Directories rsync writes besides the destination.
                for v in values_of(
                    &values,
                    &[
                        "--backup-dir",
                        "--partial-dir",
                        "--temp-dir",
                        "-T",
                        "--log-file",
                    ],
                ) {
                    if !is_remote(v) {
                        out.push(op(v, Reach::Tree));
                    }
                }
                if has_flag(args, &[], &["remove-source-files"]) {
                    let n = pos.len().saturating_sub(1);
                    out.extend(
                        pos.iter()
                            .take(n)
                            .filter(|p| !is_remote(p))
                            .map(|p| op(p, Reach::Tree)),
                    );
                }
            }
            if pos.len() >= 2
                && let Some(last) = pos.last()
                && !is_remote(last)
            {
                out.push(op(last, Reach::Tree));
            }
        }
        "dd" => {
            for a in args {
                if let Some(file) = a.strip_prefix("of=") {
                    out.push(op(file, Reach::Itself));
                }
            }
        }
        "tar" | "bsdtar" | "gtar" => tar_operands(args, &mut out),
        "unzip" => {
            let (_, values) = split_args(args, &['d', 'P'], &[]);
            let dirs = values_of(&values, &["-d"]);
            if dirs.is_empty() {
                out.push(op(".", Reach::Tree));
            } else {
                out.extend(dirs.iter().map(|d| op(d, Reach::Tree)));
            }
        }
        "git" => git_operands(args, &mut out),
        "sed" if has_flag(args, &['i'], &["in-place"]) => {
            let (pos, values) = split_args(args, &['e', 'f', 'l'], &["expression", "file"]);
            let scripts_given = values
                .iter()
                .any(|(n, _)| matches!(n.as_str(), "-e" | "-f" | "--expression" | "--file"));
            let skip = usize::from(!scripts_given);
            out.extend(pos.iter().skip(skip).map(|p| op(p, Reach::Itself)));
        }
        // `perl -pi -e CODE FILES`, `perl -i.bak ...`: in-place edits of the files.
        "perl"
            if args
                .iter()
                .take_while(|a| a.starts_with('-') && a.as_str() != "--")
                .any(|a| {
                    !a.starts_with("--")
                        && a[1..].starts_with(|c: char| c != 'e')
                        && a.contains('i')
                }) =>
        {
            let (pos, values) = split_args(args, &['e', 'E', 'I', 'M', 'm'], &[]);
            let code_given = values.iter().any(|(n, _)| n == "-e" || n == "-E");
            let skip = usize::from(!code_given);
            out.extend(pos.iter().skip(skip).map(|p| op(p, Reach::Itself)));
        }
        "sort" => {
            let (_, values) = split_args(
                args,
                &['o', 'k', 't', 'S', 'T'],
                &[
                    "output",
                    "key",
                    "field-separator",
                    "buffer-size",
                    "temporary-directory",
                ],
            );
            for v in values_of(&values, &["-o", "--output"]) {
                out.push(op(v, Reach::Itself));
            }
        }
        "curl" => {
            let (_, values) = split_args(
                args,
                &[
                    'o', 'D', 'c', 'H', 'd', 'X', 'u', 'A', 'e', 'F', 'T', 'x', 'b', 'm', 'w', 'K',
                    'E', 'r', 'Y', 'y', 'z', 'C', 'U', 'Q', 'P',
                ],
                &[
                    "output",
                    "output-dir",
                    "dump-header",
                    "cookie-jar",
                    "trace",
                    "trace-ascii",
                    "stderr",
                    "etag-save",
                    "header",
                    "data",
                    "request",
                    "user",
                    "user-agent",
                    "referer",
                    "form",
                    "upload-file",
                    "proxy",
                    "cookie",
                    "max-time",
                    "write-out",
                    "config",
                ],
            );
            for v in values_of(
                &values,
                &[
                    "-o",
                    "--output",
                    "--output-dir",
                    "-D",
                    "--dump-header",
                    "-c",
                    "--cookie-jar",
                    "--trace",
                    "--trace-ascii",
                    "--stderr",
                    "--etag-save",
                ],
            ) {
                if v != "-" {
                    out.push(op(v, Reach::Itself));
                }
            }
        }
        "wget" => {
            let (_, values) = split_args(
                args,
                &['O', 'P', 'o', 'a', 'U', 'e', 't', 'T', 'w', 'i', 'B'],
                &[
                    "output-document",
                    "directory-prefix",
                    "output-file",
                    "append-output",
                    "user-agent",
                    "execute",
                    "tries",
                    "timeout",
                    "wait",
                    "input-file",
                    "base",
                    "header",
                ],
            );
            for v in values_of(
                &values,
                &[
                    "-O",
                    "--output-document",
                    "-o",
                    "--output-file",
                    "-a",
                    "--append-output",
                ],
            ) {
                if v != "-" {
                    out.push(op(v, Reach::Itself));
                }
            }
            for v in values_of(&values, &["-P", "--directory-prefix"]) {
                out.push(op(v, Reach::Tree));
            }
        }
        "find" => {
            // `find DIR -delete` deletes under its start directories; `-exec CMD` with a
            // command that is not known to only read may change anything under them.
            let mut changes = args.iter().any(|a| a == "-delete");
            for (i, a) in args.iter().enumerate() {
                if matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let inner = args.get(i + 1).map(|w| w.rsplit('/').next().unwrap_or(w));
                    changes |= !inner.is_some_and(|p| FIND_EXEC_READERS.contains(&p));
                }
            }
            if changes {
                for start in args
                    .iter()
                    .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
                {
                    out.push(op(start, Reach::Tree));
                }
                if !args
                    .first()
                    .is_some_and(|a| !a.starts_with('-') && a != "(" && a != "!")
                {
                    out.push(op(".", Reach::Tree));
                }
            }
        }
        _ => {}
    }
    out
}

/// Programs that `find -exec` may run without changing the tree it walks.
const FIND_EXEC_READERS: &[&str] = &[
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "cat",
    "head",
    "tail",
    "ls",
    "wc",
    "stat",
    "file",
    "echo",
    "printf",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "du",
    "basename",
    "dirname",
    "realpath",
    "test",
];

/// `-w`, `+x`, `-rwx`, `u+w` in `chmod`'s arguments: the mode written as an option.
fn is_symbolic_mode_option(word: &str) -> bool {
    word.len() > 1
        && word.starts_with('-')
        && !word.starts_with("--")
        && word[1..]
            .chars()
            .all(|c| matches!(c, 'r' | 'w' | 'x' | 'X' | 's' | 't'))
        && !word[1..].contains('R')
}

fn tar_operands(args: &[String], out: &mut Vec<Operand>) {
    // Old style: the first word is a cluster of letters without a dash (`tar xzf a.tar`).
    let first_cluster = args
        .first()
        .filter(|a| !a.starts_with('-') && a.chars().all(|c| c.is_ascii_alphabetic()))
        .cloned();
    let mut normalized: Vec<String> = Vec::with_capacity(args.len());
    if let Some(c) = &first_cluster {
        normalized.push(format!("-{c}"));
        normalized.extend(args[1..].iter().cloned());
    } else {
        normalized.extend(args.iter().cloned());
    }
    let extract = has_flag(&normalized, &['x'], &["extract", "get"]);
    let create = has_flag(
        &normalized,
        &['c', 'r', 'u', 'A'],
        &["create", "append", "update", "catenate", "delete"],
    );
    let (_, values) = split_args(
        &normalized,
        &['f', 'C', 'T', 'X', 'b', 'H', 'I', 'K', 'L', 'N', 'V', 'g'],
        &[
            "file",
            "directory",
            "files-from",
            "exclude-from",
            "exclude",
            "blocking-factor",
            "format",
            "use-compress-program",
            "starting-file",
            "tape-length",
            "newer",
            "label",
            "listed-incremental",
            "owner",
            "group",
            "mode",
            "transform",
            "xform",
        ],
    );
    if extract {
        let dirs = values_of(&values, &["-C", "--directory"]);
        if dirs.is_empty() {
            out.push(op(".", Reach::Tree));
        } else {
            out.extend(dirs.iter().map(|d| op(d, Reach::Tree)));
        }
    }
    if create {
        for f in values_of(&values, &["-f", "--file"]) {
            if f != "-" {
                out.push(op(f, Reach::Itself));
            }
        }
    }
}

fn git_operands(args: &[String], out: &mut Vec<Operand>) {
    // Global options before the subcommand.
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.starts_with('-') {
            break;
        }
        if matches!(
            w.as_str(),
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix"
        ) {
            i += 1;
        }
        i += 1;
    }
    let Some(sub) = args.get(i) else { return };
    let rest = &args[i + 1..];
    match sub.as_str() {
        "clone" => {
            let (pos, values) = split_args(
                rest,
                &['b', 'o', 'c', 'j', 'u'],
                &[
                    "branch",
                    "origin",
                    "config",
                    "depth",
                    "jobs",
                    "reference",
                    "reference-if-able",
                    "separate-git-dir",
                    "template",
                    "filter",
                    "shallow-since",
                    "shallow-exclude",
                    "upload-pack",
                    "server-option",
                    "bundle-uri",
                    "recurse-submodules",
                ],
            );
            for v in values_of(&values, &["--separate-git-dir"]) {
                out.push(op(v, Reach::Tree));
            }
            match pos.as_slice() {
                [] => {}
                [url] => {
                    // The directory is named after the repository, in the current directory.
                    let name = url
                        .trim_end_matches('/')
                        .rsplit(['/', ':'])
                        .next()
                        .unwrap_or(url);
                    let name = name.strip_suffix(".git").unwrap_or(name);
                    if !name.is_empty() {
                        out.push(op(name, Reach::Tree));
                    }
                }
                [_, dir, ..] => out.push(op(dir, Reach::Tree)),
            }
        }
        "init" => {
            let (pos, values) = split_args(
                rest,
                &['b'],
                &[
                    "template",
                    "separate-git-dir",
                    "initial-branch",
                    "object-format",
                    "shared",
                ],
            );
            for v in values_of(&values, &["--separate-git-dir"]) {
                out.push(op(v, Reach::Tree));
            }
            out.extend(pos.first().map(|d| op(d, Reach::Tree)));
        }
        "worktree" if rest.first().is_some_and(|w| w == "add") => {
            let (pos, _) = split_args(&rest[1..], &['b', 'B'], &["reason"]);
            out.extend(pos.first().map(|d| op(d, Reach::Tree)));
        }
        _ => {}
    }
}

/// What one word means as a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WordPaths {
    /// The absolute paths it may refer to (one per base for a relative word), not yet resolved
    /// through symlinks. For a glob, the directory where its literal part ends.
    Known { paths: Vec<PathBuf>, glob: bool },
    /// An expansion the engine cannot know (`$DIR`, `$(cmd)`, `~user`).
    Unknown,
}

/// Variables whose value the engine knows: the home directory, the current directory, and the
/// directories Suzent itself is configured by (from this process's environment, which commands
/// inherit).
fn known_variable(name: &str, base: &Path) -> Option<PathBuf> {
    match name {
        "HOME" => home_dir(),
        "PWD" => Some(base.to_path_buf()),
        "XDG_CONFIG_HOME" | "XDG_DATA_HOME" | "XDG_STATE_HOME" | "XDG_CACHE_HOME"
        | "SUZENT_HOME" | "TMPDIR" | "USERPROFILE" | "APPDATA" | "LOCALAPPDATA" => {
            match std::env::var_os(name).filter(|v| !v.is_empty()) {
                Some(v) => Some(PathBuf::from(v)),
                // Unset XDG variables default to the standard folders under the home.
                None => match name {
                    "XDG_CONFIG_HOME" => home_dir().map(|h| h.join(".config")),
                    "XDG_DATA_HOME" => home_dir().map(|h| h.join(".local/share")),
                    "XDG_STATE_HOME" => home_dir().map(|h| h.join(".local/state")),
                    "XDG_CACHE_HOME" => home_dir().map(|h| h.join(".cache")),
                    "TMPDIR" => Some(PathBuf::from("/tmp")),
                    _ => None,
                },
            }
        }
        _ => None,
    }
}

/// Substitutes known variables (`$HOME`, `${HOME}`, ...) in `word`; None when an expansion is
/// left that cannot be known.
fn substitute(word: &str, base: &Path) -> Option<String> {
    if !word.contains('$') && !word.contains('`') {
        return Some(word.to_string());
    }
    if word.contains('`') || word.contains("$(") {
        return None;
    }
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, consumed) = if let Some(inner) = after.strip_prefix('{') {
            let end = inner.find('}')?;
            (&inner[..end], end + 2)
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        let value = known_variable(name, base)?;
        out.push_str(&value.to_string_lossy());
        rest = &after[consumed..];
    }
    out.push_str(rest);
    Some(out)
}

fn has_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// `word` as an absolute path text against `base`: known variables substituted, `~` expanded.
/// None when an expansion is left that cannot be known (`$DIR`, `$(cmd)`, `~user`).
pub(crate) fn absolute_word(word: &str, base: &Path) -> Option<String> {
    let text = substitute(word, base)?;
    let text = if text == "~" || text.starts_with("~/") {
        format!("{}{}", home_dir()?.to_string_lossy(), &text[1..])
    } else if text.starts_with('~') {
        return None; // `~user`, `~+`
    } else {
        text
    };
    if Path::new(&text).is_absolute() {
        Some(text)
    } else {
        Some(format!("{}/{text}", base.to_string_lossy()))
    }
}

/// The paths `word` may name, taken against every base (`bases[0]` is the working directory;
/// the rest are where earlier `cd`s may have moved), with `~` and known variables expanded.
/// For a glob, the directory where its literal part ends.
pub(crate) fn resolve_word(word: &str, bases: &[PathBuf]) -> WordPaths {
    if word.is_empty() {
        return WordPaths::Known {
            paths: Vec::new(),
            glob: false,
        };
    }
    let glob = has_glob(word);
    let mut paths: Vec<PathBuf> = Vec::new();
    for base in bases {
        let Some(text) = absolute_word(word, base) else {
            return WordPaths::Unknown;
        };
        let literal = if glob {
            let cut = text.find(['*', '?', '[']).unwrap_or(text.len());
            match text[..cut].rfind('/') {
                Some(0) | None => "/".to_string(),
                Some(slash) => text[..slash].to_string(),
            }
        } else {
            text
        };
        let p = PathBuf::from(literal);
        if !paths.contains(&p) {
            paths.push(p);
        }
    }
    WordPaths::Known { paths, glob }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::shell::analyze_command;
    use pretty_assertions::assert_eq;

    fn ops(cmd: &str) -> Vec<(String, Reach)> {
        let a = analyze_command(cmd);
        a.segments
            .iter()
            .flat_map(write_operands)
            .map(|o| (o.word, o.reach))
            .collect()
    }

    fn t(list: &[(&str, Reach)]) -> Vec<(String, Reach)> {
        list.iter().map(|(w, r)| (w.to_string(), *r)).collect()
    }

    use Reach::{Itself as I, Tree as T};

    #[test]
    fn the_table_finds_the_written_operands_of_each_command() {
        let rows: &[(&str, &[(&str, Reach)])] = &[
            ("rm -f a b", &[("a", I), ("b", I)]),
            ("rm -rf -- -x d", &[("-x", T), ("d", T)]),
            ("rmdir d", &[("d", I)]),
            ("mv a b dest", &[("dest", T), ("a", T), ("b", T)]),
            ("mv -t /tmp a", &[("/tmp", T), ("a", T)]),
            ("cp -r src /tmp/out", &[("/tmp/out", T)]),
            ("cp --target-directory=/x a b", &[("/x", T)]),
            ("ln -s /etc/passwd link", &[("link", T)]),
            ("ln -s /etc/passwd", &[(".", T)]),
            ("touch -d yesterday a", &[("a", I)]),
            ("mkdir -p -m 700 a/b", &[("a/b", I)]),
            ("chmod 600 key", &[("key", I)]),
            ("chmod -R u+w d", &[("d", T)]),
            ("chmod -w f", &[("f", I)]),
            ("chmod --reference=r f", &[("f", I)]),
            ("chown -R me:me /srv", &[("/srv", T)]),
            ("truncate -s 0 log", &[("log", I)]),
            (
                "install -m 755 bin /usr/local/bin/x",
                &[("/usr/local/bin/x", T)],
            ),
            ("install -d /opt/a /opt/b", &[("/opt/a", I), ("/opt/b", I)]),
            ("rsync -av --delete src/ /backup/", &[("/backup/", T)]),
            ("rsync -av src host:/x", &[]),
            ("scp host:/x ./y", &[("./y", T)]),
            ("dd if=/dev/zero of=disk.img bs=1M", &[("disk.img", I)]),
            ("tar -xzf a.tgz -C /opt", &[("/opt", T)]),
            ("tar xzf a.tgz", &[(".", T)]),
            ("tar --extract --file a.tar --directory=out", &[("out", T)]),
            ("tar -czf /tmp/a.tgz src", &[("/tmp/a.tgz", I)]),
            ("unzip -o a.zip -d ../out", &[("../out", T)]),
            ("unzip a.zip", &[(".", T)]),
            ("git clone https://h/o/repo.git", &[("repo", T)]),
            ("git clone --depth 1 https://h/o/r /tmp/r", &[("/tmp/r", T)]),
            ("git -C x init ../y", &[("../y", T)]),
            ("git worktree add ../wt", &[("../wt", T)]),
            ("sed -i 's/a/b/' f g", &[("f", I), ("g", I)]),
            ("sed -i -e 's/a/b/' f", &[("f", I)]),
            ("sed -n 1p f", &[]),
            ("perl -pi -e 's/a/b/' f", &[("f", I)]),
            ("sort -o out in", &[("out", I)]),
            ("curl -fsSL -o /tmp/x https://h", &[("/tmp/x", I)]),
            ("curl https://h/x -o-", &[]),
            ("wget -O out https://h", &[("out", I)]),
            ("wget -P /tmp/dl https://h", &[("/tmp/dl", T)]),
            ("find /tmp -name x -delete", &[("/tmp", T)]),
            ("find -name x -delete", &[(".", T)]),
            ("find . -name '*.rs' -exec grep -n x {} +", &[]),
            (
                "find /srv -exec sed -i s/a/b/ {} +",
                &[("/srv", T), ("{}", I)],
            ),
            ("/bin/rm x", &[("x", I)]),
            ("sudo rm -r y", &[("y", T)]),
            ("busybox rm -r y", &[("y", T)]),
            ("ls -la", &[]),
        ];
        let mut failures = Vec::new();
        for (cmd, want) in rows {
            let got = ops(cmd);
            if got != t(want) {
                failures.push(format!("{cmd}: got {got:?}"));
            }
        }
        assert_eq!(failures, Vec::<String>::new());
    }

    #[test]
    fn words_resolve_against_every_base_and_unknown_variables_are_unknown() {
        let home = home_dir().unwrap();
        let bases = vec![PathBuf::from("/w"), PathBuf::from("/w/sub")];
        assert_eq!(
            resolve_word("a/b", &bases),
            WordPaths::Known {
                paths: vec![PathBuf::from("/w/a/b"), PathBuf::from("/w/sub/a/b")],
                glob: false
            }
        );
        assert_eq!(
            resolve_word("${HOME}/x", &bases),
            WordPaths::Known {
                paths: vec![home.join("x")],
                glob: false
            }
        );
        assert_eq!(
            resolve_word("~/x", &bases[..1]),
            WordPaths::Known {
                paths: vec![home.join("x")],
                glob: false
            }
        );
        assert_eq!(resolve_word("$DIR/x", &bases), WordPaths::Unknown);
        assert_eq!(resolve_word("$(pwd)/x", &bases), WordPaths::Unknown);
        assert_eq!(resolve_word("~root/x", &bases), WordPaths::Unknown);
        assert_eq!(
            resolve_word("/tmp/*.log", &bases),
            WordPaths::Known {
                paths: vec![PathBuf::from("/tmp")],
                glob: true
            }
        );
        assert_eq!(
            resolve_word("*.log", &bases[..1]),
            WordPaths::Known {
                paths: vec![PathBuf::from("/w")],
                glob: true
            }
        );
    }
}
