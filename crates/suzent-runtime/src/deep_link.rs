//! `suzent://` deep links: what a link asks for ([`parse_deep_link`], pure), and the
//! [`DeepLinkInbox`] that holds MCP installs until the user confirms them in the app.
//!
//! Two kinds exist:
//! - `suzent://chat/ID` opens the chat `ID`.
//! - `suzent://mcp/install?name=NAME&command=PROGRAM&arg=A&arg=B&env=KEY%3DVALUE` (a stdio
//!   server) or `suzent://mcp/install?name=NAME&url=https%3A%2F%2F…` (a streamable HTTP server)
//!   asks to add an MCP server. `arg` and `env` repeat, in order; `env` is `KEY=VALUE`.
//!
//! Anything else (another scheme, kind, path, an unknown or repeated field) is refused with a
//! message that names it. A link never adds or starts anything by itself: an install waits in
//! the inbox until [`DeepLinkInbox::remove`] takes it after the user's Confirm, and the server is
//! then added untrusted.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;
use suzent_mcp::McpServerConfig;

/// The URL scheme the app registers.
pub const SCHEME: &str = "suzent";
/// Longest link accepted, in bytes.
pub const MAX_LINK_BYTES: usize = 8 * 1024;
/// Most MCP installs waiting for an answer at once; a further link is refused.
pub const MAX_PENDING_INSTALLS: usize = 8;
/// Most arguments (`arg`) or environment variables (`env`) in one install link.
pub const MAX_LIST_ITEMS: usize = 64;
/// Most characters of a link quoted back in a refusal.
const QUOTED_CHARS: usize = 200;

/// What a well-formed link asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeepLink {
    /// `suzent://chat/ID`.
    OpenChat {
        /// The chat's id.
        chat_id: String,
    },
    /// `suzent://mcp/install?…`.
    InstallMcp(McpInstall),
}

/// An MCP server a link asks to add: everything the confirmation dialog shows, in full.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpInstall {
    /// Server name (the key in `mcp.json`).
    pub name: String,
    /// Program of a stdio server.
    pub command: Option<String>,
    /// Its arguments, in order.
    pub args: Vec<String>,
    /// Environment variables of a stdio server.
    pub env: BTreeMap<String, String>,
    /// URL of a streamable HTTP server.
    pub url: Option<String>,
}

impl McpInstall {
    /// The `mcp.json` entry to add: untrusted (its read-only hints are ignored), enabled.
    pub fn config(&self) -> McpServerConfig {
        McpServerConfig {
            command: self.command.clone(),
            args: self.args.clone(),
            env: self.env.clone(),
            url: self.url.clone(),
            trusted: false,
            ..McpServerConfig::default()
        }
    }
}

/// Why a link was refused. The message names the bad part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeepLinkError {
    /// Longer than [`MAX_LINK_BYTES`].
    #[error("the link is {0} bytes long; at most {max} are accepted", max = MAX_LINK_BYTES)]
    TooLong(usize),
    /// Not a URL at all.
    #[error("'{0}' is not a URL")]
    NotAUrl(String),
    /// Another scheme than `suzent`.
    #[error("links with the scheme '{0}' are not Suzent links (expected suzent://)")]
    WrongScheme(String),
    /// A kind (host) other than `chat` or `mcp`, or an unknown path under it.
    #[error("unknown link kind '{0}' (known: suzent://chat/ID, suzent://mcp/install?…)")]
    UnknownKind(String),
    /// A query field this kind does not know.
    #[error("unknown field '{field}' in a {kind} link")]
    UnknownField {
        /// The link kind.
        kind: &'static str,
        /// The field.
        field: String,
    },
    /// A field with a bad value (or given twice, or missing).
    #[error("{field}: {message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
}

fn invalid(field: &'static str, message: impl Into<String>) -> DeepLinkError {
    DeepLinkError::Invalid {
        field,
        message: message.into(),
    }
}

