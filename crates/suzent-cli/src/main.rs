//! `suzent`: Suzent's command line. Every command maps onto `suzent-runtime`; nothing here
//! decides about tools or permissions.
//!
//! Exit codes: 0 done, 1 error, 2 usage error, 3 suspended waiting for approval
//! (`run --on-ask suspend`), 4 the model provider failed during the run.

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use suzent_core::{
    AgentEvent, ApprovalResponse, Behavior, PermissionMode, RuleDestination, RuleDraft,
    RuleMatcher, RunOutcome,
};
mod background_cmd;
mod browser_cmd;
mod channels_cmd;
mod content_cmd;
mod devices_cmd;
mod mcp_cmd;
mod models_cmd;
mod permissions_cmd;
mod schedule_cmd;

use suzent_runtime::{
    CommandLifetime, CreateChat, OnAsk, PendingApproval, RunOptions, RunSummary, Runtime,
    RuntimeError, RuntimeOptions,
};
use tokio::sync::broadcast;

/// Exit code of a run that stopped to wait for approvals.
const EXIT_SUSPENDED: u8 = 3;
/// Exit code of a run whose model provider failed.
const EXIT_PROVIDER_FAILED: u8 = 4;
/// Exit code of a run stopped after `max_steps` model steps.
const EXIT_MAX_STEPS: u8 = 5;
/// Exit code of a run stopped by the loop guard (a repeated identical call).
const EXIT_LOOP_DETECTED: u8 = 6;
/// Exit code of a run whose request did not fit the model's context window.
const EXIT_CONTEXT_OVERFLOW: u8 = 7;
/// Exit code of a run whose request did not fit and whose chat could not be compacted.
const EXIT_COMPACTION_FAILED: u8 = 8;

