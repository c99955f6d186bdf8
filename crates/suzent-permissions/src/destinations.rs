//! Destinations: who or what a tool call addresses — recipients, channels, chats, repositories,
//! agents and hosts — read from the call's arguments for `destination` rules.
//!
//! The extraction is by argument name, the same for every tool: MCP tools (whose code is not
//! ours) and built-in tools use the standard field names (`agent_send` has `agent_id`,
//! `webpage_fetch` has `url`). Field names are compared without case, `_` and `-`
//! (`chatId` = `chat_id`), at any depth of the arguments:
//!
//! | fields | destination |
//! |---|---|
//! | `to`, `cc`, `bcc`, `reply_to`, `recipient(s)`, `email(s)`, `email_address(es)` | each address (`Name <a@b>` → `a@b`; lists split on `,` and `;`) |
//! | `channel(s)`, `channel_id`, `channel_name` | `#name` (a leading `#` is added when missing) |
//! | `chat_id`, `agent_id` | the id as given (numbers as decimal text) |
//! | `repo`/`repository` with `owner` beside it (and no `/` in it) | `owner/repo` |
//! | `repo`/`repository` otherwise | as given (`octo/hello`) |
//! | `url`, `urls`, `uri` | the host, lower case (`https://API.github.com/x` → `api.github.com`) |
//!
//! Fail closed: a recipient-like field whose value cannot be read as a destination (an object
//! without addresses, `true`, a URL without a host, text with spaces or quotes) makes the set
//! incomplete, and an allow rule never covers an incomplete or empty set. Deny and ask rules
//! still match any destination that was read.

use serde_json::{Map, Value};

/// How deep the arguments are searched; deeper values make the set incomplete.
const MAX_DEPTH: usize = 16;
/// How many JSON values are visited at most; more make the set incomplete.
const MAX_NODES: usize = 10_000;

/// The destinations of one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Destinations {
    /// Every destination found, in the order the arguments are walked (object keys in the
    /// order `serde_json` keeps them), without duplicates (compared without case).
    pub found: Vec<String>,
    /// False when a recipient-like field held something that is not a readable destination,
    /// or the arguments were too deep or too large to search.
    pub complete: bool,
}

impl Destinations {
    /// True when the call's destinations are known: at least one, and nothing unreadable.
    /// Only then can an allow rule cover them.
    pub fn determined(&self) -> bool {
        self.complete && !self.found.is_empty()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Address,
    Channel,
    Id,
    Repo,
    Host,
}

/// The kind of destination a field name holds, if it holds one (`name` is normalized: lower
/// case, without `_` and `-`).
fn kind_of(name: &str) -> Option<Kind> {
    Some(match name {
        "to" | "cc" | "bcc" | "replyto" | "recipient" | "recipients" | "email" | "emails"
        | "emailaddress" | "emailaddresses" | "toaddress" | "toaddresses" => Kind::Address,
        "channel" | "channels" | "channelid" | "channelids" | "channelname" => Kind::Channel,
        "chatid" | "agentid" => Kind::Id,
        "repo" | "repository" => Kind::Repo,
        "url" | "urls" | "uri" => Kind::Host,
        _ => return None,
    })
}

fn normalize(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Reads the destinations a call with these arguments addresses (see the module docs).
pub fn extract_destinations(args: &Value) -> Destinations {
    let mut out = Extractor {
        found: Vec::new(),
        complete: true,
        nodes: 0,
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
        if !self
            .found
            .iter()
            .any(|f| f.to_lowercase() == d.to_lowercase())
        {
            self.found.push(d);
        }
    }

    /// A destination that must be a single clean token; anything else is kept (deny and ask
    /// rules may still match it) but makes the set incomplete.
    fn push_token(&mut self, d: &str) {
        let d = d.trim();
        if d.is_empty() {
            self.complete = false;
            return;
        }
        if !is_clean(d) {
            self.complete = false;
        }
        self.push(d.to_string());
    }

    /// Searches any value for recipient-like fields.
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
            _ => {}
        }
    }

    fn walk_object(&mut self, map: &Map<String, Value>, depth: usize) {
        let owner = map
            .iter()
            .find(|(k, _)| normalize(k) == "owner")
            .and_then(|(_, v)| v.as_str())
            .map(str::trim)
            .filter(|o| !o.is_empty());
        for (key, value) in map {
            match kind_of(&normalize(key)) {
                Some(kind) => self.field(kind, value, owner, depth + 1),
                None => self.walk(value, depth + 1),
            }
        }
    }

