//! Errors of the MCP client and registry.

use std::path::PathBuf;

/// An MCP error. Messages name the server and say what to do.
#[derive(Debug, Clone, thiserror::Error)]
pub enum McpError {
    /// The configuration file cannot be read, parsed or written.
    #[error("MCP configuration {path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// A server entry is invalid.
    #[error("MCP server '{server}': {message}")]
    Config {
        /// The server.
        server: String,
        /// The configuration field at fault (`name`, `command`, `url`), when it is one field.
        field: Option<&'static str>,
        /// What is wrong.
        message: String,
    },
    /// No server with this name is configured.
    #[error("no MCP server named '{0}' (see `suzent mcp list`)")]
    UnknownServer(String),
    /// A server with this name already exists.
    #[error("an MCP server named '{0}' already exists (remove it first with `suzent mcp rm`)")]
    DuplicateServer(String),
    /// The server is disabled.
    #[error("MCP server '{0}' is disabled (enable it in the MCP settings)")]
    Disabled(String),
    /// Starting or initializing the server failed.
    #[error("MCP server '{server}' failed to start: {message}")]
    Connect {
        /// The server.
        server: String,
        /// What failed.
        message: String,
    },
    /// The server failed recently and is not retried before its backoff ends.
    #[error(
        "MCP server '{server}' is unavailable ({message}); it is restarted in {retry_in_ms} ms"
    )]
    Backoff {
        /// The server.
        server: String,
        /// The last failure.
        message: String,
        /// Milliseconds until the next start attempt.
        retry_in_ms: u64,
    },
    /// A request to a running server failed (the server stopped, or answered with an error).
    #[error("MCP server '{server}': {message}")]
    Request {
        /// The server.
        server: String,
        /// What failed.
        message: String,
    },
    /// The server stopped (its process exited or the connection closed) during a request.
    #[error("MCP server '{server}' stopped (connection closed); it is restarted after a backoff")]
    Stopped {
        /// The server.
        server: String,
    },
    /// A call took longer than the server's call timeout.
    #[error("MCP server '{server}': '{tool}' timed out after {seconds} s")]
    Timeout {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The timeout.
        seconds: u64,
    },
    /// The server has no tool with this name.
    #[error("MCP server '{server}' has no tool '{tool}'")]
    UnknownTool {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// The schema cache failed.
    #[error("MCP schema cache: {0}")]
    Cache(String),
}

impl McpError {
    /// The server configuration field the error is about (`name`, `command`, `url`), when it is
    /// about one field of a server entry; forms show the message next to that field.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            McpError::Config { field, .. } => *field,
            McpError::DuplicateServer(_) => Some("name"),
            _ => None,
        }
    }
}