#[derive(Parser)]
#[command(
    name = "suzent",
    version,
    about = "Suzent, a desktop AI agent: headless chat, runs, approvals and rules"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Interactive chat in the terminal; approval prompts show the decision, risk and actions.
    Chat(ChatArgs),
    /// Runs one task headless and exits.
    Run(RunArgs),
    /// Continues a suspended turn, answering its approvals.
    Resume(ResumeArgs),
    /// Retries a chat's failed turn: asks the model again from the transcript as it is.
    Retry(RetryArgs),
    /// Lists the tool catalog.
    Tools {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Group by seed 003 category (core, sandbox, search, utility, agent_builder), MCP
        /// tools included.
        #[arg(long)]
        categories: bool,
    },
    /// Manages permission rules.
    #[command(subcommand)]
    Rules(RulesCommand),
    /// Lists or answers pending approvals.
    #[command(subcommand)]
    Approvals(ApprovalsCommand),
    /// Lists chats.
    Chats {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stores or removes a provider API key in the OS keychain (the key is read from stdin).
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Manages MCP servers (`mcp.json`): list, add, rm, test, import, enable, disable, trust.
    #[command(subcommand)]
    Mcp(mcp_cmd::McpCommand),
    /// Runs the runtime until stopped: delivers inbox messages (wake-ups, agent messages,
    /// sub-agent reports) and keeps background commands running.
    Serve(background_cmd::ServeArgs),
    /// The browser extension: its folder or ZIP, the bridge's status, revoking pairings, a chat's browser mode.
    #[command(subcommand)]
    Browser(browser_cmd::BrowserCommand),
    /// Queues or lists durable inbox messages.
    #[command(subcommand)]
    Inbox(background_cmd::InboxCommand),
    /// Local models: list, pull, import, rm (and what a local server serves).
    #[command(subcommand)]
    Models(models_cmd::ModelsCommand),
    /// Checks configuration, keys, database, the model and the sandbox.
    Doctor {
        /// The model to check (`provider/model`; default: the configured one): its server's
        /// `/models` and a one-token completion.
        #[arg(long)]
        model: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Lists, enables and disables skills.
    #[command(subcommand)]
    Skills(content_cmd::SkillsCommand),
    /// Searches and edits long-term memory; downloads the local embedding model.
    #[command(subcommand)]
    Memory(content_cmd::MemoryCommand),
    /// Checks the permission audit log.
    #[command(subcommand)]
    Audit(permissions_cmd::AuditCommand),
    /// The permission decision simulator.
    #[command(subcommand)]
    Permissions(permissions_cmd::PermissionsCommand),
    /// Pairs this install with other devices and manages the paired devices.
    #[command(subcommand)]
    Devices(devices_cmd::DevicesCommand),
    /// Messaging channels (Telegram, Slack, Discord, Matrix): list, add, token, test, allow,
    /// enable, remove, and the requests of people not on an allow-list (requests, approve,
    /// dismiss).
    #[command(subcommand)]
    Channels(channels_cmd::ChannelsCommand),
    /// Scheduled jobs: add, list, rm, run, pause, history, preview, import, export, status.
    #[command(subcommand)]
    Schedule(schedule_cmd::ScheduleCommand),
    /// A chat's goal: the agent continues on its own until a judge says it is met.
    #[command(subcommand)]
    Goal(schedule_cmd::GoalCommand),
    /// A chat's heartbeat: every N minutes the agent checks HEARTBEAT.md in its workspace.
    Heartbeat(schedule_cmd::HeartbeatArgs),
}

#[derive(Args)]
struct ChatTarget {
    /// Workspace folder (default: config `workspace`, else the current directory).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Model `provider/model`, e.g. openai/gpt-4.1.
    #[arg(long)]
    model: Option<String>,
    /// Permission mode: default, auto or full_access.
    #[arg(long)]
    mode: Option<String>,
    /// Continue this chat instead of creating one.
    #[arg(long)]
    chat: Option<String>,
}

#[derive(Args)]
struct ChatArgs {
    #[command(flatten)]
    target: ChatTarget,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum OnAskArg {
    /// Refuse calls that need approval, with a clear reason.
    Deny,
    /// Store them, print the chat id and exit with code 3.
    Suspend,
}

impl From<OnAskArg> for OnAsk {
    fn from(arg: OnAskArg) -> OnAsk {
        match arg {
            OnAskArg::Deny => OnAsk::Deny,
            OnAskArg::Suspend => OnAsk::Suspend,
        }
    }
}

#[derive(Args)]
struct RunArgs {
    /// The task.
    task: String,
    #[command(flatten)]
    target: ChatTarget,
    /// Print every event as one JSON line.
    #[arg(long)]
    json: bool,
    /// What to do when a call needs approval (a headless run never waits on a prompt).
    #[arg(long, value_enum, default_value = "deny")]
    on_ask: OnAskArg,
    /// Do not wait for the chat's background commands (`start_command`) after the turn: they
    /// are stopped when the run exits. Without it the run waits for them and gives the agent
    /// their completion messages before it exits.
    #[arg(long)]
    no_wait: bool,
    /// A file to attach to the task (repeatable): copied into the chat's workspace under
    /// `.attachments/<chat id>/` and named to the model; images also go to models that take
    /// images.
    #[arg(long = "attach", value_name = "FILE")]
    attach: Vec<std::path::PathBuf>,
}

#[derive(Args)]
struct ResumeArgs {
    /// The suspended chat.
    #[arg(long)]
    chat: String,
    /// `REQUEST_ID=ACTION_ID` (allow_once, allow_session, allow_global, reject; legacy yes/no).
    #[arg(long = "approve", value_name = "REQUEST_ID=ACTION_ID")]
    approve: Vec<String>,
    /// Feedback for the approval given in the same position (first --feedback for the first --approve).
    #[arg(long)]
    feedback: Vec<String>,
    /// `REQUEST_ID=TEXT`: save this rule instead of the one the chosen action proposes (as
    /// `approvals list` shows it: prefix words with shell quoting, a glob, a pattern or JSON).
    #[arg(long = "rule", value_name = "REQUEST_ID=TEXT")]
    rule: Vec<String>,
    /// Print every event as one JSON line.
    #[arg(long)]
    json: bool,
    /// What to do when a further call needs approval.
    #[arg(long, value_enum, default_value = "suspend")]
    on_ask: OnAskArg,
}

#[derive(Args)]
struct RetryArgs {
    /// The chat whose last turn failed.
    #[arg(long)]
    chat: String,
    /// Print every event as one JSON line.
    #[arg(long)]
    json: bool,
    /// What to do when a call needs approval.
    #[arg(long, value_enum, default_value = "suspend")]
    on_ask: OnAskArg,
}

#[derive(Subcommand)]
enum RulesCommand {
    /// Lists global rules and, with --chat, that chat's session rules.
    List {
        /// Chat whose session rules to include.
        #[arg(long)]
        chat: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Adds a rule.
    Add(RuleAddArgs),
    /// Removes a rule by id.
    Rm {
        /// Rule id.
        id: String,
    },
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("matcher").required(true).args(["all", "exact", "prefix", "path", "recipient"])))]
struct RuleAddArgs {
    /// global or session.
    #[arg(long)]
    destination: String,
    /// The chat of a session rule.
    #[arg(long)]
    chat: Option<String>,
    /// Tool runtime name or class name, or `*`.
    #[arg(long)]
    tool: String,
    /// allow, ask or deny.
    #[arg(long)]
    behavior: String,
    /// Match every call of the tool.
    #[arg(long)]
    all: bool,
    /// Match calls whose arguments equal this JSON object.
    #[arg(long)]
    exact: Option<String>,
    /// Match commands starting with these words, e.g. "git status" (split with shell quoting,
    /// like the commands it matches; `*` is any words, `'*'` a literal star).
    #[arg(long)]
    prefix: Option<String>,
    /// Match paths with this glob, e.g. "~/project/**".
    #[arg(long)]
    path: Option<String>,
    /// Match calls addressed to a destination matching this case-insensitive glob: an e-mail
    /// recipient ("*@example.com"), a channel ("#general"), a repository ("octo/*"), a chat or
    /// agent id, or a URL host ("*.example.com"). (`--destination` is the rule's scope.)
    #[arg(long, value_name = "PATTERN")]
    recipient: Option<String>,
    /// A note shown with the rule.
    #[arg(long)]
    description: Option<String>,
}

#[derive(Subcommand)]
enum ApprovalsCommand {
    /// Lists pending approvals.
    List {
        /// Only this chat.
        #[arg(long)]
        chat: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Answers approvals and continues the turn (same as `resume`).
    Resolve(ResumeArgs),
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Stores the key read from stdin for a provider (openai, anthropic, gemini), or an MCP
    /// secret named `mcp:ENTRY` (what `${keychain:ENTRY}` in mcp.json stands for).
    Set {
        /// Provider, or `mcp:ENTRY`.
        provider: String,
    },
    /// Removes a provider's key or an MCP secret (`mcp:ENTRY`).
    Rm {
        /// Provider, or `mcp:ENTRY`.
        provider: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let _log = init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(dispatch(cli.command)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn init_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    use tracing_subscriber::prelude::*;
    let filter = tracing_subscriber::EnvFilter::try_from_env("SUZENT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false);
    let paths = suzent_runtime::Paths::from_env().ok();
    let (file_layer, guard) = match paths {
        Some(p) => {
            let appender = tracing_appender::rolling::daily(
                suzent_runtime::log_dir(&p),
                suzent_runtime::LOG_FILE_NAME,
            );
            let (writer, guard) = tracing_appender::non_blocking(appender);
            (
                Some(
                    tracing_subscriber::fmt::layer()
                        .with_writer(writer)
                        .with_ansi(false),
                ),
                Some(guard),
            )
        }
        None => (None, None),
    };
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(stderr)
        .with(file_layer)
        .try_init();
    guard
}

async fn open_runtime() -> Result<Runtime> {
    let options = RuntimeOptions::from_env()?;
    Ok(Runtime::open(options).await?)
}

async fn dispatch(command: Command) -> Result<ExitCode> {
    match command {
        Command::Chat(args) => chat(args).await,
        Command::Run(args) => run(args).await,
        Command::Serve(args) => background_cmd::serve(args).await,
        Command::Inbox(cmd) => background_cmd::inbox(cmd).await,
        Command::Browser(cmd) => browser_cmd::browser(cmd).await,
        Command::Resume(args) | Command::Approvals(ApprovalsCommand::Resolve(args)) => {
            resume(args).await
        }
        Command::Retry(args) => retry(args).await,
        Command::Tools {
            json,
            categories: true,
        } => mcp_cmd::tools_by_category(open_runtime().await?, json),
        Command::Tools { json, .. } => {
            let rt = open_runtime().await?;
            let catalog = rt.catalog();
            if json {
                println!("{}", serde_json::to_string_pretty(&catalog)?);
            } else {
                for cap in catalog.as_array().into_iter().flatten() {
                    println!(
                        "{} — {}",
                        cap["label"].as_str().unwrap_or(""),
                        cap["description"].as_str().unwrap_or("")
                    );
                    for tool in cap["tools"].as_array().into_iter().flatten() {
                        println!(
                            "  {:<14} {:<16} {}{}",
                            tool["runtimeName"].as_str().unwrap_or(""),
                            tool["id"].as_str().unwrap_or(""),
                            tool["name"].as_str().unwrap_or(""),
                            if tool["requiresApproval"].as_bool() == Some(true) {
                                " (needs approval)"
                            } else {
                                ""
                            }
                        );
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Rules(cmd) => rules(cmd).await,
        Command::Audit(cmd) => permissions_cmd::audit(cmd),
        Command::Permissions(cmd) => permissions_cmd::permissions(cmd).await,
        Command::Schedule(cmd) => schedule_cmd::schedule(cmd).await,
        Command::Goal(cmd) => schedule_cmd::goal(cmd).await,
        Command::Heartbeat(args) => schedule_cmd::heartbeat(args).await,
        Command::Approvals(ApprovalsCommand::List { chat, json }) => {
            let rt = open_runtime().await?;
            let pending = rt.pending_approvals(chat.as_deref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&pending)?);
            } else if pending.is_empty() {
                println!("no pending approvals");
            } else {
                for p in &pending {
                    print_approval(p);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Chats { json } => {
            let rt = open_runtime().await?;
            let chats = rt.list_chats().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&chats)?);
            } else {
                for c in chats {
                    println!(
                        "{}  {:<11} {}  {}",
                        c.id,
                        c.mode.as_str(),
                        c.title,
                        c.workspace
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Keys(cmd) => {
            match cmd {
                KeysCommand::Set { provider } => {
                    let mut key = String::new();
                    if std::io::stdin().is_terminal() {
                        eprint!("API key for {provider}: ");
                    }
                    std::io::stdin().read_line(&mut key)?;
                    suzent_runtime::provider::resolve::set_api_key(&provider, key.trim())?;
                    println!("stored the {provider} key in the OS keychain");
                }
                KeysCommand::Rm { provider } => {
                    suzent_runtime::provider::resolve::delete_api_key(&provider)?;
                    println!("removed the {provider} key");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Mcp(cmd) => mcp_cmd::run(cmd, open_runtime().await?).await,
        Command::Models(cmd) => models_cmd::run(cmd, open_runtime().await?).await,
        Command::Devices(cmd) => devices_cmd::run(cmd, open_runtime().await?).await,
        Command::Channels(cmd) => channels_cmd::run(cmd, open_runtime().await?).await,
        Command::Skills(cmd) => content_cmd::skills(cmd, open_runtime().await?).await,
        Command::Memory(cmd) => content_cmd::memory(cmd, open_runtime().await?).await,
        Command::Doctor { model, json } => {
            let rt = open_runtime().await?;
            let report = rt.doctor(model.as_deref()).await;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                for c in &report.checks {
                    println!(
                        "{} {:<14} {}",
                        if c.ok { "ok  " } else { "FAIL" },
                        c.name,
                        c.detail
                    );
                }
            }
            let ok = report.checks.iter().all(|c| c.ok);
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}

fn parse_mode(mode: Option<&str>) -> Result<Option<PermissionMode>> {
    mode.map(|m| m.parse::<PermissionMode>().map_err(|e| anyhow!(e)))
        .transpose()
}

async fn chat_for(rt: &Runtime, target: &ChatTarget, title: &str) -> Result<String> {
    let mode = parse_mode(target.mode.as_deref())?;
    if let Some(id) = &target.chat {
        rt.chat(id).await?;
        if let Some(m) = mode {
            rt.set_mode(id, m).await?;
        }
        if let Some(model) = &target.model {
            rt.set_model(id, model).await?;
        }
        return Ok(id.clone());
    }
    let chat = rt
        .create_chat(CreateChat {
            title: Some(suzent_core::text::truncate_chars(title, 60, "")),
            workspace: target.workspace.clone(),
            model: target.model.clone(),
            mode,
            tools: None,
        })
        .await?;
    Ok(chat.id)
}

/// Runs `fut` while printing events (JSON lines, or readable text), then drains what is left.
async fn with_events<F, T>(rt: &Runtime, json: bool, fut: F) -> Result<T, RuntimeError>
where
    F: std::future::Future<Output = Result<T, RuntimeError>>,
{
    let mut rx = rt.subscribe();
    tokio::pin!(fut);
    let result = loop {
        tokio::select! {
            r = &mut fut => break r,
            ev = rx.recv() => match ev {
                Ok(ev) => print_event(&ev, json),
                Err(broadcast::error::RecvError::Lagged(n)) => eprintln!("warning: {n} events skipped"),
                Err(broadcast::error::RecvError::Closed) => {}
            },
        }
    };
    while let Ok(ev) = rx.try_recv() {
        print_event(&ev, json);
    }
    if !json {
        println!();
    }
    result
}

/// What a compaction did, in one line (the `chat_compacted` event, `/compact`).
fn compaction_line(c: &suzent_core::CompactionInfo) -> String {
    format!(
        "conversation compacted ({}): {} tool output(s) cut, {} message(s) summarized, about {} -> {} tokens of a {}-token context window; the full transcript is kept",
        c.trigger,
        c.tool_outputs_cut,
        c.messages_summarized,
        c.tokens_before,
        c.tokens_after,
        c.context_window
    )
}

fn print_event(ev: &AgentEvent, json: bool) {
    let mut out = std::io::stdout().lock();
    if json {
        if let Ok(line) = serde_json::to_string(ev) {
            let _ = writeln!(out, "{line}");
        }
        return;
    }
    match ev {
        AgentEvent::TextDelta { delta, .. } => {
            let _ = write!(out, "{delta}");
        }
        AgentEvent::ToolCallStart {
            tool_name, args, ..
        } => {
            let _ = writeln!(out, "\n→ {tool_name} {args}");
        }
        AgentEvent::ToolPermissionDecision(suzent_core::DecisionEvent { decision, .. })
            if decision.behavior == Behavior::Deny =>
        {
            let _ = writeln!(
                out,
                "  denied ({}): {}",
                decision.reason_code, decision.reason
            );
        }
        AgentEvent::ToolCallEnd {
            ok,
            output,
            duration_ms,
            tool_name,
            ..
        } => {
            // A speech clip is a file (for a player, or a channel to send); nothing plays here.
            let clip = (*ok && tool_name == "speak")
                .then(|| serde_json::from_str::<suzent_core::SpeechClip>(output).ok())
                .flatten();
            if let Some(clip) = clip {
                let _ = writeln!(out, "  ✓ {clip} ({duration_ms} ms)");
                let _ = out.flush();
                return;
            }
            let first = output.lines().next().unwrap_or("");
            let _ = writeln!(
                out,
                "  {} {} ({duration_ms} ms)",
                if *ok { "✓" } else { "✗" },
                first
            );
        }
        AgentEvent::ProviderRetry {
            attempt,
            max_attempts,
            wait_ms,
            message,
            ..
        } => {
            let _ = writeln!(
                out,
                "\n[retry {attempt}/{max_attempts} in {:.1} s: {message}]",
                *wait_ms as f64 / 1000.0
            );
        }
        AgentEvent::ChatCompacted { compaction, .. } => {
            let _ = writeln!(out, "\n[{}]", compaction_line(compaction));
        }
        AgentEvent::RunError { message, .. } => {
            eprintln!("\nerror: {message}");
        }
        AgentEvent::ToolActivated { tool_name, .. } => {
            let _ = writeln!(out, "  activated {tool_name} (from the next step)");
        }
        _ => {}
    }
    let _ = out.flush();
}

fn print_approval(p: &PendingApproval) {
    println!("approval {} (chat {})", p.id, p.chat_id);
    println!("  tool:   {} {}", p.tool_name, p.args);
    println!(
        "  reason: {} [{}; risk {:?}]",
        p.decision.reason, p.decision.reason_code, p.decision.risk
    );
    let actions: Vec<&str> = p.decision.actions.iter().map(|a| a.id.as_str()).collect();
    println!("  actions: {}", actions.join(", "));
    // The rule a remembering action saves, exactly (edit it with `--rule REQUEST_ID=TEXT`).
    for a in &p.decision.actions {
        if let Some(rule) = &a.rule {
            println!("  {} saves: {}", a.id.as_str(), rule_text(&rule.matcher));
        }
    }
}

/// A rule's matcher as it is written on the command line (`--prefix`, `--path`, ...):
/// prefix words shell-quoted where needed, so that `--rule` takes the same text back.
fn rule_text(matcher: &RuleMatcher) -> String {
    match matcher {
        RuleMatcher::All => "--all".to_string(),
        RuleMatcher::Exact { input } => format!("--exact {input}"),
        RuleMatcher::Prefix { words } => format!(
            "--prefix {}",
            words
                .iter()
                .map(|w| quote_word(w))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        RuleMatcher::Path { glob } => format!("--path {glob}"),
        RuleMatcher::Destination { pattern } => format!("--recipient {pattern}"),
    }
}

/// One prefix word written so that `split_rule_words` reads it back: a wildcard `*` bare, a
/// literal star (`\*`) and every character that is not plain escaped with a backslash.
fn quote_word(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push_str("\\\\"),
            },
            '*' => out.push('*'),
            c if c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c) => out.push(c),
            c => {
                out.push('\\');
                out.push(c);
            }
        }
    }
    if out.is_empty() {
        "''".to_string()
    } else {
        out
    }
}

/// The edited rule of `--rule REQUEST_ID=TEXT` for the answer to that request: the offered
/// rule of the chosen action with its matcher replaced by TEXT, read like the matcher it
/// replaces (prefix words with shell quoting, a glob, a destination pattern, exact JSON).
fn edited_rule(
    answer: &ApprovalResponse,
    text: &str,
    pending: &[PendingApproval],
) -> Result<suzent_core::RuleDraft> {
    let approval = pending
        .iter()
        .find(|p| p.id == answer.request_id)
        .with_context(|| format!("--rule: no pending approval '{}'", answer.request_id))?;
    let offered = approval
        .decision
        .actions
        .iter()
        .find(|a| a.id.as_str() == answer.action_id)
        .and_then(|a| a.rule.clone())
        .with_context(|| {
            format!(
                "--rule: action '{}' of '{}' saves no rule",
                answer.action_id, answer.request_id
            )
        })?;
    let matcher = match &offered.matcher {
        RuleMatcher::Prefix { .. } => RuleMatcher::Prefix {
            words: suzent_permissions::split_rule_words(text)
                .map_err(|e| anyhow!("--rule: {e}"))?,
        },
        RuleMatcher::Path { .. } => RuleMatcher::Path {
            glob: text.to_string(),
        },
        RuleMatcher::Destination { .. } => RuleMatcher::Destination {
            pattern: text.to_string(),
        },
        RuleMatcher::Exact { .. } => RuleMatcher::Exact {
            input: serde_json::from_str(text)
                .with_context(|| format!("--rule '{text}' is not JSON"))?,
        },
        RuleMatcher::All => RuleMatcher::All,
    };
    let draft = suzent_core::RuleDraft { matcher, ..offered };
    for warning in suzent_permissions::rule_warnings(&draft) {
        eprintln!("warning: {warning}");
    }
    eprintln!(
        "saving for {}: {}",
        answer.request_id,
        rule_text(&draft.matcher)
    );
    Ok(draft)
}

fn exit_for(summary: &RunSummary, json: bool) -> ExitCode {
    match summary.outcome {
        RunOutcome::Completed | RunOutcome::Cancelled => ExitCode::SUCCESS,
        RunOutcome::Suspended => {
            if !json {
                for p in &summary.pending {
                    print_approval(p);
                }
                eprintln!(
                    "suspended: waiting for approval; continue with `suzent resume --chat CHAT_ID --approve REQUEST_ID=ACTION_ID`"
                );
            }
            ExitCode::from(EXIT_SUSPENDED)
        }
        outcome => {
            // Printed as an event without --json already (run_error); said once on stderr too.
            if json && let Some(e) = &summary.error {
                eprintln!("error: {e}");
            }
            let (code, what) = match outcome {
                RunOutcome::MaxSteps => (EXIT_MAX_STEPS, "stopped: max_steps reached"),
                RunOutcome::LoopDetected => (EXIT_LOOP_DETECTED, "stopped: loop detected"),
                RunOutcome::ContextOverflow => (EXIT_CONTEXT_OVERFLOW, "stopped: context overflow"),
                RunOutcome::CompactionFailed => {
                    (EXIT_COMPACTION_FAILED, "stopped: compaction failed")
                }
                _ => (EXIT_PROVIDER_FAILED, "failed"),
            };
            eprintln!("{what} (exit code {code})");
            ExitCode::from(code)
        }
    }
}

async fn run(args: RunArgs) -> Result<ExitCode> {
    let rt = open_runtime().await?;
    rt.set_command_lifetime(if args.no_wait {
        CommandLifetime::StoppedAtExit {
            process: "this `suzent run --no-wait`".into(),
        }
    } else {
        CommandLifetime::AwaitedAtExit {
            process: "this `suzent run`".into(),
        }
    });
    if args.target.chat.is_none() {
        rt.check_model(args.target.model.as_deref())?;
    }
    let chat_id = chat_for(&rt, &args.target, &args.task).await?;
    if !args.json {
        println!("chat {chat_id}");
    }
    let options = RunOptions {
        on_ask: args.on_ask.into(),
        ..RunOptions::default()
    };
    let mut attachments = Vec::with_capacity(args.attach.len());
    for file in &args.attach {
        let bytes = std::fs::read(file)
            .with_context(|| format!("cannot read the file to attach '{}'", file.display()))?;
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        attachments.push(rt.add_attachment(&chat_id, &name, &bytes).await?);
    }
    let summary = with_events(
        &rt,
        args.json,
        rt.send_with_attachments(&chat_id, &args.task, attachments, options),
    )
    .await;
    let summary = match summary {
        Ok(s) => s,
        Err(e) => {
            rt.shutdown().await;
            return Err(e.into());
        }
    };
    if summary.outcome == RunOutcome::Suspended && !args.json {
        println!("{chat_id}");
    }
    let code = exit_for(&summary, args.json);
    let waited = if !args.no_wait && summary.outcome == RunOutcome::Completed {
        await_commands(&rt, &chat_id, args.json).await
    } else {
        Ok(())
    };
    stop_commands(&rt, &chat_id).await;
    waited.map(|()| code)
}

/// After `suzent run`'s turn: waits for the chat's background commands and delivers their
/// completion messages (each a turn of the agent, printed like the first), until no command
/// runs and nothing is queued. Ctrl-C stops waiting (the commands are then stopped).
async fn await_commands(rt: &Runtime, chat_id: &str, json: bool) -> Result<()> {
    loop {
        let running = rt.unsettled_commands(chat_id);
        if running > 0 {
            eprintln!(
                "waiting for {running} background command(s) of chat {chat_id} to end (Ctrl-C stops them; `--no-wait` does not wait)"
            );
            tokio::select! {
                () = rt.wait_for_commands(chat_id, false) => {}
                _ = tokio::signal::ctrl_c() => {
                    eprintln!("interrupted: stopping the background commands");
                    return Ok(());
                }
            }
        }
        let delivered = with_events(rt, json, rt.deliver_inbox(chat_id)).await?;
        if delivered == 0 && rt.unsettled_commands(chat_id) == 0 {
            return Ok(());
        }
    }
}

/// Stops what still runs in this process (background commands among it) before it exits, and
/// says so when the chat had commands running.
async fn stop_commands(rt: &Runtime, chat_id: &str) {
    let running = rt.unsettled_commands(chat_id);
    if running > 0 {
        eprintln!("stopping {running} background command(s) of chat {chat_id}");
    }
    rt.shutdown().await;
}

fn parse_answers(approve: &[String], feedback: &[String]) -> Result<Vec<ApprovalResponse>> {
    if feedback.len() > approve.len() {
        bail!(
            "more --feedback ({}) than --approve ({})",
            feedback.len(),
            approve.len()
        );
    }
    approve
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let (req, action) = a
                .split_once('=')
                .with_context(|| format!("--approve '{a}' is not REQUEST_ID=ACTION_ID"))?;
            if req.is_empty() || action.is_empty() {
                bail!("--approve '{a}' is not REQUEST_ID=ACTION_ID");
            }
            Ok(ApprovalResponse {
                request_id: req.to_string(),
                tool_call_id: None,
                action_id: action.to_string(),
                feedback: feedback.get(i).cloned(),
                rule: None,
            })
        })
        .collect()
}

async fn resume(args: ResumeArgs) -> Result<ExitCode> {
    let mut answers = parse_answers(&args.approve, &args.feedback)?;
    let rt = open_runtime().await?;
    if !args.rule.is_empty() {
        let pending = rt.pending_approvals(Some(&args.chat)).await?;
        for r in &args.rule {
            let (req, text) = r
                .split_once('=')
                .with_context(|| format!("--rule '{r}' is not REQUEST_ID=TEXT"))?;
            let answer = answers
                .iter_mut()
                .find(|a| a.request_id == req)
                .with_context(|| format!("--rule '{r}': no --approve for '{req}'"))?;
            answer.rule = Some(edited_rule(answer, text, &pending)?);
        }
    }
    let options = RunOptions {
        on_ask: args.on_ask.into(),
        ..RunOptions::default()
    };
    rt.set_command_lifetime(CommandLifetime::StoppedAtExit {
        process: "this `suzent resume`".into(),
    });
    let summary = with_events(
        &rt,
        args.json,
        rt.resume_approvals(&args.chat, answers, options),
    )
    .await;
    stop_commands(&rt, &args.chat).await;
    Ok(exit_for(&summary?, args.json))
}

async fn retry(args: RetryArgs) -> Result<ExitCode> {
    let rt = open_runtime().await?;
    let options = RunOptions {
        on_ask: args.on_ask.into(),
        ..RunOptions::default()
    };
    rt.set_command_lifetime(CommandLifetime::StoppedAtExit {
        process: "this `suzent retry`".into(),
    });
    let summary = with_events(&rt, args.json, rt.retry(&args.chat, options)).await;
    stop_commands(&rt, &args.chat).await;
    Ok(exit_for(&summary?, args.json))
}

async fn rules(cmd: RulesCommand) -> Result<ExitCode> {
    let rt = open_runtime().await?;
    match cmd {
        RulesCommand::List { chat, json } => {
            let rules = rt.list_rules(chat.as_deref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&rules)?);
            } else if rules.is_empty() {
                println!("no rules");
            } else {
                for r in rules {
                    println!(
                        "{}  {:<5} {:<7} {:<12} {}{}",
                        r.id,
                        r.behavior.as_str(),
                        r.destination.as_str(),
                        r.tool,
                        serde_json::to_string(&r.matcher)?,
                        r.chat_id.map(|c| format!("  chat {c}")).unwrap_or_default()
                    );
                }
            }
        }
        RulesCommand::Add(a) => {
            let matcher = if a.all {
                RuleMatcher::All
            } else if let Some(exact) = a.exact {
                let input: Value = serde_json::from_str(&exact)
                    .with_context(|| format!("--exact '{exact}' is not JSON"))?;
                RuleMatcher::Exact { input }
            } else if let Some(prefix) = a.prefix {
                // Split like the commands it matches: shell quoting, a quoted `*` is literal.
                RuleMatcher::Prefix {
                    words: suzent_permissions::split_rule_words(&prefix)
                        .map_err(|e| anyhow!("--prefix: {e}"))?,
                }
            } else if let Some(glob) = a.path {
                RuleMatcher::Path { glob }
            } else if let Some(pattern) = a.recipient {
                RuleMatcher::Destination { pattern }
            } else {
                bail!("one matcher is required: --all, --exact, --prefix, --path or --recipient");
            };
            let draft = RuleDraft {
                tool: a.tool,
                behavior: a
                    .behavior
                    .parse::<Behavior>()
                    .map_err(|e| anyhow!("--behavior: {e}"))?,
                matcher,
                destination: a
                    .destination
                    .parse::<RuleDestination>()
                    .map_err(|e| anyhow!("--destination: {e}"))?,
                description: a.description,
            };
            for warning in suzent_permissions::rule_warnings(&draft) {
                eprintln!("warning: {warning}");
            }
            let rule = rt.add_rule(draft, a.chat.as_deref()).await?;
            println!(
                "{}",
                serde_json::to_string(&json!({"id": rule.id, "rule": rule}))?
            );
        }
        RulesCommand::Rm { id } => {
            rt.delete_rule(&id).await?;
            println!("removed rule {id}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Lines of stdin, read by a thread so the chat can listen to Ctrl-C and wake-ups meanwhile.
/// The channel closes at end of input (Ctrl-D).
fn stdin_lines() -> tokio::sync::mpsc::UnboundedReceiver<std::io::Result<String>> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Every Ctrl-C (SIGINT) from now on, as a message: none is lost between two waits.
fn interrupts() -> tokio::sync::mpsc::UnboundedReceiver<()> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if tx.send(()).is_err() {
                return;
            }
        }
    });
    rx
}

/// The terminal chat's input: stdin lines and Ctrl-C.
struct ChatInput {
    lines: tokio::sync::mpsc::UnboundedReceiver<std::io::Result<String>>,
    interrupts: tokio::sync::mpsc::UnboundedReceiver<()>,
}

/// What the prompt got.
enum Prompted {
    Line(String),
    /// End of input (Ctrl-D).
    Eof,
    /// Ctrl-C.
    Interrupt,
    /// A background command of the chat ended: its completion message is queued.
    WakeUp,
}

impl ChatInput {
    /// The next line, end of input, Ctrl-C, or (with `chat` running commands) a wake-up.
    async fn next(&mut self, rt: &Runtime, chat: Option<&str>) -> Result<Prompted> {
        let wake = async {
            match chat {
                Some(c) if rt.unsettled_commands(c) > 0 => rt.wait_for_commands(c, false).await,
                _ => std::future::pending().await,
            }
        };
        tokio::select! {
            line = self.lines.recv() => match line {
                Some(line) => Ok(Prompted::Line(line?)),
                None => Ok(Prompted::Eof),
            },
            Some(()) = self.interrupts.recv() => Ok(Prompted::Interrupt),
            () = wake => Ok(Prompted::WakeUp),
        }
    }
}

/// Like [`with_events`], and Ctrl-C stops the chat's turn (what was said stays, marked
/// stopped; a running tool is killed). Returns the result and whether Ctrl-C stopped it.
async fn with_events_stoppable<F, T>(
    rt: &Runtime,
    chat_id: &str,
    interrupts: &mut tokio::sync::mpsc::UnboundedReceiver<()>,
    fut: F,
) -> (Result<T, RuntimeError>, bool)
where
    F: std::future::Future<Output = Result<T, RuntimeError>>,
{
    let mut rx = rt.subscribe();
    tokio::pin!(fut);
    let mut stopped = false;
    let result = loop {
        tokio::select! {
            r = &mut fut => break r,
            ev = rx.recv() => match ev {
                Ok(ev) => print_event(&ev, false),
                Err(broadcast::error::RecvError::Lagged(n)) => eprintln!("warning: {n} events skipped"),
                Err(broadcast::error::RecvError::Closed) => {}
            },
            Some(()) = interrupts.recv() => {
                if !stopped {
                    eprintln!("\n[stopping the turn: Ctrl-C]");
                    stopped = true;
                }
                rt.cancel(chat_id);
            }
        }
    };
    while let Ok(ev) = rx.try_recv() {
        print_event(&ev, false);
    }
    println!();
    (result, stopped)
}

async fn chat(args: ChatArgs) -> Result<ExitCode> {
    let rt = open_runtime().await?;
    rt.set_command_lifetime(CommandLifetime::StoppedAtExit {
        process: "this `suzent chat`".into(),
    });
    let chat_id = chat_for(&rt, &args.target, "Terminal chat").await?;
    let result = chat_loop(&rt, &chat_id).await;
    stop_commands(&rt, &chat_id).await;
    result
}

async fn chat_loop(rt: &Runtime, chat_id: &str) -> Result<ExitCode> {
    let chat = rt.chat(chat_id).await?;
    eprintln!(
        "suzent chat {} — workspace {} — model {} — mode {}. Type a message; /mode MODE switches; /goal OBJECTIVE works on its own until done; /compact summarizes older turns now; Ctrl-C stops a turn; /quit, Ctrl-D or Ctrl-C twice exits.",
        chat.id,
        chat.workspace,
        chat.model.as_deref().unwrap_or("(none: use --model)"),
        chat.mode
    );
    let mut input = ChatInput {
        lines: stdin_lines(),
        interrupts: interrupts(),
    };
    // Pending approvals from an earlier session come back first.
    let mut pending = rt.pending_approvals(Some(chat_id)).await?;
    // A Ctrl-C stopped a turn or was pressed at the prompt, with no line since: the next exits.
    let mut interrupted = false;
    loop {
        if !pending.is_empty() {
            let mut answers = Vec::new();
            for p in &pending {
                print_approval(p);
                let actions = &p.decision.actions;
                for (i, a) in actions.iter().enumerate() {
                    println!("  [{}] {} — {}", i + 1, a.label, a.description);
                }
                let choice = loop {
                    print!("choose 1-{}: ", actions.len());
                    std::io::stdout().flush()?;
                    let line = match input.next(rt, None).await? {
                        Prompted::Line(line) => line,
                        // The approval stays pending for the next session.
                        Prompted::Eof | Prompted::Interrupt => return Ok(ExitCode::SUCCESS),
                        Prompted::WakeUp => continue,
                    };
                    match line.trim().parse::<usize>() {
                        Ok(n) if n >= 1 && n <= actions.len() => break actions[n - 1].clone(),
                        _ => println!("please type a number between 1 and {}", actions.len()),
                    }
                };
                let mut feedback = None;
                if choice.accepts_feedback {
                    print!("feedback for the agent (optional): ");
                    std::io::stdout().flush()?;
                    if let Prompted::Line(line) = input.next(rt, None).await?
                        && !line.trim().is_empty()
                    {
                        feedback = Some(line);
                    }
                }
                answers.push(ApprovalResponse {
                    request_id: p.id.clone(),
                    tool_call_id: Some(p.tool_call_id.clone()),
                    action_id: choice.id.as_str().to_string(),
                    feedback,
                    rule: None,
                });
            }
            let (result, stopped) = with_events_stoppable(
                rt,
                chat_id,
                &mut input.interrupts,
                rt.resume_approvals(chat_id, answers, RunOptions::default()),
            )
            .await;
            interrupted = stopped;
            pending = result?.pending;
            continue;
        }
        print!("> ");
        std::io::stdout().flush()?;
        let line = match input.next(rt, Some(chat_id)).await? {
            Prompted::Line(line) => line,
            Prompted::Eof => break,
            Prompted::Interrupt if interrupted => break,
            Prompted::Interrupt => {
                interrupted = true;
                println!("\n(press Ctrl-C again or Ctrl-D to exit)");
                continue;
            }
            Prompted::WakeUp => {
                println!();
                // The command's completion message: the agent's wake-up turn, here.
                let (result, stopped) = with_events_stoppable(
                    rt,
                    chat_id,
                    &mut input.interrupts,
                    rt.deliver_inbox(chat_id),
                )
                .await;
                interrupted = stopped;
                if let Err(e) = result {
                    println!("error: {e}");
                }
                pending = rt.pending_approvals(Some(chat_id)).await?;
                continue;
            }
        };
        interrupted = false;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if text == "/quit" || text == "/exit" {
            break;
        }
        if text == "/compact" {
            // Compacts now; the event printer shows nothing here (no run), so say what was done.
            match rt.compact_chat(&chat_id).await {
                Ok(Some(c)) => println!("{}", compaction_line(&c)),
                Ok(None) => println!("nothing to compact: the chat is short enough already"),
                Err(e) => println!("error: {e}"),
            }
            continue;
        }
        if let Some(mode) = text.strip_prefix("/mode ") {
            match mode.trim().parse::<PermissionMode>() {
                Ok(m) => {
                    rt.set_mode(chat_id, m).await?;
                    println!("mode: {m}");
                }
                Err(e) => println!("{e}"),
            }
            continue;
        }
        if let Some(objective) = suzent_runtime::goals::parse_goal_command(text) {
            // `/goal OBJECTIVE`: the agent continues on its own until the judge says it is met.
            let input = suzent_runtime::goals::GoalInput {
                objective: objective.to_string(),
                ..Default::default()
            };
            match rt.goals().set(chat_id, input).await {
                Ok(_) => match with_events(rt, false, rt.goals().drive(chat_id)).await {
                    Ok(goal) => {
                        println!("goal {}: {}", goal.status, goal.reason.unwrap_or_default())
                    }
                    Err(e) => println!("error: {e}"),
                },
                Err(e) => println!("error: {e}"),
            }
            continue;
        }
        let (result, stopped) = with_events_stoppable(
            rt,
            chat_id,
            &mut input.interrupts,
            rt.send_message(chat_id, text, RunOptions::default()),
        )
        .await;
        interrupted = stopped;
        match result {
            Ok(summary) => pending = summary.pending,
            Err(e) => println!("error: {e}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
