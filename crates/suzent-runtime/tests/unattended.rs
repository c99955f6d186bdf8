//! Unattended runs through the real runtime: scheduled jobs in their own chats (headless:
//! what would ask is denied at once), timeouts that kill the run's processes before a retry,
//! heartbeats, goals with their judge, and memory consolidation. Real SQLite, real processes,
//! the scripted model server speaking OpenAI's wire format, and a hand-moved clock.

use anyhow::{Context, Result, bail};
use chrono::{DateTime, TimeZone, Utc};
use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use suzent_core::{
    Behavior, ChatMessage, Config, DeniedCall, GoalStatus, PermissionMode, RuleDestination,
    RuleDraft, RuleMatcher, RunStatus, RunTrigger,
};
use suzent_runtime::goals::GoalInput;
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::scheduler::{Clock, ManualClock};
use suzent_runtime::schedules::JobInput;
use suzent_runtime::{CreateChat, Paths, Runtime, RuntimeOptions};
use suzent_store::RunRecord;
use suzent_tests::{ScriptedServer, Turn};
use tempfile::TempDir;

struct Harness {
    _dir: TempDir,
    ws: PathBuf,
    runtime: Runtime,
    clock: ManualClock,
}

fn utc(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 6, 1, h, m, s)
        .single()
        .unwrap_or_default()
}

async fn harness(model: &ScriptedServer) -> Result<Harness> {
    let dir = tempfile::tempdir()?;
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws)?;
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        default_mode: PermissionMode::Default,
        tools: vec!["ShellTool".into(), "ReadFileTool".into()],
        workspace: Some(ws.clone()),
        ..Config::default()
    };
    config.providers.openai.base_url = Some(model.openai_base());
    let runtime = Runtime::open(RuntimeOptions {
        paths: Paths::under(&dir.path().join("home")),
        keys: Arc::new(StaticKeys::new().with("openai", "sk-test")),
        config: Some(config),
    })
    .await?;
    let clock = ManualClock::new(utc(8, 59, 50));
    let status = runtime
        .schedules()
        .start(Some(Arc::new(clock.clone()) as Arc<dyn Clock>))
        .await;
    assert!(status.scheduling, "{status:?}");
    Ok(Harness {
        _dir: dir,
        ws,
        runtime,
        clock,
    })
}

impl Harness {
    async fn job(
        &self,
        name: &str,
        schedule: &str,
        prompt: &str,
        tweak: impl FnOnce(&mut JobInput),
    ) -> Result<String> {
        let mut input = JobInput {
            name: name.into(),
            schedule: schedule.into(),
            timezone: Some("UTC".into()),
            prompt: prompt.into(),
            workspace: Some(self.ws.display().to_string()),
            ..JobInput::default()
        };
        tweak(&mut input);
        Ok(self.runtime.schedules().save(input).await?.draft.id)
    }

    /// Moves the clock to `t` and lets the scheduler handle it.
    async fn at(&self, t: DateTime<Utc>) -> Result<()> {
        self.clock.set(t);
        let scheduler = self
            .runtime
            .schedules()
            .scheduler()
            .context("no scheduler")?;
        tokio::time::timeout(Duration::from_secs(20), scheduler.settled(t)).await?;
        Ok(())
    }

    async fn runs(&self, job: &str) -> Result<Vec<RunRecord>> {
        let mut runs = self.runtime.schedules().history(Some(job), 100).await?;
        runs.reverse();
        Ok(runs)
    }

    /// Waits (real time, bounded: against hangs, not a timing assertion) for `f`.
    async fn until(&self, job: &str, f: impl Fn(&[RunRecord]) -> bool) -> Result<Vec<RunRecord>> {
        for _ in 0..1200 {
            let runs = self.runs(job).await?;
            if f(&runs) {
                return Ok(runs);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!(
            "runs of '{job}' never got there: {:#?}",
            self.runs(job).await?
        )
    }

    async fn rule(&self, behavior: Behavior, matcher: RuleMatcher) -> Result<()> {
        self.runtime
            .add_rule(
                RuleDraft {
                    tool: "run_command".into(),
                    behavior,
                    matcher,
                    destination: RuleDestination::Global,
                    description: None,
                },
                None,
            )
            .await?;
        Ok(())
    }
}

fn ended(runs: &[RunRecord]) -> bool {
    !runs.is_empty() && runs.iter().all(|r| r.status.is_final())
}

fn call(id: &str, name: &str, args: serde_json::Value) -> Turn {
    Turn::tool_call(id, name, args.to_string())
}

/// Processes (other than this one) whose working directory is inside `dir`, as the OS lists
/// them: `(pid, command line)`.
fn processes_in(dir: &Path) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        if cwd.starts_with(&dir) {
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            // A zombie that is already reaped has no command line; it is not running.
            if !cmd.trim().is_empty() {
                found.push((pid, cmd.trim().to_string()));
            }
        }
    }
    found
}