/// Parses a `suzent://` link. Pure: nothing is opened, added or started.
pub fn parse_deep_link(link: &str) -> Result<DeepLink, DeepLinkError> {
    if link.len() > MAX_LINK_BYTES {
        return Err(DeepLinkError::TooLong(link.len()));
    }
    let url = url::Url::parse(link.trim()).map_err(|_| DeepLinkError::NotAUrl(quote(link)))?;
    if url.scheme() != SCHEME {
        return Err(DeepLinkError::WrongScheme(url.scheme().to_string()));
    }
    if !url.username().is_empty() || url.password().is_some() || url.port().is_some() {
        return Err(DeepLinkError::UnknownKind(quote(link)));
    }
    if url.fragment().is_some() {
        return Err(invalid("fragment", "a Suzent link has no #fragment"));
    }
    let kind = url.host_str().unwrap_or_default();
    let path = url.path();
    match (kind, path) {
        ("chat", _) => parse_chat(&url),
        ("mcp", "/install") => parse_mcp_install(&url).map(DeepLink::InstallMcp),
        ("mcp", other) => Err(DeepLinkError::UnknownKind(format!("mcp{other}"))),
        (other, _) => Err(DeepLinkError::UnknownKind(other.to_string())),
    }
}

fn parse_chat(url: &url::Url) -> Result<DeepLink, DeepLinkError> {
    if let Some((field, _)) = url.query_pairs().next() {
        return Err(DeepLinkError::UnknownField {
            kind: "chat",
            field: field.into_owned(),
        });
    }
    let id = url.path().strip_prefix('/').unwrap_or_default();
    if id.is_empty() {
        return Err(invalid("chat", "the link names no chat (suzent://chat/ID)"));
    }
    let valid = id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(invalid("chat", format!("'{}' is not a chat id", quote(id))));
    }
    Ok(DeepLink::OpenChat {
        chat_id: id.to_string(),
    })
}

fn set_once(
    slot: &mut Option<String>,
    field: &'static str,
    value: String,
) -> Result<(), DeepLinkError> {
    if slot.is_some() {
        return Err(invalid(field, "given more than once"));
    }
    *slot = Some(value);
    Ok(())
}

fn parse_mcp_install(url: &url::Url) -> Result<McpInstall, DeepLinkError> {
    let (mut name, mut command, mut server_url) = (None, None, None);
    let mut args = Vec::new();
    let mut env = BTreeMap::new();
    for (field, value) in url.query_pairs() {
        let value = value.into_owned();
        if value.chars().any(|c| c.is_control()) {
            return Err(invalid(
                field_name(&field),
                "control characters are not allowed",
            ));
        }
        match &*field {
            "name" => set_once(&mut name, "name", value)?,
            "command" => set_once(&mut command, "command", value)?,
            "url" => set_once(&mut server_url, "url", value)?,
            "arg" => {
                if args.len() == MAX_LIST_ITEMS {
                    return Err(invalid("arg", format!("more than {MAX_LIST_ITEMS}")));
                }
                args.push(value);
            }
            "env" => {
                let Some((key, val)) = value.split_once('=') else {
                    return Err(invalid(
                        "env",
                        format!("'{}' is not KEY=VALUE", quote(&value)),
                    ));
                };
                let valid_key = !key.is_empty()
                    && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !key.starts_with(|c: char| c.is_ascii_digit());
                if !valid_key {
                    return Err(invalid(
                        "env",
                        format!("'{}' is not an environment variable name", quote(key)),
                    ));
                }
                if env.len() == MAX_LIST_ITEMS {
                    return Err(invalid("env", format!("more than {MAX_LIST_ITEMS}")));
                }
                if env.insert(key.to_string(), val.to_string()).is_some() {
                    return Err(invalid("env", format!("'{key}' is given more than once")));
                }
            }
            other => {
                return Err(DeepLinkError::UnknownField {
                    kind: "mcp/install",
                    field: quote(other),
                });
            }
        }
    }
    let name = name.ok_or_else(|| invalid("name", "the link names no server (name=…)"))?;
    suzent_mcp::validate_name(&name).map_err(|_| {
        invalid(
            "name",
            "a server name has 1 to 64 characters and no control characters",
        )
    })?;
    match (&command, &server_url) {
        (Some(c), None) if !c.trim().is_empty() => {}
        (None, Some(u)) => {
            let parsed = url::Url::parse(u)
                .map_err(|_| invalid("url", format!("'{}' is not a URL", quote(u))))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(invalid(
                    "url",
                    format!("'{}' is not an http(s) URL", quote(u)),
                ));
            }
            if !args.is_empty() || !env.is_empty() {
                return Err(invalid(
                    "url",
                    "an HTTP server takes no arg or env fields (those are for command)",
                ));
            }
        }
        (Some(_), Some(_)) => return Err(invalid("command", "give command or url, not both")),
        _ => return Err(invalid("command", "the link gives neither command nor url")),
    }
    Ok(McpInstall {
        name,
        command,
        args,
        env,
        url: server_url,
    })
}

