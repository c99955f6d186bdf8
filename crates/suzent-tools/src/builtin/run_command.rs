//! `run_command`: runs a shell script to completion in the workspace, in its own session
//! (process group / job object), non-interactively, with a timeout.
//!
//! When the main shell exits, whatever it left running in its process group is stopped and the
//! output collected so far is returned: a background child holding the output pipe open never
//! makes the call hang. A timeout or a cancelled turn stops the whole tree (SIGTERM, then SIGKILL).

use crate::sandbox::DockerContainer;
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use process_wrap::tokio::{ChildWrapper, CommandWrap};
use schemars::JsonSchema;
use serde::Deserialize;
use std::io::Read;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use suzent_permissions::ToolAccess;
use tokio::sync::oneshot;

/// Seconds a command may run when no timeout is given.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// Largest accepted timeout in seconds.
pub const MAX_TIMEOUT_SECS: u64 = 600;
/// Output beyond this many bytes is cut from the front (the tail is kept).
pub const MAX_OUTPUT_BYTES: usize = 30_000;

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

/// After the main shell exits: how long background output may still arrive before the rest of
/// the process group is stopped.
const GRACE_AFTER_EXIT: Duration = Duration::from_millis(250);
/// After SIGTERM: how long the tree may take to exit before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);
/// After the tree is killed: how long to wait for the last output.
const DRAIN: Duration = Duration::from_secs(1);

fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_SECS
}

/// Arguments of `run_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCommandArgs {
    /// The shell script to run (bash on Linux and macOS, PowerShell on Windows), in the
    /// workspace root. It runs without a terminal: stdin is empty and nothing can prompt.
    pub content: String,
    /// A short description of what the command does, shown to the user.
    #[serde(default)]
    pub description: Option<String>,
    /// Timeout in seconds (default 120, at most 600). The command and everything it started are
    /// stopped when it expires.
    #[serde(default = "default_timeout")]
    pub timeout: u64,
}

impl RunCommandArgs {
    fn validate(&self) -> Result<Duration, ToolError> {
        if self.content.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "field `content` is empty; give the command to run".into(),
            ));
        }
        if self.timeout == 0 || self.timeout > MAX_TIMEOUT_SECS {
            return Err(ToolError::InvalidArguments(format!(
                "field `timeout`: {} seconds is out of range; give 1 to {MAX_TIMEOUT_SECS} \
                 seconds",
                self.timeout
            )));
        }
        Ok(Duration::from_secs(self.timeout))
    }
}

/// Runs a shell command.
#[derive(Debug)]
pub struct RunCommandTool {
    spec: ToolSpec,
}

impl RunCommandTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<RunCommandArgs>(
                "run_command",
                "RunCommandTool",
                "shell",
                "Run command",
                "Run a shell command in the workspace and wait for it to finish (bash; \
                 PowerShell on Windows). Returns the combined stdout and stderr (the last 30,000 \
                 bytes) and the exit code. Non-interactive: stdin is empty, editors and \
                 credential prompts are disabled. Background processes left running when the \
                 command exits are stopped; the whole tree is stopped at the timeout.",
            )
            .requires_approval(true),
        }
    }
}

