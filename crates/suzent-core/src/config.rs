//! The user configuration file (`config.toml` in the config directory).

use crate::permission::PermissionMode;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The default tool selection: the spine's file and shell tools.
pub const DEFAULT_TOOLS: &[&str] = &[
    "ReadFileTool",
    "WriteFileTool",
    "EditFileTool",
    "GlobTool",
    "GrepTool",
    "ShellTool",
];

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but is not valid TOML or has a wrong field.
    #[error("invalid config file {path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What the parser said (with line and column).
        message: String,
    },
    /// A value is out of range or names something unknown.
    #[error("invalid config value for '{field}': {message}")]
    Value {
        /// The field, dotted (`providers.openai.base_url`).
        field: String,
        /// What is wrong.
        message: String,
    },
}

/// Settings of one model provider. Keys never live here: they come from the environment or the
/// OS keychain.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Base URL overriding the SDK environment variable (`OPENAI_BASE_URL`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// Settings of the model providers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvidersConfig {
    /// OpenAI and OpenAI-compatible servers.
    #[serde(default)]
    pub openai: ProviderConfig,
    /// Anthropic.
    #[serde(default)]
    pub anthropic: ProviderConfig,
    /// Google Gemini.
    #[serde(default)]
    pub gemini: ProviderConfig,
    /// Ollama (`OLLAMA_HOST`).
    #[serde(default)]
    pub ollama: ProviderConfig,
}

/// The user configuration. Unknown fields are an error, so a typo is never silently ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Model string `provider/model`, e.g. `openai/gpt-4.1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
    /// Permission mode of new chats.
    #[serde(default)]
    pub default_mode: PermissionMode,
    /// Selected tools: runtime names (`read_file`) or legacy class names (`ShellTool`).
    #[serde(default = "default_tools")]
    pub tools: Vec<String>,
    /// Workspace folder of new chats (default: the current directory of the CLI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<PathBuf>,
    /// Provider settings.
    #[serde(default)]
    pub providers: ProvidersConfig,
    /// Maximum model steps in one run before it stops (default 50).
    #[serde(default = "default_max_steps")]
    pub max_steps: u32,
}

fn default_tools() -> Vec<String> {
    DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect()
}

fn default_max_steps() -> u32 {
    50
}

impl Default for Config {
    fn default() -> Self {
        Config {
            default_model: None,
            default_mode: PermissionMode::Default,
            tools: default_tools(),
            workspace: None,
            providers: ProvidersConfig::default(),
            max_steps: default_max_steps(),
        }
    }
}

impl Config {
    /// Parses TOML text; `path` is only used in the error.
    pub fn from_toml(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let config: Config = toml_like::parse(text).map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Checks values that the types alone do not.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(model) = &self.default_model
            && (!model.contains('/') || model.starts_with('/') || model.ends_with('/'))
        {
            return Err(ConfigError::Value {
                field: "default_model".into(),
                message: format!(
                    "'{model}' is not of the form provider/model (e.g. openai/gpt-4.1)"
                ),
            });
        }
        if self.max_steps == 0 || self.max_steps > 1000 {
            return Err(ConfigError::Value {
                field: "max_steps".into(),
                message: format!("{} is outside 1..=1000", self.max_steps),
            });
        }
        for (name, p) in [
            ("openai", &self.providers.openai),
            ("anthropic", &self.providers.anthropic),
            ("gemini", &self.providers.gemini),
            ("ollama", &self.providers.ollama),
        ] {
            if let Some(url) = &p.base_url
                && !(url.starts_with("http://") || url.starts_with("https://"))
            {
                return Err(ConfigError::Value {
                    field: format!("providers.{name}.base_url"),
                    message: format!("'{url}' is not an http(s) URL"),
                });
            }
        }
        Ok(())
    }
}

// The TOML parser lives behind this seam so that core keeps one dependency for it.
mod toml_like {
    pub fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
        toml::from_str(text).map_err(|e| e.to_string().trim().to_string())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_defaults() {
        let c = Config::from_toml("", Path::new("c.toml")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c, Config::default());
    }

    #[test]
    fn unknown_field_is_an_error_naming_the_file() {
        let err = Config::from_toml("defualt_mode = \"auto\"\n", Path::new("/x/config.toml"))
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("/x/config.toml") && msg.contains("defualt_mode"),
            "{msg}"
        );
    }

    #[test]
    fn bad_mode_is_an_error() {
        assert!(Config::from_toml("default_mode = \"yolo\"\n", Path::new("c.toml")).is_err());
    }

    #[test]
    fn model_without_provider_is_an_error() {
        let err =
            Config::from_toml("default_model = \"gpt-4\"\n", Path::new("c.toml")).unwrap_err();
        assert!(err.to_string().contains("default_model"));
    }
}
