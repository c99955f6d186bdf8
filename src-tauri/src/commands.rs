//! The typed commands of the desktop contract. Each maps one call onto `suzent_runtime::Runtime`
//! and returns `Result<T, AppError>`; none holds agent logic or a lock across an await.

use crate::dto::{
    CreateChatArgs, LocalModelsView, MemoryBlock, ModelDownload, RecommendedLocalModel, RunSummary,
};
use crate::error::{AppError, AppErrorKind};
use crate::events::LocalModelProgress;
use crate::state::AppState;
use std::path::{Path, PathBuf};
use suzent_core::{
    ApprovalResponse, Attachment, BackgroundTask, BrowserMode, CompactionInfo, PermissionMode,
    Rule, RuleDraft,
};
use suzent_runtime::{
    AuditEntry, AuditFilter, ChatBrowserMode, ChatRecord, CreateChat, EmbeddingStatus,
    MemorySearchResult, PendingApproval, Plan, RunOptions, Settings, SettingsPatch, Skill,
    StoredMessage,
};
use suzent_runtime::{McpImport, McpServerConfig, McpServerInfo, McpTestResult, McpToolInfo};
use suzent_tools::Capability;
use tauri::{AppHandle, Runtime, State};
use tauri_plugin_dialog::DialogExt;

/// Every chat, most recently updated first.
#[tauri::command]
#[specta::specta]
pub async fn list_chats(state: State<'_, AppState>) -> Result<Vec<ChatRecord>, AppError> {
    Ok(state.runtime()?.list_chats().await?)
}

/// Chats whose title or messages contain every word of `query` (case-insensitive), best first,
/// at most `limit` (1-100), each with its best match; matched terms in the snippet are wrapped in
/// U+0002 … U+0003.
#[tauri::command]
#[specta::specta]
pub async fn search_chats(
    state: State<'_, AppState>,
    query: String,
    limit: u32,
) -> Result<Vec<suzent_runtime::ChatSearchHit>, AppError> {
    Ok(state
        .runtime()?
        .search_chats(&query, limit as usize)
        .await?)
}

/// What the app shows beside a chat's transcript and keeps across restarts: each tool call's
/// permission decision, the user's answer and the tool's wall time, and the runs that stopped
/// short of an answer.
#[tauri::command]
#[specta::specta]
pub async fn chat_notes(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<suzent_runtime::ChatNotes, AppError> {
    Ok(state.runtime()?.chat_notes(&chat_id).await?)
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

/// Sends a user message with the files attached to it (each from `add_attachment`; may be
/// empty); resolves when the run ends (streaming arrives as `RuntimeEvent`s). Calls that need
/// approval suspend the run.
#[tauri::command]
#[specta::specta]
pub async fn send_message(
    state: State<'_, AppState>,
    chat_id: String,
    text: String,
    attachments: Vec<Attachment>,
) -> Result<RunSummary, AppError> {
    let runtime = state.runtime()?;
    let summary = runtime
        .send_with_attachments(&chat_id, &text, attachments, RunOptions::default())
        .await?;
    Ok(summary)
}

/// Attaches a dropped or pasted file to the chat's next message: `data` is the file's bytes in
/// base64 (standard alphabet); the file is copied into the chat's workspace under
/// `.attachments/<chat id>/`. Errors: bad base64, an empty file or one over 25 MiB
/// (`invalid_input`), an unknown chat.
#[tauri::command]
#[specta::specta]
pub async fn add_attachment(
    state: State<'_, AppState>,
    chat_id: String,
    name: String,
    data: String,
) -> Result<Attachment, AppError> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.as_bytes())
        .map_err(|e| {
            AppError::new(
                AppErrorKind::InvalidInput,
                format!("the attachment '{name}' is not valid base64: {e}"),
            )
        })?;
    Ok(state
        .runtime()?
        .add_attachment(&chat_id, &name, &bytes)
        .await?)
}

