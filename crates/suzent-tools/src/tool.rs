//! The `Tool` trait and the context every call receives. (API fixed by the runtime.)

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use suzent_permissions::{PathPolicy, ToolAccess};
use tokio_util::sync::CancellationToken;

/// Static description of a tool (seed 000 "Tools", seed 003 "Tool Schema Format").
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// Name the model calls (`read_file`).
    pub runtime_name: &'static str,
    /// Legacy class name used in configs (`ReadFileTool`).
    pub class_name: &'static str,
    /// Capability id (`filesystem`, `shell`).
    pub capability: &'static str,
    /// Human name (`Read file`).
    pub display_name: &'static str,
    /// Description for the model and ConfigView.
    pub description: &'static str,
    /// Asks before running in `default` mode when no policy decides otherwise.
    pub requires_approval: bool,
    /// May be left out of requests and activated with `tool_search`.
    pub deferrable: bool,
    /// JSON Schema of the arguments, generated from the argument type.
    pub parameters: Value,
}

impl ToolSpec {
    /// A spec whose `parameters` schema is generated from the argument type `A`
    /// (see [`crate::args_schema`]). Starts with `requires_approval: false` and `deferrable: true`.
    pub fn new<A: schemars::JsonSchema>(
        runtime_name: &'static str,
        class_name: &'static str,
        capability: &'static str,
        display_name: &'static str,
        description: &'static str,
    ) -> Self {
        Self {
            runtime_name,
            class_name,
            capability,
            display_name,
            description,
            requires_approval: false,
            deferrable: true,
            parameters: crate::typed::args_schema::<A>(),
        }
    }

    /// Sets `requires_approval`.
    pub fn requires_approval(mut self, yes: bool) -> Self {
        self.requires_approval = yes;
        self
    }

    /// Sets `deferrable`.
    pub fn deferrable(mut self, yes: bool) -> Self {
        self.deferrable = yes;
        self
    }
}

/// What a failed tool call tells the model. Never a panic.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the schema or name something invalid.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The tool ran and failed; the message says why and what to do.
    #[error("{0}")]
    Failed(String),
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}

/// Process errors are failures the model can act on.
impl From<crate::exec::ExecError> for ToolError {
    fn from(e: crate::exec::ExecError) -> Self {
        ToolError::Failed(e.0)
    }
}

/// A file's state when the agent last read it, for `edit_file`'s staleness check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadStamp {
    /// Modification time in nanoseconds since the epoch, if the platform reports one.
    pub modified_ns: Option<u128>,
    /// Length in bytes.
    pub len: u64,
}

impl ReadStamp {
    /// The stamp of a file with this metadata.
    pub fn from_metadata(meta: &std::fs::Metadata) -> Self {
        let modified_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos());
        Self {
            modified_ns,
            len: meta.len(),
        }
    }
}

/// Files read in one chat session: resolved path -> stamp at the last read.
pub type ReadTracker = Arc<Mutex<HashMap<PathBuf, ReadStamp>>>;

