//! `suzent serve` (a long-running runtime: inbox dispatcher, background commands, sub-agents) and
//! `suzent inbox` (queue and list durable inbox messages). The agent logic is in the runtime.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use std::process::ExitCode;
use suzent_runtime::{NewInboxMessage, Runtime, RuntimeOptions};

/// Arguments of `suzent serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// Print every event as one JSON line on stdout.
    #[arg(long)]
    json: bool,
}

/// `suzent inbox ...`.
#[derive(Subcommand)]
pub enum InboxCommand {
    /// Queues a message for an agent (a chat id); a running `suzent serve` or desktop app
    /// delivers it. The same --id with the same text is queued once.
    Send {
        /// The receiving chat id.
        #[arg(long)]
        to: String,
        /// Idempotent message id (default: a fresh one).
        #[arg(long)]
        id: Option<String>,
        /// Sender shown to the agent.
        #[arg(long, default_value = "user")]
        from: String,
        /// The message.
        text: String,
    },
    /// Lists inbox messages.
    List {
        /// Only messages to this chat.
        #[arg(long)]
        chat: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

async fn open() -> Result<Runtime> {
    Ok(Runtime::open(RuntimeOptions::from_env()?).await?)
}

/// Runs the runtime with its inbox dispatcher until SIGINT or SIGTERM, then stops background
/// commands and exits.
pub async fn serve(args: ServeArgs) -> Result<ExitCode> {
    let rt = open().await?;
    let mut events = rt.subscribe();
    rt.start_dispatcher();
    let status = rt.start_unattended().await;
    match &status.holder {
        Some(h) if !status.scheduling => eprintln!(
            "suzent: another process (pid {} on {}) schedules the jobs of this data directory; this one does not schedule (it takes over if that one stops)",
            h.pid, h.host
        ),
        _ => eprintln!("suzent: scheduler running"),
    }
    // The browser extension's bridge (127.0.0.1 only); serving goes on without it if its port
    // cannot be had.
    let bridge = match crate::browser_cmd::start_for_serve(&rt).await {
        Ok(server) => Some(server),
        Err(e) => {
            eprintln!("suzent: the browser bridge did not start: {e:#}");
            None
        }
    };
    match rt.devices().start().await {
        Ok(()) => {
            if let Ok(me) = rt.devices().this_device().await {
                eprintln!(
                    "suzent: device {} ({}) reachable for paired devices at {}",
                    me.short_id,
                    me.name,
                    me.addrs.join(", ")
                );
            }
        }
        Err(e) => eprintln!("suzent: paired devices are unavailable: {e}"),
    }
    eprintln!("suzent: serving (inbox dispatcher running); stop with Ctrl-C or SIGTERM");
    let json = args.json;
    let printer = tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            if json && let Ok(line) = serde_json::to_string(&event) {
                println!("{line}");
            }
        }
    });
    match &bridge {
        Some(server) => {
            tokio::select! {
                () = wait_for_stop() => {}
                () = crate::browser_cmd::answer_pairings(server) => wait_for_stop().await,
            }
        }
        None => wait_for_stop().await,
    }
    if let Some(server) = bridge {
        server.stop().await;
    }
    rt.shutdown().await;
    printer.abort();
    Ok(ExitCode::SUCCESS)
}

#[cfg(unix)]
async fn wait_for_stop() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(not(unix))]
async fn wait_for_stop() {
    let _ = tokio::signal::ctrl_c().await;
}

/// `suzent inbox ...`.
pub async fn inbox(cmd: InboxCommand) -> Result<ExitCode> {
    let rt = open().await?;
    match cmd {
        InboxCommand::Send { to, id, from, text } => {
            rt.chat(&to).await?;
            let message = rt
                .enqueue_inbox(NewInboxMessage {
                    id: id.unwrap_or_else(suzent_core::new_id),
                    target: to,
                    sender: from,
                    kind: "agent_message".into(),
                    text,
                })
                .await
                .context("queueing the message")?;
            println!("{}", message.id);
        }
        InboxCommand::List { chat, json } => {
            let messages = rt.inbox(chat.as_deref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&messages)?);
            } else {
                for m in messages {
                    println!(
                        "{}  {}  -> {}  {:?}  attempts {}",
                        m.id, m.kind, m.target, m.status, m.attempts
                    );
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
