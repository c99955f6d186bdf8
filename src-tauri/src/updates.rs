//! Settings → Updates: signed updates through `tauri-plugin-updater` (R2-D04).
//!
//! The manifest (`latest.json`) comes from the endpoint in the desktop preferences (default: the
//! project's release feed). Its `signature` is checked with the minisign public key in
//! `tauri.conf.json` (`plugins.updater.pubkey`), and `requireSignedVersion` makes the version
//! inside the signed trusted comment decide, not the manifest's unsigned `version` field. So:
//! - an older or equal version is never offered (a downgrade is refused);
//! - a manifest whose `version` differs from the version the artifact was signed for (a 1.2.0
//!   artifact announced as 9.9.9) is refused after download, before anything is kept;
//! - an artifact whose bytes do not match its signature is refused;
//! - a manifest with no build for this system is refused.
//!
//! Each refusal is the status's `failed` message, shown in Settings → Updates. A verified
//! download is kept in memory and installed when the app quits or restarts (an AppImage is
//! replaced in place, a .deb/.rpm through the package manager); a build not installed from a
//! bundle (a development build) is only downloaded and verified.

use crate::error::{AppError, AppErrorKind};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use suzent_runtime::desktop_prefs::{DesktopPrefs, DesktopPrefsFile};
use tauri::{AppHandle, Manager, State};
use tauri_plugin_updater::{Update, UpdaterExt};
use tauri_specta::Event;

/// How often the app checks while it runs (when checks are on).
pub const CHECK_INTERVAL: Duration = Duration::from_secs(24 * 60 * 60);

/// Where the update process stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum UpdateState {
    /// Not checked yet.
    Idle,
    /// Asking the endpoint.
    Checking,
    /// No newer version.
    UpToDate {
        /// The version the feed offers, when it offered one (equal to or older than this app's).
        offered: Option<String>,
    },
    /// A newer version can be downloaded.
    Available {
        /// Its version.
        version: String,
        /// Its release notes (Markdown as written by the release).
        notes: Option<String>,
        /// When it was published (RFC 3339), if the manifest says.
        date: Option<String>,
    },
    /// Downloading.
    Downloading {
        /// The version.
        version: String,
        /// Bytes received.
        received: u64,
        /// Bytes in all, when the server says.
        total: Option<u64>,
    },
    /// Downloaded and verified: installed when the app quits or restarts.
    Ready {
        /// The version.
        version: String,
        /// Whether this build can install it (installed from an AppImage, .deb or .rpm).
        installable: bool,
    },
    /// The check or the download was refused or failed.
    Failed {
        /// Why, in a sentence.
        message: String,
    },
}

/// The updater's status (the `update_status` command and the [`UpdateStatusChanged`] event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStatus {
    /// This app's version.
    pub current_version: String,
    /// The endpoint in use.
    pub endpoint: String,
    /// Where the process stands.
    pub state: UpdateState,
    /// When the last check ended (RFC 3339).
    pub checked_at: Option<String>,
}

/// Sent whenever the [`UpdateStatus`] changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct UpdateStatusChanged(pub UpdateStatus);

/// The updater's state, managed by the app.
pub struct Updates {
    prefs: DesktopPrefsFile,
    status: Mutex<UpdateStatus>,
    /// The update found by the last check.
    update: Mutex<Option<Update>>,
    /// A verified download waiting for the app to quit.
    ready: Mutex<Option<(Update, Vec<u8>)>>,
    /// One check or download at a time.
    busy: tokio::sync::Mutex<()>,
}

impl Updates {
    /// The updater of an app whose preferences are in `prefs`.
    pub fn new(prefs: DesktopPrefsFile, current_version: String) -> Updates {
        let endpoint = prefs.load().unwrap_or_default().update_endpoint;
        Updates {
            prefs,
            status: Mutex::new(UpdateStatus {
                current_version,
                endpoint,
                state: UpdateState::Idle,
                checked_at: None,
            }),
            update: Mutex::new(None),
            ready: Mutex::new(None),
            busy: tokio::sync::Mutex::new(()),
        }
    }

    /// The desktop preferences file.
    pub fn prefs(&self) -> &DesktopPrefsFile {
        &self.prefs
    }

