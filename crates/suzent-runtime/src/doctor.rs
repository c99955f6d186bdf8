//! The doctor service: checks of the configuration, the database, the model and its key, the
//! provider's reachability and the sandbox (`suzent doctor`).

use crate::background::BackgroundService;
use crate::dirs::Paths;
use crate::provider::{build_provider, parse_model};
use crate::settings::SettingsService;
use std::sync::Arc;
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
}

impl DoctorService {
    /// The service.
    pub(crate) fn new(
        paths: Paths,
        store: Store,
        settings: Arc<SettingsService>,
        background: Arc<BackgroundService>,
    ) -> DoctorService {
        DoctorService {
            paths,
            store,
            settings,
            background,
        }
    }

    /// Checks configuration, keys, database and providers.
    pub(crate) async fn report(&self) -> DoctorReport {
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
        match &config.default_model {
            None => checks.push(DoctorCheck {
                name: "model".into(),
                ok: false,
                detail: "no default_model in config.toml (e.g. default_model = \"openai/gpt-4.1\"); pass --model".into(),
            }),
            Some(model) => match build_provider(model, &config.providers, self.settings.keys()) {
                Ok((_provider, _)) => {
                    checks.push(DoctorCheck { name: "model".into(), ok: true, detail: format!("{model}: key present") });
                }
                Err(e) => checks.push(DoctorCheck { name: "model".into(), ok: false, detail: e.to_string() }),
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
        if let Some(model) = &config.default_model {
            checks.push(self.reachability(model).await);
        }
        checks.push(self.background.sandbox_check());
        DoctorReport { checks }
    }

    async fn reachability(&self, model: &str) -> DoctorCheck {
        let url = match parse_model(model) {
            Ok((kind, _)) => {
                crate::provider::resolve::base_url(kind, &self.settings.config().providers)
            }
            Err(e) => {
                return DoctorCheck {
                    name: "reachable".into(),
                    ok: false,
                    detail: e.to_string(),
                };
            }
        };
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(5))
            .build();
        let result = match client {
            Ok(c) => c
                .get(&url)
                .send()
                .await
                .map(|r| r.status().as_u16())
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match result {
            Ok(status) => DoctorCheck {
                name: "reachable".into(),
                ok: true,
                detail: format!("{url} answered HTTP {status}"),
            },
            Err(e) => DoctorCheck {
                name: "reachable".into(),
                ok: false,
                detail: format!("{url}: {e}"),
            },
        }
    }
}
