//! Destinations: who or what a tool call addresses — recipients, channels, chats, repositories,
//! agents, users, phone numbers and hosts — read from the call's arguments for `destination`
//! rules.
//!
//! The extraction is by argument name, the same for every tool: MCP tools (whose code is not
//! ours) and built-in tools use the standard field names (`agent_send` has `agent_id`,
//! `webpage_fetch` has `url`). A field name is split into words (`_`, `-`, `.`, spaces and
//! lower-to-upper case changes: `callbackUrl` = `callback_url`) and compared in ASCII lower case
//! without separators, at any depth of the arguments. A field is recipient-like when its name
//! (without separators) ends with one of the suffixes below, or its last word is one of the
//! short names:
//!
//! | name ends with | or last word | destination |
//! |---|---|---|
//! | `email(s)`, `emailaddress(es)`, `address(es)`, `recipient(s)`, `replyto`, `forwardto`, `sendto` | `to`, `cc`, `bcc` | each address (`Name <a@b>` → `a@b`; lists split on `,` and `;`); a value without `@` is read as an id (phone numbers, user ids), and so is a Matrix id (`@ada:example.org`, `matrix:!room:example.org`) |
//! | `channel(s)`, `channelid(s)`, `channelname(s)` | | `#name` (a leading `#` is added when missing) |
//! | `userid(s)`, `username(s)`, `user(s)`, `chat(s)`, `chatid(s)`, `agentid(s)`, `recipientid(s)`, `phone(s)`, `destination(s)` | `number(s)` | the id as given (numbers as decimal text); a value that looks like an e-mail address is read as one, unless it is a Matrix id |
//! | `repo(s)`, `repository`, `repositories` | | `owner/repo` (with `owner` beside it) or as given |
//! | `url(s)`, `uri(s)`, `href(s)`, `link(s)`, `webhook(s)`, `endpoint(s)` | | the URL's host |
//! | `host(s)`, `hostname(s)`, `domain(s)` | | the host |
//!
//! Names ending in `number` whose first part counts something (`issue_number`, `page_number`,
//! `line_number`, …; see `COUNTING_NUMBERS`) are not recipients. Whatever the field, a value that
//! is a URL (`scheme://…`) is read as its host and a `mailto:` URL as its recipients (path and
//! `to`/`cc`/`bcc` query). For tools without paths or commands (MCP tools, `agent_send`,
//! `webpage_fetch`), a string in ANY field counts too: a whole value that is a URL is its host,
//! an address list whose every entry is a mailbox (`bob@a.org, Eve <eve@b.org>`) is those
//! addresses, and any other text that mentions an address (`@` with text on both sides) or a
//! URL (`://`) is unreadable (below). Text without either is not a destination.
//!
//! Normal forms (the same on both sides of a match, see [`destination_matches`]): host names and
//! e-mail domains lose one trailing dot and are converted to their IDNA ASCII form
//! (`münchen.de` → `xn--mnchen-3ya.de`) in lower case; IPv4 addresses are written in dotted
//! decimal; everything else is compared in ASCII lower case only (U+212A KELVIN SIGN is not `k`).
//! An e-mail address must be one `local@domain` with a dot-atom local part (letters, digits and
//! ``#$&'*+=?^_`{|}~-``, dot separated; never `/`, nor the `%` and `!` of old relay routing
//! such as `eve%evil.com@good.com`) and a host name as domain. A repository is
//! exactly `owner/repo`, each one segment of `[A-Za-z0-9._-]` that is not `.` or `..`; no other
//! kind of destination contains `/`, so `octo/*` can only match the repositories of `octo`
//! (`*` in a pattern still matches any characters, `/` included: `*` alone matches everything).
//!
//! Fail closed: a recipient-like field whose value cannot be read as a destination (an object
//! without addresses, `true`, a URL without a host, text with spaces or quotes, an address with
//! two `@`, non-ASCII outside a host name), text in any other field that mentions an address or
//! URL without being a URL or an address list (for the tools above), two fields whose names are
//! the same recipient field
//! once normalized (`Owner` and `owner`, `to` and `To`), or arguments too deep or too large, make
//! the set incomplete; an allow rule never covers an incomplete or empty set. Deny and ask rules
//! still match every destination that was read, including the raw text of unreadable values and
//! the addresses and hosts found inside it.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

/// How deep the arguments are searched; deeper values make the set incomplete.
const MAX_DEPTH: usize = 16;
/// How many JSON values are visited at most; more make the set incomplete.
const MAX_NODES: usize = 10_000;

/// The destinations of one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Destinations {
    /// Every destination found, in the order the arguments are walked (object keys in the
    /// order `serde_json` keeps them), without duplicates (compared in ASCII lower case). Host
    /// names and e-mail domains are in their normal form (see the module docs); unreadable
    /// values appear as written.
    pub found: Vec<String>,
    /// False when a recipient-like field held something that is not a readable destination,
    /// two fields named the same recipient field once normalized, or the arguments were too
    /// deep or too large to search.
    pub complete: bool,
}

