//! Dreams: memory consolidation on a schedule. When enough memories were added since the last
//! dream, a headless turn with only memory search and read tools looks at the newest memories
//! and the `facts` block and answers with a consolidation plan (JSON); the plan is checked and
//! applied in one transaction (duplicates replaced by one merged entry, `facts` rewritten), and
//! what changed is recorded with the run. A run that fails, times out or answers an invalid plan
//! changes nothing.

use super::runner::{failed, headless_turn, job_chat};
use crate::memory::MAX_BLOCK_CHARS;
use crate::runtime::Runtime;
use crate::scheduler::RunReport;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;
use suzent_core::{CatchUpPolicy, Delivery, JobKind, OverlapPolicy, RunStatus};
use suzent_store::{JobDraft, JobRecord, Merge, RunRecord, Store};
use tokio_util::sync::CancellationToken;

/// The id of the built-in consolidation job.
pub const DREAM_JOB_ID: &str = "dream";
/// A dream runs only when at least this many memories were added since the last one.
pub const DEFAULT_DREAM_MIN_MEMORIES: i64 = 20;
/// Memories shown to a dream at most (the newest).
const MAX_SHOWN: u32 = 200;
/// Longest merged memory.
const MAX_MERGED_CHARS: usize = 4_000;
/// The only tools a dream's chat has: it reads; its changes come back as the plan.
const DREAM_TOOLS: &[&str] = &["memory_search", "read_file", "glob_search", "grep_search"];

/// The plan a dream answers with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DreamPlan {
    /// Groups of duplicate memories, each to be replaced by one merged text.
    #[serde(default)]
    pub merges: Vec<Merge>,
    /// The new `facts` block (`null`: unchanged).
    #[serde(default)]
    pub facts: Option<String>,
}

/// The built-in job: daily at 03:00 in `timezone`, silent.
pub(crate) fn default_job(timezone: String) -> JobDraft {
    JobDraft {
        id: DREAM_JOB_ID.to_string(),
        name: "Memory consolidation".to_string(),
        kind: JobKind::Dream,
        schedule: "0 3 * * *".to_string(),
        timezone,
        prompt: String::new(),
        workspace: None,
        model: None,
        chat_id: None,
        delivery: Delivery::Silent,
        overlap: OverlapPolicy::Skip,
        catch_up: CatchUpPolicy::RunOnce,
        timeout_secs: 1_800,
        max_retries: 0,
        enabled: true,
    }
}

/// Reads the plan out of a reply: the outermost `{...}` (a fenced block is fine).
pub(crate) fn parse_plan(reply: &str) -> Result<DreamPlan, String> {
    let (Some(start), Some(end)) = (reply.find('{'), reply.rfind('}')) else {
        return Err("the reply holds no JSON object".into());
    };
    if end < start {
        return Err("the reply holds no JSON object".into());
    }
    serde_json::from_str(&reply[start..=end])
        .map_err(|e| format!("the plan is not valid JSON: {e}"))
}

fn check_plan(plan: &DreamPlan, shown: &[i64]) -> Result<(), String> {
    for (i, merge) in plan.merges.iter().enumerate() {
        if merge.ids.len() < 2 {
            return Err(format!(
                "merge {i} names {} memory; a merge needs two or more",
                merge.ids.len()
            ));
        }
        if let Some(id) = merge.ids.iter().find(|id| !shown.contains(id)) {
            return Err(format!(
                "merge {i} names memory {id}, which was not among those shown"
            ));
        }
        let chars = merge.text.chars().count();
        if merge.text.trim().is_empty() || chars > MAX_MERGED_CHARS {
            return Err(format!(
                "merge {i} has a text of {chars} characters; give 1 to {MAX_MERGED_CHARS}"
            ));
        }
    }
    if let Some(facts) = &plan.facts
        && facts.chars().count() > MAX_BLOCK_CHARS
    {
        return Err(format!(
            "the facts block is longer than {MAX_BLOCK_CHARS} characters"
        ));
    }
    Ok(())
}

