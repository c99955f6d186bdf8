//! Suzent's tool system: the [`Tool`] trait, typed tools whose JSON Schema comes from their
//! argument type, the [`ToolRegistry`] with its capability catalog, and the built-in file and
//! shell tools.
//!
//! ```
//! use suzent_tools::default_registry;
//!
//! let registry = default_registry();
//! // Legacy class names and groups from old configs expand to runtime names.
//! let names = registry
//!     .expand_selection(&["ReadFileTool".into(), "ShellTool".into()])
//!     .unwrap();
//! assert_eq!(
//!     names,
//!     ["read_file", "run_command", "start_command", "check_command", "stop_command"]
//! );
//! // The schemas sent to the model.
//! let schemas = registry.openai_schemas(&names);
//! assert_eq!(schemas[0]["function"]["name"], "read_file");
//! // The catalog ConfigView shows.
//! assert_eq!(registry.catalog()[0].id, "filesystem");
//! ```
#![deny(missing_docs)]

pub mod agent_tools;
pub mod builtin;
mod coerce;
pub mod convert;
pub mod exec;
pub mod hosts;
mod metadata;
mod registry;
mod search;
pub mod skills;
pub mod speech;
mod tool;
mod typed;
mod virtual_paths;
pub mod web;

pub use agent_tools::{AgentHost, AgentProfile, AgentSummary, SpawnRequest};
pub use builtin::background::{
    CheckCommandArgs, CheckCommandTool, StartCommandArgs, StartCommandTool, StopCommandArgs,
    StopCommandTool,
};
pub use builtin::browser_action::BrowserActionTool;
pub use builtin::edit_file::{EditFileArgs, EditFileTool};
pub use builtin::glob_search::{GlobArgs, GlobTool};
pub use builtin::grep_search::{GrepArgs, GrepTool};
pub use builtin::memory_tools::{
    MAX_MEMORY_RESULTS, MemoryArchiveTool, MemoryBlockUpdateTool, MemorySearchTool,
};
pub use builtin::planning::{PlanAction, PlanningArgs, PlanningTool};
pub use builtin::read_file::{ReadFileArgs, ReadFileTool};
pub use builtin::render_ui::{RenderAction, RenderUiArgs, RenderUiTool};
pub use builtin::run_command::{RunCommandArgs, RunCommandTool};
pub use builtin::skill_execute::{SkillExecuteArgs, SkillExecuteTool};
pub use builtin::social_message::{
    MAX_CONTACTS_PAGE, MAX_SOCIAL_MESSAGE_CHARS, SocialMessageArgs, SocialMessageTool,
};
pub use builtin::speak::{SpeakArgs, SpeakTool};
pub use builtin::tool_search::{ToolCatalogView, ToolSearchArgs, ToolSearchHost, ToolSearchTool};
pub use builtin::web_search::{SearchEndpoints, SearchResult, WebSearchArgs, WebSearchTool};
pub use builtin::webpage_fetch::{WebpageFetchArgs, WebpageFetchTool};
pub use builtin::write_file::{WriteFileArgs, WriteFileTool};
pub use coerce::coerce_args;
pub use exec::NONINTERACTIVE_ENV;
pub use exec::background::{
    BackgroundCommands, CommandFinished, CommandLifetime, CommandLimits, CommandObserver,
    CommandSnapshot, REPORT_TAIL_CHARS,
};
pub use exec::journal::{JournalTicket, ProcessJournal, SpawnedProcess};
pub use exec::os::{GroupStop, ProcessIdentity, stop_recorded_group};
pub use exec::output::OutputPage;
pub use exec::sandbox::{
    DEFAULT_SANDBOX_IMAGE, DockerContainer, Sandbox, SandboxBackend, SandboxKind,
    SandboxUnavailable, SandboxedCommand, sandbox_available, sbpl_string,
};
pub use hosts::{
    BlockOperation, BrowserHost, CanvasHost, Contact, ContactPage, MemoryHit, MemoryHost,
    MemorySearchResult, PlanHost, SocialHost, SpeechHost,
};
pub use metadata::{
    RegisterError, RegistryExt, ToolCategory, ToolMetadata, ToolSummary, metadata_of,
};
pub use registry::{
    CAPABILITIES, Capability, CapabilityInfo, CatalogTool, DuplicateTool, EQUIPS, LEGACY_GROUPS,
    ToolRegistry, UnknownTool, default_registry,
};
pub use search::{SearchEntry, SearchHit, ToolIndex, tokenize};
pub use skills::{Skill, SkillProblem, SkillSet, SkillSource};
pub use speech::{SpeechRequest, Synthesized, SystemSynth};
pub use tool::{CallSubject, ReadStamp, ReadTracker, Tool, ToolContext, ToolError, ToolSpec};
pub use typed::{TypedTool, args_schema, parse_args};
pub use virtual_paths::{Skipped, check_path, check_read_path, display_path, to_host_path};
