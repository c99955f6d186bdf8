//! `suzent browser extension-path|zip|status|revoke` and the browser bridge of `suzent serve`.
//! The bridge and its pairings live in suzent-server; this file only maps commands onto it.

use anyhow::{Context, Result};
use clap::Subcommand;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use suzent_core::BrowserMode;
use suzent_runtime::{Paths, Runtime, RuntimeOptions};
use suzent_server::{BridgeEvent, BridgeOptions, BridgeServer, BridgeState, BrowserStatus};

/// `suzent browser ...`.
#[derive(Subcommand)]
pub enum BrowserCommand {
    /// Unpacks the bundled extension (once per version) and prints its folder, for Chrome's or
    /// Edge's "Load unpacked".
    ExtensionPath,
    /// Writes the bundled extension as a ZIP file and prints where.
    Zip {
        /// The file to write (default: suzent-browser-extension-<version>.zip here).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Shows the bridge's state: pairings, whether one is connected, the port.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Shows or sets which browser `browser_action` drives in a chat: `extension` (your Chrome or
    /// Edge), `managed` (a Chromium Suzent starts), `cdp` (a DevTools endpoint), or `default`
    /// (follow `[browser] mode`).
    Mode {
        /// The chat's id (see `suzent chats`).
        #[arg(long)]
        chat: String,
        /// The mode to set; without it, the chat's mode is printed.
        mode: Option<String>,
    },
    /// Revokes a pairing (a running app or `suzent serve` closes its connection within a
    /// second); `--all` revokes every active one.
    Revoke {
        /// The pairing id (see `suzent browser status`).
        id: Option<String>,
        /// Revoke every active pairing.
        #[arg(long, conflicts_with = "id")]
        all: bool,
    },
}

/// Runs one `suzent browser` command.
pub async fn browser(cmd: BrowserCommand) -> Result<ExitCode> {
    let paths = Paths::from_env().map_err(anyhow::Error::msg)?;
    match cmd {
        BrowserCommand::ExtensionPath => {
            println!(
                "{}",
                suzent_server::unpacked_extension(&paths.data_dir)?.display()
            );
        }
        BrowserCommand::Zip { out } => {
            let version = suzent_server::extension_version()?;
            let out = out.unwrap_or_else(|| {
                PathBuf::from(format!("suzent-browser-extension-{version}.zip"))
            });
            suzent_server::save_zip(&out)?;
            println!("{}", out.display());
        }
        BrowserCommand::Status { json } => {
            let store = suzent_store::Store::open(&paths.database()).await?;
            let status = suzent_server::offline_status(&paths.data_dir, &store).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                print_status(&status);
            }
        }
        BrowserCommand::Mode { chat, mode } => {
            let choice = match mode.as_deref().map(str::trim) {
                None => None,
                Some("default") => Some(None),
                Some(name) => Some(Some(BrowserMode::parse(name).map_err(|e| {
                    anyhow::anyhow!("{e}, or default to follow [browser] mode")
                })?)),
            };
            let runtime = Runtime::open(RuntimeOptions::from_env()?).await?;
            runtime.chat(&chat).await?;
            if let Some(mode) = choice {
                runtime.browser().set_chat_mode(&chat, mode).await?;
            }
            let shown = runtime.browser().chat_mode_choice(&chat).await;
            match shown.chosen {
                Some(m) => println!("{} (chosen for this chat)", m.as_str()),
                None => println!(
                    "{} (from [browser] mode in config.toml)",
                    shown.default.as_str()
                ),
            }
        }
        BrowserCommand::Revoke { id, all } => {
            let store = suzent_store::Store::open(&paths.database()).await?;
            let ids: Vec<String> = match (id, all) {
                (Some(id), _) => vec![id],
                (None, true) => store
                    .list_browser_pairings(false)
                    .await?
                    .into_iter()
                    .map(|p| p.id)
                    .collect(),
                (None, false) => {
                    anyhow::bail!("name a pairing id (see `suzent browser status`) or pass --all")
                }
            };
            for id in ids {
                let changed = store
                    .revoke_browser_pairing(&id)
                    .await
                    .with_context(|| format!("revoking pairing '{id}'"))?;
                println!(
                    "{id}: {}",
                    if changed {
                        "revoked"
                    } else {
                        "was already revoked"
                    }
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_status(status: &BrowserStatus) {
    let state = match status.state {
        BridgeState::NotInstalled => "not installed (no extension paired yet)",
        BridgeState::Paired => "paired, not connected",
        BridgeState::Connected => "connected",
    };
    println!("browser extension: {state}");
    match status.port {
        Some(port) => println!("bridge: listening on 127.0.0.1:{port}"),
        None => println!("bridge: not running (the desktop app or `suzent serve` runs it)"),
    }
    match &status.extension_version {
        Some(v) => println!(
            "bundled extension: {v} (id {})",
            status.shipped_extension_id
        ),
        None => println!("bundled extension: not included in this build"),
    }
    for p in &status.pairings {
        let pairing = &p.pairing;
        let what = if pairing.revoked_at.is_some() {
            "revoked".to_string()
        } else if p.connected {
            "connected".to_string()
        } else {
            match pairing.last_seen_at {
                Some(at) => format!("last seen {}", at.format("%Y-%m-%d %H:%M:%S UTC")),
                None => "never connected".to_string(),
            }
        };
        println!(
            "  {}  {} {} (extension {} v{})  {what}",
            pairing.id,
            pairing.browser,
            pairing.browser_version,
            pairing.extension_id,
            pairing.extension_version
        );
    }
}

/// Starts the bridge for `suzent serve`. Pairing requests are shown on stderr and, when stdin
/// is a terminal, approved or declined there; otherwise they expire unanswered.
pub async fn start_for_serve(runtime: &Runtime) -> Result<BridgeServer> {
    let server = BridgeServer::start(runtime, BridgeOptions::default()).await?;
    eprintln!("suzent: browser bridge on 127.0.0.1:{}", server.port());
    Ok(server)
}

/// Answers pairing requests from the terminal while `suzent serve` runs.
pub async fn answer_pairings(server: &BridgeServer) {
    let mut events = server.subscribe();
    let interactive = std::io::stdin().is_terminal();
    while let Ok(event) = events.recv().await {
        let BridgeEvent::PairingRequested { request } = event else {
            continue;
        };
        eprintln!(
            "suzent: browser extension {} ({} {}) asks to pair{}; its popup shows code {}",
            request.extension_id,
            request.browser,
            request.browser_version,
            if request.shipped_extension {
                ""
            } else {
                " — NOT the extension shipped with Suzent"
            },
            request.code
        );
        if !interactive {
            eprintln!("suzent: no terminal to approve it here; approve it in the desktop app");
            continue;
        }
        eprint!("approve? [y/N] ");
        let answer = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).map(|_| line)
        })
        .await;
        let yes = matches!(answer, Ok(Ok(ref l)) if l.trim().eq_ignore_ascii_case("y"));
        let result = if yes {
            server.approve(&request.id).await.map(|_| "approved")
        } else {
            server.reject(&request.id).await.map(|()| "declined")
        };
        match result {
            Ok(what) => eprintln!("suzent: pairing {what}"),
            Err(e) => eprintln!("suzent: {e}"),
        }
    }
}