impl Default for RunCommandTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for RunCommandTool {
    type Args = RunCommandArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &RunCommandArgs, ctx: &ToolContext) -> Result<ToolAccess, ToolError> {
        args.validate()?;
        Ok(ToolAccess::Command {
            command: args.content.clone(),
            cwd: ctx.workspace_root.clone(),
        })
    }

    async fn call(&self, args: RunCommandArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let timeout = args.validate()?;
        if let Some(sandbox) = &ctx.sandbox {
            sandbox.check_available()?;
        }
        let run = run_script(&args.content, ctx, timeout).await?;
        let text = run.render();
        match run.end {
            End::Exited => Ok(text),
            End::TimedOut => Err(ToolError::Failed(format!(
                "command timed out after {} s; it and its child processes were stopped\n{text}",
                args.timeout
            ))),
            End::Cancelled => Err(ToolError::Cancelled),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Exited,
    TimedOut,
    Cancelled,
}

struct Run {
    end: End,
    status: Option<ExitStatus>,
    output: String,
    dropped_bytes: u64,
    stopped_leftovers: bool,
}

impl Run {
    fn render(&self) -> String {
        let mut out = String::new();
        if self.dropped_bytes > 0 {
            out.push_str(&format!(
                "[output truncated: the first {} bytes were dropped; showing the last {} bytes]\n",
                self.dropped_bytes, MAX_OUTPUT_BYTES
            ));
        }
        if self.output.is_empty() {
            out.push_str("(no output)\n");
        } else {
            out.push_str(&self.output);
            if !self.output.ends_with('\n') {
                out.push('\n');
            }
        }
        if self.stopped_leftovers {
            out.push_str(
                "[background processes still running when the command exited were stopped]\n",
            );
        }
        out.push_str(&describe_status(self.status));
        out
    }
}

fn describe_status(status: Option<ExitStatus>) -> String {
    let Some(status) = status else {
        return "exit code: unknown (the process could not be waited for)".into();
    };
    if let Some(code) = status.code() {
        return format!("exit code: {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("exit code: none (killed by signal {signal})");
        }
    }
    "exit code: unknown".into()
}

/// The last `cap` bytes of a stream, and how many were dropped before them.
#[derive(Debug)]
struct TailBuffer {
    buf: Vec<u8>,
    dropped: u64,
    cap: usize,
}

impl TailBuffer {
    fn new(cap: usize) -> Self {
        Self {
            buf: Vec::new(),
            dropped: 0,
            cap,
        }
    }

    fn push(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
        if self.buf.len() > self.cap.saturating_mul(2) {
            let excess = self.buf.len() - self.cap;
            self.buf.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    /// The kept text (lossy UTF-8, starting at a character boundary) and the dropped count.
    fn finish(&self) -> (String, u64) {
        let mut start = self.buf.len().saturating_sub(self.cap);
        let mut dropped = self.dropped + start as u64;
        if dropped > 0 {
            // Do not start in the middle of a UTF-8 sequence.
            let mut skipped = 0;
            while skipped < 3 && self.buf.get(start).is_some_and(|b| b & 0xC0 == 0x80) {
                start += 1;
                skipped += 1;
            }
            dropped += skipped as u64;
        }
        (
            String::from_utf8_lossy(&self.buf[start..]).into_owned(),
            dropped,
        )
    }
}

/// Kills the process tree if the call is dropped half-way (e.g. the turn's future is dropped).
struct KillGuard(Option<Box<dyn ChildWrapper>>);

impl Drop for KillGuard {
    fn drop(&mut self) {
        if let Some(child) = self.0.as_mut() {
            let _ = child.start_kill();
        }
    }
}

fn spawn_failed(e: &std::io::Error) -> ToolError {
    ToolError::Failed(format!("cannot start the shell: {e}"))
}

/// The shell command for `script` in the chat's workspace (inside its sandbox, if any), in its
/// own session, stdin empty, prompts disabled. Shared with background commands. The container
/// comes with a Docker-sandboxed command: it must be killed when the command is stopped (and
/// marked exited when it ends on its own). Errors when the chat's sandbox cannot be used here:
/// the command never runs on the host instead.
pub(crate) fn build_command(
    script: &str,
    ctx: &ToolContext,
    out: Stdio,
    err: Stdio,
) -> Result<(CommandWrap, Option<DockerContainer>), ToolError> {
    #[cfg(unix)]
    let (mut command, container) = match &ctx.sandbox {
        Some(sandbox) => {
            let sandboxed = sandbox.command(script, NONINTERACTIVE_ENV)?;
            let args = sandboxed.args;
            let command = CommandWrap::with_new(sandboxed.program, |c| {
                c.args(args);
            });
            (command, sandboxed.container)
        }
        None => {
            let command = CommandWrap::with_new("bash", |c| {
                c.arg("-c").arg(script);
            });
            (command, None)
        }
    };
    #[cfg(windows)]
    let (mut command, container) = {
        if ctx.sandbox.is_some() {
            return Err(ToolError::Failed(
                "sandbox mode is on but sandboxed commands are not supported on Windows; turn sandbox mode off (commands are not run on the host instead)".into(),
            ));
        }
        let command = CommandWrap::with_new("powershell.exe", |c| {
            c.args(["-NoProfile", "-NonInteractive", "-Command"])
                .arg(script);
        });
        (command, None)
    };
    command
        .command_mut()
        .current_dir(&ctx.workspace_root)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .envs(NONINTERACTIVE_ENV.iter().copied());
    #[cfg(unix)]
    command.wrap(process_wrap::tokio::ProcessSession);
    #[cfg(windows)]
    command.wrap(process_wrap::tokio::JobObject);
    Ok((command, container))
}

async fn run_script(script: &str, ctx: &ToolContext, timeout: Duration) -> Result<Run, ToolError> {
    // One pipe for stdout and stderr, so the output keeps its arrival order.
    let (reader, writer) = std::io::pipe().map_err(|e| spawn_failed(&e))?;
    let writer2 = writer.try_clone().map_err(|e| spawn_failed(&e))?;
    // A Docker-sandboxed command's container is killed when it is dropped before it is marked
    // exited (a timeout, a cancellation, or this future being dropped).
    let (child, container) = {
        let (mut command, container) =
            build_command(script, ctx, Stdio::from(writer), Stdio::from(writer2))?;
        let child = command.spawn().map_err(|e| spawn_failed(&e))?;
        (child, container)
        // `command` (holding our copies of the pipe's write end) is dropped here, so the reader
        // sees end-of-file once the processes of the tree are gone.
    };
    let mut guard = KillGuard(Some(child));

    let buffer = Arc::new(Mutex::new(TailBuffer::new(MAX_OUTPUT_BYTES)));
    let (done_tx, mut done_rx) = oneshot::channel::<()>();
    {
        let buffer = Arc::clone(&buffer);
        let mut reader = reader;
        std::thread::Builder::new()
            .name("run_command-output".into())
            .spawn(move || {
                let mut chunk = [0u8; 8192];
                loop {
                    match reader.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => {
                            if let Ok(mut b) = buffer.lock() {
                                b.push(&chunk[..n]);
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
                let _ = done_tx.send(());
            })
            .map_err(|e| spawn_failed(&e))?;
    }

    let Some(child) = guard.0.as_mut() else {
        return Err(ToolError::Failed(
            "internal error: the child vanished".into(),
        ));
    };
    let waited = tokio::select! {
        status = child.wait() => Ok(status),
        () = tokio::time::sleep(timeout) => Err(End::TimedOut),
        () = ctx.cancel.cancelled() => Err(End::Cancelled),
    };
    let (end, status, stopped_leftovers) = match waited {
        Ok(status) => {
            if let Some(c) = &container {
                c.exited();
            }
            // Background output may still be on its way; then stop what the shell left behind.
            let eof = tokio::time::timeout(GRACE_AFTER_EXIT, &mut done_rx)
                .await
                .is_ok();
            let killed = child.start_kill().is_ok();
            if !eof {
                let _ = tokio::time::timeout(DRAIN, &mut done_rx).await;
            }
            (End::Exited, status.ok(), killed)
        }
        Err(end) => {
            if let Some(c) = &container {
                c.kill();
            }
            terminate(child.as_mut());
            let status = match tokio::time::timeout(TERM_GRACE, child.wait()).await {
                Ok(status) => status.ok(),
                Err(_) => None,
            };
            let _ = child.start_kill();
            let status = match status {
                Some(s) => Some(s),
                None => tokio::time::timeout(DRAIN, child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok),
            };
            let _ = tokio::time::timeout(DRAIN, &mut done_rx).await;
            (end, status, false)
        }
    };
    // The tree is gone (or was signalled); nothing left for the guard to do.
    guard.0 = None;
    let (output, dropped_bytes) = match buffer.lock() {
        Ok(b) => b.finish(),
        Err(_) => (String::new(), 0),
    };
    Ok(Run {
        end,
        status,
        output,
        dropped_bytes,
        stopped_leftovers,
    })
}

/// Asks the whole tree to stop (SIGTERM to the process group; on Windows the job is ended).
pub(crate) fn terminate(child: &mut dyn ChildWrapper) {
    #[cfg(unix)]
    {
        let _ = child.signal(libc::SIGTERM);
    }
    #[cfg(not(unix))]
    {
        let _ = child.start_kill();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::TailBuffer;

    #[test]
    fn the_tail_buffer_keeps_the_last_bytes_and_counts_the_rest() {
        let mut b = TailBuffer::new(10);
        for _ in 0..10 {
            b.push(b"0123456789");
        }
        let (text, dropped) = b.finish();
        assert_eq!(text, "0123456789");
        assert_eq!(dropped, 90);
    }

    #[test]
    fn the_tail_buffer_does_not_start_inside_a_character() {
        let mut b = TailBuffer::new(4);
        b.push("aé€".as_bytes()); // 1 + 2 + 3 bytes
        let (text, dropped) = b.finish();
        assert_eq!(text, "€");
        assert_eq!(dropped, 3);
    }
}
