//! `start_command`, `check_command`, `stop_command`: shell commands that keep running after the
//! turn (seed 000 "Shell capability"). The work is done by [`crate::BackgroundCommands`], which
//! the runtime hands to tools through [`ToolContext::commands`].

use crate::exec::ShellRequest;
use crate::exec::background::{BackgroundCommands, CommandSnapshot};
use crate::exec::output::OutputPage;
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;
use suzent_core::BackgroundTaskStatus;
use suzent_permissions::ToolAccess;

/// Seconds a background command may run when no timeout is given (one hour).
pub const DEFAULT_BACKGROUND_TIMEOUT_SECS: u64 = 3_600;
/// Largest accepted background timeout (one day).
pub const MAX_BACKGROUND_TIMEOUT_SECS: u64 = 86_400;
/// Bytes `check_command` returns when no limit is given.
pub const DEFAULT_CHECK_BYTES: usize = 16_000;
/// Most bytes one `check_command` call returns.
pub const MAX_CHECK_BYTES: usize = 64_000;
/// Longest `wait_seconds` of `check_command`.
pub const MAX_CHECK_WAIT_SECS: u64 = 60;

fn commands(ctx: &ToolContext) -> Result<&BackgroundCommands, ToolError> {
    ctx.commands.as_ref().ok_or_else(|| {
        ToolError::Failed(
            "background commands are not available here; use run_command instead".into(),
        )
    })
}

fn default_background_timeout() -> u64 {
    DEFAULT_BACKGROUND_TIMEOUT_SECS
}

/// Arguments of `start_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartCommandArgs {
    /// The shell script to start (bash), in the workspace root. It runs without a terminal:
    /// stdin is empty and nothing can prompt.
    pub content: String,
    /// A short description of what the command does, shown to the user.
    #[serde(default)]
    pub description: Option<String>,
    /// Seconds after which the command and everything it started are stopped (default 3600, at
    /// most 86400).
    #[serde(default = "default_background_timeout")]
    pub timeout: u64,
}

impl StartCommandArgs {
    fn validate(&self) -> Result<Duration, ToolError> {
        if self.content.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "field `content` is empty; give the command to start".into(),
            ));
        }
        if self.timeout == 0 || self.timeout > MAX_BACKGROUND_TIMEOUT_SECS {
            return Err(ToolError::InvalidArguments(format!(
                "field `timeout`: {} seconds is out of range; give 1 to {MAX_BACKGROUND_TIMEOUT_SECS} seconds",
                self.timeout
            )));
        }
        Ok(Duration::from_secs(self.timeout))
    }
}

/// Starts a background command.
#[derive(Debug)]
pub struct StartCommandTool {
    spec: ToolSpec,
}

impl StartCommandTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<StartCommandArgs>(
                "start_command",
                "StartCommandTool",
                "shell",
                "Start background command",
                "Start a long-running shell command in the workspace and return its command id at \
                 once. It keeps running after this turn; when it ends you get a message with its \
                 exit code and the last 8,000 characters of output (unless you already read the \
                 end with check_command or stopped it), where this Suzent process stays up to \
                 deliver it: the result says whether it does. Use check_command to read output while it \
                 runs and stop_command to stop it with all its child processes.",
            )
            .requires_approval(true),
        }
    }
}

impl Default for StartCommandTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for StartCommandTool {
    type Args = StartCommandArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &StartCommandArgs, ctx: &ToolContext) -> Result<ToolAccess, ToolError> {
        args.validate()?;
        Ok(ToolAccess::Command {
            command: args.content.clone(),
            cwd: ctx.workspace_root.clone(),
        })
    }

    async fn call(&self, args: StartCommandArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let timeout = args.validate()?;
        let request = ShellRequest {
            script: &args.content,
            cwd: &ctx.workspace_root,
            sandbox: ctx.sandbox.as_ref(),
        };
        let commands = commands(ctx)?;
        let id = commands.start(&ctx.chat_id, ctx.tool_call_id.as_deref(), &request, timeout)?;
        Ok(format!(
            "started background command {id} (stopped after {} s at the latest). Read its output with check_command {{\"command_id\": \"{id}\"}}. {}",
            args.timeout,
            commands.lifetime().promise()
        ))
    }
}

