//! The typed commands of Settings -> Devices: this device, the paired devices, pairing (show a
//! code, or enter one), confirming the words, pause/scope, rename, revoke, and the messages sent
//! to a device. Each maps onto the runtime's devices service; none holds a lock across an await.

use crate::error::AppError;
use crate::state::AppState;
use std::time::Duration;
use suzent_runtime::{
    DeviceRecord, DeviceScope, DeviceView, JoinOffer, NearbyView, PairingOffer, PairingStatus,
    PeerMessage, ThisDevice,
};
use tauri::State;

/// This install as a device: name, short id, fingerprint, where its key is, relay setting.
#[tauri::command]
#[specta::specta]
pub async fn this_device(state: State<'_, AppState>) -> Result<ThisDevice, AppError> {
    Ok(state.runtime()?.devices().this_device().await?)
}

/// The paired devices with their live status.
#[tauri::command]
#[specta::specta]
pub async fn list_devices(state: State<'_, AppState>) -> Result<Vec<DeviceView>, AppError> {
    Ok(state.runtime()?.devices().list().await?)
}

/// Devices advertised on the LAN (suggestions; `paired` only when the key matches a pairing).
#[tauri::command]
#[specta::specta]
pub async fn nearby_devices(state: State<'_, AppState>) -> Result<Vec<NearbyView>, AppError> {
    Ok(state.runtime()?.devices().nearby().await?)
}

/// Opens a pairing window: a code and QR valid 10 minutes, for one device.
#[tauri::command]
#[specta::specta]
pub async fn start_pairing(state: State<'_, AppState>) -> Result<PairingOffer, AppError> {
    let devices = state.runtime()?.devices().clone();
    // The app keeps a device it pairs connected: the endpoint's loops start with the first
    // pairing (at launch they start only when a device is already paired).
    devices.start().await?;
    Ok(devices.pair().await?)
}

/// The state of the pairing window, waiting up to `wait_ms` (at most 10 s) for a change.
#[tauri::command]
#[specta::specta]
pub async fn pairing_status(
    state: State<'_, AppState>,
    wait_ms: u32,
) -> Result<PairingStatus, AppError> {
    let wait = Duration::from_millis(u64::from(wait_ms.min(10_000)));
    Ok(state.runtime()?.devices().pairing_status(wait).await)
}

/// This user's answer to the words shown for the joining device.
#[tauri::command]
#[specta::specta]
pub async fn confirm_pairing(state: State<'_, AppState>, accept: bool) -> Result<(), AppError> {
    Ok(state.runtime()?.devices().confirm_pairing(accept)?)
}

/// Ends the pairing window.
#[tauri::command]
#[specta::specta]
pub async fn cancel_pairing(state: State<'_, AppState>) -> Result<(), AppError> {
    state.runtime()?.devices().cancel_pairing();
    Ok(())
}

/// Starts joining the device that shows `code` (or its `suzent://pair` link); returns the words
/// to compare.
#[tauri::command]
#[specta::specta]
pub async fn join_device(state: State<'_, AppState>, code: String) -> Result<JoinOffer, AppError> {
    let devices = state.runtime()?.devices().clone();
    devices.start().await?;
    Ok(devices.join(&code).await?)
}

/// This user's answer to the words of the device being joined; the pairing when both confirmed.
#[tauri::command]
#[specta::specta]
pub async fn finish_join(
    state: State<'_, AppState>,
    accept: bool,
) -> Result<Option<DeviceRecord>, AppError> {
    Ok(state.runtime()?.devices().finish_join(accept).await?)
}

/// Renames a paired device (here only).
#[tauri::command]
#[specta::specta]
pub async fn rename_device(
    state: State<'_, AppState>,
    device_id: String,
    name: String,
) -> Result<DeviceRecord, AppError> {
    Ok(state.runtime()?.devices().rename(&device_id, &name).await?)
}

/// Sets what a paired device may do here (`paused`: nothing).
#[tauri::command]
#[specta::specta]
pub async fn set_device_scope(
    state: State<'_, AppState>,
    device_id: String,
    scope: DeviceScope,
) -> Result<DeviceRecord, AppError> {
    Ok(state
        .runtime()?
        .devices()
        .set_scope(&device_id, scope)
        .await?)
}

/// Revokes a pairing; its live connection closes at once.
#[tauri::command]
#[specta::specta]
pub async fn revoke_device(
    state: State<'_, AppState>,
    device_id: String,
) -> Result<DeviceRecord, AppError> {
    Ok(state.runtime()?.devices().revoke(&device_id).await?)
}

/// The messages sent to a device (or all) and what became of them.
#[tauri::command]
#[specta::specta]
pub async fn device_outbox(
    state: State<'_, AppState>,
    device_id: Option<String>,
) -> Result<Vec<PeerMessage>, AppError> {
    Ok(state
        .runtime()?
        .devices()
        .outbox(device_id.as_deref())
        .await?)
}
