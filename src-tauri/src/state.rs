//! The one managed state of the app.

use crate::error::{AppError, AppErrorKind};
use suzent_runtime::Runtime;

/// What every command reads: the runtime, or why it could not start.
pub struct AppState {
    runtime: Result<Runtime, AppError>,
}

impl AppState {
    /// State around a started runtime.
    pub fn new(runtime: Runtime) -> AppState {
        AppState {
            runtime: Ok(runtime),
        }
    }

    /// State of an app whose runtime failed to start: the window still opens and every
    /// command answers with this error (kind `startup`), so the UI can show it.
    pub fn failed(message: impl Into<String>) -> AppState {
        AppState {
            runtime: Err(AppError::new(AppErrorKind::Startup, message)),
        }
    }

    /// A handle to the runtime (cheap clone; no lock is held while a command awaits).
    pub fn runtime(&self) -> Result<Runtime, AppError> {
        self.runtime.clone()
    }
}
