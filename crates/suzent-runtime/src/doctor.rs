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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use suzent_tests::ScriptedServer;

    fn check(name: &str, ok: bool, detail: &str) -> DoctorCheck {
        DoctorCheck {
            name: name.into(),
            ok,
            detail: detail.into(),
        }
    }

    #[tokio::test]
    async fn without_a_model_the_doctor_says_how_to_set_one_and_checks_the_rest()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        s.chat().await;
        let mut report = s.doctor().report(None).await;
        // The sandbox line depends on this machine (bubblewrap or not); with sandbox mode off
        // it is never a failure.
        let sandbox = report.checks.pop().expect("the sandbox check");
        assert_eq!((sandbox.name.as_str(), sandbox.ok), ("sandbox", true));
        assert_eq!(
            report.checks,
            vec![
                check(
                    "config",
                    true,
                    &format!(
                        "{} not present; using defaults",
                        s.paths.config_file().display()
                    )
                ),
                check(
                    "database",
                    true,
                    &format!("{} (1 chats)", s.paths.database().display())
                ),
                check(
                    "model",
                    false,
                    "no model: pass --model, set default_model in config.toml (e.g. default_model = \"openai/gpt-4.1\"), or add a local model (suzent models pull)"
                ),
                check("key:openai", true, "present"),
                check("key:anthropic", true, "not set"),
                check("key:gemini", true, "not set"),
            ]
        );
        Ok(())
    }

    #[tokio::test]
    async fn the_doctor_asks_the_configured_server_whether_it_serves_the_model()
    -> anyhow::Result<()> {
        let server = ScriptedServer::start(Vec::new()).await;
        let mut config = Config {
            default_model: Some("openai/gpt-test".into()),
            ..Config::default()
        };
        config.providers.openai.base_url = Some(server.openai_base());
        let s = TestServices::open(config).await;
        let doctor = s.doctor();
        let named = |report: DoctorReport, names: &[&str]| -> Vec<DoctorCheck> {
            report
                .checks
                .into_iter()
                .filter(|c| names.contains(&c.name.as_str()))
                .collect()
        };
        assert_eq!(
            named(doctor.report(None).await, &["model", "models"]),
            vec![
                check("model", true, "openai/gpt-test: configured"),
                check(
                    "models",
                    false,
                    "the server does not list gpt-test; it serves: scripted-large, scripted-small"
                ),
            ]
        );
        assert_eq!(
            named(
                doctor.report(Some("openai/scripted-small")).await,
                &["model", "models"]
            ),
            vec![
                check("model", true, "openai/scripted-small: configured"),
                check("models", true, "the server lists scripted-small"),
            ]
        );
        // Each report also asked the server for one token of the model.
        let probes: Vec<(String, serde_json::Value)> = server
            .recorded()
            .into_iter()
            .map(|r| {
                (
                    r.body["model"].as_str().unwrap_or("").to_string(),
                    r.body["max_tokens"].clone(),
                )
            })
            .collect();
        assert_eq!(
            probes,
            vec![
                ("gpt-test".to_string(), serde_json::json!(1)),
                ("scripted-small".to_string(), serde_json::json!(1)),
            ]
        );
        Ok(())
    }
}
