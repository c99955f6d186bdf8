//! Where Suzent keeps its files.

use std::path::{Path, PathBuf};

/// The config and data directories. `SUZENT_HOME` overrides both (tests, portable installs):
/// `$SUZENT_HOME/config` and `$SUZENT_HOME/data`. Otherwise the platform conventions of the
/// `directories` crate (`~/.config/suzent`, `~/.local/share/suzent` on Linux).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// Holds `config.toml` and `permission-audit.jsonl`.
    pub config_dir: PathBuf,
    /// Holds `suzent.db`, `/shared` and each chat's `/persistence`.
    pub data_dir: PathBuf,
}

impl Paths {
    /// From `SUZENT_HOME` or the platform conventions. Errors when neither gives a directory
    /// (no home directory).
    pub fn from_env() -> Result<Paths, String> {
        if let Some(home) = std::env::var_os("SUZENT_HOME").filter(|v| !v.is_empty()) {
            return Ok(Paths::under(Path::new(&home)));
        }
        let dirs = directories::ProjectDirs::from("dev", "suzent", "suzent")
            .ok_or_else(|| "cannot find a home directory; set SUZENT_HOME".to_string())?;
        Ok(Paths {
            config_dir: dirs.config_dir().to_path_buf(),
            data_dir: dirs.data_dir().to_path_buf(),
        })
    }

    /// Both directories under one root.
    pub fn under(root: &Path) -> Paths {
        Paths {
            config_dir: root.join("config"),
            data_dir: root.join("data"),
        }
    }

    /// `config.toml`.
    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }

    /// The SQLite database.
    pub fn database(&self) -> PathBuf {
        self.data_dir.join("suzent.db")
    }

    /// `permission-audit.jsonl`.
    pub fn audit_log(&self) -> PathBuf {
        self.config_dir.join("permission-audit.jsonl")
    }

    /// Storage shared by all chats (`/shared`).
    pub fn shared_dir(&self) -> PathBuf {
        self.data_dir.join("shared")
    }

    /// A chat's private storage (`/persistence`).
    pub fn persistence_dir(&self, chat_id: &str) -> PathBuf {
        self.data_dir.join("chats").join(chat_id)
    }

    /// The path policy of a chat in `workspace`: the workspace, the chat's `/persistence` and
    /// `/shared` as roots, and Suzent's own config and data directories protected (issue #12:
    /// no tool call may change what the agent is allowed to do), the skill folders in them
    /// readable. Errors when the workspace does not exist.
    pub fn path_policy(
        &self,
        workspace: &Path,
        chat_id: &str,
    ) -> std::io::Result<suzent_permissions::PathPolicy> {
        Ok(suzent_permissions::PathPolicy::new(
            workspace,
            &[self.persistence_dir(chat_id), self.shared_dir()],
        )?
        .protect(&[self.config_dir.clone(), self.data_dir.clone()])
        .allow_reading(&[
            self.config_dir.join("skills"),
            self.data_dir.join("builtin-skills"),
        ]))
    }
}
