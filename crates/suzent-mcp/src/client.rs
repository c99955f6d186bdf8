//! One live connection to an MCP server (rmcp client): a stdio child process or a streamable HTTP
//! endpoint.
//!
//! For stdio servers Suzent spawns the process itself: stderr lines are logged, stdout lines that
//! are not JSON (banners, stray prints) are logged and dropped, never fatal. When the process
//! exits the connection closes and every pending and later request fails at once.

use crate::config::{McpServerConfig, Transport, resolve_secrets};
use crate::error::McpError;
use crate::shellpath::{merged_path, resolve_program};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::Value;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Looks up a keychain entry by name (for `${keychain:ENTRY}` references). The Suzent runtime
/// answers from the MCP namespace of the keychain only (account `mcp:ENTRY`).
pub type SecretLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Called (off the connection's task) when the server sends `notifications/tools/list_changed`.
pub type ListChanged = Arc<dyn Fn() + Send + Sync>;

/// Longest stdout/stderr line kept in a log record.
const LOG_LINE_MAX: usize = 500;

/// A tool as the server describes it (also the unit of the schema cache).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteTool {
    /// The server's name for it (used in calls).
    pub name: String,
    /// Human title, if any.
    pub title: Option<String>,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments, as the server sent it.
    pub input_schema: Value,
    /// `annotations.readOnlyHint`.
    pub read_only_hint: Option<bool>,
    /// `annotations.destructiveHint`.
    pub destructive_hint: Option<bool>,
}

/// The result of a call: text for the model, and whether the server flagged it as an error.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    /// Text of the content blocks (images and binary resources are described, not inlined).
    pub text: String,
    /// `isError` of the result.
    pub is_error: bool,
}