fn field_name(field: &str) -> &'static str {
    match field {
        "name" => "name",
        "command" => "command",
        "url" => "url",
        "arg" => "arg",
        "env" => "env",
        _ => "field",
    }
}

/// The first [`QUOTED_CHARS`] characters of `text`, for messages.
fn quote(text: &str) -> String {
    let mut quoted: String = text.chars().take(QUOTED_CHARS).collect();
    if text.chars().count() > QUOTED_CHARS {
        quoted.push('…');
    }
    quoted
}

/// An MCP install waiting for the user's Confirm or Cancel.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingMcpInstall {
    /// Request id (a UUID), named by the confirm and cancel commands.
    pub id: String,
    /// The server the link asks to add, in full.
    pub server: McpInstall,
}

/// Something a link did that the window shows once.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum DeepLinkNotice {
    /// Open this chat.
    OpenChat {
        /// The chat's id.
        #[serde(rename = "chatId")]
        chat_id: String,
    },
    /// The link was refused.
    Refused {
        /// The start of the link.
        link: String,
        /// Why.
        message: String,
    },
}

/// What the window reads from the inbox: installs still waiting (kept until answered) and the
/// notices since the last read (handed over once).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeepLinkInboxView {
    /// Installs waiting for an answer, oldest first.
    pub pending: Vec<PendingMcpInstall>,
    /// Chats to open and refusals, oldest first.
    pub notices: Vec<DeepLinkNotice>,
}

#[derive(Default)]
struct InboxState {
    pending: Vec<PendingMcpInstall>,
    notices: Vec<DeepLinkNotice>,
}

/// Links received and not yet handled by the window. Holds no secret beyond what the links
/// carried, and only in memory.
#[derive(Default)]
pub struct DeepLinkInbox {
    state: Mutex<InboxState>,
}

/// What [`DeepLinkInbox::receive`] made of a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// An install that now waits for the user's answer (or already did).
    Pending(PendingMcpInstall),
    /// A chat to open or a refusal, queued for the window.
    Notice(DeepLinkNotice),
}

/// Most notices kept for a window that does not read them (the oldest go first).
const MAX_NOTICES: usize = 32;

