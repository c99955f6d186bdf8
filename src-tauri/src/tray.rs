//! The tray icon and running in the background: the number of approvals waiting, Open, Pause all
//! schedules, Quit; closing the window hides it instead of quitting while schedules, background
//! commands or paired devices need the app (when "Keep running in the tray" is on), with a
//! notice the first time; Start at login through `tauri-plugin-autostart`.
//!
//! The counts come from the runtime (recomputed on the events that change them and every 30 s);
//! [`tray_status`] reads them, which is how the desktop e2e test sees the tray.

use crate::error::{AppError, AppErrorKind};
use crate::state::AppState;
use crate::updates::Updates;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::time::Duration;
use suzent_core::{AgentEvent, BackgroundTaskStatus};
use suzent_runtime::Runtime;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, State};
use tauri_plugin_autostart::ManagerExt;
use tauri_plugin_notification::NotificationExt;

/// Id of the tray icon.
pub const TRAY_ID: &str = "main";
/// How often the counts are refreshed without an event.
const REFRESH: Duration = Duration::from_secs(30);

/// What the tray shows and what keeps the app running in the background.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TrayStatus {
    /// Whether the tray icon could be created (a desktop without a tray has none).
    pub available: bool,
    /// Tool calls waiting for an approval, in all chats.
    pub pending_approvals: u32,
    /// Enabled scheduled jobs.
    pub enabled_schedules: u32,
    /// Background commands still running.
    pub running_commands: u32,
    /// Paired devices (not revoked).
    pub paired_devices: u32,
    /// The tray's label ("Suzent: 2 approvals waiting").
    pub label: String,
}

impl TrayStatus {
    /// Whether schedules, background commands or paired devices need the app running.
    pub fn needed_in_background(&self) -> bool {
        self.enabled_schedules + self.running_commands + self.paired_devices > 0
    }
}

/// The tray's managed state.
pub struct Tray<R: tauri::Runtime> {
    status: Mutex<TrayStatus>,
    count_item: Mutex<Option<MenuItem<R>>>,
}

impl<R: tauri::Runtime> Default for Tray<R> {
    fn default() -> Self {
        Tray {
            status: Mutex::new(TrayStatus::default()),
            count_item: Mutex::new(None),
        }
    }
}

