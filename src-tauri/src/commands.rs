//! The typed commands of the desktop contract. Each maps one call onto `suzent_runtime::Runtime`
//! and returns `Result<T, AppError>`; none holds agent logic or a lock across an await.

use crate::dto::{CreateChatArgs, RunSummary};
use crate::error::{AppError, AppErrorKind};
use crate::state::AppState;
use std::path::PathBuf;
use suzent_core::{ApprovalResponse, BackgroundTask, PermissionMode, Rule, RuleDraft};
use suzent_runtime::{
    AuditEntry, AuditFilter, ChatRecord, CreateChat, PendingApproval, RunOptions, Settings,
    SettingsPatch, StoredMessage,
};
use suzent_tools::Capability;
use tauri::{AppHandle, Runtime, State};
use tauri_plugin_dialog::DialogExt;

/// Every chat, most recently updated first.
#[tauri::command]
#[specta::specta]
pub async fn list_chats(state: State<'_, AppState>) -> Result<Vec<ChatRecord>, AppError> {
    Ok(state.runtime()?.list_chats().await?)
}

/// Creates a chat; missing fields come from the settings.
#[tauri::command]
#[specta::specta]
pub async fn create_chat(
    state: State<'_, AppState>,
    args: CreateChatArgs,
) -> Result<ChatRecord, AppError> {
    let create = CreateChat {
        title: args.title.filter(|t| !t.trim().is_empty()),
        workspace: args.workspace.filter(|w| !w.is_empty()).map(PathBuf::from),
        model: args.model.filter(|m| !m.is_empty()),
        mode: args.mode,
        tools: None,
    };
    Ok(state.runtime()?.create_chat(create).await?)
}

/// Renames a chat.
#[tauri::command]
#[specta::specta]
pub async fn rename_chat(
    state: State<'_, AppState>,
    chat_id: String,
    title: String,
) -> Result<ChatRecord, AppError> {
    Ok(state.runtime()?.rename_chat(&chat_id, &title).await?)
}

/// Deletes a chat with its transcript, approvals and session rules.
#[tauri::command]
#[specta::specta]
pub async fn delete_chat(state: State<'_, AppState>, chat_id: String) -> Result<(), AppError> {
    Ok(state.runtime()?.delete_chat(&chat_id).await?)
}