    fn status(&self) -> UpdateStatus {
        self.status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn set<R: tauri::Runtime>(&self, app: &AppHandle<R>, state: UpdateState, checked: bool) {
        let status = {
            let mut status = self.status.lock().unwrap_or_else(|p| p.into_inner());
            status.state = state;
            if checked {
                status.checked_at = Some(chrono::Utc::now().to_rfc3339());
            }
            status.clone()
        };
        if let UpdateState::Failed { message } = &status.state {
            tracing::warn!("update: {message}");
        }
        if let Err(e) = UpdateStatusChanged(status).emit(app) {
            tracing::warn!("cannot send the update status: {e}");
        }
    }

    /// Installs a verified download, if there is one (on quit or restart).
    pub fn install_ready(&self) {
        let ready = self.ready.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some((update, bytes)) = ready else { return };
        if !installable() {
            tracing::info!(
                "update {}: this build was not installed from a bundle; not installing it",
                update.version
            );
            return;
        }
        match update.install(&bytes) {
            Ok(()) => tracing::info!("update {} installed; it starts next time", update.version),
            Err(e) => tracing::error!("update {} could not be installed: {e}", update.version),
        }
    }
}

/// Whether this build was installed from a bundle the updater can replace.
fn installable() -> bool {
    tauri::utils::platform::bundle_type().is_some()
}

/// The sentence shown for an updater error.
pub fn explain(error: &tauri_plugin_updater::Error) -> String {
    use tauri_plugin_updater::Error as E;
    match error {
        E::SignedVersionMismatch { signed, announced } => format!(
            "refused: the manifest announces version {announced}, but the download is signed as \
             version {signed} (a mislabeled or replayed release)"
        ),
        E::MissingSignedVersion => {
            "refused: the download's signature does not name the version it was made for".into()
        }
        E::Minisign(e) => format!(
            "refused: the download does not match its signature from the release key (bad \
             signature: {e})"
        ),
        E::Base64(_) | E::SignatureUtf8(_) => {
            "refused: the manifest's signature is not a minisign signature".into()
        }
        E::TargetNotFound(target) => {
            format!("refused: the manifest has no build for this system ({target})")
        }
        E::TargetsNotFound(targets) => format!(
            "refused: the manifest has no build for this system ({})",
            targets.join(", ")
        ),
        E::ReleaseNotFound | E::Serialization(_) => {
            "the update endpoint did not answer with a valid update manifest".into()
        }
        E::InsecureTransportProtocol => "the update endpoint must use https".into(),
        other => format!("the update failed: {other}"),
    }
}

/// The public key the manifest's signatures are checked with: the one in `tauri.conf.json`;
/// a development build also takes `SUZENT_UPDATER_TEST_PUBKEY` (the tests' throwaway key). A
/// release build has no way to change the key.
fn test_pubkey() -> Option<String> {
    if cfg!(debug_assertions) {
        std::env::var("SUZENT_UPDATER_TEST_PUBKEY")
            .ok()
            .filter(|k| !k.is_empty())
    } else {
        None
    }
}

/// Asks the endpoint for a newer version and updates the status.
pub async fn check<R: tauri::Runtime>(app: &AppHandle<R>) -> UpdateStatus {
    let updates = app.state::<Updates>();
    let _busy = updates.busy.lock().await;
    let prefs = match updates.prefs.load() {
        Ok(prefs) => prefs,
        Err(message) => {
            updates.set(app, UpdateState::Failed { message }, true);
            return updates.status();
        }
    };
    updates
        .status
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .endpoint = prefs.update_endpoint.clone();
    updates.set(app, UpdateState::Checking, false);
    let offered = Arc::new(Mutex::new(None::<String>));
    let state = match build_updater(app, &prefs, Arc::clone(&offered)) {
        Err(message) => UpdateState::Failed { message },
        Ok(updater) => match updater.check().await {
            Ok(Some(update)) => {
                let state = UpdateState::Available {
                    version: update.version.clone(),
                    notes: update.body.clone(),
                    date: update.date.map(|d| d.to_string()),
                };
                *updates.update.lock().unwrap_or_else(|p| p.into_inner()) = Some(update);
                state
            }
            Ok(None) => UpdateState::UpToDate {
                offered: offered.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            },
            Err(e) => UpdateState::Failed {
                message: explain(&e),
            },
        },
    };
    updates.set(app, state, true);
    updates.status()
}

fn build_updater<R: tauri::Runtime>(
    app: &AppHandle<R>,
    prefs: &DesktopPrefs,
    offered: Arc<Mutex<Option<String>>>,
) -> Result<tauri_plugin_updater::Updater, String> {
    let endpoint = url::Url::parse(&prefs.update_endpoint)
        .map_err(|e| format!("update endpoint '{}': {e}", prefs.update_endpoint))?;
    let mut builder = app
        .updater_builder()
        .endpoints(vec![endpoint])
        .map_err(|e| explain(&e))?
        .timeout(Duration::from_secs(60))
        // Only a newer version is an update (no downgrade, whatever the manifest says); the
        // version offered is kept for the status.
        .version_comparator(move |current, release| {
            *offered.lock().unwrap_or_else(|p| p.into_inner()) = Some(release.version.to_string());
            release.version > current
        });
    if let Some(key) = test_pubkey() {
        builder = builder.pubkey(key);
    }
    builder.build().map_err(|e| explain(&e))
}

/// Downloads the update found by the last check, verifies it and keeps it for the restart.
pub async fn download<R: tauri::Runtime>(app: &AppHandle<R>) -> Result<UpdateStatus, AppError> {
    let updates = app.state::<Updates>();
    let _busy = updates.busy.lock().await;
    let update = updates
        .update
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .ok_or_else(|| {
            AppError::new(
                AppErrorKind::NotFound,
                "no update to download: check for updates first",
            )
        })?;
    let version = update.version.clone();
    let mut received: u64 = 0;
    let progress_app = app.clone();
    let progress_version = version.clone();
    let mut last_sent = std::time::Instant::now();
    let result = update
        .download(
            |chunk, total| {
                received += chunk as u64;
                // At most ten progress events a second.
                if last_sent.elapsed() >= Duration::from_millis(100) {
                    last_sent = std::time::Instant::now();
                    progress_app.state::<Updates>().set(
                        &progress_app,
                        UpdateState::Downloading {
                            version: progress_version.clone(),
                            received,
                            total,
                        },
                        false,
                    );
                }
            },
            || {},
        )
        .await;
    match result {
        Ok(bytes) => {
            tracing::info!(
                "update {version}: {} bytes downloaded and verified",
                bytes.len()
            );
            *updates.ready.lock().unwrap_or_else(|p| p.into_inner()) = Some((update, bytes));
            updates.set(
                app,
                UpdateState::Ready {
                    version,
                    installable: installable(),
                },
                false,
            );
        }
        Err(e) => {
            *updates.update.lock().unwrap_or_else(|p| p.into_inner()) = None;
            updates.set(
                app,
                UpdateState::Failed {
                    message: explain(&e),
                },
                false,
            );
        }
    }
    Ok(updates.status())
}

/// Checks at start and then once a day, while checks are on in the preferences.
pub fn start<R: tauri::Runtime>(app: &AppHandle<R>) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            let on = app
                .state::<Updates>()
                .prefs
                .load()
                .map(|p| p.check_for_updates)
                .unwrap_or(false);
            if on {
                check(&app).await;
            }
            tokio::time::sleep(CHECK_INTERVAL).await;
        }
    });
}