struct Handler {
    server: String,
    on_change: Option<ListChanged>,
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        tracing::info!(server = %self.server, "MCP server changed its tool list");
        if let Some(cb) = &self.on_change {
            cb();
        }
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("suzent", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A live connection. Dropping it closes the connection and kills a stdio server.
pub struct McpConnection {
    server: String,
    service: RunningService<RoleClient, Handler>,
    child: Mutex<Option<tokio::process::Child>>,
}

impl std::fmt::Debug for McpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnection")
            .field("server", &self.server)
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl McpConnection {
    /// Starts (stdio) or reaches (HTTP) the server and runs the MCP handshake, within the
    /// server's start-up timeout.
    pub async fn connect(
        server: &str,
        config: &McpServerConfig,
        secrets: &SecretLookup,
        on_change: Option<ListChanged>,
    ) -> Result<McpConnection, McpError> {
        let timeout = config.startup_timeout();
        match tokio::time::timeout(
            timeout,
            Self::connect_inner(server, config, secrets, on_change),
        )
        .await
        {
            Ok(r) => r,
            Err(_) => Err(McpError::Connect {
                server: server.to_string(),
                message: format!(
                    "no answer to the MCP handshake within {} s (startupTimeoutSec)",
                    timeout.as_secs()
                ),
            }),
        }
    }

    async fn connect_inner(
        server: &str,
        config: &McpServerConfig,
        secrets: &SecretLookup,
        on_change: Option<ListChanged>,
    ) -> Result<McpConnection, McpError> {
        let handler = Handler {
            server: server.to_string(),
            on_change,
        };
        let connect_err = |message: String| McpError::Connect {
            server: server.to_string(),
            message,
        };
        let secret = |e: &str| secrets(e);
        match config.transport(server)? {
            Transport::Stdio { command } => {
                let path = match config.env.get("PATH") {
                    Some(p) => p.into(),
                    None => merged_path(),
                };
                let program = resolve_program(command, &path).ok_or_else(|| {
                    connect_err(format!(
                        "command '{command}' not found on PATH (the login shell's PATH and Suzent's were searched)"
                    ))
                })?;
                let mut cmd = tokio::process::Command::new(&program);
                cmd.args(&config.args)
                    .env_clear()
                    .envs(inherited_env(std::env::vars_os()))
                    .env("PATH", &path)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true);
                for (k, v) in &config.env {
                    cmd.env(
                        k,
                        resolve_secrets(server, &format!("env '{k}'"), v, &secret)?,
                    );
                }
                if let Some(cwd) = &config.cwd {
                    cmd.current_dir(cwd);
                }
                let mut child = cmd
                    .spawn()
                    .map_err(|e| connect_err(format!("cannot run '{}': {e}", program.display())))?;
                let stdin = child
                    .stdin
                    .take()
                    .ok_or_else(|| connect_err("no stdin pipe".into()))?;
                let stdout = child
                    .stdout
                    .take()
                    .ok_or_else(|| connect_err("no stdout pipe".into()))?;
                if let Some(stderr) = child.stderr.take() {
                    let name = server.to_string();
                    tokio::spawn(async move {
                        let mut lines = BufReader::new(stderr).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            tracing::info!(server = %name, "MCP server stderr: {}", bounded(&line));
                        }
                    });
                }
                let (json_in, mut json_out) = tokio::io::duplex(1 << 16);
                let name = server.to_string();
                tokio::spawn(async move {
                    let mut lines = BufReader::new(stdout).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        let t = line.trim_start();
                        if t.starts_with('{') || t.starts_with('[') {
                            if json_out.write_all(line.as_bytes()).await.is_err()
                                || json_out.write_all(b"\n").await.is_err()
                            {
                                break;
                            }
                        } else if !t.is_empty() {
                            tracing::warn!(server = %name, "MCP server printed a non-JSON line on stdout (ignored): {}", bounded(&line));
                        }
                    }
                    // stdout closed: the server exited; closing the pipe ends the connection.
                    let _ = json_out.shutdown().await;
                });
                let service = handler
                    .serve((json_in, stdin))
                    .await
                    .map_err(|e| connect_err(format!("MCP handshake failed: {e}")))?;
                Ok(McpConnection {
                    server: server.to_string(),
                    service,
                    child: Mutex::new(Some(child)),
                })
            }
            Transport::Http { url } => {
                use reqwest::header::{HeaderName, HeaderValue};
                use rmcp::transport::StreamableHttpClientTransport;
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                let mut headers = std::collections::HashMap::new();
                for (k, v) in &config.headers {
                    let value = resolve_secrets(server, &format!("header '{k}'"), v, &secret)?;
                    let name = HeaderName::from_bytes(k.as_bytes())
                        .map_err(|e| connect_err(format!("header name '{k}': {e}")))?;
                    let value = HeaderValue::from_str(&value)
                        .map_err(|e| connect_err(format!("header '{k}': {e}")))?;
                    headers.insert(name, value);
                }
                let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url);
                transport_config.custom_headers = headers;
                let transport = StreamableHttpClientTransport::with_client(
                    reqwest::Client::new(),
                    transport_config,
                );
                let service = handler
                    .serve(transport)
                    .await
                    .map_err(|e| connect_err(format!("MCP handshake with {url} failed: {e}")))?;
                Ok(McpConnection {
                    server: server.to_string(),
                    service,
                    child: Mutex::new(None),
                })
            }
        }
    }

    /// Whether the connection has ended (the server exited or the transport closed).
    pub fn is_closed(&self) -> bool {
        if self.service.is_closed() {
            return true;
        }
        match self.child.lock() {
            Ok(mut child) => match child.as_mut().map(|c| c.try_wait()) {
                Some(Ok(Some(_))) | Some(Err(_)) => true,
                Some(Ok(None)) | None => false,
            },
            Err(_) => true,
        }
    }

    /// Every tool of the server (all pages).
    pub async fn list_tools(&self) -> Result<Vec<RemoteTool>, McpError> {
        let tools = self
            .service
            .list_all_tools()
            .await
            .map_err(|e| self.request_error(e))?;
        Ok(tools
            .into_iter()
            .map(|t| RemoteTool {
                name: t.name.to_string(),
                title: t
                    .title
                    .clone()
                    .or_else(|| t.annotations.as_ref().and_then(|a| a.title.clone())),
                description: t.description.as_deref().unwrap_or_default().to_string(),
                input_schema: Value::Object((*t.input_schema).clone()),
                read_only_hint: t.annotations.as_ref().and_then(|a| a.read_only_hint),
                destructive_hint: t.annotations.as_ref().and_then(|a| a.destructive_hint),
            })
            .collect())
    }

    /// Calls `tool` (the server's own name) with `args` (a JSON object, or null), within
    /// `timeout`.
    pub async fn call_tool(
        &self,
        tool: &str,
        args: Value,
        timeout: Duration,
    ) -> Result<CallOutput, McpError> {
        let arguments = match args {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(McpError::Request {
                    server: self.server.clone(),
                    message: format!("arguments of '{tool}' must be a JSON object, got {other}"),
                });
            }
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = arguments;
        let result = tokio::time::timeout(timeout, self.service.call_tool(params))
            .await
            .map_err(|_| McpError::Timeout {
                server: self.server.clone(),
                tool: tool.to_string(),
                seconds: timeout.as_secs(),
            })?
            .map_err(|e| self.request_error(e))?;
        let mut parts: Vec<String> = Vec::new();
        for block in &result.content {
            let v = serde_json::to_value(block).unwrap_or(Value::Null);
            parts.push(describe_block(&v));
        }
        if parts.is_empty()
            && let Some(s) = &result.structured_content
        {
            parts.push(s.to_string());
        }
        Ok(CallOutput {
            text: parts.join("\n"),
            is_error: result.is_error.unwrap_or(false),
        })
    }

    /// Closes the connection and stops a stdio server.
    pub async fn close(self) {
        let McpConnection { service, child, .. } = self;
        let _ = tokio::time::timeout(Duration::from_secs(3), service.cancel()).await;
        let child = child.lock().ok().and_then(|mut c| c.take());
        if let Some(mut child) = child {
            let _ = child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(3), child.wait()).await;
        }
    }

    fn request_error(&self, e: ServiceError) -> McpError {
        let message = match &e {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                return McpError::Stopped {
                    server: self.server.clone(),
                };
            }
            ServiceError::McpError(data) => format!("error {}: {}", data.code.0, data.message),
            other => other.to_string(),
        };
        McpError::Request {
            server: self.server.clone(),
            message,
        }
    }
}