impl Destinations {
    /// True when the call's destinations are known: at least one, and nothing unreadable.
    /// Only then can an allow rule cover them.
    pub fn determined(&self) -> bool {
        self.complete && !self.found.is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// E-mail addresses (or ids such as phone numbers when there is no `@`).
    Address,
    /// `#channel`.
    Channel,
    /// Chat, agent and user ids, user names, phone numbers.
    Id,
    /// `owner/repo`.
    Repo,
    /// A URL: its host.
    Url,
    /// A bare host name (or a URL).
    Host,
}

/// The first parts of `…number` field names that count things rather than address anyone.
const COUNTING_NUMBERS: &[&str] = &[
    "issue",
    "pull",
    "pr",
    "page",
    "line",
    "lines",
    "version",
    "build",
    "port",
    "row",
    "column",
    "col",
    "step",
    "item",
    "run",
    "job",
    "attempt",
    "sequence",
    "seq",
    "revision",
    "release",
    "comment",
    "review",
    "milestone",
    "check",
    "part",
    "chunk",
    "start",
    "end",
    "max",
    "min",
    "total",
    "count",
    "index",
    "order",
    "invoice",
    "ticket",
    "task",
];

/// Name suffixes (without separators) and the kind of destination they hold, first match wins.
const SUFFIXES: &[(&str, Kind)] = &[
    ("repositories", Kind::Repo),
    ("repository", Kind::Repo),
    ("repos", Kind::Repo),
    ("repo", Kind::Repo),
    ("channelnames", Kind::Channel),
    ("channelname", Kind::Channel),
    ("channelids", Kind::Channel),
    ("channelid", Kind::Channel),
    ("channels", Kind::Channel),
    ("channel", Kind::Channel),
    ("urls", Kind::Url),
    ("url", Kind::Url),
    ("uris", Kind::Url),
    ("uri", Kind::Url),
    ("hrefs", Kind::Url),
    ("href", Kind::Url),
    ("links", Kind::Url),
    ("link", Kind::Url),
    ("webhooks", Kind::Url),
    ("webhook", Kind::Url),
    ("endpoints", Kind::Url),
    ("endpoint", Kind::Url),
    ("hostnames", Kind::Host),
    ("hostname", Kind::Host),
    ("hosts", Kind::Host),
    ("host", Kind::Host),
    ("domains", Kind::Host),
    ("domain", Kind::Host),
    ("emails", Kind::Address),
    ("email", Kind::Address),
    ("addresses", Kind::Address),
    ("address", Kind::Address),
    ("recipients", Kind::Address),
    ("recipient", Kind::Address),
    ("replyto", Kind::Address),
    ("forwardto", Kind::Address),
    ("sendto", Kind::Address),
    ("recipientids", Kind::Id),
    ("recipientid", Kind::Id),
    ("userids", Kind::Id),
    ("userid", Kind::Id),
    ("usernames", Kind::Id),
    ("username", Kind::Id),
    ("users", Kind::Id),
    ("user", Kind::Id),
    ("chatids", Kind::Id),
    ("chatid", Kind::Id),
    ("chats", Kind::Id),
    ("chat", Kind::Id),
    ("agentids", Kind::Id),
    ("agentid", Kind::Id),
    ("phones", Kind::Id),
    ("phone", Kind::Id),
    ("destinations", Kind::Id),
    ("destination", Kind::Id),
];

/// Short names that are recipients when they are the last word of a field name (`to`,
/// `forward_to`, `replyTo`, `cc`), being too short to match as a plain suffix (`photo`).
const LAST_WORDS: &[(&str, Kind)] = &[
    ("to", Kind::Address),
    ("cc", Kind::Address),
    ("bcc", Kind::Address),
    ("number", Kind::Id),
    ("numbers", Kind::Id),
];

/// The words of a field name: split at `_`, `-`, `.`, spaces and lower-to-upper case changes,
/// in ASCII lower case.
fn words_of(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut after_lower = false;
    for c in key.chars() {
        if matches!(c, '_' | '-' | '.' | ' ') {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            after_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && after_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        after_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// The kind of destination a field holds, if it is recipient-like (see the module docs).
fn kind_of(key: &str) -> Option<Kind> {
    let words = words_of(key);
    let name = words.concat();
    for suffix in ["numbers", "number"] {
        if let Some(first) = name.strip_suffix(suffix)
            && COUNTING_NUMBERS.contains(&first)
        {
            return None;
        }
    }
    if let Some((_, kind)) = SUFFIXES.iter().find(|(s, _)| name.ends_with(s)) {
        return Some(*kind);
    }
    let last = words.last()?;
    LAST_WORDS
        .iter()
        .find(|(w, _)| w == last)
        .map(|(_, kind)| *kind)
}

/// A field name without separators, in ASCII lower case (`Reply-To` → `replyto`).
fn normalize(key: &str) -> String {
    words_of(key).concat()
}

/// Reads the destinations a call with these arguments addresses (see the module docs),
/// including strings in any field that are URLs or address lists (other text mentioning an
/// address or URL makes the set incomplete).
pub fn extract_destinations(args: &Value) -> Destinations {
    extract(args, true)
}

/// [`extract_destinations`]; with `scan_values` false, only recipient-like fields are read
/// (for tools whose arguments are paths and commands, where `a@2x.png` is a file name).
pub(crate) fn extract(args: &Value, scan_values: bool) -> Destinations {
    let mut out = Extractor {
        found: Vec::new(),
        complete: true,
        nodes: 0,
        reads: 0,
        scan_values,
    };
    out.walk(args, 0);
    Destinations {
        found: out.found,
        complete: out.complete,
    }
}

struct Extractor {
    found: Vec<String>,
    complete: bool,
    nodes: usize,
    /// Destinations read (also those already found), to tell whether an object had any.
    reads: usize,
    scan_values: bool,
}

impl Extractor {
    fn budget(&mut self, depth: usize) -> bool {
        self.nodes += 1;
        if depth > MAX_DEPTH || self.nodes > MAX_NODES {
            self.complete = false;
            return false;
        }
        true
    }

    fn push(&mut self, d: String) {
        self.reads += 1;
        if !self.found.iter().any(|f| f.eq_ignore_ascii_case(&d)) {
            self.found.push(d);
        }
    }

    /// A value that is not a readable destination: the set is incomplete, and deny and ask
    /// rules see the text as written plus every address and URL host inside it.
    fn unreadable(&mut self, raw: &str) {
        self.complete = false;
        let raw = raw.trim();
        if raw.is_empty() {
            return;
        }
        self.push(raw.to_string());
        for candidate in embedded(raw) {
            self.push(candidate);
        }
    }

    /// Searches any value for recipient-like fields (and, when scanning values, for strings
    /// that are URLs or address lists, see [`Extractor::loose_value`]).
    fn walk(&mut self, value: &Value, depth: usize) {
        if !self.budget(depth) {
            return;
        }
        match value {
            Value::Object(map) => self.walk_object(map, depth),
            Value::Array(items) => {
                for item in items {
                    self.walk(item, depth + 1);
                }
            }
            Value::String(s) if self.scan_values => self.loose_value(s),
            _ => {}
        }
    }

    /// A string in a field that is not recipient-like. A whole value that is a URL or a
    /// `mailto:` URL is read as one; an address list (`bob@a.org, Eve <eve@b.org>`, split as in
    /// recipient fields) whose every entry is a mailbox is read as those addresses. Any other
    /// text that mentions an address or a URL (`a@b`, `scheme://`) is unreadable: the set is
    /// incomplete and deny and ask rules see the addresses and hosts inside it. Text without
    /// either is not a destination.
    fn loose_value(&mut self, s: &str) {
        let t = s.trim();
        if is_mailto(t) || looks_like_url(t) {
            return self.entry(Kind::Url, t, &[]);
        }
        if !mentions_destination(t) {
            return;
        }
        let parts = split_list(t);
        let addresses: Vec<String> = parts.iter().filter_map(|p| mailbox(p)).collect();
        if addresses.len() == parts.len() {
            for a in addresses {
                self.push(a);
            }
        } else {
            self.unreadable(t);
        }
    }

    fn walk_object(&mut self, map: &Map<String, Value>, depth: usize) {
        // Keys that name the same field once normalized (`Owner`/`owner`, `to`/`To`): a server
        // may read either, so every one is read (with the kind any spelling has) and the set
        // cannot be complete. One pass over the keys: normalized name → (count, kind).
        let mut groups: HashMap<String, (usize, Option<Kind>)> = HashMap::new();
        let mut names: Vec<(String, &Value)> = Vec::with_capacity(map.len());
        for (key, value) in map {
            let n = normalize(key);
            let group = groups.entry(n.clone()).or_insert((0, None));
            group.0 += 1;
            group.1 = group.1.or_else(|| kind_of(key));
            names.push((n, value));
        }
        if groups
            .iter()
            .any(|(n, (count, kind))| *count > 1 && (kind.is_some() || n == "owner"))
        {
            self.complete = false;
        }
        let mut owners: Vec<&str> = Vec::new();
        let mut bad_owner = false;
        for (n, value) in &names {
            if n == "owner" {
                match value {
                    Value::String(o) => owners.push(o.trim()),
                    Value::Null => {}
                    _ => bad_owner = true,
                }
            }
        }
        for (n, value) in names {
            match groups.get(&n).and_then(|(_, kind)| *kind) {
                Some(kind) => {
                    if kind == Kind::Repo && bad_owner {
                        self.complete = false;
                    }
                    self.field(kind, value, &owners, depth + 1)
                }
                None => self.walk(value, depth + 1),
            }
        }
    }

    /// A recipient-like field's value.
    fn field(&mut self, kind: Kind, value: &Value, owners: &[&str], depth: usize) {
        if !self.budget(depth) {
            return;
        }
        match value {
            Value::Null => {}
            Value::String(s) => {
                if matches!(kind, Kind::Address) {
                    for part in split_list(s) {
                        self.entry(kind, &part, owners);
                    }
                } else {
                    self.entry(kind, s, owners);
                }
            }
            Value::Number(n) if matches!(kind, Kind::Id | Kind::Channel | Kind::Address) => {
                self.entry(kind, &n.to_string(), owners)
            }
            Value::Array(items) => {
                for item in items {
                    self.field(kind, item, owners, depth + 1);
                }
            }
            Value::Object(map) => {
                // `{"email": "a@b", "name": "A"}`: the nested fields say what it is.
                let before = self.reads;
                self.walk_object(map, depth);
                if self.reads == before {
                    self.complete = false;
                }
            }
            Value::Bool(_) | Value::Number(_) => self.complete = false,
        }
    }

    /// One entry of a recipient-like field (one address of a list, one URL, one id).
    fn entry(&mut self, kind: Kind, raw: &str, owners: &[&str]) {
        let s = raw.trim();
        if s.is_empty() {
            self.complete = false;
            return;
        }
        if is_mailto(s) {
            return self.mailto(s);
        }
        if looks_like_url(s) {
            return match host_of(s) {
                Some(h) => self.push(h),
                None => self.unreadable(s),
            };
        }
        match kind {
            // `@ada:example.org`, `matrix:!room:example.org`: Matrix ids, not e-mail.
            Kind::Address | Kind::Id if is_matrix_recipient(s) => self.push(s.to_string()),
            Kind::Address if s.contains(['@', '<', '>']) => self.mailbox(s),
            Kind::Id if looks_like_email(s) => self.mailbox(s),
            Kind::Address | Kind::Id => self.id(s),
            Kind::Channel => {
                let name = s.strip_prefix('#').unwrap_or(s);
                if is_id(name) && !name.contains('#') {
                    self.push(format!("#{name}"));
                } else {
                    self.unreadable(&format!("#{name}"));
                }
            }
            Kind::Repo => self.repo(s, owners),
            Kind::Url | Kind::Host => match host_of(s) {
                Some(h) => self.push(h),
                None => self.unreadable(s),
            },
        }
    }

    fn id(&mut self, s: &str) {
        if is_id(s) {
            self.push(s.to_string());
        } else {
            self.unreadable(s);
        }
    }

    fn mailbox(&mut self, s: &str) {
        match mailbox(s) {
            Some(a) => self.push(a),
            None => self.unreadable(s),
        }
    }

    /// `repo` with the `owner`s of the same object: `owner/repo`, both single safe segments.
    fn repo(&mut self, s: &str, owners: &[&str]) {
        let parts: Vec<&str> = s.split('/').collect();
        match parts.as_slice() {
            [o, r] if owners.is_empty() => {
                if is_segment(o) && is_segment(r) {
                    self.push(s.to_string());
                } else {
                    self.unreadable(s);
                }
            }
            [r] if owners.is_empty() => {
                if is_segment(r) {
                    self.push(s.to_string());
                } else {
                    self.unreadable(s);
                }
            }
            [r] => {
                for o in owners {
                    let full = format!("{o}/{r}");
                    if is_segment(o) && is_segment(r) {
                        self.push(full);
                    } else {
                        self.unreadable(&full);
                    }
                }
            }
            _ => {
                // `owner` beside a full name, or more than one `/`: which repository the
                // server uses is not known.
                self.unreadable(s);
                if let Some(r) = parts.last() {
                    for o in owners {
                        self.unreadable(&format!("{o}/{r}"));
                    }
                }
            }
        }
    }

    /// Every recipient of a `mailto:` URL: the path and the `to`, `cc` and `bcc` query fields.
    fn mailto(&mut self, s: &str) {
        let rest = &s["mailto:".len()..];
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        let query = query.split_once('#').map_or(query, |(q, _)| q);
        let mut lists = vec![path.to_string()];
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let Some(name) = percent_decode(name) else {
                return self.unreadable(s);
            };
            if ["to", "cc", "bcc"]
                .iter()
                .any(|h| name.eq_ignore_ascii_case(h))
            {
                lists.push(value.to_string());
            }
        }
        let mut any = false;
        for list in lists {
            let Some(list) = percent_decode(&list) else {
                return self.unreadable(s);
            };
            for part in split_list(&list) {
                any = true;
                self.mailbox(&part);
            }
        }
        if !any {
            self.unreadable(s);
        }
    }
}

/// `%XX` escapes decoded; None when an escape is malformed or the result is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn is_mailto(s: &str) -> bool {
    s.get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("mailto:"))
}

/// `scheme://…` without spaces.
fn looks_like_url(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once("://") else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
        && !s.contains(char::is_whitespace)
}

/// Whether text mentions an address (`@` with text on both sides) or a URL (`://`).
fn mentions_destination(s: &str) -> bool {
    s.contains("://")
        || s.match_indices('@').any(|(i, _)| {
            let before = s[..i].chars().next_back();
            let after = s[i + 1..].chars().next();
            before.is_some_and(|c| !c.is_whitespace() && c != '<')
                && after.is_some_and(|c| !c.is_whitespace() && c != '>')
        })
}

/// `something@something.with.a.dot`, without spaces (validity is checked by [`mailbox`]).
fn looks_like_email(s: &str) -> bool {
    !s.contains(char::is_whitespace)
        && s.find('@').is_some_and(|i| i > 0)
        && s.rsplit('@').next().is_some_and(|d| d.contains('.'))
}

/// A Matrix identifier (`@user:server`, `!room:server`, `#alias:server`): its sigil, a localpart
/// of ASCII letters, digits and `._=-+` (not `/`, which only repositories contain here), `:`,
/// and a server name (host name or IPv4 address, with an optional `:port`); or a room id of
/// room version 12, which has no server name (`!` and the create event's hash in URL-safe
/// base64: letters, digits, `-` and `_`). Optionally behind a channel name
/// (`matrix:@ada:example.org`, as `social_message` recipients are written).
fn is_matrix_recipient(s: &str) -> bool {
    let id = match s.split_once(':') {
        Some((channel, id))
            if !channel.is_empty()
                && channel.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_')
                }) =>
        {
            id
        }
        _ => s,
    };
    if let Some(hash) = id.strip_prefix('!')
        && !hash.is_empty()
        && hash
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
    {
        return true;
    }
    let Some(rest) = id.strip_prefix(['@', '!', '#']) else {
        return false;
    };
    let Some((local, server)) = rest.split_once(':') else {
        return false;
    };
    let host = match server.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()) => host,
        _ => server,
    };
    !local.is_empty()
        && local
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '=' | '-' | '+'))
        && !host.is_empty()
        && !host.starts_with(['.', '-'])
        && !host.ends_with(['.', '-'])
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
}

