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

use crate::tool::ToolError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};
pub use suzent_core::{DEFAULT_SANDBOX_IMAGE, SandboxBackend};

/// The most processes (and threads) one Docker sandbox container may run (`--pids-limit`): a
/// fork bomb stops there instead of exhausting the host's process table.
pub const DOCKER_PIDS_LIMIT: &str = "512";

/// The memory one Docker sandbox container may use (`--memory`, Docker's size syntax: 2 GiB),
/// swap included (`--memory-swap` set to the same value, so no swap is added on top).
pub const DOCKER_MEMORY_LIMIT: &str = "2g";

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
fn run_probe(program: &str, args: &[&str]) -> Result<String, ProbeError> {
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
enum ProbeError {
    /// The program is not installed (not on `PATH`).
    Missing,
    /// It ran and failed, or could not be run.
    Failed(String),
}

#[cfg(target_os = "linux")]
fn probe_bubblewrap() -> Result<(), String> {
    run_probe(
        BWRAP,
        &[
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
        ],
    )
    .map(|_| ())
    .map_err(|e| match e {
        ProbeError::Missing => format!("bubblewrap ('{BWRAP}') is not installed"),
        ProbeError::Failed(why) => format!("bubblewrap cannot create a sandbox here: {why}"),
    })
}

#[cfg(not(target_os = "linux"))]
fn probe_bubblewrap() -> Result<(), String> {
    Err("bubblewrap exists only on Linux".into())
}

#[cfg(target_os = "macos")]
fn probe_seatbelt() -> Result<(), String> {
    run_probe(
        SANDBOX_EXEC,
        &["-p", "(version 1)(allow default)", "/usr/bin/true"],
    )
    .map(|_| ())
    .map_err(|e| match e {
        ProbeError::Missing => format!("'{SANDBOX_EXEC}' is missing"),
        ProbeError::Failed(why) => format!("the macOS system sandbox does not work: {why}"),
    })
}

#[cfg(not(target_os = "macos"))]
fn probe_seatbelt() -> Result<(), String> {
    Err("the system sandbox profile (sandbox-exec) exists only on macOS".into())
}

#[cfg(unix)]
fn probe_docker(image: &str) -> Result<(), String> {
    match run_probe(DOCKER, &["info", "--format", "{{.ServerVersion}}"]) {
        Ok(_) => {}
        Err(ProbeError::Missing) => return Err("the docker CLI is not installed".into()),
        Err(ProbeError::Failed(why)) => {
            return Err(format!(
                "the docker CLI is installed but the Docker engine does not answer ({why})"
            ));
        }
    }
    match run_probe(DOCKER, &["image", "inspect", "--format", "{{.Id}}", image]) {
        Ok(_) => Ok(()),
        Err(ProbeError::Missing) => Err("the docker CLI is not installed".into()),
        Err(ProbeError::Failed(_)) => Err(format!(
            "the Docker image '{image}' is not present (run: docker pull {image})"
        )),
    }
}

#[cfg(not(unix))]
fn probe_docker(_image: &str) -> Result<(), String> {
    Err("the Docker sandbox is implemented for Linux and macOS hosts only".into())
}

const BWRAP: &str = "bwrap";
const DOCKER: &str = "docker";
const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

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

/// A named Docker container of one command. [`DockerContainer::kill`] (also run on drop unless
/// [`DockerContainer::exited`] was called) runs `docker kill` on it in the background.
#[derive(Debug)]
pub struct DockerContainer {
    name: String,
    done: AtomicBool,
}

impl DockerContainer {
    /// The container's name (`suzent-…`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The command ended on its own: the container is gone with it (`--rm`), nothing to kill.
    pub fn exited(&self) {
        self.done.store(true, Ordering::SeqCst);
    }

    /// Kills the container and everything in it, once. Does not wait: a background thread runs
    /// `docker kill`, retrying briefly while the container may still be being created.
    pub fn kill(&self) {
        if self.done.swap(true, Ordering::SeqCst) {
            return;
        }
        let name = self.name.clone();
        let spawned = std::thread::Builder::new()
            .name("docker-kill".into())
            .spawn(move || {
                for _ in 0..3 {
                    let status = std::process::Command::new(DOCKER)
                        .args(["kill", "--signal", "KILL", &name])
                        .stdin(std::process::Stdio::null())
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::null())
                        .status();
                    match status {
                        Ok(s) if s.success() => return,
                        Ok(_) => std::thread::sleep(Duration::from_secs(1)),
                        Err(e) => {
                            tracing::warn!(container = %name, "cannot run docker kill: {e}");
                            return;
                        }
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(container = %self.name, "cannot start docker kill: {e}");
        }
    }
}

impl Drop for DockerContainer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The user and group ids the Docker container runs as, so that files it writes in the workspace
/// belong to the user: the owner of `dir`, a directory this process just created (the crate
/// forbids `unsafe`, so `getuid` is out of reach).
#[cfg(unix)]
fn user_ids(dir: &Path) -> Result<(u32, u32), ToolError> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir).map_err(|e| {
        ToolError::Failed(format!("cannot read the owner of '{}': {e}", dir.display()))
    })?;
    Ok((meta.uid(), meta.gid()))
}

#[cfg(not(unix))]
fn user_ids(_dir: &Path) -> Result<(u32, u32), ToolError> {
    Err(ToolError::Failed(
        "the Docker sandbox is implemented for Linux and macOS hosts only".into(),
    ))
}

impl Sandbox {
    /// Fails with a clear error when no sandbox can be created here.
    pub fn check_available(&self) -> Result<SandboxKind, ToolError> {
        sandbox_available(self.backend, &self.image).map_err(|e| ToolError::Failed(e.to_string()))
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
    ) -> Result<SandboxedCommand, ToolError> {
        let kind = self.check_available()?;
        let tmp = self.tmp_dir();
        std::fs::create_dir_all(&tmp).map_err(|e| {
            ToolError::Failed(format!(
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
                let profile = resolved.seatbelt_profile().map_err(|e| {
                    ToolError::Failed(format!("cannot build the sandbox profile: {e}"))
                })?;
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
                    container: Some(DockerContainer {
                        name,
                        done: AtomicBool::new(false),
                    }),
                })
            }
        }
    }

    /// The arguments of `bwrap` that run `script` (pure; see the module docs for the layout).
    pub fn bubblewrap_args(&self, script: &str) -> Vec<String> {
        let mut args: Vec<String> = [
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--die-with-parent",
            "--new-session",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        if !self.network {
            args.push("--unshare-net".into());
        }
        for dir in [&self.workspace, &self.persistence, &self.shared] {
            let d = dir.display().to_string();
            args.extend(["--bind".to_string(), d.clone(), d]);
        }
        args.extend([
            "--setenv".to_string(),
            "TMPDIR".to_string(),
            self.tmp_dir().display().to_string(),
            "--chdir".to_string(),
            self.workspace.display().to_string(),
            "--".to_string(),
            "bash".to_string(),
            "-c".to_string(),
            script.to_string(),
        ]);
        args
    }

    /// The Seatbelt (SBPL) profile of `sandbox-exec -p` (pure): deny by default; processes may
    /// run, fork and signal each other; the whole file system may be read; writes only into the
    /// workspace, the persistence and shared directories and the usual devices; Mach service
    /// look-ups only for [`SEATBELT_MACH_SERVICES`] (and [`SEATBELT_NETWORK_MACH_SERVICES`] with
    /// the network), [`SEATBELT_DENIED_MACH_SERVICES`], LaunchServices opens, Apple Events and
    /// launchd job creation denied explicitly; the network is denied unless allowed. Paths are
    /// written as SBPL string literals; a path with a control character other than tab, newline
    /// or carriage return is an error.
    pub fn seatbelt_profile(&self) -> Result<String, String> {
        let mut p = String::from(
            "(version 1)\n\
             (deny default)\n\
             (allow process-exec)\n\
             (allow process-fork)\n\
             (allow signal (target same-sandbox))\n\
             (allow sysctl-read)\n\
             (allow ipc-posix-shm)\n\
             (allow file-read*)\n\
             (allow file-ioctl (regex #\"^/dev/tty\"))\n",
        );
        p.push_str(&mach_lookup_rules(SEATBELT_MACH_SERVICES)?);
        if self.network {
            p.push_str(&mach_lookup_rules(SEATBELT_NETWORK_MACH_SERVICES)?);
        }
        // Later rules win in SBPL: these stay denied whatever an allow above matches. Asking
        // LaunchServices to open a file, an application or a URL, sending Apple Events, and
        // submitting launchd jobs would each run code or fetch URLs outside this sandbox.
        p.push_str("(deny mach-lookup\n");
        for name in SEATBELT_DENIED_MACH_SERVICES {
            p.push_str(&format!("    (global-name {})\n", sbpl_string(name)?));
        }
        p.push_str("    (global-name-regex #\"^com\\.apple\\.lsd\\.\"))\n");
        p.push_str("(deny lsopen)\n(deny appleevent-send)\n(deny job-creation)\n");
        p.push_str("(allow file-write*\n");
        for dir in [&self.workspace, &self.persistence, &self.shared] {
            let path = dir
                .to_str()
                .ok_or_else(|| format!("the path '{}' is not valid UTF-8", dir.display()))?;
            p.push_str(&format!("    (subpath {})\n", sbpl_string(path)?));
        }
        for dev in [
            "/dev/null",
            "/dev/zero",
            "/dev/stdout",
            "/dev/stderr",
            "/dev/dtracehelper",
        ] {
            p.push_str(&format!("    (literal {})\n", sbpl_string(dev)?));
        }
        p.push_str("    (regex #\"^/dev/tty\")\n    (regex #\"^/dev/fd/\"))\n");
        if self.network {
            p.push_str("(allow network*)\n");
        } else {
            p.push_str("(deny network*)\n");
        }
        Ok(p)
    }

    /// The arguments of `docker run` that run `script` in container `name` (pure): removed when
    /// it ends, an init process that reaps and forwards signals, the image's file system
    /// read-only, the workspace, persistence and shared directories bind-mounted read-write at
    /// their real paths, `TMPDIR` in the persistence directory, `--network none` unless the
    /// network is allowed, user `uid:gid`, every capability dropped, no new privileges, at most
    /// [`DOCKER_PIDS_LIMIT`] processes and [`DOCKER_MEMORY_LIMIT`] of memory, `env` passed with
    /// `--env`.
    pub fn docker_args(
        &self,
        script: &str,
        name: &str,
        uid: u32,
        gid: u32,
        env: &[(&str, &str)],
    ) -> Vec<String> {
        let mut args: Vec<String> = [
            "run",
            "--rm",
            "--init",
            "--name",
            name,
            "--read-only",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--pids-limit",
            DOCKER_PIDS_LIMIT,
            "--memory",
            DOCKER_MEMORY_LIMIT,
            "--memory-swap",
            DOCKER_MEMORY_LIMIT,
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        if !self.network {
            args.extend(["--network".to_string(), "none".to_string()]);
        }
        args.extend(["--user".to_string(), format!("{uid}:{gid}")]);
        for dir in [&self.workspace, &self.persistence, &self.shared] {
            let d = dir.display().to_string();
            args.push("--mount".into());
            args.push(mount_spec(&[
                "type=bind".to_string(),
                format!("source={d}"),
                format!("target={d}"),
            ]));
        }
        let tmp = self.tmp_dir().display().to_string();
        for (k, v) in env
            .iter()
            .copied()
            .chain([("TMPDIR", tmp.as_str()), ("HOME", tmp.as_str())])
        {
            args.push("--env".into());
            args.push(format!("{k}={v}"));
        }
        args.extend([
            "--workdir".to_string(),
            self.workspace.display().to_string(),
            "--".to_string(),
            self.image.clone(),
            "bash".to_string(),
            "-c".to_string(),
            script.to_string(),
        ]);
        args
    }
}

/// The system services (Mach `global-name`s) a sandboxed shell may look up whatever the network
/// setting: user and group look-ups (`id`, `ls -l`, `~user`), the per-user temporary and cache
/// directories, change notifications, the old system log, and power assertions (`caffeinate`).
/// Modelled on the service lists of the Chromium and Codex CLI base Seatbelt policies. Any other
/// service is denied, so sandboxed code cannot ask a daemon to act for it outside the sandbox.
/// Left out on purpose: `com.apple.cfprefsd.*` (the preferences daemon writes the user's
/// preference files outside the sandbox; tools reading defaults fall back to built-in values)
/// and `com.apple.SecurityServer` (the keychain). Unverified on a Mac: whether the `xcrun` shims
/// (`/usr/bin/git`, `/usr/bin/python3`) need either.
pub const SEATBELT_MACH_SERVICES: &[&str] = &[
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.bsd.dirhelper",
    "com.apple.system.notification_center",
    "com.apple.system.logger",
    "com.apple.PowerManagement.control",
];

/// The system services a sandboxed shell may also look up when the network is allowed: name
/// resolution (`com.apple.dnssd.service` is mDNSResponder, the DNS resolver of macOS), the
/// network configuration, and certificate trust evaluation for TLS. Without the network these
/// stay denied, because a DNS query sent through mDNSResponder leaves the machine even when
/// the process itself may not open a socket.
pub const SEATBELT_NETWORK_MACH_SERVICES: &[&str] = &[
    "com.apple.dnssd.service",
    "com.apple.SystemConfiguration.DNSConfiguration",
    "com.apple.SystemConfiguration.configd",
    "com.apple.networkd",
    "com.apple.trustd.agent",
    "com.apple.ocspd",
];

/// Services that are denied explicitly (after every allow, so no allow can reopen them):
/// LaunchServices (`open`, `open -a Terminal x.command`, `open https://…`), launchd's
/// ServiceManagement job submission, and the window server. The `com.apple.lsd.*` services are
/// denied by a pattern in the profile.
pub const SEATBELT_DENIED_MACH_SERVICES: &[&str] = &[
    "com.apple.coreservices.launchservicesd",
    "com.apple.CoreServices.coreservicesd",
    "com.apple.coreservices.quarantine-resolver",
    "com.apple.xpc.smd",
    "com.apple.windowserver.active",
];

/// One `(allow mach-lookup …)` rule for `names`, each as a `global-name` string literal.
fn mach_lookup_rules(names: &[&str]) -> Result<String, String> {
    let mut rule = String::from("(allow mach-lookup\n");
    for name in names {
        rule.push_str(&format!("    (global-name {})\n", sbpl_string(name)?));
    }
    rule.pop();
    rule.push_str(")\n");
    Ok(rule)
}

/// The value of one `--mount` option: its `key=value` fields joined by commas, a field that
/// contains a comma or a double quote quoted the CSV way (Docker reads the option as CSV).
fn mount_spec(fields: &[String]) -> String {
    fields
        .iter()
        .map(|f| {
            if f.contains(',') || f.contains('"') || f.contains('\n') {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `text` as an SBPL string literal: in double quotes, backslash and double quote escaped, tab,
/// newline and carriage return written as `\t`, `\n`, `\r`. Other control characters are an
/// error (the profile language has no portable escape for them).
pub fn sbpl_string(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                return Err(format!(
                    "'{}' contains the control character U+{:04X}",
                    text.escape_debug(),
                    u32::from(c)
                ));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(out)
}

/// The arguments of `sandbox-exec` that run `script` under `profile` with `TMPDIR` set.
fn seatbelt_args(profile: &str, tmp: &Path, script: &str) -> Vec<String> {
    vec![
        "-p".into(),
        profile.into(),
        "/usr/bin/env".into(),
        format!("TMPDIR={}", tmp.display()),
        "bash".into(),
        "-c".into(),
        script.into(),
    ]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    fn sandbox(network: bool) -> Sandbox {
        Sandbox {
            workspace: "/w".into(),
            persistence: "/p".into(),
            shared: "/s".into(),
            network,
            backend: SandboxBackend::Auto,
            image: DEFAULT_SANDBOX_IMAGE.into(),
        }
    }

    #[test]
    fn the_network_is_unshared_unless_allowed() {
        let mut sb = sandbox(false);
        let args = sb.bubblewrap_args("echo hi");
        assert!(args.iter().any(|a| a == "--unshare-net"));
        assert_eq!(args[args.len() - 3..], ["bash", "-c", "echo hi"]);
        sb.network = true;
        let args = sb.bubblewrap_args("echo hi");
        assert!(!args.iter().any(|a| a == "--unshare-net"));
    }

    #[test]
    fn the_seatbelt_profile_denies_by_default_and_writes_only_where_allowed() {
        let profile = sandbox(false).seatbelt_profile().unwrap();
        let expected = "(version 1)\n\
            (deny default)\n\
            (allow process-exec)\n\
            (allow process-fork)\n\
            (allow signal (target same-sandbox))\n\
            (allow sysctl-read)\n\
            (allow ipc-posix-shm)\n\
            (allow file-read*)\n\
            (allow file-ioctl (regex #\"^/dev/tty\"))\n\
            (allow mach-lookup\n    \
            (global-name \"com.apple.system.opendirectoryd.libinfo\")\n    \
            (global-name \"com.apple.system.opendirectoryd.membership\")\n    \
            (global-name \"com.apple.bsd.dirhelper\")\n    \
            (global-name \"com.apple.system.notification_center\")\n    \
            (global-name \"com.apple.system.logger\")\n    \
            (global-name \"com.apple.PowerManagement.control\"))\n\
            (deny mach-lookup\n    \
            (global-name \"com.apple.coreservices.launchservicesd\")\n    \
            (global-name \"com.apple.CoreServices.coreservicesd\")\n    \
            (global-name \"com.apple.coreservices.quarantine-resolver\")\n    \
            (global-name \"com.apple.xpc.smd\")\n    \
            (global-name \"com.apple.windowserver.active\")\n    \
            (global-name-regex #\"^com\\.apple\\.lsd\\.\"))\n\
            (deny lsopen)\n\
            (deny appleevent-send)\n\
            (deny job-creation)\n\
            (allow file-write*\n    (subpath \"/w\")\n    (subpath \"/p\")\n    (subpath \"/s\")\n    \
            (literal \"/dev/null\")\n    (literal \"/dev/zero\")\n    (literal \"/dev/stdout\")\n    \
            (literal \"/dev/stderr\")\n    (literal \"/dev/dtracehelper\")\n    \
            (regex #\"^/dev/tty\")\n    (regex #\"^/dev/fd/\"))\n\
            (deny network*)\n";
        assert_eq!(profile, expected);
        let open = sandbox(true).seatbelt_profile().unwrap();
        assert!(open.ends_with("(allow network*)\n"), "{open}");
        assert!(!open.contains("(deny network*)"), "{open}");
    }

    #[test]
    fn seatbelt_looks_up_only_named_services_and_never_launch_services() {
        for network in [false, true] {
            let profile = sandbox(network).seatbelt_profile().unwrap();
            // No rule allows every service: each allow names its services.
            assert!(!profile.contains("(allow mach-lookup)"), "{profile}");
            assert!(!profile.contains("(allow mach*"), "{profile}");
            assert!(!profile.contains("(allow lsopen"), "{profile}");
            assert!(!profile.contains("(allow job-creation"), "{profile}");
            assert!(!profile.contains("(allow appleevent-send"), "{profile}");
            // The denials come after every mach-lookup allow (the last matching rule wins).
            let deny = profile.find("(deny mach-lookup").unwrap();
            assert!(
                profile.rfind("(allow mach-lookup").unwrap() < deny,
                "{profile}"
            );
            for denied in [
                "(deny lsopen)",
                "(deny appleevent-send)",
                "(deny job-creation)",
            ] {
                assert!(profile.contains(denied), "{denied} missing: {profile}");
            }
            assert!(profile.contains("(global-name-regex #\"^com\\.apple\\.lsd\\.\")"));
            for service in SEATBELT_MACH_SERVICES {
                assert!(profile.contains(&format!("(global-name \"{service}\")")));
            }
        }
        // Name resolution goes through mDNSResponder, outside the process: only with the network.
        let closed = sandbox(false).seatbelt_profile().unwrap();
        for service in SEATBELT_NETWORK_MACH_SERVICES {
            assert!(
                !closed.contains(service),
                "{service} allowed offline: {closed}"
            );
        }
        assert!(!closed.contains("dnssd"), "{closed}");
        let open = sandbox(true).seatbelt_profile().unwrap();
        assert!(
            open.contains("(global-name \"com.apple.dnssd.service\")"),
            "{open}"
        );
        assert!(
            open.contains("(global-name \"com.apple.SystemConfiguration.configd\")"),
            "{open}"
        );
    }

    #[test]
    fn seatbelt_paths_are_escaped_as_string_literals() {
        let mut sb = sandbox(false);
        sb.workspace = PathBuf::from("/Users/me/my \"quoted\" dir\\x");
        sb.persistence = PathBuf::from("/tmp/a)(allow default)(b");
        sb.shared = PathBuf::from("/tmp/new\nline");
        let profile = sb.seatbelt_profile().unwrap();
        assert!(
            profile.contains("(subpath \"/Users/me/my \\\"quoted\\\" dir\\\\x\")"),
            "{profile}"
        );
        // Parentheses stay inside the literal: they cannot open a new rule.
        assert!(
            profile.contains("(subpath \"/tmp/a)(allow default)(b\")"),
            "{profile}"
        );
        assert!(
            profile.contains("(subpath \"/tmp/new\\nline\")"),
            "{profile}"
        );
        assert_eq!(sbpl_string("a\"b\\c").unwrap(), "\"a\\\"b\\\\c\"");
        let err = sbpl_string("/tmp/bell\u{7}").unwrap_err();
        assert!(err.contains("U+0007"), "{err}");
        sb.shared = PathBuf::from("/tmp/bell\u{7}");
        assert!(sb.seatbelt_profile().is_err());
    }

    #[test]
    fn seatbelt_runs_bash_under_the_profile_with_tmpdir_set() {
        let args = seatbelt_args("(version 1)", Path::new("/p/.tmp"), "ls");
        assert_eq!(
            args,
            [
                "-p",
                "(version 1)",
                "/usr/bin/env",
                "TMPDIR=/p/.tmp",
                "bash",
                "-c",
                "ls"
            ]
        );
    }

    #[test]
    fn docker_run_mounts_the_three_directories_and_turns_the_network_off() {
        let args = sandbox(false).docker_args(
            "make test",
            "suzent-abc",
            1000,
            1001,
            &[("GIT_TERMINAL_PROMPT", "0")],
        );
        let expected: Vec<String> = [
            "run",
            "--rm",
            "--init",
            "--name",
            "suzent-abc",
            "--read-only",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--pids-limit",
            "512",
            "--memory",
            "2g",
            "--memory-swap",
            "2g",
            "--network",
            "none",
            "--user",
            "1000:1001",
            "--mount",
            "type=bind,source=/w,target=/w",
            "--mount",
            "type=bind,source=/p,target=/p",
            "--mount",
            "type=bind,source=/s,target=/s",
            "--env",
            "GIT_TERMINAL_PROMPT=0",
            "--env",
            "TMPDIR=/p/.tmp",
            "--env",
            "HOME=/p/.tmp",
            "--workdir",
            "/w",
            "--",
            DEFAULT_SANDBOX_IMAGE,
            "bash",
            "-c",
            "make test",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(args, expected);
        let mut open = sandbox(true);
        open.image = "ghcr.io/me/dev:1".into();
        let args = open.docker_args("ls", "n", 0, 0, &[]);
        assert!(!args.iter().any(|a| a == "--network"), "{args:?}");
        assert!(args.iter().any(|a| a == "ghcr.io/me/dev:1"));
    }

    #[test]
    fn docker_mount_fields_with_commas_are_quoted() {
        let mut sb = sandbox(false);
        sb.workspace = PathBuf::from("/w/a,b\"c");
        let args = sb.docker_args("ls", "n", 1, 1, &[]);
        assert!(
            args.contains(&"type=bind,\"source=/w/a,b\"\"c\",\"target=/w/a,b\"\"c\"".to_string()),
            "{args:?}"
        );
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
