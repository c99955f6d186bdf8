//! `run_command`: runs a shell script to completion in the workspace, in its own session
//! (process group / job object), non-interactively, with a timeout.
//!
//! When the main shell exits, whatever it left running in its process group is stopped and the
//! output collected so far is returned: a background child holding the output pipe open never
//! makes the call hang. A timeout or a cancelled turn stops the whole tree (SIGTERM, then SIGKILL).

use crate::exec::ShellRequest;
use crate::exec::journal::JournalTicket;
use crate::exec::run::{End, Run, run_capped};
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use schemars::JsonSchema;
use serde::Deserialize;
use std::process::ExitStatus;
use std::time::Duration;
use suzent_permissions::ToolAccess;

pub use crate::exec::NONINTERACTIVE_ENV;

/// Seconds a command may run when no timeout is given.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// Largest accepted timeout in seconds.
pub const MAX_TIMEOUT_SECS: u64 = 600;
/// Output beyond this many bytes is cut from the front (the tail is kept).
pub const MAX_OUTPUT_BYTES: usize = 30_000;

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
        let request = ShellRequest {
            script: &args.content,
            cwd: &ctx.workspace_root,
            sandbox: ctx.sandbox.as_ref(),
        };
        let ticket = ctx.processes.as_ref().map(|journal| JournalTicket {
            journal: std::sync::Arc::clone(journal),
            chat_id: ctx.chat_id.clone(),
            tool_call_id: ctx.tool_call_id.clone(),
        });
        let run = run_capped(
            &request,
            timeout,
            &ctx.cancel,
            MAX_OUTPUT_BYTES,
            ticket.as_ref(),
        )
        .await?;
        let text = render(&run);
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

/// The output, a note on what was dropped or stopped, and the exit code, for the model.
fn render(run: &Run) -> String {
    let mut out = String::new();
    if run.dropped_bytes > 0 {
        out.push_str(&format!(
            "[output truncated: the first {} bytes were dropped; showing the last {} bytes]\n",
            run.dropped_bytes, MAX_OUTPUT_BYTES
        ));
    }
    if run.output.is_empty() {
        out.push_str("(no output)\n");
    } else {
        out.push_str(&run.output);
        if !run.output.ends_with('\n') {
            out.push('\n');
        }
    }
    if run.stopped_leftovers {
        out.push_str("[background processes still running when the command exited were stopped]\n");
    }
    out.push_str(&describe_status(run.status));
    out
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