/// An id, user name or phone number: ASCII letters, digits and `._:+@#~*-`, not ending with `.`.
fn is_id(s: &str) -> bool {
    !s.is_empty()
        && !s.ends_with('.')
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '.' | '_' | ':' | '+' | '@' | '#' | '~' | '*' | '-')
        })
}

/// One repository path segment: `[A-Za-z0-9._-]+`, not `.` or `..`.
fn is_segment(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Splits an address list on `,` and `;` outside double quotes and angle brackets
/// (`"Doe, J" <j@x.org>, k@y.org` is two entries).
fn split_list(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let (mut quoted, mut angle) = (false, false);
    for c in s.chars() {
        match c {
            '"' => quoted = !quoted,
            '<' if !quoted => angle = true,
            '>' if !quoted => angle = false,
            ',' | ';' if !quoted && !angle => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts.retain(|p| !p.trim().is_empty());
    parts
}

/// The address of one list entry, strictly: `local@domain` or `Display Name <local@domain>`
/// (the display name may be quoted; outside quotes it has no `@`, `<` or `>`). The local part
/// is a dot-atom of ASCII characters, the domain a host name in its normal form. None when the
/// entry is anything else.
fn mailbox(entry: &str) -> Option<String> {
    let entry = entry.trim();
    let spec = match entry.find('<') {
        Some(open) => {
            let inner = entry[open + 1..].strip_suffix('>')?;
            let mut quoted = false;
            for c in entry[..open].chars() {
                match c {
                    '"' => quoted = !quoted,
                    '@' | '<' | '>' if !quoted => return None,
                    _ => {}
                }
            }
            if quoted || inner.contains(['<', '>']) {
                return None;
            }
            inner.trim()
        }
        None if entry.contains('>') => return None,
        None => entry,
    };
    let (local, domain) = spec.split_once('@')?;
    if !is_dot_atom(local) {
        return None;
    }
    let domain = normalize_host(domain)?;
    if domain.starts_with('[') {
        return None;
    }
    Some(format!("{local}@{domain}"))
}

fn is_dot_atom(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|atom| {
            !atom.is_empty()
                && atom.chars().all(|c| {
                    c.is_ascii_alphanumeric()
                        || matches!(
                            c,
                            '#' | '$'
                                | '&'
                                | '\''
                                | '*'
                                | '+'
                                | '='
                                | '?'
                                | '^'
                                | '_'
                                | '`'
                                | '{'
                                | '|'
                                | '}'
                                | '~'
                                | '-'
                        )
                })
        })
}

/// A host name (or IP address) in normal form: one trailing dot removed, IDNA ASCII form in
/// lower case (through the `url` crate's WHATWG host parser), IPv4 in dotted decimal, IPv6 in
/// brackets. None for anything that is not a host name: empty labels, `%`, characters outside
/// letters, digits, `-` and `_`.
fn normalize_host(host: &str) -> Option<String> {
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.is_empty() || host.ends_with('.') || host.contains('%') {
        return None;
    }
    match url::Host::parse(host).ok()? {
        url::Host::Domain(d) => {
            let ok = d.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label.chars().all(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_')
                    })
            });
            ok.then_some(d)
        }
        url::Host::Ipv4(ip) => Some(ip.to_string()),
        url::Host::Ipv6(ip) => Some(format!("[{ip}]")),
    }
}

