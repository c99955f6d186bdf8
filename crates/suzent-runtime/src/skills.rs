//! The skill service: skill folders (built-in, `SUZENT_SKILL_DIRS`, the user's) and which
//! skills the user turned off. Enabled skills are listed in the system prompt; `skill_execute`
//! returns one.

use crate::dirs::Paths;
use crate::error::RuntimeError;
use std::collections::HashSet;
use std::path::PathBuf;
use suzent_store::Store;
use suzent_tools::{Skill, SkillSet, SkillSource};

/// Environment variable listing external skill folders (separated like `PATH`).
pub const SKILL_DIRS_ENV: &str = "SUZENT_SKILL_DIRS";
/// Setting holding the names of disabled skills (a JSON array).
const DISABLED_SKILLS_KEY: &str = "skills.disabled";

/// Skills shipped in the binary, written to the built-in folder when the runtime opens.
const BUILTIN_SKILLS: &[(&str, &str)] = &[(
    "skill-authoring",
    include_str!("../skills/skill-authoring/SKILL.md"),
)];

/// Skills: their folders and the user's choices.
pub(crate) struct SkillService {
    store: Store,
    builtin: PathBuf,
    user: PathBuf,
}

impl SkillService {
    /// The service; the built-in skills are written to their folder under the data directory.
    pub(crate) fn new(paths: &Paths, store: Store) -> SkillService {
        let builtin = paths.data_dir.join("builtin-skills");
        for (name, text) in BUILTIN_SKILLS {
            let dir = builtin.join(name);
            let file = dir.join("SKILL.md");
            if std::fs::read_to_string(&file).ok().as_deref() != Some(*text)
                && let Err(e) =
                    std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&file, text))
            {
                tracing::warn!("cannot write built-in skill {}: {e}", file.display());
            }
        }
        SkillService {
            store,
            builtin,
            user: paths.config_dir.join("skills"),
        }
    }

    /// The skills folders: built-in, external (`SUZENT_SKILL_DIRS`), the user's.
    fn skill_folders(&self) -> Vec<(SkillSource, PathBuf)> {
        let mut folders = vec![(SkillSource::BuiltIn, self.builtin.clone())];
        if let Some(dirs) = std::env::var_os(SKILL_DIRS_ENV) {
            folders.extend(std::env::split_paths(&dirs).map(|d| (SkillSource::External, d)));
        }
        folders.push((SkillSource::User, self.user.clone()));
        folders
    }

    async fn disabled_skills(&self) -> Result<HashSet<String>, RuntimeError> {
        let stored = self.store.get_setting(DISABLED_SKILLS_KEY).await?;
        Ok(stored
            .and_then(|v| serde_json::from_value::<Vec<String>>(v).ok())
            .unwrap_or_default()
            .into_iter()
            .collect())
    }

    /// The skills of every folder, with the user's choices; problems are logged and skipped.
    pub(crate) async fn load(&self) -> Result<SkillSet, RuntimeError> {
        let folders = self.skill_folders();
        let disabled = self.disabled_skills().await?;
        let set = tokio::task::spawn_blocking(move || SkillSet::load(&folders, &disabled))
            .await
            .map_err(|e| RuntimeError::Io {
                path: "skills".into(),
                message: e.to_string(),
            })?;
        for p in &set.problems {
            tracing::warn!("skill {} skipped: {}", p.path.display(), p.message);
        }
        Ok(set)
    }

    /// Every skill (enabled or not), by name; a user skill hides a built-in one of its name.
    pub(crate) async fn list(&self) -> Result<Vec<Skill>, RuntimeError> {
        Ok(self.load().await?.all().cloned().collect())
    }

    /// Enables or disables a skill by name.
    pub(crate) async fn set_enabled(&self, name: &str, enabled: bool) -> Result<(), RuntimeError> {
        let set = self.load().await?;
        if set.get(name).is_none() {
            return Err(RuntimeError::InvalidInput {
                field: "skill".into(),
                message: format!("no skill named '{name}'"),
            });
        }
        let mut disabled = self.disabled_skills().await?;
        if enabled {
            disabled.remove(name);
        } else {
            disabled.insert(name.to_string());
        }
        let mut list: Vec<String> = disabled.into_iter().collect();
        list.sort();
        self.store
            .set_setting(DISABLED_SKILLS_KEY, &serde_json::json!(list))
            .await?;
        Ok(())
    }
}
