//! `suzent devices`: pair this install with another (`pair` shows a code, `join CODE` enters
//! it; both show the same words and both users confirm), list paired devices, pause, set the
//! scope, rename, revoke, and show the messages sent to them. The work is done by the runtime's
//! devices service.

use anyhow::{Result, bail};
use clap::{Subcommand, ValueEnum};
use serde_json::json;
use std::io::BufRead;
use std::process::ExitCode;
use std::time::Duration;
use suzent_runtime::{DeviceScope, DeviceView, PairingStatus, PeerSummary, Runtime};

/// `suzent devices ...`.
#[derive(Subcommand)]
pub enum DevicesCommand {
    /// Shows a pairing code (and QR) valid 10 minutes for one device, waits for it to join,
    /// shows the confirmation words and asks whether they match the other screen.
    Pair {
        /// Print JSON lines (code, confirm, paired/failed) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Joins the device that shows CODE (the code or its suzent://pair link), shows the
    /// confirmation words and asks whether they match the other screen.
    Join {
        /// The code or link.
        code: String,
        /// Print JSON lines instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Lists this device and the paired devices.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Also listen this many seconds for devices advertised on the LAN (suggestions only).
        #[arg(long, value_name = "SECS")]
        nearby: Option<u64>,
    },
    /// Pauses a paired device (its messages and requests are refused with the reason), or
    /// resumes it with --off (scope `send`).
    Pause {
        /// Short id, full id or name of the device.
        device: String,
        /// Resume instead.
        #[arg(long)]
        off: bool,
    },
    /// Sets what a paired device may do here.
    Scope {
        /// Short id, full id or name of the device.
        device: String,
        /// send: message this device's agents; read: also read their transcripts and stop
        /// them; paused: nothing.
        scope: ScopeArg,
    },
    /// Revokes a pairing: closes its live connection at once and refuses it from now on.
    Revoke {
        /// Short id, full id or name of the device.
        device: String,
    },
    /// Renames a paired device (here only).
    Rename {
        /// Short id, full id or name of the device.
        device: String,
        /// The new name.
        name: String,
    },
    /// Lists the messages sent to paired devices and what became of them.
    Outbox {
        /// Only messages to this device.
        device: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// A scope on the command line.
#[derive(Clone, Copy, ValueEnum)]
pub enum ScopeArg {
    /// Send messages to this device's agents.
    Send,
    /// Also read their transcripts and stop their turns.
    Read,
    /// Nothing.
    Paused,
}

fn ask(question: &str) -> bool {
    eprint!("{question} [y/N] ");
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => false,
        Ok(_) => matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
    }
}

fn peer_line(p: &PeerSummary) -> String {
    format!(
        "{} ({}, {}), key fingerprint {}",
        p.name, p.platform, p.short_id, p.fingerprint
    )
}

/// Finds a device by short id, full id or (unique) name.
async fn resolve(rt: &Runtime, device: &str) -> Result<String> {
    let all = rt.devices().list().await?;
    let wanted = device.trim();
    if let Some(v) = all
        .iter()
        .find(|v| v.device.short_id == wanted.to_ascii_lowercase() || v.device.id == wanted)
    {
        return Ok(v.device.id.clone());
    }
    let named: Vec<&DeviceView> = all.iter().filter(|v| v.device.name == wanted).collect();
    match named.as_slice() {
        [one] => Ok(one.device.id.clone()),
        [] => bail!("no paired device '{wanted}' (see `suzent devices list`)"),
        _ => bail!("several paired devices are named '{wanted}'; use the short id"),
    }
}

/// `suzent devices ...`. The device endpoint a command started is closed before it returns
/// (connections end with a close frame, not by timeout).
pub async fn run(cmd: DevicesCommand, rt: Runtime) -> Result<ExitCode> {
    let result = command(cmd, &rt).await;
    rt.devices().shutdown().await;
    result
}

async fn command(cmd: DevicesCommand, rt: &Runtime) -> Result<ExitCode> {
    let rt = rt.clone();
    let devices = rt.devices();
    match cmd {
        DevicesCommand::Pair { json } => {
            let offer = devices.pair().await?;
            if json {
                println!(
                    "{}",
                    json!({"event": "code", "code": offer.code, "link": offer.link, "expiresInSecs": offer.expires_in_secs})
                );
            } else {
                println!(
                    "On the other device, enter this code (valid {} minutes, once):\n\n    {}\n",
                    offer.expires_in_secs / 60,
                    offer.code
                );
                println!("or scan this QR code ({}):\n{}", offer.link, offer.qr_text);
                println!("This device: {}", peer_line(&offer.this_device));
                println!("Waiting for the other device...");
            }
            let status = wait_for(&rt, |s| s.state != "waiting").await;
            let status = if status.state == "confirming" {
                let peer = status.peer.clone();
                let words = status.words.join(" ");
                if json {
                    println!(
                        "{}",
                        json!({"event": "confirm", "words": status.words, "peer": peer})
                    );
                } else if let Some(p) = &peer {
                    println!(
                        "\n{} wants to pair.\nConfirmation words: {words}",
                        peer_line(p)
                    );
                }
                let yes = ask("Do these words match the other device's screen?");
                devices.confirm_pairing(yes)?;
                wait_for(&rt, |s| s.state == "paired" || s.state == "failed").await
            } else {
                status
            };
            finish(json, status)
        }
        DevicesCommand::Join { code, json } => {
            let offer = devices.join(&code).await?;
            if json {
                println!(
                    "{}",
                    json!({"event": "confirm", "words": offer.words, "peer": offer.peer})
                );
            } else {
                println!(
                    "Joining {}.\nConfirmation words: {}",
                    peer_line(&offer.peer),
                    offer.words.join(" ")
                );
            }
            let yes = ask("Do these words match the other device's screen?");
            match devices.finish_join(yes).await {
                Ok(Some(record)) => {
                    if json {
                        println!("{}", json!({"event": "paired", "device": record}));
                    } else {
                        println!("Paired with {} ({}).", record.name, record.short_id);
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Ok(None) => {
                    if json {
                        println!(
                            "{}",
                            json!({"event": "failed", "reason": "not confirmed on this device"})
                        );
                    }
                    eprintln!("suzent: not paired (the words were not confirmed here)");
                    Ok(ExitCode::FAILURE)
                }
                Err(e) => {
                    if json {
                        println!("{}", json!({"event": "failed", "reason": e.to_string()}));
                    }
                    Err(e.into())
                }
            }
        }
        DevicesCommand::List { json, nearby } => {
            let me = devices.this_device().await?;
            let mut found = Vec::new();
            if let Some(secs) = nearby {
                found = devices.discover(Duration::from_secs(secs)).await?;
            }
            let list = devices.list().await?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(
                        &json!({"thisDevice": me, "devices": list, "nearby": found})
                    )?
                );
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "This device: {} ({}, {}), key fingerprint {}",
                me.name, me.platform, me.short_id, me.fingerprint
            );
            println!(
                "  {}; relays {}",
                me.key_storage,
                if me.relay {
                    "on"
                } else {
                    "off (LAN and direct only)"
                }
            );
            if list.is_empty() {
                println!("No paired devices. Pair one with `suzent devices pair`.");
            }
            for v in list {
                let d = &v.device;
                let seen = d
                    .last_seen
                    .map(|t| t.to_rfc3339())
                    .unwrap_or_else(|| "never".into());
                println!(
                    "{}  {}  {}  fingerprint {}  scope {}  {}  last seen {seen}{}{}",
                    d.short_id,
                    d.name,
                    d.platform,
                    d.fingerprint,
                    d.scope.as_str(),
                    match (d.state.as_str(), v.online) {
                        ("active", true) => "online",
                        ("active", false) => "offline",
                        (s, _) => s,
                    },
                    if v.queued > 0 {
                        format!("  {} queued", v.queued)
                    } else {
                        String::new()
                    },
                    d.remote_note
                        .as_ref()
                        .map(|n| format!("  ({n})"))
                        .unwrap_or_default(),
                );
            }
            for n in found {
                println!(
                    "nearby: {}  {}  {}  fingerprint {}  {}",
                    n.short_id,
                    n.name,
                    n.platform,
                    n.fingerprint,
                    if n.paired { "paired" } else { "not paired" }
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        DevicesCommand::Pause { device, off } => {
            let id = resolve(&rt, &device).await?;
            let scope = if off {
                DeviceScope::Send
            } else {
                DeviceScope::Paused
            };
            let d = devices.set_scope(&id, scope).await?;
            println!(
                "{} ({}) is {}",
                d.name,
                d.short_id,
                if off {
                    "resumed (scope send)"
                } else {
                    "paused"
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        DevicesCommand::Scope { device, scope } => {
            let id = resolve(&rt, &device).await?;
            let scope = match scope {
                ScopeArg::Send => DeviceScope::Send,
                ScopeArg::Read => DeviceScope::Read,
                ScopeArg::Paused => DeviceScope::Paused,
            };
            let d = devices.set_scope(&id, scope).await?;
            println!("{} ({}): scope {}", d.name, d.short_id, d.scope.as_str());
            Ok(ExitCode::SUCCESS)
        }
        DevicesCommand::Revoke { device } => {
            let id = resolve(&rt, &device).await?;
            let d = devices.revoke(&id).await?;
            println!(
                "revoked {} ({}); pairing again is needed to talk to it",
                d.name, d.short_id
            );
            Ok(ExitCode::SUCCESS)
        }
        DevicesCommand::Rename { device, name } => {
            let id = resolve(&rt, &device).await?;
            let d = devices.rename(&id, &name).await?;
            println!("{} is now named {}", d.short_id, d.name);
            Ok(ExitCode::SUCCESS)
        }
        DevicesCommand::Outbox { device, json } => {
            let id = match device {
                Some(d) => Some(resolve(&rt, &d).await?),
                None => None,
            };
            let messages = devices.outbox(id.as_deref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&messages)?);
            } else {
                for m in messages {
                    let preview: String = m.text.chars().take(40).collect();
                    println!(
                        "{}  to {}  {}  \"{preview}\"{}",
                        m.id,
                        m.device_id.chars().take(12).collect::<String>(),
                        m.status.as_str(),
                        m.reason.map(|r| format!("  ({r})")).unwrap_or_default()
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn wait_for(rt: &Runtime, done: impl Fn(&PairingStatus) -> bool) -> PairingStatus {
    loop {
        let status = rt.devices().pairing_status(Duration::from_secs(1)).await;
        if done(&status) || status.state == "failed" || status.state == "none" {
            return status;
        }
    }
}

fn finish(json: bool, status: PairingStatus) -> Result<ExitCode> {
    match status.state.as_str() {
        "paired" => {
            if json {
                println!("{}", json!({"event": "paired", "peer": status.peer}));
            } else if let Some(p) = &status.peer {
                println!("Paired with {}.", peer_line(p));
            }
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            let reason = status.reason.unwrap_or_else(|| "the pairing ended".into());
            if json {
                println!("{}", json!({"event": "failed", "reason": reason}));
            }
            eprintln!("suzent: not paired: {reason}");
            Ok(ExitCode::FAILURE)
        }
    }
}