/// The host of a URL in normal form, without port or credentials. A URL without a scheme is
/// read as `https://…`; a URL without a host (`file:///x`) has none.
fn host_of(s: &str) -> Option<String> {
    let s = s.trim();
    let parsed = match url::Url::parse(s) {
        Ok(u) => u,
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            url::Url::parse(&format!("https://{s}")).ok()?
        }
        Err(_) => return None,
    };
    // Special schemes already give the IDNA form; opaque hosts (`foo://Host/`) are
    // percent-encoded and not yet normalized.
    let host = parsed.host_str()?;
    if host.contains('%') {
        return None;
    }
    normalize_host(host)
}

/// Addresses and URL hosts inside unreadable text (`evil@evil.com@good.com` contains
/// `evil@evil.com`), for deny and ask rules.
fn embedded(raw: &str) -> Vec<String> {
    static PATTERNS: OnceLock<Option<(regex::Regex, regex::Regex)>> = OnceLock::new();
    let Some((email, url)) = PATTERNS
        .get_or_init(|| {
            let email = regex::Regex::new(r#"[^\s<>(),;:"'\[\]@/\\]+@[^\s<>(),;:"'\[\]@/\\?#&]+"#);
            let url = regex::Regex::new(r#"[A-Za-z][A-Za-z0-9+.-]*://[^\s<>"']+"#);
            email.ok().zip(url.ok())
        })
        .as_ref()
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in email.find_iter(raw) {
        let text = m.as_str();
        let (local, domain) = text.split_once('@').unwrap_or((text, ""));
        let domain = domain.trim_end_matches('.');
        out.push(match normalize_host(domain) {
            Some(d) => format!("{local}@{d}"),
            None => format!("{local}@{domain}"),
        });
    }
    out.extend(url.find_iter(raw).filter_map(|m| host_of(m.as_str())));
    out
}

/// The normal form of a destination or a pattern (they are normalized identically): the part
/// after the last `@` (or the whole text when it has no `@` and is neither a `#channel` nor a
/// repository) is a host, each dot-separated label converted to its IDNA ASCII form, one
/// trailing dot removed; everything in ASCII lower case. Errors name what cannot be
/// normalized: non-ASCII outside a host name, or a non-ASCII label with `*` or `\`.
fn canonical(text: &str) -> Result<String, String> {
    let (head, host) = match text.rfind('@') {
        Some(i) => text.split_at(i + 1),
        None if text.starts_with('#') || text.contains('/') => (text, ""),
        None => ("", text),
    };
    if let Some(c) = head.chars().find(|c| !c.is_ascii()) {
        return Err(format!(
            "'{text}' contains {c:?} outside a host name; only host names may be non-ASCII (compared in their IDNA ASCII form)"
        ));
    }
    let mut out = head.to_ascii_lowercase();
    let host = host.strip_suffix('.').unwrap_or(host);
    for (i, label) in host.split('.').enumerate() {
        if i > 0 {
            out.push('.');
        }
        if label.is_ascii() {
            out.push_str(&label.to_ascii_lowercase());
            continue;
        }
        let ascii = if label.contains(['*', '\\']) {
            None
        } else {
            match url::Host::parse(label) {
                Ok(url::Host::Domain(d)) => Some(d),
                _ => None,
            }
        };
        match ascii {
            Some(a) => out.push_str(&a),
            None => {
                return Err(format!(
                    "'{text}': the host label '{label}' has no IDNA ASCII form (a `*` cannot stand inside a non-ASCII label)"
                ));
            }
        }
    }
    Ok(out)
}

/// Whether a destination pattern matches a destination: a glob on the whole destination where
/// `*` matches any run of characters (also none, `/` and `.` included), `\*` is a literal star
/// and `\\` a backslash. Both sides are first put in the same normal form (see the module
/// docs: ASCII lower case, host names in IDNA ASCII form without one trailing dot); text that
/// has no normal form is compared as written, in ASCII lower case.
///
/// An origin destination (`https://docs.test`, `http://127.0.0.1:8080`, what browser calls
/// address) is matched by an origin pattern as a whole, and by a host pattern (one without
/// `://`: `docs.test`, `*.test`) on its host only, so a host rule covers every scheme and port
/// of that host while an origin rule covers that origin alone.
pub fn destination_matches(pattern: &str, destination: &str) -> bool {
    if !pattern.contains("://") && destination.contains("://") {
        return match url::Url::parse(destination) {
            Ok(u) => u
                .host_str()
                .is_some_and(|host| destination_matches(pattern, host)),
            Err(_) => false,
        };
    }
    let pattern = canonical(pattern).unwrap_or_else(|_| pattern.to_ascii_lowercase());
    let destination = canonical(destination).unwrap_or_else(|_| destination.to_ascii_lowercase());
    let text: Vec<char> = destination.chars().collect();
    glob(&pieces(&pattern), &text)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Piece {
    Star,
    Char(char),
}

fn pieces(pattern: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(Piece::Char(chars.next().unwrap_or('\\'))),
            '*' => {
                if out.last() != Some(&Piece::Star) {
                    out.push(Piece::Star);
                }
            }
            c => out.push(Piece::Char(c)),
        }
    }
    out
}

/// Iterative glob match with single-star backtracking: linear in practice, never exponential.
fn glob(pattern: &[Piece], text: &[char]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(Piece::Char(c)) if *c == text[t] => {
                p += 1;
                t += 1;
            }
            Some(Piece::Star) => {
                star = Some((p, t));
                p += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|x| *x == Piece::Star)
}

/// Escapes a destination so that, as a pattern, it matches only itself.
pub(crate) fn escape_destination(d: &str) -> String {
    d.replace('\\', "\\\\").replace('*', "\\*")
}

/// Checks a destination pattern; errors say what is wrong (the caller names the field). A
/// valid pattern has a normal form (see [`destination_matches`]): non-ASCII only in host
/// names, and only in labels without `*`. The pattern is stored as written and normalized when
/// it is matched.
pub(crate) fn validate_pattern(pattern: &str) -> Result<(), String> {
    if pattern.trim().is_empty() {
        return Err("empty".to_string());
    }
    if let Some(c) = pattern
        .chars()
        .find(|c| c.is_whitespace() || c.is_control())
    {
        return Err(format!(
            "'{pattern}' contains {c:?}; destinations never contain spaces or control characters"
        ));
    }
    canonical(pattern).map(|_| ())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn found(args: Value) -> (Vec<String>, bool) {
        let d = extract_destinations(&args);
        (d.found, d.complete)
    }

    fn v(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn addresses_are_split_and_unwrapped() {
        assert_eq!(
            found(json!({"to": "\"Doe, J\" <j@x.org>, k@y.org; mailto:L@z.org"})),
            (v(&["j@x.org", "k@y.org", "L@z.org"]), true)
        );
        // Fields are read in the order of the JSON object (sorted, or as written when
        // serde_json keeps insertion order): the set is what counts.
        let (mut both, complete) =
            found(json!({"recipients": [{"email": "a@b.c", "name": "A"}], "cc": ["d@e.f"]}));
        both.sort();
        assert_eq!((both, complete), (v(&["a@b.c", "d@e.f"]), true));
    }

    #[test]
    fn matrix_ids_are_recipients_as_given_not_e_mail_addresses() {
        assert_eq!(
            found(json!({"recipient": "@ada:matrix.org"})),
            (v(&["@ada:matrix.org"]), true)
        );
        assert_eq!(
            found(json!({"recipient": "matrix:!dm-ada:suzent.test"})),
            (v(&["matrix:!dm-ada:suzent.test"]), true)
        );
        assert_eq!(
            found(json!({"user_id": "work-matrix:@bob:example.org:8448"})),
            (v(&["work-matrix:@bob:example.org:8448"]), true)
        );
        // A room version 12 id (what Synapse creates): no server name.
        let v12 = "matrix:!o1rLDZE5bPJpHysR0CkZbCE-kYkCnZ8miiO_RScIAsk";
        assert_eq!(found(json!({"recipient": v12})), (v(&[v12]), true));
        assert!(!found(json!({"recipient": "matrix:!room/../x"})).1);
        // Still e-mail: `a@b.c`; still unreadable: a Matrix-like id with a bad server name.
        assert_eq!(found(json!({"to": "a@b.c"})), (v(&["a@b.c"]), true));
        assert!(!found(json!({"recipient": "@ada:bad host"})).1);
        assert!(!found(json!({"recipient": "@ada/x:matrix.org"})).1);
    }

    #[test]
    fn unreadable_recipient_fields_make_the_set_incomplete() {
        assert_eq!(found(json!({"to": true})), (v(&[]), false));
        assert_eq!(found(json!({"to": {"id": "U1"}})), (v(&[]), false));
        assert_eq!(
            found(json!({"to": "a@b.c x@evil.com"})),
            (v(&["a@b.c x@evil.com", "a@b.c", "x@evil.com"]), false)
        );
        assert_eq!(found(json!({"url": "file:///etc/passwd"})).1, false);
        assert_eq!(found(json!({"to": null})), (v(&[]), true));
    }

    #[test]
    fn owner_and_repo_combine_and_channels_get_a_hash() {
        assert_eq!(
            found(json!({"owner": "octo", "repo": "hello", "title": "x"})),
            (v(&["octo/hello"]), true)
        );
        assert_eq!(
            found(json!({"params": {"channel": "general", "chatId": -100123}})),
            (v(&["#general", "-100123"]), true)
        );
        assert_eq!(
            found(json!({"url": "https://user:pw@API.GitHub.com:8443/x?to=evil"})),
            (v(&["api.github.com"]), true)
        );
        assert_eq!(
            found(json!({"url": "http://example.com@evil.com/"})),
            (v(&["evil.com"]), true)
        );
    }

    #[test]
    fn strings_in_other_fields_are_address_lists_or_unreadable() {
        assert_eq!(
            found(json!({"attendees": "Bob <bob@good.com>, eve@EVIL.com"})),
            (v(&["bob@good.com", "eve@evil.com"]), true)
        );
        assert_eq!(
            found(json!({"note": "ask eve@evil.com or see https://x.org/a"})),
            (
                v(&[
                    "ask eve@evil.com or see https://x.org/a",
                    "eve@evil.com",
                    "x.org"
                ]),
                false
            )
        );
        assert_eq!(
            found(json!({"text": "@here lunch, then <@U1>; thanks"})),
            (v(&[]), true)
        );
        assert_eq!(found(json!({"title": "plain text"})), (v(&[]), true));
    }

    #[test]
    fn too_deep_arguments_are_incomplete() {
        let mut deep = json!({"to": "a@b.c"});
        for _ in 0..40 {
            deep = json!({ "x": deep });
        }
        assert!(!extract_destinations(&deep).complete);
    }

    #[test]
    fn patterns_are_case_insensitive_globs_on_the_whole_destination() {
        assert!(destination_matches("*@example.com", "Bob@Example.COM"));
        assert!(!destination_matches(
            "*@example.com",
            "bob@example.com.evil.org"
        ));
        assert!(!destination_matches("*@example.com", "bob@notexample.org"));
        assert!(destination_matches("octo/*", "octo/hello"));
        assert!(!destination_matches("octo/*", "octopus/hello"));
        assert!(destination_matches("#general", "#General"));
        assert!(!destination_matches("#general", "#general-2"));
        assert!(destination_matches("a\\*b", "a*b"));
        assert!(!destination_matches("a\\*b", "axb"));
        assert!(destination_matches("*", "anything"));
        assert!(destination_matches("*.*.*.com", "a.b.c.com"));
        assert!(!destination_matches(&"*a".repeat(30), &"a".repeat(20)));
    }

    #[test]
    fn field_names_are_split_into_words() {
        assert_eq!(words_of("callbackURL"), v(&["callback", "url"]));
        assert_eq!(words_of("recipientEmail"), v(&["recipient", "email"]));
        assert_eq!(words_of("Reply-To"), v(&["reply", "to"]));
        assert!(kind_of("forwardTo") == Some(Kind::Address));
        assert!(kind_of("photo").is_none());
        assert!(kind_of("issue_number").is_none());
        assert!(kind_of("phone_number") == Some(Kind::Id));
        assert!(kind_of("webhookUrl") == Some(Kind::Url));
    }

    #[test]
    fn hosts_and_patterns_share_one_normal_form() {
        assert_eq!(
            normalize_host("M\u{fc}nchen.DE.").as_deref(),
            Some("xn--mnchen-3ya.de")
        );
        assert_eq!(normalize_host("evil.com.."), None);
        assert_eq!(normalize_host("ev%69l.com"), None);
        assert_eq!(normalize_host("0x7f.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(
            canonical("*@M\u{fc}nchen.de.").unwrap(),
            "*@xn--mnchen-3ya.de"
        );
        assert!(canonical("\u{212A}ate@good.com").is_err());
        assert!(canonical("*@m\u{fc}*.de").is_err());
        assert_eq!(
            mailbox("Eve <eve@EVIL.com.>").as_deref(),
            Some("eve@evil.com")
        );
        assert_eq!(
            mailbox("\"a@b.c\" <eve@evil.com>").as_deref(),
            Some("eve@evil.com")
        );
        assert_eq!(mailbox("a@b.c <eve@evil.com>"), None);
        assert_eq!(mailbox("a..b@evil.com"), None);
        assert_eq!(mailbox("a/b@evil.com"), None);
    }
}
