//! The bubblewrap backend (Linux): the whole file system read-only, the workspace, the chat's
//! `/persistence` and `/shared` read-write at their real paths, fresh `/dev` and `/proc`, the
//! network unshared unless allowed, and Suzent's own config and data directories hidden under
//! empty tmpfs mounts.

use super::{ProbeError, Sandbox, run_probe};

pub(super) const BWRAP: &str = "bwrap";

#[cfg(target_os = "linux")]
pub(super) fn probe_bubblewrap() -> Result<(), String> {
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
pub(super) fn probe_bubblewrap() -> Result<(), String> {
    Err("bubblewrap exists only on Linux".into())
}

impl Sandbox {
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
        // The workspace, then an empty tmpfs over each hidden folder (Suzent's own state, also
        // inside the workspace), then the roots nested in a hidden folder again.
        let (hidden, nested) = self.hidden_and_nested();
        let d = self.workspace.display().to_string();
        args.extend(["--bind".to_string(), d.clone(), d]);
        for dir in [&self.persistence, &self.shared] {
            if !nested.contains(&dir) {
                let d = dir.display().to_string();
                args.extend(["--bind".to_string(), d.clone(), d]);
            }
        }
        for dir in hidden {
            args.extend(["--tmpfs".to_string(), dir.display().to_string()]);
        }
        for dir in nested {
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
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::super::tests::sandbox;
    use pretty_assertions::assert_eq;

    #[test]
    fn suzent_state_is_hidden_under_tmpfs_and_nested_roots_are_bound_again() {
        let mut sb = sandbox(false);
        // A portable install: the state inside the workspace, `/shared` and `/persistence`
        // inside its data directory.
        sb.workspace = "/w".into();
        sb.persistence = "/w/.suzent/data/chats/c".into();
        sb.shared = "/w/.suzent/data/shared".into();
        sb.hidden = vec!["/w/.suzent/config".into(), "/w/.suzent/data".into()];
        let args = sb.bubblewrap_args("true");
        let mounts: Vec<&str> = args
            .iter()
            .map(String::as_str)
            .skip_while(|a| *a != "--bind")
            .take_while(|a| *a != "--setenv")
            .collect();
        pretty_assertions::assert_eq!(
            mounts,
            [
                "--bind",
                "/w",
                "/w",
                "--tmpfs",
                "/w/.suzent/config",
                "--tmpfs",
                "/w/.suzent/data",
                "--bind",
                "/w/.suzent/data/chats/c",
                "/w/.suzent/data/chats/c",
                "--bind",
                "/w/.suzent/data/shared",
                "/w/.suzent/data/shared",
            ]
        );
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
}
