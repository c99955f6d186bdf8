//! One home for the processes tools start: the shell command line (bash, or PowerShell on
//! Windows; inside the chat's sandbox when sandbox mode is on), its own session / process group
//! (a job object on Windows), stdin empty and prompts disabled, one pipe for stdout and stderr
//! read by a thread, the kill of the whole tree (SIGTERM, then SIGKILL), and capped output (an
//! in-memory tail for `run_command`, an on-disk spool for background commands).
//!
//! - [`Process`]: one started shell with its output reader; stops its tree when dropped.
//! - `run.rs`: a command run to its end with a timeout (`run_command`), and a program run the
//!   same way without a shell (`run_program`: the OS speech synthesizers of `speak`).
//! - `background.rs`: the background command table (`start_command` and friends).
//! - `output.rs`: the tail buffer and the output spool.
//! - `sandbox/`: the sandbox backends (`bubblewrap.rs`, `seatbelt.rs`, `docker.rs`).
//! - `spawner.rs`: every process is forked from one long-lived thread, so the Linux parent-death
//!   signal (and the Windows kill-on-close job) ends the leaders when the runtime dies.
//! - `journal.rs`, `os.rs`: the durable record of running groups and the checked stop of the
//!   groups a killed runtime left behind.
//!
//! Nothing here knows the tool layer: errors are [`ExecError`]s (a message for the model), which
//! the tools turn into their own errors.

pub(crate) mod background;
pub mod journal;
pub mod os;
pub(crate) mod output;
pub(crate) mod run;
pub mod sandbox;
mod spawner;

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use sandbox::{DockerContainer, Sandbox};
use std::io::Read;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::sync::oneshot;

/// Environment that keeps tools from waiting for a person: no editors, pagers or credential
/// prompts.
pub const NONINTERACTIVE_ENV: &[(&str, &str)] = &[
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_EDITOR", "true"),
    ("GIT_SEQUENCE_EDITOR", "true"),
    ("EDITOR", "true"),
    ("VISUAL", "true"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GCM_INTERACTIVE", "never"),
    ("SSH_ASKPASS", ""),
    ("DEBIAN_FRONTEND", "noninteractive"),
];

/// After the main shell exits: how long output of leftovers may still arrive before the rest of
/// the process group is stopped.
const GRACE_AFTER_EXIT: Duration = Duration::from_millis(250);
/// After SIGTERM: how long the tree may take to exit before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);

/// Why a process could not be started or used, as a message for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExecError(pub String);

/// What to run: a script in a directory, optionally inside a sandbox.
#[derive(Debug, Clone, Copy)]
pub struct ShellRequest<'a> {
    /// The script (bash on Linux and macOS, PowerShell on Windows).
    pub script: &'a str,
    /// The working directory (the workspace root).
    pub cwd: &'a Path,
    /// The chat's sandbox, when sandbox mode is on.
    pub sandbox: Option<&'a Sandbox>,
}

/// The shell command for `request` in its own session, stdin empty, prompts disabled. The
/// container comes with a Docker-sandboxed command: it must be killed when the command is
/// stopped (and marked exited when it ends on its own). Errors when the sandbox cannot be used
/// here: the command never runs on the host instead.
fn build_command(
    request: &ShellRequest<'_>,
    out: Stdio,
    err: Stdio,
) -> Result<(CommandWrap, Option<DockerContainer>), ExecError> {
    #[cfg(unix)]
    let (mut command, container) = match request.sandbox {
        Some(sandbox) => {
            let sandboxed = sandbox.command(request.script, NONINTERACTIVE_ENV)?;
            let args = sandboxed.args;
            let command = CommandWrap::with_new(sandboxed.program, |c| {
                c.args(args);
            });
            (command, sandboxed.container)
        }
        None => {
            let command = CommandWrap::with_new("bash", |c| {
                c.arg("-c").arg(request.script);
            });
            (command, None)
        }
    };
    #[cfg(windows)]
    let (mut command, container) = {
        if request.sandbox.is_some() {
            return Err(ExecError(
                "sandbox mode is on but sandboxed commands are not supported on Windows; turn sandbox mode off (commands are not run on the host instead)".into(),
            ));
        }
        let command = CommandWrap::with_new("powershell.exe", |c| {
            c.args(["-NoProfile", "-NonInteractive", "-Command"])
                .arg(request.script);
        });
        (command, None)
    };
    prepare(&mut command, request.cwd, out, err);
    Ok((command, container))
}

