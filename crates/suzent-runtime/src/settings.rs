//! The settings service: the configuration in use (a snapshot per run), the view of
//! `config.toml` the desktop UI shows (plus which providers have an API key), and saving a patch
//! of it back to `config.toml` atomically.
//!
//! A save validates the whole resulting configuration first; a bad value is an error naming the
//! field and nothing is written. The file is replaced by renaming a complete temporary file beside
//! it, so a crash never leaves a half-written `config.toml`. Runs that start after a save use the
//! new values; a run already going keeps the snapshot it started with.

use crate::dirs::Paths;
use crate::error::RuntimeError;
use crate::local_models::LocalModels;
use crate::provider::KeySource;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use suzent_core::{Config, PermissionMode, ProviderConfig, ProvidersConfig};
use suzent_tools::ToolRegistry;

/// The base URL settings of one provider.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderSettings {
    /// Base URL overriding the provider's environment variable and public default.
    #[serde(default)]
    pub base_url: Option<String>,
}

/// The settings of every provider.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvidersSettings {
    /// OpenAI and OpenAI-compatible servers.
    pub openai: ProviderSettings,
    /// Anthropic.
    pub anthropic: ProviderSettings,
    /// Google Gemini.
    pub gemini: ProviderSettings,
    /// Ollama.
    pub ollama: ProviderSettings,
}

/// Whether an API key is available (environment or OS keychain) for each provider that needs
/// one. The key itself is never returned.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyStatus {
    /// An OpenAI key is available.
    pub openai: bool,
    /// An Anthropic key is available.
    pub anthropic: bool,
    /// A Gemini key is available.
    pub gemini: bool,
}

/// The user settings (`config.toml`) with the key status.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// Model of new chats, `provider/model`.
    pub default_model: Option<String>,
    /// Permission mode of new chats.
    pub default_mode: PermissionMode,
    /// The selected tools, as runtime names (`read_file`), in registry order.
    pub tools: Vec<String>,
    /// Workspace folder of new chats.
    pub workspace: Option<String>,
    /// Maximum model steps of one run.
    pub max_steps: u32,
    /// Provider base URLs.
    pub providers: ProvidersSettings,
    /// Which providers have a key.
    pub keys: KeyStatus,
    /// Speech output of `speak` (`[speech]`): its backend, default voice and the app's
    /// autoplay.
    pub speech: suzent_core::SpeechConfig,
    /// The file these settings are saved to.
    pub config_file: String,
}

/// Changes to the settings; a missing field keeps its value.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SettingsPatch {
    /// New default model (`provider/model`); an empty string clears it.
    #[serde(default)]
    pub default_model: Option<String>,
    /// New default permission mode.
    #[serde(default)]
    pub default_mode: Option<PermissionMode>,
    /// New tool selection: runtime names, class names or legacy groups.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// New workspace folder (must be an existing directory); an empty string clears it.
    #[serde(default)]
    pub workspace: Option<String>,
    /// New maximum of model steps per run (1..=1000).
    #[serde(default)]
    pub max_steps: Option<u32>,
    /// New provider settings, replacing all four; an empty base URL clears it.
    #[serde(default)]
    pub providers: Option<ProvidersSettings>,
    /// New speech settings, replacing `[speech]` whole (checked like `config.toml`).
    #[serde(default)]
    pub speech: Option<suzent_core::SpeechConfig>,
}

/// Owns the configuration in use: replaced as a whole by a save; runs take a snapshot when
/// they start.
pub(crate) struct SettingsService {
    config: RwLock<Config>,
    paths: Paths,
    keys: Arc<dyn KeySource>,
    registry: ToolRegistry,
    /// The installed local models: the models folder every provider is built with, and the
    /// default model when `default_model` is not set.
    local_models: Arc<LocalModels>,
}

impl SettingsService {
    /// The service over an already validated configuration.
    pub(crate) fn new(
        config: Config,
        paths: Paths,
        keys: Arc<dyn KeySource>,
        registry: ToolRegistry,
        local_models: Arc<LocalModels>,
    ) -> SettingsService {
        SettingsService {
            config: RwLock::new(config),
            paths,
            keys,
            registry,
            local_models,
        }
    }

