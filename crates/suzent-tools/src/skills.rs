//! Skills (seed 000 "skill_execute"): a skill is a directory holding `SKILL.md` — front matter
//! with `name` and `description`, then the instructions — and optional scripts and references.
//!
//! Skills come from three kinds of folders: built-in, the user's, and external folders. A user
//! skill overrides a built-in or external one of the same name; an external one overrides a
//! built-in one. Disabled skills are loaded (so a UI can list them) but not offered to the model.

use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// Where a skill comes from, lowest precedence first.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillSource {
    /// Shipped with Suzent.
    BuiltIn,
    /// A folder configured by the user (e.g. a team's shared skills).
    External,
    /// The user's own skills folder.
    User,
}

/// One skill.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skill {
    /// Name the model passes to `skill_execute`.
    pub name: String,
    /// When to use it (listed to the model).
    pub description: String,
    /// The body of `SKILL.md`.
    #[serde(skip)]
    pub instructions: String,
    /// The skill's directory.
    pub dir: PathBuf,
    /// Where it comes from.
    pub source: SkillSource,
    /// Whether the model is offered it.
    pub enabled: bool,
}

/// A `SKILL.md` that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillProblem {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

/// The loaded skills, by name.
#[derive(Debug, Clone, Default)]
pub struct SkillSet {
    skills: BTreeMap<String, Skill>,
    /// Files that were skipped, with the reason (shown by `doctor` and the UI).
    pub problems: Vec<SkillProblem>,
}

/// Splits `SKILL.md` into its front-matter fields and its body. The front matter is the YAML
/// block between the first two `---` lines; only `key: value` scalars are read (quotes are
/// removed), which is all a skill's front matter holds.
pub fn parse_skill_md(text: &str) -> Result<(BTreeMap<String, String>, String), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("SKILL.md must start with a front matter block ('---' line)".into());
    }
    let mut fields = BTreeMap::new();
    let mut closed = false;
    let mut consumed = 0;
    for line in lines.by_ref() {
        consumed += 1;
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!(
                "front matter line {} is not 'key: value': {line}",
                consumed + 1
            ));
        };
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value);
        fields.insert(key.trim().to_string(), value.to_string());
    }
    if !closed {
        return Err("the front matter block is not closed by a '---' line".into());
    }
    let body: Vec<&str> = lines.collect();
    Ok((fields, body.join("\n").trim().to_string()))
}

impl SkillSet {
    /// Loads every `*/SKILL.md` under each folder (missing folders are skipped), applying
    /// precedence by source and the `disabled` names.
    pub fn load(folders: &[(SkillSource, PathBuf)], disabled: &HashSet<String>) -> SkillSet {
        let mut set = SkillSet::default();
        let mut ordered: Vec<&(SkillSource, PathBuf)> = folders.iter().collect();
        ordered.sort_by_key(|(source, _)| *source);
        for (source, folder) in ordered {
            let Ok(entries) = std::fs::read_dir(folder) else {
                continue;
            };
            let mut dirs: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.join("SKILL.md").is_file())
                .collect();
            dirs.sort();
            for dir in dirs {
                match load_one(&dir, *source, disabled) {
                    Ok(skill) => {
                        set.skills.insert(skill.name.clone(), skill);
                    }
                    Err(message) => set.problems.push(SkillProblem {
                        path: dir.join("SKILL.md"),
                        message,
                    }),
                }
            }
        }
        set
    }

    /// Every skill, enabled or not, by name.
    pub fn all(&self) -> impl Iterator<Item = &Skill> {
        self.skills.values()
    }

    /// The enabled skills, by name.
    pub fn enabled(&self) -> impl Iterator<Item = &Skill> {
        self.skills.values().filter(|s| s.enabled)
    }

    /// A skill by name, enabled or not.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.get(name)
    }

    /// The list for the system prompt: one `- name: description` line per enabled skill, or
    /// `None` when there is none.
    pub fn prompt_section(&self) -> Option<String> {
        let lines: Vec<String> = self
            .enabled()
            .map(|s| format!("- {}: {}", s.name, s.description))
            .collect();
        (!lines.is_empty()).then(|| {
            format!(
                "Skills (call skill_execute with the name to get a skill's instructions before \
                 doing what it covers):\n{}",
                lines.join("\n")
            )
        })
    }
}

fn load_one(dir: &Path, source: SkillSource, disabled: &HashSet<String>) -> Result<Skill, String> {
    let text = std::fs::read_to_string(dir.join("SKILL.md")).map_err(|e| e.to_string())?;
    let (fields, body) = parse_skill_md(&text)?;
    let name = fields
        .get("name")
        .filter(|n| !n.trim().is_empty())
        .ok_or("the front matter has no 'name'")?
        .trim()
        .to_string();
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "skill name '{name}' may only hold letters, digits, '-' and '_'"
        ));
    }
    let description = fields
        .get("description")
        .filter(|d| !d.trim().is_empty())
        .ok_or("the front matter has no 'description'")?
        .trim()
        .to_string();
    if body.is_empty() {
        return Err("SKILL.md has no instructions after the front matter".into());
    }
    Ok(Skill {
        enabled: !disabled.contains(&name),
        name,
        description,
        instructions: body,
        dir: dir.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    fn write_skill(root: &Path, dir: &str, name: &str, desc: &str, body: &str) {
        let d = root.join(dir);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: \"{desc}\"\n---\n\n{body}\n"),
        )
        .unwrap();
    }

    #[test]
    fn a_user_skill_overrides_a_built_in_one_and_disabled_skills_are_not_listed() {
        let tmp = tempfile::tempdir().unwrap();
        let builtin = tmp.path().join("builtin");
        let user = tmp.path().join("user");
        write_skill(&builtin, "a", "release", "Cut a release", "built-in steps");
        write_skill(&builtin, "b", "triage", "Triage issues", "triage steps");
        write_skill(&user, "mine", "release", "Cut our release", "our steps");
        std::fs::create_dir_all(user.join("broken")).unwrap();
        std::fs::write(user.join("broken/SKILL.md"), "no front matter").unwrap();
        let disabled = HashSet::from(["triage".to_string()]);
        let set = SkillSet::load(
            &[(SkillSource::User, user), (SkillSource::BuiltIn, builtin)],
            &disabled,
        );
        let release = set.get("release").unwrap();
        assert_eq!(
            (release.source, release.instructions.as_str()),
            (SkillSource::User, "our steps")
        );
        assert!(!set.get("triage").unwrap().enabled);
        assert_eq!(
            set.prompt_section().unwrap().lines().last(),
            Some("- release: Cut our release")
        );
        assert_eq!(set.problems.len(), 1);
        assert!(set.problems[0].message.contains("front matter"));
    }
}
