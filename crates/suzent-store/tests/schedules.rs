//! Scheduled jobs, runs, the scheduler lease and goals against real database files.

use anyhow::Result;
use chrono::{DateTime, TimeZone, Utc};
use pretty_assertions::assert_eq;
use std::time::Duration;
use suzent_core::{
    CatchUpPolicy, Delivery, GoalStatus, JobKind, OverlapPolicy, PermissionMode, RunStatus,
    RunTrigger,
};
use suzent_store::{Claim, JobDraft, LeaseOutcome, NewChat, NewRun, RunEnd, Store};

fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, h, m, s)
        .single()
        .unwrap_or_default()
}

fn draft(id: &str, chat: Option<&str>) -> JobDraft {
    JobDraft {
        id: id.to_string(),
        name: format!("job {id}"),
        kind: JobKind::Prompt,
        schedule: "*/5 * * * *".to_string(),
        timezone: "Europe/Berlin".to_string(),
        prompt: "Summarize the inbox".to_string(),
        workspace: Some("/tmp".to_string()),
        model: Some("openai/gpt-4.1".to_string()),
        chat_id: chat.map(str::to_string),
        delivery: Delivery::Notify,
        overlap: OverlapPolicy::Skip,
        catch_up: CatchUpPolicy::RunOnce,
        timeout_secs: 600,
        max_retries: 0,
        enabled: true,
    }
}

fn run_at(job: &str, slot: DateTime<Utc>) -> NewRun {
    NewRun {
        job_id: job.to_string(),
        slot,
        attempt: 1,
        trigger: RunTrigger::Schedule,
        catch_up: false,
        missed: 0,
        status: RunStatus::Running,
        detail: None,
    }
}

async fn chat(store: &Store, id: &str) -> Result<()> {
    store
        .create_chat(&NewChat {
            id: id.to_string(),
            title: id.to_string(),
            workspace: "/tmp".to_string(),
            model: None,
            mode: PermissionMode::Auto,
            tools: None,
        })
        .await?;
    Ok(())
}

async fn own_lease(store: &Store, owner: &str, now: DateTime<Utc>) -> Result<()> {
    let got = store
        .acquire_scheduler_lease(owner, 1, "host", now, Duration::from_secs(30))
        .await?;
    assert!(matches!(got, LeaseOutcome::Acquired(_)), "{got:?}");
    Ok(())
}

#[tokio::test]
async fn registering_and_importing_the_same_jobs_twice_keeps_three_jobs_with_their_bindings()
-> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("suzent.db");
    let store = Store::open(&path).await?;
    for c in ["c1", "c2"] {
        chat(&store, c).await?;
    }
    let jobs = [
        draft("a", Some("c1")),
        draft("b", Some("c2")),
        draft("c", None),
    ];
    for job in &jobs {
        assert!(
            store.upsert_job(job, at(9, 0, 0)).await?.1,
            "new job {}",
            job.id
        );
    }
    let before = store.list_jobs().await?;
    // The upgrade path: the migrations run again on the same file, and the jobs are registered
    // again; then an import of the same jobs file twice, which carries no chat bindings.
    store.close().await;
    for _ in 0..2 {
        let store = Store::open(&path).await?;
        for job in &jobs {
            assert!(!store.upsert_job(job, at(9, 1, 0)).await?.1);
        }
        store.close().await;
    }
    let store = Store::open(&path).await?;
    for _ in 0..2 {
        for job in &jobs {
            let imported = JobDraft {
                chat_id: None,
                ..job.clone()
            };
            assert!(!store.upsert_job(&imported, at(9, 2, 0)).await?.1);
        }
    }
    let after = store.list_jobs().await?;
    let ids = |jobs: &[suzent_store::JobRecord]| {
        jobs.iter()
            .map(|j| {
                (
                    j.draft.id.clone(),
                    j.draft.chat_id.clone(),
                    j.cursor,
                    j.created_at,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&after), ids(&before));
    Ok(())
}

#[tokio::test]
async fn a_new_changed_or_resumed_job_never_fires_slots_from_before() -> Result<()> {
    let store = Store::open_in_memory().await?;
    let (job, _) = store.upsert_job(&draft("a", None), at(9, 0, 0)).await?;
    assert_eq!(job.cursor, at(9, 0, 0));
    let paused = store.set_job_enabled("a", false, at(9, 10, 0)).await?;
    assert_eq!(paused.cursor, at(9, 0, 0));
    let resumed = store.set_job_enabled("a", true, at(11, 0, 0)).await?;
    assert_eq!(resumed.cursor, at(11, 0, 0));
    let mut changed = resumed.draft.clone();
    changed.schedule = "0 3 * * *".into();
    assert_eq!(
        store.upsert_job(&changed, at(12, 0, 0)).await?.0.cursor,
        at(12, 0, 0)
    );
    Ok(())
}

#[tokio::test]
async fn an_occurrence_is_claimed_once_even_from_a_second_store_handle() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("suzent.db");
    let first = Store::open(&path).await?;
    first.upsert_job(&draft("a", None), at(8, 0, 0)).await?;
    own_lease(&first, "sched-1", at(9, 0, 0)).await?;
    let claim = first
        .claim_run(
            "sched-1",
            1,
            &run_at("a", at(9, 0, 0)),
            Some(at(9, 0, 0)),
            at(9, 0, 0),
            at(9, 0, 0),
        )
        .await?;
    let Claim::Claimed(run) = claim else {
        anyhow::bail!("not claimed: {claim:?}");
    };
    assert_eq!(run.status, RunStatus::Running);
    assert_eq!(run.started_at, Some(at(9, 0, 0)));
    // After a restart: the same slot again.
    let second = Store::open(&path).await?;
    let again = second
        .claim_run(
            "sched-1",
            1,
            &run_at("a", at(9, 0, 0)),
            Some(at(9, 0, 0)),
            at(9, 0, 20),
            at(9, 0, 20),
        )
        .await?;
    assert_eq!(again, Claim::Duplicate);
    assert_eq!(second.list_runs(Some("a"), 10).await?.len(), 1);
    assert_eq!(
        second.get_job("a").await?.map(|j| j.cursor),
        Some(at(9, 0, 0))
    );
    Ok(())
}

