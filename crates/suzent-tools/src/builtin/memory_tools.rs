//! `memory_search`, `memory_block_update` and `memory_archive` (seed 000 "memory_search /
//! memory_block_update"): long-term memory through [`crate::hosts::MemoryHost`].

use crate::hosts::BlockOperation;
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use schemars::JsonSchema;
use serde::Deserialize;
use suzent_permissions::ToolAccess;

/// Most hits `memory_search` returns.
pub const MAX_MEMORY_RESULTS: usize = 50;

fn host(ctx: &ToolContext) -> Result<&dyn crate::hosts::MemoryHost, ToolError> {
    ctx.memory.as_deref().ok_or_else(|| {
        ToolError::Failed("long-term memory is not available in this session".into())
    })
}

fn default_limit() -> usize {
    5
}

/// Arguments of `memory_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySearchArgs {
    /// What to look for, in natural language.
    pub query: String,
    /// Most memories to return (default 5, max 50).
    #[serde(default = "default_limit")]
    pub limit: usize,
}

/// Searches archival memory.
#[derive(Debug)]
pub struct MemorySearchTool {
    spec: ToolSpec,
}

impl MemorySearchTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<MemorySearchArgs>(
                "memory_search",
                "MemorySearchTool",
                "memory",
                "Search memory",
                "Search long-term archival memory (things remembered from earlier chats) by \
                 meaning and by exact terms. Returns the best matches with their dates.",
            )
            .deferrable(false),
        }
    }
}

impl Default for MemorySearchTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for MemorySearchTool {
    type Args = MemorySearchArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &MemorySearchArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Other)
    }

    async fn call(&self, args: MemorySearchArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        if args.query.trim().is_empty() {
            return Err(ToolError::InvalidArguments("field `query`: empty".into()));
        }
        if args.limit == 0 || args.limit > MAX_MEMORY_RESULTS {
            return Err(ToolError::InvalidArguments(format!(
                "field `limit`: must be between 1 and {MAX_MEMORY_RESULTS}, got {}",
                args.limit
            )));
        }
        let result = host(ctx)?
            .search(&ctx.user_id, &args.query, args.limit)
            .await
            .map_err(ToolError::Failed)?;
        let mut out = String::new();
        if let Some(reason) = &result.text_only_reason {
            out.push_str(&format!("[full-text search only: {reason}]\n"));
        }
        if result.hits.is_empty() {
            out.push_str(&format!("No memories match '{}'.", args.query));
            return Ok(out);
        }
        for (i, hit) in result.hits.iter().enumerate() {
            out.push_str(&format!(
                "{}. [{}] {} (id {}, matched by {})\n",
                i + 1,
                hit.created_at.get(..10).unwrap_or(&hit.created_at),
                hit.content,
                hit.id,
                hit.matched_by.join("+")
            ));
        }
        Ok(out.trim_end().to_string())
    }
}

/// Arguments of `memory_block_update`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryBlockArgs {
    /// The core block: persona, user, facts or context.
    pub block: String,
    /// replace (the whole block), append (a new line) or clear.
    pub operation: BlockOperation,
    /// The text (ignored by clear).
    #[serde(default)]
    pub content: String,
}

/// Edits an always-visible core memory block.
#[derive(Debug)]
pub struct MemoryBlockUpdateTool {
    spec: ToolSpec,
}

impl MemoryBlockUpdateTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<MemoryBlockArgs>(
                "memory_block_update",
                "MemoryBlockUpdateTool",
                "memory",
                "Update core memory",
                "Update a core memory block that is always in your instructions: persona (how \
                 you behave), user (who the user is), facts (durable facts), context (current \
                 situation). Each block is bounded; keep them short.",
            )
            .deferrable(false),
        }
    }
}

impl Default for MemoryBlockUpdateTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for MemoryBlockUpdateTool {
    type Args = MemoryBlockArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &MemoryBlockArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Other)
    }

    async fn call(&self, args: MemoryBlockArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        if args.operation != BlockOperation::Clear && args.content.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "field `content`: empty (use operation 'clear' to empty a block)".into(),
            ));
        }
        let now = host(ctx)?
            .update_block(&ctx.user_id, &args.block, args.operation, &args.content)
            .await
            .map_err(ToolError::InvalidArguments)?;
        Ok(format!("Block '{}' is now:\n{now}", args.block))
    }
}

/// Arguments of `memory_archive`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryArchiveArgs {
    /// The self-contained text to remember (who, what, when).
    pub content: String,
}

/// Stores a memory in the archive.
#[derive(Debug)]
pub struct MemoryArchiveTool {
    spec: ToolSpec,
}

impl MemoryArchiveTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<MemoryArchiveArgs>(
                "memory_archive",
                "MemoryArchiveTool",
                "memory",
                "Archive memory",
                "Store a self-contained fact or event in long-term archival memory, to be found \
                 later with memory_search.",
            )
            .deferrable(false),
        }
    }
}

impl Default for MemoryArchiveTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for MemoryArchiveTool {
    type Args = MemoryArchiveArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &MemoryArchiveArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Other)
    }

    async fn call(&self, args: MemoryArchiveArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        if args.content.trim().is_empty() {
            return Err(ToolError::InvalidArguments("field `content`: empty".into()));
        }
        let id = host(ctx)?
            .archive(&ctx.user_id, &ctx.chat_id, args.content.trim())
            .await
            .map_err(ToolError::Failed)?;
        Ok(format!("Archived as memory {id}."))
    }
}
