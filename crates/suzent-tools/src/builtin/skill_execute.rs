//! `skill_execute` (seed 000): returns an enabled skill's instructions. Scripts a skill ships are
//! run by the model with `run_command`, so through the permission engine like any command.

use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use schemars::JsonSchema;
use serde::Deserialize;
use suzent_permissions::ToolAccess;

/// Arguments of `skill_execute`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillExecuteArgs {
    /// Name of the skill, as listed in your instructions.
    pub skill_name: String,
}

/// Loads a skill's instructions.
#[derive(Debug)]
pub struct SkillExecuteTool {
    spec: ToolSpec,
}

impl SkillExecuteTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<SkillExecuteArgs>(
                "skill_execute",
                "SkillTool",
                "agents",
                "Use skill",
                "Get the instructions of one of the skills listed in your instructions, with \
                 the path of its folder. Follow them; run the scripts they mention with \
                 run_command.",
            )
            .deferrable(false),
        }
    }
}

impl Default for SkillExecuteTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for SkillExecuteTool {
    type Args = SkillExecuteArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &SkillExecuteArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Other)
    }

    async fn call(&self, args: SkillExecuteArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let skills = ctx
            .skills
            .as_ref()
            .ok_or_else(|| ToolError::Failed("no skills are available in this session".into()))?;
        let available = || {
            let names: Vec<&str> = skills.enabled().map(|s| s.name.as_str()).collect();
            if names.is_empty() {
                "no skill is enabled".to_string()
            } else {
                format!("enabled skills: {}", names.join(", "))
            }
        };
        let skill = match skills.get(args.skill_name.trim()) {
            Some(s) if s.enabled => s,
            Some(_) => {
                return Err(ToolError::Failed(format!(
                    "skill '{}' is disabled by the user; {}",
                    args.skill_name,
                    available()
                )));
            }
            None => {
                return Err(ToolError::InvalidArguments(format!(
                    "unknown skill '{}'; {}",
                    args.skill_name,
                    available()
                )));
            }
        };
        let mut files: Vec<String> = Vec::new();
        for entry in ignore::WalkBuilder::new(&skill.dir)
            .max_depth(Some(3))
            .build()
            .flatten()
        {
            let path = entry.path();
            if path.is_file()
                && let Ok(rel) = path.strip_prefix(&skill.dir)
                && rel != std::path::Path::new("SKILL.md")
            {
                files.push(rel.display().to_string());
            }
        }
        files.sort();
        let mut out = format!("# Skill: {}\nFolder: {}\n", skill.name, skill.dir.display());
        if !files.is_empty() {
            out.push_str(&format!("Files: {}\n", files.join(", ")));
        }
        out.push('\n');
        out.push_str(&skill.instructions);
        Ok(out)
    }
}