pub(crate) async fn run(
    rt: &Runtime,
    store: &Store,
    job: &JobRecord,
    run: &RunRecord,
    cancel: CancellationToken,
    now: DateTime<Utc>,
) -> RunReport {
    let user = crate::chats::whoami();
    // Since the last dream that looked at memories.
    let since = match store.list_runs(Some(&job.draft.id), 200).await {
        Ok(runs) => runs
            .into_iter()
            .find(|r| r.id != run.id && r.status == RunStatus::Completed && !r.quiet)
            .and_then(|r| r.started_at),
        Err(e) => return failed(e.to_string()),
    };
    let new = match store.archival_added_since(&user, since).await {
        Ok(n) => n,
        Err(e) => return failed(e.to_string()),
    };
    if new < DEFAULT_DREAM_MIN_MEMORIES {
        return RunReport {
            quiet: true,
            detail: Some(format!(
                "{new} new memories since the last consolidation; it runs at {DEFAULT_DREAM_MIN_MEMORIES}"
            )),
            ..RunReport::default()
        };
    }
    let entries = match store.recent_archival(&user, MAX_SHOWN).await {
        Ok(e) => e,
        Err(e) => return failed(e.to_string()),
    };
    let facts = match store.memory_blocks(&user).await {
        Ok(blocks) => blocks
            .into_iter()
            .find(|(b, _)| b == "facts")
            .map(|(_, c)| c)
            .unwrap_or_default(),
        Err(e) => return failed(e.to_string()),
    };
    let chat_id = match job_chat(rt, store, job).await {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot open the consolidation chat: {e}")),
    };
    if let Err(e) = rt
        .set_tools(
            &chat_id,
            Some(DREAM_TOOLS.iter().map(|t| t.to_string()).collect()),
        )
        .await
    {
        return failed(format!("cannot limit the consolidation chat's tools: {e}"));
    }
    let listing: String = entries
        .iter()
        .map(|e| {
            format!(
                "[{}] ({}, {}) {}\n",
                e.id,
                e.created_at.format("%Y-%m-%d"),
                e.source,
                e.content
            )
        })
        .collect();
    let text = format!(
        "[memory consolidation, {}. Nobody is watching.]\n\
         Below are the newest {} archival memories (id, date, source, text) and the current `facts` block. \
         Find memories that say the same thing and merge each group into one text; rewrite `facts` \
         (at most {MAX_BLOCK_CHARS} characters) to hold the durable facts about the user and their work. \
         You may search and read, but change nothing yourself. Answer with only a JSON object: \
         {{\"merges\": [{{\"ids\": [1, 2], \"text\": \"merged text\"}}], \"facts\": \"new facts block or null\"}}.\n\n\
         facts:\n{facts}\n\nmemories:\n{listing}",
        now.format("%Y-%m-%d %H:%M UTC"),
        entries.len()
    );
    let turn = headless_turn(rt, store, run, &chat_id, &text, cancel).await;
    let mut report = turn.report;
    if report.status != Some(RunStatus::Completed) {
        return report;
    }
    let nothing = "; nothing was changed";
    let plan = match parse_plan(&turn.text) {
        Ok(p) => p,
        Err(e) => {
            report.status = Some(RunStatus::Failed);
            report.detail = Some(format!("{e}{nothing}"));
            return report;
        }
    };
    let shown: Vec<i64> = entries.iter().map(|e| e.id).collect();
    if let Err(e) = check_plan(&plan, &shown) {
        report.status = Some(RunStatus::Failed);
        report.detail = Some(format!("the plan is not usable: {e}{nothing}"));
        return report;
    }
    match store
        .apply_consolidation(&user, Some(&chat_id), &plan.merges, plan.facts.as_deref())
        .await
    {
        Ok(done) => {
            let removed: usize = done.merged.iter().map(|(m, _)| m.ids.len()).sum();
            report.detail = Some(format!(
                "merged {removed} memories into {}; facts {}",
                done.merged.len(),
                if done.facts.is_some() {
                    "updated"
                } else {
                    "unchanged"
                }
            ));
            report.changes = Some(json!({
                "merged": done.merged.iter().map(|(m, id)| json!({"removed": m.ids, "added": id, "text": m.text})).collect::<Vec<_>>(),
                "facts": done.facts.map(|(before, after)| json!({"before": before, "after": after})),
            }));
            report
        }
        Err(e) => {
            report.status = Some(RunStatus::Failed);
            report.detail = Some(format!("{e}{nothing}"));
            report
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_plan_is_read_from_a_fenced_reply_and_bad_plans_are_refused() {
        let plan = parse_plan(
            "Here:\n```json\n{\"merges\":[{\"ids\":[3,4],\"text\":\"likes tea\"}],\"facts\":null}\n```",
        );
        assert_eq!(
            plan,
            Ok(DreamPlan {
                merges: vec![Merge {
                    ids: vec![3, 4],
                    text: "likes tea".into()
                }],
                facts: None
            })
        );
        assert!(parse_plan("no plan today").is_err());
        let one = DreamPlan {
            merges: vec![Merge {
                ids: vec![3],
                text: "x".into(),
            }],
            facts: None,
        };
        assert_eq!(
            check_plan(&one, &[3]),
            Err("merge 0 names 1 memory; a merge needs two or more".into())
        );
        let stranger = DreamPlan {
            merges: vec![Merge {
                ids: vec![3, 9],
                text: "x".into(),
            }],
            facts: None,
        };
        assert_eq!(
            check_plan(&stranger, &[3, 4]),
            Err("merge 0 names memory 9, which was not among those shown".into())
        );
    }
}