/// A program run directly (no shell, so no quoting of its arguments): the OS speech
/// synthesizers of `speak`. It gets the same session, empty stdin, environment and kill of its
/// tree as a shell command; it never runs in the sandbox (it reads and writes only the files
/// its caller names).
#[derive(Debug, Clone, Copy)]
pub struct ProgramRequest<'a> {
    /// The program, looked up on `PATH` (`espeak-ng`, `say`, `powershell.exe`).
    pub program: &'a str,
    /// Its arguments, passed as they are.
    pub args: &'a [String],
    /// The working directory.
    pub cwd: &'a Path,
}

fn build_program_command(request: &ProgramRequest<'_>, out: Stdio, err: Stdio) -> CommandWrap {
    let args = request.args;
    let mut command = CommandWrap::with_new(request.program, |c| {
        c.args(args);
    });
    prepare(&mut command, request.cwd, out, err);
    command
}

/// Working directory, stdin empty, output pipes, no prompts, its own session (a job object on
/// Windows).
fn prepare(command: &mut CommandWrap, cwd: &Path, out: Stdio, err: Stdio) {
    command
        .command_mut()
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .envs(NONINTERACTIVE_ENV.iter().copied());
    #[cfg(unix)]
    command.wrap(process_wrap::tokio::ProcessSession);
    #[cfg(windows)]
    command.wrap(process_wrap::tokio::JobObject);
}

fn cannot_start(e: &std::io::Error) -> ExecError {
    ExecError(format!("cannot start the shell: {e}"))
}

/// A started shell: its process tree (killed when dropped while still owned), its Docker
/// container if sandboxed that way, and the end of its output.
pub(crate) struct Process {
    child: Option<Box<dyn ChildWrapper>>,
    container: Option<DockerContainer>,
    eof: oneshot::Receiver<()>,
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.start_kill();
        }
    }
}

impl Process {
    /// Starts `request` with stdout and stderr on one pipe (so output keeps its arrival order),
    /// read by a thread named `reader_name` that hands each chunk to `sink`.
    pub(crate) fn spawn(
        request: &ShellRequest<'_>,
        reader_name: String,
        sink: impl FnMut(&[u8]) + Send + 'static,
    ) -> Result<Process, ExecError> {
        Self::spawn_with(
            |out, err| build_command(request, out, err),
            cannot_start,
            reader_name,
            sink,
        )
    }

