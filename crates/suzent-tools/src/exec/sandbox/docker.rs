//! The docker backend: one container per command (`docker run --rm --init`), the image's root
//! file system read-only, the three directories bind-mounted read-write, `--network none` unless
//! allowed, the caller's ids, every capability dropped, process and memory limits. Stopping a
//! command runs `docker kill` on its container.

use super::super::ExecError;
use super::Sandbox;
#[cfg(unix)]
use super::{ProbeError, run_probe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The most processes (and threads) one Docker sandbox container may run (`--pids-limit`): a
/// fork bomb stops there instead of exhausting the host's process table.
pub const DOCKER_PIDS_LIMIT: &str = "512";

/// The memory one Docker sandbox container may use (`--memory`, Docker's size syntax: 2 GiB),
/// swap included (`--memory-swap` set to the same value, so no swap is added on top).
pub const DOCKER_MEMORY_LIMIT: &str = "2g";

pub(super) const DOCKER: &str = "docker";

#[cfg(unix)]
pub(super) fn probe_docker(image: &str) -> Result<(), String> {
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
pub(super) fn probe_docker(_image: &str) -> Result<(), String> {
    Err("the Docker sandbox is implemented for Linux and macOS hosts only".into())
}

/// A named Docker container of one command. [`DockerContainer::kill`] (also run on drop unless
/// [`DockerContainer::exited`] was called) runs `docker kill` on it in the background.
#[derive(Debug)]
pub struct DockerContainer {
    name: String,
    done: AtomicBool,
}

impl DockerContainer {
    /// A container to be created under `name` (not yet killed or exited).
    pub(super) fn new(name: String) -> DockerContainer {
        DockerContainer {
            name,
            done: AtomicBool::new(false),
        }
    }

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
pub(super) fn user_ids(dir: &Path) -> Result<(u32, u32), ExecError> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir)
        .map_err(|e| ExecError(format!("cannot read the owner of '{}': {e}", dir.display())))?;
    Ok((meta.uid(), meta.gid()))
}

#[cfg(not(unix))]
pub(super) fn user_ids(_dir: &Path) -> Result<(u32, u32), ExecError> {
    Err(ExecError(
        "the Docker sandbox is implemented for Linux and macOS hosts only".into(),
    ))
}

impl Sandbox {
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
        // Suzent's own state is not mounted; where it lies inside the workspace, an empty tmpfs
        // covers it (Docker mounts parents before children, so the nested roots stay mounted).
        for dir in self
            .hidden
            .iter()
            .filter(|h| h.starts_with(&self.workspace))
        {
            args.push("--mount".into());
            args.push(mount_spec(&[
                "type=tmpfs".to_string(),
                format!("target={}", dir.display()),
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::super::DEFAULT_SANDBOX_IMAGE;
    use super::super::tests::sandbox;
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;

    #[test]
    fn docker_covers_suzent_state_inside_the_workspace_with_tmpfs() {
        let mut sb = super::super::tests::sandbox(false);
        sb.hidden = vec!["/w/.suzent/config".into(), "/elsewhere/data".into()];
        let args = sb.docker_args("true", "n", 1, 1, &[]);
        assert!(
            args.windows(2)
                .any(|w| w[0] == "--mount" && w[1] == "type=tmpfs,target=/w/.suzent/config"),
            "{args:?}"
        );
        // A folder outside every mount is not visible anyway.
        assert!(!args.iter().any(|a| a.contains("/elsewhere")), "{args:?}");
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
}