impl<R: tauri::Runtime> Tray<R> {
    /// The current status.
    pub fn status(&self) -> TrayStatus {
        self.status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

fn label(pending: u32) -> String {
    match pending {
        0 => "Suzent".to_string(),
        1 => "Suzent: 1 approval waiting".to_string(),
        n => format!("Suzent: {n} approvals waiting"),
    }
}

fn count_text(pending: u32) -> String {
    match pending {
        0 => "No approvals waiting".to_string(),
        1 => "1 approval waiting".to_string(),
        n => format!("{n} approvals waiting"),
    }
}

/// Shows and focuses the main window.
pub fn show_main<R: tauri::Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
}

/// Creates the tray icon (when the desktop has a tray) and starts keeping its counts.
pub fn start<R: tauri::Runtime>(app: &AppHandle<R>, runtime: Option<Runtime>) {
    let tray = app.state::<Tray<R>>();
    match build_icon(app) {
        Ok(item) => {
            *tray.count_item.lock().unwrap_or_else(|p| p.into_inner()) = Some(item);
            tray.status
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .available = true;
        }
        Err(e) => tracing::warn!("no tray icon: {e}"),
    }
    let Some(runtime) = runtime else { return };
    let app = app.clone();
    let mut events = runtime.subscribe();
    tauri::async_runtime::spawn(async move {
        refresh(&app, &runtime).await;
        loop {
            let changed = tokio::time::timeout(REFRESH, async {
                loop {
                    match events.recv().await {
                        Ok(
                            AgentEvent::ToolApprovalRequest { .. }
                            | AgentEvent::ToolPermissionResolution { .. }
                            | AgentEvent::RunFinished { .. }
                            | AgentEvent::RunError { .. }
                            | AgentEvent::BackgroundTaskUpdate { .. }
                            | AgentEvent::ScheduledRunUpdated { .. },
                        ) => return true,
                        Ok(_) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return true,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return false,
                    }
                }
            })
            .await;
            if changed == Ok(false) {
                break;
            }
            refresh(&app, &runtime).await;
        }
    });
}

fn build_icon<R: tauri::Runtime>(app: &AppHandle<R>) -> tauri::Result<MenuItem<R>> {
    let count = MenuItem::with_id(app, "approvals", count_text(0), false, None::<&str>)?;
    let open = MenuItem::with_id(app, "open", "Open Suzent", true, None::<&str>)?;
    let pause = MenuItem::with_id(app, "pause-all", "Pause all schedules", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Suzent", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &count,
            &PredefinedMenuItem::separator(app)?,
            &open,
            &pause,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    let mut builder = TrayIconBuilder::with_id(TRAY_ID)
        .menu(&menu)
        .tooltip("Suzent")
        .on_menu_event(|app, event| match event.id().0.as_str() {
            "open" => show_main(app),
            "pause-all" => {
                let app = app.clone();
                tauri::async_runtime::spawn(async move {
                    let Ok(runtime) = app.state::<AppState>().runtime() else {
                        return;
                    };
                    match runtime.schedules().pause_all().await {
                        Ok(n) => tracing::info!("tray: paused {n} scheduled jobs"),
                        Err(e) => tracing::warn!("tray: cannot pause the schedules: {e}"),
                    }
                    refresh(&app, &runtime).await;
                });
            }
            "quit" => app.exit(0),
            _ => {}
        });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    builder.build(app)?;
    Ok(count)
}

/// Recomputes the counts and updates the icon.
async fn refresh<R: tauri::Runtime>(app: &AppHandle<R>, runtime: &Runtime) {
    let pending = match runtime.pending_approvals(None).await {
        Ok(p) => p.len(),
        Err(e) => {
            tracing::warn!("tray: cannot count the approvals: {e}");
            return;
        }
    };
    let schedules = runtime.schedules().enabled_count().await.unwrap_or(0);
    let commands = runtime
        .background_tasks()
        .iter()
        .filter(|t| t.status == BackgroundTaskStatus::Running)
        .count();
    let devices = runtime
        .devices()
        .list()
        .await
        .map(|d| {
            d.iter()
                .filter(|v| v.device.state == suzent_runtime::DeviceState::Active)
                .count()
        })
        .unwrap_or(0);
    let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let tray = app.state::<Tray<R>>();
    let status = {
        let mut status = tray.status.lock().unwrap_or_else(|p| p.into_inner());
        status.pending_approvals = to_u32(pending);
        status.enabled_schedules = to_u32(schedules);
        status.running_commands = to_u32(commands);
        status.paired_devices = to_u32(devices);
        status.label = label(status.pending_approvals);
        status.clone()
    };
    if let Some(item) = tray
        .count_item
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
    {
        let _ = item.set_text(count_text(status.pending_approvals));
    }
    if let Some(icon) = app.tray_by_id(TRAY_ID) {
        let _ = icon.set_tooltip(Some(&status.label));
        // The label beside the icon (Linux app indicators; the menu bar on macOS).
        let title = (status.pending_approvals > 0).then(|| status.pending_approvals.to_string());
        let _ = icon.set_title(title.as_deref());
    }
}

/// What closing the main window does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OnClose {
    /// The window closes (and the app quits with its last window).
    Close,
    /// The window hides and the app keeps running in the tray; `notice` is the body of the
    /// first-time notification, when it has not been shown yet.
    Hide { notice: Option<String> },
}

/// Decides what closing the main window does: hide it while schedules, background commands or
/// paired devices need the app, the desktop has a tray and "Keep running in the tray" is on;
/// the first time, with a notice saying why and how to quit.
pub(crate) fn on_close(
    status: &TrayStatus,
    keep_running_in_tray: bool,
    notice_shown: bool,
) -> OnClose {
    if !status.available || !status.needed_in_background() || !keep_running_in_tray {
        return OnClose::Close;
    }
    let notice = (!notice_shown).then(|| {
        let count = |n: u32, one: &str, many: &str| {
            (n > 0).then(|| format!("{n} {}", if n == 1 { one } else { many }))
        };
        let why: Vec<String> = [
            count(status.enabled_schedules, "scheduled job", "scheduled jobs"),
            count(
                status.running_commands,
                "background command",
                "background commands",
            ),
            count(status.paired_devices, "paired device", "paired devices"),
        ]
        .into_iter()
        .flatten()
        .collect();
        format!(
            "For {}. Quit from the tray menu; turn this off in Settings → Desktop.",
            why.join(", ")
        )
    });
    OnClose::Hide { notice }
}

/// The main window asks to close: hide it instead while the app is needed in the background
/// and "Keep running in the tray" is on ([`on_close`]). Returns whether the close was turned
/// into a hide.
pub fn keep_running_on_close<R: tauri::Runtime>(app: &AppHandle<R>) -> bool {
    let status = app.state::<Tray<R>>().status();
    let updates = app.state::<Updates>();
    let Ok(mut prefs) = updates.prefs().load() else {
        return false;
    };
    let OnClose::Hide { notice } =
        on_close(&status, prefs.keep_running_in_tray, prefs.tray_notice_shown)
    else {
        return false;
    };
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.hide();
    }
    if let Some(body) = notice {
        let shown = app
            .notification()
            .builder()
            .title("Suzent keeps running in the tray")
            .body(body)
            .show();
        if let Err(e) = shown {
            tracing::warn!("cannot show the tray notice: {e}");
        }
        prefs.tray_notice_shown = true;
        if let Err(e) = updates.prefs().save(&prefs) {
            tracing::warn!("cannot save the desktop preferences: {e}");
        }
    }
    true
}