    /// A snapshot of the configuration in use (runs started later see saved changes).
    pub(crate) fn config(&self) -> Config {
        match self.config.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Where API keys come from.
    pub(crate) fn keys(&self) -> &dyn KeySource {
        self.keys.as_ref()
    }

    /// A shared handle to where API keys come from (provider checks outlive the call).
    pub(crate) fn key_handle(&self) -> Arc<dyn KeySource> {
        Arc::clone(&self.keys)
    }

    /// The provider settings of `config` with the local models folder filled in: what every
    /// provider is built with.
    pub(crate) fn providers(&self, config: &Config) -> ProvidersConfig {
        self.local_models.providers_config(config)
    }

    /// The model of new chats: `default_model`, or else the first installed local model, so a
    /// fresh install with a model present works offline.
    pub(crate) fn default_model(&self, config: &Config) -> Option<String> {
        config
            .default_model
            .clone()
            .or_else(|| self.local_models.default_model())
    }

    /// The model ids the server of `provider` lists at its `/models` (only that provider's
    /// configured base URL is contacted).
    pub(crate) async fn server_models(&self, provider: &str) -> Result<Vec<String>, RuntimeError> {
        let kind = crate::provider::ProviderKind::from_name(provider).ok_or_else(|| {
            RuntimeError::InvalidInput {
                field: "provider".into(),
                message: format!("unknown provider '{provider}'"),
            }
        })?;
        let providers = self.providers(&self.config());
        Ok(crate::provider::probe::list_server_models(kind, &providers, self.keys()).await?)
    }

    /// Checks that `model` (or the default one) names a provider whose key is available.
    pub(crate) fn check_model(&self, model: Option<&str>) -> Result<(), RuntimeError> {
        let config = self.config();
        let fallback = self.default_model(&config);
        let model = model
            .or(fallback.as_deref())
            .ok_or_else(|| RuntimeError::InvalidInput {
                field: "model".into(),
                message: "no model set: pass --model provider/model, set default_model in \
                          config.toml, or add a local model (suzent models pull)"
                    .into(),
            })?;
        crate::provider::build_provider(model, &self.providers(&config), self.keys())?;
        Ok(())
    }

    /// Changes the configuration with `change`, validates the result, writes `config.toml`
    /// atomically and makes it the configuration in use (the channel settings are saved this
    /// way). Returns the new configuration.
    ///
    /// Errors: what `change` returns, [`RuntimeError::Config`] (nothing is written),
    /// [`RuntimeError::Io`].
    pub(crate) fn update(
        &self,
        change: impl FnOnce(&mut Config) -> Result<(), RuntimeError>,
    ) -> Result<Config, RuntimeError> {
        let mut config = self.config();
        change(&mut config)?;
        config.validate()?;
        let text = toml::to_string_pretty(&config).map_err(|e| RuntimeError::InvalidInput {
            field: "settings".into(),
            message: format!("cannot be written as TOML: {e}"),
        })?;
        write_atomically(&self.paths.config_file(), &text)?;
        self.replace_config(config.clone());
        Ok(config)
    }

    /// Replaces the configuration in memory (after a save wrote it).
    fn replace_config(&self, config: Config) {
        match self.config.write() {
            Ok(mut c) => *c = config,
            Err(poisoned) => *poisoned.into_inner() = config,
        }
    }

    /// The current settings and which providers have a key.
    pub(crate) fn settings(&self) -> Settings {
        let config = self.config();
        let keys = self.keys();
        let tools = self
            .registry
            .expand_selection(&config.tools)
            .unwrap_or_else(|_| config.tools.clone());
        let provider = |p: &ProviderConfig| ProviderSettings {
            base_url: p.base_url.clone(),
        };
        Settings {
            default_model: config.default_model.clone(),
            default_mode: config.default_mode,
            tools,
            workspace: config.workspace.as_ref().map(|w| w.display().to_string()),
            max_steps: config.max_steps,
            providers: ProvidersSettings {
                openai: provider(&config.providers.openai),
                anthropic: provider(&config.providers.anthropic),
                gemini: provider(&config.providers.gemini),
                ollama: provider(&config.providers.ollama),
            },
            keys: KeyStatus {
                openai: keys.api_key("openai").is_some(),
                anthropic: keys.api_key("anthropic").is_some(),
                gemini: keys.api_key("gemini").is_some(),
            },
            config_file: self.paths.config_file().display().to_string(),
            speech: config.speech.clone(),
        }
    }

    /// Applies `patch` to the configuration, validates the result, writes `config.toml`
    /// atomically and makes it the configuration of runs that start from now on.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] or [`RuntimeError::Config`] naming the bad field
    /// (nothing is written), [`RuntimeError::Io`] when the file cannot be written.
    pub(crate) fn save(&self, patch: SettingsPatch) -> Result<Settings, RuntimeError> {
        let config = apply_patch(self.config(), patch)?;
        config.validate()?;
        self.registry
            .expand_selection(&config.tools)
            .map_err(|e| RuntimeError::InvalidInput {
                field: "tools".into(),
                message: e.to_string(),
            })?;
        let text = toml::to_string_pretty(&config).map_err(|e| RuntimeError::InvalidInput {
            field: "settings".into(),
            message: format!("cannot be written as TOML: {e}"),
        })?;
        write_atomically(&self.paths.config_file(), &text)?;
        self.replace_config(config);
        Ok(self.settings())
    }
}

fn apply_patch(mut config: Config, patch: SettingsPatch) -> Result<Config, RuntimeError> {
    if let Some(model) = patch.default_model {
        let model = model.trim();
        config.default_model = if model.is_empty() {
            None
        } else {
            crate::provider::resolve::parse_model(model).map_err(|e| {
                RuntimeError::InvalidInput {
                    field: "default_model".into(),
                    message: e.to_string(),
                }
            })?;
            Some(model.to_string())
        };
    }
    if let Some(mode) = patch.default_mode {
        config.default_mode = mode;
    }
    if let Some(tools) = patch.tools {
        config.tools = tools;
    }
    if let Some(workspace) = patch.workspace {
        let workspace = workspace.trim();
        config.workspace = if workspace.is_empty() {
            None
        } else {
            let path = PathBuf::from(workspace);
            if !path.is_absolute() {
                return Err(RuntimeError::InvalidInput {
                    field: "workspace".into(),
                    message: format!("'{workspace}' is not an absolute path"),
                });
            }
            if !path.is_dir() {
                return Err(RuntimeError::InvalidInput {
                    field: "workspace".into(),
                    message: format!("'{workspace}' is not an existing directory"),
                });
            }
            Some(path)
        };
    }
    if let Some(mut speech) = patch.speech {
        speech.model = speech.model.trim().to_string();
        speech.voice = speech
            .voice
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty());
        config.speech = speech;
    }
    if let Some(max_steps) = patch.max_steps {
        config.max_steps = max_steps;
    }
    if let Some(p) = patch.providers {
        // Only the base URLs are edited here; the other provider settings stay as they are.
        let url = |s: ProviderSettings, current: &ProviderConfig| ProviderConfig {
            base_url: s
                .base_url
                .map(|u| u.trim().to_string())
                .filter(|u| !u.is_empty()),
            ..current.clone()
        };
        let current = config.providers.clone();
        config.providers = ProvidersConfig {
            openai: url(p.openai, &current.openai),
            anthropic: url(p.anthropic, &current.anthropic),
            gemini: url(p.gemini, &current.gemini),
            ollama: url(p.ollama, &current.ollama),
            ..current
        };
    }
    Ok(config)
}

