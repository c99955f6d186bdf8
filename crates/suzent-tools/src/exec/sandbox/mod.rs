//! Sandbox mode for shell commands (seed 000 "Shell capability": isolated execution when enabled,
//! the host when disabled).
//!
//! Three backends, chosen by `sandbox_backend` in `config.toml` (`auto` takes the first that
//! works here: bubblewrap on Linux, the system sandbox profile on macOS, then Docker):
//!
//! - **bubblewrap** (`bwrap`, Linux): the whole file system is mounted read-only, the workspace,
//!   the chat's `/persistence` directory and `/shared` are mounted read-write at their real paths
//!   (`TMPDIR` points into the persistence directory; the host's `/tmp` is read-only like the
//!   rest), `/dev` and `/proc` are fresh, and the network is unshared unless allowed.
//! - **seatbelt** (macOS): `sandbox-exec -p PROFILE` with a generated Seatbelt (SBPL) profile
//!   that denies by default, allows reading the file system, writing only to the same three
//!   directories (and `/dev/null`-like devices), looking up only the few system services a
//!   shell needs (name resolution only with the network), never LaunchServices, Apple Events or
//!   launchd job submission, and denies the network unless allowed.
//! - **docker**: one container per command (`docker run --rm --init`), the image's root file
//!   system read-only, the same three directories bind-mounted read-write at their real paths,
//!   `--network none` unless allowed, the caller's user and group ids, every capability dropped,
//!   no new privileges, and limits on processes (512) and memory (2 GiB).
//!   Stopping or timing out a command also runs `docker kill` on its container, since killing
//!   the `docker run` client alone leaves the container running.
//!
//! When the chosen sandbox cannot be used here, sandbox mode is refused with an error that says
//! why: a command never silently runs on the host instead.

//! Each backend is one file: `bubblewrap.rs`, `seatbelt.rs`, `docker.rs` (its probe, its
//! command line, its own state); this file resolves the configured backend and builds the
//! command.

mod bubblewrap;
mod docker;
mod seatbelt;

pub use docker::{DOCKER_MEMORY_LIMIT, DOCKER_PIDS_LIMIT, DockerContainer};
pub use seatbelt::{
    SEATBELT_DENIED_MACH_SERVICES, SEATBELT_MACH_SERVICES, SEATBELT_NETWORK_MACH_SERVICES,
    sbpl_string,
};

use super::ExecError;
use bubblewrap::{BWRAP, probe_bubblewrap};
use docker::{DOCKER, probe_docker, user_ids};
use seatbelt::{SANDBOX_EXEC, probe_seatbelt, seatbelt_args};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};
pub use suzent_core::{DEFAULT_SANDBOX_IMAGE, SandboxBackend};

/// How long an availability probe (`bwrap`, `sandbox-exec`, `docker info`) may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

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
    /// The configured backend (`auto` resolves to the first that works here).
    pub backend: SandboxBackend,
    /// The image of the Docker backend.
    pub image: String,
    /// Folders sandboxed commands must not see (Suzent's own config and data directories): each
    /// backend hides them, also where they lie inside the workspace; the chat's `/persistence`
    /// and `/shared` inside them stay reachable.
    pub hidden: Vec<PathBuf>,
}

impl Sandbox {
    /// The hidden folders, and the read-write roots (`/persistence`, `/shared`) that lie inside
    /// one of them and are therefore mounted again after it is hidden.
    pub(super) fn hidden_and_nested(&self) -> (Vec<&PathBuf>, Vec<&PathBuf>) {
        let hidden: Vec<&PathBuf> = self.hidden.iter().collect();
        let nested = [&self.persistence, &self.shared]
            .into_iter()
            .filter(|r| hidden.iter().any(|h| r.starts_with(h)))
            .collect();
        (hidden, nested)
    }
}

/// A sandbox that works here: what a [`SandboxBackend`] resolved to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SandboxKind {
    /// bubblewrap.
    Bubblewrap,
    /// The macOS system sandbox (`sandbox-exec`).
    Seatbelt,
    /// A Docker container.
    Docker,
}

