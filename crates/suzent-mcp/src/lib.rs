//! Suzent's MCP side: the client for MCP servers (rmcp; stdio child processes and streamable
//! HTTP) and the MCP registry that discovers their tools, loads schemas just in time, caches
//! them, pools connections and restarts servers that fail.
//!
//! Servers are configured in the standard `mcpServers` JSON (`mcp.json` in Suzent's config
//! directory); a Claude Desktop file can be imported. Tools reach the model under
//! server-qualified names that always fit `^[a-zA-Z0-9_-]{1,64}$`:
//!
//! ```
//! use suzent_mcp::qualify_all;
//! let names = qualify_all(&[("mail", "send_email"), ("my.server", "send_email")]);
//! assert_eq!(names[0], "mcp__mail__send_email");
//! assert!(names[1].starts_with("mcp__my_server__send_email_")); // hashed: the name changed
//! ```
//!
//! ```no_run
//! # async fn demo() -> Result<(), suzent_mcp::McpError> {
//! use suzent_mcp::{McpOptions, McpRegistry, McpServerConfig};
//! let registry = McpRegistry::open(McpOptions::new("/home/me/.config/suzent/mcp.json"))?;
//! registry.add_server("everything", McpServerConfig::stdio("npx", vec!["-y".into(), "@modelcontextprotocol/server-everything".into()]))?;
//! for tool in registry.discover(Some("echo"), true).await {
//!     println!("{} ({:?})", tool.qualified_name, tool.status);
//! }
//! let out = registry.call("everything", "echo", serde_json::json!({"message": "hi"})).await?;
//! println!("{}", out.text);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod client;
mod config;
mod error;
mod naming;
mod registry;
mod shellpath;

pub use client::{CallOutput, ListChanged, McpConnection, RemoteTool, SecretLookup};
pub use config::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, McpConfigFile, McpServerConfig, Transport,
    resolve_secrets, validate_name,
};
pub use error::McpError;
pub use naming::{MAX_NAME_LEN, PREFIX, fnv1a, is_valid_name, qualify_all};
pub use registry::{
    CachedSchemas, DEFAULT_IDLE_TIMEOUT, McpOptions, McpRegistry, McpServerInfo, McpServerState,
    McpToolInfo, McpToolStatus, SCHEMA_TTL, SchemaCache,
};
pub use shellpath::{login_shell_path, merged_path, resolve_program};