#[tokio::test]
async fn a_scheduled_call_that_would_ask_is_denied_at_once_and_the_run_record_says_why()
-> Result<()> {
    let model = ScriptedServer::start(vec![
        call(
            "call_push",
            "run_command",
            serde_json::json!({"content": "git push origin main"}),
        ),
        Turn::text("I could not push: the push needs an approval nobody can give now."),
    ])
    .await;
    let h = harness(&model).await?;
    h.rule(
        Behavior::Ask,
        RuleMatcher::Prefix {
            words: vec!["git".into(), "push".into()],
        },
    )
    .await?;
    let job = h
        .job("Nightly push", "0 9 * * *", "Push the main branch.", |_| {})
        .await?;
    h.at(utc(9, 0, 0)).await?;
    let runs = h.until(&job, ended).await?;
    let run = &runs[0];
    assert_eq!(
        (run.status, run.trigger, run.steps, run.detail.as_deref()),
        (
            RunStatus::Completed,
            RunTrigger::Schedule,
            2,
            Some("I could not push: the push needs an approval nobody can give now.")
        )
    );
    assert_eq!(run.denied.len(), 1, "{:?}", run.denied);
    let DeniedCall {
        tool,
        reason_code,
        reason,
    } = &run.denied[0];
    assert_eq!(
        (tool.as_str(), reason_code.as_str()),
        ("run_command", "headless_ask_denied")
    );
    assert!(reason.contains("cannot ask for approval"), "{reason}");
    // The run happened in the job's own chat, listed with the other chats.
    let chat_id = run.chat_id.clone().context("the run has no chat")?;
    let view = h.runtime.schedules().get(&job).await?;
    assert_eq!(view.job.draft.chat_id.as_deref(), Some(chat_id.as_str()));
    let chats = h.runtime.list_chats().await?;
    let chat = chats
        .iter()
        .find(|c| c.id == chat_id)
        .context("chat not listed")?;
    assert_eq!(
        (chat.title.as_str(), chat.mode),
        ("Nightly push", PermissionMode::Auto)
    );
    let messages = h.runtime.messages(&chat_id).await?;
    let ChatMessage::User { text, .. } = &messages[0].message else {
        bail!("{messages:?}");
    };
    assert!(
        text.starts_with("[scheduled run of \"Nightly push\" for 2026-06-01 09:00 UTC"),
        "{text}"
    );
    let ChatMessage::Tool {
        content, is_error, ..
    } = &messages[2].message
    else {
        bail!("{messages:?}");
    };
    assert!(
        *is_error && content.contains("headless_ask_denied"),
        "{content}"
    );
    assert_eq!(model.remaining(), 0);
    Ok(())
}

