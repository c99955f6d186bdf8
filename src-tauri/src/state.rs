//! The one managed state of the app.

use crate::error::{AppError, AppErrorKind};
use std::path::PathBuf;
use std::sync::Arc;
use suzent_runtime::{Runtime, SessionKeys};

/// What every command reads: the runtime, or why it could not start.
pub struct AppState {
    runtime: Result<Runtime, AppError>,
    /// The keys the runtime reads (session keys in front of the environment and keychain).
    keys: Arc<SessionKeys>,
    /// The rotating log file's folder, when file logging could start.
    log_dir: Option<PathBuf>,
}

impl AppState {
    /// State around a started runtime that reads its keys from `keys`.
    pub fn new(runtime: Runtime, keys: Arc<SessionKeys>, log_dir: Option<PathBuf>) -> AppState {
        AppState {
            runtime: Ok(runtime),
            keys,
            log_dir,
        }
    }

    /// State of an app whose runtime failed to start: the window still opens and every
    /// command answers with this error (kind `startup`), so the UI can show it.
    pub fn failed(
        message: impl Into<String>,
        keys: Arc<SessionKeys>,
        log_dir: Option<PathBuf>,
    ) -> AppState {
        AppState {
            runtime: Err(AppError::new(AppErrorKind::Startup, message)),
            keys,
            log_dir,
        }
    }

    /// The session keys (set when the keychain cannot store a key).
    pub fn keys(&self) -> &SessionKeys {
        &self.keys
    }

    /// A shared handle on the session keys (for blocking tasks).
    pub fn keys_handle(&self) -> Arc<SessionKeys> {
        Arc::clone(&self.keys)
    }

    /// The folder of the rotating log file, if logging to a file started.
    pub fn log_dir(&self) -> Option<&PathBuf> {
        self.log_dir.as_ref()
    }

    /// A handle to the runtime (cheap clone; no lock is held while a command awaits).
    pub fn runtime(&self) -> Result<Runtime, AppError> {
        self.runtime.clone()
    }
}