    /// Starts a program directly, like [`Process::spawn`] does a shell. A program that is not
    /// installed is an error naming it.
    pub(crate) fn spawn_program(
        request: &ProgramRequest<'_>,
        reader_name: String,
        sink: impl FnMut(&[u8]) + Send + 'static,
    ) -> Result<Process, ExecError> {
        let program = request.program;
        Self::spawn_with(
            |out, err| Ok((build_program_command(request, out, err), None)),
            |e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    ExecError(format!("'{program}' is not installed (not found on PATH)"))
                } else {
                    ExecError(format!("cannot start '{program}': {e}"))
                }
            },
            reader_name,
            sink,
        )
    }

    fn spawn_with(
        build: impl FnOnce(Stdio, Stdio) -> Result<(CommandWrap, Option<DockerContainer>), ExecError>,
        start_failed: impl Fn(&std::io::Error) -> ExecError,
        reader_name: String,
        mut sink: impl FnMut(&[u8]) + Send + 'static,
    ) -> Result<Process, ExecError> {
        let (reader, writer) = std::io::pipe().map_err(|e| cannot_start(&e))?;
        let writer2 = writer.try_clone().map_err(|e| cannot_start(&e))?;
        let (child, container) = {
            let (command, container) = build(Stdio::from(writer), Stdio::from(writer2))?;
            let child = spawner::spawn(command).map_err(|e| start_failed(&e))?;
            (child, container)
            // `command` (holding our copies of the pipe's write end) is dropped here, so the
            // reader sees end-of-file once the processes of the tree are gone.
        };
        // From here on a failure drops the process, which kills the tree.
        let mut process = Process {
            child: Some(child),
            container,
            eof: oneshot::channel().1,
        };
        let (eof_tx, eof_rx) = oneshot::channel::<()>();
        let mut reader = reader;
        std::thread::Builder::new()
            .name(reader_name)
            .spawn(move || {
                let mut chunk = vec![0u8; 64 * 1024];
                loop {
                    match reader.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => sink(&chunk[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
                let _ = eof_tx.send(());
            })
            .map_err(|e| ExecError(format!("cannot start the output reader: {e}")))?;
        process.eof = eof_rx;
        Ok(process)
    }

    /// The group leader's pid (the group id), while it is owned.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    /// Waits for the main process to exit.
    pub(crate) async fn wait(&mut self) -> Option<ExitStatus> {
        match self.child.as_mut() {
            Some(child) => child.wait().await.ok(),
            None => None,
        }
    }

    /// After the main shell exited on its own: lets output of leftovers arrive for a moment,
    /// then stops what the shell left running in its group and waits up to `drain` for the last
    /// output. Returns whether the group was signalled.
    pub(crate) async fn settle_exit(&mut self, drain: Duration) -> bool {
        if let Some(c) = &self.container {
            c.exited();
        }
        let eof = tokio::time::timeout(GRACE_AFTER_EXIT, &mut self.eof)
            .await
            .is_ok();
        let killed = self
            .child
            .as_mut()
            .is_some_and(|child| child.start_kill().is_ok());
        if !eof {
            let _ = tokio::time::timeout(drain, &mut self.eof).await;
        }
        killed
    }

    /// Stops the whole tree: `docker kill` of its container, SIGTERM to the process group (on
    /// Windows the job is ended), SIGKILL after a grace period; then waits up to `drain` for
    /// the main process and the last output. Returns the exit status when it was reaped.
    pub(crate) async fn stop_tree(&mut self, drain: Duration) -> Option<ExitStatus> {
        if let Some(c) = &self.container {
            c.kill();
        }
        let mut status = None;
        if let Some(child) = self.child.as_mut() {
            terminate(child.as_mut());
            status = match tokio::time::timeout(TERM_GRACE, child.wait()).await {
                Ok(status) => status.ok(),
                Err(_) => None,
            };
            // The leader exited or not: nothing of the group survives SIGTERM handling.
            let _ = child.start_kill();
            if status.is_none() {
                status = tokio::time::timeout(drain, child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok);
            }
        }
        let _ = tokio::time::timeout(drain, &mut self.eof).await;
        status
    }

    /// The tree is gone (or was signalled): nothing is left to kill on drop.
    pub(crate) fn release(mut self) {
        self.child = None;
    }
}

/// Asks the whole tree to stop (SIGTERM to the process group; on Windows the job is ended).
fn terminate(child: &mut dyn ChildWrapper) {
    #[cfg(unix)]
    {
        let _ = child.signal(libc::SIGTERM);
    }
    #[cfg(not(unix))]
    {
        let _ = child.start_kill();
    }
}

/// The exit code and, on Unix, the signal that ended a process.
pub(crate) fn split_status(status: Option<ExitStatus>) -> (Option<i32>, Option<i32>) {
    let Some(status) = status else {
        return (None, None);
    };
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        (status.code(), status.signal())
    }
    #[cfg(not(unix))]
    {
        (status.code(), None)
    }
}
