//! The doctor service: checks of the configuration, the database, the model and its key, the
//! model's server (`/models` and a one-token completion) and the sandbox (`suzent doctor`).

use crate::background::BackgroundService;
use crate::dirs::Paths;
use crate::local_models::LocalModels;
use crate::provider::fit::SMALL_CONTEXT;
use crate::provider::probe::probe_model;
use crate::provider::{ProviderKind, build_provider, parse_model};
use crate::settings::SettingsService;
use std::sync::Arc;
use suzent_core::Config;
use suzent_store::Store;

/// One check of `doctor`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DoctorCheck {
    /// What was checked.
    pub name: String,
    /// Whether it is fine.
    pub ok: bool,
    /// What was found.
    pub detail: String,
}

/// The result of [`crate::Runtime::doctor`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DoctorReport {
    /// Every check, in order.
    pub checks: Vec<DoctorCheck>,
}

/// Runs the checks.
pub(crate) struct DoctorService {
    paths: Paths,
    store: Store,
    settings: Arc<SettingsService>,
    background: Arc<BackgroundService>,
    local_models: Arc<LocalModels>,
}

impl DoctorService {
    /// The service.
    pub(crate) fn new(
        paths: Paths,
        store: Store,
        settings: Arc<SettingsService>,
        background: Arc<BackgroundService>,
        local_models: Arc<LocalModels>,
    ) -> DoctorService {
        DoctorService {
            paths,
            store,
            settings,
            background,
            local_models,
        }
    }

    /// Checks the configuration, keys, database, the model (`model`, else the default one: its
    /// server's `/models` and a one-token completion; nothing the configuration does not name is
    /// contacted), a small local model as the auto-mode reviewer, and the sandbox.
    pub(crate) async fn report(&self, model: Option<&str>) -> DoctorReport {
        let mut checks = Vec::new();
        let cfg_file = self.paths.config_file();
        checks.push(DoctorCheck {
            name: "config".into(),
            ok: true,
            detail: if cfg_file.exists() {
                format!("{} is valid", cfg_file.display())
            } else {
                format!("{} not present; using defaults", cfg_file.display())
            },
        });
        let db = self.store.list_chats().await;
        checks.push(DoctorCheck {
            name: "database".into(),
            ok: db.is_ok(),
            detail: match db {
                Ok(chats) => format!(
                    "{} ({} chats)",
                    self.paths.database().display(),
                    chats.len()
                ),
                Err(e) => e.to_string(),
            },
        });
        let config = self.settings.config();
        let providers = self.settings.providers(&config);
        let chosen = model
            .map(str::to_string)
            .or_else(|| self.settings.default_model(&config));
        match &chosen {
            None => checks.push(DoctorCheck {
                name: "model".into(),
                ok: false,
                detail: "no model: pass --model, set default_model in config.toml (e.g. \
                         default_model = \"openai/gpt-4.1\"), or add a local model (suzent models pull)"
                    .into(),
            }),
            Some(model) => match build_provider(model, &providers, self.settings.keys()) {
                Ok(_) => checks.push(DoctorCheck {
                    name: "model".into(),
                    ok: true,
                    detail: format!("{model}: configured"),
                }),
                Err(e) => checks.push(DoctorCheck {
                    name: "model".into(),
                    ok: false,
                    detail: e.to_string(),
                }),
            },
        }
        for provider in ["openai", "anthropic", "gemini"] {
            let present = self.settings.keys().api_key(provider).is_some();
            checks.push(DoctorCheck {
                name: format!("key:{provider}"),
                ok: true,
                detail: if present {
                    "present".into()
                } else {
                    "not set".into()
                },
            });
        }
        if let Some(model) = &chosen {
            // Only the base URL configured for this model's provider is contacted.
            for probe in probe_model(model, &providers, self.settings.keys()).await {
                checks.push(DoctorCheck {
                    name: probe.name,
                    ok: probe.ok,
                    detail: probe.detail,
                });
            }
            if let Some(warning) = self.reviewer_warning(&config, model) {
                checks.push(warning);
            }
        }
        checks.push(self.background.sandbox_check());
        DoctorReport { checks }
    }

    /// A failed check when the auto-mode reviewer would be a small local model.
    fn reviewer_warning(&self, config: &Config, model: &str) -> Option<DoctorCheck> {
        let reviewer = config.reviewer_model.as_deref().unwrap_or(model);
        let (kind, _) = parse_model(reviewer).ok()?;
        let context = self
            .local_models
            .context_size(kind, &self.settings.providers(config))?;
        (kind == ProviderKind::Local || context < SMALL_CONTEXT).then(|| DoctorCheck {
            name: "reviewer".into(),
            ok: false,
            detail: format!(
                "auto mode's reviewer would be {reviewer}, a small local model: its verdicts on risky calls are unreliable; set reviewer_model to a stronger model or use default mode"
            ),
        })
    }
}
