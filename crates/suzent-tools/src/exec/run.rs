//! A command run to its end (`run_command`): when the main shell exits, whatever it left running
//! in its process group is stopped and the output collected so far is returned, so a background
//! child holding the output pipe open never makes the call hang. A timeout or a cancelled turn
//! stops the whole tree.

use super::journal::{JournalEntry, JournalTicket};
use super::os::ProcessIdentity;
use super::output::TailBuffer;
use super::{ExecError, Process, ProgramRequest, ShellRequest};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// After the tree is killed: how long to wait for the last output.
const DRAIN: Duration = Duration::from_secs(1);

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// The main shell exited.
    Exited,
    /// The timeout expired; the tree was stopped.
    TimedOut,
    /// The turn was cancelled; the tree was stopped.
    Cancelled,
}

/// The result of [`run_capped`].
pub(crate) struct Run {
    /// How it ended.
    pub(crate) end: End,
    /// The exit status, when the main process was reaped.
    pub(crate) status: Option<ExitStatus>,
    /// The last `cap` bytes of output (lossy UTF-8, starting on a character).
    pub(crate) output: String,
    /// Bytes dropped before `output`.
    pub(crate) dropped_bytes: u64,
    /// Whether processes left running by the shell were stopped.
    pub(crate) stopped_leftovers: bool,
}

/// Runs `request` until it exits, `timeout` expires or `cancel` fires, keeping the last `cap`
/// bytes of its output. With a `journal` ticket the process group is recorded while it runs.
pub(crate) async fn run_capped(
    request: &ShellRequest<'_>,
    timeout: Duration,
    cancel: &CancellationToken,
    cap: usize,
    journal: Option<&JournalTicket>,
) -> Result<Run, ExecError> {
    let buffer = Arc::new(Mutex::new(TailBuffer::new(cap)));
    let sink = {
        let buffer = Arc::clone(&buffer);
        move |chunk: &[u8]| {
            if let Ok(mut b) = buffer.lock() {
                b.push(chunk);
            }
        }
    };
    // A Docker-sandboxed command's container is killed when the process is dropped before it
    // is marked exited (a timeout, a cancellation, or this future being dropped).
    let process = Process::spawn(request, "run_command-output".into(), sink)?;
    let leader = process.pid().map(ProcessIdentity::of);
    let record = JournalEntry::record(journal, None, request.script, leader).await;
    let run = wait_capped(process, timeout, cancel, &buffer).await;
    if let Some(record) = record {
        record.finish().await;
    }
    Ok(run)
}

/// Runs a program (no shell) until it exits, `timeout` expires or `cancel` fires, keeping the
/// last `cap` bytes of its output (stdout and stderr together). Errors when it cannot start
/// (not installed: the message names it).
pub(crate) async fn run_program(
    request: &ProgramRequest<'_>,
    timeout: Duration,
    cancel: &CancellationToken,
    cap: usize,
) -> Result<Run, ExecError> {
    let buffer = Arc::new(Mutex::new(TailBuffer::new(cap)));
    let sink = {
        let buffer = Arc::clone(&buffer);
        move |chunk: &[u8]| {
            if let Ok(mut b) = buffer.lock() {
                b.push(chunk);
            }
        }
    };
    let process = Process::spawn_program(request, format!("{}-output", request.program), sink)?;
    Ok(wait_capped(process, timeout, cancel, &buffer).await)
}

/// Waits for a started process as [`run_capped`] describes and collects its output.
async fn wait_capped(
    mut process: Process,
    timeout: Duration,
    cancel: &CancellationToken,
    buffer: &Mutex<TailBuffer>,
) -> Run {
    let waited = tokio::select! {
        status = process.wait() => Ok(status),
        () = tokio::time::sleep(timeout) => Err(End::TimedOut),
        () = cancel.cancelled() => Err(End::Cancelled),
    };
    let (end, status, stopped_leftovers) = match waited {
        Ok(status) => {
            // Background output may still be on its way; then stop what the shell left behind.
            let killed = process.settle_exit(DRAIN).await;
            (End::Exited, status, killed)
        }
        Err(end) => (end, process.stop_tree(DRAIN).await, false),
    };
    // The tree is gone (or was signalled); nothing left to kill on drop.
    process.release();
    let (output, dropped_bytes) = match buffer.lock() {
        Ok(b) => b.finish(),
        Err(_) => (String::new(), 0),
    };
    Run {
        end,
        status,
        output,
        dropped_bytes,
        stopped_leftovers,
    }
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn a_command_runs_to_its_end_with_its_output_and_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let request = ShellRequest {
            script: "echo one; echo two >&2; exit 3",
            cwd: dir.path(),
            sandbox: None,
        };
        let run = run_capped(
            &request,
            Duration::from_secs(30),
            &CancellationToken::new(),
            1000,
            None,
        )
        .await
        .unwrap();
        assert_eq!(run.end, End::Exited);
        assert_eq!(run.output, "one\ntwo\n");
        assert_eq!(run.status.and_then(|s| s.code()), Some(3));
    }

    #[tokio::test]
    async fn a_program_runs_with_its_arguments_unquoted() {
        let dir = tempfile::tempdir().unwrap();
        let args = vec!["a b".to_string(), "$HOME;'x'".to_string()];
        let request = ProgramRequest {
            program: "printf",
            args: &["%s|%s".to_string(), args[0].clone(), args[1].clone()],
            cwd: dir.path(),
        };
        let run = run_program(
            &request,
            Duration::from_secs(30),
            &CancellationToken::new(),
            1000,
        )
        .await
        .unwrap();
        assert_eq!(run.end, End::Exited);
        assert_eq!(run.output, "a b|$HOME;'x'");
    }

    #[tokio::test]
    async fn a_program_that_is_not_installed_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let request = ProgramRequest {
            program: "suzent-no-such-program",
            args: &[],
            cwd: dir.path(),
        };
        let err = run_program(
            &request,
            Duration::from_secs(30),
            &CancellationToken::new(),
            1000,
        )
        .await
        .err()
        .unwrap();
        assert_eq!(
            err.0,
            "'suzent-no-such-program' is not installed (not found on PATH)"
        );
    }

    #[tokio::test]
    async fn a_timeout_stops_the_tree_and_keeps_what_was_printed() {
        let dir = tempfile::tempdir().unwrap();
        let request = ShellRequest {
            script: "echo started; sleep 100 & sleep 100; wait",
            cwd: dir.path(),
            sandbox: None,
        };
        let run = run_capped(
            &request,
            Duration::from_millis(500),
            &CancellationToken::new(),
            1000,
            None,
        )
        .await
        .unwrap();
        assert_eq!(run.end, End::TimedOut);
        assert_eq!(run.output, "started\n");
        assert!(!run.stopped_leftovers);
    }
}
