//! The user configuration file (`config.toml` in the config directory).

use crate::permission::PermissionMode;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The default tool selection: the file and shell tools, planning, memory and skills.
pub const DEFAULT_TOOLS: &[&str] = &[
    "ReadFileTool",
    "WriteFileTool",
    "EditFileTool",
    "GlobTool",
    "GrepTool",
    "ShellTool",
    // Always-on internals (seed 000: not deferrable) and planning.
    "PlanningTool",
    "MemorySearchTool",
    "MemoryBlockUpdateTool",
    "MemoryArchiveTool",
    "SkillTool",
    // The canvas (issue 8).
    "RenderUiTool",
];

/// The Docker image of the `docker` sandbox backend unless `sandbox_image` names another (it
/// needs `bash`).
pub const DEFAULT_SANDBOX_IMAGE: &str = "debian:bookworm-slim";

/// Which sandbox runs commands in sandbox mode (`sandbox_backend` in `config.toml`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxBackend {
    /// The first that works here: bubblewrap on Linux, the system sandbox profile on macOS,
    /// then Docker.
    #[default]
    Auto,
    /// bubblewrap (`bwrap`, Linux).
    Bubblewrap,
    /// A Docker container per command (needs a running Docker engine and the image).
    Docker,
    /// The macOS system sandbox (`sandbox-exec` with a generated Seatbelt profile).
    Seatbelt,
}

impl SandboxBackend {
    /// The name used in `config.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxBackend::Auto => "auto",
            SandboxBackend::Bubblewrap => "bubblewrap",
            SandboxBackend::Docker => "docker",
            SandboxBackend::Seatbelt => "seatbelt",
        }
    }
}

impl std::fmt::Display for SandboxBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Base URL overriding the SDK environment variable (`OPENAI_BASE_URL`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Most tokens of one reply (`max_tokens`; default 4096, 1..=1,000,000). Always sent, so a
    /// local server never runs until its context is full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The model's context size in tokens, when the server does not tell (used to fit the
    /// prompt: below 16,384 the small-model tool set and compact schemas apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_size: Option<u32>,
}

/// Settings of local models: the in-process llama.cpp engine (`local/ID` with no `base_url`)
/// or a local OpenAI-compatible server (`local/ID` with a `base_url`, no key needed).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalConfig {
    /// Base URL of a local OpenAI-compatible server (llama.cpp's server, LM Studio, vLLM);
    /// unset: models run in process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Most tokens of one reply (default 2048).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Context size in tokens (default: from the model and the free memory, at most 16,384).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_size: Option<u32>,
    /// CPU threads (default: the machine's cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// Seconds without a request after which the model is unloaded (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_unload_secs: Option<u32>,
    /// Where `suzent models pull` downloads from (default `https://huggingface.co`; the
    /// environment variable `SUZENT_MODELS_HUB` also sets it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub_url: Option<String>,
    /// The folder of the GGUF models (default `models/gguf` under the data directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models_dir: Option<PathBuf>,
}

/// Settings of the model providers.
#[cfg_attr(feature = "specta", derive(specta::Type))]
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
    /// Any OpenAI-compatible server (`openai-compatible/MODEL`): needs a `base_url`, and a key
    /// only if the server asks for one (`suzent keys set openai-compatible`).
    #[serde(default, rename = "openai-compatible")]
    pub openai_compatible: ProviderConfig,
    /// Local models (`local/ID`).
    #[serde(default)]
    pub local: LocalConfig,
}

