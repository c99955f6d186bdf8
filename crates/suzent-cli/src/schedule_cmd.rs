//! `suzent schedule`, `suzent goal` and `suzent heartbeat`: scheduled jobs, chat goals and
//! heartbeats through the runtime's services. The scheduling itself is in the runtime.

use anyhow::{Context, Result, bail};
use chrono::Utc;
use clap::{Args, Subcommand, ValueEnum};
use std::process::ExitCode;
use std::time::Duration;
use suzent_core::{CatchUpPolicy, Delivery, GoalStatus, OverlapPolicy, RunStatus};
use suzent_runtime::goals::GoalInput;
use suzent_runtime::schedules::{JobInput, preview};
use suzent_runtime::{Runtime, RuntimeOptions};
use suzent_store::{JobDraft, RunRecord};

#[derive(Clone, Copy, ValueEnum)]
enum OverlapArg {
    Skip,
    QueueOne,
    Allow,
}

#[derive(Clone, Copy, ValueEnum)]
enum CatchUpArg {
    RunOnce,
    Skip,
}

/// Fields of a job (`add`, `edit`).
#[derive(Args)]
pub struct JobArgs {
    /// Name shown in lists.
    #[arg(long)]
    name: Option<String>,
    /// A 5-field cron pattern (`0 9 * * 1-5`, seconds optional as a sixth, leading field) or
    /// `every N minutes`.
    #[arg(long)]
    schedule: Option<String>,
    /// IANA time zone (default: the system's).
    #[arg(long = "tz")]
    timezone: Option<String>,
    /// What the agent is asked each run.
    #[arg(long)]
    prompt: Option<String>,
    /// Workspace folder (default: the configured one).
    #[arg(long)]
    workspace: Option<std::path::PathBuf>,
    /// Model `provider/model`.
    #[arg(long)]
    model: Option<String>,
    /// No notification when a run finishes.
    #[arg(long)]
    silent: bool,
    /// What an occurrence does while the previous run still runs.
    #[arg(long, value_enum)]
    overlap: Option<OverlapArg>,
    /// What happens to occurrences missed while Suzent was not running.
    #[arg(long = "catch-up", value_enum)]
    catch_up: Option<CatchUpArg>,
    /// Timeout of a run in seconds (the whole run).
    #[arg(long)]
    timeout: Option<u32>,
    /// Retries after a failure or a timeout whose processes were confirmed stopped.
    #[arg(long)]
    retries: Option<u32>,
    /// Registered paused.
    #[arg(long)]
    paused: bool,
}