/// Text for one content block (by its wire `type`).
fn describe_block(v: &Value) -> String {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default();
    match s("type") {
        "text" => s("text").to_string(),
        "image" | "audio" => format!(
            "[{} content: {}, {} base64 characters]",
            s("type"),
            s("mimeType"),
            s("data").len()
        ),
        "resource" => {
            let r = v.get("resource").cloned().unwrap_or(Value::Null);
            match r.get("text").and_then(Value::as_str) {
                Some(text) => text.to_string(),
                None => format!(
                    "[resource {}]",
                    r.get("uri").and_then(Value::as_str).unwrap_or_default()
                ),
            }
        }
        "resource_link" => format!("[resource link {} {}]", s("name"), s("uri")),
        _ => v.to_string(),
    }
}

fn bounded(line: &str) -> &str {
    suzent_core::text::prefix_bytes(line, LOG_LINE_MAX)
}

/// Variables a stdio MCP server inherits from Suzent's environment (as the MCP TypeScript SDK's
/// `getDefaultEnvironment`, plus locale and temp dir); everything else — model API keys, cloud
/// credentials, tokens — stays out unless the server's config sets it in `env`.
#[cfg(not(windows))]
pub const INHERITED_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
];
/// Variables a stdio MCP server inherits from Suzent's environment (see the non-Windows list).
#[cfg(windows)]
pub const INHERITED_ENV: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERPROFILE",
];

/// The subset of `vars` named in [`INHERITED_ENV`] (names compared case-insensitively on
/// Windows), skipping exported shell functions (values starting with `()`), as the SDK does.
pub fn inherited_env(
    vars: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    vars.into_iter()
        .filter(|(k, v)| {
            let name = k.to_string_lossy();
            let listed = INHERITED_ENV.iter().any(|n| {
                if cfg!(windows) {
                    n.eq_ignore_ascii_case(&name)
                } else {
                    *n == name
                }
            });
            listed && !v.to_string_lossy().starts_with("()")
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod env_tests {
    #[test]
    fn a_stdio_server_inherits_only_the_listed_variables() {
        let vars = [
            ("HOME", "/home/u"),
            ("PATH", "/usr/bin"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("AWS_SECRET_ACCESS_KEY", "aws"),
            ("GITHUB_TOKEN", "ghp"),
            ("LANG", "C.UTF-8"),
            ("TERM", "() { :; }; echo pwned"),
        ]
        .map(|(k, v)| (k.into(), v.into()));
        let kept: Vec<String> = super::inherited_env(vars)
            .into_iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        if cfg!(windows) {
            assert_eq!(kept, ["PATH"]);
        } else {
            assert_eq!(kept, ["HOME", "PATH", "LANG"]);
        }
    }
}