/// The `[browser]` table: which browser `browser_action` drives and how.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrowserConfig {
    /// `extension` (the user's Chrome/Edge through the paired extension, the default),
    /// `managed` (a Chromium Suzent starts) or `cdp` (attach to `cdp_endpoint`). A chat may
    /// override it.
    #[serde(default)]
    pub mode: crate::BrowserMode,
    /// Profile of the managed browser: its cookies and logins live in
    /// `<data>/browser/profiles/<profile>` (default `default`; letters, digits, `-`, `_`).
    #[serde(default = "default_browser_profile")]
    pub profile: String,
    /// Browser binary of managed mode (default: the first Chromium, Chrome or Edge found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<PathBuf>,
    /// Start the managed browser without a window (default false).
    #[serde(default)]
    pub headless: bool,
    /// Extra command-line switches of the managed browser.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_args: Vec<String>,
    /// DevTools endpoint of `cdp` mode, on this machine only (`http://127.0.0.1:9222`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdp_endpoint: Option<String>,
    /// Most characters of one snapshot page (default 20000, 2000..=200000).
    #[serde(default = "default_snapshot_page_chars")]
    pub snapshot_page_chars: u32,
    /// Most megabytes the managed browser may download per session (default 100).
    #[serde(default = "default_download_quota_mb")]
    pub download_quota_mb: u32,
}

fn default_browser_profile() -> String {
    "default".to_string()
}

fn default_snapshot_page_chars() -> u32 {
    20_000
}

fn default_download_quota_mb() -> u32 {
    100
}

impl Default for BrowserConfig {
    fn default() -> Self {
        BrowserConfig {
            mode: crate::BrowserMode::default(),
            profile: default_browser_profile(),
            binary: None,
            headless: false,
            extra_args: Vec::new(),
            cdp_endpoint: None,
            snapshot_page_chars: default_snapshot_page_chars(),
            download_quota_mb: default_download_quota_mb(),
        }
    }
}

/// The user configuration. Unknown fields are an error, so a typo is never silently ignored.
#[cfg_attr(feature = "specta", derive(specta::Type))]
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
    /// Run shell commands in a sandbox (see `sandbox_backend`): the workspace, `/persistence` and
    /// `/shared` writable, the rest read-only, no network unless `sandbox_network`. Refused with an
    /// error where no sandbox is available. A chat may override it.
    #[serde(default)]
    pub sandbox: bool,
    /// Let sandboxed commands use the network (default false).
    #[serde(default)]
    pub sandbox_network: bool,
    /// Which sandbox runs sandboxed commands (default `auto`: bubblewrap on Linux, the system
    /// sandbox profile on macOS, Docker where neither works).
    #[serde(default)]
    pub sandbox_backend: SandboxBackend,
    /// Docker image of the `docker` sandbox backend (default [`DEFAULT_SANDBOX_IMAGE`]); it
    /// must contain `bash` and be present (`docker pull`), it is never pulled implicitly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_image: Option<String>,
    /// Sub-agents running at once in one app (default 8, 1..=64); `spawn_agent` beyond it is
    /// refused with an error naming the limit.
    #[serde(default = "default_subagent_max_running")]
    pub subagent_max_running: u32,
    /// Sub-agents one chat may have running at once (default 4, 1..=64).
    #[serde(default = "default_subagent_max_per_chat")]
    pub subagent_max_per_chat: u32,
    /// Model of sub-agents, `provider/model` (default: the delegating chat's model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_model: Option<String>,
    /// Reviewer model of `auto` mode, `provider/model` (default: the chat's own model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer_model: Option<String>,
    /// Seconds the `auto` mode reviewer may take before its answer counts as an error
    /// (default 30, 1..=600).
    #[serde(default = "default_reviewer_timeout_secs")]
    pub reviewer_timeout_secs: u32,
    /// Seconds a chat must be idle after its last message before what was said since its last
    /// summary is summarized into archival memory (default 1800, at most 604800 = 7 days).
    /// Deleting a chat never summarizes it and removes its summaries. `0` turns automatic
    /// summaries off.
    #[serde(default = "default_chat_summary_idle_secs")]
    pub chat_summary_idle_secs: u32,
    /// The browser of `browser_action` (`[browser]`).
    #[serde(default)]
    pub browser: BrowserConfig,
    /// Settings of single models, keyed by model string (`[models."openai/gpt-4.1"]`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub models: std::collections::BTreeMap<String, ModelSettings>,
    /// Paired devices (`[devices]`).
    #[serde(default)]
    pub devices: DevicesConfig,
    /// Messaging channels (`[[channels]]`): names, platforms, allow-lists, on/off, profiles.
    /// Their tokens are in the OS keychain, never here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<crate::ChannelConfig>,
}