/// What the tray shows and what keeps the app in the background.
#[tauri::command]
#[specta::specta]
pub fn tray_status(tray: State<'_, Tray<tauri::Wry>>) -> Result<TrayStatus, AppError> {
    Ok(tray.status())
}

/// Whether Suzent starts at login.
#[tauri::command]
#[specta::specta]
pub fn autostart_enabled<R: tauri::Runtime>(app: AppHandle<R>) -> Result<bool, AppError> {
    app.autolaunch()
        .is_enabled()
        .map_err(|e| AppError::new(AppErrorKind::Io, format!("cannot read Start at login: {e}")))
}

/// Turns Start at login on (an XDG autostart entry on Linux, a login item on macOS, the Run key
/// on Windows) or off.
#[tauri::command]
#[specta::specta]
pub fn set_autostart<R: tauri::Runtime>(
    app: AppHandle<R>,
    enabled: bool,
) -> Result<bool, AppError> {
    let launcher = app.autolaunch();
    let result = if enabled {
        launcher.enable()
    } else {
        launcher.disable()
    };
    result.map_err(|e| {
        AppError::new(
            AppErrorKind::Io,
            format!(
                "cannot turn Start at login {}: {e}",
                if enabled { "on" } else { "off" }
            ),
        )
    })?;
    launcher
        .is_enabled()
        .map_err(|e| AppError::new(AppErrorKind::Io, format!("cannot read Start at login: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn status(schedules: u32, commands: u32, devices: u32) -> TrayStatus {
        TrayStatus {
            available: true,
            enabled_schedules: schedules,
            running_commands: commands,
            paired_devices: devices,
            ..TrayStatus::default()
        }
    }

    #[test]
    fn closing_quits_when_nothing_needs_the_app_in_the_background() {
        assert_eq!(on_close(&status(0, 0, 0), true, false), OnClose::Close);
    }

    #[test]
    fn closing_quits_when_keep_running_is_off_or_there_is_no_tray() {
        assert_eq!(on_close(&status(2, 0, 0), false, false), OnClose::Close);
        let no_tray = TrayStatus {
            available: false,
            ..status(2, 1, 1)
        };
        assert_eq!(on_close(&no_tray, true, false), OnClose::Close);
    }

    #[test]
    fn the_first_hide_says_why_and_how_to_quit_and_later_ones_say_nothing() {
        assert_eq!(
            on_close(&status(1, 0, 2), true, false),
            OnClose::Hide {
                notice: Some(
                    "For 1 scheduled job, 2 paired devices. Quit from the tray menu; turn this off in Settings → Desktop."
                        .into()
                )
            }
        );
        assert_eq!(
            on_close(&status(3, 1, 0), true, false),
            OnClose::Hide {
                notice: Some(
                    "For 3 scheduled jobs, 1 background command. Quit from the tray menu; turn this off in Settings → Desktop."
                        .into()
                )
            }
        );
        assert_eq!(
            on_close(&status(1, 0, 0), true, true),
            OnClose::Hide { notice: None }
        );
    }
}
