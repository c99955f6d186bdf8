//! `suzent channels`: messaging channels (Telegram, ...): list them with their connection, add
//! one, store its token in the OS keychain (read from stdin, never an argument), test it, set
//! its allow-list, switch it on or off, remove it, and answer the requests of people who wrote
//! without being on the allow-list (`approve`, `dismiss`). The runtime's channel service does
//! the work; the channels connect in `suzent serve` and the desktop app.

use anyhow::{Result, bail};
use clap::{Subcommand, ValueEnum};
use std::io::BufRead;
use std::process::ExitCode;
use suzent_runtime::{
    ChannelConfig, ChannelPlatform, ChannelProfile, ChannelRequestStatus, ChannelView, Runtime,
};

/// `suzent channels ...`.
#[derive(Subcommand)]
pub enum ChannelsCommand {
    /// Lists the channels with their connection and whether a token is stored.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Adds a channel (off until it has a token: see `token`).
    Add {
        /// Its name (a-z 0-9 - _), e.g. telegram.
        name: String,
        /// The platform.
        #[arg(long, value_enum, default_value = "telegram")]
        platform: PlatformArg,
        /// Platform user ids whose messages reach the agent (repeat the flag).
        #[arg(long = "allow", value_name = "USER_ID")]
        allow: Vec<String>,
        /// headless (default): what would ask is refused; ask-in-app: the turn waits for
        /// approval in the app.
        #[arg(long, value_enum, default_value = "headless")]
        profile: ProfileArg,
        /// The platform's API base URL (default: its public API).
        #[arg(long)]
        base_url: Option<String>,
    },
    /// Reads a token from stdin (one line) and stores it in the OS keychain
    /// (account channel:NAME). Slack: "xoxb-… xapp-…" (both tokens on the line).
    Token {
        /// The channel.
        name: String,
    },
    /// Connects with the stored token and says who the bot is.
    Test {
        /// The channel.
        name: String,
    },
    /// Replaces a channel's allow-list.
    Allow {
        /// The channel.
        name: String,
        /// Platform user ids (none: nobody).
        users: Vec<String>,
    },
    /// Switches a channel on, or off with --off.
    Enable {
        /// The channel.
        name: String,
        /// Switch it off instead.
        #[arg(long)]
        off: bool,
    },
    /// Removes a channel and its token (its chats stay).
    Remove {
        /// The channel.
        name: String,
    },
    /// Lists the requests of people not on an allow-list.
    Requests {
        /// Only this channel's.
        name: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Approves a request: the user joins the channel's allow-list.
    Approve {
        /// The channel.
        name: String,
        /// The user id the request shows.
        user_id: String,
    },
    /// Dismisses a request (the user stays refused, without another refusal message).
    Dismiss {
        /// The channel.
        name: String,
        /// The user id the request shows.
        user_id: String,
    },
}

/// A platform on the command line.
#[derive(Clone, Copy, ValueEnum)]
pub enum PlatformArg {
    /// Telegram (Bot API).
    Telegram,
    /// Slack (Web API and Socket Mode; the token line holds the xoxb- and the xapp- token).
    Slack,
    /// Discord (a bot over the gateway).
    Discord,
    /// Matrix (client-server API; --base-url is the homeserver, the token an access token).
    Matrix,
}

/// A permission profile on the command line.
#[derive(Clone, Copy, ValueEnum)]
pub enum ProfileArg {
    /// Auto mode; what would ask is refused.
    Headless,
    /// Default mode; what would ask waits for approval in the app.
    AskInApp,
}

fn line(view: &ChannelView) -> String {
    let c = &view.config;
    format!(
        "{}  {}  {}  {:?}{}  token: {}  allowed: {}",
        c.name,
        c.platform.label(),
        if c.enabled { "on" } else { "off" },
        view.status.state,
        view.status
            .bot
            .as_ref()
            .map(|b| format!(" as {b}"))
            .or_else(|| view.status.error.as_ref().map(|e| format!(" ({e})")))
            .unwrap_or_default(),
        if view.has_token { "stored" } else { "missing" },
        if c.allowed_users.is_empty() {
            "nobody".to_string()
        } else {
            c.allowed_users.join(", ")
        }
    )
}

/// Runs one `suzent channels` command.
pub async fn run(cmd: ChannelsCommand, rt: Runtime) -> Result<ExitCode> {
    let channels = rt.channels();
    match cmd {
        ChannelsCommand::List { json } => {
            let list = channels.list();
            if json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else if list.is_empty() {
                println!(
                    "No channels. Add one with: suzent channels add telegram --allow YOUR_USER_ID"
                );
            } else {
                for view in &list {
                    println!("{}", line(view));
                }
            }
        }
        ChannelsCommand::Add {
            name,
            platform,
            allow,
            profile,
            base_url,
        } => {
            let view = channels.add(ChannelConfig {
                name,
                platform: match platform {
                    PlatformArg::Telegram => ChannelPlatform::Telegram,
                    PlatformArg::Slack => ChannelPlatform::Slack,
                    PlatformArg::Discord => ChannelPlatform::Discord,
                    PlatformArg::Matrix => ChannelPlatform::Matrix,
                },
                enabled: true,
                allowed_users: allow,
                profile: match profile {
                    ProfileArg::Headless => ChannelProfile::Headless,
                    ProfileArg::AskInApp => ChannelProfile::AskInApp,
                },
                base_url,
            })?;
            println!("added: {}", line(&view));
            if !view.has_token {
                println!(
                    "store its token with: suzent channels token {}  (reads one line from stdin)",
                    view.config.name
                );
            }
        }
        ChannelsCommand::Token { name } => {
            let mut token = String::new();
            std::io::stdin().lock().read_line(&mut token)?;
            let token = token.trim();
            if token.is_empty() {
                bail!("no token on stdin");
            }
            channels.set_token(&name, token)?;
            println!("token of channel '{name}' stored in the OS keychain");
        }
        ChannelsCommand::Test { name } => {
            let check = channels.test_stored(&name).await?;
            println!(
                "connected as {}{} (id {})",
                check.bot_name,
                check
                    .username
                    .map(|u| format!(" (@{u})"))
                    .unwrap_or_default(),
                check.bot_id
            );
        }
        ChannelsCommand::Allow { name, users } => {
            let view = channels.set_allowed_users(&name, users)?;
            println!("{}", line(&view));
        }
        ChannelsCommand::Enable { name, off } => {
            let view = channels.set_enabled(&name, !off)?;
            println!("{}", line(&view));
        }
        ChannelsCommand::Remove { name } => {
            channels.remove(&name)?;
            println!("removed channel '{name}'");
        }
        ChannelsCommand::Requests { name, json } => {
            let requests = channels.requests(name.as_deref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&requests)?);
            } else if requests.is_empty() {
                println!("No requests.");
            } else {
                for r in requests {
                    println!(
                        "{}  {}  {} ({})  {} message{}  last {}{}",
                        r.channel,
                        match r.status {
                            ChannelRequestStatus::Pending => "pending",
                            ChannelRequestStatus::Approved => "approved",
                            ChannelRequestStatus::Dismissed => "dismissed",
                        },
                        r.user_id,
                        r.name,
                        r.messages,
                        if r.messages == 1 { "" } else { "s" },
                        r.last_seen.to_rfc3339(),
                        if r.status == ChannelRequestStatus::Pending {
                            format!("  -> suzent channels approve {} {}", r.channel, r.user_id)
                        } else {
                            String::new()
                        }
                    );
                }
            }
        }
        ChannelsCommand::Approve { name, user_id } => {
            let request = channels.approve(&name, &user_id).await?;
            println!(
                "approved {} ({}) on '{}': their next message reaches the agent",
                request.user_id, request.name, request.channel
            );
        }
        ChannelsCommand::Dismiss { name, user_id } => {
            let request = channels.dismiss(&name, &user_id).await?;
            println!(
                "dismissed {} ({}) on '{}'",
                request.user_id, request.name, request.channel
            );
        }
    }
    rt.shutdown().await;
    Ok(ExitCode::SUCCESS)
}