/// Per-call context (seed 000 `AgentDeps`).
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Chat id.
    pub chat_id: String,
    /// The user (local user name for now).
    pub user_id: String,
    /// Workspace root (canonical).
    pub workspace_root: PathBuf,
    /// Private storage of this chat (`/persistence`).
    pub persistence_dir: PathBuf,
    /// Storage shared by all chats (`/shared`).
    pub shared_dir: PathBuf,
    /// Allowed roots, shared with the permission engine.
    pub paths: Arc<PathPolicy>,
    /// Files read this session.
    pub reads: ReadTracker,
    /// Cancelled when the user stops the turn.
    pub cancel: CancellationToken,
    /// The runtime's background command table (`start_command` & co.); `None` where commands
    /// cannot outlive the call.
    pub commands: Option<crate::exec::background::BackgroundCommands>,
    /// The runtime's agent services (lifecycle tools, sub-agents); `None` for sub-agents' and
    /// other contexts that may not use them.
    pub agents: Option<Arc<dyn crate::agent_tools::AgentHost>>,
    /// Run shell commands in this sandbox; `None` runs them on the host.
    pub sandbox: Option<crate::exec::sandbox::Sandbox>,
    /// Where `planning_update` keeps the chat's plan; `None`: planning is unavailable.
    pub plans: Option<Arc<dyn crate::hosts::PlanHost>>,
    /// Long-term memory (`memory_search`, `memory_block_update`); `None`: unavailable.
    pub memory: Option<Arc<dyn crate::hosts::MemoryHost>>,
    /// Where `render_ui` keeps the chat's canvas surfaces; `None`: no canvas in this session.
    pub canvas: Option<Arc<dyn crate::hosts::CanvasHost>>,
    /// The chat's browser (`browser_action`); `None`: no browser in this session.
    pub browser: Option<Arc<dyn crate::hosts::BrowserHost>>,
    /// The messaging channels (`social_message`); `None`: no channels in this session.
    pub social: Option<Arc<dyn crate::hosts::SocialHost>>,
    /// Id of the tool call being run, when the runtime runs one (`render_ui` records it).
    pub tool_call_id: Option<String>,
    /// The skills the user enabled (`skill_execute`); `None`: no skills.
    pub skills: Option<Arc<crate::skills::SkillSet>>,
    /// Where `run_command` records its process group while it runs (issue 13 item 8); `None`:
    /// not recorded.
    pub processes: Option<Arc<dyn crate::exec::journal::ProcessJournal>>,
    /// Where `speak` synthesizes and stores audio; `None`: no speech in this session.
    pub speech: Option<Arc<dyn crate::hosts::SpeechHost>>,
}

impl ToolContext {
    /// A context with an empty read tracker and a fresh cancellation token.
    pub fn new(
        chat_id: impl Into<String>,
        user_id: impl Into<String>,
        workspace_root: PathBuf,
        persistence_dir: PathBuf,
        shared_dir: PathBuf,
        paths: Arc<PathPolicy>,
    ) -> Self {
        Self {
            chat_id: chat_id.into(),
            user_id: user_id.into(),
            workspace_root,
            persistence_dir,
            shared_dir,
            paths,
            reads: ReadTracker::default(),
            cancel: CancellationToken::new(),
            commands: None,
            agents: None,
            sandbox: None,
            plans: None,
            memory: None,
            canvas: None,
            browser: None,
            social: None,
            tool_call_id: None,
            skills: None,
            processes: None,
            speech: None,
        }
    }
}

/// A tool. Implementations validate their own inputs again at run time (paths, links).
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The static description.
    fn spec(&self) -> &ToolSpec;

    /// What a call with these arguments touches, for the permission engine. Virtual paths
    /// (`/workspace`, `/shared`, `/persistence`) and relative paths are mapped to absolute paths
    /// here. Errors are invalid arguments.
    fn access(&self, args: &Value, ctx: &ToolContext) -> Result<ToolAccess, ToolError>;

    /// Whether this call asks before running when nothing else decides (the engine's
    /// `requires_approval` for [`ToolAccess::Other`]). Default: the spec's flag; a tool whose
    /// risk depends on its arguments overrides it (`webpage_fetch` of a private address).
    fn needs_approval(&self, args: &Value, ctx: &ToolContext) -> bool {
        let _ = (args, ctx);
        self.spec().requires_approval
    }

    /// Runs the call. The output is text for the model.
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError>;
}

/// A tool with the context of one call, as the permission gate sees it: the gate builds the
/// permission request from it (for a real call and for the decision simulator alike).
pub struct CallSubject<'a> {
    /// The tool.
    pub tool: &'a dyn Tool,
    /// The call's context (workspace, roots).
    pub ctx: &'a ToolContext,
}

impl suzent_permissions::GateSubject for CallSubject<'_> {
    fn runtime_name(&self) -> &str {
        self.tool.spec().runtime_name
    }

    fn access(&self, args: &Value) -> Result<ToolAccess, String> {
        self.tool.access(args, self.ctx).map_err(|e| e.to_string())
    }

    fn requires_approval(&self, args: &Value) -> bool {
        self.tool.needs_approval(args, self.ctx)
    }
}