/// The updater's status.
#[tauri::command]
#[specta::specta]
pub fn update_status(updates: State<'_, Updates>) -> Result<UpdateStatus, AppError> {
    Ok(updates.status())
}

/// Checks the endpoint now ("Check for updates").
#[tauri::command]
#[specta::specta]
pub async fn check_for_update<R: tauri::Runtime>(
    app: AppHandle<R>,
) -> Result<UpdateStatus, AppError> {
    Ok(check(&app).await)
}

/// Downloads and verifies the available update; it is installed when the app quits or restarts.
#[tauri::command]
#[specta::specta]
pub async fn download_update<R: tauri::Runtime>(
    app: AppHandle<R>,
) -> Result<UpdateStatus, AppError> {
    download(&app).await
}

/// Installs the verified download and restarts the app.
#[tauri::command]
#[specta::specta]
pub fn restart_to_update<R: tauri::Runtime>(app: AppHandle<R>) -> Result<(), AppError> {
    let updates = app.state::<Updates>();
    if !matches!(
        updates.status().state,
        UpdateState::Ready {
            installable: true,
            ..
        }
    ) {
        return Err(AppError::new(
            AppErrorKind::InvalidInput,
            "no verified update can be installed by this build",
        ));
    }
    updates.install_ready();
    app.restart();
}

/// The desktop preferences (update endpoint and checks, tray).
#[tauri::command]
#[specta::specta]
pub fn desktop_prefs(updates: State<'_, Updates>) -> Result<DesktopPrefs, AppError> {
    updates
        .prefs
        .load()
        .map_err(|e| AppError::new(AppErrorKind::Config, e))
}

/// Saves the desktop preferences; a bad endpoint is an error naming it (field `updateEndpoint`).
#[tauri::command]
#[specta::specta]
pub fn save_desktop_prefs(
    updates: State<'_, Updates>,
    prefs: DesktopPrefs,
) -> Result<DesktopPrefs, AppError> {
    updates.prefs.save(&prefs).map_err(|e| {
        let mut error = AppError::new(AppErrorKind::Config, e);
        error.field = Some("updateEndpoint".into());
        error
    })?;
    updates
        .status
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .endpoint = prefs.update_endpoint.clone();
    Ok(prefs)
}
