//! Shared set-up: a context over real directories in a temp dir.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use suzent_permissions::PathPolicy;
use suzent_tools::{ToolContext, ToolError, default_registry};

pub struct Env {
    pub _dir: tempfile::TempDir,
    /// A directory outside every allowed root.
    pub outside: PathBuf,
    pub ctx: ToolContext,
}

impl Env {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        let persist = base.join("persist");
        let shared = base.join("shared");
        let outside = base.join("outside");
        for d in [&ws, &persist, &shared, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        let policy = PathPolicy::new(&ws, &[persist.clone(), shared.clone()]).unwrap();
        let ctx = ToolContext::new("chat-1", "tester", ws, persist, shared, Arc::new(policy));
        Self {
            _dir: dir,
            outside,
            ctx,
        }
    }

    pub fn ws(&self) -> PathBuf {
        self.ctx.workspace_root.clone()
    }

    pub async fn call(&self, tool: &str, args: Value) -> Result<String, ToolError> {
        let tool = default_registry().get(tool).expect("tool registered");
        tool.call(args, &self.ctx).await
    }
}
