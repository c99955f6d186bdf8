//! Settings → Browser and the pairing dialog: the browser bridge (suzent-server) that the app
//! runs on 127.0.0.1, its typed commands, and one typed event, `browser-bridge-event`, carrying
//! every [`BridgeEvent`]. The shell holds no bridge logic: each command is one call on the
//! server.

use crate::error::{AppError, AppErrorKind};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use suzent_server::{
    BridgeEvent, BridgeOptions, BridgeServer, BrowserPairing, BrowserStatus, PackageError,
    PairingError,
};
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_plugin_dialog::DialogExt;
use tauri_specta::Event;
use tokio::sync::broadcast::error::RecvError;

/// A bridge event, serialized exactly as [`BridgeEvent`]: `{kind, ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct BrowserBridgeEvent(pub BridgeEvent);

/// The app's bridge, or why it did not start (the app works without it).
pub struct BrowserBridge {
    server: Result<Arc<BridgeServer>, String>,
}

impl BrowserBridge {
    /// Starts the bridge for `runtime` and forwards its events to the webview.
    pub async fn start<R: Runtime>(
        app: AppHandle<R>,
        runtime: &suzent_runtime::Runtime,
    ) -> BrowserBridge {
        let server = match BridgeServer::start(runtime, BridgeOptions::default()).await {
            Ok(server) => Arc::new(server),
            Err(e) => {
                tracing::warn!("the browser bridge did not start: {e}");
                return BrowserBridge {
                    server: Err(e.to_string()),
                };
            }
        };
        let mut events = server.subscribe();
        tauri::async_runtime::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(event) => {
                        if let Some(window) = app.get_webview_window("main")
                            && matches!(event, BridgeEvent::PairingRequested { .. })
                        {
                            // The user clicked Connect in the browser: bring the dialog up.
                            let _ = window.unminimize();
                            let _ = window.show();
                            let _ = window.set_focus();
                        }
                        if let Err(e) = BrowserBridgeEvent(event).emit(&app) {
                            tracing::warn!("cannot emit a bridge event: {e}");
                        }
                    }
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => break,
                }
            }
        });
        BrowserBridge { server: Ok(server) }
    }

    /// A bridge that could not start.
    pub fn failed(message: impl Into<String>) -> BrowserBridge {
        BrowserBridge {
            server: Err(message.into()),
        }
    }

    fn server(&self) -> Result<Arc<BridgeServer>, AppError> {
        self.server.clone().map_err(|message| {
            AppError::new(
                AppErrorKind::Io,
                format!("the browser bridge is not running: {message}"),
            )
        })
    }

    /// The running server, if any (for the runtime hook).
    pub fn running(&self) -> Option<Arc<BridgeServer>> {
        self.server.clone().ok()
    }
}

fn pairing_error(e: PairingError) -> AppError {
    let kind = match &e {
        PairingError::UnknownRequest(_) => AppErrorKind::StaleApproval,
        PairingError::Disconnected(_) | PairingError::Busy(_) => AppErrorKind::InvalidInput,
        PairingError::Store(suzent_store::StoreError::NotFound { .. }) => AppErrorKind::NotFound,
        PairingError::Store(_) => AppErrorKind::Storage,
    };
    AppError::new(kind, e.to_string())
}

fn package_error(e: PackageError) -> AppError {
    AppError::new(AppErrorKind::Io, e.to_string())
}

/// Settings → Browser: not installed / paired / connected, each pairing (browser, version, last
/// seen), waiting pairing requests, the bundled extension's version.
#[tauri::command]
#[specta::specta]
pub async fn browser_status(bridge: State<'_, BrowserBridge>) -> Result<BrowserStatus, AppError> {
    bridge.server()?.status().await.map_err(pairing_error)
}

/// The user approved a pairing request in the dialog (after comparing the code).
#[tauri::command]
#[specta::specta]
pub async fn approve_browser_pairing(
    bridge: State<'_, BrowserBridge>,
    request_id: String,
) -> Result<BrowserPairing, AppError> {
    bridge
        .server()?
        .approve(&request_id)
        .await
        .map_err(pairing_error)
}

/// The user declined a pairing request.
#[tauri::command]
#[specta::specta]
pub async fn reject_browser_pairing(
    bridge: State<'_, BrowserBridge>,
    request_id: String,
) -> Result<(), AppError> {
    bridge
        .server()?
        .reject(&request_id)
        .await
        .map_err(pairing_error)
}

/// Revokes a pairing: its connection closes now and its credential never works again.
#[tauri::command]
#[specta::specta]
pub async fn revoke_browser_pairing(
    bridge: State<'_, BrowserBridge>,
    pairing_id: String,
) -> Result<bool, AppError> {
    bridge
        .server()?
        .revoke(&pairing_id)
        .await
        .map_err(pairing_error)
}

/// "Download the extension (.zip)": the native save dialog, then the bundled ZIP written there.
/// `None` when the user cancelled.
#[tauri::command]
#[specta::specta]
pub async fn save_browser_extension_zip<R: Runtime>(
    app: AppHandle<R>,
) -> Result<Option<String>, AppError> {
    let version = suzent_server::extension_version().map_err(package_error)?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title("Save the Suzent browser extension")
        .set_file_name(format!("suzent-browser-extension-{version}.zip"))
        .add_filter("ZIP archive", &["zip"])
        .save_file(move |picked| {
            let _ = tx.send(picked);
        });
    let picked = rx
        .await
        .map_err(|_| AppError::new(AppErrorKind::Dialog, "the save dialog closed abnormally"))?;
    let Some(picked) = picked else {
        return Ok(None);
    };
    let path = picked
        .into_path()
        .map_err(|e| AppError::new(AppErrorKind::Dialog, format!("not a local file: {e}")))?;
    suzent_server::save_zip(&path).map_err(package_error)?;
    Ok(Some(path.display().to_string()))
}

/// "Show the folder": unpacks the bundled extension (once per version) for "Load unpacked",
/// opens the folder in the file manager, and returns it (the page shows it too, in case no
/// file manager answers).
#[tauri::command]
#[specta::specta]
pub async fn show_browser_extension_folder(
    state: State<'_, crate::AppState>,
) -> Result<String, AppError> {
    let runtime = state.runtime()?;
    let folder =
        suzent_server::unpacked_extension(&runtime.paths().data_dir).map_err(package_error)?;
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    match std::process::Command::new(opener)
        .arg(&folder)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        // Reaped off the command's thread; the file manager outlives it.
        Ok(mut child) => drop(std::thread::spawn(move || child.wait())),
        Err(e) => tracing::warn!("cannot open {} with {opener}: {e}", folder.display()),
    }
    Ok(folder.display().to_string())
}