#[tokio::test]
async fn one_owner_holds_the_scheduler_lease_until_it_expires() -> Result<()> {
    let store = Store::open_in_memory().await?;
    let ttl = Duration::from_secs(30);
    own_lease(&store, "app", at(9, 0, 0)).await?;
    let refused = store
        .acquire_scheduler_lease("cli", 2, "host", at(9, 0, 10), ttl)
        .await?;
    let LeaseOutcome::Held(holder) = refused else {
        anyhow::bail!("the second owner got the lease: {refused:?}");
    };
    assert_eq!((holder.owner.as_str(), holder.pid), ("app", 1));
    // A claim by the one without the lease writes nothing.
    store.upsert_job(&draft("a", None), at(8, 0, 0)).await?;
    let claim = store
        .claim_run(
            "cli",
            2,
            &run_at("a", at(9, 0, 0)),
            None,
            at(9, 0, 10),
            at(9, 0, 10),
        )
        .await?;
    assert_eq!(claim, Claim::LeaseLost);
    assert!(store.list_runs(None, 10).await?.is_empty());
    // Renewed by its owner; taken over only once it has expired.
    own_lease(&store, "app", at(9, 0, 20)).await?;
    let still = store
        .acquire_scheduler_lease("cli", 2, "host", at(9, 0, 45), ttl)
        .await?;
    assert!(matches!(still, LeaseOutcome::Held(_)), "{still:?}");
    own_lease(&store, "cli", at(9, 0, 51)).await?;
    Ok(())
}

#[tokio::test]
async fn an_occurrence_while_the_job_runs_follows_its_overlap_policy() -> Result<()> {
    let store = Store::open_in_memory().await?;
    own_lease(&store, "s", at(9, 0, 0)).await?;
    let mut outcomes = Vec::new();
    for (id, overlap) in [
        ("skip", OverlapPolicy::Skip),
        ("queue", OverlapPolicy::QueueOne),
        ("allow", OverlapPolicy::Allow),
    ] {
        let job = JobDraft {
            overlap,
            ..draft(id, None)
        };
        store.upsert_job(&job, at(8, 0, 0)).await?;
        let mut statuses = Vec::new();
        for minute in 0..3 {
            let slot = at(9, minute, 0);
            own_lease(&store, "s", slot).await?;
            match store
                .claim_run("s", 1, &run_at(id, slot), Some(slot), slot, slot)
                .await?
            {
                Claim::Claimed(run) => statuses.push(run.status),
                other => anyhow::bail!("{other:?}"),
            }
        }
        outcomes.push((id, statuses));
    }
    use RunStatus::{Queued, Running, Skipped};
    assert_eq!(
        outcomes,
        vec![
            ("skip", vec![Running, Skipped, Skipped]),
            ("queue", vec![Running, Queued, Skipped]),
            ("allow", vec![Running, Running, Running]),
        ]
    );
    // The queued run starts once the running one has ended, not before.
    let runs = store.list_runs(Some("queue"), 10).await?;
    let queued = runs
        .iter()
        .find(|r| r.status == Queued)
        .map(|r| r.id.clone());
    let running = runs
        .iter()
        .find(|r| r.status == Running)
        .map(|r| r.id.clone());
    let (Some(queued), Some(running)) = (queued, running) else {
        anyhow::bail!("{runs:?}");
    };
    own_lease(&store, "s", at(9, 2, 10)).await?;
    let waiting = store
        .start_waiting_run("s", 1, &queued, at(9, 2, 10), at(9, 2, 10))
        .await?;
    assert_eq!(waiting.map(|r| r.status), Some(Queued));
    let end = RunEnd {
        status: Some(RunStatus::Completed),
        steps: 2,
        ..RunEnd::default()
    };
    assert!(store.finish_run(&running, &end, at(9, 2, 20)).await?);
    assert!(
        !store.finish_run(&running, &end, at(9, 2, 21)).await?,
        "ended once"
    );
    let started = store
        .start_waiting_run("s", 1, &queued, at(9, 2, 30), at(9, 2, 30))
        .await?;
    assert_eq!(
        started.map(|r| (r.status, r.started_at)),
        Some((Running, Some(at(9, 2, 30))))
    );
    Ok(())
}

#[tokio::test]
async fn a_goal_keeps_its_counts_across_reopening_the_store() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("suzent.db");
    let store = Store::open(&path).await?;
    chat(&store, "c").await?;
    store
        .set_goal("c", "make the tests pass", 10, 50_000)
        .await?;
    store
        .update_goal("c", GoalStatus::Active, None, 1, 1200)
        .await?;
    store.close().await;
    let store = Store::open(&path).await?;
    let goal = store
        .update_goal("c", GoalStatus::Paused, Some("paused by the user"), 1, 800)
        .await?;
    assert_eq!(
        (
            goal.status,
            goal.reason.as_deref(),
            goal.turns_used,
            goal.tokens_used
        ),
        (GoalStatus::Paused, Some("paused by the user"), 2, 2000)
    );
    Ok(())
}
