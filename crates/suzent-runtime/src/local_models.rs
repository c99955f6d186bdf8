//! The local models service: the GGUF models folder (`models/gguf` under the data directory),
//! the recommended list, downloads and imports, and the in-process engine that runs them.
//!
//! It owns the [`ModelManager`] and shares the process-wide [`LocalEngine`] with the `local/`
//! provider, so the model loaded for a chat is the one that `loaded()` reports. Nothing here
//! reaches the network except [`LocalModels::pull`].

use std::path::{Path, PathBuf};

use suzent_llama::LocalEngine;
pub use suzent_llama::ModelInfo;
use suzent_llama::models::{DEFAULT_HUB_URL, ModelManager};
pub use suzent_llama::models::{
    DownloadProgress, InstalledModel, ModelError, ProgressSink, PullSource, RecommendedModel,
};

use crate::provider::local::{models_dir, shared_engine};
use crate::provider::resolve::{base_url, engine_options, limits, shared_client};
use crate::provider::{ProviderKind, fit::SMALL_CONTEXT};
use suzent_core::{Config, ProvidersConfig};

/// Environment variable that overrides the hub the models are downloaded from.
pub const HUB_URL_ENV: &str = "SUZENT_MODELS_HUB";

/// Local GGUF models: what is installed, what is recommended, adding and removing.
#[derive(Debug)]
pub struct LocalModels {
    manager: ModelManager,
    engine: LocalEngine,
}

impl LocalModels {
    /// The models of `[providers.local]` (`models_dir`, default `models/gguf` under
    /// `data_dir`), pulled from its `hub_url` (else `SUZENT_MODELS_HUB`, else Hugging Face).
    pub fn new(data_dir: &Path, config: &suzent_core::LocalConfig) -> LocalModels {
        let dir = config
            .models_dir
            .clone()
            .unwrap_or_else(|| models_dir(data_dir));
        let hub = config
            .hub_url
            .clone()
            .or_else(|| std::env::var(HUB_URL_ENV).ok())
            .filter(|u| !u.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_HUB_URL.to_string());
        let client = shared_client().unwrap_or_default();
        LocalModels {
            manager: ModelManager::new(dir, hub, client),
            engine: shared_engine(&engine_options(config)),
        }
    }

    /// The folder the models live in.
    pub fn dir(&self) -> PathBuf {
        self.manager.dir().to_path_buf()
    }

    /// The installed models.
    pub fn list(&self) -> Result<Vec<InstalledModel>, ModelError> {
        self.manager.list()
    }

    /// The recommended models, each with whether it is installed.
    pub fn recommended(&self) -> Vec<(RecommendedModel, bool)> {
        self.manager
            .recommended()
            .iter()
            .map(|m| (m.clone(), self.manager.path_of(&m.id).is_ok()))
            .collect()
    }

    /// Downloads a recommended model (by id) or a GGUF URL.
    pub async fn pull(
        &self,
        source: PullSource,
        progress: &ProgressSink<'_>,
    ) -> Result<InstalledModel, ModelError> {
        self.manager.pull(source, progress).await
    }

    /// Copies a GGUF file from disk into the models folder.
    pub async fn import(
        &self,
        path: &Path,
        progress: &ProgressSink<'_>,
    ) -> Result<InstalledModel, ModelError> {
        self.manager.import(path, progress).await
    }

    /// Deletes an installed model (unloading it first when it is the loaded one).
    pub fn remove(&self, id: &str) -> Result<(), ModelError> {
        let path = self.manager.path_of(id)?;
        if self.engine.loaded().is_some_and(|info| info.path == path) {
            self.engine.unload();
        }
        self.manager.remove(id)
    }

    /// The model the in-process engine has loaded, if any.
    pub fn loaded(&self) -> Option<suzent_llama::ModelInfo> {
        self.engine.loaded()
    }

    /// The model string (`local/ID`) of the first installed model, preferring the recommended
    /// ones in their order: what a fresh install with a model present runs (offline default).
    pub fn default_model(&self) -> Option<String> {
        let installed = self.manager.list().ok()?;
        let recommended = self
            .manager
            .recommended()
            .iter()
            .find(|m| installed.iter().any(|i| i.id == m.id))
            .map(|m| m.id.clone());
        recommended
            .or_else(|| installed.first().map(|m| m.id.clone()))
            .map(|id| format!("local/{id}"))
    }

    /// The provider settings of `config` with the local models folder filled in (what every
    /// service that builds a provider passes to `build_provider`).
    pub fn providers_config(&self, config: &Config) -> ProvidersConfig {
        let mut providers = config.providers.clone();
        providers.local.models_dir.get_or_insert_with(|| self.dir());
        providers
    }

    /// The context size (tokens) of a model of `kind`, when known: configured, or for the
    /// in-process engine the loaded model's (else half of [`SMALL_CONTEXT`], a small default).
    pub fn context_size(&self, kind: ProviderKind, providers: &ProvidersConfig) -> Option<u32> {
        let (_, configured) = limits(kind, providers);
        if configured.is_some() {
            return configured;
        }
        let in_process = kind == ProviderKind::Local && base_url(kind, providers).is_empty();
        in_process.then(|| {
            self.loaded()
                .map(|info| info.context_size)
                .unwrap_or(SMALL_CONTEXT / 2)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The service over a fresh data directory with the default `[providers.local]`.
    fn models(dir: &tempfile::TempDir) -> LocalModels {
        LocalModels::new(dir.path(), &suzent_core::LocalConfig::default())
    }

    #[tokio::test]
    async fn an_imported_gguf_is_listed_becomes_the_offline_default_and_can_be_removed()
    -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let models = models(&dir);
        assert_eq!((models.list()?, models.default_model()), (Vec::new(), None));
        let installed = models
            .import(&suzent_tests::smollm2_gguf(), &|_: &DownloadProgress| {})
            .await?;
        assert_eq!(
            (
                installed.architecture.as_str(),
                std::path::Path::new(&installed.path).parent(),
                installed.size_bytes
            ),
            (
                "llama",
                Some(models.dir().as_path()),
                std::fs::metadata(suzent_tests::smollm2_gguf())?.len()
            )
        );
        assert_eq!(models.list()?, vec![installed.clone()]);
        assert_eq!(
            models.default_model(),
            Some(format!("local/{}", installed.id))
        );
        models.remove(&installed.id)?;
        assert_eq!((models.list()?, models.default_model()), (Vec::new(), None));
        Ok(())
    }

    #[tokio::test]
    async fn a_file_that_is_not_gguf_is_refused_and_nothing_is_installed() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let models = models(&dir);
        let fake = dir.path().join("model.gguf");
        std::fs::write(&fake, "not a model at all")?;
        assert!(
            models
                .import(&fake, &|_: &DownloadProgress| {})
                .await
                .is_err()
        );
        assert_eq!(models.list()?, Vec::new());
        assert!(models.remove("model").is_err(), "nothing to remove");
        Ok(())
    }

    #[test]
    fn a_configured_context_size_wins_and_a_remote_server_without_one_is_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let models = models(&dir);
        let mut providers = ProvidersConfig::default();
        assert_eq!(models.context_size(ProviderKind::OpenAi, &providers), None);
        providers.openai.context_size = Some(8192);
        assert_eq!(
            models.context_size(ProviderKind::OpenAi, &providers),
            Some(8192)
        );
    }
}
