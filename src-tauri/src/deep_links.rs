//! `suzent://` links reaching the app: from its own argv at start, or handed over by a second
//! launch (single-instance plugin → deep-link plugin). Each goes into the
//! [`DeepLinkInbox`](suzent_runtime::deep_link::DeepLinkInbox), the main window is focused and
//! told; the window reads the inbox and shows the chat, the install dialog or the refusal. An MCP
//! server is added only by [`confirm_mcp_install`], the dialog's Confirm.

use crate::error::{AppError, AppErrorKind};
use crate::state::AppState;
use serde::{Deserialize, Serialize};
use suzent_runtime::McpServerInfo;
use suzent_runtime::deep_link::{DeepLinkInbox, DeepLinkInboxView, DeepLinkNotice, Received};
use tauri::{AppHandle, Manager, State};
use tauri_plugin_deep_link::DeepLinkExt;
use tauri_specta::Event;

/// Sent to the window when a link arrived or an install was answered: read
/// [`deep_link_inbox`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
#[serde(rename_all = "camelCase")]
pub struct DeepLinkReceived {
    /// MCP installs waiting for an answer.
    pub pending: u32,
}

/// Takes every link in, focuses the main window and tells it.
pub fn receive_links<R: tauri::Runtime>(app: &AppHandle<R>, links: &[String]) {
    let inbox = app.state::<DeepLinkInbox>();
    for link in links {
        // The link itself may carry a server's environment (tokens): only its kind is logged.
        match inbox.receive(link) {
            Received::Pending(p) => {
                tracing::info!(
                    "deep link: MCP install of '{}' waits for the user",
                    p.server.name
                )
            }
            Received::Notice(DeepLinkNotice::OpenChat { .. }) => {
                tracing::info!("deep link: open a chat")
            }
            Received::Notice(DeepLinkNotice::Refused { message, .. }) => {
                tracing::warn!("deep link refused: {message}")
            }
        }
    }
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
    announce(app);
}

fn announce<R: tauri::Runtime>(app: &AppHandle<R>) {
    let pending = app.state::<DeepLinkInbox>().pending_count();
    if let Err(e) = (DeepLinkReceived { pending }).emit(app) {
        tracing::warn!("cannot tell the window about a deep link: {e}");
    }
}

/// Listens for links handed over while running, and takes the link the app was started with.
pub fn start<R: tauri::Runtime>(app: &AppHandle<R>) {
    // An AppImage has no installed desktop entry: register the scheme for this user.
    if std::env::var_os("APPIMAGE").is_some()
        && let Err(e) = app.deep_link().register_all()
    {
        tracing::warn!("cannot register the suzent:// scheme: {e}");
    }
    let handle = app.clone();
    app.deep_link().on_open_url(move |event| {
        let links: Vec<String> = event.urls().iter().map(|u| u.to_string()).collect();
        receive_links(&handle, &links);
    });
    match app.deep_link().get_current() {
        Ok(Some(urls)) => {
            let links: Vec<String> = urls.iter().map(|u| u.to_string()).collect();
            receive_links(app, &links);
        }
        Ok(None) => {}
        Err(e) => tracing::warn!("cannot read the link the app was started with: {e}"),
    }
}

/// The MCP installs waiting for an answer, and the chats to open and refusals since the last
/// call (handed over once).
#[tauri::command]
#[specta::specta]
pub fn deep_link_inbox(inbox: State<'_, DeepLinkInbox>) -> Result<DeepLinkInboxView, AppError> {
    Ok(inbox.take())
}

/// The dialog's Confirm: adds the server of install `id` to `mcp.json`, untrusted (nothing was
/// started before; the server starts when a chat first uses its tools). An error (a server of
/// that name exists) leaves the request waiting, so the user can cancel it.
#[tauri::command]
#[specta::specta]
pub async fn confirm_mcp_install<R: tauri::Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    id: String,
) -> Result<McpServerInfo, AppError> {
    let inbox = app.state::<DeepLinkInbox>();
    let pending = inbox.pending(&id).ok_or_else(|| {
        AppError::new(
            AppErrorKind::NotFound,
            format!("no MCP install waits with id {id}"),
        )
    })?;
    let runtime = state.runtime()?;
    let name = pending.server.name.clone();
    let config = pending.server.config();
    let added = tauri::async_runtime::spawn_blocking(move || runtime.add_mcp_server(&name, config))
        .await
        .map_err(|e| AppError::new(AppErrorKind::Io, format!("saving mcp.json failed: {e}")))?
        .map_err(AppError::from)?;
    inbox.remove(&id);
    tracing::info!("deep link: the user added the MCP server '{}'", added.name);
    announce(&app);
    Ok(added)
}

/// The dialog's Cancel: drops install `id`; nothing is added.
#[tauri::command]
#[specta::specta]
pub fn cancel_mcp_install<R: tauri::Runtime>(
    app: AppHandle<R>,
    id: String,
) -> Result<(), AppError> {
    app.state::<DeepLinkInbox>().remove(&id).ok_or_else(|| {
        AppError::new(
            AppErrorKind::NotFound,
            format!("no MCP install waits with id {id}"),
        )
    })?;
    announce(&app);
    Ok(())
}
