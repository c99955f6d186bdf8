//! Heartbeats: every N minutes a chat's agent reads `HEARTBEAT.md` in the chat's workspace and
//! acts on what is due. A reply of `HEARTBEAT_OK` (nothing to do) is stored like any other and
//! marked quiet, so the UI folds it; nothing is ever deleted.

use super::runner::{failed, headless_turn};
use crate::runtime::Runtime;
use crate::scheduler::RunReport;
use suzent_store::{JobRecord, RunRecord, Store};
use tokio_util::sync::CancellationToken;

/// The checklist a heartbeat reads, at the root of the chat's workspace.
pub const HEARTBEAT_FILE: &str = "HEARTBEAT.md";
/// What the agent replies when nothing needs doing.
pub const HEARTBEAT_OK: &str = "HEARTBEAT_OK";
/// Characters of the checklist sent at most.
const MAX_CHECKLIST_CHARS: usize = 20_000;

/// Whether a reply says there was nothing to do.
pub(crate) fn is_quiet(reply: &str) -> bool {
    let reply = reply.trim().trim_end_matches(['.', '!']);
    reply == HEARTBEAT_OK || reply.starts_with(&format!("{HEARTBEAT_OK}\n"))
}

pub(crate) async fn run(
    rt: &Runtime,
    store: &Store,
    job: &JobRecord,
    run: &RunRecord,
    cancel: CancellationToken,
) -> RunReport {
    let Some(chat_id) = job.draft.chat_id.clone() else {
        return failed("the chat of this heartbeat was deleted");
    };
    let chat = match rt.chat(&chat_id).await {
        Ok(c) => c,
        Err(e) => return failed(format!("the chat of this heartbeat is gone: {e}")),
    };
    let path = std::path::Path::new(&chat.workspace).join(HEARTBEAT_FILE);
    let checklist = match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => text,
        Ok(_) | Err(_) => {
            return RunReport {
                quiet: true,
                detail: Some(format!(
                    "no checklist: {} is missing or empty",
                    path.display()
                )),
                ..RunReport::default()
            };
        }
    };
    let checklist: String = checklist.chars().take(MAX_CHECKLIST_CHARS).collect();
    let text = format!(
        "[heartbeat: a scheduled check of {HEARTBEAT_FILE}. Nobody is watching: calls that need approval are refused.]\n\
         Here is the checklist from {HEARTBEAT_FILE} in the workspace. Do what on it is due now. \
         If nothing needs doing, reply with exactly {HEARTBEAT_OK} and nothing else.\n\n{checklist}"
    );
    let turn = headless_turn(rt, store, run, &chat_id, &text, cancel).await;
    let mut report = turn.report;
    if is_quiet(&turn.text) {
        report.quiet = true;
        report.detail = Some("nothing to do".into());
    }
    report
}

#[cfg(test)]
mod tests {
    use super::is_quiet;

    #[test]
    fn only_a_bare_heartbeat_ok_counts_as_nothing_to_do() {
        assert!(is_quiet("HEARTBEAT_OK"));
        assert!(is_quiet("  HEARTBEAT_OK.\n"));
        assert!(!is_quiet("I renewed the certificate. HEARTBEAT_OK"));
        assert!(!is_quiet("heartbeat ok"));
    }
}