/// `suzent schedule ...`.
#[derive(Subcommand)]
pub enum ScheduleCommand {
    /// Adds a job (with --id: registers it under that id, updating it if it exists).
    Add {
        /// Stable id (default: a new one).
        #[arg(long)]
        id: Option<String>,
        #[command(flatten)]
        job: JobArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Changes fields of a job.
    Edit {
        /// Job id.
        id: String,
        #[command(flatten)]
        job: JobArgs,
    },
    /// Lists jobs with their next run and last outcome.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Removes a job and its history.
    Rm {
        /// Job id.
        id: String,
    },
    /// Runs a job now and waits for the run to end. Without a running desktop app or `suzent
    /// serve`, this process schedules until then.
    Run {
        /// Job id.
        id: String,
        /// Do not wait: print the run id and exit.
        #[arg(long)]
        no_wait: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Pauses a job (with --resume: resumes it; a resumed job does not catch up).
    Pause {
        /// Job id.
        id: String,
        /// Resume instead.
        #[arg(long)]
        resume: bool,
    },
    /// Run history, newest first.
    History {
        /// Only this job.
        id: Option<String>,
        /// At most this many runs.
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The next times of a schedule, in its zone.
    Preview {
        /// Cron pattern or `every N minutes`.
        schedule: String,
        /// IANA time zone (default: the system's).
        #[arg(long = "tz")]
        timezone: Option<String>,
        /// How many.
        #[arg(long, default_value_t = 5)]
        count: usize,
    },
    /// Registers the jobs of a file written by `export` (same ids: updated in place).
    Import {
        /// The JSON file.
        file: std::path::PathBuf,
    },
    /// Prints every job as JSON (for `import`).
    Export,
    /// Whether a process schedules this data directory, and which.
    Status,
}

/// `suzent goal ...`.
#[derive(Subcommand)]
pub enum GoalCommand {
    /// Sets a chat's goal and works on it until it is met, paused or out of budget (the same
    /// as `/goal OBJECTIVE` in the chat).
    Set {
        /// The chat.
        #[arg(long)]
        chat: String,
        /// What to achieve.
        objective: String,
        /// Turn budget.
        #[arg(long)]
        max_turns: Option<u32>,
        /// Token budget (estimated).
        #[arg(long)]
        max_tokens: Option<u64>,
        /// Only set it; a running app or `suzent serve` works on it.
        #[arg(long)]
        no_wait: bool,
    },
    /// Shows a chat's goal.
    Show {
        /// The chat.
        #[arg(long)]
        chat: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Pauses a chat's goal.
    Pause {
        /// The chat.
        #[arg(long)]
        chat: String,
    },
    /// Resumes a paused goal and works on it until it stops again.
    Resume {
        /// The chat.
        #[arg(long)]
        chat: String,
    },
    /// Removes a chat's goal.
    Clear {
        /// The chat.
        #[arg(long)]
        chat: String,
    },
}

/// `suzent heartbeat`.
#[derive(Args)]
pub struct HeartbeatArgs {
    /// The chat.
    #[arg(long)]
    chat: String,
    /// Beat every N minutes (reads HEARTBEAT.md in the chat's workspace).
    #[arg(long, conflicts_with = "off")]
    every: Option<u32>,
    /// Turn the heartbeat off.
    #[arg(long)]
    off: bool,
}

async fn open() -> Result<Runtime> {
    Ok(Runtime::open(RuntimeOptions::from_env()?).await?)
}

fn input(id: Option<String>, job: JobArgs) -> JobInput {
    JobInput {
        id,
        name: job.name.unwrap_or_default(),
        kind: None,
        schedule: job.schedule.unwrap_or_default(),
        timezone: job.timezone,
        prompt: job.prompt.unwrap_or_default(),
        workspace: job
            .workspace
            .map(|w| std::fs::canonicalize(&w).unwrap_or(w).display().to_string()),
        model: job.model,
        delivery: job.silent.then_some(Delivery::Silent),
        overlap: job.overlap.map(|o| match o {
            OverlapArg::Skip => OverlapPolicy::Skip,
            OverlapArg::QueueOne => OverlapPolicy::QueueOne,
            OverlapArg::Allow => OverlapPolicy::Allow,
        }),
        catch_up: job.catch_up.map(|c| match c {
            CatchUpArg::RunOnce => CatchUpPolicy::RunOnce,
            CatchUpArg::Skip => CatchUpPolicy::Skip,
        }),
        timeout_secs: job.timeout,
        max_retries: job.retries,
        enabled: job.paused.then_some(false),
    }
}

fn print_json(value: &impl serde::Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

fn run_line(run: &RunRecord) -> String {
    let when = run
        .started_at
        .unwrap_or(run.claimed_at)
        .format("%Y-%m-%d %H:%M:%S");
    let mut line = format!(
        "{}  {when}  {:<11} {:<9} slot {}",
        run.id,
        run.status.as_str(),
        run.trigger.as_str(),
        run.slot.format("%Y-%m-%d %H:%M")
    );
    if run.catch_up {
        line.push_str(&format!(" (catch-up, {} more missed)", run.missed));
    }
    if run.steps > 0 {
        line.push_str(&format!("  {} steps", run.steps));
    }
    for d in &run.denied {
        line.push_str(&format!("\n    denied {}: {}", d.tool, d.reason));
    }
    if let Some(detail) = &run.detail {
        line.push_str(&format!("\n    {detail}"));
    }
    line
}

/// `suzent schedule ...`.
pub async fn schedule(cmd: ScheduleCommand) -> Result<ExitCode> {
    if let ScheduleCommand::Preview {
        schedule,
        timezone,
        count,
    } = &cmd
    {
        let p = preview(schedule, timezone.as_deref(), Utc::now(), *count)?;
        println!("{} in {}:", p.schedule, p.timezone);
        for t in p.next {
            println!("  {t}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let rt = open().await?;
    let jobs = rt.schedules();
    match cmd {
        ScheduleCommand::Preview { .. } => {}
        ScheduleCommand::Add { id, job, json } => {
            let job = jobs.save(input(id, job)).await?;
            if json {
                print_json(&job)?;
            } else {
                println!("{}", job.draft.id);
            }
        }
        ScheduleCommand::Edit { id, job } => {
            let current = jobs.get(&id).await?.job.draft;
            let mut change = input(Some(id), job);
            if change.name.is_empty() {
                change.name = current.name;
            }
            if change.schedule.is_empty() {
                change.schedule = current.schedule;
            }
            if change.prompt.is_empty() {
                change.prompt = current.prompt;
            }
            let job = jobs.save(change).await?;
            println!("{}", job.draft.id);
        }
        ScheduleCommand::List { json } => {
            let list = jobs.list().await?;
            if json {
                print_json(&list)?;
            } else if list.is_empty() {
                println!("no jobs (add one with `suzent schedule add`)");
            } else {
                for v in list {
                    let d = &v.job.draft;
                    let next = match (d.enabled, v.next_run) {
                        (false, _) => "paused".to_string(),
                        (true, Some(t)) => t.format("%Y-%m-%d %H:%M UTC").to_string(),
                        (true, None) => "never".to_string(),
                    };
                    let last = v
                        .last_run
                        .map(|r| r.status.as_str().to_string())
                        .unwrap_or_else(|| "-".into());
                    println!(
                        "{}  {}  [{} {}]  next {next}  last {last}",
                        d.id, d.name, d.schedule, d.timezone
                    );
                }
            }
        }
        ScheduleCommand::Rm { id } => {
            jobs.remove(&id).await?;
            println!("removed {id}");
        }
        ScheduleCommand::Run { id, no_wait, json } => {
            let status = jobs.status().await?;
            let here = status.holder.is_none();
            if here {
                let started = rt.start_unattended().await;
                if !started.scheduling {
                    eprintln!("suzent: another process took the scheduler; it will run the job");
                }
            } else if let Some(h) = &status.holder {
                eprintln!(
                    "suzent: the job runs in the process that schedules (pid {} on {})",
                    h.pid, h.host
                );
            }
            let run = jobs.run_now(&id).await?;
            if no_wait {
                println!("{}", run.id);
                if here {
                    rt.shutdown().await;
                }
                return Ok(ExitCode::SUCCESS);
            }
            let timeout =
                Duration::from_secs(u64::from(jobs.get(&id).await?.job.draft.timeout_secs) + 120);
            let ended = tokio::time::timeout(timeout, async {
                loop {
                    let r = jobs.run(&run.id).await?;
                    if r.status.is_final() {
                        return Ok::<RunRecord, anyhow::Error>(r);
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            })
            .await
            .context("the run did not end in time")??;
            if here {
                rt.shutdown().await;
            }
            if json {
                print_json(&ended)?;
            } else {
                println!("{}", run_line(&ended));
            }
            return Ok(if ended.status == RunStatus::Completed {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            });
        }
        ScheduleCommand::Pause { id, resume } => {
            let job = jobs.pause(&id, !resume).await?;
            println!(
                "{} {}",
                job.draft.id,
                if job.draft.enabled {
                    "resumed"
                } else {
                    "paused"
                }
            );
        }
        ScheduleCommand::History { id, limit, json } => {
            let runs = jobs.history(id.as_deref(), limit).await?;
            if json {
                print_json(&runs)?;
            } else if runs.is_empty() {
                println!("no runs");
            } else {
                for r in &runs {
                    println!("{}", run_line(r));
                }
            }
        }
        ScheduleCommand::Import { file } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let drafts: Vec<JobDraft> = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a jobs file", file.display()))?;
            let done = jobs.import(drafts).await?;
            println!("{} jobs registered", done.len());
        }
        ScheduleCommand::Export => print_json(&jobs.export().await?)?,
        ScheduleCommand::Status => {
            let status = jobs.status().await?;
            match status.holder {
                Some(h) => println!(
                    "scheduled by pid {} on {} (lease until {})",
                    h.pid,
                    h.host,
                    h.expires_at.to_rfc3339()
                ),
                None => println!("no process schedules now (start the app or `suzent serve`)"),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn goal_line(g: &suzent_store::GoalRecord) -> String {
    let mut line = format!(
        "{}: {} ({} of {} turns, {} of {} tokens)",
        g.status.as_str(),
        g.objective,
        g.turns_used,
        g.max_turns,
        g.tokens_used,
        g.max_tokens
    );
    if let Some(r) = &g.reason {
        line.push_str(&format!("\n  {r}"));
    }
    line
}

/// `suzent goal ...`.
pub async fn goal(cmd: GoalCommand) -> Result<ExitCode> {
    let rt = open().await?;
    let goals = rt.goals();
    let finished = |g: &suzent_store::GoalRecord| {
        println!("{}", goal_line(g));
        Ok(if g.status == GoalStatus::Met {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        })
    };
    match cmd {
        GoalCommand::Set {
            chat,
            objective,
            max_turns,
            max_tokens,
            no_wait,
        } => {
            let goal = goals
                .set(
                    &chat,
                    GoalInput {
                        objective,
                        max_turns,
                        max_tokens,
                    },
                )
                .await?;
            if no_wait {
                println!("{}", goal_line(&goal));
                return Ok(ExitCode::SUCCESS);
            }
            return finished(&goals.drive(&chat).await?);
        }
        GoalCommand::Show { chat, json } => match goals.get(&chat).await? {
            Some(g) if json => print_json(&g)?,
            Some(g) => println!("{}", goal_line(&g)),
            None => bail!("chat '{chat}' has no goal"),
        },
        GoalCommand::Pause { chat } => println!("{}", goal_line(&goals.pause(&chat).await?)),
        GoalCommand::Resume { chat } => {
            goals.activate(&chat).await?;
            return finished(&goals.drive(&chat).await?);
        }
        GoalCommand::Clear { chat } => {
            goals.clear(&chat).await?;
            println!("cleared");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `suzent heartbeat ...`.
pub async fn heartbeat(args: HeartbeatArgs) -> Result<ExitCode> {
    let rt = open().await?;
    let jobs = rt.schedules();
    if args.off {
        jobs.set_heartbeat(&args.chat, None).await?;
        println!("heartbeat off");
    } else if let Some(every) = args.every {
        let job = jobs.set_heartbeat(&args.chat, Some(every)).await?;
        if let Some(job) = job {
            println!("{}: {}", job.draft.id, job.draft.schedule);
        }
    } else {
        match jobs.heartbeat(&args.chat).await? {
            Some(job) => println!("{}: {}", job.draft.id, job.draft.schedule),
            None => println!("no heartbeat (turn it on with --every MINUTES)"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
