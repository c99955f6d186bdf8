//! The user's login-shell `PATH`, so that a GUI app (started without the shell's profile) finds
//! `npx`, `uvx` and friends where the terminal would.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// How long the login shell may take to print its `PATH`.
const SHELL_TIMEOUT: Duration = Duration::from_secs(3);

static LOGIN_PATH: OnceLock<Option<String>> = OnceLock::new();

/// `$SHELL -lc 'echo $PATH'`, run once per process (cached) with a 3 s timeout. `None` when
/// `SHELL` is unset, the shell fails or times out, or on Windows.
pub fn login_shell_path() -> Option<String> {
    LOGIN_PATH.get_or_init(query_login_path).clone()
}

#[cfg(unix)]
fn query_login_path() -> Option<String> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let shell = std::env::var_os("SHELL").filter(|s| !s.is_empty())?;
    let mut child = Command::new(&shell)
        .args(["-lc", "echo \"__SUZENT_PATH__=$PATH\""])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < SHELL_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                tracing::warn!(shell = ?shell, "the login shell did not print PATH in time");
                return None;
            }
        }
    }
    let mut out = String::new();
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    // Profiles may print banners: take the marked line.
    out.lines()
        .rev()
        .find_map(|l| l.strip_prefix("__SUZENT_PATH__="))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
}

#[cfg(not(unix))]
fn query_login_path() -> Option<String> {
    None
}

/// The `PATH` for a server process: the login shell's directories first, then this process's,
/// without duplicates.
pub fn merged_path() -> OsString {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(login) = login_shell_path() {
        dirs.extend(std::env::split_paths(&login));
    }
    if let Some(own) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&own));
    }
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| seen.insert(d.clone()));
    std::env::join_paths(dirs).unwrap_or_default()
}

/// Finds `program` on `path` (a program with a directory part is returned as is).
pub fn resolve_program(program: &str, path: &OsString) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 || p.is_absolute() {
        return p.exists().then(|| p.to_path_buf());
    }
    for dir in std::env::split_paths(path) {
        let candidate = dir.join(program);
        if is_executable(&candidate) {
            return Some(candidate);
        }
        #[cfg(windows)]
        for ext in ["exe", "cmd", "bat"] {
            let c = candidate.with_extension(ext);
            if c.is_file() {
                return Some(c);
            }
        }
    }
    None
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_on_the_given_path_only() {
        let path = std::env::join_paths(["/usr/bin", "/bin"]).unwrap();
        assert!(resolve_program("sh", &path).is_some());
        assert!(resolve_program("surely-not-a-program-xyz", &path).is_none());
    }
}