impl SandboxKind {
    /// How the kind is named to users (`doctor`).
    pub fn describe(self) -> &'static str {
        match self {
            SandboxKind::Bubblewrap => "bubblewrap",
            SandboxKind::Seatbelt => "the macOS system sandbox (sandbox-exec)",
            SandboxKind::Docker => "Docker",
        }
    }
}

/// Why sandbox mode cannot be used here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "sandbox mode cannot be used: no sandbox is available (sandbox_backend = \"{backend}\"): {reason}. {advice}; sandboxed commands are not run on the host instead"
)]
pub struct SandboxUnavailable {
    /// The configured backend.
    pub backend: SandboxBackend,
    /// What failed, per backend tried.
    pub reason: String,
    /// What the user can do.
    pub advice: &'static str,
}

fn advice(backend: SandboxBackend) -> &'static str {
    match backend {
        SandboxBackend::Auto => {
            "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) or start Docker (sandbox_backend = \"docker\"), or turn sandbox mode off"
        }
        SandboxBackend::Bubblewrap => {
            "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), pick another sandbox_backend, or turn sandbox mode off"
        }
        SandboxBackend::Docker => {
            "Start the Docker engine and pull the image (sandbox_image), pick another sandbox_backend, or turn sandbox mode off"
        }
        SandboxBackend::Seatbelt => {
            "The seatbelt backend needs macOS; pick another sandbox_backend or turn sandbox mode off"
        }
    }
}

/// Resolves `backend` to a sandbox that works here (`image`: the Docker backend's image).
/// Successful probes are remembered for the process; a failed one is tried again next time (an
/// engine may have been started meanwhile).
pub fn sandbox_available(
    backend: SandboxBackend,
    image: &str,
) -> Result<SandboxKind, SandboxUnavailable> {
    static WORKS: OnceLock<Mutex<HashMap<(SandboxKind, String), ()>>> = OnceLock::new();
    let works = WORKS.get_or_init(|| Mutex::new(HashMap::new()));
    let candidates: &[SandboxKind] = match backend {
        SandboxBackend::Bubblewrap => &[SandboxKind::Bubblewrap],
        SandboxBackend::Docker => &[SandboxKind::Docker],
        SandboxBackend::Seatbelt => &[SandboxKind::Seatbelt],
        SandboxBackend::Auto if cfg!(target_os = "macos") => {
            &[SandboxKind::Seatbelt, SandboxKind::Docker]
        }
        SandboxBackend::Auto if cfg!(target_os = "linux") => {
            &[SandboxKind::Bubblewrap, SandboxKind::Docker]
        }
        SandboxBackend::Auto => &[SandboxKind::Docker],
    };
    let mut reasons = Vec::new();
    for &kind in candidates {
        let key = (
            kind,
            if kind == SandboxKind::Docker {
                image.to_string()
            } else {
                String::new()
            },
        );
        if works
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&key)
        {
            return Ok(kind);
        }
        let probed = match kind {
            SandboxKind::Bubblewrap => probe_bubblewrap(),
            SandboxKind::Seatbelt => probe_seatbelt(),
            SandboxKind::Docker => probe_docker(image),
        };
        match probed {
            Ok(()) => {
                works
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(key, ());
                return Ok(kind);
            }
            Err(reason) => reasons.push(reason),
        }
    }
    Err(SandboxUnavailable {
        backend,
        reason: reasons.join("; "),
        advice: advice(backend),
    })
}