/// Arguments of `check_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckCommandArgs {
    /// The id `start_command` returned.
    pub command_id: String,
    /// Byte offset in the command's output to read from (0 = from the start; pass the
    /// `next_offset` of the previous check to get only new output).
    #[serde(default)]
    pub offset: u64,
    /// Most bytes to return (default 16000, at most 64000).
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// Wait up to this many seconds for the command to end before answering (default 0, at most
    /// 60).
    #[serde(default)]
    pub wait_seconds: u64,
}

/// Reads a background command's output and state.
#[derive(Debug)]
pub struct CheckCommandTool {
    spec: ToolSpec,
}

impl CheckCommandTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<CheckCommandArgs>(
                "check_command",
                "CheckCommandTool",
                "shell",
                "Check background command",
                "Read a background command's output from a byte offset and see whether it is \
                 still running, its exit code when it ended, and where to continue reading \
                 (next_offset). Output beyond the last 2 MB is not kept; the answer says how much \
                 was dropped.",
            ),
        }
    }
}

impl Default for CheckCommandTool {
    fn default() -> Self {
        Self::new()
    }
}

fn describe(snapshot: &CommandSnapshot) -> String {
    let task = &snapshot.task;
    match (task.status, task.exit_code, snapshot.signal) {
        (BackgroundTaskStatus::Running, _, _) => "running".into(),
        (BackgroundTaskStatus::TimedOut, _, _) => {
            "timed out (it and its child processes were stopped)".into()
        }
        (BackgroundTaskStatus::Stopped, _, _) => {
            "stopped (it and its child processes were stopped)".into()
        }
        (_, Some(code), _) => format!("exited with code {code}"),
        (_, None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "ended (exit code unknown)".into(),
    }
}

fn render(id: &str, snapshot: &CommandSnapshot, page: &OutputPage) -> String {
    let mut out = format!("command {id}: {}\n", describe(snapshot));
    if page.dropped > 0 {
        out.push_str(&format!(
            "[output truncated: {} bytes before offset {} are no longer kept]\n",
            page.dropped, page.start
        ));
    }
    out.push_str(&format!(
        "output bytes {}..{} of {} (next_offset: {}{})\n",
        page.start,
        page.next_offset,
        page.total,
        page.next_offset,
        if page.next_offset < page.total {
            "; more output follows"
        } else {
            ""
        }
    ));
    if page.text.is_empty() {
        out.push_str("(no new output)\n");
    } else {
        out.push_str(&page.text);
        if !page.text.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

#[async_trait::async_trait]
impl TypedTool for CheckCommandTool {
    type Args = CheckCommandArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &CheckCommandArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Other)
    }

    async fn call(&self, args: CheckCommandArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let max = args.max_bytes.unwrap_or(DEFAULT_CHECK_BYTES);
        if max == 0 || max > MAX_CHECK_BYTES {
            return Err(ToolError::InvalidArguments(format!(
                "field `max_bytes`: {max} is out of range; give 1 to {MAX_CHECK_BYTES}"
            )));
        }
        if args.wait_seconds > MAX_CHECK_WAIT_SECS {
            return Err(ToolError::InvalidArguments(format!(
                "field `wait_seconds`: {} is out of range; give 0 to {MAX_CHECK_WAIT_SECS}",
                args.wait_seconds
            )));
        }
        let wait = Duration::from_secs(args.wait_seconds);
        let check =
            commands(ctx)?.check(&args.command_id, Some(&ctx.chat_id), args.offset, max, wait);
        let (snapshot, page) = tokio::select! {
            r = check => r?,
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        Ok(render(&args.command_id, &snapshot, &page))
    }
}

/// Arguments of `stop_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopCommandArgs {
    /// The id `start_command` returned.
    pub command_id: String,
}

/// Stops a background command and its process tree.
#[derive(Debug)]
pub struct StopCommandTool {
    spec: ToolSpec,
}

impl StopCommandTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<StopCommandArgs>(
                "stop_command",
                "StopCommandTool",
                "shell",
                "Stop background command",
                "Stop a background command and every process it started (SIGTERM, then SIGKILL). \
                 No completion message follows; its output stays readable with check_command.",
            ),
        }
    }
}

impl Default for StopCommandTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for StopCommandTool {
    type Args = StopCommandArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &StopCommandArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Other)
    }

    async fn call(&self, args: StopCommandArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let snapshot = commands(ctx)?
            .stop(&args.command_id, Some(&ctx.chat_id))
            .await?;
        Ok(format!(
            "command {}: {}; {} bytes of output are readable with check_command",
            args.command_id,
            describe(&snapshot),
            snapshot.task.output_bytes
        ))
    }
}