#[tokio::test]
async fn a_hanging_run_times_out_its_processes_are_killed_and_its_retry_never_overlaps_it()
-> Result<()> {
    let script = "sleep 3; echo X >> out.txt";
    // Auto mode sends the command to the reviewer model, which lets it run.
    let review = || {
        Turn::text(
            serde_json::json!({"should_block": false, "reason": "appends to a workspace file", "confidence": "high", "riskCategories": []})
                .to_string(),
        )
    };
    let model = ScriptedServer::start(vec![
        call(
            "call_first",
            "run_command",
            serde_json::json!({"content": script, "timeout": 60}),
        ),
        review(),
        call(
            "call_retry",
            "run_command",
            serde_json::json!({"content": script, "timeout": 60}),
        ),
        review(),
    ])
    .await;
    let h = harness(&model).await?;
    let job = h
        .job("Slow job", "0 9 * * *", "Append to out.txt.", |j| {
            j.timeout_secs = Some(5);
            j.max_retries = Some(1);
        })
        .await?;
    h.at(utc(9, 0, 0)).await?;
    // The first attempt's command runs; then its 5 s are up.
    let first = wait_for_process(&h.ws, script).await?;
    h.clock.set(utc(9, 0, 5));
    // The retry's command starts only once the first one's whole tree is gone.
    let mut retry = None;
    for _ in 0..400 {
        let seen = processes_in(&h.ws);
        let matching: Vec<u32> = seen
            .iter()
            .filter(|(_, c)| c.contains(script))
            .map(|(p, _)| *p)
            .collect();
        // A shell's own fork before it execs `sleep` has the shell's command line too: an
        // attempt is a matching process whose parent is not one.
        let shells: Vec<u32> = matching
            .iter()
            .copied()
            .filter(|p| !parent_of(*p).is_some_and(|pp| matching.contains(&pp)))
            .collect();
        assert!(shells.len() <= 1, "two attempts at once: {seen:?}");
        if let Some(pid) = shells.iter().find(|p| **p != first) {
            assert!(
                !seen.iter().any(|(p, _)| *p == first),
                "the first attempt outlived its timeout"
            );
            retry = Some(*pid);
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    retry.context("the retry never started its command")?;
    h.clock.set(utc(9, 0, 30));
    let runs = h.until(&job, |r| r.len() == 2 && ended(r)).await?;
    assert_eq!(
        runs.iter()
            .map(|r| (r.attempt, r.trigger, r.status))
            .collect::<Vec<_>>(),
        vec![
            (1, RunTrigger::Schedule, RunStatus::TimedOut),
            (2, RunTrigger::Retry, RunStatus::TimedOut)
        ]
    );
    assert_eq!(
        runs[0].detail.as_deref(),
        Some("timed out after 5 s; the run and the processes it started were stopped")
    );
    // Nothing of either attempt is left, and neither got to write (sleep 3 would have ended).
    assert_eq!(processes_in(&h.ws), Vec::<(u32, String)>::new());
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(
        !h.ws.join("out.txt").exists(),
        "a killed attempt wrote its line"
    );
    assert_eq!(processes_in(&h.ws), Vec::<(u32, String)>::new());
    Ok(())
}

/// The parent pid of `pid` (`/proc/PID/stat` field 4), when it still runs.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

async fn wait_for_process(ws: &Path, marker: &str) -> Result<u32> {
    for _ in 0..400 {
        if let Some((pid, _)) = processes_in(ws)
            .into_iter()
            .find(|(_, c)| c.contains(marker))
        {
            return Ok(pid);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    bail!("no process running '{marker}' in {}", ws.display())
}

// ---------------------------------------------------------------- heartbeats

#[tokio::test]
async fn a_heartbeat_with_nothing_to_do_is_stored_and_folded_and_without_a_checklist_asks_nothing()
-> Result<()> {
    let model = ScriptedServer::start(vec![Turn::text("HEARTBEAT_OK")]).await;
    let h = harness(&model).await?;
    std::fs::write(
        h.ws.join("HEARTBEAT.md"),
        "- [ ] renew the TLS certificate when it has < 7 days left\n",
    )?;
    let chat = h
        .runtime
        .create_chat(CreateChat {
            workspace: Some(h.ws.clone()),
            ..CreateChat::default()
        })
        .await?;
    let beat = h
        .runtime
        .schedules()
        .set_heartbeat(&chat.id, Some(30))
        .await?
        .context("no job")?;
    let id = beat.draft.id.clone();
    h.at(utc(9, 0, 0)).await?;
    let runs = h.until(&id, ended).await?;
    assert_eq!(
        (runs[0].status, runs[0].quiet, runs[0].detail.as_deref()),
        (RunStatus::Completed, true, Some("nothing to do"))
    );
    // Stored, never deleted; the UI folds the turn.
    let messages = h.runtime.messages(&chat.id).await?;
    assert_eq!(messages.len(), 2);
    let turn = runs[0].turn_run_id.clone().context("no turn id")?;
    assert_eq!(
        h.runtime.schedules().quiet_turns(&chat.id).await?,
        vec![turn]
    );
    // Without the checklist the next beat sends nothing to the model.
    std::fs::remove_file(h.ws.join("HEARTBEAT.md"))?;
    h.at(utc(9, 30, 0)).await?;
    let runs = h.until(&id, |r| r.len() == 2 && ended(r)).await?;
    assert!(
        runs[1].quiet
            && runs[1]
                .detail
                .as_deref()
                .is_some_and(|d| d.contains("missing or empty")),
        "{:?}",
        runs[1]
    );
    assert_eq!(model.requests().len(), 1);
    // Off again.
    assert_eq!(
        h.runtime.schedules().set_heartbeat(&chat.id, None).await?,
        None
    );
    assert_eq!(h.runtime.schedules().heartbeat(&chat.id).await?, None);
    Ok(())
}

// ---------------------------------------------------------------- goals

async fn goal_chat(h: &Harness) -> Result<String> {
    Ok(h.runtime
        .create_chat(CreateChat {
            workspace: Some(h.ws.clone()),
            ..CreateChat::default()
        })
        .await?
        .id)
}

fn verdict(met: bool, reason: &str) -> Turn {
    Turn::text(serde_json::json!({"met": met, "reason": reason}).to_string())
}

#[tokio::test]
async fn a_goal_whose_judge_answers_garbage_is_paused_with_the_reason() -> Result<()> {
    let model = ScriptedServer::start(vec![
        Turn::text("I listed the files."),
        Turn::text("banana"),
    ])
    .await;
    let h = harness(&model).await?;
    let chat = goal_chat(&h).await?;
    h.runtime
        .goals()
        .set(
            &chat,
            GoalInput {
                objective: "tidy the workspace".into(),
                ..GoalInput::default()
            },
        )
        .await?;
    let goal = h.runtime.goals().drive(&chat).await?;
    assert_eq!((goal.status, goal.turns_used), (GoalStatus::Paused, 1));
    assert_eq!(
        goal.reason.as_deref(),
        Some(
            "the judge's answer is not a verdict (expected {\"met\": true|false, \"reason\": ...}): \"banana\""
        )
    );
    assert_eq!(model.remaining(), 0);
    Ok(())
}

#[tokio::test]
async fn a_goal_is_met_in_three_turns_and_its_counts_are_stored() -> Result<()> {
    let model = ScriptedServer::start(vec![
        Turn::text("Wrote a.txt."),
        verdict(false, "b.txt and c.txt are missing"),
        Turn::text("Wrote b.txt."),
        verdict(false, "c.txt is missing"),
        Turn::text("Wrote c.txt."),
        verdict(true, "all three files exist"),
    ])
    .await;
    let h = harness(&model).await?;
    let chat = goal_chat(&h).await?;
    h.runtime
        .goals()
        .set(
            &chat,
            GoalInput {
                objective: "create a.txt, b.txt and c.txt".into(),
                max_turns: Some(10),
                ..GoalInput::default()
            },
        )
        .await?;
    let goal = h.runtime.goals().drive(&chat).await?;
    assert_eq!(
        (goal.status, goal.turns_used, goal.reason.as_deref()),
        (GoalStatus::Met, 3, Some("all three files exist"))
    );
    assert!(goal.tokens_used > 0);
    assert_eq!(h.runtime.goals().get(&chat).await?, Some(goal));
    // Each turn was asked for by the goal, in the chat, headless.
    let asks: Vec<String> = h
        .runtime
        .messages(&chat)
        .await?
        .into_iter()
        .filter_map(|m| match m.message {
            ChatMessage::User { text, .. } => {
                Some(text.lines().next().unwrap_or_default().to_string())
            }
            _ => None,
        })
        .collect();
    assert_eq!(asks.len(), 3);
    assert!(
        asks[2].starts_with("[goal: turn 3 of at most 10."),
        "{asks:?}"
    );
    // The judge saw the objective as data.
    let judge = &model.requests()[1];
    assert!(judge.to_string().contains("create a.txt, b.txt and c.txt"));
    Ok(())
}

#[tokio::test]
async fn a_goal_stops_when_its_turn_or_token_budget_is_spent() -> Result<()> {
    let model = ScriptedServer::start(vec![
        Turn::text("Step one."),
        verdict(false, "not yet"),
        Turn::text("Step two."),
        verdict(false, "not yet"),
        // The second goal: one turn uses more than its 20 tokens.
        Turn::text("A long answer that uses far more than twenty tokens of the budget, by design."),
        verdict(false, "not yet"),
    ])
    .await;
    let h = harness(&model).await?;
    let chat = goal_chat(&h).await?;
    let goals = h.runtime.goals();
    goals
        .set(
            &chat,
            GoalInput {
                objective: "finish".into(),
                max_turns: Some(2),
                ..GoalInput::default()
            },
        )
        .await?;
    let goal = goals.drive(&chat).await?;
    assert_eq!(
        (goal.status, goal.turns_used, goal.reason.as_deref()),
        (
            GoalStatus::BudgetSpent,
            2,
            Some("the turn budget of 2 turns is spent")
        )
    );
    let other = goal_chat(&h).await?;
    goals
        .set(
            &other,
            GoalInput {
                objective: "finish".into(),
                max_tokens: Some(20),
                ..GoalInput::default()
            },
        )
        .await?;
    let goal = goals.drive(&other).await?;
    assert_eq!((goal.status, goal.turns_used), (GoalStatus::BudgetSpent, 1));
    assert!(
        goal.reason
            .as_deref()
            .is_some_and(|r| r.starts_with("the token budget of 20 tokens is spent")),
        "{goal:?}"
    );
    assert_eq!(model.remaining(), 0, "no turn beyond a budget");
    Ok(())
}

// ---------------------------------------------------------------- dreams

#[tokio::test]
async fn a_dream_merges_duplicates_and_updates_facts_and_a_failed_one_changes_nothing() -> Result<()>
{
    let model = ScriptedServer::start(vec![Turn::text("I would rather not.")]).await;
    let h = harness(&model).await?;
    let mut texts: Vec<String> = (0..18)
        .map(|i| format!("note {i} about the project"))
        .collect();
    texts.push("The user likes green tea.".into());
    texts.push("User drinks green tea every morning.".into());
    let ids = h.runtime.archive_memories(None, "tool", &texts).await?;
    let job = h.runtime.schedules().ensure_dream().await?.draft.id;
    assert_eq!(job, "dream");
    let before = h.runtime.search_memory("tea", 10).await?;
    // A reply that is not a plan: the run fails and nothing changes.
    h.runtime.schedules().run_now(&job).await?;
    let runs = h.until(&job, ended).await?;
    assert_eq!(runs[0].status, RunStatus::Failed);
    assert!(
        runs[0]
            .detail
            .as_deref()
            .is_some_and(|d| d.ends_with("nothing was changed")),
        "{:?}",
        runs[0]
    );
    assert_eq!(h.runtime.search_memory("tea", 10).await?, before);
    // A plan: the two tea memories become one, facts are rewritten, the run records it.
    let (a, b) = (ids[18], ids[19]);
    let plan = serde_json::json!({"merges": [{"ids": [a, b], "text": "The user drinks green tea every morning."}], "facts": "Drinks green tea."});
    model.push_turns(vec![Turn::text(format!("```json\n{plan}\n```"))]);
    h.runtime.schedules().run_now(&job).await?;
    let runs = h.until(&job, |r| r.len() == 2 && ended(r)).await?;
    let run = &runs[1];
    assert_eq!(
        (run.status, run.detail.as_deref()),
        (
            RunStatus::Completed,
            Some("merged 2 memories into 1; facts updated")
        )
    );
    let changes = run.changes.clone().context("no changes recorded")?;
    assert_eq!(changes["merged"][0]["removed"], serde_json::json!([a, b]));
    assert_eq!(
        changes["facts"],
        serde_json::json!({"before": "", "after": "Drinks green tea."})
    );
    let blocks = h.runtime.memory_blocks().await?;
    assert!(
        blocks.contains(&("facts".to_string(), "Drinks green tea.".to_string())),
        "{blocks:?}"
    );
    let tea = h.runtime.search_memory("tea", 10).await?;
    assert_eq!(tea.hits.len(), 1, "{tea:?}");
    // The dream's chat has read tools only.
    let chat = run.chat_id.clone().context("no chat")?;
    let tools = h.runtime.chat(&chat).await?.tools.unwrap_or_default();
    assert_eq!(
        tools,
        vec!["memory_search", "read_file", "glob_search", "grep_search"]
    );
    Ok(())
}
