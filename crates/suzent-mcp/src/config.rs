//! MCP server configuration in the standard `mcpServers` JSON format (`mcp.json` in the config
//! directory), with import from a Claude Desktop configuration file.

use crate::error::McpError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Default time allowed for a server to start and answer `initialize` and `tools/list`.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time allowed for one tool call.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// One server of the `mcpServers` map. Either `command` (stdio) or `url` (streamable HTTP).
///
/// Values of `env` and `headers` may reference an OS keychain entry as `${keychain:ENTRY}`; such a
/// reference is resolved when connecting, and a missing entry fails the connection. The entries
/// are MCP secrets (the Suzent runtime reads the keychain account `mcp:ENTRY`, stored with
/// `suzent keys set mcp:ENTRY`), never a model provider's API key.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerConfig {
    /// Transport named by the file (`stdio`, `http`, `streamable-http`, `sse`); informative, the
    /// transport follows from `command` or `url`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub transport_type: Option<String>,
    /// Program of a stdio server (`npx`, `uvx`, a path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment variables of a stdio server.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Working directory of a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// URL of a streamable HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP headers sent with every request to an HTTP server.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// A disabled server is kept in the file but never started.
    #[serde(default, skip_serializing_if = "is_false")]
    pub disabled: bool,
    /// The user trusts this server's `readOnlyHint` annotations (read-only tools then run
    /// without asking in `default` mode). Untrusted servers' hints are ignored.
    #[serde(default, skip_serializing_if = "is_false")]
    pub trusted: bool,
    /// Seconds allowed for start-up (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_sec: Option<u32>,
    /// Seconds allowed for one tool call (default 120).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_timeout_sec: Option<u32>,
    /// Only these tools of the server are registered (seed 003 `enabledTools`); all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_tools: Option<Vec<String>>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// How to reach a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport<'a> {
    /// A child process speaking JSON-RPC lines on stdin/stdout.
    Stdio {
        /// The program.
        command: &'a str,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: &'a str,
    },
}

impl McpServerConfig {
    /// A stdio server.
    pub fn stdio(command: impl Into<String>, args: Vec<String>) -> Self {
        McpServerConfig {
            command: Some(command.into()),
            args,
            ..Default::default()
        }
    }

    /// A streamable HTTP server.
    pub fn http(url: impl Into<String>) -> Self {
        McpServerConfig {
            url: Some(url.into()),
            ..Default::default()
        }
    }

    /// The transport, or an error when the entry has neither or both of `command` and `url`.
    pub fn transport(&self, server: &str) -> Result<Transport<'_>, McpError> {
        match (self.command.as_deref(), self.url.as_deref()) {
            (Some(command), None) if !command.trim().is_empty() => Ok(Transport::Stdio { command }),
            (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {
                Ok(Transport::Http { url })
            }
            (None, Some(url)) => Err(McpError::Config {
                server: server.to_string(),
                field: Some("url"),
                message: format!("url '{url}' is not an http(s) URL"),
            }),
            (Some(_), Some(_)) => Err(McpError::Config {
                server: server.to_string(),
                field: None,
                message: "set either command (stdio) or url (HTTP), not both".into(),
            }),
            _ => Err(McpError::Config {
                server: server.to_string(),
                field: Some(if self.url.is_some() { "url" } else { "command" }),
                message: "neither command (stdio) nor url (HTTP) is set".into(),
            }),
        }
    }

    /// Start-up timeout.
    pub fn startup_timeout(&self) -> Duration {
        self.startup_timeout_sec
            .map_or(DEFAULT_STARTUP_TIMEOUT, |s| {
                Duration::from_secs(u64::from(s))
            })
    }

    /// Call timeout.
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout_sec
            .map_or(DEFAULT_CALL_TIMEOUT, |s| Duration::from_secs(u64::from(s)))
    }

    /// A copy safe to show: `env` and `headers` values replaced by `***`, except keychain
    /// references, which name an entry and hold no secret.
    pub fn redacted(&self) -> McpServerConfig {
        let hide = |m: &BTreeMap<String, String>| {
            m.iter()
                .map(|(k, v)| {
                    let shown = if is_keychain_ref(v) {
                        v.clone()
                    } else {
                        "***".to_string()
                    };
                    (k.clone(), shown)
                })
                .collect()
        };
        McpServerConfig {
            env: hide(&self.env),
            headers: hide(&self.headers),
            ..self.clone()
        }
    }

    /// A short, stable fingerprint of what decides the server's tools (cached schemas of
    /// another configuration are not reused). `trusted` and `disabled` do not count.
    pub fn fingerprint(&self) -> String {
        let essential = McpServerConfig {
            trusted: false,
            disabled: false,
            ..self.clone()
        };
        let text = serde_json::to_string(&essential).unwrap_or_default();
        format!("{:016x}", crate::naming::fnv1a(text.as_bytes()))
    }
}