    /// A recipient-like field's value.
    fn field(&mut self, kind: Kind, value: &Value, owner: Option<&str>, depth: usize) {
        if !self.budget(depth) {
            return;
        }
        match value {
            Value::Null => {}
            Value::String(s) => self.text(kind, s, owner),
            Value::Number(n) if matches!(kind, Kind::Id | Kind::Channel) => {
                self.text(kind, &n.to_string(), owner)
            }
            Value::Array(items) => {
                for item in items {
                    self.field(kind, item, owner, depth + 1);
                }
            }
            Value::Object(map) => {
                // `{"email": "a@b", "name": "A"}`: the nested fields say what it is.
                let before = self.found.len();
                self.walk_object(map, depth);
                if self.found.len() == before {
                    self.complete = false;
                }
            }
            Value::Bool(_) | Value::Number(_) => self.complete = false,
        }
    }

    fn text(&mut self, kind: Kind, s: &str, owner: Option<&str>) {
        match kind {
            Kind::Address => {
                for part in split_list(s) {
                    match address_of(&part) {
                        Some(a) => self.push_token(&a),
                        None => {
                            self.complete = false;
                            let raw = part.trim();
                            if !raw.is_empty() {
                                self.push(raw.to_string());
                            }
                        }
                    }
                }
            }
            Kind::Channel => {
                let name = s.trim();
                if name.is_empty() {
                    self.complete = false;
                } else if name.starts_with('#') {
                    self.push_token(name);
                } else {
                    self.push_token(&format!("#{name}"));
                }
            }
            Kind::Id => self.push_token(s),
            Kind::Repo => {
                let repo = s.trim();
                match owner {
                    Some(o) if !repo.contains('/') && !repo.is_empty() => {
                        self.push_token(&format!("{o}/{repo}"))
                    }
                    _ => self.push_token(repo),
                }
            }
            Kind::Host => match host_of(s) {
                Some(h) => self.push_token(&h),
                None => self.complete = false,
            },
        }
    }
}

/// A destination without spaces, quotes, brackets, list separators or control characters.
fn is_clean(d: &str) -> bool {
    !d.chars().any(|c| {
        c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '<' | '>' | ',' | ';')
    })
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

/// The address of one list entry: `Name <a@b>` → `a@b`, `mailto:a@b` → `a@b`, a bare token
/// as is. None when the entry has no single readable address.
fn address_of(entry: &str) -> Option<String> {
    let entry = entry.trim();
    let inner = match (entry.rfind('<'), entry.rfind('>')) {
        (Some(open), Some(close)) if open < close && entry[close + 1..].trim().is_empty() => {
            &entry[open + 1..close]
        }
        (None, None) => entry,
        _ => return None,
    };
    let inner = inner.trim();
    let inner = inner
        .get(..7)
        .filter(|p| p.eq_ignore_ascii_case("mailto:"))
        .map_or(inner, |_| &inner[7..]);
    (!inner.is_empty() && is_clean(inner)).then(|| inner.to_string())
}

/// The host of a URL, lower case, without port or credentials. A URL without a scheme is read
/// as `https://…`; a URL without a host (`file:///x`, `mailto:`) has none.
fn host_of(s: &str) -> Option<String> {
    let s = s.trim();
    let parsed = match url::Url::parse(s) {
        Ok(u) => u,
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            url::Url::parse(&format!("https://{s}")).ok()?
        }
        Err(_) => return None,
    };
    let host = parsed.host_str()?.trim_end_matches('.').to_lowercase();
    (!host.is_empty()).then_some(host)
}

/// Whether a destination pattern matches a destination: a case-insensitive glob on the whole
/// destination where `*` matches any run of characters (also none), `\*` is a literal star
/// and `\\` a backslash.
pub fn destination_matches(pattern: &str, destination: &str) -> bool {
    let pattern: Vec<Piece> = pieces(&pattern.to_lowercase());
    let text: Vec<char> = destination.to_lowercase().chars().collect();
    glob(&pattern, &text)
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

/// Checks a destination pattern; errors say what is wrong (the caller names the field).
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
    Ok(())
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
        assert_eq!(
            found(json!({"recipients": [{"email": "a@b.c", "name": "A"}], "cc": ["d@e.f"]})),
            (v(&["d@e.f", "a@b.c"]), true)
        );
    }

    #[test]
    fn unreadable_recipient_fields_make_the_set_incomplete() {
        assert_eq!(found(json!({"to": true})), (v(&[]), false));
        assert_eq!(found(json!({"to": {"id": "U1"}})), (v(&[]), false));
        assert_eq!(
            found(json!({"to": "a@b.c x@evil.com"})),
            (v(&["a@b.c x@evil.com"]), false)
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
}