/// Settings of one model (`[models."provider/model"]` in `config.toml`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSettings {
    /// The model's context window in tokens (prompt and reply), overriding the built-in table
    /// and what the provider reports (256..=10,000,000). Requests are compacted to fit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
    /// Whether the model is sent the images of attachments, overriding the built-in table of
    /// vision models (e.g. `true` for a vision model behind an OpenAI-compatible server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<bool>,
    /// Its price in US dollars per million input (prompt) tokens, overriding the built-in list
    /// prices (set it with `output_price` for a model the table lacks; `0` for a free one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_price: Option<f64>,
    /// Its price in US dollars per million output tokens (with `input_price`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_price: Option<f64>,
}

/// Settings of paired devices (`[devices]` in `config.toml`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevicesConfig {
    /// This device's name as paired devices see it (default: the host name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Reach paired devices on other networks through iroh's public relays (default true).
    /// Off keeps device traffic on the local network (direct connections only).
    #[serde(default = "default_true")]
    pub relay: bool,
    /// Advertise this device on the local network and list devices seen there (default true).
    /// Adverts only suggest devices; trust comes from the key pinned at pairing.
    #[serde(default = "default_true")]
    pub discovery: bool,
    /// Addresses (`ip:port`) to listen on for paired devices (default: every interface). A port
    /// 0 takes the port used last time, or any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bind: Vec<String>,
    /// Hours an undelivered message to a device is kept trying before it fails as expired
    /// (default 168 = 7 days, 1..=8760).
    #[serde(default = "default_device_retention_hours")]
    pub retention_hours: u32,
}

fn default_true() -> bool {
    true
}

fn default_device_retention_hours() -> u32 {
    168
}

impl Default for DevicesConfig {
    fn default() -> Self {
        DevicesConfig {
            name: None,
            relay: true,
            discovery: true,
            bind: Vec::new(),
            retention_hours: default_device_retention_hours(),
        }
    }
}

fn default_tools() -> Vec<String> {
    DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect()
}

fn default_max_steps() -> u32 {
    50
}

fn default_reviewer_timeout_secs() -> u32 {
    30
}

fn default_subagent_max_running() -> u32 {
    8
}

fn default_subagent_max_per_chat() -> u32 {
    4
}

fn default_chat_summary_idle_secs() -> u32 {
    1800
}

/// Largest `chat_summary_idle_secs`: 7 days.
pub const MAX_CHAT_SUMMARY_IDLE_SECS: u32 = 7 * 24 * 3600;