/// A chat's stored transcript.
#[tauri::command]
#[specta::specta]
pub async fn get_messages(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<Vec<StoredMessage>, AppError> {
    Ok(state.runtime()?.messages(&chat_id).await?)
}

/// Sends a user message; resolves when the run ends (streaming arrives as `RuntimeEvent`s).
/// Calls that need approval suspend the run.
#[tauri::command]
#[specta::specta]
pub async fn send_message(
    state: State<'_, AppState>,
    chat_id: String,
    text: String,
) -> Result<RunSummary, AppError> {
    let runtime = state.runtime()?;
    let summary = runtime
        .send_message(&chat_id, &text, RunOptions::default())
        .await?;
    Ok(summary.into())
}

/// Answers pending approvals and continues the suspended run.
#[tauri::command]
#[specta::specta]
pub async fn resume_approvals(
    state: State<'_, AppState>,
    chat_id: String,
    answers: Vec<ApprovalResponse>,
) -> Result<RunSummary, AppError> {
    let runtime = state.runtime()?;
    let summary = runtime
        .resume_approvals(&chat_id, answers, RunOptions::default())
        .await?;
    Ok(summary.into())
}

/// Pending approvals of one chat, or of every chat with `null`.
#[tauri::command]
#[specta::specta]
pub async fn pending_approvals(
    state: State<'_, AppState>,
    chat_id: Option<String>,
) -> Result<Vec<PendingApproval>, AppError> {
    Ok(state
        .runtime()?
        .pending_approvals(chat_id.as_deref())
        .await?)
}

/// Stops the chat's running turn.
#[tauri::command]
#[specta::specta]
pub async fn cancel_run(state: State<'_, AppState>, chat_id: String) -> Result<(), AppError> {
    state.runtime()?.cancel(&chat_id);
    Ok(())
}

/// Sets a chat's permission mode.
#[tauri::command]
#[specta::specta]
pub async fn set_chat_mode(
    state: State<'_, AppState>,
    chat_id: String,
    mode: PermissionMode,
) -> Result<ChatRecord, AppError> {
    Ok(state.runtime()?.set_mode(&chat_id, mode).await?)
}

/// Sets a chat's tool selection; `null` goes back to the settings' selection.
#[tauri::command]
#[specta::specta]
pub async fn set_chat_tools(
    state: State<'_, AppState>,
    chat_id: String,
    tools: Option<Vec<String>>,
) -> Result<ChatRecord, AppError> {
    Ok(state.runtime()?.set_tools(&chat_id, tools).await?)
}

/// The capability catalog ConfigView shows.
#[tauri::command]
#[specta::specta]
pub async fn get_catalog(state: State<'_, AppState>) -> Result<Vec<Capability>, AppError> {
    Ok(state.runtime()?.registry().catalog())
}

/// The settings (`config.toml`) and which providers have a key.
#[tauri::command]
#[specta::specta]
pub async fn get_settings(state: State<'_, AppState>) -> Result<Settings, AppError> {
    Ok(state.runtime()?.settings())
}

/// Validates and saves a settings patch; nothing is written when a value is invalid.
#[tauri::command]
#[specta::specta]
pub async fn save_settings(
    state: State<'_, AppState>,
    patch: SettingsPatch,
) -> Result<Settings, AppError> {
    let runtime = state.runtime()?;
    tauri::async_runtime::spawn_blocking(move || runtime.save_settings(patch))
        .await
        .map_err(|e| AppError::new(AppErrorKind::Io, format!("saving settings failed: {e}")))?
        .map_err(AppError::from)
}

/// Stores a provider's API key in the OS keychain (never in a file).
#[tauri::command]
#[specta::specta]
pub async fn set_api_key(
    state: State<'_, AppState>,
    provider: String,
    key: String,
) -> Result<(), AppError> {
    state.runtime()?;
    tauri::async_runtime::spawn_blocking(move || {
        suzent_runtime::provider::set_api_key(&provider, &key)
    })
    .await
    .map_err(|e| AppError::new(AppErrorKind::Provider, format!("keychain task failed: {e}")))?
    .map_err(AppError::from)
}

/// Removes a provider's API key from the OS keychain (no error when there was none).
#[tauri::command]
#[specta::specta]
pub async fn delete_api_key(state: State<'_, AppState>, provider: String) -> Result<(), AppError> {
    state.runtime()?;
    tauri::async_runtime::spawn_blocking(move || {
        suzent_runtime::provider::delete_api_key(&provider)
    })
    .await
    .map_err(|e| AppError::new(AppErrorKind::Provider, format!("keychain task failed: {e}")))?
    .map(|_existed| ())
    .map_err(AppError::from)
}

/// Global rules plus the chat's session rules (every rule with `null`).
#[tauri::command]
#[specta::specta]
pub async fn list_rules(
    state: State<'_, AppState>,
    chat_id: Option<String>,
) -> Result<Vec<Rule>, AppError> {
    Ok(state.runtime()?.list_rules(chat_id.as_deref()).await?)
}

/// Adds a rule; a session rule needs a chat.
#[tauri::command]
#[specta::specta]
pub async fn add_rule(
    state: State<'_, AppState>,
    draft: RuleDraft,
    chat_id: Option<String>,
) -> Result<Rule, AppError> {
    Ok(state.runtime()?.add_rule(draft, chat_id.as_deref()).await?)
}

/// Deletes a rule.
#[tauri::command]
#[specta::specta]
pub async fn delete_rule(state: State<'_, AppState>, rule_id: String) -> Result<(), AppError> {
    Ok(state.runtime()?.delete_rule(&rule_id).await?)
}

/// The permission audit log, newest first.
#[tauri::command]
#[specta::specta]
pub async fn read_audit_log(
    state: State<'_, AppState>,
    filter: AuditFilter,
) -> Result<Vec<AuditEntry>, AppError> {
    let read = state.runtime()?.read_audit_log(filter).await?;
    if read.skipped > 0 {
        tracing::warn!(
            skipped = read.skipped,
            "audit log lines that could not be read were skipped"
        );
    }
    Ok(read.entries)
}

/// Asks the user for a workspace folder with the system dialog; `null` when cancelled.
#[tauri::command]
#[specta::specta]
pub async fn pick_workspace<R: Runtime>(app: AppHandle<R>) -> Result<Option<String>, AppError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title("Choose the workspace folder")
        .pick_folder(move |picked| {
            let _ = tx.send(picked);
        });
    let picked = rx
        .await
        .map_err(|_| AppError::new(AppErrorKind::Dialog, "the folder dialog closed abnormally"))?;
    match picked {
        None => Ok(None),
        Some(path) => path
            .into_path()
            .map(|p| Some(p.display().to_string()))
            .map_err(|e| AppError::new(AppErrorKind::Dialog, format!("not a local folder: {e}"))),
    }
}

/// Background commands and sub-agents of every chat (running and recent), oldest first. Live
/// changes arrive as `background_task_update` events.
#[tauri::command]
#[specta::specta]
pub async fn background_tasks(state: State<'_, AppState>) -> Result<Vec<BackgroundTask>, AppError> {
    Ok(state.runtime()?.background_tasks())
}

/// Stops a background command (with its process tree) or a sub-agent; returns its final state.
#[tauri::command]
#[specta::specta]
pub async fn stop_background_task(
    state: State<'_, AppState>,
    task_id: String,
) -> Result<BackgroundTask, AppError> {
    Ok(state.runtime()?.stop_background_task(&task_id).await?)
}
