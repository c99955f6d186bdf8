//! The typed commands of Settings -> Channels: the channels with their connection, adding one
//! with its token (OS keychain; for this session only where no keychain works), testing a
//! token, the allow-list, on/off, removing, and the pending requests of people not on an
//! allow-list (approve, dismiss). Each maps onto the runtime's channel service.

use crate::error::{AppError, AppErrorKind};
use crate::state::AppState;
use suzent_runtime::{
    ChannelCheck, ChannelConfig, ChannelPlatform, ChannelProfile, ChannelRequest, ChannelView,
};
use tauri::State;

/// Every configured channel with its connection (the token is never returned).
#[tauri::command]
#[specta::specta]
pub async fn list_channels(state: State<'_, AppState>) -> Result<Vec<ChannelView>, AppError> {
    Ok(state.runtime()?.channels().list())
}

/// Checks a token against the platform without saving anything: who the bot is.
#[tauri::command]
#[specta::specta]
pub async fn test_channel(
    state: State<'_, AppState>,
    platform: ChannelPlatform,
    base_url: Option<String>,
    token: String,
) -> Result<ChannelCheck, AppError> {
    Ok(state
        .runtime()?
        .channels()
        .test_connection(platform, base_url.as_deref(), &token)
        .await?)
}

/// Adds a channel to the settings (it connects once it also has a token: see
/// `set_channel_token`).
#[tauri::command]
#[specta::specta]
pub async fn add_channel(
    state: State<'_, AppState>,
    channel: ChannelConfig,
) -> Result<ChannelView, AppError> {
    Ok(state.runtime()?.channels().add(channel)?)
}

/// Stores a channel's token: in the OS keychain, or with `session_only` (the choice offered
/// when the keychain cannot store it) in memory until the app quits; then (re)connects it. A
/// keychain failure is a `keychain` error naming the field `token`.
#[tauri::command]
#[specta::specta]
pub async fn set_channel_token(
    state: State<'_, AppState>,
    name: String,
    token: String,
    session_only: bool,
) -> Result<ChannelView, AppError> {
    let runtime = state.runtime()?;
    let channels = runtime.channels();
    channels.get(&name)?;
    if session_only {
        state.keys().set(&format!("channel:{name}"), &token)?;
        channels.reconnect(&name);
    } else {
        channels.set_token(&name, &token).map_err(|e| match e {
            suzent_runtime::RuntimeError::Provider(_) => {
                AppError::new(AppErrorKind::Keychain, e.to_string()).with_field("token")
            }
            other => AppError::from(other),
        })?;
    }
    Ok(channels.get(&name)?)
}

/// Replaces a channel's allow-list (platform user ids).
#[tauri::command]
#[specta::specta]
pub async fn set_channel_allowed_users(
    state: State<'_, AppState>,
    name: String,
    users: Vec<String>,
) -> Result<ChannelView, AppError> {
    Ok(state
        .runtime()?
        .channels()
        .set_allowed_users(&name, users)?)
}

/// Switches a channel on or off.
#[tauri::command]
#[specta::specta]
pub async fn set_channel_enabled(
    state: State<'_, AppState>,
    name: String,
    enabled: bool,
) -> Result<ChannelView, AppError> {
    Ok(state.runtime()?.channels().set_enabled(&name, enabled)?)
}

/// Sets a channel's permission profile (headless, or asking in the app).
#[tauri::command]
#[specta::specta]
pub async fn set_channel_profile(
    state: State<'_, AppState>,
    name: String,
    profile: ChannelProfile,
) -> Result<ChannelView, AppError> {
    Ok(state.runtime()?.channels().set_profile(&name, profile)?)
}

/// Removes a channel and its token (its chats stay).
#[tauri::command]
#[specta::specta]
pub async fn remove_channel(state: State<'_, AppState>, name: String) -> Result<(), AppError> {
    state.keys().remove(&format!("channel:{name}"));
    Ok(state.runtime()?.channels().remove(&name)?)
}

/// The requests of people not on an allow-list, latest first.
#[tauri::command]
#[specta::specta]
pub async fn channel_requests(state: State<'_, AppState>) -> Result<Vec<ChannelRequest>, AppError> {
    Ok(state.runtime()?.channels().requests(None).await?)
}

/// Approves a request: the user joins the channel's allow-list.
#[tauri::command]
#[specta::specta]
pub async fn approve_channel_request(
    state: State<'_, AppState>,
    name: String,
    user_id: String,
) -> Result<ChannelRequest, AppError> {
    Ok(state.runtime()?.channels().approve(&name, &user_id).await?)
}

/// Dismisses a request (the user stays refused, silently).
#[tauri::command]
#[specta::specta]
pub async fn dismiss_channel_request(
    state: State<'_, AppState>,
    name: String,
    user_id: String,
) -> Result<ChannelRequest, AppError> {
    Ok(state.runtime()?.channels().dismiss(&name, &user_id).await?)
}