impl Default for Config {
    fn default() -> Self {
        Config {
            default_model: None,
            default_mode: PermissionMode::Default,
            tools: default_tools(),
            workspace: None,
            providers: ProvidersConfig::default(),
            max_steps: default_max_steps(),
            sandbox: false,
            sandbox_network: false,
            sandbox_backend: SandboxBackend::Auto,
            sandbox_image: None,
            subagent_max_running: default_subagent_max_running(),
            subagent_max_per_chat: default_subagent_max_per_chat(),
            subagent_model: None,
            reviewer_model: None,
            reviewer_timeout_secs: default_reviewer_timeout_secs(),
            chat_summary_idle_secs: default_chat_summary_idle_secs(),
            devices: DevicesConfig::default(),
            channels: Vec::new(),
            browser: BrowserConfig::default(),
            models: std::collections::BTreeMap::new(),
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
        if let Some(model) = &self.reviewer_model
            && (!model.contains('/') || model.starts_with('/') || model.ends_with('/'))
        {
            return Err(ConfigError::Value {
                field: "reviewer_model".into(),
                message: format!(
                    "'{model}' is not of the form provider/model (e.g. openai/gpt-4.1-mini)"
                ),
            });
        }
        if self.reviewer_timeout_secs == 0 || self.reviewer_timeout_secs > 600 {
            return Err(ConfigError::Value {
                field: "reviewer_timeout_secs".into(),
                message: format!("{} is outside 1..=600", self.reviewer_timeout_secs),
            });
        }
        let providers = &self.providers;
        let limits: [(&str, Option<u32>, u32, u32); 8] = [
            (
                "providers.openai.max_tokens",
                providers.openai.max_tokens,
                1,
                1_000_000,
            ),
            (
                "providers.ollama.max_tokens",
                providers.ollama.max_tokens,
                1,
                1_000_000,
            ),
            (
                "providers.openai-compatible.max_tokens",
                providers.openai_compatible.max_tokens,
                1,
                1_000_000,
            ),
            (
                "providers.local.max_tokens",
                providers.local.max_tokens,
                1,
                1_000_000,
            ),
            (
                "providers.local.context_size",
                providers.local.context_size,
                256,
                10_000_000,
            ),
            ("providers.local.threads", providers.local.threads, 1, 256),
            (
                "providers.ollama.context_size",
                providers.ollama.context_size,
                256,
                10_000_000,
            ),
            (
                "providers.openai-compatible.context_size",
                providers.openai_compatible.context_size,
                256,
                10_000_000,
            ),
        ];
        for (field, value, min, max) in limits {
            if let Some(value) = value
                && !(min..=max).contains(&value)
            {
                return Err(ConfigError::Value {
                    field: field.into(),
                    message: format!("{value} is outside {min}..={max}"),
                });
            }
        }
        for (model, settings) in &self.models {
            match (settings.input_price, settings.output_price) {
                (None, None) => {}
                (Some(i), Some(o)) if i.is_finite() && o.is_finite() && i >= 0.0 && o >= 0.0 => {}
                (Some(_), Some(_)) => {
                    return Err(ConfigError::Value {
                        field: format!("models.\"{model}\".input_price"),
                        message: "prices are US dollars per million tokens, 0 or more".into(),
                    });
                }
                (i, _) => {
                    let missing = if i.is_none() {
                        "input_price"
                    } else {
                        "output_price"
                    };
                    return Err(ConfigError::Value {
                        field: format!("models.\"{model}\".{missing}"),
                        message: "set input_price and output_price together".into(),
                    });
                }
            }
            if let Some(window) = settings.context_window
                && !(256..=10_000_000).contains(&window)
            {
                return Err(ConfigError::Value {
                    field: format!("models.\"{model}\".context_window"),
                    message: format!("{window} is outside 256..=10000000"),
                });
            }
        }
        if self.chat_summary_idle_secs > MAX_CHAT_SUMMARY_IDLE_SECS {
            return Err(ConfigError::Value {
                field: "chat_summary_idle_secs".into(),
                message: format!(
                    "{} is outside 0..={MAX_CHAT_SUMMARY_IDLE_SECS} (0 turns summaries off)",
                    self.chat_summary_idle_secs
                ),
            });
        }
        if let Some(model) = &self.subagent_model
            && (!model.contains('/') || model.starts_with('/') || model.ends_with('/'))
        {
            return Err(ConfigError::Value {
                field: "subagent_model".into(),
                message: format!("'{model}' is not of the form provider/model"),
            });
        }
        for (field, value) in [
            ("subagent_max_running", self.subagent_max_running),
            ("subagent_max_per_chat", self.subagent_max_per_chat),
        ] {
            if value == 0 || value > 64 {
                return Err(ConfigError::Value {
                    field: field.into(),
                    message: format!("{value} is outside 1..=64"),
                });
            }
        }
        if let Some(image) = &self.sandbox_image
            && !valid_image_reference(image)
        {
            return Err(ConfigError::Value {
                field: "sandbox_image".into(),
                message: format!(
                    "'{image}' is not a Docker image reference (e.g. debian:bookworm-slim or ghcr.io/org/image@sha256:...)"
                ),
            });
        }
        if self.devices.retention_hours == 0 || self.devices.retention_hours > 8760 {
            return Err(ConfigError::Value {
                field: "devices.retention_hours".into(),
                message: format!("{} is outside 1..=8760", self.devices.retention_hours),
            });
        }
        for addr in &self.devices.bind {
            if addr.parse::<std::net::SocketAddr>().is_err() {
                return Err(ConfigError::Value {
                    field: "devices.bind".into(),
                    message: format!("'{addr}' is not an ip:port address (e.g. 0.0.0.0:0)"),
                });
            }
        }
        if let Some(name) = &self.devices.name
            && (name.trim().is_empty()
                || name.chars().count() > 64
                || name.chars().any(char::is_control))
        {
            return Err(ConfigError::Value {
                field: "devices.name".into(),
                message: format!("'{name}' must be 1 to 64 characters without control characters"),
            });
        }
        let profile = &self.browser.profile;
        if profile.is_empty()
            || profile.len() > 64
            || !profile
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(ConfigError::Value {
                field: "browser.profile".into(),
                message: format!("'{profile}' is not a profile name (letters, digits, '-', '_')"),
            });
        }
        if !(2000..=200_000).contains(&self.browser.snapshot_page_chars) {
            return Err(ConfigError::Value {
                field: "browser.snapshot_page_chars".into(),
                message: format!(
                    "{} is outside 2000..=200000",
                    self.browser.snapshot_page_chars
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
        crate::channel::validate_channels(&self.channels)?;
        Ok(())
    }
}

/// Whether `image` looks like a Docker image reference: starts with a letter or digit (so it is
/// never taken for an option of `docker run`), then letters, digits and `._-/:@` only.
fn valid_image_reference(image: &str) -> bool {
    let mut chars = image.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && image.len() <= 255
        && chars.all(|c| c.is_ascii_alphanumeric() || "._-/:@".contains(c))
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
    fn a_models_prices_are_read_and_must_come_in_pairs() {
        let read = |text: &str| Config::from_toml(text, Path::new("c.toml"));
        let config = read(
            "[models.\"openai-compatible/my-model\"]\ninput_price = 0.5\noutput_price = 1.5\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let m = &config.models["openai-compatible/my-model"];
        assert_eq!((m.input_price, m.output_price), (Some(0.5), Some(1.5)));
        let half = read("[models.\"a/b\"]\ninput_price = 0.5\n").unwrap_err();
        assert!(
            half.to_string().contains("models.\"a/b\".output_price")
                && half
                    .to_string()
                    .contains("set input_price and output_price together"),
            "{half}"
        );
        let negative = read("[models.\"a/b\"]\ninput_price = -1\noutput_price = 1\n").unwrap_err();
        assert!(negative.to_string().contains("0 or more"), "{negative}");
    }

    #[test]
    fn a_models_context_window_is_read_and_checked() {
        let c = Config::from_toml(
            "[models.\"openai/gpt-4.1\"]\ncontext_window = 64000\n",
            Path::new("c.toml"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            c.models.get("openai/gpt-4.1"),
            Some(&ModelSettings {
                context_window: Some(64_000),
                ..Default::default()
            })
        );
        let err = Config::from_toml(
            "[models.\"openai/gpt-4.1\"]\ncontext_window = 10\n",
            Path::new("c.toml"),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid config value for 'models.\"openai/gpt-4.1\".context_window': 10 is outside 256..=10000000"
        );
    }

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
    fn sandbox_backend_image_and_sub_agent_limits_are_read_and_checked() {
        let c = Config::from_toml(
            "sandbox_backend = \"docker\"\nsandbox_image = \"ghcr.io/me/dev:1.2\"\nsubagent_max_running = 3\nsubagent_max_per_chat = 2\n",
            Path::new("c.toml"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.sandbox_backend, SandboxBackend::Docker);
        assert_eq!(c.sandbox_image.as_deref(), Some("ghcr.io/me/dev:1.2"));
        assert_eq!((c.subagent_max_running, c.subagent_max_per_chat), (3, 2));
        let d = Config::default();
        assert_eq!(d.sandbox_backend, SandboxBackend::Auto);
        assert_eq!((d.subagent_max_running, d.subagent_max_per_chat), (8, 4));
        let err = Config::from_toml("sandbox_backend = \"chroot\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("chroot"), "{err}");
        let err = Config::from_toml("sandbox_image = \"--privileged\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("sandbox_image") && err.contains("--privileged"),
            "{err}"
        );
        let err = Config::from_toml("subagent_max_per_chat = 0\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("subagent_max_per_chat") && err.contains("1..=64"),
            "{err}"
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