/// Writes `text` to a temporary file in `path`'s directory, flushes it to disk, then renames it
/// over `path`.
fn write_atomically(path: &Path, text: &str) -> Result<(), RuntimeError> {
    let io = |e: std::io::Error| RuntimeError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let dir = path.parent().ok_or_else(|| RuntimeError::Io {
        path: path.display().to_string(),
        message: "has no parent directory".into(),
    })?;
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".config.toml.")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(text.as_bytes()).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Reads `config.toml`; a missing file means the defaults.
pub(crate) fn load_config(paths: &Paths) -> Result<Config, RuntimeError> {
    let file = paths.config_file();
    match std::fs::read_to_string(&file) {
        Ok(text) => Ok(Config::from_toml(&text, &file)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(e) => Err(RuntimeError::Io {
            path: file.display().to_string(),
            message: e.to_string(),
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::provider::StaticKeys;
    use pretty_assertions::assert_eq;

    fn service(dir: &Path) -> SettingsService {
        let paths = Paths::under(dir);
        let local_models = Arc::new(LocalModels::new(&paths.data_dir, &Default::default()));
        SettingsService::new(
            Config::default(),
            paths,
            Arc::new(StaticKeys::new().with("openai", "sk-test")),
            suzent_tools::default_registry(),
            local_models,
        )
    }

    #[test]
    fn a_bad_patch_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let settings = service(dir.path());
        let patch = SettingsPatch {
            default_model: Some("nonsense".into()),
            ..Default::default()
        };
        let err = settings.save(patch).unwrap_err();
        assert!(err.to_string().contains("default_model"), "{err}");
        assert!(!Paths::under(dir.path()).config_file().exists());
        assert_eq!(settings.config(), Config::default());
    }

    #[test]
    fn a_saved_patch_is_the_configuration_of_later_runs() {
        let dir = tempfile::tempdir().unwrap();
        let settings = service(dir.path());
        let saved = settings
            .save(SettingsPatch {
                default_model: Some("openai/gpt-4.1".into()),
                max_steps: Some(7),
                ..Default::default()
            })
            .unwrap();
        assert!(saved.keys.openai);
        assert_eq!(settings.config().max_steps, 7);
        let reread = load_config(&Paths::under(dir.path())).unwrap();
        assert_eq!(reread, settings.config());
        assert!(settings.check_model(None).is_ok());
    }
}