/// Runs a probe command with stdin empty, its output captured, killed after [`PROBE_TIMEOUT`].
/// `Ok(stdout)` on exit code 0, else `Err(what went wrong)`.
#[cfg_attr(not(unix), allow(dead_code))]
pub(super) fn run_probe(program: &str, args: &[&str]) -> Result<String, ProbeError> {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ProbeError::Missing
            } else {
                ProbeError::Failed(format!("cannot run '{program}': {e}"))
            }
        })?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > PROBE_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ProbeError::Failed(format!(
                    "'{program} {}' did not answer within {} s",
                    args.join(" "),
                    PROBE_TIMEOUT.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(ProbeError::Failed(format!("waiting for '{program}': {e}"))),
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| ProbeError::Failed(format!("reading '{program}': {e}")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("no error output");
        Err(ProbeError::Failed(format!(
            "'{program} {}' failed ({}): {first}",
            args.join(" "),
            out.status
        )))
    }
}

#[cfg_attr(not(unix), allow(dead_code))]
pub(super) enum ProbeError {
    /// The program is not installed (not on `PATH`).
    Missing,
    /// It ran and failed, or could not be run.
    Failed(String),
}

/// A command line that runs a script inside a sandbox.
#[derive(Debug)]
pub struct SandboxedCommand {
    /// The program (`bwrap`, `sandbox-exec`, `docker`).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The Docker container, which must be killed when the command is stopped.
    pub container: Option<DockerContainer>,
}

impl Sandbox {
    /// Fails with a clear error when no sandbox can be created here.
    pub fn check_available(&self) -> Result<SandboxKind, ExecError> {
        sandbox_available(self.backend, &self.image).map_err(|e| ExecError(e.to_string()))
    }

    /// The temporary directory of sandboxed commands (`TMPDIR`), inside the persistence
    /// directory so that it is writable in every backend.
    pub fn tmp_dir(&self) -> PathBuf {
        self.persistence.join(".tmp")
    }

    /// The command that runs `script` with bash inside the sandbox, in the workspace. `env`:
    /// variables the script must see (a container does not inherit the client's environment).
    /// Errors when no sandbox works here or a path cannot be written into a Seatbelt profile.
    pub fn command(
        &self,
        script: &str,
        env: &[(&str, &str)],
    ) -> Result<SandboxedCommand, ExecError> {
        let kind = self.check_available()?;
        let tmp = self.tmp_dir();
        std::fs::create_dir_all(&tmp).map_err(|e| {
            ExecError(format!(
                "cannot create the sandbox's temporary directory '{}': {e}",
                tmp.display()
            ))
        })?;
        match kind {
            SandboxKind::Bubblewrap => Ok(SandboxedCommand {
                program: BWRAP.into(),
                args: self.bubblewrap_args(script),
                container: None,
            }),
            SandboxKind::Seatbelt => {
                // Seatbelt matches real paths (`/private/var/...`, not `/var/...`).
                let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
                let resolved = Sandbox {
                    workspace: real(&self.workspace),
                    persistence: real(&self.persistence),
                    shared: real(&self.shared),
                    ..self.clone()
                };
                let profile = resolved
                    .seatbelt_profile()
                    .map_err(|e| ExecError(format!("cannot build the sandbox profile: {e}")))?;
                Ok(SandboxedCommand {
                    program: SANDBOX_EXEC.into(),
                    args: seatbelt_args(&profile, &tmp, script),
                    container: None,
                })
            }
            SandboxKind::Docker => {
                let id = suzent_core::new_id();
                let name = format!("suzent-{}", &id[id.len().saturating_sub(16)..]);
                let (uid, gid) = user_ids(&tmp)?;
                Ok(SandboxedCommand {
                    program: DOCKER.into(),
                    args: self.docker_args(script, &name, uid, gid, env),
                    container: Some(DockerContainer::new(name)),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    pub(super) fn sandbox(network: bool) -> Sandbox {
        Sandbox {
            workspace: "/w".into(),
            persistence: "/p".into(),
            shared: "/s".into(),
            network,
            backend: SandboxBackend::Auto,
            image: DEFAULT_SANDBOX_IMAGE.into(),
            hidden: Vec::new(),
        }
    }

    #[test]
    fn a_missing_backend_is_refused_with_the_reason_and_what_to_do() {
        let err = sandbox_available(SandboxBackend::Seatbelt, "x");
        if cfg!(target_os = "macos") {
            return;
        }
        let err = err.unwrap_err().to_string();
        assert!(err.contains("no sandbox is available"), "{err}");
        assert!(err.contains("sandbox_backend = \"seatbelt\""), "{err}");
        assert!(err.contains("only on macOS"), "{err}");
        assert!(err.contains("not run on the host"), "{err}");
    }
}
