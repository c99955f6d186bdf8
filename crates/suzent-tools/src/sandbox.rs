//! Sandbox mode for shell commands (seed 000 "Shell capability": isolated execution when enabled,
//! the host when disabled).
//!
//! On Linux commands run under bubblewrap (`bwrap`): the whole file system is mounted read-only,
//! the workspace, the chat's `/persistence` directory and `/shared` are mounted read-write at
//! their real paths (`TMPDIR` points into the persistence directory; the host's `/tmp` is
//! read-only like the rest), `/dev` and `/proc`
//! are fresh, and the network is unshared unless allowed. When no sandbox is available, sandbox
//! mode is refused with an error: a command never silently runs on the host instead.

use crate::tool::ToolError;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How a chat's commands are isolated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// The workspace (read-write).
    pub workspace: PathBuf,
    /// The chat's private storage (read-write).
    pub persistence: PathBuf,
    /// Storage shared by all chats (read-write).
    pub shared: PathBuf,
    /// Whether commands may use the network.
    pub network: bool,
}

/// Why sandbox mode cannot be used here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "sandbox mode is on but no sandbox is available: {0}. Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) or turn sandbox mode off; commands are not run on the host instead"
)]
pub struct SandboxUnavailable(pub String);

/// Checks once per process that bubblewrap exists and can create its namespaces here.
pub fn sandbox_available() -> Result<(), SandboxUnavailable> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE.get_or_init(probe).clone().map_err(SandboxUnavailable)
}

#[cfg(target_os = "linux")]
fn probe() -> Result<(), String> {
    let out = std::process::Command::new(bwrap_program())
        .args([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-net",
            "--",
            "true",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run '{}': {e}", bwrap_program()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "'{}' cannot create a sandbox here: {}",
            bwrap_program(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[cfg(not(target_os = "linux"))]
fn probe() -> Result<(), String> {
    Err("sandboxed commands are only implemented on Linux (bubblewrap) so far".into())
}

fn bwrap_program() -> &'static str {
    "bwrap"
}

impl Sandbox {
    /// Fails with a clear error when no sandbox can be created here.
    pub fn check_available(&self) -> Result<(), ToolError> {
        sandbox_available().map_err(|e| ToolError::Failed(e.to_string()))
    }

    /// The program and arguments that run `script` with bash inside the sandbox, in the
    /// workspace.
    pub fn command_line(&self, script: &str) -> (String, Vec<String>) {
        let mut args: Vec<String> = Vec::new();
        let mut push = |a: &str| args.push(a.to_string());
        for a in [
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--die-with-parent",
            "--new-session",
        ] {
            push(a);
        }
        if !self.network {
            push("--unshare-net");
        }
        let mut bind = |from: &Path, to: &Path| {
            args.push("--bind".into());
            args.push(from.display().to_string());
            args.push(to.display().to_string());
        };
        bind(&self.workspace, &self.workspace);
        bind(&self.persistence, &self.persistence);
        bind(&self.shared, &self.shared);
        let tmp = self.persistence.join(".tmp");
        let _ = std::fs::create_dir_all(&tmp);
        for a in ["--setenv", "TMPDIR", &tmp.display().to_string()] {
            args.push(a.to_string());
        }
        for a in ["--chdir", &self.workspace.display().to_string()] {
            args.push(a.to_string());
        }
        for a in ["--", "bash", "-c", script] {
            args.push(a.to_string());
        }
        (bwrap_program().to_string(), args)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_network_is_unshared_unless_allowed() {
        let mut sb = Sandbox {
            workspace: "/w".into(),
            persistence: "/p".into(),
            shared: "/s".into(),
            network: false,
        };
        let (_, args) = sb.command_line("echo hi");
        assert!(args.iter().any(|a| a == "--unshare-net"));
        assert_eq!(args[args.len() - 3..], ["bash", "-c", "echo hi"]);
        sb.network = true;
        let (_, args) = sb.command_line("echo hi");
        assert!(!args.iter().any(|a| a == "--unshare-net"));
    }
}