impl DeepLinkInbox {
    /// An empty inbox.
    pub fn new() -> DeepLinkInbox {
        DeepLinkInbox::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, InboxState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a link in: an install becomes pending (the same server asked twice stays one
    /// request), a chat link or a refusal becomes a notice. Returns what it became, for logs and
    /// the caller's event.
    pub fn receive(&self, link: &str) -> Received {
        let mut state = self.lock();
        let notice = match parse_deep_link(link) {
            Ok(DeepLink::OpenChat { chat_id }) => DeepLinkNotice::OpenChat { chat_id },
            Ok(DeepLink::InstallMcp(server)) => {
                if let Some(waiting) = state.pending.iter().find(|p| p.server == server) {
                    return Received::Pending(waiting.clone());
                }
                if state.pending.len() >= MAX_PENDING_INSTALLS {
                    DeepLinkNotice::Refused {
                        link: quote(link),
                        message: format!(
                            "{MAX_PENDING_INSTALLS} MCP installs already wait for an answer"
                        ),
                    }
                } else {
                    let pending = PendingMcpInstall {
                        id: uuid::Uuid::new_v4().to_string(),
                        server,
                    };
                    state.pending.push(pending.clone());
                    return Received::Pending(pending);
                }
            }
            Err(e) => DeepLinkNotice::Refused {
                link: quote(link),
                message: e.to_string(),
            },
        };
        if state.notices.len() == MAX_NOTICES {
            state.notices.remove(0);
        }
        state.notices.push(notice.clone());
        Received::Notice(notice)
    }

    /// The pending installs and the notices since the last call (which are handed over now).
    pub fn take(&self) -> DeepLinkInboxView {
        let mut state = self.lock();
        DeepLinkInboxView {
            pending: state.pending.clone(),
            notices: std::mem::take(&mut state.notices),
        }
    }

    /// How many installs wait for an answer.
    pub fn pending_count(&self) -> u32 {
        u32::try_from(self.lock().pending.len()).unwrap_or(u32::MAX)
    }

    /// The pending install `id`, left in place.
    pub fn pending(&self, id: &str) -> Option<PendingMcpInstall> {
        self.lock().pending.iter().find(|p| p.id == id).cloned()
    }

    /// Removes the pending install `id` (after Confirm added it, or on Cancel).
    pub fn remove(&self, id: &str) -> Option<PendingMcpInstall> {
        let mut state = self.lock();
        let at = state.pending.iter().position(|p| p.id == id)?;
        Some(state.pending.remove(at))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn refused(link: &str) -> String {
        parse_deep_link(link).expect_err("refused").to_string()
    }

    #[test]
    fn a_chat_link_names_the_chat_to_open() {
        assert_eq!(
            parse_deep_link("suzent://chat/0194f2c1-7a2b-7c3d-9e4f-0123456789ab").unwrap(),
            DeepLink::OpenChat {
                chat_id: "0194f2c1-7a2b-7c3d-9e4f-0123456789ab".into()
            }
        );
    }

    #[test]
    fn a_stdio_install_link_carries_command_args_and_env_in_order() {
        let link = "suzent://mcp/install?name=files&command=npx&arg=-y&arg=%40modelcontextprotocol%2Fserver-filesystem&arg=%2Ftmp&env=TOKEN%3Dabc%3Ddef&env=MODE%3Dro";
        assert_eq!(
            parse_deep_link(link).unwrap(),
            DeepLink::InstallMcp(McpInstall {
                name: "files".into(),
                command: Some("npx".into()),
                args: vec![
                    "-y".into(),
                    "@modelcontextprotocol/server-filesystem".into(),
                    "/tmp".into()
                ],
                env: BTreeMap::from([
                    ("MODE".to_string(), "ro".to_string()),
                    ("TOKEN".to_string(), "abc=def".to_string()),
                ]),
                url: None,
            })
        );
    }

    #[test]
    fn an_http_install_link_carries_the_url_and_adds_the_server_untrusted() {
        let DeepLink::InstallMcp(install) =
            parse_deep_link("suzent://mcp/install?name=docs&url=https%3A%2F%2Fdocs.test%2Fmcp")
                .unwrap()
        else {
            panic!("not an install");
        };
        assert_eq!(
            install.config(),
            McpServerConfig {
                url: Some("https://docs.test/mcp".into()),
                trusted: false,
                disabled: false,
                ..McpServerConfig::default()
            }
        );
    }

    #[test]
    fn unknown_kinds_fields_and_schemes_are_refused_with_their_name() {
        assert_eq!(
            refused("suzent://settings/open"),
            "unknown link kind 'settings' (known: suzent://chat/ID, suzent://mcp/install?…)"
        );
        assert_eq!(
            refused("suzent://mcp/remove?name=x"),
            "unknown link kind 'mcp/remove' (known: suzent://chat/ID, suzent://mcp/install?…)"
        );
        assert_eq!(
            refused("suzent://mcp/install?name=x&command=sh&trusted=true"),
            "unknown field 'trusted' in a mcp/install link"
        );
        assert_eq!(
            refused("suzent://chat/abc?autorun=1"),
            "unknown field 'autorun' in a chat link"
        );
        assert_eq!(
            refused("https://evil.test/chat/abc"),
            "links with the scheme 'https' are not Suzent links (expected suzent://)"
        );
        assert_eq!(refused("not a link"), "'not a link' is not a URL");
    }

    #[test]
    fn bad_values_are_refused_with_the_field() {
        assert_eq!(
            refused("suzent://mcp/install?command=sh"),
            "name: the link names no server (name=…)"
        );
        assert_eq!(
            refused("suzent://mcp/install?name=x"),
            "command: the link gives neither command nor url"
        );
        assert_eq!(
            refused("suzent://mcp/install?name=x&command=sh&url=https%3A%2F%2Fa.test"),
            "command: give command or url, not both"
        );
        assert_eq!(
            refused("suzent://mcp/install?name=x&url=file%3A%2F%2F%2Fetc%2Fpasswd"),
            "url: 'file:///etc/passwd' is not an http(s) URL"
        );
        assert_eq!(
            refused("suzent://mcp/install?name=x&command=a&command=b"),
            "command: given more than once"
        );
        assert_eq!(
            refused("suzent://mcp/install?name=x&command=a&env=NOEQUALS"),
            "env: 'NOEQUALS' is not KEY=VALUE"
        );
        assert_eq!(
            refused("suzent://mcp/install?name=x&command=a&env=LD%20PRELOAD%3D1"),
            "env: 'LD PRELOAD' is not an environment variable name"
        );
        assert_eq!(
            refused("suzent://mcp/install?name=x&command=a%0Ab"),
            "command: control characters are not allowed"
        );
        assert_eq!(
            refused("suzent://chat/..%2F..%2Fetc"),
            "chat: '..%2F..%2Fetc' is not a chat id"
        );
        assert_eq!(
            refused("suzent://chat/"),
            "chat: the link names no chat (suzent://chat/ID)"
        );
        let long = format!("suzent://chat/{}", "a".repeat(MAX_LINK_BYTES));
        assert_eq!(
            refused(&long),
            format!(
                "the link is {} bytes long; at most {MAX_LINK_BYTES} are accepted",
                long.len()
            )
        );
    }

    #[test]
    fn an_install_waits_in_the_inbox_until_removed_and_is_asked_once() {
        let inbox = DeepLinkInbox::new();
        let link = "suzent://mcp/install?name=files&command=npx&arg=-y";
        let Received::Pending(first) = inbox.receive(link) else {
            panic!("not pending");
        };
        let Received::Pending(again) = inbox.receive(link) else {
            panic!("not pending");
        };
        assert_eq!(again, first);
        assert_eq!(
            inbox.take(),
            DeepLinkInboxView {
                pending: vec![first.clone()],
                notices: vec![]
            }
        );
        assert_eq!(inbox.pending(&first.id), Some(first.clone()));
        assert_eq!(inbox.remove(&first.id), Some(first.clone()));
        assert_eq!(inbox.remove(&first.id), None);
        assert_eq!(inbox.take(), DeepLinkInboxView::default());
    }

    #[test]
    fn chat_links_and_refusals_are_handed_to_the_window_once() {
        let inbox = DeepLinkInbox::new();
        inbox.receive("suzent://chat/abc");
        inbox.receive("suzent://nope");
        assert_eq!(
            inbox.take().notices,
            vec![
                DeepLinkNotice::OpenChat {
                    chat_id: "abc".into()
                },
                DeepLinkNotice::Refused {
                    link: "suzent://nope".into(),
                    message:
                        "unknown link kind 'nope' (known: suzent://chat/ID, suzent://mcp/install?…)"
                            .into()
                },
            ]
        );
        assert_eq!(inbox.take().notices, vec![]);
    }

    #[test]
    fn at_most_a_few_installs_wait_at_once() {
        let inbox = DeepLinkInbox::new();
        for i in 0..MAX_PENDING_INSTALLS {
            inbox.receive(&format!("suzent://mcp/install?name=s{i}&command=x"));
        }
        assert_eq!(
            inbox.receive("suzent://mcp/install?name=last&command=x"),
            Received::Notice(DeepLinkNotice::Refused {
                link: "suzent://mcp/install?name=last&command=x".into(),
                message: format!("{MAX_PENDING_INSTALLS} MCP installs already wait for an answer"),
            })
        );
        assert_eq!(inbox.take().pending.len(), MAX_PENDING_INSTALLS);
    }
}