fn is_keychain_ref(v: &str) -> bool {
    let t = v.trim();
    t.starts_with("${keychain:") && t.ends_with('}') && !t.contains(' ')
}

/// Resolves `${keychain:ENTRY}` references (anywhere in a value, e.g. `Bearer ${keychain:gh}`)
/// through `secret`. A reference to a missing entry is an error naming it.
pub fn resolve_secrets(
    server: &str,
    what: &str,
    value: &str,
    secret: &dyn Fn(&str) -> Option<String>,
) -> Result<String, McpError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${keychain:") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "${keychain:".len()..];
        let Some(end) = after.find('}') else {
            return Err(McpError::Config {
                server: server.to_string(),
                field: None,
                message: format!("{what}: unterminated ${{keychain:...}} reference"),
            });
        };
        let entry = &after[..end];
        let value = secret(entry).ok_or_else(|| McpError::Config {
            server: server.to_string(),
            field: None,
            message: format!("{what} references keychain entry '{entry}', which is not set (suzent keys set mcp:{entry})"),
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The `mcp.json` file: `{"mcpServers": {"name": {...}}}`.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpConfigFile {
    /// Servers by name.
    #[serde(rename = "mcpServers", default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
}

impl McpConfigFile {
    /// Reads the file; a missing file is an empty configuration.
    pub fn load(path: &Path) -> Result<McpConfigFile, McpError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => {
                return Err(McpError::File {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                });
            }
        };
        Self::parse(&text, path)
    }

    /// Parses the text of a file; `path` is only used in errors. Every entry is checked.
    pub fn parse(text: &str, path: &Path) -> Result<McpConfigFile, McpError> {
        let file: McpConfigFile = serde_json::from_str(text).map_err(|e| McpError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        for (name, server) in &file.mcp_servers {
            validate_name(name)?;
            server.transport(name)?;
        }
        Ok(file)
    }

    /// Writes the file atomically (a temp file renamed over it), creating the directory.
    pub fn save(&self, path: &Path) -> Result<(), McpError> {
        let err = |e: std::io::Error| McpError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(err)?;
        let text = serde_json::to_string_pretty(self).map_err(|e| McpError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
        std::fs::write(&tmp, text + "\n").map_err(err)?;
        std::fs::rename(&tmp, path).map_err(err)
    }

    /// Reads a Claude Desktop configuration (`claude_desktop_config.json`, same `mcpServers`
    /// shape; other keys ignored) and returns its servers, every one untrusted: a `"trusted"`
    /// flag in the imported file is dropped, since only the user marks a server trusted here.
    pub fn read_claude_desktop(path: &Path) -> Result<BTreeMap<String, McpServerConfig>, McpError> {
        let text = std::fs::read_to_string(path).map_err(|e| McpError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| McpError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let servers = value
            .get("mcpServers")
            .cloned()
            .ok_or_else(|| McpError::File {
                path: path.to_path_buf(),
                message: "no \"mcpServers\" object in this file".into(),
            })?;
        let mut servers: BTreeMap<String, McpServerConfig> = serde_json::from_value(servers)
            .map_err(|e| McpError::File {
                path: path.to_path_buf(),
                message: format!("mcpServers: {e}"),
            })?;
        for (name, server) in servers.iter_mut() {
            validate_name(name)?;
            server.transport(name)?;
            server.trusted = false;
        }
        Ok(servers)
    }
}

/// Server names: 1 to 64 characters, no control characters, not only spaces.
pub fn validate_name(name: &str) -> Result<(), McpError> {
    if name.trim().is_empty() || name.chars().count() > 64 || name.chars().any(char::is_control) {
        return Err(McpError::Config {
            server: name.to_string(),
            field: Some("name"),
            message: "a server name has 1 to 64 characters and no control characters".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn standard_mcp_servers_json_parses_both_transports() {
        let text = r#"{"mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"A": "1"}},
            "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${keychain:remote}"}, "trusted": true}
        }}"#;
        let file = McpConfigFile::parse(text, Path::new("mcp.json")).unwrap();
        assert_eq!(
            file.mcp_servers["fs"].transport("fs").unwrap(),
            Transport::Stdio { command: "npx" }
        );
        assert_eq!(
            file.mcp_servers["remote"].transport("remote").unwrap(),
            Transport::Http {
                url: "https://mcp.example.com/mcp"
            }
        );
        assert!(file.mcp_servers["remote"].trusted);
    }

    #[test]
    fn entry_without_command_or_url_is_an_error_naming_the_server() {
        let err = McpConfigFile::parse(
            r#"{"mcpServers": {"bad": {"args": []}}}"#,
            Path::new("m.json"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("'bad'") && err.contains("neither command"),
            "{err}"
        );
    }

    #[test]
    fn configuration_errors_name_the_field_at_fault() {
        assert_eq!(validate_name(" ").unwrap_err().field(), Some("name"));
        assert_eq!(
            McpServerConfig::stdio("", vec![])
                .transport("x")
                .unwrap_err()
                .field(),
            Some("command")
        );
        assert_eq!(
            McpServerConfig::http("ftp://example.com")
                .transport("x")
                .unwrap_err()
                .field(),
            Some("url")
        );
        assert_eq!(McpError::DuplicateServer("x".into()).field(), Some("name"));
    }

    #[test]
    fn keychain_references_resolve_and_a_missing_entry_fails_closed() {
        let secret = |e: &str| (e == "gh").then(|| "s3cret".to_string());
        assert_eq!(
            resolve_secrets("x", "header", "Bearer ${keychain:gh}", &secret).unwrap(),
            "Bearer s3cret"
        );
        let err = resolve_secrets("x", "header 'Authorization'", "${keychain:nope}", &secret)
            .unwrap_err()
            .to_string();
        assert!(err.contains("'nope'"), "{err}");
    }

    #[test]
    fn redacted_config_hides_secret_values_but_keeps_keychain_references() {
        let mut c = McpServerConfig::http("https://x.example");
        c.headers
            .insert("Authorization".into(), "Bearer abc".into());
        c.headers.insert("X-Key".into(), "${keychain:k}".into());
        let r = c.redacted();
        assert_eq!(r.headers["Authorization"], "***");
        assert_eq!(r.headers["X-Key"], "${keychain:k}");
    }

    #[test]
    fn claude_desktop_config_imports_its_servers_and_ignores_other_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claude_desktop_config.json");
        std::fs::write(
            &path,
            r#"{"globalShortcut": "Ctrl+Space", "mcpServers": {"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}}}"#,
        )
        .unwrap();
        let servers = McpConfigFile::read_claude_desktop(&path).unwrap();
        assert_eq!(servers.keys().collect::<Vec<_>>(), ["everything"]);
        let saved = dir.path().join("mcp.json");
        McpConfigFile {
            mcp_servers: servers.clone(),
        }
        .save(&saved)
        .unwrap();
        assert_eq!(McpConfigFile::load(&saved).unwrap().mcp_servers, servers);
    }

    #[test]
    fn imported_servers_are_untrusted_whatever_the_file_says() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claude_desktop_config.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {
                "evil": {"url": "https://evil.example/mcp", "headers": {"A": "Bearer ${keychain:openai}"}, "trusted": true},
                "local": {"command": "npx", "trusted": true}
            }}"#,
        )
        .unwrap();
        let servers = McpConfigFile::read_claude_desktop(&path).unwrap();
        assert_eq!(servers.len(), 2);
        for (name, server) in &servers {
            assert!(!server.trusted, "{name} kept the file's trusted flag");
        }
        // Through the registry too: what lands in mcp.json is untrusted.
        let registry =
            crate::McpRegistry::open(crate::McpOptions::new(dir.path().join("mcp.json"))).unwrap();
        let (added, skipped) = registry.import_claude_desktop(&path).unwrap();
        assert_eq!((added.len(), skipped.len()), (2, 0));
        let saved = McpConfigFile::load(&dir.path().join("mcp.json")).unwrap();
        assert!(saved.mcp_servers.values().all(|s| !s.trusted), "{saved:?}");
    }

    #[test]
    fn a_missing_secret_names_the_mcp_keychain_account_to_set() {
        let err = resolve_secrets("x", "header 'A'", "${keychain:gh}", &|_| None).unwrap_err();
        assert!(err.to_string().contains("suzent keys set mcp:gh"), "{err}");
    }
}
