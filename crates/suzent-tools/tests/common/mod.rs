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

/// Processes of this process group that are still alive (zombies count as gone).
#[cfg(unix)]
pub fn live_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After "(comm)": state ppid pgrp ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<_> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        if fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid) {
            out.push(pid);
        }
    }
    out
}

/// Waits (bounded) for SIGKILL to take effect: a killed process needs a moment to exit.
pub fn settle(mut check: impl FnMut() -> bool) -> bool {
    for _ in 0..100 {
        if check() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    check()
}

/// Whether the process exists and is not a zombie.
#[cfg(unix)]
pub fn is_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, r)| !r.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}
