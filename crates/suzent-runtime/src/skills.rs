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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use suzent_core::Config;

    /// Writes a user skill `name` into the config directory's `skills/`.
    fn user_skill(s: &TestServices, name: &str, description: &str) -> PathBuf {
        let dir = s.paths.config_dir.join("skills").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\n\n1. Run the release.\n"),
        )
        .unwrap();
        dir
    }

    /// `(name, source, enabled)` of every skill.
    async fn listed(skills: &SkillService) -> Vec<(String, SkillSource, bool)> {
        skills
            .list()
            .await
            .unwrap()
            .into_iter()
            .map(|k| (k.name, k.source, k.enabled))
            .collect()
    }

    #[tokio::test]
    async fn the_built_in_skill_is_written_out_and_a_user_skill_is_listed_beside_it()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let dir = user_skill(&s, "release", "Cut a release when the user asks.");
        let skills = s.skills();
        assert_eq!(
            std::fs::read_to_string(
                s.paths
                    .data_dir
                    .join("builtin-skills/skill-authoring/SKILL.md")
            )?,
            BUILTIN_SKILLS[0].1
        );
        let release = skills
            .load()
            .await?
            .get("release")
            .cloned()
            .expect("the user skill");
        assert_eq!(
            (
                release.description.as_str(),
                release.instructions.trim(),
                release.dir
            ),
            (
                "Cut a release when the user asks.",
                "1. Run the release.",
                dir
            )
        );
        assert_eq!(
            listed(&skills).await,
            vec![
                ("release".to_string(), SkillSource::User, true),
                ("skill-authoring".to_string(), SkillSource::BuiltIn, true),
            ]
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_disabled_skill_stays_listed_but_leaves_the_prompt_until_enabled_again()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        user_skill(&s, "release", "Cut a release.");
        let skills = s.skills();
        skills.set_enabled("release", false).await?;
        let set = skills.load().await?;
        let enabled: Vec<&str> = set.enabled().map(|k| k.name.as_str()).collect();
        assert_eq!(enabled, vec!["skill-authoring"]);
        assert!(
            !set.prompt_section().unwrap_or_default().contains("release"),
            "a disabled skill is not offered to the model"
        );
        // The choice is stored: a new service over the same store sees it.
        assert_eq!(
            listed(&s.skills()).await,
            vec![
                ("release".to_string(), SkillSource::User, false),
                ("skill-authoring".to_string(), SkillSource::BuiltIn, true),
            ]
        );
        skills.set_enabled("release", true).await?;
        assert_eq!(
            listed(&skills).await,
            vec![
                ("release".to_string(), SkillSource::User, true),
                ("skill-authoring".to_string(), SkillSource::BuiltIn, true),
            ]
        );
        Ok(())
    }

    #[tokio::test]
    async fn turning_off_an_unknown_skill_is_refused_and_nothing_is_stored() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let skills = s.skills();
        let err = skills.set_enabled("nope", false).await.unwrap_err();
        assert!(
            matches!(&err, RuntimeError::InvalidInput { field, message }
                if field == "skill" && message == "no skill named 'nope'"),
            "{err}"
        );
        assert_eq!(s.store.get_setting(DISABLED_SKILLS_KEY).await?, None);
        Ok(())
    }
}
