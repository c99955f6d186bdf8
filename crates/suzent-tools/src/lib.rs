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
//! assert_eq!(names, ["read_file", "run_command"]);
//! // The schemas sent to the model.
//! let schemas = registry.openai_schemas(&names);
//! assert_eq!(schemas[0]["function"]["name"], "read_file");
//! // The catalog ConfigView shows.
//! assert_eq!(registry.catalog()[0].id, "filesystem");
//! ```
#![deny(missing_docs)]

pub mod builtin;
mod paths;
mod registry;
mod tool;
mod typed;

pub use builtin::edit_file::{EditFileArgs, EditFileTool};
pub use builtin::glob_search::{GlobArgs, GlobTool};
pub use builtin::grep_search::{GrepArgs, GrepTool};
pub use builtin::read_file::{ReadFileArgs, ReadFileTool};
pub use builtin::run_command::{NONINTERACTIVE_ENV, RunCommandArgs, RunCommandTool};
pub use builtin::write_file::{WriteFileArgs, WriteFileTool};
pub use paths::{check_path, display_path, to_host_path};
pub use registry::{
    CAPABILITIES, Capability, CapabilityInfo, CatalogTool, DuplicateTool, LEGACY_GROUPS,
    ToolRegistry, UnknownTool, default_registry,
};
pub use tool::{ReadStamp, ReadTracker, Tool, ToolContext, ToolError, ToolSpec};
pub use typed::{TypedTool, args_schema, parse_args};
