//! `suzent mcp ...`: MCP servers in `mcp.json`, over the runtime's MCP API.

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use suzent_runtime::{McpServerConfig, Runtime};

/// `suzent mcp` subcommands.
#[derive(Subcommand)]
pub enum McpCommand {
    /// Lists the MCP servers with their state and known tools.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Adds a server: `add NAME [--env K=V]... -- COMMAND [ARGS...]` (stdio) or
    /// `add NAME --url URL [--header K=V]...` (streamable HTTP).
    Add(AddArgs),
    /// Removes a server (and its cached schemas).
    Rm {
        /// Server name.
        name: String,
    },
    /// Connects to a server and lists its tools.
    Test {
        /// Server name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Imports the servers of a Claude Desktop configuration file.
    Import {
        /// Path of `claude_desktop_config.json`.
        path: PathBuf,
    },
    /// Enables a server.
    Enable {
        /// Server name.
        name: String,
    },
    /// Disables a server (kept in the file, never started).
    Disable {
        /// Server name.
        name: String,
    },
    /// Trusts a server's readOnlyHint annotations (`--off` to stop trusting them).
    Trust {
        /// Server name.
        name: String,
        /// Stop trusting it.
        #[arg(long)]
        off: bool,
    },
    /// Lists MCP tools matching a filter (discovery); `--load` connects servers without fresh
    /// cached schemas first.
    Tools {
        /// Case-insensitive text matched against names and descriptions.
        filter: Option<String>,
        /// Connect servers to load schemas.
        #[arg(long)]
        load: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Drops cached schemas of one server (or of all).
    Invalidate {
        /// Server name (all servers when omitted).
        name: Option<String>,
    },
}

/// Arguments of `suzent mcp add`.
#[derive(Args)]
pub struct AddArgs {
    /// Server name (also the prefix of its tools' names).
    name: String,
    /// Environment variable of a stdio server (`K=V`; `V` may be `${keychain:ENTRY}`).
    #[arg(long = "env", value_name = "K=V")]
    env: Vec<String>,
    /// URL of a streamable HTTP server.
    #[arg(long)]
    url: Option<String>,
    /// HTTP header (`K=V`; `V` may be `${keychain:ENTRY}`, e.g. `Authorization=Bearer ${keychain:gh}`).
    #[arg(long = "header", value_name = "K=V")]
    header: Vec<String>,
    /// Working directory of a stdio server.
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// Trust the server's readOnlyHint annotations.
    #[arg(long)]
    trusted: bool,
    /// Seconds allowed for start-up (default 30).
    #[arg(long)]
    startup_timeout: Option<u32>,
    /// Seconds allowed per call (default 120).
    #[arg(long)]
    call_timeout: Option<u32>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn pairs(items: &[String], what: &str) -> Result<Vec<(String, String)>> {
    items
        .iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => bail!("{what} '{kv}' is not of the form KEY=VALUE"),
        })
        .collect()
}

/// Runs one `suzent mcp` command.
pub async fn run(cmd: McpCommand, rt: Runtime) -> Result<ExitCode> {
    match cmd {
        McpCommand::List { json } => {
            let servers = rt.mcp_servers();
            if json {
                println!("{}", serde_json::to_string_pretty(&servers)?);
            } else if servers.is_empty() {
                println!("no MCP servers (add one with `suzent mcp add NAME -- COMMAND ARGS...`)");
            } else {
                for s in servers {
                    let target = match (&s.config.command, &s.config.url) {
                        (Some(c), _) => format!("{c} {}", s.config.args.join(" ")),
                        (_, Some(u)) => u.clone(),
                        _ => String::new(),
                    };
                    println!(
                        "{:<20} {:<6} {:<9}{} {}",
                        s.name,
                        s.transport,
                        format!("{:?}", s.state).to_lowercase(),
                        if s.config.trusted { " trusted" } else { "" },
                        target.trim()
                    );
                    if let Some(e) = &s.last_error {
                        println!("  last error: {e}");
                    }
                    for t in &s.tools {
                        println!("  {t}");
                    }
                }
            }
        }
        McpCommand::Add(args) => {
            let mut config = match (args.url, args.command.split_first()) {
                (Some(url), None) => McpServerConfig::http(url),
                (None, Some((command, rest))) => McpServerConfig::stdio(command, rest.to_vec()),
                (Some(_), Some(_)) => {
                    bail!("give either --url URL or -- COMMAND ARGS..., not both")
                }
                (None, None) => {
                    bail!("give the server's command after `--` (stdio) or --url URL (HTTP)")
                }
            };
            config.env = pairs(&args.env, "--env")?.into_iter().collect();
            config.headers = pairs(&args.header, "--header")?.into_iter().collect();
            config.cwd = args.cwd;
            config.trusted = args.trusted;
            config.startup_timeout_sec = args.startup_timeout;
            config.call_timeout_sec = args.call_timeout;
            let info = rt.add_mcp_server(&args.name, config)?;
            println!(
                "added MCP server '{}' ({}); `suzent mcp test {}` connects and lists its tools",
                info.name, info.transport, info.name
            );
        }
        McpCommand::Rm { name } => {
            rt.remove_mcp_server(&name).await?;
            println!("removed MCP server '{name}'");
        }
        McpCommand::Test { name, json } => {
            let result = rt.test_mcp_server(&name).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&result)?);
            } else {
                println!("{name}: connected, {} tools", result.tools.len());
                for t in &result.tools {
                    let first = t.description.lines().next().unwrap_or("");
                    println!(
                        "  {:<40} {}{}",
                        t.qualified_name,
                        first,
                        if t.read_only_hint == Some(true) {
                            " (read-only)"
                        } else {
                            ""
                        }
                    );
                }
            }
        }
        McpCommand::Import { path } => {
            let result = rt.import_mcp_servers(&path)?;
            println!("imported: {}", result.added.join(", "));
            if !result.added.is_empty() {
                println!(
                    "imported servers are untrusted; review one and mark it with `suzent mcp trust NAME`"
                );
            }
            if !result.skipped.is_empty() {
                println!(
                    "skipped (a server with that name exists): {}",
                    result.skipped.join(", ")
                );
            }
        }
        McpCommand::Enable { name } => {
            rt.set_mcp_server_enabled(&name, true)?;
            println!("enabled MCP server '{name}'");
        }
        McpCommand::Disable { name } => {
            rt.set_mcp_server_enabled(&name, false)?;
            println!("disabled MCP server '{name}'");
        }
        McpCommand::Trust { name, off } => {
            rt.set_mcp_server_trusted(&name, !off)?;
            println!(
                "{} MCP server '{name}'",
                if off {
                    "no longer trusting"
                } else {
                    "trusting"
                }
            );
        }
        McpCommand::Tools { filter, load, json } => {
            let tools = rt.mcp_tools(filter.as_deref(), load).await;
            if json {
                println!("{}", serde_json::to_string_pretty(&tools)?);
            } else {
                for t in tools {
                    println!(
                        "{:<40} {:<10} {}",
                        t.qualified_name,
                        format!("{:?}", t.status).to_uppercase(),
                        t.description.lines().next().unwrap_or("")
                    );
                }
            }
        }
        McpCommand::Invalidate { name } => {
            rt.invalidate_mcp_cache(name.as_deref()).await?;
            println!("dropped cached MCP schemas");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `suzent tools --categories`: every tool (MCP tools included) by seed 003 category.
pub fn tools_by_category(rt: Runtime, json: bool) -> Result<ExitCode> {
    let by_category = rt.tools_by_category();
    if json {
        println!("{}", serde_json::to_string_pretty(&by_category)?);
        return Ok(ExitCode::SUCCESS);
    }
    for (category, tools) in by_category {
        if tools.is_empty() {
            continue;
        }
        println!(
            "{}",
            serde_json::to_value(category)?.as_str().unwrap_or_default()
        );
        for t in tools {
            println!("  {:<28} {}", t.name, t.display_name);
        }
    }
    Ok(ExitCode::SUCCESS)
}