/// Retries the chat's failed turn (issue #13 item 2): the model is asked again from the
/// transcript as it is; resolves when the run ends.
#[tauri::command]
#[specta::specta]
pub async fn retry_turn(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<RunSummary, AppError> {
    let runtime = state.runtime()?;
    Ok(runtime.retry(&chat_id, RunOptions::default()).await?)
}

/// Compacts the chat now to fit its model's context (issue #13 item 4): older tool outputs
/// cut, older turns summarized by the chat's model; the transcript is kept whole. `null` when
/// there was nothing to compact. A `chat_compacted` event is also sent.
#[tauri::command]
#[specta::specta]
pub async fn compact_chat(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<Option<CompactionInfo>, AppError> {
    let runtime = state.runtime()?;
    Ok(runtime.compact_chat(&chat_id).await?)
}

/// The chat's compactions, oldest first: where the transcript shows "conversation compacted".
#[tauri::command]
#[specta::specta]
pub async fn chat_compactions(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<Vec<CompactionInfo>, AppError> {
    let runtime = state.runtime()?;
    Ok(runtime.compactions(&chat_id).await?)
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
    Ok(summary)
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

/// The browser `browser_action` drives in a chat: the chat's own choice, `[browser] mode`, and
/// the mode in force. Errors: an unknown chat.
#[tauri::command]
#[specta::specta]
pub async fn chat_browser_mode(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<ChatBrowserMode, AppError> {
    let runtime = state.runtime()?;
    runtime.chat(&chat_id).await?;
    Ok(runtime.browser().chat_mode_choice(&chat_id).await)
}

/// Sets the browser a chat drives; `null` follows `[browser] mode` again. The chat's next
/// `browser_action` uses it. Errors: an unknown chat, or the store.
#[tauri::command]
#[specta::specta]
pub async fn set_chat_browser_mode(
    state: State<'_, AppState>,
    chat_id: String,
    mode: Option<BrowserMode>,
) -> Result<ChatBrowserMode, AppError> {
    let runtime = state.runtime()?;
    runtime.chat(&chat_id).await?;
    runtime
        .browser()
        .set_chat_mode(&chat_id, mode)
        .await
        .map_err(suzent_runtime::RuntimeError::from)?;
    Ok(runtime.browser().chat_mode_choice(&chat_id).await)
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

/// The capability catalog ConfigView shows: the built-in capabilities, then one toolset
/// (`mcp:SERVER`) per enabled MCP server with known tools.
#[tauri::command]
#[specta::specta]
pub async fn get_catalog(state: State<'_, AppState>) -> Result<Vec<Capability>, AppError> {
    Ok(state.runtime()?.tool_catalog())
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
    let stored = tauri::async_runtime::spawn_blocking({
        let provider = provider.clone();
        move || suzent_runtime::provider::set_api_key(&provider, &key)
    })
    .await
    .map_err(|e| AppError::new(AppErrorKind::Keychain, format!("keychain task failed: {e}")))?;
    match stored {
        Ok(()) => {
            // A key in the keychain replaces one kept for the session.
            state.keys().remove(&provider);
            Ok(())
        }
        Err(e) => Err(keychain_error(e)),
    }
}

/// A failure to store a key, in words: a keychain that is not there or refuses is `keychain`
/// (the UI then offers the environment's key or a session key), anything else `provider`.
fn keychain_error(e: suzent_runtime::provider::ProviderError) -> AppError {
    let text = e.to_string();
    match text.split_once("OS keychain: ") {
        Some((_, detail)) => AppError::new(
            AppErrorKind::Keychain,
            format!("the system keychain is not available here ({detail})"),
        ),
        None => AppError::from(e),
    }
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

/// The decision simulator: what the permission engine would decide for `tool` called with
/// `args` (a JSON object), in `mode` (default: the chat's, else the default mode) for `chat_id`
/// (its workspace and session rules; without one: the configured workspace and global rules),
/// with every rule that matched and why, the shell segments and the destinations. Nothing runs
/// and nothing is stored. Errors: `invalid_input` naming `tool` (unknown) or `args` (not an
/// object, or not valid for the tool); `not_found` for an unknown chat.
#[tauri::command]
#[specta::specta]
pub async fn explain_permission(
    state: State<'_, AppState>,
    tool: String,
    args: serde_json::Value,
    mode: Option<PermissionMode>,
    chat_id: Option<String>,
) -> Result<suzent_runtime::Explanation, AppError> {
    Ok(state
        .runtime()?
        .explain_permission(&tool, args, mode, chat_id.as_deref())
        .await?)
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

/// The chat's plan (`planning_update`), or `null` when it has none. Changes arrive as
/// `plan_updated` events.
#[tauri::command]
#[specta::specta]
pub async fn get_plan(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<Option<Plan>, AppError> {
    Ok(state.runtime()?.plan(&chat_id).await?)
}

/// Every core memory block of the local user, in prompt order, empty ones included.
#[tauri::command]
#[specta::specta]
pub async fn memory_blocks(state: State<'_, AppState>) -> Result<Vec<MemoryBlock>, AppError> {
    let stored = state.runtime()?.memory_blocks().await?;
    Ok(suzent_store::MEMORY_BLOCKS
        .iter()
        .map(|name| MemoryBlock {
            name: (*name).to_string(),
            content: stored
                .iter()
                .find(|(b, _)| b == name)
                .map(|(_, c)| c.clone())
                .unwrap_or_default(),
            max_chars: suzent_runtime::MAX_BLOCK_CHARS as u32,
        })
        .collect())
}

/// Replaces a core memory block's text (trimmed; empty clears it); returns the stored block.
/// Unknown blocks and text over the limit are `invalid_input` errors naming the block.
#[tauri::command]
#[specta::specta]
pub async fn set_memory_block(
    state: State<'_, AppState>,
    name: String,
    content: String,
) -> Result<MemoryBlock, AppError> {
    let stored = state.runtime()?.set_memory_block(&name, &content).await?;
    Ok(MemoryBlock {
        name,
        content: stored,
        max_chars: suzent_runtime::MAX_BLOCK_CHARS as u32,
    })
}

/// Hybrid search of archival memory (full-text BM25 fused with vector similarity): at most
/// `limit` hits (1-50), best first, and why the search was full-text only when it was.
#[tauri::command]
#[specta::specta]
pub async fn search_memory(
    state: State<'_, AppState>,
    query: String,
    limit: u32,
) -> Result<MemorySearchResult, AppError> {
    Ok(state
        .runtime()?
        .search_memory(&query, limit as usize)
        .await?)
}

/// Whether memory search finds memories by meaning (which embedding model) or why it is
/// full-text only, and how many memories still wait for a vector. Loads no model.
#[tauri::command]
#[specta::specta]
pub async fn embedding_status(state: State<'_, AppState>) -> Result<EmbeddingStatus, AppError> {
    Ok(state.runtime()?.embedding_status().await?)
}

/// Downloads the local embedding model (all-MiniLM-L6-v2, about 90 MB) into the data folder
/// (or the folder `SUZENT_EMBEDDING_MODEL` names) unless its files are already there; then
/// memories stored without a vector are embedded in the background. Returns the folder and
/// whether anything was downloaded. A failed download leaves nothing half-written and is an
/// `invalid_input` error naming the URL.
#[tauri::command]
#[specta::specta]
pub async fn download_embedding_model(
    state: State<'_, AppState>,
) -> Result<ModelDownload, AppError> {
    let (folder, downloaded) = state.runtime()?.download_embedding_model(None).await?;
    Ok(ModelDownload {
        folder: folder.display().to_string(),
        downloaded,
    })
}

/// Every skill (built-in, external and user folders; enabled or not), by name.
#[tauri::command]
#[specta::specta]
pub async fn list_skills(state: State<'_, AppState>) -> Result<Vec<Skill>, AppError> {
    Ok(state.runtime()?.skills().await?)
}

/// Enables or disables a skill by name; returns every skill as it now stands.
#[tauri::command]
#[specta::specta]
pub async fn set_skill_enabled(
    state: State<'_, AppState>,
    name: String,
    enabled: bool,
) -> Result<Vec<Skill>, AppError> {
    let runtime = state.runtime()?;
    runtime.set_skill_enabled(&name, enabled).await?;
    Ok(runtime.skills().await?)
}

/// The configured MCP servers (`mcp.json`) with their state, last error and known tools.
#[tauri::command]
#[specta::specta]
pub async fn mcp_servers(state: State<'_, AppState>) -> Result<Vec<McpServerInfo>, AppError> {
    Ok(state.runtime()?.mcp_servers())
}

/// The known MCP tools (no I/O) whose name, server or description contains `filter` (all with
/// `null`); with `loadSchemas`, enabled servers without a fresh tool list are connected first.
#[tauri::command]
#[specta::specta]
pub async fn mcp_tools(
    state: State<'_, AppState>,
    filter: Option<String>,
    load_schemas: bool,
) -> Result<Vec<McpToolInfo>, AppError> {
    Ok(state
        .runtime()?
        .mcp_tools(filter.as_deref(), load_schemas)
        .await)
}

/// Adds an MCP server to `mcp.json`; an invalid entry is an error whose `field` names the
/// configuration field at fault (`name`, `command`, `url`).
#[tauri::command]
#[specta::specta]
pub async fn add_mcp_server(
    state: State<'_, AppState>,
    name: String,
    config: McpServerConfig,
) -> Result<McpServerInfo, AppError> {
    let runtime = state.runtime()?;
    tauri::async_runtime::spawn_blocking(move || runtime.add_mcp_server(&name, config))
        .await
        .map_err(|e| AppError::new(AppErrorKind::Io, format!("saving mcp.json failed: {e}")))?
        .map_err(AppError::from)
}

/// Removes an MCP server (its connection is closed and its cached schemas dropped).
#[tauri::command]
#[specta::specta]
pub async fn remove_mcp_server(state: State<'_, AppState>, name: String) -> Result<(), AppError> {
    Ok(state.runtime()?.remove_mcp_server(&name).await?)
}

/// Enables or disables an MCP server; returns its new state.
#[tauri::command]
#[specta::specta]
pub async fn set_mcp_server_enabled(
    state: State<'_, AppState>,
    name: String,
    enabled: bool,
) -> Result<McpServerInfo, AppError> {
    let runtime = state.runtime()?;
    tauri::async_runtime::spawn_blocking(move || runtime.set_mcp_server_enabled(&name, enabled))
        .await
        .map_err(|e| AppError::new(AppErrorKind::Io, format!("saving mcp.json failed: {e}")))?
        .map_err(AppError::from)
}

/// Marks an MCP server trusted (its `readOnlyHint` tools run without asking in `default`
/// mode) or not; returns its new state.
#[tauri::command]
#[specta::specta]
pub async fn set_mcp_server_trusted(
    state: State<'_, AppState>,
    name: String,
    trusted: bool,
) -> Result<McpServerInfo, AppError> {
    let runtime = state.runtime()?;
    tauri::async_runtime::spawn_blocking(move || runtime.set_mcp_server_trusted(&name, trusted))
        .await
        .map_err(|e| AppError::new(AppErrorKind::Io, format!("saving mcp.json failed: {e}")))?
        .map_err(AppError::from)
}

/// Connects to an MCP server on a fresh connection and lists its tools (disabled servers too);
/// nothing is kept.
#[tauri::command]
#[specta::specta]
pub async fn test_mcp_server(
    state: State<'_, AppState>,
    name: String,
) -> Result<McpTestResult, AppError> {
    Ok(state.runtime()?.test_mcp_server(&name).await?)
}

/// Lists an enabled MCP server's tools on its pooled connection and caches them; returns the
/// server's tools with their status. A failure is recorded on the server (`failed`, `lastError`).
#[tauri::command]
#[specta::specta]
pub async fn refresh_mcp_server(
    state: State<'_, AppState>,
    name: String,
) -> Result<Vec<McpToolInfo>, AppError> {
    Ok(state.runtime()?.refresh_mcp_server(&name).await?)
}

/// Imports the servers of a Claude Desktop configuration file (`claude_desktop_config.json`);
/// names that already exist are skipped.
#[tauri::command]
#[specta::specta]
pub async fn import_mcp_servers(
    state: State<'_, AppState>,
    path: String,
) -> Result<McpImport, AppError> {
    let path = path.trim().to_string();
    if path.is_empty() {
        return Err(AppError::new(
            AppErrorKind::InvalidInput,
            "path: give the path of a Claude Desktop configuration file",
        )
        .with_field("path"));
    }
    let runtime = state.runtime()?;
    tauri::async_runtime::spawn_blocking(move || runtime.import_mcp_servers(Path::new(&path)))
        .await
        .map_err(|e| AppError::new(AppErrorKind::Io, format!("saving mcp.json failed: {e}")))?
        .map_err(|e| AppError::from(e).with_field("path"))
}

/// The chat's live canvas surfaces (`render_ui`), oldest first. Changes arrive as
/// `surface_updated` / `surface_deleted` events.
#[tauri::command]
#[specta::specta]
pub async fn list_surfaces(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<Vec<suzent_core::Surface>, AppError> {
    Ok(state.runtime()?.surfaces(&chat_id).await?)
}

/// Sends a button press on a surface to the agent that owns it: the bound values are kept in
/// the surface and a message showing what was sent is queued in the chat's inbox (delivered
/// in place to a running turn, or starting a turn). Returns the queued message.
#[tauri::command]
#[specta::specta]
pub async fn submit_surface_action(
    state: State<'_, AppState>,
    chat_id: String,
    action: suzent_core::SurfaceAction,
) -> Result<suzent_runtime::InboxMessage, AppError> {
    Ok(state
        .runtime()?
        .submit_surface_action(&chat_id, action)
        .await?)
}

/// Closes (deletes) a surface; its history is kept. `false` when the chat has no such surface.
#[tauri::command]
#[specta::specta]
pub async fn delete_surface(
    state: State<'_, AppState>,
    chat_id: String,
    surface_id: String,
) -> Result<bool, AppError> {
    Ok(state
        .runtime()?
        .delete_surface(&chat_id, &surface_id)
        .await?)
}

/// Stages the document of a canvas `HtmlFrame` for the `suzent-frame:` scheme and returns its
/// token: the iframe then loads `suzent-frame://localhost/<token>` (on Windows and Android
/// `http://suzent-frame.localhost/<token>`), served with a CSP of its own (inline styles and
/// `data:` images only, sandboxed) instead of inheriting the app's. At most 64 documents are
/// kept (the least recently staged is evicted); a document over 1 MiB is refused (field `html`).
#[tauri::command]
#[specta::specta]
pub fn stage_html_frame(
    frames: State<'_, crate::frames::HtmlFrames>,
    html: String,
) -> Result<String, AppError> {
    frames.stage(html)
}

fn local_models_view(runtime: &suzent_runtime::Runtime) -> Result<LocalModelsView, AppError> {
    let models = runtime.local_models();
    Ok(LocalModelsView {
        dir: models.dir().display().to_string(),
        installed: models.list().map_err(model_error)?,
        recommended: models
            .recommended()
            .into_iter()
            .map(|(model, installed)| RecommendedLocalModel { model, installed })
            .collect(),
    })
}

fn model_error(e: suzent_runtime::local_models::ModelError) -> AppError {
    use suzent_runtime::local_models::ModelError;
    let kind = match &e {
        ModelError::InvalidId(_) | ModelError::UnknownRecommended(_) | ModelError::Gguf(_) => {
            AppErrorKind::InvalidInput
        }
        ModelError::NotInstalled(_) => AppErrorKind::NotFound,
        ModelError::Io { .. } => AppErrorKind::Io,
        _ => AppErrorKind::Provider,
    };
    AppError::new(kind, e.to_string())
}

/// The installed and recommended local models (no network).
#[tauri::command]
#[specta::specta]
pub async fn local_models(state: State<'_, AppState>) -> Result<LocalModelsView, AppError> {
    local_models_view(&state.runtime()?)
}

/// Downloads a recommended local model; progress arrives as `LocalModelProgress` events.
#[tauri::command]
#[specta::specta]
pub async fn pull_local_model<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    id: String,
) -> Result<LocalModelsView, AppError> {
    use tauri_specta::Event;
    let runtime = state.runtime()?;
    let emit = move |p: &suzent_runtime::local_models::DownloadProgress| {
        let _ = LocalModelProgress(p.clone()).emit(&app);
    };
    runtime
        .local_models()
        .pull(
            suzent_runtime::local_models::PullSource::Recommended(id),
            &emit,
        )
        .await
        .map_err(model_error)?;
    local_models_view(&runtime)
}

/// Asks for a `.gguf` file and copies it into the models folder (`None` when cancelled).
#[tauri::command]
#[specta::specta]
pub async fn import_local_model<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<Option<LocalModelsView>, AppError> {
    use tauri_specta::Event;
    let runtime = state.runtime()?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .add_filter("GGUF model", &["gguf"])
        .pick_file(move |file| {
            let _ = tx.send(file.and_then(|f| f.into_path().ok()));
        });
    let picked = rx
        .await
        .map_err(|e| AppError::new(AppErrorKind::Dialog, e.to_string()))?;
    let Some(path) = picked else { return Ok(None) };
    let emit = move |p: &suzent_runtime::local_models::DownloadProgress| {
        let _ = LocalModelProgress(p.clone()).emit(&app);
    };
    runtime
        .local_models()
        .import(&path, &emit)
        .await
        .map_err(model_error)?;
    Ok(Some(local_models_view(&runtime)?))
}

/// Deletes an installed local model.
#[tauri::command]
#[specta::specta]
pub async fn remove_local_model(
    state: State<'_, AppState>,
    id: String,
) -> Result<LocalModelsView, AppError> {
    let runtime = state.runtime()?;
    runtime.local_models().remove(&id).map_err(model_error)?;
    local_models_view(&runtime)
}

/// Makes the installed local model `id` the default model (`local/ID`).
#[tauri::command]
#[specta::specta]
pub async fn use_local_model(state: State<'_, AppState>, id: String) -> Result<Settings, AppError> {
    let runtime = state.runtime()?;
    runtime
        .local_models()
        .list()
        .map_err(model_error)?
        .iter()
        .find(|m| m.id == id)
        .ok_or_else(|| {
            AppError::new(
                AppErrorKind::NotFound,
                format!("model '{id}' is not installed"),
            )
        })?;
    let patch = SettingsPatch {
        default_model: Some(format!("local/{id}")),
        ..SettingsPatch::default()
    };
    tauri::async_runtime::spawn_blocking(move || runtime.save_settings(patch))
        .await
        .map_err(|e| AppError::new(AppErrorKind::Io, format!("saving settings failed: {e}")))?
        .map_err(AppError::from)
}

/// Where each provider's key can come from now: the environment variable, the OS keychain, a key
/// kept for this session.
#[tauri::command]
#[specta::specta]
pub async fn provider_keys(
    state: State<'_, AppState>,
) -> Result<Vec<suzent_runtime::ProviderKeyInfo>, AppError> {
    // Reading the keychain may block on D-Bus.
    let info = tauri::async_runtime::spawn_blocking({
        let keys = state.keys_handle();
        move || keys.info()
    })
    .await
    .map_err(|e| AppError::new(AppErrorKind::Keychain, format!("keychain task failed: {e}")))?;
    Ok(info)
}

/// Keeps a provider's key for this session only (in memory; forgotten when the app quits): the
/// choice offered when the OS keychain cannot store it.
#[tauri::command]
#[specta::specta]
pub async fn set_session_key(
    state: State<'_, AppState>,
    provider: String,
    key: String,
) -> Result<(), AppError> {
    Ok(state.keys().set(&provider, &key)?)
}

/// The models `provider` offers (its `/models` listing), using `apiKey` or else its stored key,
/// and `baseUrl` or else the configured one. Errors say what failed (a refused key, an
/// unreachable address).
#[tauri::command]
#[specta::specta]
pub async fn list_models(
    state: State<'_, AppState>,
    provider: String,
    base_url: Option<String>,
    api_key: Option<String>,
) -> Result<Vec<String>, AppError> {
    Ok(state
        .runtime()?
        .list_models(&provider, base_url.as_deref(), api_key.as_deref())
        .await?)
}

/// Sends one short real request to `model` (`provider/model`), with `baseUrl` overriding the
/// configured one for this test; returns who answered and how fast, or an error saying what
/// failed.
#[tauri::command]
#[specta::specta]
pub async fn test_connection(
    state: State<'_, AppState>,
    model: String,
    base_url: Option<String>,
) -> Result<suzent_runtime::ConnectionCheck, AppError> {
    Ok(state
        .runtime()?
        .test_connection(&model, base_url.as_deref())
        .await?)
}

/// Sets the model of one chat (`provider/model`; `null` goes back to the default model).
#[tauri::command]
#[specta::specta]
pub async fn set_chat_model(
    state: State<'_, AppState>,
    chat_id: String,
    model: Option<String>,
) -> Result<ChatRecord, AppError> {
    let runtime = state.runtime()?;
    Ok(match model.filter(|m| !m.trim().is_empty()) {
        Some(m) => runtime.set_model(&chat_id, m.trim()).await?,
        None => runtime.clear_model(&chat_id).await?,
    })
}

/// The app's log: the folder of the rotating file (the same daily `suzent.log.*` files the CLI
/// writes, under the data folder's `logs/`) and today's file, when logging to a file started.
#[tauri::command]
#[specta::specta]
pub async fn log_file(state: State<'_, AppState>) -> Result<crate::dto::LogFile, AppError> {
    let folder = state.log_dir().cloned();
    let current = folder.as_deref().and_then(newest_log);
    Ok(crate::dto::LogFile {
        folder: folder.map(|f| f.display().to_string()),
        current: current.map(|f| f.display().to_string()),
    })
}

/// The most recently modified `suzent.log*` file in `dir`.
fn newest_log(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(suzent_runtime::LOG_FILE_NAME)
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, path)| path)
}

/// Opens the log folder in the system's file manager.
#[tauri::command]
#[specta::specta]
pub async fn open_log_folder<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<(), AppError> {
    use tauri_plugin_opener::OpenerExt;
    let folder = state.log_dir().cloned().ok_or_else(|| {
        AppError::new(
            AppErrorKind::Io,
            "logging to a file did not start, so there is no log folder",
        )
    })?;
    app.opener()
        .open_path(folder.display().to_string(), None::<&str>)
        .map_err(|e| {
            AppError::new(
                AppErrorKind::Io,
                format!("cannot open {}: {e}", folder.display()),
            )
        })
}

// ---- scheduled jobs, heartbeats and goals ----

/// Every scheduled job with its next run and last run (the Schedules page).
#[tauri::command]
#[specta::specta]
pub async fn list_schedules(
    state: State<'_, AppState>,
) -> Result<Vec<suzent_runtime::schedules::JobView>, AppError> {
    Ok(state.runtime()?.schedules().list().await?)
}

/// Adds a job, or changes job `input.id`.
#[tauri::command]
#[specta::specta]
pub async fn save_schedule(
    state: State<'_, AppState>,
    input: suzent_runtime::schedules::JobInput,
) -> Result<suzent_store::JobRecord, AppError> {
    Ok(state.runtime()?.schedules().save(input).await?)
}

/// Deletes a job and its run history (its chat stays).
#[tauri::command]
#[specta::specta]
pub async fn remove_schedule(state: State<'_, AppState>, job_id: String) -> Result<(), AppError> {
    Ok(state.runtime()?.schedules().remove(&job_id).await?)
}

/// Pauses or resumes a job.
#[tauri::command]
#[specta::specta]
pub async fn pause_schedule(
    state: State<'_, AppState>,
    job_id: String,
    paused: bool,
) -> Result<suzent_store::JobRecord, AppError> {
    Ok(state.runtime()?.schedules().pause(&job_id, paused).await?)
}

/// Runs a job now (its overlap policy applies while it runs).
#[tauri::command]
#[specta::specta]
pub async fn run_schedule_now(
    state: State<'_, AppState>,
    job_id: String,
) -> Result<suzent_store::RunRecord, AppError> {
    Ok(state.runtime()?.schedules().run_now(&job_id).await?)
}

/// A job's runs, newest first (at most `limit`, up to 500).
#[tauri::command]
#[specta::specta]
pub async fn schedule_history(
    state: State<'_, AppState>,
    job_id: String,
    limit: u32,
) -> Result<Vec<suzent_store::RunRecord>, AppError> {
    Ok(state
        .runtime()?
        .schedules()
        .history(Some(&job_id), limit)
        .await?)
}

/// The next five times of a schedule in its zone (the builder's preview); the zone defaults to
/// the system's.
#[tauri::command]
#[specta::specta]
pub fn preview_schedule(
    schedule: String,
    timezone: Option<String>,
) -> Result<suzent_runtime::schedules::SchedulePreview, AppError> {
    Ok(suzent_runtime::schedules::preview(
        &schedule,
        timezone.as_deref().filter(|t| !t.is_empty()),
        chrono::Utc::now(),
        5,
    )?)
}

/// Whether this app schedules, or which process does.
#[tauri::command]
#[specta::specta]
pub async fn scheduler_status(
    state: State<'_, AppState>,
) -> Result<suzent_runtime::scheduler::SchedulerStatus, AppError> {
    Ok(state.runtime()?.schedules().status().await?)
}

/// The system's IANA time zone (the builder's default).
#[tauri::command]
#[specta::specta]
pub fn system_timezone() -> String {
    suzent_runtime::schedules::system_timezone()
}

/// A chat's heartbeat job, if it has one.
#[tauri::command]
#[specta::specta]
pub async fn chat_heartbeat(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<Option<suzent_store::JobRecord>, AppError> {
    Ok(state.runtime()?.schedules().heartbeat(&chat_id).await?)
}

/// Turns a chat's heartbeat on (every N minutes) or off (`null`).
#[tauri::command]
#[specta::specta]
pub async fn set_chat_heartbeat(
    state: State<'_, AppState>,
    chat_id: String,
    every_minutes: Option<u32>,
) -> Result<Option<suzent_store::JobRecord>, AppError> {
    Ok(state
        .runtime()?
        .schedules()
        .set_heartbeat(&chat_id, every_minutes)
        .await?)
}

/// The turn ids of a chat's heartbeat runs that found nothing to do (folded in the chat).
#[tauri::command]
#[specta::specta]
pub async fn quiet_turns(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<Vec<String>, AppError> {
    Ok(state.runtime()?.schedules().quiet_turns(&chat_id).await?)
}

/// A chat's goal, if it has one.
#[tauri::command]
#[specta::specta]
pub async fn chat_goal(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<Option<suzent_store::GoalRecord>, AppError> {
    Ok(state.runtime()?.goals().get(&chat_id).await?)
}

/// Sets a chat's goal (`/goal OBJECTIVE`) and starts working on it; progress arrives as
/// `goal_updated` events.
#[tauri::command]
#[specta::specta]
pub async fn start_goal(
    state: State<'_, AppState>,
    chat_id: String,
    input: suzent_runtime::goals::GoalInput,
) -> Result<suzent_store::GoalRecord, AppError> {
    Ok(state.runtime()?.goals().start(&chat_id, input).await?)
}

/// Pauses a chat's goal.
#[tauri::command]
#[specta::specta]
pub async fn pause_goal(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<suzent_store::GoalRecord, AppError> {
    Ok(state.runtime()?.goals().pause(&chat_id).await?)
}

/// Resumes a paused goal.
#[tauri::command]
#[specta::specta]
pub async fn resume_goal(
    state: State<'_, AppState>,
    chat_id: String,
) -> Result<suzent_store::GoalRecord, AppError> {
    Ok(state.runtime()?.goals().resume(&chat_id).await?)
}

/// Removes a chat's goal.
#[tauri::command]
#[specta::specta]
pub async fn clear_goal(state: State<'_, AppState>, chat_id: String) -> Result<(), AppError> {
    Ok(state.runtime()?.goals().clear(&chat_id).await?)
}
