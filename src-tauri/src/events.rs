//! The typed event: every runtime event goes to the webview as one `RuntimeEvent`.

use serde::{Deserialize, Serialize};
use suzent_core::AgentEvent;
use suzent_runtime::Runtime;
use tauri::{AppHandle, Manager};
use tauri_plugin_notification::NotificationExt;
use tauri_specta::Event;
use tokio::sync::broadcast::error::RecvError;

/// A runtime event, serialized exactly as [`AgentEvent`]: `{name, value}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct RuntimeEvent(pub AgentEvent);

/// Forwards `runtime.subscribe()` to the webview until the runtime closes. A subscriber that lags
/// loses the oldest events; the UI re-reads the transcript on `run_finished`, which is stored
/// before any event is sent.
pub fn forward_events<R: tauri::Runtime>(app: AppHandle<R>, runtime: &Runtime) {
    let mut rx = runtime.subscribe();
    tauri::async_runtime::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(event) => {
                    notify_if_unattended(&app, &event);
                    if let Err(e) = RuntimeEvent(event).emit(&app) {
                        tracing::warn!("cannot emit a runtime event: {e}");
                    }
                }
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!("the webview fell {n} runtime events behind");
                }
                Err(RecvError::Closed) => break,
            }
        }
    });
}

/// Shows a system notification for an approval request when nobody is looking at the window
/// (hidden, minimized or unfocused), and for every scheduled run of a notifying job that ends.
fn notify_if_unattended<R: tauri::Runtime>(app: &AppHandle<R>, event: &AgentEvent) {
    if let AgentEvent::ScheduledRunUpdated {
        job_name,
        status,
        notify: true,
        detail,
        ..
    } = event
    {
        let shown = app
            .notification()
            .builder()
            .title(format!(
                "Scheduled run {}: {job_name}",
                status.as_str().replace('_', " ")
            ))
            .body(detail.clone().unwrap_or_default())
            .show();
        if let Err(e) = shown {
            tracing::warn!("cannot show the scheduled run notification: {e}");
        }
        return;
    }
    let AgentEvent::ToolApprovalRequest {
        tool_name,
        decision,
        ..
    } = event
    else {
        return;
    };
    let attended = app.get_webview_window("main").is_some_and(|w| {
        w.is_visible().unwrap_or(false)
            && w.is_focused().unwrap_or(false)
            && !w.is_minimized().unwrap_or(true)
    });
    if attended {
        return;
    }
    let shown = app
        .notification()
        .builder()
        .title("Suzent is waiting for your approval")
        .body(format!("{tool_name}: {}", decision.reason))
        .show();
    if let Err(e) = shown {
        tracing::warn!("cannot show the approval notification: {e}");
    }
}
